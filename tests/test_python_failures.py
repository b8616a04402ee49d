"""A guard whose own test Python cannot evaluate on the launch's values (an option left at its None
default and compared as a number, as SGLang 0.5.23's EAGLE checks compare `speculative_eagle_topk`
when only the steps and draft tokens are given) stops the launch with a TypeError: `check` says so,
as a definite error, where Python surely reaches that test, left to right; never where an earlier
test decides the outcome first or may not let Python reach it."""

from __future__ import annotations

import pytest

from extractor.products.check.linter import check
from extractor.products.check.report import report_json, report_text
from tests.packages import package_ruleset

# 0.5.10's shape: one ServerArgs whose __post_init__ fills a default, then tests it.
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
    speculative_algorithm: Optional[str] = None
    speculative_num_steps: Optional[int] = None
    speculative_eagle_topk: Optional[int] = None
    page_size: int = 1
    attention_backend: str = "triton"
    chunked_prefill_size: Optional[int] = None

    def __post_init__(self):
        self._handle_speculative()
        self._handle_chunks()

    def _handle_speculative(self):
        if self.speculative_algorithm == "EAGLE":
            if self.speculative_num_steps is None:
                self.speculative_num_steps = 3
                self.speculative_eagle_topk = 1
            if self.speculative_eagle_topk > 1 and self.page_size > 1 and self.attention_backend != "fa3":
                raise ValueError("speculative_eagle_topk > 1 with page_size > 1 needs fa3.")

    def _handle_chunks(self):
        if self.page_size > 1 and self.chunked_prefill_size > 1024:
            raise ValueError("chunked_prefill_size must be at most 1024 with page_size > 1.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--speculative-algorithm", type=str, default=ServerArgs.speculative_algorithm)
        parser.add_argument("--speculative-num-steps", type=int, default=ServerArgs.speculative_num_steps)
        parser.add_argument("--speculative-eagle-topk", type=int, default=ServerArgs.speculative_eagle_topk)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
        parser.add_argument("--attention-backend", type=str, default=ServerArgs.attention_backend)
        parser.add_argument("--chunked-prefill-size", type=int, default=ServerArgs.chunked_prefill_size)
''',
}

TOPK = "speculative_eagle_topk > 1 with page_size > 1 needs fa3."
CHUNKS = "chunked_prefill_size must be at most 1024 with page_size > 1."
NONE_AGAINST_INT = "TypeError: '>' not supported between instances of 'NoneType' and 'int'"


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("failures"), PACKAGE)


@pytest.mark.parametrize("argv, first, fails_with", [
    # The steps given, topk left None: its test is the guard's first, so Python fails there.
    pytest.param(["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5"], TOPK, NONE_AGAINST_INT,
                 id="None compared first"),
    pytest.param(["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--page-size", "16"], TOPK,
                 NONE_AGAINST_INT, id="None compared first, the rest true"),
    # Filled by the earlier write (no steps given), or typed: the guard as written.
    pytest.param(["--speculative-algorithm", "EAGLE"], None, None, id="topk filled"),
    pytest.param(["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--speculative-eagle-topk", "4",
                  "--page-size", "16"], TOPK, None, id="topk typed, the guard fires"),
    # The test is never reached: the guard's branch is not taken.
    pytest.param(["--speculative-num-steps", "5"], None, None, id="branch not taken"),
    # An earlier test of the same `and` is false: Python stops before the None.
    pytest.param(["--chunked-prefill-size", "512"], None, None, id="earlier test false (set)"),
    pytest.param([], None, None, id="earlier test false (None left)"),
    pytest.param(["--page-size", "16"], CHUNKS, NONE_AGAINST_INT, id="earlier test true, then None"),
    pytest.param(["--page-size", "16", "--chunked-prefill-size", "4096"], CHUNKS, None, id="both set"),
])
def test_a_test_python_cannot_evaluate_stops_the_launch(ruleset, argv, first, fails_with) -> None:
    report = check(ruleset, ["--model-path", "m", *argv])
    definite = report.definite
    assert (definite[0].rule.message if definite else None) == first, [(f.rule.message, f.certainty) for f in report.findings]
    assert (definite[0].fails_with if definite else None) == fails_with


def test_the_failure_is_worded_in_text_and_json(ruleset) -> None:
    report = check(ruleset, ["--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5"])
    assert f"SGLang fails evaluating this check itself: {NONE_AGAINST_INT}" in report_text(report, lambda rule: [])
    assert report_json(report, lambda rule: [])["errors"][0]["fails_with"] == NONE_AGAINST_INT


def test_the_first_fix_gives_the_flag_python_could_not_compare_a_value(ruleset) -> None:
    from extractor.products.check.fixes import working_fixes
    from extractor.products.check.words import Flags, by_function

    argv = ["--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5"]
    rule = check(ruleset, argv).definite[0].rule
    fixes = working_fixes(ruleset, rule, argv, Flags(ruleset.flags), by_function(ruleset.rules))
    assert fixes[0] == "pass --speculative-eagle-topk 1", fixes
    fixed = check(ruleset, [*argv, "--speculative-eagle-topk", "1"])
    assert not fixed.definite


def test_a_flag_passed_as_zero_that_a_test_divides_by_is_given_a_number_first() -> None:
    """0.5.23's `(tp_size * pp_size) % nnodes != 0` with `--nnodes 0` (its shipped rules): Python fails
    dividing by zero, and the only way read off the guard's path, an elastic-EP join, takes three more
    flags. The first fix passes --nnodes with its default, 1, which clears the guard."""
    from extractor.logic.launch import parse_command
    from extractor.logic.platforms import find_platform
    from extractor.products.check.fixes import working_fixes
    from extractor.products.check.linter import launch_facts
    from extractor.products.check.words import Flags, by_function
    from extractor.products.reuse.rulesets import release_rules

    ruleset, platform = release_rules("0.5.23"), find_platform("cpu")
    argv = ["--model-path", "m", "--device", "cpu", "--nnodes", "0"]
    report = check(ruleset, argv, platform=platform)
    first = report.definite[0]
    assert first.fails_with == "ZeroDivisionError" and first.rule.message == "tp_size must be divisible by number of nodes"
    facts = launch_facts(parse_command(argv, ruleset.catalog), platform, None, None, ruleset.library, {}, ruleset.envs)
    fixes = working_fixes(ruleset, first.rule, argv, Flags(ruleset.flags), by_function(ruleset.rules), facts=facts,
                          base=report.evaluator)
    assert fixes[0] == "pass --nnodes 1", fixes
    fixed = check(ruleset, [*argv[:-1], "1"], platform=platform)
    assert first.rule.id not in {f.rule.id for f in fixed.definite}


def test_explain_names_the_guard_whose_test_a_pasted_traceback_failed_in(ruleset) -> None:
    """The traceback of the crash points into the guard's `if`, before its raise: explain names that
    guard and says SGLang failed testing it (the TypeError is Python's, not the guard's message)."""
    from extractor.products.site.explain import explain_text

    rule = next(r for r in ruleset.rules if r.message == TOPK)
    test_line = rule.enclosing[-1]
    assert test_line < rule.location.line
    traceback = ("Traceback (most recent call last):\n"
                 f'  File "/venv/lib/python3.11/site-packages/{rule.location.file}", line {test_line}, in {rule.function}\n'
                 f"{NONE_AGAINST_INT}\n")
    text, code = explain_text(traceback, [("made-up", ruleset.rules)], lambda candidate: "")
    assert code == 0 and text.startswith(f"Raised while SGLang tested rule {rule.id} "), text
    # At the raise itself it is the guard's own error, as before.
    at_raise = traceback.replace(f"line {test_line},", f"line {rule.location.line},")
    assert explain_text(at_raise, [("made-up", ruleset.rules)], lambda candidate: "")[0].startswith(
        f"Raised at rule {rule.id} ")


# An adjustment that runs and cannot compute what it writes: SGLang 0.5.18-0.5.23's NGRAM handler sets
# the steps to the draft tokens over the BFS breadth, which `--speculative-ngram-max-bfs-breadth 0`
# makes a division by zero.
DIVIDING = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    speculative_algorithm: Optional[str] = None
    speculative_num_steps: Optional[int] = None
    speculative_num_draft_tokens: Optional[int] = None
    speculative_eagle_topk: Optional[int] = None
    speculative_ngram_max_bfs_breadth: int = 10
    page_size: int = 1

    def __post_init__(self):
        self._handle_ngram()
        self._handle_pages()

    def _handle_ngram(self):
        if self.speculative_algorithm == "NGRAM":
            if self.speculative_num_draft_tokens is None:
                self.speculative_num_draft_tokens = 12
            self.speculative_eagle_topk = self.speculative_ngram_max_bfs_breadth
            if self.speculative_num_steps is None:
                self.speculative_num_steps = self.speculative_num_draft_tokens // self.speculative_eagle_topk

    def _handle_pages(self):
        if self.page_size > 64:
            raise ValueError("page_size must be at most 64.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--speculative-algorithm", type=str, default=ServerArgs.speculative_algorithm)
        parser.add_argument("--speculative-num-steps", type=int, default=ServerArgs.speculative_num_steps)
        parser.add_argument("--speculative-num-draft-tokens", type=int, default=ServerArgs.speculative_num_draft_tokens)
        parser.add_argument("--speculative-eagle-topk", type=int, default=ServerArgs.speculative_eagle_topk)
        parser.add_argument("--speculative-ngram-max-bfs-breadth", type=int,
                            default=ServerArgs.speculative_ngram_max_bfs_breadth)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
''',
}
PAGES = "page_size must be at most 64."


@pytest.fixture(scope="module")
def dividing(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("dividing"), DIVIDING)


@pytest.mark.parametrize("argv, first", [
    pytest.param(["--speculative-ngram-max-bfs-breadth", "0"], "adjustment", id="divides by zero"),
    pytest.param(["--speculative-ngram-max-bfs-breadth", "0", "--page-size", "128"], "adjustment",
                 id="before a later guard"),
    pytest.param(["--speculative-ngram-max-bfs-breadth", "0", "--speculative-num-draft-tokens", "8"], "adjustment",
                 id="draft tokens typed"),
    pytest.param(["--speculative-ngram-max-bfs-breadth", "0", "--speculative-num-steps", "2"], None,
                 id="steps typed: the division never runs"),
    pytest.param(["--speculative-ngram-max-bfs-breadth", "4"], None, id="breadth not zero"),
    pytest.param(["--speculative-ngram-max-bfs-breadth", "4", "--page-size", "128"], PAGES, id="the guard alone"),
])
def test_an_adjustment_that_cannot_compute_its_value_stops_the_launch(dividing, argv, first) -> None:
    report = check(dividing, ["--model-path", "m", "--speculative-algorithm", "NGRAM", *argv])
    definite = report.definite
    found = None if not definite else "adjustment" if definite[0].rule.kind.value == "adjustment" else \
        definite[0].rule.message
    assert found == first, [(f.rule.message, f.certainty, f.fails_with) for f in report.findings]
    if first == "adjustment":
        assert definite[0].fails_with == "ZeroDivisionError"
        assert definite[0].rule.target == "speculative_num_steps"
        assert "SGLang fails computing this value itself: ZeroDivisionError" in report_text(report, lambda rule: [])
    if "--page-size" in argv:  # the guard after it is met once the division is fixed
        assert [f.rule.message for f in definite][-1] == PAGES


def test_the_fix_of_a_division_by_zero_passes_the_flag_as_a_number(dividing) -> None:
    from extractor.products.check.fixes import working_fixes
    from extractor.products.check.words import Flags, by_function

    argv = ["--model-path", "m", "--speculative-algorithm", "NGRAM", "--speculative-ngram-max-bfs-breadth", "0"]
    report = check(dividing, argv)
    rule = report.definite[0].rule
    fixes = working_fixes(dividing, rule, argv, Flags(dividing.flags), by_function(dividing.rules),
                          had={rule.id}, base=report.evaluator)
    assert fixes[0] == "pass --speculative-ngram-max-bfs-breadth 10", fixes
    assert not check(dividing, [*argv[:-1], "10"]).definite


def test_explain_names_the_adjustment_a_pasted_traceback_failed_in(dividing) -> None:
    """No guard at the traceback's innermost frame, an adjustment's statement there: explain names it
    and says Python failed computing what it writes, as check reports it."""
    from extractor.products.site.explain import explain_text

    rule = next(r for r in dividing.rules if r.target == "speculative_num_steps")
    traceback = ("Traceback (most recent call last):\n"
                 f'  File "/venv/lib/python3.11/site-packages/{rule.location.file}", line {rule.location.line}, '
                 f"in {rule.function}\nZeroDivisionError: integer division or modulo by zero\n")
    text, code = explain_text(traceback, [("made-up", dividing.rules)], lambda candidate: "")
    assert code == 0 and text.startswith(f"Raised while SGLang computed the value of rule {rule.id} "), text
    # A frame at a guard's raise is that guard's, as before.
    guard = next(r for r in dividing.rules if r.message == PAGES)
    at_guard = traceback.replace(f"line {rule.location.line},", f"line {guard.location.line},")
    assert explain_text(at_guard, [("made-up", dividing.rules)], lambda candidate: "")[0].startswith(
        f"Raised at rule {guard.id} ")
