"""The witness stage evaluates a candidate line's triggers from the bare launch's truths (`Inherited`):
only subformulas that read a name the line changes are evaluated again. Its answers must be those of
a plain evaluation (`linter.definite_errors`, a fresh context), on every line and every guard."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.analysis.environ import env_defaults
from extractor.core.formula import conj, disj
from extractor.core.model import Atom, Flag, Lit, Location, Rule, RuleKind, Snippet, Term, TermKind, Write
from extractor.logic.environment import EnvVar
from extractor.products.extraction import witness
from extractor.products.extraction.extraction import extract
from extractor.products.check.linter import RuleSet, definite_errors
from extractor.products.reuse.rulesets import release_rules
from extractor.products.extraction.witness_keys import Digests
from extractor.sources.trees import path_tree

from .conftest import FIXTURES
from .witness_variants import stripped


def inherited(ruleset: RuleSet) -> witness._Verdicts:
    """The verdicts as the stage makes them without a memo: each line's context inherits the bare launch's."""
    return witness._Verdicts(ruleset, Digests(ruleset), id, witness._InRun())


def ids(rules: list[Rule]) -> list[str]:
    return [r.id for r in rules]


# ---- a hand-made rule set: fields, a resolved field, env vars with a deprecated alias --------------------------


def _flag(name: str, default: object) -> Flag:
    return Flag(name, (f"--{name.replace('_', '-')}",), type=type(default).__name__, default=repr(default),
                default_value=default, default_is_literal=True)


def _field(name: str) -> Term:
    return Term(TermKind.FIELD, name, name, (name,))


def _guard(name: str, trigger, order: int) -> Rule:
    return Rule(name, RuleKind.RAISE, "ValueError", name, True, Location("a.py", order, order), "f",
                Snippet(order, order, "raise ValueError()"), trigger, trigger=trigger, reachable=True, order=order)


MODE = Term(TermKind.RESOLVED, "mode", "mode", ("mode",), version=1)
NEW = Term(TermKind.ENV, "SGLANG_NEW", "envs.SGLANG_NEW.get()", ())
OPAQUE = Term(TermKind.OPAQUE, "speed * size", "speed * size", ("speed", "size"))
FLAGS = (_flag("speed", 1), _flag("size", 2), _flag("mode", "slow"), _flag("other", 0), _flag("model_path", "m"))
GUARDS = (
    _guard("g_mode", Atom(MODE, "==", Lit("fast")), 1),
    _guard("g_env", Atom(NEW, "==", Lit(1)), 2),
    _guard("g_product", conj(Atom(OPAQUE, ">", Lit(6)), Atom(_field("other"), "==", Lit(0))), 3),
    _guard("g_either", disj(Atom(_field("size"), "<", Lit(2)), Atom(MODE, "!=", Lit("slow"))), 4),
    _guard("g_bare", Atom(_field("other"), "==", Lit(0)), 5),  # fires on the bare launch
)
SMALL = RuleSet(
    GUARDS, FLAGS, {}, {"SGLANG_NEW": EnvVar("int", 0, alias="SGLANG_OLD")},
    (Write("mode", 1, 0, "adj", Atom(_field("speed"), ">", Lit(2)), ((Atom(_field("size"), ">", Lit(1)), Lit("fast")),)),),
)


@pytest.mark.parametrize("argv", [
    ["--model-path", "org/model"],
    ["--model-path", "org/model", "--speed", "3"],  # the write runs: mode becomes fast
    ["--model-path", "org/model", "--speed", "3", "--size", "1"],  # it runs, and writes nothing
    ["--model-path", "org/model", "--size", "5", "--speed", "2"],
    ["--model-path", "org/model", "--other", "1"],
    ["SGLANG_NEW=1", "--model-path", "org/model"],
    ["SGLANG_OLD=1", "--model-path", "org/model"],  # read through the deprecated name
    ["--model-path", "elsewhere", "--speed", "9"],  # the required flag itself changed
])
def test_hand_made_lines_match_a_plain_evaluation(argv) -> None:
    assert ids(inherited(SMALL).definite_errors(argv)) == ids(definite_errors(SMALL, argv))


def test_the_alias_and_the_resolved_field_do_change_the_answers() -> None:
    """The lines above are not all alike: the inherited truths had to be evaluated again for these."""
    verdicts = inherited(SMALL)
    bare = ids(verdicts.definite_errors(["--model-path", "org/model"]))
    assert bare == ["g_bare"]
    assert "g_env" in ids(verdicts.definite_errors(["SGLANG_OLD=1", "--model-path", "org/model"]))
    assert "g_mode" in ids(verdicts.definite_errors(["--model-path", "org/model", "--speed", "3"]))
    assert "g_product" in ids(verdicts.definite_errors(["--model-path", "org/model", "--speed", "4", "--size", "2"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([("--speed", ["0", "2", "3", "7"]), ("--size", ["0", "1", "2", "4"]),
                                 ("--other", ["0", "1"]), ("SGLANG_NEW", ["0", "1"]), ("SGLANG_OLD", ["0", "1"])]),
                max_size=4, unique_by=lambda item: item[0]), st.data())
def test_any_line_matches_a_plain_evaluation(options, data) -> None:
    argv = ["--model-path", "org/model"]
    for name, values in options:
        value = data.draw(st.sampled_from(values))
        argv = [f"{name}={value}", *argv] if not name.startswith("--") else [*argv, name, value]
    verdicts = inherited(SMALL)
    verdicts.definite_errors(["--model-path", "org/model", "--speed", "3"])  # another line first: shared state
    assert ids(verdicts.definite_errors(argv)) == ids(definite_errors(SMALL, argv))


# ---- extracted rule sets: every witness line, on every guard ----------------------------------------------------


def witness_lines(documents: RuleSet, every: int = 1) -> list[list[str]]:
    lines = [list(line) for r in documents.rules if r.example for line in (r.example.before, r.example.after)]
    return lines[::every]


def test_fixture_witness_lines_match_a_plain_evaluation() -> None:
    tree = path_tree(FIXTURES / "render_basic" / "src")
    ex = extract(tree)
    ruleset = RuleSet(stripped(ex.rules), ex.flags, {}, env_defaults(tree), ex.resolution)
    lines = witness_lines(RuleSet(ex.rules, ex.flags, {}, None, ex.resolution))
    assert len(lines) >= 10
    verdicts = inherited(ruleset)
    for argv in lines:
        assert ids(verdicts.definite_errors(argv)) == ids(definite_errors(ruleset, argv)), argv


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.18", "0.5.23"])
def test_real_release_witness_lines_match_a_plain_evaluation(version) -> None:
    """A sample of the lines the stage found (both lines of a rule), with every guard evaluated on
    each: the lines set one to a few flags and env vars, as the stage's candidates do."""
    documents = release_rules(version)
    ruleset = RuleSet(stripped(documents.rules), documents.flags, {}, documents.envs, documents.resolution)
    lines = witness_lines(documents, every=4)
    assert len(lines) >= 40
    assert any(item.split("=", 1)[0].isupper() for argv in lines for item in argv)  # env assignments too
    verdicts = inherited(ruleset)
    fired = 0
    for argv in lines:
        found = ids(verdicts.definite_errors(argv))
        assert found == ids(definite_errors(ruleset, argv)), argv
        fired += len(found)
    assert fired > len(lines)  # the answers are not all empty
