"""Decisions over condition formulas: implication, equivalence, satisfiability and preferred models.

Atoms over the same value are related (`mode == "decode"` and `mode == "prefill"` cannot both hold,
`x > 2` implies `x > 1`), so truth tables over atoms as independent booleans get it wrong. Instead
every value a formula reads (a field, env var, platform or model fact, opaque expression; transforms
such as `.lower()` or `int()` are applied on top of it) becomes a variable over a finite set of
candidate values that covers every distinct behaviour of the atoms mentioning it: each literal,
numbers around and between numeric literals, None, True/False, a fresh string and number, list
members, containers for `in` tests. Candidates that behave alike on every atom collapse into one,
so each atom turns into "variable in this subset of its domain" and the formula into a tree of such
literals. A search that splits on one variable at a time, propagates literals through conjunctions
and solves independent parts separately decides it.

Evaluation errors (`None > 2`) make an atom false, and its negation is the flipped comparison
(`None <= 2`, false too): the reading of `formula.neg`, matching guards that test `x is not None`
first. Comparisons between two terms (`tp_size != dp_size`) are free booleans, identified up to
operand order and negation. Past a search budget the decision is redone with every atom as an
independent boolean (a sound over-approximation: it can only answer "does not imply" more often),
and `implies_exact` answers None.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..core.formula import apply_transforms, assume, atoms, compare, compares_sets, formula_size, render
from ..core.model import FALSE, NEGATED_OP, SWAPPED_OP, TRUE, And, Atom, Const, Formula, Lit, Not, Or, Term, TermKind

# Search steps (variable assignments tried) before giving up on the exact decision. Measured on the
# releases 0.5.10 to 0.5.23: the 20,028 trigger implications of matched rules take at most 109
# steps, find_model on every 0.5.23 trigger at most 1,809 (tests/test_diff.py checks 0.5.18/0.5.19).
BUDGET = 20_000
# Formulas larger than this (atoms with repeats) are not searched at all: each step of the search
# rewrites the whole tree, so the step budget alone would not bound the time.
MAX_SEARCHED_ATOMS = 3_000
_POSITIVE_OPS = frozenset({"==", "<", ">", "in", "contains", "is"})
_CASE_TRANSFORMS = frozenset({"lower", "upper", "strip", "casefold"})
_FRESH_STRING = "__other__"
_MAX_LEN_CANDIDATE = 64


class _OverBudget(Exception):
    """The search took more steps than allowed."""


# ---- public API ----------------------------------------------------------------------------------


def implies(a: Formula, b: Formula, domains: Mapping[str, Sequence[object]] | None = None) -> bool:
    """Whether every assignment making `a` true makes `b` true.

    Exact for atom-level formulas (atoms over the same value are related); `domains` restricts
    fields to their choices. Past the search budget it falls back to atoms as independent booleans,
    which may answer False for a true implication, never True for a false one.
    """
    exact = implies_exact(a, b, domains)
    if exact is not None:
        return exact
    # Over budget twice: "not shown to imply" is the safe answer.
    return all(bool(_decide(_implication(x, y), (x, y), domains, True)) for x, y in _obligations(a, b))


def implies_exact(a: Formula, b: Formula, domains: Mapping[str, Sequence[object]] | None = None) -> bool | None:
    """Like `implies`, but None when the search budget was exhausted instead of the fallback's answer."""
    verdict: bool | None = True
    for x, y in _obligations(a, b):
        found = _decide(_implication(x, y), (x, y), domains, False)
        if found is False:
            return False
        if found is None:
            verdict = None
    return verdict


def equivalent(a: Formula, b: Formula, domains: Mapping[str, Sequence[object]] | None = None) -> bool:
    """Whether `a` and `b` hold for exactly the same assignments (see `implies`)."""
    return implies(a, b, domains) and implies(b, a, domains)


def satisfiable(f: Formula, domains: Mapping[str, Sequence[object]] | None = None) -> bool:
    """Whether some assignment makes `f` true (past the budget: as if atoms were independent)."""
    found = _decide(lambda s: s.satisfiable(s.node(f)), (f,), domains, False)
    if found is None:
        found = _decide(lambda s: s.satisfiable(s.node(f)), (f,), domains, True)
    return True if found is None else found  # too large to search: it may hold


def find_model(
    f: Formula,
    prefer: Mapping[str, object] | None = None,
    domains: Mapping[str, Sequence[object]] | None = None,
) -> dict[Term, object] | None:
    """An assignment of term values making `f` true, or None when `f` cannot hold.

    Keys are the terms without transforms (`model_path`, not `model_path.lower()`); a comparison
    between two terms, a free boolean, is keyed by an opaque Term whose text is the comparison.
    Every variable of `f` gets a value: the `prefer` value (keyed by field name, or by a term's
    text for other terms) whenever possible, otherwise the fewest variables differ from their
    preferred value; `domains` restricts a field to its choices. Ties go to the earlier candidate
    (literals in order of appearance, then their neighbours) and the earlier disjunct:
    deterministic. Past the search budget the first model found is returned instead of the best
    (and None if even that search runs out).
    """
    prefer = prefer or {}
    if formula_size(f) > MAX_SEARCHED_ATOMS:
        return None
    try:
        space = _Space((f,), prefer, domains or {}, False)
        root = space.node(f)
        try:
            chosen = space.best(root)
        except _OverBudget:
            space.steps = 0
            chosen = space.first(root)
    except _OverBudget:
        return None
    if chosen is None:
        return None
    return space.model(chosen)


# ---- the search space ----------------------------------------------------------------------------


def _obligations(a: Formula, b: Formula, plain: bool | None = None) -> list[tuple[Formula, Formula]]:
    """Smaller implications that hold together exactly when `a` implies `b`.

    `a1 or a2` implies b when each ai does; a implies `b1 and b2` when it implies each bj; and
    under a, its own conjuncts are true inside b. Triggers of one guard in two releases share most
    of their conjuncts (the earlier guards not firing), so what is left to search is their difference.
    """
    if plain is None:
        plain = not _conflated(a, b)
    if isinstance(a, Or):
        return [o for x in a.args for o in _obligations(x, b, plain)]
    if isinstance(b, And):
        return [o for y in b.args for o in _obligations(a, y, plain)]
    if b == TRUE or a == FALSE:
        return []
    if not plain:  # formula equality would confuse `x is 1` with `x is True`: leave it to the search
        return [(a, b)]
    if a == b:
        return []
    facts = set(a.args) if isinstance(a, And) else {a}
    reduced = assume(b, facts)
    if reduced == TRUE:
        return []
    if reduced != b:
        return _obligations(a, reduced, plain)
    return [(a, b)]


def _conflated(*formulas: Formula) -> bool:
    found = [a for f in formulas for a in atoms(f)]
    return len(set(found)) != len({_typed(a) for a in found})


def _implication(a: Formula, b: Formula):
    # a implies b exactly when `a and not b` has no model.
    return lambda space: not space.satisfiable(space.node(a), space.node(b, False))


def _decide(question, formulas: tuple[Formula, ...], domains, independent: bool) -> bool | None:
    if sum(formula_size(f) for f in formulas) > MAX_SEARCHED_ATOMS:
        return None
    try:
        return question(_Space(formulas, {}, domains or {}, independent))
    except _OverBudget:
        return None


@dataclass(slots=True)
class _Var:
    key: Term  # the term without transforms, or the opaque stand-in of a free boolean
    values: list[object]  # candidate values; after collapsing, one per distinct behaviour
    preferred: int | None = None  # index of the preferred value, if any


# A node is True, False, a literal ("v", var, allowed indices) or a connective ("&"|"|", children).
Node = object


class _Space:
    """Variables, their domains and the literal of every atom, for one set of formulas."""

    def __init__(self, formulas: Iterable[Formula], prefer: Mapping[str, object],
                 domains: Mapping[str, Sequence[object]], independent: bool) -> None:
        self.independent = independent
        self.steps = 0
        self.vars: list[_Var] = []
        self._var_of: dict[object, int] = {}
        self._literal: dict[tuple, tuple[int, frozenset[int]]] = {}  # by typed atom key
        self._vars_memo: dict[int, tuple[Node, frozenset[int]]] = {}
        self._free_atoms: set[tuple] = set()
        found = sorted({_typed(a): a for f in formulas for a in atoms(f)}.values(), key=_atom_order)
        self._build(found, prefer, domains)

    # -- building --

    def _build(self, found: list[Atom], prefer: Mapping[str, object], domains: Mapping[str, Sequence[object]]) -> None:
        by_base: dict[tuple, list[Atom]] = {}
        for atom in found:
            if self.independent:
                key, positive = _free_key(atom) if isinstance(atom.other, Term) else _atom_key(atom)
                self._free(atom, key, positive)
            elif isinstance(atom.other, Term):
                self._free(atom, *_free_key(atom))
            else:
                by_base.setdefault(_base(atom.term), []).append(atom)
        for base in sorted(by_base, key=repr):
            group = [a for a in by_base[base] if not _undecidable(_typed(a))]
            for atom in by_base[base]:
                if atom not in group:  # errors on every value we know: no relation to model
                    self._free(atom, *_atom_key(atom))
            if not group:
                continue
            term = _base_term(group)
            wanted = prefer.get(term.name) if term.kind is TermKind.FIELD else prefer.get(term.text)
            has_prefer = (term.name if term.kind is TermKind.FIELD else term.text) in prefer
            given = tuple(domains[term.name]) if term.kind is TermKind.FIELD and term.name in domains else None
            values, truth = _domain(tuple(_typed(a) for a in group), given, (wanted,) if has_prefer else ())
            index = len(self.vars)
            self.vars.append(_Var(term, list(values), 0 if has_prefer else None))
            for key, allowed in truth.items():
                self._literal[key] = (index, allowed)

    def _free(self, atom: Atom, key: tuple, positive: bool) -> None:
        self._free_atoms.add(_typed(atom))
        index = self._var_of.get(key)
        if index is None:
            index = self._var_of[key] = len(self.vars)
            text = key[-1] if isinstance(key[-1], str) else render(atom)
            stand_in = Term(TermKind.OPAQUE, text, text, tuple(sorted({f for t in _operands(atom) for f in t.fields})))
            self.vars.append(_Var(stand_in, [False, True]))
        self._literal[_typed(atom)] = (index, frozenset({1} if positive else {0}))

    def node(self, f: Formula, positive: bool = True) -> Node:
        """The formula (or its negation) as a tree of literals in negation normal form."""
        if isinstance(f, Const):
            return f.value == positive
        if isinstance(f, Not):
            return self.node(f.arg, not positive)
        if isinstance(f, (And, Or)):
            children = [self.node(arg, positive) for arg in f.args]
            return _and(children) if isinstance(f, And) == positive else _or(children, self.vars)
        if not positive and f.op in NEGATED_OP and not compares_sets(f) and _typed(f) not in self._free_atoms:
            # `not (x > 2)` reads as `x <= 2`, as `formula.neg` builds it: both false for None (not
            # of sets: `not (a <= b)` is no `a > b` there).
            return self.node(Atom(f.term, NEGATED_OP[f.op], f.other))
        var, allowed = self._literal_of(f)
        if not positive:
            allowed = frozenset(range(len(self.vars[var].values))) - allowed
        return _literal(var, allowed, self.vars)

    def _literal_of(self, atom: Atom) -> tuple[int, frozenset[int]]:
        found = self._literal.get(_typed(atom))
        if found is None:  # a flipped comparison not in the formulas: evaluate it over the same domain
            var = self._literal[_typed(Atom(atom.term, NEGATED_OP[atom.op], atom.other))][0]
            allowed = frozenset(i for i, v in enumerate(self.vars[var].values) if _holds(atom, v))
            found = self._literal[_typed(atom)] = (var, allowed)
        return found

    # -- solving --

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > BUDGET:
            raise _OverBudget

    def variables(self, node: Node) -> frozenset[int]:
        if isinstance(node, bool):
            return frozenset()
        if node[0] == "v":  # type: ignore[index]
            return frozenset((node[1],))  # type: ignore[index]
        memo = self._vars_memo.get(id(node))
        if memo is not None and memo[0] is node:
            return memo[1]
        found = frozenset().union(*(self.variables(c) for c in node[1]))  # type: ignore[index]
        self._vars_memo[id(node)] = (node, found)
        return found

    def assign(self, node: Node, var: int, allowed: frozenset[int]) -> Node:
        """The node with `var` restricted to `allowed` (one value: assigned)."""
        if isinstance(node, bool) or var not in self.variables(node):
            return node
        if node[0] == "v":  # type: ignore[index]
            kept = node[2] & allowed  # type: ignore[index]
            if not kept:
                return False
            if kept == allowed:
                return True
            return node if kept == node[2] else ("v", var, kept)  # type: ignore[index]
        children = [self.assign(c, var, allowed) for c in node[1]]  # type: ignore[index]
        if all(new is old for new, old in zip(children, node[1])):  # type: ignore[index]
            return node
        return _and(children) if node[0] == "&" else _or(children, self.vars)  # type: ignore[index]

    def _propagate(self, node: Node) -> Node:
        """Restrict every part of a conjunction by its literals, until nothing changes."""
        while isinstance(node, tuple) and node[0] == "&":
            literals = [c for c in node[1] if c[0] == "v"]
            others = [c for c in node[1] if c[0] != "v"]
            if not literals or not others:
                return node
            changed = False
            for lit in literals:
                updated = [self.assign(c, lit[1], lit[2]) for c in others]
                if any(u is not c for u, c in zip(updated, others)):
                    changed = True
                    others = updated
            if not changed:
                return node
            node = _and([*literals, *others])
        return node

    def _components(self, children: Sequence[Node]) -> list[list[Node]]:
        """Children of a conjunction grouped into parts that share no variable."""
        groups: list[tuple[set[int], list[Node]]] = []
        for child in children:
            seen = set(self.variables(child))
            merged = [g for g in groups if g[0] & seen]
            rest = [g for g in groups if not g[0] & seen]
            for g in merged:
                seen |= g[0]
            members = [m for g in merged for m in g[1]] + [child]
            groups = [*rest, (seen, members)]
        # Keep the original order of children inside and across parts: deterministic results.
        order = {id(c): i for i, c in enumerate(children)}
        parts = [sorted(members, key=lambda c: order[id(c)]) for _, members in groups]
        return sorted(parts, key=lambda p: order[id(p[0])])

    def _split_var(self, children: Sequence[Node]) -> int:
        counts: dict[int, int] = {}
        for child in children:
            for v in self.variables(child):
                counts[v] = counts.get(v, 0) + 1
        return min(counts, key=lambda v: (-counts[v], v))

    def satisfiable(self, *parts: Node) -> bool:
        return self.first(_and(list(parts))) is not None

    def first(self, node: Node) -> dict[int, int] | None:
        """Some assignment (var -> value index) deciding the node true, or None."""
        self._tick()
        node = self._propagate(node)
        if isinstance(node, bool):
            return {} if node else None
        if node[0] == "v":  # type: ignore[index]
            return {node[1]: min(node[2])}  # type: ignore[index]
        if node[0] == "|":  # type: ignore[index]
            for child in node[1]:  # type: ignore[index]
                found = self.first(child)
                if found is not None:
                    return found
            return None
        result: dict[int, int] = {}
        for part in self._components(node[1]):  # type: ignore[index]
            found = self.first(part[0]) if len(part) == 1 else self._first_split(part)
            if found is None:
                return None
            result.update(found)
        return result

    def _first_split(self, part: list[Node]) -> dict[int, int] | None:
        var = self._split_var(part)
        whole = _and(part)
        for value in self._order(var, whole):
            found = self.first(self.assign(whole, var, frozenset((value,))))
            if found is not None:
                return {var: value, **found}
        return None

    def _order(self, var: int, node: Node) -> list[int]:
        allowed = set(range(len(self.vars[var].values)))
        if isinstance(node, tuple) and node[0] == "&":
            for child in node[1]:
                if child[0] == "v" and child[1] == var:
                    allowed &= child[2]
        preferred = self.vars[var].preferred
        return sorted(allowed, key=lambda i: (i != preferred, i))

    def _cost(self, var: int, value: int) -> int:
        return 0 if value == self.vars[var].preferred else 1

    def best(self, node: Node) -> dict[int, int] | None:
        found = self._best(node)
        return None if found is None else found[1]

    def _best(self, node: Node) -> tuple[int, dict[int, int]] | None:
        """The assignment deciding the node true with the fewest non-preferred values."""
        self._tick()
        node = self._propagate(node)
        if isinstance(node, bool):
            return (0, {}) if node else None
        if node[0] == "v":  # type: ignore[index]
            var, allowed = node[1], node[2]  # type: ignore[index]
            value = min(allowed, key=lambda i: (self._cost(var, i), i))
            return self._cost(var, value), {var: value}
        if node[0] == "|":  # type: ignore[index]
            best: tuple[int, dict[int, int]] | None = None
            for child in node[1]:  # type: ignore[index]
                found = self._best(child)
                if found is not None and (best is None or found[0] < best[0]):
                    best = found
                    if best[0] == 0:
                        break
            return best
        total, result = 0, {}
        for part in self._components(node[1]):  # type: ignore[index]
            found = self._best(part[0]) if len(part) == 1 else self._best_split(part)
            if found is None:
                return None
            total += found[0]
            result.update(found[1])
        return total, result

    def _best_split(self, part: list[Node]) -> tuple[int, dict[int, int]] | None:
        var = self._split_var(part)
        whole = _and(part)
        best: tuple[int, dict[int, int]] | None = None
        for value in self._order(var, whole):
            cost = self._cost(var, value)
            if best is not None and cost >= best[0]:
                continue  # the rest costs at least nothing more: cannot beat the best
            found = self._best(self.assign(whole, var, frozenset((value,))))
            if found is not None and (best is None or cost + found[0] < best[0]):
                best = cost + found[0], {var: value, **found[1]}
        return best

    def model(self, chosen: Mapping[int, int]) -> dict[Term, object]:
        result: dict[Term, object] = {}
        for index, var in enumerate(self.vars):
            value = chosen.get(index, var.preferred if var.preferred is not None else 0)
            result[var.key] = var.values[value]
        return result


# ---- nodes ---------------------------------------------------------------------------------------


def _literal(var: int, allowed: frozenset[int], variables: list[_Var]) -> Node:
    if not allowed:
        return False
    if len(allowed) == len(variables[var].values):
        return True
    return ("v", var, allowed)


def _and(children: Iterable[Node]) -> Node:
    """A conjunction: flattened, literals over one variable intersected, constants folded."""
    merged: dict[int, frozenset[int]] = {}
    rest: list[Node] = []
    for child in _flatten(children, "&"):
        if child is True:
            continue
        if child is False:
            return False
        if child[0] == "v":  # type: ignore[index]
            var, allowed = child[1], child[2]  # type: ignore[index]
            allowed = merged[var] & allowed if var in merged else allowed
            if not allowed:
                return False
            merged[var] = allowed
        elif child not in rest:
            rest.append(child)
    items = [("v", var, allowed) for var, allowed in sorted(merged.items())] + rest
    if not items:
        return True
    return items[0] if len(items) == 1 else ("&", tuple(items))


def _or(children: Iterable[Node], variables: list[_Var]) -> Node:
    """A disjunction: flattened, literals over one variable united, constants folded."""
    merged: dict[int, frozenset[int]] = {}
    rest: list[Node] = []
    for child in _flatten(children, "|"):
        if child is False:
            continue
        if child is True:
            return True
        if child[0] == "v":  # type: ignore[index]
            var, allowed = child[1], child[2]  # type: ignore[index]
            allowed = merged[var] | allowed if var in merged else allowed
            if len(allowed) == len(variables[var].values):
                return True
            merged[var] = allowed
        elif child not in rest:
            rest.append(child)
    items = [("v", var, allowed) for var, allowed in sorted(merged.items())] + rest
    if not items:
        return False
    return items[0] if len(items) == 1 else ("|", tuple(items))


def _flatten(children: Iterable[Node], kind: str) -> Iterable[Node]:
    for child in children:
        if isinstance(child, tuple) and child[0] == kind:
            yield from child[1]
        else:
            yield child


# ---- atoms, variables and candidate values ---------------------------------------------------------


def _atom_order(atom: Atom) -> tuple:
    other = atom.other.text if isinstance(atom.other, Term) else repr(atom.other.value) if atom.other else ""
    return (atom.term.kind.value, atom.term.name, atom.term.text, atom.op, other)


def _base(term: Term) -> tuple:
    # Transforms apply on top of one underlying value: `x` and `x.lower()` share a variable.
    return (term.kind.value, term.name)


def _base_term(group: list[Atom]) -> Term:
    plain = [a.term for a in group if not a.term.transforms]
    if plain:
        return plain[0]
    term = group[0].term
    return Term(term.kind, term.name, term.name, term.fields, ())


def _operands(atom: Atom) -> tuple[Term, ...]:
    return (atom.term, atom.other) if isinstance(atom.other, Term) else (atom.term,)


def _free_key(atom: Atom) -> tuple[tuple, bool]:
    """A comparison of two terms as a free boolean: the same up to operand order and negation."""
    left, op, right = atom.term, atom.op, atom.other
    assert isinstance(right, Term)
    if right.text < left.text and op in SWAPPED_OP and op not in ("in", "not in", "contains", "not contains"):
        left, op, right = right, SWAPPED_OP[op], left
    positive = op in _POSITIVE_OPS
    if not positive:
        op = NEGATED_OP[op]
    return ("cmp", left.text, op, right.text, f"{left.text} {op} {right.text}"), positive


def _atom_key(atom: Atom) -> tuple[tuple, bool]:
    """Fallback mode: an atom and its negation are one boolean, unrelated to anything else."""
    if atom.op == "truthy":
        return ("atom", atom.term.text, "truthy", None, render(atom)), True
    positive = atom.op in _POSITIVE_OPS
    op = atom.op if positive else NEGATED_OP[atom.op]
    flipped = Atom(atom.term, op, atom.other)
    value = atom.other.value if isinstance(atom.other, Lit) else None
    return ("atom", atom.term.text, op, repr(value), render(flipped)), positive


def _holds(atom: Atom, value: object) -> bool:
    try:
        left = apply_transforms(value, atom.term.transforms)
        right = atom.other.value if isinstance(atom.other, Lit) else None
        return bool(compare(left, atom.op, right))
    except (TypeError, ValueError, AttributeError, OverflowError):
        return False


@lru_cache(maxsize=8192)
def _undecidable(key: tuple) -> bool:
    """An atom that neither holds nor fails (in its flipped form) on any candidate value."""
    atom = key[0]
    if atom.op not in NEGATED_OP:
        return False
    flipped = Atom(atom.term, NEGATED_OP[atom.op], atom.other)
    values = _candidates([atom])
    return not any(_holds(atom, v) or _holds(flipped, v) for v in values)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _targets(atom: Atom) -> list[object]:
    """Values of the transformed term that decide the atom one way or the other."""
    if atom.op == "truthy" or not isinstance(atom.other, Lit):
        return []
    value = atom.other.value
    if atom.op in ("in", "not in"):
        return [*value, value] if isinstance(value, (tuple, str)) else [value]
    if atom.op in ("contains", "not contains"):
        return [(value,), value] if isinstance(value, str) else [(value,)]
    if atom.op in ("<", "<=", ">", ">=") and isinstance(value, tuple):
        # `set(x) <= {"a", "b"}` arrives with the set as a tuple literal; lists compare with it.
        return [list(value), [], [*value, _FRESH_STRING], list(value[:1])]
    return [value]


def _preimages(target: object, transforms: tuple[str, ...]) -> list[object]:
    """Underlying values whose transform may give `target` (apply_transforms then sorts them out)."""
    values = [target]
    for t in reversed(transforms):
        found: list[object] = []
        for v in values:
            if t in _CASE_TRANSFORMS and isinstance(v, str):
                found += [v, v.upper(), v.lower()]
            elif t == "len" and isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _MAX_LEN_CANDIDATE:
                found += [tuple(f"item{i}" for i in range(v))]
            elif t in ("int", "float") and _is_number(v):
                found += [v, str(v)]
            elif t == "str" and isinstance(v, str):
                found += [v, *([int(v)] if v.lstrip("-").isdigit() else [])]
            elif t == "abs" and _is_number(v):
                found += [v, -v]
            else:
                found.append(v)
        values = found
    return values


def _candidates(group: list[Atom]) -> list[object]:
    """Candidate values of one variable: literals first (in order), then neighbours, then generic values."""
    targets_by_transform: dict[tuple[str, ...], list[object]] = {}
    for atom in group:
        targets_by_transform.setdefault(atom.term.transforms, []).extend(_targets(atom))
    candidates: list[object] = []
    for transforms, targets in targets_by_transform.items():
        # Numbers split the line at each literal and at 0 (truthiness): one value per point and per gap.
        numbers = sorted({int(v) if isinstance(v, bool) else v for v in targets
                          if _is_number(v) or isinstance(v, bool)} | {0})  # True orders as 1
        around = [n + d for n in numbers for d in (1, -1)]
        between = [(x + y) / 2 for x, y in zip(numbers, numbers[1:])]
        between += [float(n) for n in numbers if isinstance(n, int)]  # equal to n, yet not `is n`
        fresh_number = max(numbers) + 7
        # Strings compared by order need one just above each literal ("" is below them all).
        texts = [t for t in targets if isinstance(t, str)]
        above = [t + suffix for t in texts for suffix in ("~", "\x00")]
        generic = [None, True, False, 0, 1, "", _FRESH_STRING, fresh_number, (), (_FRESH_STRING,)]
        if any(t in ("len",) for t in transforms):
            generic = [(), ("item0",), None]
        for target in [*targets, *around, *between, *above, *generic]:
            candidates += _preimages(target, transforms) if transforms else [target]
    candidates += [None, True, False, 0, 1, "", _FRESH_STRING, ()]
    return candidates


def _domain(keys: tuple[tuple, ...], given: tuple | None, prefer: tuple) -> tuple[list[object], dict]:
    """The collapsed domain of one variable; memoized, as the same atoms recur across rules and releases."""
    try:
        return _cached_domain(keys, None if given is None else _tagged(given), _tagged(prefer))
    except TypeError:  # an unhashable domain or preferred value
        group = [key[0] for key in keys]
        return _collapse([*prefer, *(given if given is not None else _candidates(group))], group)


@lru_cache(maxsize=8192)
def _cached_domain(keys: tuple[tuple, ...], given: tuple | None, prefer: tuple) -> tuple[list[object], dict]:
    group = [key[0] for key in keys]
    values = [v for _, v in prefer] + ([v for _, v in given] if given is not None else _candidates(group))
    return _collapse(values, group)


def _typed(atom: Atom) -> tuple:
    """An atom's key that tells 1, 1.0 and True apart: equal in Python, not under `is`."""
    return (atom, _tagged((atom.other.value,)) if isinstance(atom.other, Lit) else None)


def _tagged(values: Iterable[object]) -> tuple:
    return tuple((type(v).__name__, _tagged(v) if isinstance(v, tuple) else v) for v in values)


def _collapse(candidates: list[object], group: Sequence[Atom]) -> tuple[list[object], dict]:
    """One candidate per distinct behaviour on the group's atoms (and their flipped forms), by typed key."""
    checks = [*group, *(Atom(a.term, NEGATED_OP[a.op], a.other) for a in group if a.op in NEGATED_OP)]
    values: list[object] = []
    signatures: dict[tuple[bool, ...], int] = {}
    for value in candidates:
        if any(_same(value, v) for v in values):
            continue
        signature = tuple(_holds(atom, value) for atom in checks)
        if signature in signatures:
            continue
        signatures[signature] = len(values)
        values.append(value)
    truth = {_typed(atom): frozenset(i for i, v in enumerate(values) if _holds(atom, v)) for atom in checks}
    return values, truth


def _same(a: object, b: object) -> bool:
    # 1 == True == 1.0 in Python, but they behave differently under `is`: compare types too.
    return type(a) is type(b) and a == b
