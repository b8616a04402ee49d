"""Platform profiles and model facts decide the terms flags alone cannot (logic/facts.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.core.errors import UsageError
from extractor.logic.expressions import Unknown
from extractor.logic.facts import Facts
from extractor.logic.launch_host import LaunchHost
from extractor.logic.model_config import ModelFacts, local_model
from extractor.logic.platforms import find_platform, memory_mib, with_device_memory

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


@pytest.mark.parametrize("profile, caught, raised", [
    ("cpu", "Exception", True),  # the base platform: NotImplementedError
    ("cpu", "RuntimeError", True),  # NotImplementedError is a RuntimeError
    ("cpu", "ValueError", False),
    ("cpu-engine", "Exception", False),  # the CPU engine's platform returns its device
    ("H100", "Exception", False),
])
def test_what_the_current_platforms_method_raises(profile: str, caught: str, raised: bool) -> None:
    """A try body of one call of the platform's method (`raised(E, current_platform.get_device(...))`)
    raised what its clause catches as the profile says; a method the profile says nothing of, or no
    profile at all, stays unknown."""
    facts = Facts(find_platform(profile))
    assert facts.value(f"raised({caught}, current_platform.get_device(device_id))") is raised
    with pytest.raises(Unknown):
        facts.value("raised(Exception, current_platform.set_device(device))")
    with pytest.raises(Unknown):
        facts.value("raised(Exception)")
    with pytest.raises(Unknown):
        Facts().value("raised(Exception, current_platform.get_device(device_id))")


def test_model_facts_from_a_folder(tmp_path: Path) -> None:
    llama = Facts(model=local_model(str(_folder(tmp_path / "llama", LLAMA))))
    assert llama.value("model_config_of(server_args).attention_arch") == "MHA"
    assert llama.value("model_config_of(server_args).context_len") == 8192
    assert llama.value("model_config_of(server_args).hf_config.architectures[0]") == "LlamaForCausalLM"
    deepseek = Facts(model=ModelFacts.from_folder(_folder(tmp_path / "ds", DEEPSEEK)))
    assert deepseek.value("model_config_of(server_args).attention_arch") == "MLA"
    assert local_model(str(tmp_path / "missing")) is None  # a hub id, not a folder: no facts


def test_files_of_the_checkpoints_own_folder(tmp_path: Path) -> None:
    """SGLang looks for files next to config.json (`hf_quant_config.json`); the folder `check` read
    the config from answers them; a path elsewhere stays unknown without `--local`."""
    folder = _folder(tmp_path / "llama-fp8", LLAMA)
    (folder / "hf_quant_config.json").write_text("{}", encoding="utf-8")
    facts = Facts(model=ModelFacts.from_folder(folder))
    fields = {"model_path": str(folder)}
    assert facts.value('os.path.exists(os.path.join(model_path, "hf_quant_config.json"))', fields) is True
    assert facts.value('os.path.isfile(os.path.join(model_path, "quant_model_description.json"))', fields) is False
    assert facts.value('Path(model_path, "hf_quant_config.json").is_file()', fields) is True
    assert facts.value("os.path.exists(model_path)", fields) is True
    with pytest.raises(Unknown):  # values are kept per launch: another launch, other facts
        Facts(model=ModelFacts.from_folder(folder)).value("os.path.exists(model_path)",
                                                          {"model_path": str(tmp_path / "elsewhere")})
    with pytest.raises(Unknown):  # a config named by architecture has no folder
        Facts(model=ModelFacts.from_architecture("LlamaForCausalLM")).value("os.path.exists(model_path)", fields)
    on_host = Facts(model=ModelFacts.from_folder(folder), host=LaunchHost(tmp_path))
    assert on_host.value("os.path.exists(model_path)", {"model_path": "elsewhere"}) is False


def test_symmetric_kv_only_where_the_config_and_architecture_say_so(tmp_path: Path) -> None:
    term = "model_config_of(server_args).has_asymmetric_kv"
    assert Facts(model=ModelFacts.from_folder(_folder(tmp_path / "a", LLAMA))).value(term) is False
    # A hybrid Qwen3.5: the text config's head_dim for the full-attention layers, no v_head_dim.
    qwen35 = {"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
              "text_config": {"head_dim": 256, "linear_key_head_dim": 128, "linear_value_head_dim": 128}}
    assert Facts(model=ModelFacts.from_folder(_folder(tmp_path / "q", qwen35))).value(term) is False
    # A config that sets v_head_dim, or an architecture model_config.py special-cases: not decided here.
    for name, config in (("b", {**LLAMA, "v_head_dim": 64}), ("c", DEEPSEEK)):
        with pytest.raises(Unknown):
            Facts(model=ModelFacts.from_folder(_folder(tmp_path / name, config))).value(term)
    with pytest.raises(Unknown):  # the architecture alone says nothing of head sizes
        Facts(model=ModelFacts.from_architecture("LlamaForCausalLM")).value(term)


def test_model_config_attributes_a_plain_decoder_decides(tmp_path: Path) -> None:
    model = ModelFacts.from_folder(_folder(tmp_path / "llama", LLAMA))
    spec = 'getattr(model_config_of(server_args), "embedding_model_spec", None)'
    # The spec depends on --is-embedding too: unknown unless the launch's value of it is given.
    # (Facts are per launch: one set of field values each.)
    with pytest.raises(Unknown):
        Facts(model=model).value(f"{spec}.safe_disable_chunked_prefill")
    typed = {"is_embedding": False}
    assert Facts(model=model).value(f"{spec} is not None", typed) is True
    assert Facts(model=model).value(f"{spec}.safe_disable_chunked_prefill", typed) is False
    assert Facts(model=model).value(f'{spec}.bcg_prefill_policy == "full_encoder"', typed) is False
    with pytest.raises(Unknown):
        Facts(model=model).value(f"{spec}.safe_disable_chunked_prefill", {"is_embedding": True})
    llama = Facts(model=model)
    assert llama.value("model_config_of(server_args).nvfp4_moe_meta is not None") is False
    assert llama.value("model_config_of(server_args).is_fp4_experts") is False
    hybrid = {**LLAMA, "quantization_config": {"quant_algo": "MIXED_PRECISION", "moe_quant_algo": "NVFP4",
                                               "group_size": 16}}
    quantized = Facts(model=ModelFacts.from_folder(_folder(tmp_path / "hybrid", hybrid)))
    for term in ("model_config_of(server_args).nvfp4_moe_meta", "model_config_of(server_args).is_fp4_experts"):
        with pytest.raises(Unknown):
            quantized.value(term)
    experts = "model_config_of(server_args).is_fp4_experts"
    assert Facts(model=ModelFacts.from_folder(_folder(tmp_path / "ds", DEEPSEEK))).value(experts) is False
    v4 = {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4"}
    with pytest.raises(Unknown):  # DeepSeek-V4 has its own expert layouts, found in the checkpoint
        Facts(model=ModelFacts.from_folder(_folder(tmp_path / "v4", v4))).value(experts)


def test_checkpoint_heads_only_where_their_architectures_load_them(tmp_path: Path) -> None:
    """ModelConfig loads a joint head config for Qwen3.5 checkpoints and a pointer head for Qwen3.5 text
    backbones (or Kev adapters get_config renames): for other architectures both stay None."""
    llama = Facts(model=ModelFacts.from_folder(_folder(tmp_path / "llama", LLAMA)))
    assert llama.value("model_config_of(server_args).joint_head_config is not None") is False
    assert llama.value("model_config_of(server_args).pointer_head") is None
    for arch, name in (("Qwen3_5ForConditionalGeneration", "joint_head_config"), ("Qwen3_5TextModel", "pointer_head"),
                       ("Qwen3_5ForCausalLM", "pointer_head")):
        qwen = Facts(model=ModelFacts.from_folder(_folder(tmp_path / arch, {"architectures": [arch]})))
        with pytest.raises(Unknown):  # read from files beside the checkpoint
            qwen.value(f"model_config_of(server_args).{name}")


def test_paths_are_looked_up_only_on_the_launch_host(tmp_path: Path) -> None:
    (tmp_path / "key.pem").write_text("k", encoding="utf-8")
    (tmp_path / "certs").mkdir()
    host = Facts(host=LaunchHost(tmp_path))
    assert host.value("os.path.isfile(ssl_keyfile)", {"ssl_keyfile": "key.pem"}) is True
    assert Facts(host=LaunchHost(tmp_path)).value("os.path.isfile(ssl_keyfile)", {"ssl_keyfile": "nope"}) is False
    assert Facts(host=LaunchHost(tmp_path)).value("os.path.isdir(d)", {"d": "certs"}) is True
    assert Facts(host=LaunchHost(tmp_path)).value("Path(model_path).is_file()", {"model_path": "certs"}) is False
    with pytest.raises(Unknown):  # no launch host given: nothing is looked up
        Facts(find_platform("cpu")).value("os.path.isfile(ssl_keyfile)", {"ssl_keyfile": "key.pem"})


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


def test_a_config_read_from_another_local_folder(tmp_path) -> None:
    """`get_config(speculative_draft_model_path, ...)` of a draft folder on the command line reads that
    folder's config.json; a path that is no local folder (a Hub id) stays unknown."""
    import json

    from extractor.logic.expressions import parsed_expression as _parse
    from extractor.logic.facts import Facts, _Evaluator
    from extractor.logic.model_config import ModelFacts

    target, draft = tmp_path / "target", tmp_path / "draft"
    for folder, arch in ((target, "DeepseekV3ForCausalLM"), (draft, "Gemma4AssistantForCausalLM")):
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps({"architectures": [arch]}), encoding="utf-8")
    facts = Facts(model=ModelFacts.from_folder(target))
    text = 'getattr(get_config(speculative_draft_model_path__v2, trust_remote_code=False), "architectures", None)'
    read = _Evaluator(facts, {"speculative_draft_model_path__v2": str(draft)}).eval(_parse(text).body)
    assert read == ["Gemma4AssistantForCausalLM"]
    own = _Evaluator(facts, {"model_path": str(target)}).eval(_parse("get_config(model_path).architectures").body)
    assert own == ["DeepseekV3ForCausalLM"]
    with pytest.raises(Unknown):
        _Evaluator(facts, {"speculative_draft_model_path__v2": "org/draft"}).eval(_parse(text).body)


def test_the_launch_config_with_its_overrides_and_the_class_defaults(tmp_path) -> None:
    """`get_config(model_path, ..., model_override_args=json.loads(...))` reads config.json with the
    overrides applied as SGLang applies them (a dict merged into a dict-valued `rope_scaling` or into a
    sub-config, any other key set); an attribute every transformers config class defaults (Gemma 3's
    text config has no max_position_embeddings) is unknown when config.json leaves it out, not the
    default `getattr` names."""
    from extractor.logic.expressions import parsed_expression as _parse
    from extractor.logic.facts import _Evaluator

    folder = _folder(tmp_path / "qwen", {"architectures": ["Qwen2ForCausalLM"], "max_position_embeddings": 32768,
                                         "rope_scaling": {"rope_type": "default", "rope_theta": 1e6},
                                         "text_config": {"hidden_size": 8, "vocab_size": 10}})
    facts = Facts(model=ModelFacts.from_folder(folder))
    fields = {"model_path": str(folder)}

    def read(text: str) -> object:
        return _Evaluator(facts, fields).eval(_parse(text).body)

    override = ('get_config(model_path, trust_remote_code=False, model_override_args=json.loads(\'{"rope_scaling": '
                '{"factor": 4.0}, "text_config": {"hidden_size": 16}, "max_position_embeddings": 65536}\'))')
    assert read(f"{override}.rope_scaling") == {"rope_type": "default", "rope_theta": 1e6, "factor": 4.0}
    assert read(f"{override}.text_config.hidden_size") == 16 and read(f"{override}.text_config.vocab_size") == 10
    assert read(f"{override}.max_position_embeddings") == 65536
    assert read("get_config(model_path, model_override_args={}).max_position_embeddings") == 32768
    assert read('getattr(get_config(model_path), "max_position_embeddings", None)') == 32768
    assert read('getattr(get_config(model_path).text_config, "seq_length", None)') is None
    with pytest.raises(Unknown):
        read('getattr(get_config(model_path).text_config, "max_position_embeddings", None)')
    assert read("model_config_of(server_args).context_len") == 32768
    fields["json_model_override_args"] = '{"max_position_embeddings": 65536}'  # what ModelConfig is built with
    assert read("model_config_of(server_args).context_len") == 65536
    fields["json_model_override_args"] = "{not json"
    with pytest.raises(Unknown):
        read("model_config_of(server_args).context_len")


def test_a_dict_comprehension_over_a_constant(tmp_path) -> None:
    """`_NVFP4_PREFILL_DEQUANT_DTYPE = {backend: dtype for dtype, backend in _NVFP4_PREFILL_BACKEND.items()}`
    (0.5.23's kv_cache_hook.py): the dict it builds, so `backend in ...` is decided."""
    from extractor.logic.expressions import parsed_expression as _parse
    from extractor.logic.facts import _Evaluator

    inverted = '{backend: dtype for dtype, backend in {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}.items()}'
    evaluator = _Evaluator(Facts(), {"attention_backend": "fa3"})
    assert evaluator.eval(_parse(inverted).body) == {"flashinfer": "fp8_e4m3", "trtllm_mha": "nvfp4"}
    assert evaluator.eval(_parse(f"attention_backend in {inverted}").body) is False
    assert evaluator.eval(_parse(f'{inverted}["trtllm_mha"]').body) == "nvfp4"


def test_a_module_constant_a_term_names_is_read_from_the_helpers() -> None:
    """`resolved(attention_backend) in _NVFP4_PREFILL_DEQUANT_DTYPE`: the constant, a name the helpers
    keep for the terms (its source a comprehension no literal holds), is read from there; a bare name
    they do not keep stays unknown (a local the walk lost, never the flag of that name)."""
    from extractor.core.model import Atom, Helper, HelperLibrary, Term, TermKind
    from extractor.logic.evaluation import Context
    from extractor.logic.helpers import Helpers

    library = HelperLibrary(names=(("_DEQUANT", "m:_DEQUANT"),), helpers=(
        Helper("m:_DEQUANT", '{backend: dtype for dtype, backend in _BACKEND.items()}', (("_BACKEND", "m:_BACKEND"),)),
        Helper("m:_BACKEND", '{"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}')))
    context = Context({"attention_backend": "intel_amx", "tp_size": 2}, facts=Facts(helpers=Helpers(library)))
    backend = Term(TermKind.FIELD, "attention_backend", "attention_backend", ("attention_backend",))
    assert context.truth(Atom(backend, "in", Term(TermKind.OPAQUE, "_DEQUANT", "_DEQUANT"))) is False
    assert context.truth(Atom(backend, "in", Term(TermKind.OPAQUE, "tp_size", "tp_size"))) is None
