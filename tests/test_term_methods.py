"""A term that calls a method of an enum of the package: the class the term names and the methods it
calls are kept with the helpers, the enum's members are read by name, and a term over a field the run
resolved to one of a few values is read on each of them.

The made-up package imitates the shapes of SGLang 0.5.23 (names and messages are ours): an
`Algorithm(Enum)` whose classmethod `from_string` looks its member up as `cls[name.upper()]` (a KeyError for another name); a
method `platform_worker()` that imports `current_platform` where it runs and answers None unless
the platform is out of tree; a reason function a resolution step reads (`_maybe_disable_adaptive`),
which turns `--adaptive` off when the platform serves the algorithm with a worker of its own; a
guard after it that refuses LoRA with `--adaptive`. The algorithm is rewritten first to MTP when a
draft model folder exists, a file check `check` cannot decide without `--local`: the term reads
the algorithm as resolved, one of two members, and both answer the same.
"""

from __future__ import annotations

import pytest

from extractor.analysis.helpers import METHOD_PREFIX, called_names
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


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    algorithm: Optional[str] = None
    draft_path: Optional[str] = None
    adaptive: bool = False
    enable_lora: bool = False

    def __post_init__(self):
        """Resolution runs in resolve_once."""

    def resolve_once(self):
        from sglang.srt.arg_groups.pipeline import run_resolution_pipeline

        run_resolution_pipeline(self)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--algorithm", type=str, default=ServerArgs.algorithm)
        parser.add_argument("--draft-path", type=str, default=ServerArgs.draft_path)
        parser.add_argument("--adaptive", action="store_true")
        parser.add_argument("--enable-lora", action="store_true")
''',
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/overrides.py": OVERRIDES,
    "sglang/srt/arg_groups/pipeline.py": '''
import os

from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view
from sglang.srt.environ import envs
from sglang.srt.speculative.info import Algorithm  # noqa: F401 - as 0.5.23's modules name it
from sglang.srt.speculative.reasons import unsupported_reason


def run_resolution_pipeline(server_args):
    cfg = resolving_view(server_args)
    if cfg.algorithm == "EAGLE" and cfg.draft_path is not None and os.path.isdir(cfg.draft_path):
        declare_resolution(server_args, "mtp", algorithm="MTP")
    _maybe_disable_adaptive(server_args)
    if cfg.enable_lora and (cfg.adaptive or envs.SGLANG_PLAN_STREAM.get()):
        raise ValueError("LoRA does not support --adaptive.")


def _maybe_disable_adaptive(server_args):
    reason = unsupported_reason(server_args)
    if reason is not None:
        declare_resolution(server_args, "_maybe_disable_adaptive", adaptive=False)
''',
    "sglang/srt/speculative/__init__.py": "",
    "sglang/srt/speculative/info.py": '''
from enum import Enum, auto


class Algorithm(Enum):
    EAGLE = auto()
    MTP = auto()
    NGRAM = auto()
    NONE = auto()

    @classmethod
    def from_string(cls, name):
        if name is None:
            return cls.NONE
        return cls[name.upper()]

    def is_speculative(self):
        return self != Algorithm.NONE

    def platform_worker(self):
        from sglang.srt.platforms import current_platform

        if not current_platform.is_out_of_tree():
            return None
        return current_platform.get_worker(self.name)
''',
    "sglang/srt/speculative/reasons.py": '''
from sglang.srt.arg_groups.overrides import resolving_view
from sglang.srt.speculative.info import Algorithm


def unsupported_reason(server_args):
    cfg = resolving_view(server_args)
    if cfg.algorithm is None:
        return "no algorithm"
    worker = Algorithm.from_string(cfg.algorithm).platform_worker()
    if worker is not None:
        return "the platform's own worker"
    return None
''',
    "sglang/srt/environ.py": '''
class EnvBool:
    def __init__(self, default):
        self.default = default


class Envs:
    SGLANG_PLAN_STREAM = EnvBool(False)


envs = Envs()
''',
    "sglang/srt/platforms/__init__.py": '''
def __getattr__(name):
    if name == "current_platform":
        from sglang.srt.platforms.detect import detect

        return detect()
    raise AttributeError(name)
''',
}

LORA_ADAPTIVE = "LoRA does not support --adaptive."


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("term-methods"), PACKAGE)


def test_a_term_names_the_methods_and_classes_it_calls() -> None:
    names = called_names("Algorithm.from_string(algorithm).platform_worker() is None")
    assert {"Algorithm", METHOD_PREFIX + "from_string", METHOD_PREFIX + "platform_worker"} <= names


def test_the_class_a_term_names_is_kept_with_the_methods_it_calls(ruleset) -> None:
    library = ruleset.helpers
    keys = {helper.key for helper in library.helpers}
    assert "sglang.srt.speculative.info:Algorithm.platform_worker" in keys
    assert "sglang.srt.speculative.info:Algorithm.from_string" in keys
    assert dict(library.names).get("Algorithm") == "class:sglang.srt.speculative.info.Algorithm"


@pytest.mark.parametrize("argv, platform, first", [
    # The platform is in tree: no worker of its own, --adaptive stays on, LoRA refuses it.
    pytest.param(["--algorithm", "eagle", "--adaptive", "--enable-lora"], "H100", LORA_ADAPTIVE, id="in tree"),
    # The draft folder decides EAGLE or MTP (a file check): both members answer None.
    pytest.param(["--algorithm", "EAGLE", "--draft-path", "/d", "--adaptive", "--enable-lora"], "H100", LORA_ADAPTIVE,
                 id="one of two members"),
    # No algorithm: the reason turns --adaptive off first.
    pytest.param(["--adaptive", "--enable-lora"], "H100", None, id="turned off"),
    pytest.param(["--algorithm", "eagle", "--adaptive"], "H100", None, id="no lora"),
])
def test_an_enum_method_is_read_over_the_platform(ruleset, argv, platform, first) -> None:
    report = check(ruleset, ["--model-path", "m", *argv], platform=find_platform(platform))
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, [(f.rule.message, f.certainty, f.unknown) for f in report.findings]


def test_without_a_profile_the_platform_worker_is_unknown(ruleset) -> None:
    report = check(ruleset, ["--model-path", "m", "--algorithm", "eagle", "--adaptive", "--enable-lora"])
    found = {f.rule.message: f.certainty for f in report.findings}
    assert found.get(LORA_ADAPTIVE) == "possible"


def test_a_name_no_member_has_is_unknown(ruleset) -> None:
    report = check(ruleset, ["--model-path", "m", "--algorithm", "bogus", "--adaptive", "--enable-lora"],
                   platform=find_platform("H100"))
    found = {f.rule.message: f.certainty for f in report.findings}
    assert found.get(LORA_ADAPTIVE) == "possible"



def test_a_fix_unsets_only_what_the_environment_sets(ruleset) -> None:
    """The guard also reads a variable this launch does not set: nothing to unset, and nothing to say."""
    from extractor.products.check.fixes import working_fixes
    from extractor.products.check.words import Flags, by_function

    argv = ["--model-path", "m", "--algorithm", "eagle", "--adaptive", "--enable-lora"]
    report = check(ruleset, argv, platform=find_platform("H100"))
    assert report.definite[0].rule.message == LORA_ADAPTIVE
    found = working_fixes(ruleset, report.definite[0].rule, argv, Flags(ruleset.flags), by_function(ruleset.rules),
                          facts=report.evaluator.context.facts)
    assert "remove --adaptive" in found and not any("unset" in fix for fix in found), found
