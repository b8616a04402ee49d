"""Witnesses reused across extractions (`attach_witnesses(..., memo=)`): the same outcomes as a cold
run, on real releases and on next-commit variants of their rules; keys that see what the stage reads."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.analysis.environ import env_defaults
from extractor.core.model import TRUE, Atom, Flag, Lit, Location, Related, Rule, RuleKind, Snippet, Term, TermKind, Write
from extractor.logic.environment import EnvVar
from extractor.products.extraction import witness
from extractor.products.extraction.extraction import extract
from extractor.products.check.linter import RuleSet
from extractor.products.reuse.rulesets import release_rules
from extractor.products.extraction.witness import attach_witnesses, witnesses
from extractor.products.extraction.witness_keys import RULE_READ, RULE_UNREAD, Digests
from extractor.products.check.words import own_lines
from extractor.sources.trees import path_tree

from .conftest import FIXTURES
from .witness_variants import new_id, reworded, stripped, variants


def again(memo: dict) -> dict:
    """The memo as the next run gets it: pickled to the user cache and read back."""
    return pickle.loads(pickle.dumps(memo))


def outcomes(ruleset: RuleSet, memo: dict | None = None) -> list[tuple]:
    return [(o.rule_id, o.example, o.reason) for o in witnesses(ruleset, memo)]


def with_rules(ruleset: RuleSet, rules, resolution=None) -> RuleSet:
    return RuleSet(tuple(rules), ruleset.flags, {}, ruleset.envs,
                   ruleset.resolution if resolution is None else tuple(resolution))


# ---- a small extracted source ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small() -> RuleSet:
    tree = path_tree(FIXTURES / "render_basic" / "src")
    ex = extract(tree)
    return RuleSet(stripped(ex.rules), ex.flags, {}, env_defaults(tree), ex.resolution)


def test_rule_fields_are_each_read_or_not() -> None:
    names = {f.name for f in dataclasses.fields(Rule)}
    assert RULE_READ | RULE_UNREAD == names and not RULE_READ & RULE_UNREAD


def test_a_filled_memo_gives_the_cold_outcomes_and_skips_the_search(small, monkeypatch) -> None:
    cold = outcomes(small)
    memo: dict = {}
    assert outcomes(small, memo) == cold
    assert sum(1 for _, example, _ in cold if example) >= 5

    def no_search(*args, **kwargs):
        raise AssertionError("searched again")

    monkeypatch.setattr(witness, "Finder", no_search)
    assert outcomes(small, again(memo)) == cold


def test_attach_witnesses_is_the_same_with_a_memo(small) -> None:
    cold = attach_witnesses(small.rules, small.flags, path_tree(FIXTURES / "render_basic" / "src"), small.resolution)
    memo: dict = {}
    tree = path_tree(FIXTURES / "render_basic" / "src")
    assert attach_witnesses(small.rules, small.flags, tree, small.resolution, memo) == cold
    assert attach_witnesses(small.rules, small.flags, tree, small.resolution, again(memo)) == cold
    assert any(r.example for r in cold)


def unread_fields_changed(ruleset: RuleSet) -> tuple[RuleSet, dict[str, str]]:
    """The rule set with every field the stage key leaves out changed, ids renamed (and the renaming)."""
    ids = {r.id: new_id("other " + r.id) for r in ruleset.rules}
    changed = [replace(r, id=ids[r.id], affected_by=tuple(ids.get(i, i) for i in r.affected_by),
                       message=r.message + "!", exception="RuntimeError", message_static=not r.message_static,
                       call_path=("elsewhere",), related=(Related("x", "y", "siblings", 1.0),), target="t", value="v",
                       assigns=((TRUE, Lit(3)),))
               for r in ruleset.rules]
    resolution = [replace(w, rule=ids.get(w.rule, w.rule)) for w in ruleset.resolution]
    flags = [replace(f, help="other help", file="elsewhere.py", line=f.line + 7) for f in ruleset.flags]
    return RuleSet(tuple(changed), tuple(flags), {}, ruleset.envs, tuple(resolution)), ids


def test_unread_fields_change_no_outcome(small) -> None:
    """What the stage key leaves out (messages, ids as such, ...) changes nothing the stage computes."""
    other, ids = unread_fields_changed(small)
    assert Digests(other).stage() == Digests(small).stage()
    assert [(ids[i], e, why) for i, e, why in outcomes(small)] == outcomes(other)


def _mutations(rules: tuple[Rule, ...], index: int) -> dict[str, Rule]:
    """One change of each read field of rule `index` (the ones the stage key must see)."""
    rule = rules[index]
    other = next(r for r in rules if r.id != rule.id)
    return {
        "id": replace(rule, id=other.id),  # now shared: `check` and `by_id` see another rule
        "kind": replace(rule, kind=RuleKind.ASSERT if rule.kind is RuleKind.RAISE else RuleKind.RAISE),
        "reachable": replace(rule, reachable=not rule.reachable),
        "trigger": replace(rule, trigger=None),
        "condition": replace(rule, condition=TRUE),
        "order": replace(rule, order=(rule.order or 0) + 1000),
        "location": replace(rule, location=replace(rule.location, line=rule.location.line + 1)),
        "function": replace(rule, function=rule.function + "_other"),
        "affected_by": replace(rule, affected_by=(*rule.affected_by, other.id)),
        "snippet": replace(rule, snippet=replace(rule.snippet, text="if other_name:\n" + rule.snippet.text)),
        "enclosing": replace(rule, enclosing=()),
        "places": replace(rule, places=((rule.order or 1, rule.condition), ((rule.order or 1) + 1000, TRUE))),
    }


def test_every_read_field_is_in_the_stage_key(small) -> None:
    index = next(i for i, r in enumerate(small.rules)
                 if r.kind is RuleKind.RAISE and r.trigger is not None and r.enclosing and own_lines(r))
    base = Digests(small).stage()
    mutations = _mutations(small.rules, index)
    assert set(mutations) == RULE_READ
    for name, rule in mutations.items():
        rules = list(small.rules)
        rules[index] = rule
        assert Digests(with_rules(small, rules)).stage() != base, name


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_any_subset_of_rules_reworded_or_dropped_matches_cold(small, data) -> None:
    full: dict = {}
    witnesses(small, full)
    rules, resolution = small.rules, small.resolution
    for index in data.draw(st.lists(st.integers(0, len(rules) - 1), max_size=3, unique=True)):
        rules, resolution = reworded(rules, resolution, index)
    dropped = set(data.draw(st.lists(st.integers(0, len(rules) - 1), max_size=3, unique=True)))
    rules = tuple(r for i, r in enumerate(rules) if i not in dropped)
    variant = with_rules(small, rules, resolution)
    assert outcomes(variant, again(full)) == outcomes(variant)


# ---- keys of verdicts: what a guard's truth depends on -----------------------------------------------------


def _field(name: str) -> Term:
    return Term(TermKind.FIELD, name, name, (name,))


def _flag(name: str, default: object) -> Flag:
    return Flag(name, (f"--{name.replace('_', '-')}",), type=type(default).__name__, default=repr(default),
                default_value=default, default_is_literal=True)


def _guard(trigger) -> Rule:
    return Rule("g", RuleKind.RAISE, "ValueError", "m", True, Location("a.py", 3, 3), "f",
                Snippet(1, 3, "if x:\n    pass\n    raise ValueError('m')"), trigger, trigger=trigger, reachable=True,
                order=2)


MODE = Term(TermKind.RESOLVED, "mode", "mode", ("mode",), version=1)
WRITE = Write("mode", 1, 1, "adj", Atom(_field("speed"), ">", Lit(2)), ((TRUE, Lit("fast")),))


# The first write of mode reads speed as its own first write left it.
CHAINED = replace(WRITE, when=Atom(Term(TermKind.RESOLVED, "speed", "speed", ("speed",), version=1), ">", Lit(2)))
SPEED = Write("speed", 1, 0, "adj0", Atom(_field("other"), "==", Lit(1)), ((TRUE, Lit(3)),))


def _guard_digest(flags=None, writes=(WRITE,), envs=None, trigger=Atom(MODE, "==", Lit("fast"))) -> bytes:
    flags = flags or [_flag("speed", 1), _flag("mode", "slow"), _flag("other", 0)]
    rule = _guard(trigger)
    return Digests(RuleSet((rule,), tuple(flags), {}, envs, tuple(writes))).guard(rule)


@pytest.mark.parametrize("change, differs", [
    pytest.param({"flags": [_flag("speed", 5), _flag("mode", "slow"), _flag("other", 0)]}, True,
                 id="default of a field a write reads"),
    pytest.param({"flags": [_flag("speed", 1), _flag("mode", "slow"), _flag("other", 7)]}, False,
                 id="default of a field no one reads"),
    pytest.param({"writes": (replace(WRITE, cases=((TRUE, Lit("slow")),)),)}, True, id="the value written"),
    pytest.param({"writes": (replace(WRITE, when=Atom(_field("speed"), ">", Lit(3))),)}, True, id="when it is written"),
    pytest.param({"writes": (WRITE, replace(WRITE, version=2, cases=((TRUE, Lit("x")),)))}, False,
                 id="a later write the trigger has not seen"),
    pytest.param({"writes": (WRITE, replace(WRITE, field="speed"))}, False, id="a write of a field read as typed"),
    pytest.param({"writes": (WRITE, replace(WRITE, field="other"))}, False, id="a write of another field"),
    pytest.param({"writes": (replace(WRITE, order=9, rule="renamed"),)}, False, id="the write's place and rule id"),
    pytest.param({"writes": ()}, True, id="a table that does not reach"),
    pytest.param({"trigger": Atom(MODE, "==", Lit("slow"))}, True, id="the trigger"),
])
def test_guard_digest_sees_what_the_truth_reads(change, differs) -> None:
    assert (_guard_digest(**change) != _guard_digest()) is differs


def test_guard_digest_follows_chains_through_writes() -> None:
    base = _guard_digest(writes=(CHAINED, SPEED))
    assert _guard_digest(writes=(CHAINED, replace(SPEED, cases=((TRUE, Lit(4)),)))) != base
    assert _guard_digest(writes=(CHAINED, replace(SPEED, when=TRUE))) != base
    assert _guard_digest(writes=(CHAINED, SPEED, replace(SPEED, version=2))) == base  # not seen yet
    assert _guard_digest(writes=(CHAINED, SPEED), flags=[_flag("speed", 1), _flag("mode", "slow"), _flag("other", 5)]) != base


def test_guard_digest_sees_env_declarations_it_reads() -> None:
    env = Term(TermKind.ENV, "SGLANG_X", "envs.SGLANG_X.get()", ())
    trigger = Atom(env, "==", Lit(1))
    plain = _guard_digest(trigger=trigger, envs={"SGLANG_X": EnvVar("int", 1)})
    assert _guard_digest(trigger=trigger, envs={"SGLANG_X": EnvVar("int", 2)}) != plain
    assert _guard_digest(trigger=trigger, envs={"SGLANG_X": EnvVar("int", 1), "SGLANG_Y": EnvVar("int", 2)}) == plain


# ---- real releases ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Release:
    version: str
    documents: RuleSet  # as the extraction wrote them, witnesses included
    ruleset: RuleSet  # what the witness stage got: no example, no related list
    cold: list[tuple]
    filled: list[tuple]  # the outcomes of the run that filled `memo`, from an empty one
    memo: dict


@pytest.fixture(scope="module", params=["0.5.18", "0.5.23"])
def release(request) -> Release:
    """A release's rules through the extraction cache (other tests read them too), the stage cold,
    and once more filling a memo."""
    documents = release_rules(request.param)
    ruleset = RuleSet(stripped(documents.rules), documents.flags, {}, documents.envs, documents.resolution)
    memo: dict = {}
    filled = outcomes(ruleset, memo)
    return Release(request.param, documents, ruleset, outcomes(ruleset), filled, memo)


@pytest.mark.network
def test_real_release_memo_gives_the_cold_outcomes(release) -> None:
    guards = [r for r in release.documents.rules if r.kind is not RuleKind.ADJUSTMENT]
    assert [e for _, e, _ in release.cold] == [r.example for r in guards]  # what the extraction found
    assert sum(1 for _, e, _ in release.cold if e) > 50
    assert release.filled == release.cold
    assert outcomes(release.ruleset, again(release.memo)) == release.cold
    verdicts_only = {k: v for k, v in again(release.memo).items() if k != "witness.stages"}
    assert outcomes(release.ruleset, verdicts_only) == release.cold


# Every variant on the smaller release; on the larger, one of each path (a whole stage reused under
# other ids, verdicts reused around a changed guard, orders shifted by a new one): a cold run is 3 s.
TRIED = {"0.5.18": {"message", "adjustment message", "trigger", "removed", "added"},
         "0.5.23": {"adjustment message", "trigger", "added"}}


@pytest.mark.network
def test_real_release_unread_fields_change_no_outcome(release) -> None:
    other, ids = unread_fields_changed(release.ruleset)
    assert Digests(other).stage() == Digests(release.ruleset).stage()
    assert [(ids[i], e, why) for i, e, why in release.cold] == outcomes(other)


@pytest.mark.network
def test_real_release_variants_match_cold(release) -> None:
    """Each next-commit variant, cold and with the memo of the unchanged rules: the same for every rule."""
    ruleset = release.ruleset
    found = variants(ruleset.rules, ruleset.resolution, {r.id: r.example for r in release.documents.rules})
    assert {v.name for v in found} == {"message", "adjustment message", "trigger", "removed", "added"}
    for variant in found:
        if variant.name not in TRIED[release.version]:
            continue
        changed = with_rules(ruleset, variant.rules, variant.resolution)
        cold = outcomes(changed)
        assert outcomes(changed, again(release.memo)) == cold, variant.name
        if variant.name == "trigger":  # the variant really changes a witness: the memo had to see it
            assert cold != release.cold


def test_a_formula_keeps_its_content_digest_through_the_cache_and_copies() -> None:
    """`formula_digest` sets each node's digest; the cache's pickler keeps it, so a formula read back
    is not digested again; it is the digest of an equal formula built anew (content only); plain
    pickle and deepcopy still work on nodes never digested."""
    import copy
    import io

    from extractor.core.model import And, Not, Or
    from extractor.core.cache import _Pickler
    from extractor.products.extraction.witness_keys import formula_digest

    def build() -> Or:
        x = Atom(Term(TermKind.FIELD, "x", "x", ("x",)), "==", Lit(1))
        y = Atom(Term(TermKind.FIELD, "y", "y", ("y",)))
        return Or((And((x, Not(y))), TRUE, x))

    f = build()
    plain = copy.deepcopy(f)
    assert plain == f and not hasattr(plain, "_digest") and pickle.loads(pickle.dumps(f)) == f
    digest = formula_digest(f)
    assert f._digest == digest and f.args[0].args[1]._digest  # every node under it, Consts aside
    stream = io.BytesIO()
    _Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL).dump(f)
    back = pickle.loads(stream.getvalue())
    assert back == f and back._digest == digest and back.args[0].args[0]._digest == f.args[0].args[0]._digest
    assert formula_digest(build()) == digest
    assert formula_digest(Or((And((build().args[2], build().args[0].args[1])), TRUE))) != digest
    assert Digests(RuleSet([], [], {})).formula(build()) == digest
