"""Tests for extractor.logic: implication over related atoms, satisfiability and preferred models."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.core.formula import _mask, _pinned_value, apply_transforms, assume, compare, evaluate, neg
from extractor.core.model import NEGATED_OP, And, Atom, Const, Formula, Lit, Not, Or, Term, TermKind
from extractor.logic import solver as logic
from extractor.logic.solver import equivalent, find_model, implies, implies_exact, satisfiable


def field(name: str, *transforms: str) -> Term:
    text = name
    for t in transforms:
        text = f"{t}({text})" if t in ("int", "len") else f"{text}.{t}()"
    return Term(TermKind.FIELD, name, text, (name,), tuple(transforms))


def fact(kind: TermKind, text: str) -> Term:
    return Term(kind, text, text)


def cmp(term: Term | str, op: str, value: object) -> Atom:
    term = field(term) if isinstance(term, str) else term
    return Atom(term, op, value if isinstance(value, Term) else Lit(value))


def truthy(term: Term | str) -> Atom:
    return Atom(field(term) if isinstance(term, str) else term)


MODE = ("null", "prefill", "decode")
HIP = fact(TermKind.PLATFORM, "is_hip()")

# (a, b, a implies b, b implies a, domains)
IMPLICATIONS = [
    pytest.param(cmp("mode", "==", "decode"), cmp("mode", "==", "prefill"), False, False, None, id="distinct-values"),
    pytest.param(cmp("x", ">", 2), cmp("x", ">", 1), True, False, None, id="ordering"),
    # Naive reading says "x > 1" and "x >= 2" are the same; for 1.5 they are not.
    pytest.param(cmp("x", ">", 1), cmp("x", ">=", 2), False, True, None, id="gt-vs-ge-in-general"),
    pytest.param(cmp("x", ">", 1), cmp("x", ">=", 2), True, True, {"x": (0, 1, 2, 3)}, id="gt-vs-ge-over-ints"),
    # Text differs everywhere, yet "!= decode" is "== prefill" once the choices are known.
    pytest.param(cmp("mode", "!=", "decode"), cmp("mode", "==", "prefill"), False, True, None, id="ne-vs-eq-open"),
    pytest.param(cmp("mode", "!=", "decode"), cmp("mode", "==", "prefill"), True, True,
                 {"mode": ("prefill", "decode")}, id="ne-vs-eq-two-choices"),
    pytest.param(cmp("mode", "!=", "decode"), cmp("mode", "==", "prefill"), False, True,
                 {"mode": MODE}, id="ne-vs-eq-three-choices"),
    pytest.param(cmp("x", "==", "a"), cmp("x", "in", ("a", "b")), True, False, None, id="member"),
    pytest.param(cmp("x", "in", ("a", "b")), cmp("x", "!=", "c"), True, False, None, id="member-excludes"),
    pytest.param(cmp("x", "not in", ("a", "b")), cmp("x", "!=", "a"), True, False, None, id="not-member"),
    pytest.param(cmp("x", "is", None), cmp("x", "!=", 3), True, False, None, id="none-vs-value"),
    pytest.param(truthy("x"), cmp("x", "is not", None), True, False, None, id="truthy-not-none"),
    pytest.param(Not(cmp("x", ">", 2)), cmp("x", "<=", 2), True, True, None, id="negated-comparison"),
    pytest.param(And((truthy("a"), truthy("b"))), And((truthy("b"), truthy("a"))), True, True, None, id="reordered"),
    pytest.param(And((truthy("a"), truthy("b"))), truthy("a"), True, False, None, id="extra-and"),
    pytest.param(truthy("a"), Or((truthy("a"), cmp("x", ">", 1))), True, False, None, id="extra-or"),
    pytest.param(cmp(field("model_path", "lower"), "in", ("none", "dummy")), cmp("model_path", "==", "None"),
                 False, True, None, id="transform-lower"),
    # int() only gives integers: here "> 0" and ">= 1" are the same test.
    pytest.param(cmp(field("n", "int"), ">", 0), cmp(field("n", "int"), ">=", 1), True, True, None, id="transform-int"),
    pytest.param(cmp("tp_size", "!=", field("dp_size")), Not(cmp("dp_size", "==", field("tp_size"))), True, True, None,
                 id="term-comparison-up-to-order"),
    pytest.param(cmp("a", ">", field("b")), cmp("b", "<", field("a")), True, True, None, id="swapped-operands"),
    pytest.param(And((truthy(HIP), cmp("x", ">", 1))), truthy(HIP), True, False, None, id="platform-as-boolean"),
]


@pytest.mark.parametrize(("a", "b", "forward", "backward", "domains"), IMPLICATIONS)
def test_implies_table(a: Formula, b: Formula, forward: bool, backward: bool, domains) -> None:
    assert implies_exact(a, b, domains) is forward
    assert implies_exact(b, a, domains) is backward
    assert implies(a, b, domains) is forward
    assert equivalent(a, b, domains) is (forward and backward)


@pytest.mark.parametrize(("f", "expected"), [
    pytest.param(And((cmp("mode", "==", "decode"), cmp("mode", "==", "prefill"))), False, id="two-values"),
    pytest.param(And((cmp("x", "is", None), cmp("x", "==", 3))), False, id="none-and-value"),
    pytest.param(And((cmp("x", ">", 2), cmp("x", "<", 3))), True, id="open-interval"),
    pytest.param(And((cmp("x", ">", 2), cmp("x", "<=", 2))), False, id="complement"),
    pytest.param(And((truthy(HIP), Not(truthy(HIP)))), False, id="platform-contradiction"),
    pytest.param(And((cmp("a", ">", field("b")), cmp("b", ">=", field("a")))), False, id="term-contradiction"),
    pytest.param(And((cmp("mode", "!=", "null"), cmp("mode", "!=", "prefill"), cmp("mode", "!=", "decode"))), True,
                 id="value-outside-literals"),
    pytest.param(And((truthy("buckets"), cmp(field("buckets", "len"), "<=", 0))), False, id="len-vs-truthy"),
    pytest.param(Const(False), False, id="false"),
])
def test_satisfiable(f: Formula, expected: bool) -> None:
    assert satisfiable(f) is expected
    assert (find_model(f) is not None) is expected


def test_satisfiable_over_choices() -> None:
    f = And((cmp("mode", "!=", "null"), cmp("mode", "!=", "prefill"), cmp("mode", "!=", "decode")))
    assert not satisfiable(f, {"mode": MODE})


def _values(model: dict) -> dict:
    return {term.name: value for term, value in model.items()}


def test_find_model_keeps_preferred_values() -> None:
    f = And((cmp("tp_size", ">", 1), cmp("mode", "!=", "decode")))
    model = find_model(f, prefer={"tp_size": 1, "mode": "null", "dp_size": 1}, domains={"mode": MODE})
    assert model is not None
    values = _values(model)
    assert values["mode"] == "null"  # the preferred value already satisfies it
    assert values["tp_size"] > 1
    assert evaluate(f, lambda t: values[t.name]) is True


def test_find_model_changes_fewest_fields() -> None:
    # Either change both x and y, or only z: the model changes z alone.
    f = Or((And((truthy("x"), truthy("y"))), truthy("z")))
    model = find_model(f, prefer={"x": False, "y": False, "z": False})
    assert model is not None
    values = _values(model)
    assert (values["x"], values["y"]) == (False, False) and values["z"]


def test_find_model_respects_domains_and_is_deterministic() -> None:
    f = cmp("mode", "not in", ("null", "prefill"))
    first = find_model(f, prefer={"mode": "null"}, domains={"mode": MODE})
    assert first is not None and _values(first) == {"mode": "decode"}
    assert find_model(f, prefer={"mode": "null"}, domains={"mode": MODE}) == first


def test_find_model_keys_terms_without_transforms_and_free_comparisons() -> None:
    f = And((cmp(field("model_path", "lower"), "==", "dummy"), cmp("tp_size", "!=", field("dp_size"))))
    model = find_model(f)
    assert model is not None
    by_text = {term.text: value for term, value in model.items()}
    assert str(by_text["model_path"]).lower() == "dummy"
    # The comparison is a free boolean named by one spelling of it, valued to make the formula true.
    free = [term for term in model if term.kind is TermKind.OPAQUE]
    assert [term.text for term in free] == ["dp_size == tp_size"] and model[free[0]] is False
    assert set(free[0].fields) == {"tp_size", "dp_size"}


def test_find_model_none_when_impossible() -> None:
    assert find_model(And((cmp("x", "==", 1), cmp("x", "==", 2)))) is None


def test_budget_exhausted_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    a = And((cmp("x", ">", 2), cmp("y", "in", ("a", "b")), Or((truthy("z"), cmp("x", "<", 9)))))
    b = Or((cmp("x", ">", 1), cmp("y", "==", "c")))
    assert implies_exact(a, b) is True
    monkeypatch.setattr(logic, "BUDGET", 0)
    assert implies_exact(a, b) is None
    # The fallback may only miss an implication, never invent one.
    assert implies(a, b) is False
    assert implies(b, a) is False


# ---- property: the search agrees with brute force over a value grid --------------------------------

LITERALS = st.sampled_from([None, 0, 1, 2, "a", "b", ("a", "b"), True])
OPS = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not", "truthy"])
# Every candidate the literals above need, and then some: brute force decides exactly over these.
GRID = [None, True, False, -1, 0, 0.5, 1, 1.0, 1.5, 2, 2.5, 3, "a", "ab", "b", "bz", "c", "", "A", ()]


@st.composite
def atoms_(draw) -> Atom:
    name = draw(st.sampled_from(["x", "y"]))
    op = draw(OPS)
    if op == "truthy":
        return truthy(name)
    value = draw(LITERALS)
    if op in ("in", "not in") and not isinstance(value, tuple):
        value = (value,)
    if op in ("<", "<=", ">", ">=") and (value is None or isinstance(value, tuple)):
        value = 1  # `x < None` fails for every value: logic keeps such atoms as free booleans (documented)
    if op in ("is", "is not") and type(value) is int:
        # `x is 1` and `x is True` are equal atoms to Python (Lit(1) == Lit(True)), so caches keyed by
        # atoms (formula.neg is one) may hand one for the other; real guards never test `is 1`.
        value = None
    return cmp(name, op, value)


formulas = st.recursive(
    atoms_(),
    lambda inner: st.one_of(
        inner.map(Not),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: And(tuple(xs))),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: Or(tuple(xs))),
    ),
    max_leaves=6,
)


def reference(f: Formula, values: dict, positive: bool = True) -> bool:
    """The semantics logic documents: errors make a comparison false; `not` flips comparisons."""
    if isinstance(f, Const):
        return f.value == positive
    if isinstance(f, Not):
        return reference(f.arg, values, not positive)
    if isinstance(f, (And, Or)):
        parts = [reference(a, values, positive) for a in f.args]
        return all(parts) if isinstance(f, And) == positive else any(parts)
    atom = f
    if not positive:
        if atom.op not in NEGATED_OP:
            return not reference(atom, values)
        atom = Atom(atom.term, NEGATED_OP[atom.op], atom.other)
    try:
        left = apply_transforms(values[atom.term.name], atom.term.transforms)
        return bool(compare(left, atom.op, atom.other.value if atom.other else None))
    except (TypeError, ValueError):
        return False


def brute_models(*parts: Formula):
    for x, y in itertools.product(GRID, GRID):
        values = {"x": x, "y": y}
        if all(reference(p, values) for p in parts):
            yield values


@settings(max_examples=200, deadline=None)
@given(formulas, formulas)
def test_implies_agrees_with_brute_force(a: Formula, b: Formula) -> None:
    counter = And((a, neg(b)))
    if implies_exact(a, b):
        assert next(brute_models(counter), None) is None
    else:  # the search found a counterexample: it must really be one
        model = find_model(counter)
        assert model is not None and reference(counter, _values(model))


@settings(max_examples=200, deadline=None)
@given(formulas)
def test_models_satisfy_their_formula(f: Formula) -> None:
    model = find_model(f, prefer={"x": None, "y": None})
    if model is None:
        assert next(brute_models(f), None) is None
    else:
        assert reference(f, _values(model))


def test_is_compares_singletons_by_identity_and_other_literals_by_type_and_value() -> None:
    built = "".join(["sta", "tic"])  # equal to "static", another object: `is` must not depend on that
    assert compare(built, "is", "static") and not compare(built, "is not", "static")
    assert not compare(1, "is", 1.0) and not compare(True, "is", 1) and not compare(0, "is", False)
    assert compare(None, "is", None) and compare(True, "is", True) and not compare(None, "is", 0)


# ---- property: a launch's answer holds whatever the atoms it does not know are ----------------------


@settings(max_examples=300, deadline=None)
@given(formulas, st.sampled_from(GRID))
def test_decided_holds_for_every_value_of_what_is_unknown(f: Formula, x: object) -> None:
    """`Context.decided` answers beyond Kleene's logic only where every value of `y` agrees, or where
    Python, testing the formula left to right, meets a None compared with a number whatever `y` is
    (the launch stops there: True, with the failure in `failing`)."""
    from extractor.logic.evaluation import Context

    context = Context({"x": x})
    answer = context.decided(f)
    if f in context.failing:
        assert answer is True and context.failing[f].startswith("TypeError")
        assert all(_python_fails(f, {"x": x, "y": y}) for y in GRID)
        return
    kleene = Context({"x": x}).truth(f)
    assert kleene is None or answer == kleene
    if answer is not None:
        assert all(Context({"x": x, "y": y}).truth(f) in (answer, None) for y in GRID)


def _python_fails(f: Formula, values: dict) -> bool:
    """Does Python, testing `f` left to right as written (`and`/`or` stop early), meet a None compared
    with a number (a TypeError) before the outcome is decided?"""
    def run(g: Formula) -> bool:
        if isinstance(g, Not):
            return not run(g.arg)
        if isinstance(g, (And, Or)):
            parts = (run(a) for a in g.args)  # all() and any() stop where Python stops
            return all(parts) if isinstance(g, And) else any(parts)
        left, right = values[g.term.name], g.other.value if isinstance(g.other, Lit) else None
        if g.op in ("<", "<=", ">", ">=") and (left is None) != (right is None) \
                and isinstance(right if left is None else left, (int, float)):
            raise TypeError(g.op)
        return reference(g, values)

    try:
        run(f)
    except TypeError:
        return True
    return False


def test_decided_sees_through_an_unknown_atom_on_both_branches() -> None:
    from extractor.logic.evaluation import Context

    unknown = truthy(fact(TermKind.OPAQUE, "helper()"))
    f = Or((And((cmp("x", "==", 1), unknown)), And((cmp("x", "==", 1), Not(unknown)))))
    context = Context({"x": 1})
    assert context.truth(f) is None  # Kleene: unknown
    assert context.decided(f) is True
    assert Context({"x": 2}).decided(f) is False


def test_a_pinned_value_decides_later_tests_of_it() -> None:
    from extractor.core.formula import conj, disj

    x, upper = field("x"), field("x", "upper")
    assert conj(cmp(x, "is", None), cmp(upper, "==", "A")) == Const(False)  # guarded code never gets there
    assert conj(cmp(x, "==", "eagle"), cmp(upper, "==", "EAGLE")) == cmp(x, "==", "eagle")
    assert conj(cmp(x, "is not", None), cmp(upper, "is not", None)) == cmp(x, "is not", None)
    # `x == 1` holds for True as well: it says nothing of `x is True`.
    assert conj(cmp(x, "==", 1), cmp(x, "is", True)) == And((cmp(x, "==", 1), cmp(x, "is", True)))
    p, q, r = truthy("p"), truthy("q"), truthy("r")
    assert disj(And((p, q, r)), And((p, Not(And((q, r)))))) == p


@settings(max_examples=300, deadline=None)
@given(formulas)
def test_truth_table_is_the_formula_under_every_assignment(f: Formula) -> None:
    """Bit k of `truth_table` is the formula's truth when atom i is true exactly where bit i of k is."""
    from extractor.core.formula import atoms
    from extractor.logic.truth_tables import truth_table

    variables = list(dict.fromkeys(atoms(f)))
    table = truth_table(f, variables)
    for k in range(1 << len(variables)):
        fixed = {atom: bool(k >> i & 1) for i, atom in enumerate(variables)}
        assert evaluate(f, lambda term: (_ for _ in ()).throw(LookupError(term)), fixed) is bool(table >> k & 1)


# Tests of a value under a transform: decided by a fact that pins the plain value (`x == "a"`).
TRANSFORMED = st.sampled_from([cmp(field("x", "upper"), "==", "A"), cmp(field("x", "lower"), "!=", "b"),
                               cmp(field("y", "upper"), "is", None), truthy(field("x", "strip"))])


@settings(max_examples=300, deadline=None)
@given(formulas, TRANSFORMED, st.lists(atoms_(), min_size=1, max_size=3), st.booleans())
def test_assume_skips_only_parts_the_facts_cannot_change(f: Formula, other: Atom, known: list, negate: bool) -> None:
    """`assume` with the facts' mask (as `_prune` passes it) gives what visiting every part gives."""
    f = And((f, Or((other, f))))
    facts = {neg(a) if negate else a for a in known}
    fixed = dict(p for p in (_pinned_value(a) for a in facts) if p is not None)
    mask = 0
    for fact in facts:
        mask |= _mask(fact)
    assert assume(f, facts, fixed, mask) == assume(f, facts, fixed)
    assert assume(f, facts, None, mask) == assume(f, facts)
