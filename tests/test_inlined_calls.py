"""A check inside a helper the run reaches, over a config built by an inlined factory.

The made-up package imitates 0.5.10-0.5.20's `DllmConfig.from_server_args` (names and messages are
ours): it builds `ModelConfig.from_server_args(server_args, model_path=...)`, a one-`return` factory
whose left-out parameters (`is_draft_model=False`, `**kwargs`) its returned `ModelConfig(...)` reads,
and raises for an architecture missing from its table. The trigger holds the factory's expression
inlined: the left-out parameters read as their defaults, so `check` builds the launch's config from
it and decides the architecture test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.logic.platforms import find_platform
from extractor.products.check.linter import check
from tests.packages import package_ruleset

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
from typing import Optional

from sglang.srt.dllm.config import DiffusionConfig


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    diffusion_algorithm: Optional[str] = None
    quantization: Optional[str] = None
    draft_quantization: Optional[str] = None
    json_model_override_args: str = "{}"

    def __post_init__(self):
        self._handle_diffusion()

    def _handle_diffusion(self):
        if self.diffusion_algorithm is not None:
            DiffusionConfig.from_server_args(self)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--diffusion-algorithm", type=str, default=ServerArgs.diffusion_algorithm)
        parser.add_argument("--quantization", type=str, default=ServerArgs.quantization)
        parser.add_argument("--draft-quantization", type=str, default=ServerArgs.draft_quantization)
        parser.add_argument("--json-model-override-args", type=str, default=ServerArgs.json_model_override_args)
''',
    "sglang/srt/dllm/__init__.py": "",
    "sglang/srt/dllm/config.py": '''
from sglang.srt.configs.model_config import ModelConfig


class DiffusionConfig:
    def __init__(self, block_size):
        self.block_size = block_size

    @staticmethod
    def from_server_args(server_args):
        if server_args.diffusion_algorithm is None:
            return None
        model_config = ModelConfig.from_server_args(server_args, model_path=server_args.model_path)
        BLOCKS = {"DiffusionMoeLM": {"block_size": 32}, "BlockDiffusionLM": {"block_size": 4}}
        arch = model_config.hf_config.architectures[0]
        if arch in BLOCKS:
            block_size = BLOCKS[arch]["block_size"]
        else:
            raise RuntimeError(f"Not a diffusion model: {arch}")
        return DiffusionConfig(block_size)
''',
    "sglang/srt/configs/__init__.py": "",
    "sglang/srt/configs/model_config.py": '''
import json

from sglang.srt.utils.hf_transformers_utils import get_config


class ModelConfig:
    def __init__(self, model_path, model_override_args="{}", quantization=None, is_draft_model=False, **kwargs):
        self.model_path = model_path
        self.is_draft_model = is_draft_model
        self.quantization = quantization
        self.hf_config = get_config(model_path, model_override_args=json.loads(model_override_args))

    @staticmethod
    def from_server_args(server_args, model_path=None, is_draft_model=False, **kwargs):
        quantization = server_args.draft_quantization if is_draft_model else server_args.quantization
        return ModelConfig(
            model_path=model_path or server_args.model_path,
            model_override_args=server_args.json_model_override_args,
            quantization=quantization,
            is_draft_model=is_draft_model,
            **kwargs,
        )
''',
    "sglang/srt/utils/__init__.py": "",
    "sglang/srt/utils/hf_transformers_utils.py": '''
from transformers import AutoConfig


def get_config(model, model_override_args=None):
    config = AutoConfig.from_pretrained(model)
    if model_override_args:
        config.update(model_override_args)
    return config
''',
}

NOT_DIFFUSION = "Not a diffusion model: {arch}"


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("inlined"), PACKAGE)


@pytest.mark.parametrize("argv, architecture, first", [
    (["--diffusion-algorithm", "LowConfidence"], "Qwen3ForCausalLM", NOT_DIFFUSION),
    (["--diffusion-algorithm", "LowConfidence"], "DiffusionMoeLM", None),
    ([], "Qwen3ForCausalLM", None),
    (["--diffusion-algorithm", "LowConfidence", "--json-model-override-args",
      '{"architectures": ["BlockDiffusionLM"]}'], "Qwen3ForCausalLM", None),
])
def test_a_check_over_an_inlined_factory_s_config(ruleset, tmp_path: Path, argv, architecture, first) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"architectures": [architecture]}), encoding="utf-8")
    report = check(ruleset, ["--model-path", str(tmp_path), *argv], platform=find_platform("H100"))
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, [(f.rule.message, f.certainty, f.unknown[:3])
                                                          for f in report.findings]


def test_left_out_parameters_read_as_their_defaults(ruleset) -> None:
    """The inlined expression names no parameter the call left out: `is_draft_model` is `False`."""
    from extractor.core.formula import atoms

    rule = next(r for r in ruleset.rules if r.message == NOT_DIFFUSION)
    texts = " ".join(a.term.text for a in atoms(rule.effective))
    assert "ModelConfig(" in texts and "is_draft_model=False" in texts and "**({})" in texts, texts
