"""Platform profiles and model facts decide the terms flags alone cannot (logic/facts.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.core.errors import UsageError
from extractor.logic.expressions import Unknown
from extractor.logic.facts import Facts, ModelFacts, find_platform, local_model, memory_mib, with_device_memory

LLAMA = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32,
         "max_position_embeddings": 8192}
DEEPSEEK = {"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 512, "v_head_dim": 128,
            "qk_nope_head_dim": 128, "qk_rope_head_dim": 64}


def _folder(tmp_path: Path, config: dict) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


def test_profiles_by_name_and_gpu_alias() -> None:
    assert find_platform("H100").name == find_platform("cuda-sm90").name
    assert find_platform("mi300x").facts["is_hip"] is True
    with pytest.raises(UsageError, match="unknown platform"):
        find_platform("abacus")


def test_a_platform_predicate_reads_the_same_by_any_spelling() -> None:
    facts = Facts(find_platform("cpu"))
    for text in ("is_host_cpu_arm64()", "_is_host_cpu_arm64", "get_platform().is_cuda", "is_cuda()"):
        assert facts.value(text) is False, text
    with pytest.raises(Unknown):
        facts.value("torch.cuda.mem_get_info()")


def test_model_facts_from_a_folder(tmp_path: Path) -> None:
    llama = Facts(model=local_model(str(_folder(tmp_path / "llama", LLAMA))))
    assert llama.value("model_config_of(server_args).attention_arch") == "MHA"
    assert llama.value("model_config_of(server_args).context_len") == 8192
    assert llama.value("model_config_of(server_args).hf_config.architectures[0]") == "LlamaForCausalLM"
    deepseek = Facts(model=ModelFacts.from_folder(_folder(tmp_path / "ds", DEEPSEEK)))
    assert deepseek.value("model_config_of(server_args).attention_arch") == "MLA"
    assert local_model(str(tmp_path / "missing")) is None  # a hub id, not a folder: no facts


def test_symmetric_kv_only_where_the_config_and_architecture_say_so(tmp_path: Path) -> None:
    term = "model_config_of(server_args).has_asymmetric_kv"
    assert Facts(model=ModelFacts.from_folder(_folder(tmp_path / "a", LLAMA))).value(term) is False
    # A config that sets v_head_dim, or an architecture model_config.py special-cases: not decided here.
    for name, config in (("b", {**LLAMA, "v_head_dim": 64}), ("c", DEEPSEEK)):
        with pytest.raises(Unknown):
            Facts(model=ModelFacts.from_folder(_folder(tmp_path / name, config))).value(term)
    with pytest.raises(Unknown):  # the architecture alone says nothing of head sizes
        Facts(model=ModelFacts.from_architecture("LlamaForCausalLM")).value(term)


@pytest.mark.parametrize(("text", "mib"), [("81559", 81559), ("80GiB", 81920), ("24 GB", 24576), ("1.5TiB", 1572864)])
def test_device_memory_sizes(text: str, mib: float) -> None:
    assert memory_mib(text) == mib
    platform = with_device_memory(find_platform("cpu"), memory_mib(text))
    assert Facts(platform).value('get_device_memory_capacity((device.split(":")[0]))') == mib
    assert platform.facts["is_cuda"] is False  # the rest of the profile is kept


@pytest.mark.parametrize("text", ["", "12q", "-4GiB", "0"])
def test_device_memory_rejects_what_is_no_size(text: str) -> None:
    with pytest.raises(UsageError, match="--device-memory expects a size"):
        memory_mib(text)
