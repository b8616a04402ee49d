"""Guards in a loop over a value the launch gives: the guard fires when its test holds for some item.

The made-up package imitates 0.5.10-0.5.23's `--limit-mm-data-per-request` check (names and messages
are ours): `for modality in cfg.limit_mm_data_per_request.keys(): if modality not in allowed: raise`.
The walk cannot know the items; the guard's test of an item becomes one term over the whole value,
`any(modality not in [...] for modality in limit_mm_data_per_request.keys())`, which `check` reads
over the launch's value. A loop that may stop early (`break`) keeps its guard undecided: a later
item may never be tested.
"""

from __future__ import annotations

import pytest

from extractor.products.check.linter import check
from tests.packages import package_ruleset

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
import json
from typing import List, Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    limit_mm_data_per_request: Optional[dict] = None
    adapters: Optional[List[str]] = None
    tp_size: int = 1

    def __post_init__(self):
        self._check_modalities()
        self._check_adapters()

    def _check_modalities(self):
        if isinstance(self.limit_mm_data_per_request, dict):
            allowed_modalities = {"image", "video", "audio"}
            for modality in self.limit_mm_data_per_request.keys():
                if modality not in allowed_modalities:
                    raise ValueError(f"Invalid modality '{modality}' in --limit-mm-data-per-request.")

    def _check_adapters(self):
        if self.adapters:
            for adapter in self.adapters:
                if "=" not in adapter:
                    continue
                if adapter.startswith("="):
                    raise ValueError("An adapter needs a name before '='.")
            for adapter in self.adapters:
                if adapter == "stop":
                    break
                if adapter.endswith("!"):
                    raise ValueError("No adapter ends with '!'.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--limit-mm-data-per-request", type=json.loads, default=None)
        parser.add_argument("--adapters", type=str, nargs="*", default=None)
        parser.add_argument("--tp-size", type=int, default=ServerArgs.tp_size)
''',
}

MODALITY = "Invalid modality '{modality}' in --limit-mm-data-per-request."
NAMELESS = "An adapter needs a name before '='."
BANG = "No adapter ends with '!'."


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("loops"), PACKAGE)


@pytest.mark.parametrize("argv, first", [
    (["--limit-mm-data-per-request", '{"image": 2, "pdf": 1}'], MODALITY),
    (["--limit-mm-data-per-request", '{"image": 2, "video": 1}'], None),
    ([], None),
    (["--adapters", "a=x", "=y"], NAMELESS),
    (["--adapters", "a=x", "y"], None),  # `continue` skips an item with no '='
    (["--adapters", "stop", "y!"], None),  # `break` before the item that would raise
])
def test_a_loop_guard_fires_when_some_item_holds(ruleset, argv, first) -> None:
    report = check(ruleset, ["--model-path", "org/model", *argv])
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, [(f.rule.message, f.certainty) for f in report.findings]


def test_a_loop_that_may_stop_early_keeps_its_guard_undecided(ruleset) -> None:
    report = check(ruleset, ["--model-path", "org/model", "--adapters", "y!"])
    assert {f.rule.message: f.certainty for f in report.findings}.get(BANG) == "possible"


def test_the_item_test_is_one_term_over_the_loop_s_value(ruleset) -> None:
    from extractor.core.formula import atoms

    rule = next(r for r in ruleset.rules if r.message == MODALITY)
    texts = [a.term.text for a in atoms(rule.condition)]
    assert "any(modality not in " in " ".join(texts) and "modality" not in texts, texts


def test_the_loop_s_placeholder_shows_the_first_item_that_raises(ruleset) -> None:
    """`{modality}` holds the first key whose test holds, as Python raises it."""
    report = check(ruleset, ["--model-path", "org/model", "--limit-mm-data-per-request",
                             '{"image": 2, "pdf": 1, "zip": 3}'])
    assert [f.text for f in report.definite] == ["Invalid modality 'pdf' in --limit-mm-data-per-request."]
