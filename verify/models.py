"""Write the model folders the differential test launches on: each holds only a config.json.

The values are the public Hugging Face config.json files of the families people serve (facts of the
configs: architectures, shapes, rope, quantization_config; the checkpoint names are in each
constant's comment), so that SGLang's resolution sees real shapes: GQA head counts, MoE expert
counts, MLA ranks, sliding windows, multimodal sub-configs, checkpoint quantization. Tokenizer and
weight files are not needed by the argument resolution and are left out.

The first three folders (llama, qwen3_moe, deepseek_v3) are the generated cases' (cases.py
`--source generated`); DeepSeek-V3's `quantization_config` (fp8 blocks) is left out of that one on
purpose (it would make every generated DeepSeek case about fp8 on the CPU) and kept in deepseek_r1,
shaped as DeepSeek-R1 ships. The others serve the user commands (`--source user`). Kimi-K2, Kimi-K2.5
and MiniMax-M2 ship an `auto_map` naming their configuration_*.py files; a folder without those files
would make every `--trust-remote-code` launch fail on the missing file (not what happens on a real
checkpoint), so `auto_map` is left out and transformers' (or SGLang's) own config class reads them.

    python verify/models.py                        # writes verify/.cache/models/<name>/config.json
    python verify/models.py --probe                # also launches each folder plainly (real SGLang, cpu)
    python verify/models.py --probe --profile H100 # ... on a simulated 8 x H100 node
    python verify/models.py --validate             # the GPU simulation's acceptance test
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_SGREAL, MODELS_DIR, VERIFY_DIR, model_dir  # noqa: E402

LLAMA: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 128000,
    "eos_token_id": 128001,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 14336,
    "max_position_embeddings": 8192,
    "mlp_bias": False,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "pretraining_tp": 1,
    "rms_norm_eps": 1e-05,
    "rope_scaling": None,
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.40.0.dev0",
    "use_cache": True,
    "vocab_size": 128256,
}

QWEN3_MOE: dict[str, Any] = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "decoder_sparse_step": 1,
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "initializer_range": 0.02,
    "intermediate_size": 6144,
    "max_position_embeddings": 40960,
    "max_window_layers": 48,
    "mlp_only_layers": [],
    "model_type": "qwen3_moe",
    "moe_intermediate_size": 768,
    "norm_topk_prob": True,
    "num_attention_heads": 32,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "num_key_value_heads": 4,
    "output_router_logits": False,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 1000000.0,
    "router_aux_loss_coef": 0.001,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936,
}

DEEPSEEK_V3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "aux_loss_alpha": 0.001,
    "bos_token_id": 0,
    "eos_token_id": 1,
    "ep_size": 1,
    "first_k_dense_replace": 3,
    "hidden_act": "silu",
    "hidden_size": 7168,
    "initializer_range": 0.02,
    "intermediate_size": 18432,
    "kv_lora_rank": 512,
    "max_position_embeddings": 163840,
    "model_type": "deepseek_v3",
    "moe_intermediate_size": 2048,
    "moe_layer_freq": 1,
    "n_group": 8,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "norm_topk_prob": True,
    "num_attention_heads": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 61,
    "num_key_value_heads": 128,
    "num_nextn_predict_layers": 1,
    "pretraining_tp": 1,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "rms_norm_eps": 1e-06,
    "rope_scaling": {
        "beta_fast": 32,
        "beta_slow": 1,
        "factor": 40,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
        "original_max_position_embeddings": 4096,
        "type": "yarn",
    },
    "rope_theta": 10000,
    "routed_scaling_factor": 2.5,
    "scoring_func": "sigmoid",
    "seq_aux": True,
    "tie_word_embeddings": False,
    "topk_group": 4,
    "topk_method": "noaux_tc",
    "torch_dtype": "bfloat16",
    "transformers_version": "4.33.1",
    "use_cache": True,
    "v_head_dim": 128,
    "vocab_size": 129280,
}

FP8_BLOCK = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}

LLAMA3_ROPE = {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
               "original_max_position_embeddings": 8192, "rope_type": "llama3"}

# meta-llama/Llama-3.1-8B-Instruct
LLAMA31_8B: dict[str, Any] = dict(
    LLAMA, bos_token_id=128000, eos_token_id=[128001, 128008, 128009], max_position_embeddings=131072,
    rope_scaling=LLAMA3_ROPE, transformers_version="4.42.3",
)

# meta-llama/Llama-3.1-70B-Instruct
LLAMA31_70B: dict[str, Any] = dict(
    LLAMA31_8B, hidden_size=8192, intermediate_size=28672, num_attention_heads=64, num_hidden_layers=80,
    num_key_value_heads=8,
)

# Qwen/Qwen2.5-7B-Instruct
QWEN25_7B: dict[str, Any] = {
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584, "initializer_range": 0.02,
    "intermediate_size": 18944, "max_position_embeddings": 32768, "max_window_layers": 28,
    "model_type": "qwen2", "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
    "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": 131072,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.43.1",
    "use_cache": True, "use_sliding_window": False, "vocab_size": 152064,
}

# Qwen/Qwen3-8B
QWEN3_8B: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 12288,
    "max_position_embeddings": 40960, "max_window_layers": 36, "model_type": "qwen3",
    "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
    "rope_scaling": None, "rope_theta": 1000000, "sliding_window": None, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "transformers_version": "4.51.0", "use_cache": True,
    "use_sliding_window": False, "vocab_size": 151936,
}

# deepseek-ai/DeepSeek-R1 (DeepSeek-V3's shape, fp8 block-quantized weights)
DEEPSEEK_R1: dict[str, Any] = dict(DEEPSEEK_V3, quantization_config=FP8_BLOCK, transformers_version="4.46.3")

# deepseek-ai/DeepSeek-V3.2-Exp (V3.1-Terminus plus the DSA lightning indexer)
DEEPSEEK_V32: dict[str, Any] = dict(
    DEEPSEEK_V3, architectures=["DeepseekV32ForCausalLM"], model_type="deepseek_v32",
    index_head_dim=128, index_n_heads=64, index_topk=2048,
    quantization_config=dict(FP8_BLOCK, scale_fmt="ue8m0"), transformers_version="4.44.2",
)

# mistralai/Mixtral-8x7B-Instruct-v0.1
MIXTRAL_8X7B: dict[str, Any] = {
    "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32,
    "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
    "output_router_logits": False, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0,
    "router_aux_loss_coef": 0.02, "sliding_window": None, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "transformers_version": "4.36.0.dev0", "use_cache": True, "vocab_size": 32000,
}

# mistralai/Mistral-7B-Instruct-v0.3
MISTRAL_7B: dict[str, Any] = {
    "architectures": ["MistralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0,
    "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.42.0.dev0", "use_cache": True, "vocab_size": 32768,
}

# google/gemma-2-9b-it
GEMMA2_9B: dict[str, Any] = {
    "architectures": ["Gemma2ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "attn_logit_softcapping": 50.0, "bos_token_id": 2, "cache_implementation": "hybrid",
    "eos_token_id": [1, 107], "final_logit_softcapping": 30.0, "head_dim": 256,
    "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 3584,
    "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 8192,
    "model_type": "gemma2", "num_attention_heads": 16, "num_hidden_layers": 42, "num_key_value_heads": 8,
    "pad_token_id": 0, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
    "sliding_window": 4096, "torch_dtype": "float32", "transformers_version": "4.42.0.dev0",
    "use_cache": True, "vocab_size": 256000,
}

# google/gemma-3-12b-it
GEMMA3_12B: dict[str, Any] = {
    "architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999,
    "eoi_token_index": 256000, "eos_token_id": [1, 106], "image_token_index": 262144,
    "initializer_range": 0.02, "mm_tokens_per_image": 256, "model_type": "gemma3",
    "text_config": {
        "hidden_size": 3840, "intermediate_size": 15360, "model_type": "gemma3_text",
        "num_attention_heads": 16, "num_hidden_layers": 48, "num_key_value_heads": 8,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024,
    },
    "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
    "vision_config": {
        "hidden_size": 1152, "image_size": 896, "intermediate_size": 4304, "model_type": "siglip_vision_model",
        "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": False,
    },
}

# microsoft/phi-4
PHI4: dict[str, Any] = {
    "architectures": ["Phi3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 100257, "embd_pdrop": 0.0, "eos_token_id": 100265, "hidden_act": "silu",
    "hidden_size": 5120, "initializer_range": 0.02, "intermediate_size": 17920,
    "max_position_embeddings": 16384, "model_type": "phi3", "num_attention_heads": 40,
    "num_hidden_layers": 40, "num_key_value_heads": 10, "original_max_position_embeddings": 16384,
    "pad_token_id": 100349, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": None,
    "rope_theta": 250000, "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.47.0", "use_cache": True, "vocab_size": 100352,
}

# openai/gpt-oss-20b (MoE experts in MXFP4)
GPT_OSS_20B: dict[str, Any] = {
    "architectures": ["GptOssForCausalLM"], "attention_bias": True, "attention_dropout": 0.0,
    "eos_token_id": 200002, "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu",
    "hidden_size": 2880, "initial_context_length": 4096, "initializer_range": 0.02,
    "intermediate_size": 2880, "layer_types": ["sliding_attention", "full_attention"] * 12,
    "max_position_embeddings": 131072, "model_type": "gpt_oss", "num_attention_heads": 64,
    "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 8, "num_local_experts": 32,
    "output_router_logits": False, "pad_token_id": 199999,
    "quantization_config": {
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                   "model.embed_tokens", "lm_head"],
        "quant_method": "mxfp4",
    },
    "rms_norm_eps": 1e-05,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                     "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": False},
    "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
    "tie_word_embeddings": False, "transformers_version": "4.55.0.dev0", "use_cache": True,
    "vocab_size": 201088,
}

# moonshotai/Kimi-K2-Instruct (DeepSeek-V3's architecture, 384 experts, fp8 blocks)
KIMI_K2: dict[str, Any] = dict(
    DEEPSEEK_V3, model_type="kimi_k2", first_k_dense_replace=1, n_group=1, topk_group=1,
    n_routed_experts=384, num_attention_heads=64, num_key_value_heads=64, num_nextn_predict_layers=0,
    max_position_embeddings=131072, bos_token_id=163584, eos_token_id=163585,
    rope_scaling={"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                  "original_max_position_embeddings": 4096, "type": "yarn"},
    rope_theta=50000.0, routed_scaling_factor=2.827, vocab_size=163840, quantization_config=FP8_BLOCK,
    transformers_version="4.48.3",
)

# zai-org/GLM-4.5
GLM45: dict[str, Any] = {
    "architectures": ["Glm4MoeForCausalLM"], "attention_bias": True, "attention_dropout": 0.0,
    "eos_token_id": [151329, 151336, 151338], "first_k_dense_replace": 3, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 5120, "initializer_range": 0.02, "intermediate_size": 12288,
    "max_position_embeddings": 131072, "model_type": "glm4_moe", "moe_intermediate_size": 1536,
    "n_group": 1, "n_routed_experts": 160, "n_shared_experts": 1, "norm_topk_prob": True,
    "num_attention_heads": 96, "num_experts_per_tok": 8, "num_hidden_layers": 92,
    "num_key_value_heads": 8, "num_nextn_predict_layers": 1, "pad_token_id": 151329,
    "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 1000000,
    "routed_scaling_factor": 2.5, "tie_word_embeddings": False, "topk_group": 1, "torch_dtype": "bfloat16",
    "transformers_version": "4.54.0", "use_cache": True, "use_qk_norm": True, "vocab_size": 151552,
}

# meta-llama/Llama-4-Scout-17B-16E-Instruct
LLAMA4_SCOUT: dict[str, Any] = {
    "architectures": ["Llama4ForConditionalGeneration"], "boi_token_index": 200080,
    "eoi_token_index": 200081, "image_token_index": 200092, "model_type": "llama4",
    "text_config": {
        "attention_bias": False, "attention_chunk_size": 8192, "attention_dropout": 0.0, "attn_scale": 0.1,
        "attn_temperature_tuning": True, "bos_token_id": 200000, "eos_token_id": [200001, 200007, 200008],
        "floor_scale": 8192, "for_llm_compressor": False, "head_dim": 128, "hidden_act": "silu",
        "hidden_size": 5120, "initializer_range": 0.02, "interleave_moe_layer_step": 1,
        "intermediate_size": 8192, "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
        "model_type": "llama4_text", "moe_layers": list(range(48)), "no_rope_layers": [1, 1, 1, 0] * 12,
        "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
        "num_key_value_heads": 8, "num_local_experts": 16, "output_router_logits": False,
        "pad_token_id": 200018, "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0, "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0,
        "torch_dtype": "bfloat16", "use_cache": True, "use_qk_norm": True, "vocab_size": 202048,
    },
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.51.0.dev0",
    "vision_config": {
        "attention_dropout": 0.0, "hidden_act": "gelu", "hidden_size": 1408, "image_size": 336,
        "initializer_range": 0.02, "intermediate_size": 5632, "model_type": "llama4_vision_model",
        "multi_modal_projector_bias": False, "norm_eps": 1e-05, "num_attention_heads": 16,
        "num_channels": 3, "num_hidden_layers": 34, "patch_size": 14, "pixel_shuffle_ratio": 0.5,
        "projector_dropout": 0.0, "projector_input_dim": 4096, "projector_output_dim": 4096,
        "rope_theta": 10000, "vision_feature_layer": -1, "vision_feature_select_strategy": "default",
        "vision_output_dim": 4096,
    },
}

# Qwen/Qwen2.5-VL-7B-Instruct
QWEN25_VL_7B: dict[str, Any] = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584,
    "image_token_id": 151655, "initializer_range": 0.02, "intermediate_size": 18944,
    "max_position_embeddings": 128000, "max_window_layers": 28, "model_type": "qwen2_5_vl",
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
    "rope_scaling": {"mrope_section": [16, 24, 24], "rope_type": "default", "type": "default"},
    "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "transformers_version": "4.41.2", "use_cache": True,
    "use_sliding_window": False, "video_token_id": 151656, "vision_end_token_id": 151653,
    "vision_start_token_id": 151652, "vision_token_id": 151654, "vocab_size": 152064,
    "vision_config": {
        "depth": 32, "fullatt_block_indexes": [7, 15, 23, 31], "hidden_act": "silu", "hidden_size": 1280,
        "in_chans": 3, "intermediate_size": 3420, "model_type": "qwen2_5_vl", "num_heads": 16,
        "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "spatial_patch_size": 14,
        "temporal_patch_size": 2, "tokens_per_second": 2, "window_size": 112,
    },
}

# MiniMaxAI/MiniMax-M2 (fp8 blocks)
MINIMAX_M2: dict[str, Any] = {
    "architectures": ["MiniMaxM2ForCausalLM"], "attn_type_list": [1] * 62,
    "bos_token_id": 200019, "eos_token_id": 200020, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 3072, "initializer_range": 0.02, "intermediate_size": 1536,
    "max_position_embeddings": 196608, "model_type": "minimax_m2", "mtp_transformer_layers": 1,
    "num_attention_heads": 48, "num_experts_per_tok": 8, "num_hidden_layers": 62,
    "num_key_value_heads": 8, "num_local_experts": 256, "num_mtp_modules": 3,
    "output_router_logits": False, "partial_rotary_factor": 0.5, "qk_norm_type": "per_layer",
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "float8_e4m3fn", "quant_method": "fp8",
                            "modules_to_not_convert": ["gate", "e_score_correction_bias", "lm_head"],
                            "weight_block_size": [128, 128]},
    "rms_norm_eps": 1e-06, "rope_theta": 5000000, "rotary_dim": 64, "router_aux_loss_coef": 0.001,
    "scoring_func": "sigmoid", "shared_intermediate_size": 0, "sliding_window": None,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.46.1",
    "use_cache": True, "use_mtp": True, "use_qk_norm": True, "use_routing_bias": True, "vocab_size": 200064,
}

# Qwen/Qwen3-Next-80B-A3B-Instruct (hybrid attention: Gated DeltaNet layers with one full-attention layer
# in four, 512 experts, 10 routed + 1 shared). The values are the release's as transcribed in public code:
# a quoted "model config" of that checkpoint (architectures through moe_intermediate_size), a fixture
# scaled from it at revision 9c7f2fbe (rope_theta 1e7, partial_rotary_factor 0.25, mlp_only_layers [],
# decoder_sparse_step 1, norm_topk_prob, rms_norm_eps 1e-6, untied embeddings, 16 q heads over 2 kv heads,
# 512 experts with 10 per token, layer_types left unset by the release, no num_nextn_predict_layers) and the
# Qwen3-Next family transcriptions (Qwen3-Coder-Next release: bos/eos, router_aux_loss_coef,
# output_router_logits, shared_expert_intermediate_size 512, vocab 151936). transformers_version: not found.
QWEN3_NEXT: dict[str, Any] = {
    "architectures": ["Qwen3NextForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "decoder_sparse_step": 1, "eos_token_id": 151645, "full_attention_interval": 4, "head_dim": 256,
    "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 5120,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "max_position_embeddings": 262144,
    "mlp_only_layers": [], "model_type": "qwen3_next", "moe_intermediate_size": 512, "norm_topk_prob": True,
    "num_attention_heads": 16, "num_experts": 512, "num_experts_per_tok": 10, "num_hidden_layers": 48,
    "num_key_value_heads": 2, "output_router_logits": False, "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06,
    "rope_scaling": None, "rope_theta": 10000000, "router_aux_loss_coef": 0.001,
    "shared_expert_intermediate_size": 512, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "use_cache": True, "use_sliding_window": False, "vocab_size": 151936,
}

# Qwen3.5's text and vision settings shared by the family's released config.json files (rope, vision tower).
QWEN35_ROPE = {"mrope_interleaved": True, "mrope_section": [11, 11, 10], "partial_rotary_factor": 0.25,
               "rope_theta": 10000000, "rope_type": "default"}
QWEN35_VISION = {
    "deepstack_visual_indexes": [], "depth": 27, "hidden_act": "gelu_pytorch_tanh", "hidden_size": 1152,
    "in_channels": 3, "initializer_range": 0.02, "intermediate_size": 4304, "num_heads": 16,
    "num_position_embeddings": 2304, "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
}

# Qwen/Qwen3.5-397B-A17B, the Qwen3.5 flagship (Qwen3_5MoeForConditionalGeneration: Gated DeltaNet + gated
# attention 3:1 over 60 layers, 512 experts, 10 routed + 1 shared, one MTP layer, vision tower; sub-configs
# as shipped). The shape is the one public code quotes from that checkpoint's config.json (hidden 4096, 60
# layers, 32 q / 2 kv heads of 256, linear attention 16 key / 64 value heads of 128, conv kernel 4, FP32
# state, 512 experts top-10, expert and shared widths 1024, vocab 248320, 262144 positions, 1 MTP layer,
# vision tower of 27 layers x 1152 projecting to 4096, empty deepstack indexes, interleaved mrope); the
# remaining keys and their spelling are those of the family's verbatim config.json files (Qwen3.6-27B,
# Qwen3.6-35B-A3B: rope_parameters, mamba_ssm_dtype, mtp_use_dedicated_embeddings, token ids of the
# vision markers). Not confirmed for this checkpoint, so left out: bos/eos/pad token ids,
# router_aux_loss_coef, transformers_version.
QWEN35_397B: dict[str, Any] = {
    "architectures": ["Qwen3_5MoeForConditionalGeneration"], "image_token_id": 248056, "model_type": "qwen3_5_moe",
    "text_config": {
        "attention_bias": False, "attention_dropout": 0.0, "attn_output_gate": True, "dtype": "bfloat16",
        "full_attention_interval": 4, "head_dim": 256, "hidden_act": "silu", "hidden_size": 4096,
        "initializer_range": 0.02,
        "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 15,
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
        "linear_num_value_heads": 64, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32",
        "max_position_embeddings": 262144, "model_type": "qwen3_5_moe_text", "moe_intermediate_size": 1024,
        "mtp_num_hidden_layers": 1, "mtp_use_dedicated_embeddings": False, "num_attention_heads": 32,
        "num_experts": 512, "num_experts_per_tok": 10, "num_hidden_layers": 60, "num_key_value_heads": 2,
        "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06, "rope_parameters": QWEN35_ROPE,
        "shared_expert_intermediate_size": 1024, "tie_word_embeddings": False, "use_cache": True,
        "vocab_size": 248320,
    },
    "tie_word_embeddings": False, "video_token_id": 248057,
    "vision_config": dict(QWEN35_VISION, model_type="qwen3_5_moe", out_hidden_size=4096),
    "vision_end_token_id": 248054, "vision_start_token_id": 248053,
}

# Qwen/Qwen3.6-27B (Qwen3_5ForConditionalGeneration, model_type qwen3_5: the dense Qwen3.5 architecture),
# the verbatim config.json at revision 6a9e13bd as a public test embeds it. It stands in for the dense
# Qwen3.5 checkpoints: Qwen/Qwen3.5-27B has the same text and vision shape as public code quotes it (hidden
# 5120, intermediate 17408, 64 layers, 24 q / 4 kv heads of 256, linear attention 16 / 48 heads of 128,
# vision output 5120); the smaller dense Qwen3.5 sizes are narrower.
QWEN36_27B: dict[str, Any] = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "image_token_id": 248056, "language_model_only": False,
    "model_type": "qwen3_5",
    "text_config": {
        "attention_bias": False, "attention_dropout": 0.0, "attn_output_gate": True, "bos_token_id": 248044,
        "dtype": "bfloat16", "eos_token_id": 248044, "full_attention_interval": 4, "head_dim": 256,
        "hidden_act": "silu", "hidden_size": 5120, "initializer_range": 0.02, "intermediate_size": 17408,
        "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 16,
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
        "linear_num_value_heads": 48, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32",
        "max_position_embeddings": 262144, "model_type": "qwen3_5_text", "mtp_num_hidden_layers": 1,
        "mtp_use_dedicated_embeddings": False, "num_attention_heads": 24, "num_hidden_layers": 64,
        "num_key_value_heads": 4, "output_gate_type": "swish", "pad_token_id": None, "partial_rotary_factor": 0.25,
        "rms_norm_eps": 1e-06, "rope_parameters": QWEN35_ROPE, "tie_word_embeddings": False, "use_cache": True,
        "vocab_size": 248320,
    },
    "tie_word_embeddings": False, "transformers_version": "4.57.1", "video_token_id": 248057,
    "vision_config": dict(QWEN35_VISION, model_type="qwen3_5", out_hidden_size=5120),
    "vision_end_token_id": 248054, "vision_start_token_id": 248053,
}

# moonshotai/Kimi-K2.5 (KimiK25ForConditionalGeneration: Kimi-K2's DeepSeek-V3 text model under
# text_config, 384 experts, 262144 positions, routed experts in INT4 compressed-tensors groups of 32;
# MoonViT vision tower under vision_config). The values are those of the checkpoint's config as public
# code prints it after loading it with the checkpoint's own config class (transformers 5.7's to_dict, whose
# serialization defaults -- add_cross_attention, id2label, return_dict, ... -- are left out, and whose
# rope_parameters is the shipped rope_scaling plus rope_theta); text_config's model_type is "kimi_k2" as
# shipped (the loaded object says deepseek_v3; transformers' Kimi_K25Config maps kimi_k2 to deepseek_v3, and
# another transcription of the file quotes kimi_k2). The loaded config holds quantization_config both under
# text_config and at the top (the config class copies the text model's up), so both are written.
# auto_map (top and text_config) is left out, as for Kimi-K2. transformers_version: not found.
KIMI_K25_INT4 = {
    "config_groups": {"group_0": {
        "input_activations": None, "output_activations": None, "targets": ["Linear"],
        "weights": {"actorder": None, "block_structure": None, "dynamic": False, "group_size": 32, "num_bits": 4,
                    "observer": "minmax", "observer_kwargs": {}, "strategy": "group", "symmetric": True,
                    "type": "int"},
    }},
    "format": "pack-quantized",
    "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"],
    "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed",
}
KIMI_K25: dict[str, Any] = {
    "architectures": ["KimiK25ForConditionalGeneration"], "bos_token_id": 163584, "dtype": "bfloat16",
    "eos_token_id": 163585, "ignore_index": -100, "media_placeholder_token_id": 163605, "model_type": "kimi_k25",
    "pad_token_id": 163839, "quantization_config": KIMI_K25_INT4,
    "text_config": {
        "architectures": ["DeepseekV3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "aux_loss_alpha": 0.001, "bos_token_id": 163584, "dtype": "bfloat16", "eos_token_id": 163585, "ep_size": 1,
        "first_k_dense_replace": 1, "hidden_act": "silu", "hidden_size": 7168, "initializer_range": 0.02,
        "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 262144, "model_type": "kimi_k2",
        "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 1, "n_routed_experts": 384,
        "n_shared_experts": 1, "norm_topk_prob": True, "num_attention_heads": 64, "num_experts_per_tok": 8,
        "num_hidden_layers": 61, "num_key_value_heads": 64, "num_nextn_predict_layers": 0, "pad_token_id": 163839,
        "pretraining_tp": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
        "quantization_config": KIMI_K25_INT4, "rms_norm_eps": 1e-05,
        "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 64.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                         "original_max_position_embeddings": 4096, "type": "yarn"},
        "rope_theta": 50000.0, "routed_scaling_factor": 2.827, "scoring_func": "sigmoid", "seq_aux": True,
        "tie_word_embeddings": False, "topk_group": 1, "topk_method": "noaux_tc", "use_cache": True,
        "v_head_dim": 128, "vocab_size": 163840,
    },
    "tie_word_embeddings": False, "use_unified_vision_chunk": True,
    "video_placeholder": "<|kimi_k25_video_placeholder|>",
    "vision_config": {
        "init_pos_emb_height": 64, "init_pos_emb_time": 4, "init_pos_emb_width": 64, "merge_kernel_size": [2, 2],
        "merge_type": "sd2_tpool", "mm_hidden_size": 1152, "mm_projector_type": "patchmerger", "patch_size": 14,
        "pos_emb_type": "divided_fixed", "projector_hidden_act": "gelu", "projector_ln_eps": 1e-05,
        "text_hidden_size": 7168, "video_attn_type": "spatial_temporal", "vt_hidden_size": 1152,
        "vt_intermediate_size": 4304, "vt_num_attention_heads": 16, "vt_num_hidden_layers": 27,
    },
}

# zai-org/GLM-5 (GlmMoeDsaForCausalLM: MLA with the DeepSeek sparse-attention indexer, 256 experts, 8 routed
# + 1 shared, 3 dense layers, one MTP layer; bf16, no quantization_config). Values: the GLM-5 config.json
# fields public code quotes (an audit of the HF file: every MLA/MoE/DSA dimension, 202752 positions,
# rope_parameters rope_theta 1e6 default, eos/pad ids, no quantization_config; a loader whose defaults are
# that file: rms_norm_eps 1e-5, routed_scaling_factor 2.5, topk_method noaux_tc, scoring_func sigmoid,
# indexer_rope_interleave) and the remaining keys as GLM-5.1 (same backbone) prints them after loading.
# Left out, not confirmed for GLM-5: head_dim (transformers maps it onto qk_rope_head_dim), transformers_version;
# indexer_types / mlp_layer_types are derived by transformers, not shipped.
GLM5: dict[str, Any] = {
    "architectures": ["GlmMoeDsaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "dtype": "bfloat16", "eos_token_id": [154820, 154827, 154829], "ep_size": 1, "first_k_dense_replace": 3,
    "hidden_act": "silu", "hidden_size": 6144, "index_head_dim": 128, "index_n_heads": 32, "index_topk": 2048,
    "indexer_rope_interleave": True, "initializer_range": 0.02, "intermediate_size": 12288, "kv_lora_rank": 512,
    "max_position_embeddings": 202752, "model_type": "glm_moe_dsa", "moe_intermediate_size": 2048,
    "moe_layer_freq": 1, "n_group": 1, "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": True,
    "num_attention_heads": 64, "num_experts_per_tok": 8, "num_hidden_layers": 78, "num_key_value_heads": 64,
    "num_nextn_predict_layers": 1, "pad_token_id": 154820, "pretraining_tp": 1, "q_lora_rank": 2048,
    "qk_head_dim": 256, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-05,
    "rope_interleave": True, "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"},
    "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "tie_word_embeddings": False, "topk_group": 1,
    "topk_method": "noaux_tc", "use_cache": True, "v_head_dim": 256, "vocab_size": 154880,
}

# zai-org/GLM-4.7 (Glm4MoeForCausalLM, GLM-4.5's 355B shape): it differs from glm45 in a field SGLang reads,
# max_position_embeddings 202752 (the derived context length; GLM-4.6 has it too), which public references
# to its config.json state; every other dimension they quote (92 layers, hidden 5120, 96 q / 8 kv heads of
# 128, 160 experts top-8 + 1 shared, expert width 1536, 3 dense layers, rope_theta 1e6, rms_norm_eps 1e-5,
# vocab 151552) is GLM-4.5's. GLM-4.5's transformers_version is not carried over.
GLM47: dict[str, Any] = dict(
    {k: v for k, v in GLM45.items() if k != "transformers_version"}, max_position_embeddings=202752,
)

# zai-org/GLM-5.2 (GlmMoeDsaForCausalLM, model_type glm_moe_dsa like GLM-5, but with IndexShare: only 21 of
# the 78 layers run the DSA indexer, the others reuse the previous full layer's top-k, which SGLang reads --
# arg_groups/model_hook.py refuses --enable-two-batch-overlap with shared indexer layers -- and 1M positions).
# Values: GLM-5's backbone (every MLA/MoE/DSA dimension public quotes of the GLM-5.2 config.json give is
# GLM-5's: hidden 6144, 78 layers, 64 heads, q/kv lora 2048/512, qk 192+64, v 256, 256 experts top-8 + 1
# shared, expert width 2048, 3 dense layers, index 32 heads x 128, index_topk 2048, vocab 154880, one MTP
# layer) with the fields public transcriptions of zai-org/GLM-5.2/config.json give where it differs:
# max_position_embeddings 1048576, rope_parameters rope_theta 8000000, index_topk_freq 4,
# index_skip_topk_offset 3, index_share_for_mtp_iteration, and the shipped 78-entry indexer_types (full at
# layers 0, 1, 2 and every fourth from 6). Left out, not confirmed for GLM-5.2: mlp_layer_types,
# moe_router_dtype, transformers_version.
GLM52: dict[str, Any] = dict(
    GLM5, max_position_embeddings=1048576, rope_parameters={"rope_theta": 8000000, "rope_type": "default"},
    index_topk_freq=4, index_skip_topk_offset=3, index_share_for_mtp_iteration=True,
    indexer_types=["full" if i in (0, 1, 2, *range(6, 78, 4)) else "shared" for i in range(78)],
)
# zai-org/GLM-5.2-FP8: GLM-5.2 with DeepSeek-style fp8 blocks (e4m3, 128 x 128, dynamic activations), as
# public references to the checkpoint describe its quantization_config.
GLM52_FP8: dict[str, Any] = dict(GLM52, quantization_config=FP8_BLOCK)

# DeepSeek-V4 (DeepseekV4ForCausalLM, model_type deepseek_v4: hybrid CSA/HCA compressed attention per layer
# (compress_ratios, one entry per layer and MTP stage), sliding window 128, sqrt-softplus routing, hash-routed
# first layers, mHC; fp8 e4m3 ue8m0 blocks for dense weights and FP4 routed experts).
# deepseek-ai/DeepSeek-V4-Flash: the config.json verbatim as public code pins it (by sha256) at the revision
# that adds the DSpark drafter stages (dspark_* fields, three trailing MTP entries in compress_ratios).
DEEPSEEK_V4_FLASH: dict[str, Any] = {
    "architectures": ["DeepseekV4ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 0, "eos_token_id": 1, "expert_dtype": "fp4", "hc_eps": 1e-06, "hc_mult": 4,
    "hc_sinkhorn_iters": 20, "head_dim": 512, "hidden_act": "silu", "hidden_size": 4096, "index_head_dim": 128,
    "index_n_heads": 64, "index_topk": 512, "initializer_range": 0.02, "max_position_embeddings": 1048576,
    "model_type": "deepseek_v4", "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
    "norm_topk_prob": True, "num_attention_heads": 64, "num_experts_per_tok": 6, "num_hidden_layers": 43,
    "num_hash_layers": 3, "num_key_value_heads": 1, "num_nextn_predict_layers": 1, "o_groups": 8,
    "o_lora_rank": 1024, "q_lora_rank": 1024, "qk_rope_head_dim": 64,
    "quantization_config": dict(FP8_BLOCK, scale_fmt="ue8m0"), "rms_norm_eps": 1e-06,
    "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 16, "original_max_position_embeddings": 65536,
                     "type": "yarn"},
    "rope_theta": 10000, "routed_scaling_factor": 1.5, "scoring_func": "sqrtsoftplus", "sliding_window": 128,
    "swiglu_limit": 10.0, "tie_word_embeddings": False, "topk_method": "noaux_tc", "torch_dtype": "bfloat16",
    "transformers_version": "4.57.1", "use_cache": True, "vocab_size": 129280, "compress_rope_theta": 160000,
    "compress_ratios": [0, 0] + [4, 128] * 20 + [4, 0, 0, 0],
    "dspark_block_size": 5, "dspark_noise_token_id": 128799, "dspark_target_layer_ids": [40, 41, 42],
    "dspark_markov_rank": 256,
}
# deepseek-ai/DeepSeek-V4-Pro: the release's config.json verbatim as a public model report prints it (61
# layers, hidden 7168, 128 heads, 384 experts, index_topk 1024, o_groups 16; no expert_dtype or dspark_*
# fields at that revision).
DEEPSEEK_V4_PRO: dict[str, Any] = dict(
    {k: v for k, v in DEEPSEEK_V4_FLASH.items() if k != "expert_dtype" and not k.startswith("dspark_")},
    hidden_size=7168, index_topk=1024, moe_intermediate_size=3072, n_routed_experts=384,
    num_attention_heads=128, num_hidden_layers=61, o_groups=16, q_lora_rank=1536, routed_scaling_factor=2.5,
    compress_ratios=[128, 128] + [4, 128] * 29 + [4, 0],
)

# google/gemma-4-31B-it (Gemma4ForConditionalGeneration, model_type gemma4: the dense Gemma 4; text tower of
# 60 layers, five sliding (window 1024, 16 kv heads of 256) to one global (4 kv heads of 512, K = V), p-RoPE
# on the global layers; SigLIP-style vision tower, no audio tower). Values: the text_config fields public
# transcriptions of the checkpoint's config.json agree on (hidden 5376, intermediate 21504, 32 heads,
# 262144 positions, vocab 262144, softcap 30, rope_parameters, no PLE, no kv sharing), the family's
# multimodal token ids (audio_config null on the 31B and 26B-A4B) and the vision tower the 26B-A4B's
# config.json ships (the 31B's is quoted with the same hidden 1152). Left out, sources disagree or do not
# give them for this checkpoint: eos_token_id ([1, 106] or [1, 106, 50]), use_bidirectional_attention,
# transformers_version. google/gemma-4-E4B-it / E2B-it (per-layer embeddings, kv sharing, audio tower) stand
# on this folder.
GEMMA4_VISION = {
    "default_output_length": 280, "dtype": "bfloat16", "global_head_dim": 72, "head_dim": 72,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "intermediate_size": 4304,
    "model_type": "gemma4_vision", "num_attention_heads": 16, "num_hidden_layers": 27, "num_key_value_heads": 16,
    "patch_size": 16, "pooling_kernel_size": 3, "position_embedding_size": 10240, "rms_norm_eps": 1e-06,
    "rope_parameters": {"rope_theta": 100.0, "rope_type": "default"}, "standardize": True,
    "use_clipped_linears": False,
}
GEMMA4_ROPE = {
    "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0, "rope_type": "proportional"},
    "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"},
}
GEMMA4_31B: dict[str, Any] = {
    "architectures": ["Gemma4ForConditionalGeneration"], "audio_config": None, "audio_token_id": 258881,
    "boa_token_id": 256000, "boi_token_id": 255999, "dtype": "bfloat16", "eoa_token_id": 258883,
    "eoa_token_index": 258883, "eoi_token_id": 258882, "image_token_id": 258880, "initializer_range": 0.02,
    "model_type": "gemma4",
    "text_config": {
        "attention_bias": False, "attention_dropout": 0.0, "attention_k_eq_v": True, "bos_token_id": 2,
        "dtype": "bfloat16", "enable_moe_block": False, "eos_token_id": 1, "final_logit_softcapping": 30.0,
        "global_head_dim": 512, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 5376,
        "hidden_size_per_layer_input": 0, "initializer_range": 0.02, "intermediate_size": 21504,
        "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 10, "max_position_embeddings": 262144,
        "model_type": "gemma4_text", "num_attention_heads": 32, "num_global_key_value_heads": 4,
        "num_hidden_layers": 60, "num_key_value_heads": 16, "num_kv_shared_layers": 0, "pad_token_id": 0,
        "rms_norm_eps": 1e-06, "rope_parameters": GEMMA4_ROPE, "sliding_window": 1024, "tie_word_embeddings": True,
        "use_cache": True, "use_double_wide_mlp": False, "vocab_size": 262144, "vocab_size_per_layer_input": 262144,
    },
    "tie_word_embeddings": True, "video_token_id": 258884, "vision_config": GEMMA4_VISION,
    "vision_soft_tokens_per_image": 280,
}
# google/gemma-4-26B-A4B-it (the MoE Gemma 4: 30 layers of hidden 2816, a dense MLP of 2112 beside 128
# experts of 704, top-8; 16 heads, 8 sliding kv heads, 2 global kv heads). Its text_config and vision_config
# fields as a public, checkpoint-pinned conversion contract checks them against the config.json (model_type,
# dtype, every dimension, layer_types, use_bidirectional_attention "vision", the vision tower), with 262144
# positions and the rope_parameters other transcriptions of the file quote.
GEMMA4_26B_A4B: dict[str, Any] = dict(
    GEMMA4_31B,
    text_config=dict(
        GEMMA4_31B["text_config"], enable_moe_block=True, hidden_size=2816, intermediate_size=2112,
        layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 5, moe_intermediate_size=704,
        num_attention_heads=16, num_experts=128, num_global_key_value_heads=2, num_hidden_layers=30,
        num_key_value_heads=8, top_k_experts=8, use_bidirectional_attention="vision",
    ),
)

# nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16 (NemotronHForCausalLM, model_type nemotron_h: 88 layers, 40
# Mamba-2, 40 latent MoE (512 experts, top-22, latent 1024, one shared expert), 8 attention (32 q / 2 kv heads
# of 128), one MTP layer "*E"). The config.json of its NVFP4 release as public code transcribes it (revision
# 4f0cf9da) without that release's modelopt quantization_config (the BF16 checkpoint has none) and without
# auto_map (as for Kimi-K2: the folder has no configuration_nemotron_h.py; SGLang registers its own
# NemotronHConfig). nvidia/NVIDIA-Nemotron-Nano-9B-v2 (also nemotron_h) stands on this folder.
NEMOTRON3_SUPER: dict[str, Any] = {
    "architectures": ["NemotronHForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 1, "chunk_size": 128, "conv_kernel": 4, "dtype": "bfloat16", "eos_token_id": 2, "expand": 2,
    "head_dim": 128, "hidden_dropout": 0.0, "hidden_size": 4096,
    "hybrid_override_pattern":
        "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
    "initializer_range": 0.02, "intermediate_size": 2688, "layer_norm_epsilon": 1e-05, "mamba_head_dim": 64,
    "mamba_hidden_act": "silu", "mamba_num_heads": 128, "mamba_proj_bias": False,
    "mamba_ssm_cache_dtype": "float32", "max_position_embeddings": 262144, "mlp_bias": False,
    "mlp_hidden_act": "relu2", "model_type": "nemotron_h", "moe_intermediate_size": 2688, "moe_latent_size": 1024,
    "moe_shared_expert_intermediate_size": 5376, "moe_shared_expert_overlap": False,
    "mtp_hybrid_override_pattern": "*E", "n_group": 1, "n_groups": 8, "n_routed_experts": 512,
    "n_shared_experts": 1, "norm_eps": 1e-05, "norm_topk_prob": True, "num_attention_heads": 32,
    "num_experts_per_tok": 22, "num_hidden_layers": 88, "num_key_value_heads": 2, "num_logits_to_keep": 1,
    "num_nextn_predict_layers": 1, "pad_token_id": 0, "partial_rotary_factor": 1.0,
    "rescale_prenorm_residual": True, "residual_in_fp32": False, "rope_theta": 10000,
    "routed_scaling_factor": 5.0, "sliding_window": None, "ssm_state_size": 128, "tie_word_embeddings": False,
    "time_step_floor": 0.0001, "time_step_max": 0.1, "time_step_min": 0.001, "topk_group": 1,
    "transformers_version": "4.57.6", "use_bias": False, "use_cache": True, "use_conv_bias": True,
    "use_mamba_kernels": True, "vocab_size": 131072,
}
# nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B (nemotron_h: 52 layers, 23 Mamba-2, 23 MoE of 128 experts top-6 with
# a shared expert, 6 attention; no latent MoE, no MTP). The config.json of its NVFP4 release verbatim as
# public code transcribes it (revision 6efb4a2a; that release keeps its quantization in hf_quant_config.json,
# not in config.json), auto_map left out as above.
NEMOTRON3_NANO: dict[str, Any] = {
    "architectures": ["NemotronHForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 1, "chunk_size": 128, "conv_kernel": 4, "eos_token_id": 2, "expand": 2, "head_dim": 128,
    "hidden_dropout": 0.0, "hidden_size": 2688,
    "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
    "initializer_range": 0.02, "intermediate_size": 1856, "layer_norm_epsilon": 1e-05, "mamba_head_dim": 64,
    "mamba_hidden_act": "silu", "mamba_num_heads": 64, "mamba_proj_bias": False,
    "mamba_ssm_cache_dtype": "float32", "max_position_embeddings": 262144, "mlp_bias": False,
    "mlp_hidden_act": "relu2", "model_type": "nemotron_h", "moe_intermediate_size": 1856,
    "moe_shared_expert_intermediate_size": 3712, "n_group": 1, "n_groups": 8, "n_routed_experts": 128,
    "n_shared_experts": 1, "norm_eps": 1e-05, "norm_topk_prob": True, "num_attention_heads": 32,
    "num_experts_per_tok": 6, "num_hidden_layers": 52, "num_key_value_heads": 2, "num_logits_to_keep": 1,
    "pad_token_id": 0, "partial_rotary_factor": 1.0, "rescale_prenorm_residual": True, "residual_in_fp32": False,
    "rope_theta": 10000, "routed_scaling_factor": 2.5, "sliding_window": None, "ssm_state_size": 128,
    "tie_word_embeddings": False, "time_step_floor": 0.0001, "time_step_max": 0.1, "time_step_min": 0.001,
    "topk_group": 1, "torch_dtype": "bfloat16", "transformers_version": "4.53.2", "use_bias": False,
    "use_cache": True, "use_conv_bias": True, "use_mamba_kernels": True, "vocab_size": 131072,
}

# baidu/ERNIE-4.5-21B-A3B-PT (Ernie4_5_MoeForCausalLM, model_type ernie4_5_moe: 28 layers, layer 0 dense, 64
# experts top-6 with 2 shared, 20 q / 4 kv heads). The fields public transcriptions of its config.json agree
# on (architectures, every dimension, the MoE layer range 1..27, rope_theta 5e5, rms_norm_eps, token ids,
# untied-bias-free projections, tied embeddings). Left out, not confirmed for this checkpoint:
# moe_use_aux_free, num_nextn_predict_layers, torch_dtype, transformers_version.
ERNIE45_21B_A3B: dict[str, Any] = {
    "architectures": ["Ernie4_5_MoeForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "hidden_size": 2560, "intermediate_size": 12288, "max_position_embeddings": 131072,
    "model_type": "ernie4_5_moe", "moe_intermediate_size": 1536, "moe_k": 6, "moe_layer_end_index": 27,
    "moe_layer_interval": 1, "moe_layer_start_index": 1, "moe_num_experts": 64, "moe_num_shared_experts": 2,
    "num_attention_heads": 20, "num_hidden_layers": 28, "num_key_value_heads": 4, "pad_token_id": 0,
    "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": True, "use_bias": False,
    "vocab_size": 103424,
}

# BAAI/bge-reranker-v2-m3 (XLMRobertaForSequenceClassification, a cross-encoder reranker served with --is-embedding):
# the checkpoint's config.json verbatim (revision 995ec6e, "Upload config.json with huggingface_hub").
BGE_RERANKER_V2_M3: dict[str, Any] = {
    "_name_or_path": "BAAI/bge-m3", "architectures": ["XLMRobertaForSequenceClassification"],
    "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "classifier_dropout": None, "eos_token_id": 2,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 1024, "id2label": {"0": "LABEL_0"},
    "initializer_range": 0.02, "intermediate_size": 4096, "label2id": {"LABEL_0": 0}, "layer_norm_eps": 1e-05,
    "max_position_embeddings": 8194, "model_type": "xlm-roberta", "num_attention_heads": 16, "num_hidden_layers": 24,
    "output_past": True, "pad_token_id": 1, "position_embedding_type": "absolute", "torch_dtype": "float32",
    "transformers_version": "4.38.1", "type_vocab_size": 1, "use_cache": True, "vocab_size": 250002,
}

# OpenGVLab/InternVL2_5-8B (InternVLChatModel, model_type internvl_chat: InternViT-300M-448px-V2_5 vision tower, a
# 2x pixel-shuffle MLP projector, internlm2_5-7b-chat language model). The fields the public transcriptions agree on:
# the config.json of an AWQ conversion made from this checkpoint (`_name_or_path` OpenGVLab/InternVL2_5-8B: top-level
# fields, llm_config's InternLM2 shape with attn_implementation eager) and test configs of the family quoting the
# same LLM (InternVL2-8B: vocab 92553, rope dynamic x2, theta 1e6) and the same 300M vision tower (InternVL2_5-2B:
# hidden 1024, 24 layers, 16 heads, qkv bias, layer_norm, no qk norm). transformers has no internvl_chat class (its
# own `internvl` is the converted layout): SGLang registers its InternVLChatConfig for this model_type, which reads
# the folder; auto_map (top and llm_config) is left out, as for Kimi-K2. Left out, not confirmed for this checkpoint
# or sources disagree: the PretrainedConfig defaults the file serializes (id2label, top_k, ...), use_flash_attn,
# a top-level hidden_size, transformers_version.
INTERNVL25_8B: dict[str, Any] = {
    "architectures": ["InternVLChatModel"], "downsample_ratio": 0.5, "dynamic_image_size": True,
    "force_image_size": 448,
    "llm_config": {
        "architectures": ["InternLM2ForCausalLM"], "attn_implementation": "eager", "bias": False, "bos_token_id": 1,
        "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
        "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "internlm2",
        "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "pad_token_id": 2,
        "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 2.0, "type": "dynamic"},
        "rope_theta": 1000000, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
        "vocab_size": 92553,
    },
    "max_dynamic_patch": 12, "min_dynamic_patch": 1, "model_type": "internvl_chat", "ps_version": "v2",
    "select_layer": -1, "template": "internvl2_5", "torch_dtype": "bfloat16", "use_backbone_lora": 0,
    "use_llm_lora": 0, "use_thumbnail": True,
    "vision_config": {
        "architectures": ["InternVisionModel"], "attention_dropout": 0.0, "drop_path_rate": 0.0, "dropout": 0.0,
        "hidden_act": "gelu", "hidden_size": 1024, "image_size": 448, "initializer_factor": 1.0,
        "initializer_range": 0.02, "intermediate_size": 4096, "layer_norm_eps": 1e-06, "model_type": "intern_vit_6b",
        "norm_type": "layer_norm", "num_attention_heads": 16, "num_channels": 3, "num_hidden_layers": 24,
        "patch_size": 14, "qk_normalization": False, "qkv_bias": True,
    },
}

# PaddlePaddle/PaddleOCR-VL (PaddleOCRVLForConditionalGeneration, model_type paddleocr_vl: an ERNIE-4.5-0.3B-style
# text model of 18 layers, 16 q / 2 kv heads of 128, 3D mrope, under a NaViT SigLIP vision tower). The checkpoint's
# flat config.json as its public copies print it (architectures through video_token_id: every text field at the
# top level, rope_scaling with mrope_section [16, 24, 24], rope_theta 5e5), read by transformers' own
# PaddleOCRVLConfig (auto_map left out, as for Kimi-K2). Its vision_config is cut off in the copies after
# architectures / attention_dropout, so only those two keys are written: transformers' PaddleOCRVisionConfig
# defaults give the rest (hidden 1152, intermediate 4304, 27 layers, 16 heads, image 384, patch 14, merge 2 --
# the values other ports of the checkpoint quote too). Left out, not seen in the copies: vocab_size (the loaded
# default is 103424), the vision start/end token ids.
PADDLEOCR_VL: dict[str, Any] = {
    "architectures": ["PaddleOCRVLForConditionalGeneration"], "attention_probs_dropout_prob": 0.0,
    "compression_ratio": 1.0, "eos_token_id": 2, "head_dim": 128, "hidden_act": "silu", "hidden_dropout_prob": 0.0,
    "hidden_size": 1024, "ignored_index": -100, "image_token_id": 100295, "intermediate_size": 3072,
    "max_position_embeddings": 131072, "max_sequence_length": None, "model_type": "paddleocr_vl",
    "num_attention_heads": 16, "num_hidden_layers": 18, "num_key_value_heads": 2, "pad_token_id": 0,
    "rms_norm_eps": 1e-05, "rope_is_neox_style": True,
    "rope_scaling": {"mrope_section": [16, 24, 24], "rope_type": "default", "type": "default"}, "rope_theta": 500000,
    "sliding_window": None, "tie_word_embeddings": False, "transformers_version": "4.55.0", "use_3d_rope": True,
    "use_bias": False, "use_cache": False, "use_flash_attention": False, "video_token_id": 101307,
    "vision_config": {"architectures": ["PaddleOCRVisionModel"], "attention_dropout": 0.0},
}

# XiaomiMiMo/MiMo-V2-Flash (MiMoV2FlashForCausalLM, model_type mimo_v2_flash: 48 layers, sliding-window attention
# (window 128, 8 kv heads, attention sinks) with one full-attention layer (4 kv heads) in six, q/k heads of 192 and
# v heads of 128, partial rope 0.334, 256 experts top-8 after one dense layer). The fields a public test transcribes
# from the hub config.json (every dimension, both rope thetas, hybrid_layer_pattern 0 at layer 0 and every sixth,
# moe_layer_freq 0 at layer 0 only, sink flags, routing, layernorm_epsilon, attention_value_scale), with the 262144
# positions of the MiMoV2FlashConfig that NeMo documents as this checkpoint's (it agrees on every field above).
# Read by transformers' own MiMoV2FlashConfig (auto_map left out, as for Kimi-K2). The release's quantization_config
# (fp8 e4m3, dynamic activations, an ignored_layers list of attention o_proj) is left out: its public copies are cut
# off inside ignored_layers, so the folder stands as the unquantized shape. Also left out, not confirmed: token ids,
# num_nextn_predict_layers, torch_dtype, transformers_version.
MIMO_V2_FLASH: dict[str, Any] = {
    "add_full_attention_sink_bias": False, "add_swa_attention_sink_bias": True,
    "architectures": ["MiMoV2FlashForCausalLM"], "attention_value_scale": 0.707, "head_dim": 192,
    "hidden_size": 4096, "hybrid_layer_pattern": [0 if i == 0 or (i + 1) % 6 == 0 else 1 for i in range(48)],
    "intermediate_size": 16384, "layernorm_epsilon": 1e-05, "max_position_embeddings": 262144,
    "model_type": "mimo_v2_flash", "moe_intermediate_size": 2048, "moe_layer_freq": [0] + [1] * 47, "n_group": 1,
    "n_routed_experts": 256, "norm_topk_prob": True, "num_attention_heads": 64, "num_experts_per_tok": 8,
    "num_hidden_layers": 48, "num_key_value_heads": 4, "partial_rotary_factor": 0.334, "rope_theta": 5000000,
    "routed_scaling_factor": None, "scoring_func": "sigmoid", "sliding_window": 128, "sliding_window_size": 128,
    "swa_head_dim": 192, "swa_num_attention_heads": 64, "swa_num_key_value_heads": 8, "swa_rope_theta": 10000,
    "swa_v_head_dim": 128, "topk_method": "noaux_tc", "v_head_dim": 128, "vocab_size": 152576,
}

# xai-org/grok-2 (Grok1ForCausalLM: 64 layers, hidden 8192, 64 q / 8 kv heads of 128, 8 experts top-2 plus a
# residual dense MLP, softcapping; the release ships model_type "git", which transformers reads as GitConfig and
# SGLang's model_config special-cases). The checkpoint's config.json verbatim as its public copies print it (no
# quantization_config: the FP8 launches pass --quantization fp8).
GROK2: dict[str, Any] = {
    "architectures": ["Grok1ForCausalLM"], "embedding_multiplier_scale": 90.50966799187809,
    "output_multiplier_scale": 0.5, "vocab_size": 131072, "hidden_size": 8192, "intermediate_size": 32768,
    "moe_intermediate_size": 16384, "max_position_embeddings": 131072, "num_experts_per_tok": 2,
    "num_local_experts": 8, "residual_moe": True, "num_attention_heads": 64, "num_key_value_heads": 8,
    "num_hidden_layers": 64, "head_dim": 128, "rms_norm_eps": 1e-05, "final_logit_softcapping": 50,
    "attn_logit_softcapping": 30.0, "router_logit_softcapping": 30.0, "rope_theta": 208533496,
    "attn_temperature_len": 1024, "sliding_window_size": -1, "global_attn_every_n": 1, "model_type": "git",
    "torch_dtype": "bfloat16", "rope_type": "original", "original_max_position_embeddings": 8192,
    "scaling_factor": 16.0, "extrapolation_factor": 1.0, "attn_factor": 1.0, "beta_fast": 8, "beta_slow": 1,
}

# tencent/Hy3-preview (HYV3ForCausalLM, model_type hy_v3: 80 layers, layer 0 dense, 192 experts top-8 + 1 shared with
# sigmoid routing and expert bias, 64 q / 8 kv heads of 128 with QK norm, 262144 positions, one MTP layer). The
# config.json of tencent/Hy3-preview-Base verbatim (the same architecture block) with the chat model's special token
# ids (bos 120000, eos 120025, eod 120026, pad 120002, sep 120007) as a public conversion of Hy3-preview prints them
# beside an otherwise identical block. Read by transformers' own HYV3Config.
HY3_PREVIEW: dict[str, Any] = {
    "architectures": ["HYV3ForCausalLM"], "bos_token_id": 120000, "enable_attention_fp32_softmax": False,
    "enable_lm_head_fp32": True, "enable_moe_fp32_combine": False, "eod_token_id": 120026, "eos_token_id": 120025,
    "expert_hidden_dim": 1536, "moe_intermediate_size": 1536, "first_k_dense_replace": 1, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.006, "intermediate_size": 13312,
    "max_position_embeddings": 262144, "model_type": "hy_v3", "moe_router_enable_expert_bias": True,
    "moe_router_use_sigmoid": True, "num_attention_heads": 64, "num_experts": 192, "num_experts_per_tok": 8,
    "num_hidden_layers": 80, "num_key_value_heads": 8, "num_shared_experts": 1, "output_router_logits": True,
    "pad_token_id": 120002, "qk_norm": True, "rms_norm_eps": 1e-05,
    "rope_parameters": {"rope_theta": 11158840.0, "rope_type": "default"}, "route_norm": True,
    "router_scaling_factor": 2.826, "sep_token_id": 120007, "tie_word_embeddings": False,
    "transformers_version": "5.6.0", "use_cache": True, "use_grouped_mm": False, "vocab_size": 120832,
    "num_nextn_predict_layers": 1,
}

# Draft models the user commands name (--speculative-draft-model-path).
# lmsys/sglang-EAGLE-LLaMA3-Instruct-8B: one decoder layer over Llama-3-8B's features.
EAGLE_LLAMA3: dict[str, Any] = dict(
    LLAMA, architectures=["LlamaForCausalLMEagle"], num_hidden_layers=1, eos_token_id=128009,
    transformers_version="4.28.1",
)
# jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B: EAGLE-3 head with a 32k draft vocabulary.
EAGLE3_LLAMA31: dict[str, Any] = {
    "architectures": ["LlamaForCausalLMEagle3"], "bos_token_id": 128000, "draft_vocab_size": 32000,
    "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
    "intermediate_size": 14336, "max_position_embeddings": 2048, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 1, "num_key_value_heads": 8, "pad_token_id": 0,
    "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 500000.0, "tie_word_embeddings": False,
    "torch_dtype": "float16", "transformers_version": "4.28.1", "use_cache": True, "vocab_size": 128256,
}
# Qwen/Qwen2.5-1.5B-Instruct (the STANDALONE draft of the docs' Qwen2.5-7B example).
QWEN25_1_5B: dict[str, Any] = dict(
    QWEN25_7B, hidden_size=1536, intermediate_size=8960, num_attention_heads=12, num_hidden_layers=28,
    num_key_value_heads=2, max_window_layers=21, tie_word_embeddings=True, vocab_size=151936,
)

# Order matters: the first one is the default model of cases that run on one folder only.
MODELS: dict[str, dict[str, Any]] = {
    "llama": LLAMA,  # meta-llama/Meta-Llama-3-8B-Instruct
    "qwen3_moe": QWEN3_MOE,  # Qwen/Qwen3-30B-A3B
    "deepseek_v3": DEEPSEEK_V3,  # deepseek-ai/DeepSeek-V3 without its quantization_config
    "llama31_8b": LLAMA31_8B,
    "llama31_70b": LLAMA31_70B,
    "qwen25_7b": QWEN25_7B,
    "qwen3_8b": QWEN3_8B,
    "deepseek_r1": DEEPSEEK_R1,
    "deepseek_v32": DEEPSEEK_V32,
    "mixtral_8x7b": MIXTRAL_8X7B,
    "mistral_7b": MISTRAL_7B,
    "gemma2_9b": GEMMA2_9B,
    "gemma3_12b": GEMMA3_12B,
    "phi4": PHI4,
    "gpt_oss_20b": GPT_OSS_20B,
    "kimi_k2": KIMI_K2,
    "glm45": GLM45,
    "llama4_scout": LLAMA4_SCOUT,
    "qwen25_vl_7b": QWEN25_VL_7B,
    "minimax_m2": MINIMAX_M2,
    "qwen3_next": QWEN3_NEXT,  # Qwen/Qwen3-Next-80B-A3B-Instruct
    "qwen35_397b": QWEN35_397B,  # Qwen/Qwen3.5-397B-A17B
    "qwen36_27b": QWEN36_27B,  # Qwen/Qwen3.6-27B (the dense Qwen3.5 architecture)
    "kimi_k25": KIMI_K25,  # moonshotai/Kimi-K2.5
    "glm5": GLM5,  # zai-org/GLM-5
    "glm47": GLM47,  # zai-org/GLM-4.7
    "glm52": GLM52,  # zai-org/GLM-5.2
    "glm52_fp8": GLM52_FP8,  # zai-org/GLM-5.2-FP8
    "deepseek_v4_flash": DEEPSEEK_V4_FLASH,  # deepseek-ai/DeepSeek-V4-Flash
    "deepseek_v4_pro": DEEPSEEK_V4_PRO,  # deepseek-ai/DeepSeek-V4-Pro
    "gemma4_31b": GEMMA4_31B,  # google/gemma-4-31B-it
    "gemma4_26b_a4b": GEMMA4_26B_A4B,  # google/gemma-4-26B-A4B-it
    "nemotron3_super": NEMOTRON3_SUPER,  # nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16
    "nemotron3_nano": NEMOTRON3_NANO,  # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B
    "ernie45_21b_a3b": ERNIE45_21B_A3B,  # baidu/ERNIE-4.5-21B-A3B-PT
    "bge_reranker_v2_m3": BGE_RERANKER_V2_M3,  # BAAI/bge-reranker-v2-m3
    "internvl25_8b": INTERNVL25_8B,  # OpenGVLab/InternVL2_5-8B
    "paddleocr_vl": PADDLEOCR_VL,  # PaddlePaddle/PaddleOCR-VL
    "mimo_v2_flash": MIMO_V2_FLASH,  # XiaomiMiMo/MiMo-V2-Flash
    "grok2": GROK2,  # xai-org/grok-2
    "hy3_preview": HY3_PREVIEW,  # tencent/Hy3-preview
    "eagle_llama3": EAGLE_LLAMA3,
    "eagle3_llama31": EAGLE3_LLAMA31,
    "qwen25_1_5b": QWEN25_1_5B,
}
# The folders of the generated cases (cases.py --source generated): unchanged since the first runs,
# so that their cached results stay valid.
GENERATED_MODELS = ("llama", "qwen3_moe", "deepseek_v3")
# Folders that only serve as draft models (never the target of a user command).
DRAFT_MODELS = ("eagle_llama3", "eagle3_llama31", "qwen25_1_5b")


def write_models() -> list[Path]:
    """Write every folder; a config.json is rewritten only when its content changed, so the
    oracle cache (keyed by the config's sha256) stays valid across runs."""
    written = []
    for name, config in MODELS.items():
        folder = model_dir(name)
        folder.mkdir(parents=True, exist_ok=True)
        for stray in folder.iterdir():  # the folder must hold only config.json
            if stray.name != "config.json" and stray.is_file():
                stray.unlink()
        text = json.dumps(config, indent=2, sort_keys=True) + "\n"
        target = folder / "config.json"
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
        written.append(folder)
    return written


def probe(sgreal: Path, profile: str = "cpu", jobs: int = 1) -> int:
    """Launch each folder plainly with the real SGLang (on `profile`) and print what happens."""
    device = ["--device", "cpu"] if profile == "cpu" else []
    lines = [
        json.dumps({"id": f"probe-{name}", "argv": device + ["--model-path", str(model_dir(name))]})
        for name in MODELS
    ]
    proc = subprocess.run(
        [str(sgreal / "bin" / "python"), str(VERIFY_DIR / "oracle_server.py"), "--jobs", str(jobs),
         "--profile", profile],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    bad = 0
    for line in proc.stdout.splitlines():
        result = json.loads(line)
        where = f" {result.get('file')}:{result.get('line')}" if result.get("file") else ""
        extra = ""
        if result["status"] == "ok":
            resolved = result.get("resolved") or {}
            extra = " ".join(f"{k}={resolved.get(k)}" for k in ("device", "attention_backend", "page_size",
                                                               "kv_cache_dtype", "mem_fraction_static", "quantization"))
        print(f"{profile} {result['id']}: {result['status']}{where} {result.get('exception') or ''} "
              f"{(result.get('unreplayable_reason') or result.get('message', ''))[:300]}{extra}")
        bad += result["status"] != "ok"
    return 1 if bad else 0


def run_oracle(sgreal: Path, profile: str, cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    proc = subprocess.run(
        [str(sgreal / "bin" / "python"), str(VERIFY_DIR / "oracle_server.py"), "--profile", profile, "--no-preload"],
        input="".join(json.dumps(case) + "\n" for case in cases), capture_output=True, text=True,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(proc.returncode)
    return {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}


def validate(sgreal: Path) -> int:
    """The simulation's acceptance test (verify/README.md "Simulated GPU machines"): SGLang's own
    platform logic, run on the simulated facts, must decide as it does on the real machines."""
    llama, deepseek = str(model_dir("llama31_8b")), str(model_dir("deepseek_v3"))
    trtllm = ["--model-path", deepseek, "--attention-backend", "trtllm_mla"]
    expected_raise = ("sglang/srt/arg_groups/overrides.py", "TRTLLM MLA backend is only supported on Blackwell GPUs")
    checks = []
    h100 = run_oracle(sgreal, "H100", [{"id": "plain", "argv": ["--model-path", llama]}, {"id": "trtllm", "argv": trtllm}])
    b200 = run_oracle(sgreal, "B200", [{"id": "trtllm", "argv": trtllm}])
    plain = h100["plain"]
    checks.append(("H100: plain Llama launch resolves with device cuda",
                   plain["status"] == "ok" and (plain.get("resolved") or {}).get("device") == "cuda",
                   f"{plain['status']} {json.dumps(plain.get('resolved'), sort_keys=True)[:300]}"))
    raised = h100["trtllm"]
    checks.append(("H100: DeepSeek-V3 --attention-backend trtllm_mla raises the Blackwell guard in overrides.py",
                   raised["status"] == "error" and raised.get("file") == expected_raise[0]
                   and expected_raise[1] in raised.get("message", ""),
                   f"{raised['status']} {raised.get('file')}:{raised.get('line')} {raised.get('message', '')[:120]}"))
    passed = b200["trtllm"]
    checks.append(("B200: the same launch passes that guard",
                   not (passed.get("file") == expected_raise[0] and expected_raise[1] in passed.get("message", "")),
                   f"{passed['status']} {passed.get('file') or ''}:{passed.get('line') or ''} "
                   f"{json.dumps(passed.get('resolved'), sort_keys=True)[:200] if passed['status'] == 'ok' else passed.get('message', '')[:120]}"))
    for name, ok, detail in checks:
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="store_true", help="launch each folder with the real SGLang")
    parser.add_argument("--sgreal", type=Path, default=DEFAULT_SGREAL, help="the SGLang venv")
    parser.add_argument("--profile", default="cpu", help="the machine the probe simulates (oracle_server.py --profile)")
    parser.add_argument("--jobs", type=int, default=1, help="oracle children at a time")
    parser.add_argument("--validate", action="store_true",
                        help="check the GPU simulation against three known answers (H100 plain launch is cuda; "
                             "trtllm_mla raises on H100, passes on B200)")
    args = parser.parse_args(argv)
    folders = write_models()
    print(f"models: {len(folders)} folders under {MODELS_DIR}")
    if args.validate:
        return validate(args.sgreal)
    return probe(args.sgreal, args.profile, args.jobs) if args.probe else 0


if __name__ == "__main__":
    sys.exit(main())
