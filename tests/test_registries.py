"""Registries the package fills as it is imported, read as they stand once it is: a list that a
registering function appends its one argument to, called at module level by the modules imported
by then (as 0.5.18-0.5.23's linear-attention registry is filled by `configs/gigachat35.py`, which
`configs/__init__.py` imports). Its entries are instances of a dataclass; an `isinstance` of the
model's config against an entry's config class is decided by the model_type the class declares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.logic.platforms import find_platform
from extractor.products.check.linter import check

from .packages import package_ruleset
from .test_model_config import PACKAGE

REGISTRY = '''
"""Registry for hybrid models.

External models register themselves:

    register_hybrid_model(HybridModelSpec(config_class=MyConfig, arch_names=["MyForCausalLM"]))
"""
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

logger = logging.getLogger(__name__)


@dataclass
class HybridModelSpec:
    config_class: type
    arch_names: list[str] = field(default_factory=list)
    uses_mamba_cache: bool = True
    unwrap_text_config: bool = False
    config_predicate: Callable[[Any], bool] | None = None


_HYBRID_MODEL_REGISTRY: list[HybridModelSpec] = []


def register_hybrid_model(spec: HybridModelSpec) -> None:
    _HYBRID_MODEL_REGISTRY.append(spec)
    logger.debug("registered %s", spec.arch_names)


def get_hybrid_spec_by_arch(arch_name: str) -> Optional[HybridModelSpec]:
    for spec in _HYBRID_MODEL_REGISTRY:
        if arch_name in spec.arch_names:
            return spec
    return None


def get_hybrid_config(hf_config: Any):
    for spec in _HYBRID_MODEL_REGISTRY:
        config = hf_config.get_text_config() if spec.unwrap_text_config else hf_config
        if isinstance(config, spec.config_class) and (spec.config_predicate is None or spec.config_predicate(config)):
            return spec, config
    return None


def get_hybrid_spec(hf_config: Any) -> Optional[HybridModelSpec]:
    spec = get_hybrid_spec_by_arch(hf_config.architectures[0])
    if spec is not None:
        return spec
    result = get_hybrid_config(hf_config)
    return result[0] if result is not None else None
'''

# A config class of the package that registers itself by its architectures, and one found only by
# its config class (no architecture listed), as registrations are written after the class.
HYBRID = '''
class PretrainedConfig:
    pass


class GatedConfig(PretrainedConfig):
    model_type = "gated_hybrid"


class KeyedConfig(PretrainedConfig):
    model_type = "keyed_hybrid"


from sglang.srt.configs.hybrid_model_registry import HybridModelSpec, register_hybrid_model  # noqa: E402

register_hybrid_model(HybridModelSpec(config_class=GatedConfig, arch_names=["GatedForCausalLM"]))
register_hybrid_model(HybridModelSpec(KeyedConfig, uses_mamba_cache=True))
'''

HOOK = '''
from sglang.srt.arg_groups.model_override_base import model_config_of
from sglang.srt.configs.hybrid_model_registry import get_hybrid_spec


def check_hybrid_cache(server_args):
    spec = get_hybrid_spec(model_config_of(server_args).hf_config)
    if spec is not None and spec.uses_mamba_cache and server_args.device == "cpu":
        raise ValueError("A hybrid model's Mamba cache needs an accelerator.")
'''

MAMBA = "A hybrid model's Mamba cache needs an accelerator."


def _package() -> dict[str, str]:
    files = dict(PACKAGE)
    files["sglang/srt/server_args.py"] = files["sglang/srt/server_args.py"].replace(
        '    model_path: str = "m"\n', '    model_path: str = "m"\n    device: str = "cuda"\n').replace(
        '        parser.add_argument("--model-path"',
        '        parser.add_argument("--device", type=str, default=ServerArgs.device)\n'
        '        parser.add_argument("--model-path"')
    files["sglang/srt/arg_groups/pipeline.py"] += (
        "    from sglang.srt.arg_groups.hybrid_hook import check_hybrid_cache\n\n"
        "    check_hybrid_cache(server_args)\n")
    files["sglang/srt/arg_groups/hybrid_hook.py"] = HOOK
    files["sglang/srt/configs/__init__.py"] = "from sglang.srt.configs.hybrid import GatedConfig, KeyedConfig\n"
    files["sglang/srt/configs/hybrid.py"] = HYBRID
    files["sglang/srt/configs/hybrid_model_registry.py"] = REGISTRY
    return files


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("registries"), _package())


@pytest.mark.parametrize("config, device, certainty", [
    pytest.param({"architectures": ["GatedForCausalLM"], "model_type": "gated_hybrid"}, "cpu", "definite", id="by architecture"),
    pytest.param({"architectures": ["KeyedForCausalLM"], "model_type": "keyed_hybrid"}, "cpu", "definite", id="by config class"),
    pytest.param({"architectures": ["KeyedForCausalLM"], "model_type": "keyed_hybrid"}, "cuda", None, id="on an accelerator"),
    pytest.param({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, "cpu", None, id="not registered"),
    pytest.param({"architectures": ["LlamaForCausalLM"]}, "cpu", "possible", id="no model_type to test the class by"),
])
def test_a_registry_filled_at_import_is_read_as_it_stands(ruleset, tmp_path: Path, config, device, certainty) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 4096, **config}), encoding="utf-8")
    report = check(ruleset, ["--model-path", str(tmp_path), "--device", device], platform=find_platform("H100"))
    found = {f.rule.message: f.certainty for f in report.findings}
    assert found.get(MAMBA) == certainty, [(f.rule.message, f.certainty, f.unknown[:3]) for f in report.findings]


def test_the_registry_holds_what_the_registrations_append(ruleset) -> None:
    definitions = {h.key: h for h in ruleset.helpers.helpers}
    registry = definitions["sglang.srt.configs.hybrid_model_registry:_HYBRID_MODEL_REGISTRY"]
    assert registry.source.splitlines()[1:] == [
        "_HYBRID_MODEL_REGISTRY.append(HybridModelSpec(config_class=GatedConfig, arch_names=['GatedForCausalLM']))",
        "_HYBRID_MODEL_REGISTRY.append(HybridModelSpec(KeyedConfig, uses_mamba_cache=True))"]
    assert dict(registry.names)["KeyedConfig"] == "class:sglang.srt.configs.hybrid.KeyedConfig"
    assert "'model_type': 'keyed_hybrid'" in definitions["mro:sglang.srt.configs.hybrid.KeyedConfig"].source


def test_a_registration_made_while_the_launch_runs_leaves_the_registry_unknown(tmp_path: Path) -> None:
    """A registering function called inside a function: what the registry holds depends on what ran."""
    files = _package()
    files["sglang/srt/configs/hybrid.py"] += "\n\ndef late():\n    register_hybrid_model(HybridModelSpec(GatedConfig))\n"
    ruleset = package_ruleset(tmp_path, files)
    assert not any(h.key.endswith(":_HYBRID_MODEL_REGISTRY") for h in ruleset.helpers.helpers)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}),
                                                encoding="utf-8")
    report = check(ruleset, ["--model-path", str(tmp_path / "m"), "--device", "cpu"], platform=find_platform("H100"))
    assert {f.rule.message: f.certainty for f in report.findings}.get(MAMBA) == "possible"


def test_a_registry_its_decorator_fills_is_no_list_of_registrations(tmp_path: Path) -> None:
    """`@register_hybrid_model` on a class: not a call statement, so the registry is not read as one."""
    files = _package()
    files["sglang/srt/configs/hybrid.py"] += "\n\n@register_hybrid_model\nclass Decorated:\n    pass\n"
    ruleset = package_ruleset(tmp_path, files)
    assert not any(h.key.endswith(":_HYBRID_MODEL_REGISTRY") for h in ruleset.helpers.helpers)
