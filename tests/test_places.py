"""A guard the run reaches at several places: a launch stops at the first place where it fires.

The made-up package imitates the shape of SGLang 0.5.20's InfiniBand check (names and messages are
ours): one validation helper called by an elastic-EP step early in the pipeline and by an
encoder-disaggregation step late in it, with a speculative-decoding guard between the two. A launch
that reaches the helper only through the late step stops at the speculative guard first.
"""

from __future__ import annotations

import json

import pytest

from extractor.core.serialize import rule_from_json, rule_json
from extractor.products.check.linter import check
from extractor.products.check.report import report_json
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
    elastic_ep: bool = False
    encoder_only: bool = False
    ib_device: Optional[str] = None
    draft_path: Optional[str] = None
    speculative: bool = False

    def __post_init__(self):
        """Resolution runs in resolve_once."""

    def resolve_once(self):
        from sglang.srt.arg_groups.pipeline import run_resolution_pipeline

        run_resolution_pipeline(self)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--elastic-ep", action="store_true")
        parser.add_argument("--encoder-only", action="store_true")
        parser.add_argument("--ib-device", type=str, default=ServerArgs.ib_device)
        parser.add_argument("--draft-path", type=str, default=ServerArgs.draft_path)
        parser.add_argument("--speculative", action="store_true")
''',
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/overrides.py": OVERRIDES,
    "sglang/srt/arg_groups/pipeline.py": '''
from sglang.srt.arg_groups.overrides import resolving_view


def run_resolution_pipeline(server_args):
    handle_elastic(server_args)
    handle_speculative(server_args)
    handle_encoder(server_args)


def _validate_ib(server_args):
    cfg = resolving_view(server_args)
    if cfg.ib_device is not None and "," in cfg.ib_device:
        raise ValueError("One InfiniBand device only.")


def handle_elastic(server_args):
    if resolving_view(server_args).elastic_ep:
        _validate_ib(server_args)


def handle_speculative(server_args):
    cfg = resolving_view(server_args)
    if cfg.speculative and cfg.draft_path is None:
        raise ValueError("Speculative decoding needs --draft-path.")


def handle_encoder(server_args):
    if resolving_view(server_args).encoder_only:
        _validate_ib(server_args)
''',
}

IB = "One InfiniBand device only."
SPECULATIVE = "Speculative decoding needs --draft-path."


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("places"), PACKAGE)


def _rule(ruleset, message):
    return next(r for r in ruleset.rules if r.message == message)


def test_a_guard_two_steps_call_has_both_places(ruleset) -> None:
    ib, speculative = _rule(ruleset, IB), _rule(ruleset, SPECULATIVE)
    assert [order for order, _ in ib.places][0] == ib.order < speculative.order < ib.places[1][0]
    assert not speculative.places  # one place: none kept
    assert rule_from_json(json.loads(json.dumps(rule_json(ib)))).places == ib.places


@pytest.mark.parametrize("argv, first", [
    # Reached through the late step only: the speculative guard between the two stops the launch first.
    pytest.param(["--encoder-only", "--ib-device", "a,b", "--speculative"], SPECULATIVE, id="late place"),
    # Through the early step: the InfiniBand check runs before the speculative one.
    pytest.param(["--elastic-ep", "--ib-device", "a,b", "--speculative"], IB, id="early place"),
    pytest.param(["--elastic-ep", "--encoder-only", "--ib-device", "a,b", "--speculative"], IB, id="both places"),
    pytest.param(["--encoder-only", "--ib-device", "a,b"], IB, id="late place alone"),
])
def test_a_launch_stops_at_the_first_place_where_the_guard_fires(ruleset, argv, first) -> None:
    report = check(ruleset, ["--model-path", "m", *argv])
    assert report.definite[0].rule.message == first, [(f.rule.message, f.place) for f in report.definite]


def test_the_json_report_gives_the_place_the_launch_meets(ruleset) -> None:
    ib = _rule(ruleset, IB)
    report = check(ruleset, ["--model-path", "m", "--encoder-only", "--ib-device", "a,b"])
    found = next(e for e in report_json(report, lambda rule: [])["errors"] if e["id"] == ib.id)
    assert found["order"] == ib.places[1][0] != ib.order
