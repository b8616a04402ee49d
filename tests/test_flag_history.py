"""Flags across releases: the history document, what it says of an unknown option, and `check`'s words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.products.extraction.output import load_schema
from extractor.logic.launch import ArgError, closest_option
from extractor.logic.releases import flag_history_of, shipped_flag_history
from extractor.products.extraction.flag_history import flag_history_document
from extractor.products.check.linter import check, told_errors
from extractor.products.reuse.rulesets import release_rules

import jsonschema

# Four made-up releases, out of order on purpose: --old-flag is renamed to --new-flag in 0.3.0,
# --reasoning is removed after 0.2.0 and comes back in 0.4.0, --late appears in 0.4.0.
RELEASES = [
    ("0.3.0", {"--new-flag": {"dest": "speed", "deprecated": False},
               "--old-flag": {"dest": "speed", "deprecated": True}}),
    ("0.1.0", {"--old-flag": {"dest": "speed", "deprecated": False},
               "--reasoning": {"dest": "reasoning", "deprecated": False}}),
    ("0.2.0", {"--old-flag": {"dest": "speed", "deprecated": False},
               "--reasoning": {"dest": "reasoning", "deprecated": False}}),
    ("0.4.0", {"--new-flag": {"dest": "speed", "deprecated": False},
               "--reasoning": {"dest": "reasoning", "deprecated": False},
               "--late": {"dest": "late", "deprecated": False}}),
]


@pytest.fixture(scope="module")
def document() -> dict:
    return flag_history_document(RELEASES, skipped=[("0.0.1", "no launch options found")])


def test_document_is_valid_and_in_version_order(document) -> None:
    jsonschema.validate(document, load_schema("flag-history.schema.json"))
    assert document["releases"] == ["0.1.0", "0.2.0", "0.3.0", "0.4.0"]
    assert document["flags"]["--reasoning"]["releases"] == [["0.1.0", "0.2.0"], ["0.4.0", "0.4.0"]]
    assert document["flags"]["--old-flag"] == {"dest": "speed", "releases": [["0.1.0", "0.3.0"]],
                                               "deprecated_since": "0.3.0"}
    again = flag_history_document(list(reversed(RELEASES)), skipped=[("0.0.1", "no launch options found")])
    assert json.dumps(again, sort_keys=True) == json.dumps(document, sort_keys=True)


def test_stories(document) -> None:
    history = flag_history_of(document)
    assert history.story("--old-flag", "0.4.0") == ("--old-flag was removed in 0.4.0 (accepted 0.1.0..0.3.0, "
                                                    "deprecated since 0.3.0); 0.4.0 sets that field with --new-flag")
    assert history.story("--reasoning", "0.3.0") == "--reasoning was removed in 0.3.0 (accepted 0.1.0..0.2.0)"
    assert history.story("--late", "0.2.0") == "--late is new in 0.4.0: 0.2.0 is older"
    assert history.story("--late", "0.4.0") is None  # accepted there: nothing to tell
    assert history.story("--typo", "0.4.0") is None
    assert history.story("--late", "9.9.9") is None  # a release the history does not know


def test_check_words_an_unknown_option_with_its_story(document) -> None:
    history = flag_history_of(document)
    errors = [ArgError("--old-flag", "unrecognized arguments: --old-flag (did you mean --new-flag?)"),
              ArgError("--reasoning", "unrecognized arguments: --reasoning (did you mean --reason?)"),
              ArgError("--typo", "unrecognized arguments: --typo (did you mean --type?)"),
              ArgError("--tp-size", "argument --tp-size: invalid int value: 'x'")]
    told = [e.message for e in told_errors(errors, "0.4.0", history)]
    assert told[0] == ("unrecognized arguments: --old-flag: --old-flag was removed in 0.4.0 (accepted 0.1.0..0.3.0, "
                       "deprecated since 0.3.0); 0.4.0 sets that field with --new-flag")
    assert told[1] == "unrecognized arguments: --reasoning (did you mean --reason?)"  # 0.4.0 has it again: no story
    assert told[2:] == [e.message for e in errors[2:]]
    told_old = told_errors([errors[1]], "0.3.0", history)[0].message
    assert told_old == ("unrecognized arguments: --reasoning: --reasoning was removed in 0.3.0 (accepted "
                        "0.1.0..0.2.0); did you mean --reason?")


def test_the_shipped_history_is_valid_and_covers_the_tested_releases() -> None:
    path = Path(__file__).parents[1] / "extractor" / "data" / "flag_history.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(document, load_schema("flag-history.schema.json"))
    history = shipped_flag_history()
    assert history is not None and {"0.5.10", "0.5.18", "0.5.23"} <= set(history.releases)
    assert history.story("--tp-size", "0.5.23") is None


@pytest.mark.parametrize(("typed", "meant"), [
    ("--tp-sise", "--tp-size"),                       # a near spelling
    ("--reasoning_parser", "--reasoning-parser"),     # underscores for dashes
    ("--enable-reasoning", "--reasoning-parser"),     # another tool's flag: the option about the same thing
    ("--qqqq", None),                                 # nothing like it
])
def test_closest_option(typed: str, meant: str | None) -> None:
    options = ["--tp-size", "--reasoning-parser", "--enable-trace", "--enable-metrics", "--pp-size"]
    assert closest_option(typed, options) == meant


@pytest.mark.network
def test_check_of_a_real_release_tells_a_removed_flag_from_a_typo() -> None:
    ruleset = release_rules("0.5.23")
    errors = [e.message for e in check(ruleset, ["--model-path", "m", "--cuda-graph-max-bs", "8", "--tp-sise", "2"])
              .argument_errors]
    assert errors == [
        "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill: "
        "--cuda-graph-max-bs was removed in 0.5.20 (accepted 0.3.5..0.5.19, deprecated since 0.5.14); "
        "0.5.23 sets that field with --cuda-graph-max-bs-decode",
        "unrecognized arguments: --tp-sise (did you mean --tp-size?)",
    ]


@pytest.mark.network
def test_upgrade_of_a_real_command_from_0_5_10_to_0_5_23(capsys) -> None:
    from extractor.cli import main

    argv = ["--model-path", "m", "--cuda-graph-max-bs", "8", "--enable-dp-attention", "--dp-size", "2", "--tp-size", "2"]
    assert main(["check", "--release", "0.5.23", "--from", "0.5.10", "--format", "json", "--", *argv]) == 1
    change = json.loads(capsys.readouterr().out)["upgrade"]
    assert (change["from"], change["to"]) == ("0.5.10", "0.5.23")
    assert [e["flag"] for e in change["argument_errors"]] == ["--cuda-graph-max-bs"]  # fine on 0.5.10, gone since 0.5.20
    assert "removed in 0.5.20" in change["argument_errors"][0]["message"]
    # 0.5.23 moves the deprecated --dp-size N --enable-dp-attention spelling into attention DP.
    assert {r["message"] for r in change["rewrites"]} >= {"Sets --dp-size to 1", "Sets --enable-dp-attention to False"}
    changed = {d["flag"]: (d["from"], d["to"]) for d in change["defaults"]}
    assert changed["--hicache-mem-layout"] == ('"layer_first"', '"page_first"')
    assert "--dp-size" not in changed  # set by the command: its default is not relied on
