"""Checks made while the model config is built, with triggers over flags and the checkpoint's config.json.

The made-up package imitates the shapes of SGLang 0.5.23's `configs/model_config.py` (names and
messages are ours): `model_config_of(server_args)` builds `ModelConfig.from_server_args(...)` once,
past a loop over a factory registry only plugins fill; the constructor keeps its arguments as
attributes (`self.context_length = context_length`) and calls methods that test them against what
helpers compute from the checkpoint's config (`get_context_length(get_hf_text_config(...))`, reached
through a `from .common import *` shim); a helper that asserts is called only under an `if ... else`
expression's test. Each case is a launch, a config.json shape, and the first error the fixture
raises on it, worked out by reading it as Python runs it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.logic.model_config import ModelFacts
from extractor.logic.platforms import find_platform
from extractor.products.check.linter import check
from tests.packages import OVERRIDES, package_ruleset

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils.common import human_readable_int


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    context_length: Optional[int] = None
    quantization: Optional[str] = None
    quantize_and_serve: bool = False
    json_model_override_args: str = "{}"
    fast_moe: bool = False

    def __post_init__(self):
        """Resolution runs in resolve_once."""

    def resolve_once(self):
        from sglang.srt.arg_groups.pipeline import run_resolution_pipeline

        run_resolution_pipeline(self)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--context-length", type=human_readable_int, default=ServerArgs.context_length)
        parser.add_argument("--quantization", type=str, default=ServerArgs.quantization)
        parser.add_argument("--quantize-and-serve", action="store_true")
        parser.add_argument("--json-model-override-args", type=str, default=ServerArgs.json_model_override_args)
        parser.add_argument("--fast-moe", action="store_true")
''',
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/overrides.py": OVERRIDES,
    "sglang/srt/arg_groups/model_override_base.py": '''
from sglang.srt.arg_groups.overrides import record_of, resolving_view


def model_config_of(server_args):
    """Build and memoize ModelConfig."""
    if not isinstance(server_args, dict):
        server_args = record_of(server_args)
    cfg = resolving_view(server_args)
    from sglang.srt.configs.model_config import ModelConfig

    memo = getattr(server_args, "_model_config", None)
    if memo is not None:
        return memo
    model_config = ModelConfig.from_server_args(server_args)
    server_args._model_config = model_config
    return model_config
''',
    "sglang/srt/arg_groups/pipeline.py": '''
from sglang.srt.arg_groups.model_override_base import model_config_of
from sglang.srt.arg_groups.overrides import resolving_view


def run_resolution_pipeline(server_args):
    try:
        hf_config = model_config_of(server_args).hf_config  # a first build whose errors are swallowed
    except Exception:
        hf_config = None
    model_config = model_config_of(server_args)  # built again there: it was not kept
    cfg = resolving_view(server_args)
    if model_config.quantization is None and cfg.fast_moe:
        raise ValueError("--fast-moe runs only on quantized weights.")
''',
    "sglang/srt/configs/__init__.py": "",
    "sglang/srt/configs/model_config.py": '''
import copy
import json
import logging
import os
from pathlib import Path

from sglang.srt.arg_groups.overrides import resolving_view
from sglang.srt.environ import envs
from sglang.srt.layers.quantization import QUANTIZATION_METHODS
from sglang.srt.utils.hf_transformers_utils import (
    download_quant_config,
    get_config,
    get_context_length,
    get_hf_text_config,
)

logger = logging.getLogger(__name__)
_MODEL_CONFIG_FACTORIES = {}
REQUANTIZATION_METHODS = ["online_fp4"]


def _quant_config_to_dict(cfg):
    if cfg is None or isinstance(cfg, dict):
        return cfg
    return cfg.to_dict()


def register_model_config_factory(server_args_type, factory):
    """For plugins: nothing in the package calls it."""
    _MODEL_CONFIG_FACTORIES[server_args_type] = factory


def is_dsa(config) -> bool:
    return getattr(config, "index_topk", None) is not None


def get_index_head_dim(config) -> int:
    assert is_dsa(config), "the indexer's head size belongs to DSA checkpoints"
    return config.index_head_dim


class ModelConfig:
    def __init__(self, model_path, context_length=None, model_override_args="{}", quantization=None,
                 quantize_and_serve=False, is_draft_model=False):
        self.model_path = model_path
        self.is_draft_model = is_draft_model
        self.quantization = quantization
        self.quantize_and_serve = quantize_and_serve
        self._validate_quantize_and_serve()
        self.model_override_args = json.loads(model_override_args)
        self.hf_config = copy.deepcopy(get_config(self.model_path, model_override_args=self.model_override_args))
        self.hf_text_config = get_hf_text_config(self.hf_config)
        self.index_head_dim = get_index_head_dim(self.hf_text_config) if is_dsa(self.hf_text_config) else None
        self._derive_context_length(context_length)
        self._verify_quantization()

    @staticmethod
    def from_server_args(server_args, model_path=None):
        for record_type in type(server_args).__mro__:
            factory = _MODEL_CONFIG_FACTORIES.get(record_type)
            if factory is not None:
                return factory(server_args, model_path=model_path)
        cfg = resolving_view(server_args)
        return ModelConfig(
            model_path=model_path or cfg.model_path,
            context_length=cfg.context_length,
            model_override_args=cfg.json_model_override_args,
            quantization=cfg.quantization,
            quantize_and_serve=cfg.quantize_and_serve,
        )

    def _validate_quantize_and_serve(self):
        if not self.quantize_and_serve:
            return
        if self.quantization not in ["modelopt", "modelopt_fp4"]:
            raise ValueError("quantize_and_serve needs a ModelOpt quantization.")

    def _parse_quant_hf_config(self):
        quant_cfg = _quant_config_to_dict(getattr(self.hf_config, "quantization_config", None))
        if quant_cfg is not None:
            if "quant_method" not in quant_cfg:
                parsed = self._parse_modelopt_quant_config({"quantization": quant_cfg})
                if parsed:
                    quant_cfg.update(parsed)
        if quant_cfg is None:
            quant_cfg = getattr(self.hf_config, "compression_config", None)
        if quant_cfg is None:
            if not os.path.exists(self.model_path):
                try:
                    quant_cfg = download_quant_config(self.model_path)
                except Exception as e:
                    logger.warning("no quant config for %s: %s", self.model_path, e)
            elif os.path.exists(os.path.join(self.model_path, "hf_quant_config.json")):
                with open(os.path.join(self.model_path, "hf_quant_config.json")) as f:
                    quant_cfg = self._parse_modelopt_quant_config(json.load(f))
        return quant_cfg

    def _parse_modelopt_quant_config(self, quant_config_dict):
        algo = quant_config_dict.get("quantization", {}).get("quant_algo")
        if algo is None:
            return None
        return {"quant_method": "modelopt_fp8" if algo == "FP8" else "modelopt_fp4"}

    def _find_quant_sidecar_config(self):
        if self.is_draft_model:
            return None
        quant_config_file = Path(self.model_path, "quant_sidecar.json")
        quant_cfg = None
        if quant_config_file.is_file():
            with open(quant_config_file) as f:
                quant_cfg = json.load(f)
            quant_cfg["quant_method"] = "sidecar"
        return quant_cfg

    def _verify_quantization(self):
        supported_quantization = [*QUANTIZATION_METHODS]
        compatible_quantization_methods = {"modelopt_fp4": ["modelopt", "fp8"], "w8a8_int8": ["compressed-tensors"]}
        if self.quantization is not None:
            self.quantization = self.quantization.lower()

        cfg_list = []
        hf_config = self._parse_quant_hf_config()
        sidecar_config = self._find_quant_sidecar_config()
        quant_config = sidecar_config or hf_config
        if quant_config is not None:
            cfg_list.append(quant_config)

        cfg_list = [item for item in cfg_list if item is not None]
        if len(cfg_list) > 1:
            raise ValueError("Quantization configs from two sources.")
        quant_cfg = cfg_list[0] if cfg_list else None

        if quant_cfg is not None:
            quant_method = quant_cfg.get("quant_method", "" if not self.quantization else self.quantization).lower()
            preserve_draft = self.is_draft_model and self.quantization == "online_fp4"
            if self.quantization not in REQUANTIZATION_METHODS:
                if not preserve_draft:
                    for _, method in QUANTIZATION_METHODS.items():
                        quantization_override = method.override_quantization_method(quant_cfg, self.quantization)
                        if quantization_override:
                            quant_method = quantization_override
                            self.quantization = quantization_override
                            break

            if self.quantization is None:
                self.quantization = quant_method
            elif self.quantization != quant_method:
                is_compatible = preserve_draft or (
                    self.quantization in compatible_quantization_methods
                    and quant_method in compatible_quantization_methods[self.quantization]
                )
                if is_compatible:
                    logger.info("Using the CLI quantization %s", self.quantization)
                elif self.is_draft_model:
                    self.quantization = quant_method
                elif self.quantization in REQUANTIZATION_METHODS:
                    logger.info("Requantizing from %s", quant_method)
                else:
                    raise ValueError(
                        f"Checkpoint quantization ({quant_method}) differs from --quantization ({self.quantization})."
                    )

            # As 0.5.10: a module of the package imported in the method, read only by a test that warns.
            from sglang.srt.layers import deep_gemm_wrapper

            if quant_cfg.get("scale_fmt") != "ue8m0" and deep_gemm_wrapper.DEEPGEMM_SCALE_UE8M0:
                logger.warning("DeepGemm expects ue8m0 scales on this checkpoint.")

        if self.quantization is not None:
            if self.quantization not in supported_quantization:
                raise ValueError(f"Unknown quantization method: {self.quantization}.")

    def _derive_context_length(self, context_length):
        derived = get_context_length(self.hf_text_config)
        if context_length is not None and context_length > derived:
            if not envs.SGLANG_ALLOW_LONGER_CONTEXT.get():
                raise ValueError(
                    f"User-specified context_length ({context_length}) is greater than the derived "
                    f"context_length ({derived})."
                )
''',
    "sglang/srt/environ.py": '''
class EnvBool:
    def __init__(self, default):
        self.default = default


class Envs:
    SGLANG_ALLOW_LONGER_CONTEXT = EnvBool(False)


envs = Envs()
''',
    "sglang/srt/utils/__init__.py": "from sglang.srt.utils.common import *  # noqa: F401, F403\n",
    "sglang/srt/utils/common.py": '''
import os

import torch


def human_readable_int(value):
    return int(value)


def get_bool_env_var(name, default="false"):
    return os.getenv(name, default).lower() in ("true", "1")


def is_cpu() -> bool:
    return get_bool_env_var("SGLANG_USE_CPU_ENGINE")


def is_cuda() -> bool:
    return torch.cuda.is_available() and torch.version.cuda is not None


def get_device_capability():
    if not torch.cuda.is_available():
        return (None, None)
    return torch.cuda.get_device_capability()
''',
    # A registry of quantization configs filled at import time under platform tests; each class may
    # claim a checkpoint (`override_quantization_method`), the base class claims none.
    "sglang/srt/layers/__init__.py": "",
    "sglang/srt/layers/quantization/__init__.py": '''
from typing import Dict, Type

from sglang.srt.layers.quantization.awq import AWQConfig, AWQMarlinConfig
from sglang.srt.layers.quantization.base_config import QuantizationConfig
from sglang.srt.layers.quantization.fp8 import Fp8Config
from sglang.srt.layers.quantization.modelopt import ModelOptFp4Config, ModelOptFp8Config
from sglang.srt.layers.quantization.mxfp4 import Mxfp4Config
from sglang.srt.utils import is_cpu, is_cuda

BASE_QUANTIZATION_METHODS: Dict[str, Type[QuantizationConfig]] = {
    "fp8": Fp8Config,
    "modelopt": ModelOptFp8Config,
    "modelopt_fp8": ModelOptFp8Config,
    "modelopt_fp4": ModelOptFp4Config,
    "awq": AWQConfig,
    "awq_marlin": AWQMarlinConfig,
    "compressed-tensors": Fp8Config,
    "w8a8_int8": Fp8Config,
}

if is_cpu() or is_cuda():
    BASE_QUANTIZATION_METHODS.update({"mxfp4": Mxfp4Config})

QUANTIZATION_METHODS = {**BASE_QUANTIZATION_METHODS}
''',
    "sglang/srt/layers/quantization/base_config.py": '''
from typing import Optional


class QuantizationConfig:
    @classmethod
    def get_name(cls) -> str:
        raise NotImplementedError

    @classmethod
    def override_quantization_method(cls, hf_quant_cfg, user_quant) -> Optional[str]:
        """Claims a checkpoint format for this method; rarely overridden."""
        return None

    @classmethod
    def _modelopt_override(cls, hf_quant_config, user_quant) -> Optional[str]:
        if hf_quant_config is None:
            return None
        from sglang.srt.configs.model_config import REQUANTIZATION_METHODS

        if user_quant in REQUANTIZATION_METHODS:
            return None
        quant_method = hf_quant_config.get("quant_method", "").lower()
        if quant_method == "modelopt" and user_quant in (None, cls.get_name()):
            return cls.get_name()
        return None
''',
    "sglang/srt/layers/quantization/fp8.py": '''
from sglang.srt.layers.quantization.base_config import QuantizationConfig


class Fp8Config(QuantizationConfig):
    @classmethod
    def get_name(cls) -> str:
        return "fp8"
''',
    "sglang/srt/layers/quantization/mxfp4.py": '''
from sglang.srt.layers.quantization.base_config import QuantizationConfig


class Mxfp4Config(QuantizationConfig):
    @classmethod
    def get_name(cls) -> str:
        return "mxfp4"
''',
    "sglang/srt/layers/quantization/modelopt.py": '''
from sglang.srt.layers.quantization.base_config import QuantizationConfig


class ModelOptFp8Config(QuantizationConfig):
    @classmethod
    def get_name(cls) -> str:
        return "modelopt_fp8"

    @classmethod
    def override_quantization_method(cls, hf_quant_config, user_quant):
        return cls._modelopt_override(hf_quant_config, user_quant)


class ModelOptFp4Config(ModelOptFp8Config):
    @classmethod
    def get_name(cls) -> str:
        return "modelopt_fp4"
''',
    "sglang/srt/layers/quantization/awq.py": '''
import logging
from typing import Optional

from sglang.srt.layers.quantization.base_config import QuantizationConfig
from sglang.srt.utils import get_device_capability

logger = logging.getLogger(__name__)


class AWQConfig(QuantizationConfig):
    @classmethod
    def get_name(cls) -> str:
        return "awq"


class AWQMarlinConfig(QuantizationConfig):
    @classmethod
    def get_name(cls) -> str:
        return "awq_marlin"

    @classmethod
    def is_awq_marlin_compatible(cls, quant_config) -> bool:
        quant_method = quant_config.get("quant_method", "").lower()
        num_bits = quant_config.get("bits")
        if quant_method != "awq" or num_bits is None:
            return False
        major, minor = get_device_capability()
        if major is None or major * 10 + minor < 80:
            return False
        return num_bits in (4, 8)

    @classmethod
    def override_quantization_method(cls, hf_quant_cfg, user_quant) -> Optional[str]:
        can_convert = cls.is_awq_marlin_compatible(hf_quant_cfg)
        is_valid_user_quant = user_quant is None or user_quant == "awq_marlin"
        if can_convert and is_valid_user_quant:
            logger.info("Using %s", cls.get_name())
            return cls.get_name()
        return None
''',
    "sglang/srt/utils/hf_transformers_utils.py": '''
"""A shim: everything moved to the package."""
from sglang.srt.utils.hf_transformers import *  # noqa: F401, F403
''',
    "sglang/srt/utils/hf_transformers/__init__.py": '''
from .common import get_context_length, get_hf_text_config
from .config import download_quant_config, get_config
''',
    "sglang/srt/utils/hf_transformers/config.py": '''
from transformers import AutoConfig


def download_quant_config(model):
    from huggingface_hub import hf_hub_download

    return hf_hub_download(model, "hf_quant_config.json")


def get_config(model, model_override_args=None):
    config = AutoConfig.from_pretrained(model)
    if model_override_args:
        config.update(model_override_args)
    return config
''',
    "sglang/srt/utils/hf_transformers/common.py": '''
CONTEXT_LENGTH_KEYS = ["max_sequence_length", "seq_length", "max_position_embeddings"]


def get_hf_text_config(config):
    if hasattr(config, "text_config"):
        return config.text_config
    return config


def get_context_length(config):
    rope_scaling = getattr(config, "rope_scaling", None)
    if rope_scaling:
        factor = rope_scaling.get("factor", 1)
        if rope_scaling.get("rope_type", None) == "llama3":
            factor = 1
    else:
        factor = 1
    for key in CONTEXT_LENGTH_KEYS:
        val = getattr(config, key, None)
        if val is not None:
            return int(factor * val)
    return 2048
''',
}

LONGER = "User-specified context_length ({context_length}) is greater than the derived context_length ({derived})."
QUANTIZE_AND_SERVE = "quantize_and_serve needs a ModelOpt quantization."
INDEX_HEAD = "the indexer's head size belongs to DSA checkpoints"

# Config shapes (keys as the public config.json files have them).
LLAMA_31 = {"architectures": ["LlamaForCausalLM"], "max_position_embeddings": 131072,
            "rope_scaling": {"factor": 8.0, "rope_type": "llama3", "original_max_position_embeddings": 8192}}
QWEN_YARN = {"architectures": ["Qwen2ForCausalLM"], "max_position_embeddings": 32768,
             "rope_scaling": {"factor": 4.0, "rope_type": "yarn", "original_max_position_embeddings": 32768}}
GEMMA_3 = {"architectures": ["Gemma3ForConditionalGeneration"],
           "text_config": {"model_type": "gemma3_text", "max_position_embeddings": 131072}}
DEEPSEEK_V3 = {"architectures": ["DeepseekV3ForCausalLM"], "max_position_embeddings": 163840}

# (launch arguments, config.json, environment, the first error the fixture raises, or None)
CASES = [
    pytest.param([], LLAMA_31, {}, None, id="plain"),
    pytest.param(["--context-length", "200000"], LLAMA_31, {}, LONGER, id="longer than llama3's own"),
    pytest.param(["--context-length", "131072"], LLAMA_31, {}, None, id="as long as the model's"),
    pytest.param(["--context-length", "200000"], LLAMA_31, {"SGLANG_ALLOW_LONGER_CONTEXT": "1"}, None,
                 id="allowed by the environment"),
    pytest.param(["--context-length", "100000"], QWEN_YARN, {}, None, id="yarn factor scales the length"),
    pytest.param(["--context-length", "140000"], QWEN_YARN, {}, LONGER, id="past the scaled length"),
    pytest.param(["--context-length", "140000"], GEMMA_3, {}, LONGER, id="the text config's length"),
    pytest.param([], DEEPSEEK_V3, {}, None, id="helper under an if-expression's test"),
    pytest.param(["--quantize-and-serve"], LLAMA_31, {}, QUANTIZE_AND_SERVE, id="constructor method's check"),
    pytest.param(["--quantize-and-serve", "--quantization", "modelopt"], LLAMA_31, {}, None, id="ModelOpt given"),
]

# The checkpoint's quantization against `--quantization` and what the machine registers.
UNKNOWN_QUANTIZATION = "Unknown quantization method: {self.quantization}."
MISMATCH = "Checkpoint quantization ({quant_method}) differs from --quantization ({self.quantization})."
GPT_OSS = {"architectures": ["GptOssForCausalLM"], "max_position_embeddings": 131072,
           "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}}
QWEN_AWQ = {"architectures": ["Qwen2ForCausalLM"], "max_position_embeddings": 32768,
            "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
                                    "version": "gemm"}}
DEEPSEEK_FP8 = {**DEEPSEEK_V3, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                                                       "weight_block_size": [128, 128]}}
LLAMA_MODELOPT = {**LLAMA_31, "quantization_config": {"quant_algo": "FP8", "producer": {"name": "modelopt"}}}

# The checkpoint's quantization comes out of `_parse_quant_hf_config()` through a list built by
# `append` and a comprehension, and a registry class may claim it in a loop over the registry that
# calls each class's `override_quantization_method` (looked up along its bases): the walk loses
# `self.quantization` there, so `check` runs `_verify_quantization` over the launch's values.
QUANTIZATION_CASES = [
    pytest.param([], GPT_OSS, "H100", {}, None, id="mxfp4 checkpoint on CUDA"),
    pytest.param([], GPT_OSS, "cpu", {}, UNKNOWN_QUANTIZATION, id="mxfp4 checkpoint without CUDA or the CPU engine"),
    pytest.param([], GPT_OSS, "cpu-engine", {"SGLANG_USE_CPU_ENGINE": "1"}, None, id="mxfp4 checkpoint on the CPU engine"),
    pytest.param(["--quantization", "fp8"], GPT_OSS, "H100", {}, MISMATCH, id="fp8 asked of an mxfp4 checkpoint"),
    pytest.param(["--quantization", "MXFP4"], GPT_OSS, "H100", {}, None, id="the checkpoint's own, upper case"),
    pytest.param(["--quantization", "mxfp4"], LLAMA_31, "cpu", {}, UNKNOWN_QUANTIZATION, id="unregistered, no checkpoint quantization"),
    pytest.param(["--quantization", "mxfp4"], LLAMA_31, "H100", {}, None, id="registered, no checkpoint quantization"),
    pytest.param([], QWEN_AWQ, "H100", {}, None, id="awq claimed by awq_marlin on Ampere and later"),
    pytest.param(["--quantization", "awq"], QWEN_AWQ, "H100", {}, None, id="awq kept when asked for"),
    pytest.param(["--quantization", "fp8"], QWEN_AWQ, "H100", {}, MISMATCH, id="fp8 asked of an awq checkpoint"),
    pytest.param(["--quantization", "modelopt_fp4"], DEEPSEEK_FP8, "H100", {}, None, id="compatible requantization"),
    pytest.param(["--quantization", "mxfp4"], DEEPSEEK_FP8, "H100", {}, MISMATCH, id="mxfp4 asked of an fp8 checkpoint"),
    pytest.param([], LLAMA_MODELOPT, "H100", {}, None, id="modelopt checkpoint without quant_method"),
    pytest.param(["--quantization", "fp8"], LLAMA_MODELOPT, "H100", {}, MISMATCH, id="fp8 asked of a modelopt checkpoint"),
]


# A guard of the pipeline over the built config's quantization: `--quantization` as typed when the
# checkpoint has none, the checkpoint's own when none is typed (NemotronH's MoE runner choice in 0.5.23).
FAST_MOE = "--fast-moe runs only on quantized weights."
BUILT_QUANTIZATION_CASES = [
    pytest.param(["--fast-moe"], LLAMA_31, FAST_MOE, id="no quantization anywhere"),
    pytest.param(["--fast-moe", "--quantization", "fp8"], LLAMA_31, None, id="typed, the checkpoint has none"),
    pytest.param(["--fast-moe"], GPT_OSS, None, id="the checkpoint's own"),
    pytest.param(["--fast-moe", "--quantization", "MXFP4"], GPT_OSS, None, id="typed, the checkpoint's own"),
    pytest.param(["--fast-moe", "--quantization", "fp8"], QWEN_AWQ, MISMATCH, id="typed over another: refused first"),
]


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("model_config"), PACKAGE)


@pytest.mark.parametrize("argv, config, env, first", CASES)
def test_first_error_while_the_config_is_built(ruleset, tmp_path: Path, argv, config, env, first) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    report = check(ruleset, ["--model-path", str(tmp_path), *argv], env=env, platform=find_platform("H100"))
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, [(f.rule.message, f.certainty, f.unknown[:3])
                                                          for f in report.findings]


@pytest.mark.parametrize("argv, config, platform, env, first", QUANTIZATION_CASES)
def test_checkpoint_quantization(ruleset, tmp_path: Path, argv, config, platform, env, first) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    report = check(ruleset, ["--model-path", str(tmp_path), *argv], env=env, platform=find_platform(platform))
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, [(f.rule.message, f.certainty, f.unknown[:3])
                                                          for f in report.findings]


@pytest.mark.parametrize("argv, config, first", BUILT_QUANTIZATION_CASES)
def test_the_built_config_s_quantization_is_the_typed_one(ruleset, tmp_path: Path, argv, config, first) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    report = check(ruleset, ["--model-path", str(tmp_path), *argv], platform=find_platform("H100"))
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, [(f.rule.message, f.certainty, f.unknown[:3])
                                                          for f in report.findings]


def test_the_checks_are_rules_of_the_run(ruleset) -> None:
    rules = {r.message: r for r in ruleset.rules}
    for message in (LONGER, QUANTIZE_AND_SERVE, INDEX_HEAD):
        assert rules[message].reachable, message
    assert rules[LONGER].call_path[-2:] == ("sglang/srt/configs/model_config.py::ModelConfig.__init__",
                                            "sglang/srt/configs/model_config.py::ModelConfig._derive_context_length")


def test_another_checkpoints_config_stays_unknown(ruleset, tmp_path: Path) -> None:
    """The config.json read is the launch's own `--model-path`; with overrides of it, unknown."""
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_31), encoding="utf-8")
    overridden = check(ruleset, ["--model-path", str(tmp_path), "--context-length", "200000",
                                 "--json-model-override-args", '{"max_position_embeddings": 262144}'],
                       platform=find_platform("H100"))
    assert LONGER not in {f.rule.message for f in overridden.definite}
    elsewhere = check(ruleset, ["--model-path", "org/model", "--context-length", "200000"],
                      platform=find_platform("H100"), model=ModelFacts.from_architecture("LlamaForCausalLM"))
    assert LONGER in {f.rule.message for f in elsewhere.findings} and not elsewhere.definite


@pytest.mark.parametrize("argv, config, platform, filled", [
    (["--quantization", "fp8"], "GPT_OSS", "H100", "Checkpoint quantization (mxfp4) differs from --quantization (fp8)."),
    (["--quantization", "MXFP4"], "LLAMA_31", "cpu", "Unknown quantization method: mxfp4."),
    ([], "GPT_OSS", "cpu", "Unknown quantization method: mxfp4."),
])
def test_a_run_check_s_message_holds_the_values_where_it_stopped(ruleset, tmp_path: Path, argv, config, platform,
                                                                  filled) -> None:
    """`{quant_method}` and `{self.quantization}` as the method held them when it raised: lower-cased,
    taken from the checkpoint when no flag gives it."""
    (tmp_path / "config.json").write_text(json.dumps(globals()[config]), encoding="utf-8")
    report = check(ruleset, ["--model-path", str(tmp_path), *argv], platform=find_platform(platform))
    assert [f.message for f in report.definite][:1] == [filled]


def test_a_method_the_walk_loses_is_run_and_worded(ruleset) -> None:
    """The quantization checks read `self.quantization` after a loop rewrote it: their triggers run
    `_verify_quantization` (`raised_in(...)`), and the words say so without the term's source."""
    from extractor.core.formula import atoms
    from extractor.core.model import RUN_FUNCTION
    from extractor.products.check.words import Flags, atom_words

    rule = next(r for r in ruleset.rules if r.message == MISMATCH)
    runs = [a for a in atoms(rule.trigger) if a.term.text.startswith(RUN_FUNCTION + "(")]
    assert runs and all("ModelConfig._verify_quantization'" in a.term.text for a in runs)
    words = atom_words(runs[0], Flags(ruleset.flags))
    assert words.startswith("`ModelConfig._verify_quantization`, run over") and RUN_FUNCTION not in words


def test_a_run_check_s_page_says_it_in_words_on_every_call_path(ruleset) -> None:
    """The run term is the rule's own test even where two call paths hand the method other versions
    of a flag (`quantization__v1`, `quantization__v9`): the page says it once, in words."""
    from dataclasses import replace

    from extractor.core.formula import atoms
    from extractor.core.model import RUN_FUNCTION, And, Atom, Or
    from extractor.products.site.pages import page
    from extractor.products.check.words import Flags, split_condition

    rule = next(r for r in ruleset.rules if r.message == MISMATCH)
    run = next(a for a in atoms(rule.trigger) if a.term.text.startswith(RUN_FUNCTION + "("))
    other = Atom(replace(run.term, text=run.term.text.replace("quantization=", "quantization=(None or ") + ")",
                         name=run.term.name + " "))
    reach = next(a for a in atoms(rule.trigger) if a is not run)
    two_paths = replace(rule, trigger=Or((And((reach, run)), And((Atom(replace(reach.term, text="x", name="x")), other)))))
    own, _ = split_condition(two_paths)
    assert own == [run]
    text = page(two_paths, Flags(ruleset.flags), {"label": "fixture"}, {r.id: r for r in ruleset.rules})
    meaning = text.split("## What it means")[1].split("## Source")[0]
    assert "Rejected when `ModelConfig._verify_quantization`, run over" in meaning and RUN_FUNCTION not in meaning


@pytest.mark.parametrize("argv, config", [
    (["--quantization", "fp8"], GPT_OSS),
    (["--quantization", "mxfp4"], DEEPSEEK_FP8),
])
def test_a_run_check_is_fixed_through_the_flags_the_method_reads(ruleset, tmp_path: Path, argv, config) -> None:
    """Nothing read off a run term's condition edits a flag; the search over the command's own flags
    that the rule reads does, each fixed command checked with facts of its own (the launch's keep the
    run's answer for the flags it had: before, no fix was found)."""
    from extractor.logic.launch import parse_command
    from extractor.products.check.fixes import beyond_flags, checked_fixes
    from extractor.products.check.linter import launch_facts
    from extractor.products.check.words import by_function
    from extractor.products.check.words import Flags

    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    argv = ["--model-path", str(tmp_path), *argv]
    platform = find_platform("H100")
    report = check(ruleset, argv, platform=platform)
    rule = report.definite[0].rule
    assert rule.message == MISMATCH
    facts = launch_facts(parse_command(argv, ruleset.catalog), platform, None, None, ruleset.library, {}, ruleset.envs)
    fixes = checked_fixes(ruleset, rule, argv, Flags(ruleset.flags), by_function(ruleset.rules), facts=facts)
    assert "remove --quantization" in [f.text for f in fixes]
    for fix in fixes:
        assert not check(ruleset, list(fix.argv), platform=platform).definite, fix
    assert beyond_flags(ruleset, rule, argv, facts=facts) is None  # flags do avoid it: no such claim


def test_the_hugging_face_cache_is_found_where_huggingface_hub_looks(tmp_path: Path, monkeypatch) -> None:
    from extractor.logic.hub_cache import hub_cache_folder, hub_cached_config

    assert hub_cache_folder({"HF_HUB_CACHE": "/a", "HUGGINGFACE_HUB_CACHE": "/b", "HF_HOME": "/c"}) == Path("/a")
    assert hub_cache_folder({"HUGGINGFACE_HUB_CACHE": "/b", "HF_HOME": "/c"}) == Path("/b")
    assert hub_cache_folder({"HF_HOME": "/c", "XDG_CACHE_HOME": "/d"}) == Path("/c/hub")
    assert hub_cache_folder({"XDG_CACHE_HOME": "/d"}) == Path("/d/huggingface/hub")
    assert hub_cache_folder({}) == Path("~/.cache/huggingface/hub").expanduser()

    repo = tmp_path / "models--org--name"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("f" * 40 + "\n", encoding="utf-8")
    (repo / "snapshots" / ("f" * 40)).mkdir(parents=True)
    config = repo / "snapshots" / ("f" * 40) / "config.json"
    (repo / "blobs").mkdir()
    (repo / "blobs" / "e3b0c442").write_text("{}", encoding="utf-8")
    config.symlink_to(Path("..", "..", "blobs", "e3b0c442"))  # a snapshot's files link to the blobs
    env = {"HF_HUB_CACHE": str(tmp_path)}
    assert hub_cached_config("org/name", None, env) == config
    assert hub_cached_config("org/name", "f" * 40, env) == config  # a commit names its snapshot
    for model_id, revision in [("org/other", None), ("name", None), ("org/name/sub", None), ("../org", None),
                               ("org/name", "v1"), ("org/name", "../../refs/main"), ("org/name", "0" * 40)]:
        assert hub_cached_config(model_id, revision, env) is None, (model_id, revision)
    assert hub_cached_config("org/name", None, {**env, "SGLANG_USE_MODELSCOPE": "true"}) is None
    (repo / "refs" / "main").write_text("not a commit", encoding="utf-8")
    assert hub_cached_config("org/name", None, env) is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "org" / "name").mkdir(parents=True)  # a folder of that name here: a local path
    (repo / "refs" / "main").write_text("f" * 40, encoding="utf-8")
    assert hub_cached_config("org/name", None, env) is None
