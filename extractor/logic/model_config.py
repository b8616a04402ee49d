"""A model's facts: its config.json read as SGLang's model config reads it (attributes, the text
config of a multimodal checkpoint, the derived values SGLang's ModelConfig adds), from a local
folder, a file or an architecture's name alone."""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UsageError
from ..core.model import ConfigLoader
from .expressions import Unknown


class Config:
    """A config object as transformers builds it from config.json: keys read as attributes."""

    __slots__ = ("data",)

    def __init__(self, data: Mapping[str, object]) -> None:
        self.data = data

    def attribute(self, name: str) -> object:
        if name not in self.data:
            raise AttributeError(name)
        return _wrap(name, self.data[name])

    def get(self, name: str, default: object = None) -> object:
        return _wrap(name, self.data[name]) if name in self.data else default


def _wrap(name: str, value: object) -> object:
    # Sub-configs become config objects; `quantization_config` and other dicts stay dicts.
    if isinstance(value, dict) and name.endswith("_config") and name != "quantization_config":
        return Config(value)
    return value


# Architectures whose attention SGLang runs as MLA (model_config.py's list; the ones rules name).
MLA_ARCHITECTURES = frozenset({
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN",
    "DeepseekV4ForCausalLM", "KimiVLForConditionalGeneration", "KimiK25ForConditionalGeneration",
    "MiniCPM3ForCausalLM", "LongcatFlashForCausalLM", "MistralLarge3ForCausalLM", "GlmMoeDsaForCausalLM",
})


# Architectures model_config.py leaves to the generic head sizes (no special case sets head_dim or
# v_head_dim for them), so K and V rows have one width unless config.json says otherwise.
SYMMETRIC_KV_ARCHITECTURES = frozenset({
    "LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM",
    "Phi3ForCausalLM",
    # The hybrid linear-attention Qwens: their full-attention layers take the text config's head_dim,
    # which 0.5.18 to 0.5.23 special-case nowhere (the linear layers' key and value widths are others).
    "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
})


# Attributes every transformers config class defines with a default of its own, which config.json may
# leave out: `getattr(config, name, None)` then reads the class's value, not None (Gemma 3's text config
# has no max_position_embeddings, Gemma3TextConfig gives 131072 where SGLang would fall back to 2048).
CLASS_DEFAULTED = frozenset({"max_position_embeddings"})


# Server arguments `ModelConfig.from_server_args` builds the model's config from, beyond config.json.
MODEL_CONFIG_FIELDS = ("is_embedding", "json_model_override_args", "quantization")

# `--quantization` not known where a model's config is built (`ModelConfig(quantization=NOT_GIVEN)`).
NOT_GIVEN = object()


# SGLang's loaders of a checkpoint's config (`hf_transformers.config.get_config`, transformers' own).
CONFIG_LOADERS = frozenset({"get_config"})
# Where `get_hf_text_config` finds the language model's config of a multimodal checkpoint, first first.
_TEXT_CONFIG_KEYS = ("llm_config", "language_config", "text_config")


def overridden(data: Mapping[str, object], override: object) -> Mapping[str, object]:
    """config.json with `--json-model-override-args` (its text, or the dict it parses to) applied as
    `get_config` applies it: a dict given for a sub-config, or for a dict-valued `rope_scaling` /
    `rope_parameters`, merged into it; any other key set as given. Unknown when it is no JSON object,
    or for DeepSeek-V4.1, whose overrides SGLang normalizes first."""
    if override in ({}, None, "", "{}"):
        return data
    if isinstance(override, str):
        try:
            override = json.loads(override)
        except ValueError:
            raise Unknown("overridden config") from None
    if not isinstance(override, dict) or data.get("model_type") == "deepseek_v41":
        raise Unknown("overridden config")
    merged = dict(data)
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(value, dict) and isinstance(current, dict) and (
                isinstance(_wrap(key, current), Config) or key in ("rope_scaling", "rope_parameters")):
            merged[key] = {**current, **value}
        else:
            merged[key] = value
    return merged


def built_config(model: ModelFacts, override: object, embedding: object, quantization: object) -> ModelConfig:
    """What `ModelConfig(...)` builds of the launch's own checkpoint: its config.json with the overrides
    applied as `get_config` applies them, `--is-embedding` and `--quantization` as given."""
    return ModelConfig(Config(overridden(model.config, override)), model.architecture_only,
                       embedding if isinstance(embedding, bool) else None, quantization)


def constructed_config(node: ast.Call, evaluate: Callable[[ast.AST], object], launched: set[object],
                       model: ModelFacts) -> ModelConfig:
    """`ModelConfig(model_path=..., ...)` as `ModelConfig.from_server_args` returns it, inlined (0.5.10-0.5.20's
    `DllmConfig`): the launch's model when the path is its `--model-path` (`launched`) and it is no draft
    model; `evaluate` reads an argument over the launch."""
    given = {k.arg: k.value for k in node.keywords if k.arg is not None}
    path = node.args[0] if len(node.args) == 1 and not isinstance(node.args[0], ast.Starred) \
        else given.get("model_path") if not node.args else None
    if path is None or evaluate(path) not in launched or any(  # `**kwargs` holding something
            k.arg is None and evaluate(k.value) != {} for k in node.keywords) \
            or ("is_draft_model" in given and evaluate(given["is_draft_model"]) is not False):
        raise Unknown("ModelConfig")
    try:
        quantization = evaluate(given["quantization"]) if "quantization" in given else None
    except Unknown:
        quantization = NOT_GIVEN
    return built_config(model, evaluate(given["model_override_args"]) if "model_override_args" in given else None,
                        evaluate(given["is_embedding"]) if "is_embedding" in given else False, quantization)


def text_config(config: Config) -> Config:
    """The config of the language model (`get_hf_text_config`): a thinker's text config, else the first
    sub-config by SGLang's priority, else the config itself."""
    data = config.data
    archs = data.get("architectures") or [""]
    if isinstance(archs[0], str) and archs[0].startswith("Llava") and archs[0].endswith("ForCausalLM"):
        return config
    thinker = data.get("thinker_config")
    if isinstance(thinker, dict):
        text = thinker.get("text_config")
        return Config(text if isinstance(text, dict) else thinker)
    for key in _TEXT_CONFIG_KEYS:
        if isinstance(data.get(key), dict):
            return Config(data[key])
    return config


class PlainDecoderSpec:
    """`ModelConfig.embedding_model_spec` of a causal LM served for generation (no `--is-embedding`):
    `resolve_embedding_model_spec` always returns a spec, and for an architecture in none of its
    embedding or classification tables it is the "none" one, every capability off."""

    _VALUES: Mapping[str, object] = {
        "family": "none", "task": "none", "execution": "none", "attention": "none", "bcg_prefill_policy": "default",
        "bcg_eligibility": "standard",
        **{name: False for name in (
            "normalize", "supports_dimensions", "supports_token_embeddings", "supports_multimodal",
            "requires_embedding_flag", "auto_enable_embedding", "bidirectional_attention",
            "safe_disable_radix_cache", "safe_disable_chunked_prefill", "safe_disable_kv_cache")},
    }

    def attribute(self, name: str) -> object:
        if name not in self._VALUES:
            raise AttributeError(name)
        return self._VALUES[name]


class ModelConfig:
    """What `model_config_of(cfg)` gives, where config.json alone says it."""

    __slots__ = ("config", "architecture_only", "embedding_requested", "quantization_requested")

    def __init__(self, config: Config, architecture_only: bool = False, embedding_requested: object = None,
                 quantization_requested: object = NOT_GIVEN) -> None:
        self.config = config
        self.architecture_only = architecture_only  # `--model-arch NAME`: nothing is known of head sizes
        self.embedding_requested = embedding_requested  # `--is-embedding` as typed; None: not known
        self.quantization_requested = quantization_requested  # `--quantization` as typed (None: not given)

    def attribute(self, name: str) -> object:
        data = self.config.data
        archs = data.get("architectures") or []
        if name == "hf_config":
            return self.config
        if name == "hf_text_config":
            text = data.get("text_config")
            return Config(text) if isinstance(text, dict) else self.config
        if name == "attention_arch":
            return "MLA" if any(a in MLA_ARCHITECTURES for a in archs) else "MHA"
        if name == "context_len":
            if "max_position_embeddings" in data:
                return data["max_position_embeddings"]
        if name == "is_encoder_decoder":
            return bool(data.get("is_encoder_decoder", False))
        if name in ("hf_quant_config", "quantization_config"):
            return data.get("quantization_config")
        if name == "quantization":
            return self._quantization()
        if name == "decision_config" and archs and archs != ["Qwen3_5Model"]:
            return None  # only a bare Qwen3.5 backbone loads a decision head config
        if name == "joint_head_config" and archs and archs not in (["Qwen3_5ForConditionalGeneration"], ["Qwen3_5Model"]):
            return None  # only a Qwen3.5 checkpoint (or a backbone its decision config renames) loads one
        if name == "pointer_head" and archs and archs not in (["Qwen3_5TextModel"], ["Qwen3_5ForCausalLM"]):
            return None  # a Kev backbone, or a Kev adapter whose architectures get_config sets to these
        if name == "is_embedding_gemma" and not self.architecture_only:
            return self._is_embedding_gemma()
        if name == "has_asymmetric_kv" and not self.architecture_only \
                and any(a in SYMMETRIC_KV_ARCHITECTURES for a in archs):
            text = data.get("text_config") if isinstance(data.get("text_config"), dict) else data
            if not any(k in text for k in ("v_head_dim", "swa_head_dim", "swa_v_head_dim")):
                return False  # V rows default to K's width, and these architectures change neither
        if name == "embedding_model_spec" and self.embedding_requested is False and archs \
                and all(a.endswith("ForCausalLM") for a in archs) and not self._is_embedding_gemma():
            return PlainDecoderSpec()
        if name == "is_fp4_experts" and not self.architecture_only and "quantization_config" not in data and archs \
                and not any(mark in text.lower() for text in (*archs, str(data.get("model_type", "")))
                            for mark in ("v4", "mimo")):
            # mxfp4 routed experts come from a checkpoint's quantization config, or from the DeepSeek-V4
            # and MiMo-V2 layouts model_config.py detects: none of them here.
            return False
        if name == "nvfp4_moe_meta" and not self.architecture_only:
            quant = data.get("quantization_config")
            if not isinstance(quant, dict) or str(quant.get("moe_quant_algo", "")).upper() != "NVFP4":
                return None  # only a hybrid checkpoint with NVFP4 MoE layers has the metadata
        if name in ("is_multimodal", "is_multimodal_gen", "is_image_gen", "is_audio_model"):
            if not any(k in data for k in ("vision_config", "audio_config", "image_token_id", "vision_tower")) \
                    and all(a.endswith("ForCausalLM") for a in archs) and archs:
                return False
        raise Unknown(f"model_config.{name}")

    def _quantization(self) -> object:
        """`ModelConfig.quantization` after `_verify_quantization`: `--quantization` as typed (lower case)
        when the checkpoint has no quantization config, the checkpoint's method when none is typed.
        A typed method over another checkpoint's is kept, replaced or refused by tables of the
        quantization methods: not known here."""
        quant = self.config.data.get("quantization_config")
        method = quant.get("quant_method") if isinstance(quant, dict) else None
        typed = self.quantization_requested
        if typed is None:
            return method
        if not isinstance(typed, str):  # not known (NOT_GIVEN), or no method's name
            raise Unknown("model_config.quantization")
        if not isinstance(quant, dict) and not self.architecture_only:
            return typed.lower()
        if isinstance(method, str) and typed.lower() == method.lower():
            return method
        raise Unknown("model_config.quantization")

    def _is_embedding_gemma(self) -> bool:
        data = self.config.data
        text = data.get("text_config") if isinstance(data.get("text_config"), dict) else data
        return text.get("model_type") == "gemma3_text" and bool(text.get("use_bidirectional_attention", False))


@dataclass(frozen=True)
class ModelFacts:
    """A model's config.json (or just its architecture), and where it came from."""

    config: Mapping[str, object]
    source: str
    architecture_only: bool = False
    local_folder: bool = False  # `--model-path` names this folder: nothing is fetched from a hub

    @classmethod
    def from_folder(cls, folder: str | Path) -> ModelFacts:
        path = Path(folder) / "config.json"
        return cls(_read_config(path), str(path), local_folder=True)

    @classmethod
    def from_file(cls, path: str | Path) -> ModelFacts:
        return cls(_read_config(Path(path)), str(path))

    @classmethod
    def from_architecture(cls, name: str) -> ModelFacts:
        return cls({"architectures": [name]}, f"architecture {name}", architecture_only=True)

    @property
    def architecture(self) -> str | None:
        archs = self.config.get("architectures") or []
        return archs[0] if archs and isinstance(archs[0], str) else None


def _read_config(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such model config") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"{path}: not a readable config.json ({error.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a config.json holds a JSON object")
    return data


def local_model(path: object) -> ModelFacts | None:
    """The facts of a `--model-path` that names a local folder with a config.json, else None."""
    if not isinstance(path, str) or not path:
        return None
    folder = Path(path).expanduser()
    try:
        if (folder / "config.json").is_file():
            return ModelFacts.from_folder(folder)
    except (OSError, UsageError):
        return None
    return None


def config_load_error(config: Mapping[str, object], trust_remote_code: object, loader: ConfigLoader,
                      path: str | None = None) -> tuple[str, str | None] | None:
    """What `AutoConfig.from_pretrained(path)` raises on a checkpoint's config.json, as the transformers
    the release pins decides it: (exception, message; None where the message is not known here), or
    None when it loads. A config whose `auto_map` names an `AutoConfig` loads that code with
    trust_remote_code, its own model type's class without, and fails without either."""
    model_type = config.get("model_type")
    auto_map = config.get("auto_map")
    known = isinstance(model_type, str) and model_type in loader.model_types
    if isinstance(auto_map, dict) and "AutoConfig" in auto_map:
        if trust_remote_code or known:
            return None
        # "The repository <path> contains custom code ...": said of a folder, its code in it (an
        # `AutoConfig` of "repo--module.Class" names another repository, and other words).
        said = loader.custom_code_message
        if said is None or path is None or not os.path.isdir(path) or "--" in str(auto_map["AutoConfig"]):
            return ("ValueError", None)
        return ("ValueError", said.replace("{path}", path).replace("{abspath}", os.path.abspath(path)))
    if not isinstance(model_type, str):
        said = loader.untyped_message.replace("{path}", path) if loader.untyped_message and path is not None else None
        return ("ValueError", said)  # "Unrecognized model in <path>. Should have a `model_type` key ..."
    return None if known else ("ValueError", loader.unknown_type_message.replace("{model_type}", model_type))

