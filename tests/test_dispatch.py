"""Triggers through the shapes 0.5.23 validates with beyond plain hooks: a method dispatched on an Enum
parsed from a flag, helpers handed a field value in modules the layout does not read, constants of
those modules and of the ServerArgs class, platform facts of helpers, paths on the launch host.

The made-up package imitates the shapes only (names and messages are ours). Each case is a launch
command with the first error the fixture raises on it, worked out by reading it as Python runs it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from extractor.core.formula import render
from extractor.logic.launch_host import LaunchHost
from extractor.logic.platforms import find_platform, with_device_memory
from extractor.products.extraction.extraction import extract
from extractor.products.check.linter import check
from extractor.products.reuse.rulesets import ruleset_of
from extractor.sources.trees import path_tree

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    LIMITED_MODES = ("fast", "safe")

    model_path: str = "m"
    device: str = "cuda"
    mode: str = "fast"
    speculative_algorithm: Optional[str] = None
    chunked_prefill_size: Optional[int] = None
    enable_pdmux: bool = False
    served_model_name: Optional[str] = None
    ssl_keyfile: Optional[str] = None

    def __post_init__(self):
        """Resolution runs in resolve_once."""

    def resolve_once(self):
        from sglang.srt.arg_groups.pipeline import run_resolution_pipeline

        run_resolution_pipeline(self)

    def check_server_args(self):
        from sglang.srt.arg_groups.validation_hook import check_server_args

        check_server_args(self)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--device", type=str, default=ServerArgs.device)
        parser.add_argument("--mode", type=str, default=ServerArgs.mode)
        parser.add_argument("--speculative-algorithm", type=str, default=ServerArgs.speculative_algorithm)
        parser.add_argument("--chunked-prefill-size", type=int, default=ServerArgs.chunked_prefill_size)
        parser.add_argument("--enable-pdmux", action="store_true")
        parser.add_argument("--served-model-name", type=str, default=ServerArgs.served_model_name)
        parser.add_argument("--ssl-keyfile", type=str, default=ServerArgs.ssl_keyfile)
''',
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/overrides.py": '''
def resolving_view(server_args):
    return server_args


def declare_resolution(server_args, source, **fields):
    stash = getattr(server_args, "_resolved_overrides", None)
    if stash is None:
        stash = []
        server_args._resolved_overrides = stash
    stash.append((source, dict(fields)))
''',
    "sglang/srt/arg_groups/speculative_hook.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view


def handle_speculative(server_args):
    cfg = resolving_view(server_args)
    if cfg.speculative_algorithm is not None:
        declare_resolution(server_args, "spec", speculative_algorithm=cfg.speculative_algorithm.upper())
    if cfg.speculative_algorithm == "NEXTN":
        declare_resolution(server_args, "spec", speculative_algorithm="EAGLE")

    algo = None
    if cfg.speculative_algorithm is not None:
        from sglang.srt.speculative.spec_info import Algorithm

        algo = Algorithm.from_string(cfg.speculative_algorithm)
    if algo is not None:
        algo.handle_server_args(server_args)
    if cfg.speculative_algorithm is not None:
        from sglang.srt.speculative.spec_info import Algorithm, CustomAlgo

        parsed = Algorithm.from_string(cfg.speculative_algorithm)
        if isinstance(parsed, CustomAlgo) and cfg.mode == "fast":
            raise ValueError("A registered algorithm runs in safe mode only.")


def _handle_spark(server_args):
    cfg = resolving_view(server_args)
    if not cfg.device.startswith(("cuda", "npu")):
        raise ValueError("SPARK runs on CUDA or NPU only.")


def _handle_eagle(server_args):
    cfg = resolving_view(server_args)
    if cfg.mode == "safe":
        raise ValueError("EAGLE is not validated in safe mode.")
''',
    "sglang/srt/speculative/__init__.py": "",
    "sglang/srt/speculative/spec_info.py": '''
from enum import Enum, auto


class CustomAlgo:
    """An algorithm a plugin registers under a name of its own."""


class Algorithm(Enum):
    EAGLE = auto()
    SPARK = auto()
    NONE = auto()

    @classmethod
    def from_string(cls, name):
        if name is None:
            return cls.NONE
        upper = name.upper()
        return cls[upper]

    def is_eagle(self):
        return self == Algorithm.EAGLE

    def is_spark(self):
        return self == Algorithm.SPARK

    def handle_server_args(self, server_args):
        from sglang.srt.arg_groups.speculative_hook import _handle_eagle, _handle_spark

        if self.is_spark():
            _handle_spark(server_args)
        elif self.is_eagle():
            _handle_eagle(server_args)
''',
    "sglang/srt/utils/__init__.py": "",
    "sglang/srt/utils/common.py": '''
import re

RESERVED_NAMES = frozenset({"default", "all"})


def parse_connector_type(url):
    m = re.match(r"(.+)://(.*)", url)
    if m is None:
        return ""
    return m.group(1)


def is_reserved_name(name):
    return name in RESERVED_NAMES


def get_device_memory_capacity(device=None):
    if device == "cpu":
        return read_meminfo()
    return None
''',
    "sglang/srt/arg_groups/memory_hook.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view
from sglang.srt.utils.common import get_device_memory_capacity, parse_connector_type


def handle_chunked_prefill(server_args):
    cfg = resolving_view(server_args)
    if parse_connector_type(cfg.model_path) == "instance":
        return
    if cfg.chunked_prefill_size is None:
        gpu_mem = get_device_memory_capacity(cfg.device)
        if gpu_mem is not None and gpu_mem < 20 * 1024:
            declare_resolution(server_args, "memory", chunked_prefill_size=-1)
        else:
            declare_resolution(server_args, "memory", chunked_prefill_size=8192)
''',
    "sglang/srt/arg_groups/pipeline.py": '''
from sglang.srt.arg_groups.memory_hook import handle_chunked_prefill
from sglang.srt.arg_groups.speculative_hook import handle_speculative


def run_resolution_pipeline(server_args):
    handle_speculative(server_args)
    handle_chunked_prefill(server_args)
''',
    "sglang/srt/arg_groups/validation_hook.py": '''
import os

from sglang.srt.arg_groups.overrides import resolving_view
from sglang.srt.utils.common import is_reserved_name


def check_server_args(server_args):
    cfg = resolving_view(server_args)
    if cfg.mode not in server_args.LIMITED_MODES:
        raise ValueError("--mode must be fast or safe.")
    if cfg.served_model_name is not None and is_reserved_name(cfg.served_model_name):
        raise ValueError("--served-model-name is a reserved name.")
    if cfg.enable_pdmux and cfg.chunked_prefill_size is not None:
        assert cfg.chunked_prefill_size == -1, "PD-Multiplexing needs chunked prefill off."
    if cfg.ssl_keyfile and not os.path.isfile(cfg.ssl_keyfile):
        raise ValueError("SSL key file not found.")
    try:
        if cfg.mode == "fast" and cfg.chunked_prefill_size == 0:
            raise ValueError("no chunk size in fast mode.")
    except ValueError as exc:
        raise AssertionError(str(exc)) from exc
''',
}

SPARK_DEVICE = "SPARK runs on CUDA or NPU only."
EAGLE_SAFE = "EAGLE is not validated in safe mode."
MODE = "--mode must be fast or safe."
RESERVED = "--served-model-name is a reserved name."
PDMUX = "PD-Multiplexing needs chunked prefill off."
KEYFILE = "SSL key file not found."
NO_CHUNK = "no chunk size in fast mode."

CPU = with_device_memory(find_platform("cpu"), 16 * 1024)

# (launch command, the first error the fixture raises on it, or None)
CASES = [
    pytest.param([], None, id="defaults"),
    # The algorithm is parsed into an Enum member whose methods pick the handler.
    pytest.param(["--speculative-algorithm", "spark", "--device", "cpu"], SPARK_DEVICE, id="dispatched on the member"),
    pytest.param(["--speculative-algorithm", "SPARK"], None, id="member whose handler passes"),
    pytest.param(["--speculative-algorithm", "nextn", "--mode", "safe"], EAGLE_SAFE, id="alias mapped, then dispatched"),
    pytest.param(["--speculative-algorithm", "spark", "--mode", "safe"], None, id="other member's handler"),
    # A class constant read through the record.
    pytest.param(["--mode", "quick"], MODE, id="ServerArgs class constant"),
    # A helper handed a field value, from a module the layout does not read, with its module's constant.
    pytest.param(["--served-model-name", "all"], RESERVED, id="helper's module constant"),
    pytest.param(["--served-model-name", "llama"], None, id="helper's module constant, not in it"),
    # The default comes from a platform fact read through a helper (16 GiB here: chunked prefill off).
    pytest.param(["--enable-pdmux"], None, id="default from the device memory"),
    pytest.param(["--enable-pdmux", "--chunked-prefill-size", "4096"], PDMUX, id="typed value"),
    # A raise caught in its own function and raised again as another exception.
    pytest.param(["--chunked-prefill-size", "0"], NO_CHUNK, id="caught and raised again"),
    pytest.param(["--chunked-prefill-size", "0", "--mode", "safe"], None, id="caught raise that does not fire"),
]


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dispatch")
    for name, text in PACKAGE.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    tree = path_tree(folder)
    return ruleset_of(extract(tree), tree)


@pytest.mark.parametrize("argv, first", CASES)
def test_first_error_is_what_the_fixture_raises(ruleset, argv, first) -> None:
    report = check(ruleset, ["--model-path", "m", *argv], platform=CPU)
    assert not report.argument_errors
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, definite
    assert not [f.rule.message for f in report.findings if f.certainty == "possible"]


def test_a_caught_raise_is_reported_where_it_leaves(ruleset) -> None:
    """`except ValueError as exc: raise AssertionError(str(exc))`: the launch fails with an
    AssertionError at the handler's raise, saying what the caught raise said."""
    raised = [r for r in ruleset.rules if r.message == NO_CHUNK]
    (left,) = [r for r in raised if r.exception == "AssertionError"]
    (caught,) = [r for r in raised if r.exception == "ValueError"]
    assert render(caught.condition) == "False"  # never leaves the try as a ValueError
    source = PACKAGE["sglang/srt/arg_groups/validation_hook.py"]
    lines = textwrap.dedent(source).splitlines()
    assert "raise AssertionError" in lines[left.location.line - 1]


def test_the_dispatch_reads_as_the_flag(ruleset) -> None:
    rule = next(r for r in ruleset.rules if r.message == SPARK_DEVICE)
    text = render(rule.trigger)
    assert "speculative_algorithm" in text
    assert "is_spark" not in text and "algo is" not in text and "cls[" not in text, text


def test_a_platform_fact_of_a_helper_stays_a_fact(ruleset) -> None:
    """`get_device_memory_capacity(cfg.device)` is what `--device-memory` and the profiles answer: it is
    not read through (its body would ask the running machine); `parse_connector_type(cfg.model_path)`
    is, so a URL's scheme is known from the flag."""
    argv = ["--model-path", "m", "--enable-pdmux"]
    unknown = check(ruleset, argv)
    (finding,) = [f for f in unknown.findings if f.rule.message == PDMUX]
    assert finding.certainty == "possible" and "platform" in finding.needs
    large = with_device_memory(find_platform("cpu"), 64 * 1024)
    assert [f.rule.message for f in check(ruleset, argv, platform=large).definite] == [PDMUX]
    skipped = check(ruleset, ["--model-path", "instance://x", "--enable-pdmux"], platform=large)
    assert not skipped.findings


def test_paths_are_decided_on_the_launch_host(ruleset, tmp_path: Path) -> None:
    (tmp_path / "key.pem").write_text("k", encoding="utf-8")
    argv = ["--model-path", "m", "--ssl-keyfile", "key.pem"]
    elsewhere = check(ruleset, argv, platform=CPU)
    (finding,) = [f for f in elsewhere.findings if f.rule.message == KEYFILE]
    assert finding.certainty == "possible" and finding.needs == ("files",)
    assert not check(ruleset, argv, platform=CPU, host=LaunchHost(tmp_path)).findings
    missing = check(ruleset, ["--model-path", "m", "--ssl-keyfile", "nope.pem"], platform=CPU, host=LaunchHost(tmp_path))
    assert [f.rule.message for f in missing.definite] == [KEYFILE]


def test_a_member_name_parses_to_no_registered_class(ruleset) -> None:
    """`isinstance(Algorithm.from_string(x), CustomAlgo)`: a member's name parses to the member, never to
    another class's instance; another name may be a registered algorithm (not decided)."""
    custom = "A registered algorithm runs in safe mode only."
    member = check(ruleset, ["--model-path", "m", "--speculative-algorithm", "SPARK", "--device", "npu"])
    assert custom not in {f.rule.message for f in member.findings}
    other = check(ruleset, ["--model-path", "m", "--speculative-algorithm", "MINE", "--device", "npu"])
    assert custom in {f.rule.message for f in other.findings if f.certainty == "possible"}
