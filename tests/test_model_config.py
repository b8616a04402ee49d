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

from extractor.logic.facts import ModelFacts, find_platform
from extractor.products.linter import check
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


def run_resolution_pipeline(server_args):
    try:
        hf_config = model_config_of(server_args).hf_config  # a first build whose errors are swallowed
    except Exception:
        hf_config = None
    model_config = model_config_of(server_args)  # built again there: it was not kept
''',
    "sglang/srt/configs/__init__.py": "",
    "sglang/srt/configs/model_config.py": '''
import copy
import json

from sglang.srt.arg_groups.overrides import resolving_view
from sglang.srt.environ import envs
from sglang.srt.utils.hf_transformers_utils import get_config, get_context_length, get_hf_text_config

_MODEL_CONFIG_FACTORIES = {}


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
                 quantize_and_serve=False):
        self.model_path = model_path
        self.quantization = quantization
        self.quantize_and_serve = quantize_and_serve
        self._validate_quantize_and_serve()
        self.model_override_args = json.loads(model_override_args)
        self.hf_config = copy.deepcopy(get_config(self.model_path, model_override_args=self.model_override_args))
        self.hf_text_config = get_hf_text_config(self.hf_config)
        self.index_head_dim = get_index_head_dim(self.hf_text_config) if is_dsa(self.hf_text_config) else None
        self._derive_context_length(context_length)

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
    "sglang/srt/utils/__init__.py": "",
    "sglang/srt/utils/common.py": '''
def human_readable_int(value):
    return int(value)
''',
    "sglang/srt/utils/hf_transformers_utils.py": '''
"""A shim: everything moved to the package."""
from sglang.srt.utils.hf_transformers import *  # noqa: F401, F403
''',
    "sglang/srt/utils/hf_transformers/__init__.py": '''
from .common import get_context_length, get_hf_text_config
from .config import get_config
''',
    "sglang/srt/utils/hf_transformers/config.py": '''
from transformers import AutoConfig


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
