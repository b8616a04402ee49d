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
