"""Write the model folders the differential test launches on: each holds only a config.json.

The values follow the public Hugging Face configs of Llama-3-8B, Qwen3-30B-A3B and DeepSeek-V3
(written from memory of those files, not downloaded), so that SGLang's resolution sees realistic
shapes: GQA head counts, MoE expert counts, MLA ranks. DeepSeek-V3's `quantization_config` (fp8
blocks) is left out on purpose: the fp8 path is a property of the checkpoint, not of the launch
flags, and it would make every DeepSeek case about fp8 on CPU instead of about the flags.

    python verify/models.py            # writes verify/.cache/models/<name>/config.json
    python verify/models.py --probe    # also launches each folder with the real SGLang (oracle)
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

# Order matters: the first one is the default model of cases that run on one folder only.
MODELS: dict[str, dict[str, Any]] = {
    "llama": LLAMA,
    "qwen3_moe": QWEN3_MOE,
    "deepseek_v3": DEEPSEEK_V3,
}


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


def probe(sgreal: Path) -> int:
    """Launch each folder plainly with the real SGLang and print what happens."""
    lines = [
        json.dumps({"id": f"probe-{name}", "argv": ["--device", "cpu", "--model-path", str(model_dir(name))]})
        for name in MODELS
    ]
    proc = subprocess.run(
        [str(sgreal / "bin" / "python"), str(VERIFY_DIR / "oracle_server.py"), "--jobs", "2"],
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
        print(f"{result['id']}: {result['status']}{where} {result.get('exception') or ''} {result.get('message', '')[:200]}")
        bad += result["status"] != "ok"
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="store_true", help="launch each folder with the real SGLang")
    parser.add_argument("--sgreal", type=Path, default=DEFAULT_SGREAL, help="the SGLang venv")
    args = parser.parse_args(argv)
    folders = write_models()
    print(f"models: {len(folders)} folders under {MODELS_DIR}")
    return probe(args.sgreal) if args.probe else 0


if __name__ == "__main__":
    sys.exit(main())
