"""Boolean formulas over atoms: building with simplification, negation, rendering and evaluation."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache

from .model import FALSE, NEGATED_OP, RUN_FUNCTION, TRUE, And, Atom, Const, Formula, Lit, Not, Or, Term, TermKind


# conj and disj are pure and called again and again with the same path conditions (a callee walked
# once per call context, an `elif` chain negating the same earlier tests): two calls in three repeat one.
@lru_cache(maxsize=65536)
def conj(*parts: Formula) -> Formula:
    """`a and b and ...`, flattened, with constants folded and repeats dropped."""
    items: list[Formula] = []
    seen: set[Formula] = set()
    for part in parts:
        for item in part.args if isinstance(part, And) else (part,):
            if item == TRUE or item in seen:
                continue
            if item == FALSE or neg(item) in seen:
                return FALSE
            items.append(item)
            seen.add(item)
    items = _prune(items, in_or=False)
    if FALSE in items:
        return FALSE
    if not items:
        return TRUE
    return items[0] if len(items) == 1 else And(tuple(items))


def _is_literal(f: Formula) -> bool:
    return isinstance(f, Atom) or (isinstance(f, Not) and isinstance(f.arg, Atom))


def _prune(items: list[Formula], in_or: bool) -> list[Formula]:
    """Simplify the items of an `and` (`in_or` False) or an `or` by the literals among them.

    `a and not (not a and x or y)` is `a and not y`; `a or not a and x` is `a or x`. Only earlier
    literals decide later items: Python evaluates left to right, so the rendered source keeps its
    guards before what they protect (`page_size and page_size > 1` never compares None).

    A literal that fixes a value (`x == "EAGLE"`, `x is None`) decides every later test of that
    value: `x is None and x.upper() == "NEXTN"` is False, `x == "eagle" and x.upper() == "EAGLE"`
    is `x == "eagle"`.
    """
    if not any(_is_literal(i) for i in items):
        return items
    neutral = FALSE if in_or else TRUE  # an item that becomes this adds nothing
    facts: set[Formula] = set()
    fixed: dict[tuple, object] = {}  # value key -> the value a literal pins (`_NOT_NONE`: only that it is set)
    known_mask = 0  # `_mask` bits of the facts' terms and of the values they pin
    result: list[Formula] = []
    for item in items:
        if facts and (fixed or not _is_literal(item)) and _mask(item) & known_mask:
            item = assume(item, facts, fixed, known_mask)
            if item == neutral:
                continue
            if item == neg(neutral):
                return [item]  # `and` of False, `or` of True
        if _is_literal(item):
            known = neg(item) if in_or else item
            facts.add(known)
            known_mask |= _mask(known)
            pinned = _pinned_value(known)
            if pinned is not None:
                fixed.setdefault(pinned[0], pinned[1])
        result.append(item)
    return result


@lru_cache(maxsize=65536)
def _mask(f: Formula) -> int:
    """Bits of the terms a formula tests (the low 64) and of the values they read (`_value_key`, the
    next 64). `assume` can change a formula only where a fact tests the same term or pins the same
    value, so a formula whose mask shares no bit with the facts' is left as it is, unvisited."""
    if isinstance(f, Atom):
        key = _value_key(f.term)
        return 1 << (hash(f.term) & 63) | (1 << (64 + (hash(key) & 63)) if key is not None else 0)
    if isinstance(f, Not):
        return _mask(f.arg)
    if isinstance(f, (And, Or)):
        found = 0
        for arg in f.args:
            found |= _mask(arg)
        return found
    return 0


def _value_key(term: Term) -> tuple | None:
    """What identifies a value across its spellings (`x`, `x.upper()`): a field, env var or resolved
    field read at one point of the run."""
    if term.kind in (TermKind.FIELD, TermKind.RESOLVED, TermKind.ENV):
        return (term.kind, term.name, term.after, term.version)
    return None


_NOT_NONE = object()  # what `x is not None` pins: that `x.upper()`, `len(x)` are not None either
_NEVER_NONE = frozenset({"lower", "upper", "strip", "casefold", "int", "float", "str", "len", "bool", "abs"})


def _pinned_value(f: Formula) -> tuple[tuple, object] | None:
    """(value key, value) when the literal says what the value is: `x == "a"`, `x is None`."""
    if not isinstance(f, Atom) or not isinstance(f.other, Lit) or f.term.transforms:
        return None
    if f.op == "is not" and f.other.value is None:
        key = _value_key(f.term)
        return (key, _NOT_NONE) if key is not None else None
    if f.op not in ("==", "is"):
        return None
    key = _value_key(f.term)
    value = f.other.value
    if key is None:
        return None
    # `==` pins strings and None only: `x == 1` holds for True too, so it says nothing of `x is True`.
    if (f.op == "==" and not (value is None or isinstance(value, str))) or (f.op == "is" and not (value is None or isinstance(value, bool))):
        return None
    return key, value


def _decided(f: Formula, fixed: Mapping[tuple, object]) -> Formula | None:
    """A test of a value the facts fix, computed; None when it is not such a test."""
    atom, negated = (f.arg, True) if isinstance(f, Not) else (f, False)
    if not isinstance(atom, Atom) or not (atom.other is None or isinstance(atom.other, Lit)):
        return None
    key = _value_key(atom.term)
    if key is None or key not in fixed:
        return None
    value = fixed[key]
    if value is _NOT_NONE:
        if atom.op in ("is", "is not") and isinstance(atom.other, Lit) and atom.other.value is None \
                and atom.term.transforms and all(t in _NEVER_NONE for t in atom.term.transforms):
            return Const((atom.op == "is not") != negated)
        return None
    try:
        truth = bool(compare(apply_transforms(value, atom.term.transforms), atom.op,
                             atom.other.value if atom.other is not None else None))
    except (TypeError, ValueError, AttributeError, KeyError):
        if value is not None:
            return None
        truth = False  # `x.upper()` of a None `x`: guarded code never gets there
    return Const(truth != negated)


def assume(f: Formula, facts: set[Formula], fixed: Mapping[tuple, object] | None = None, known: int = -1) -> Formula:
    """The formula with every literal known from `facts` replaced by its truth value (and, given
    `fixed`, every test of a value the facts pin). `known`: the `_mask` bits of the facts and of
    `fixed` (every bit when not given): a part whose mask shares none is left unvisited."""
    if f in facts:
        return TRUE
    if isinstance(f, (Atom, Not)) and neg(f) in facts:
        return FALSE
    if fixed and isinstance(f, (Atom, Not)):
        decided = _decided(f, fixed)
        if decided is not None:
            return decided
    if isinstance(f, Not):
        inner = assume(f.arg, facts, fixed, known)
        return f if inner is f.arg else neg(inner)
    if isinstance(f, (And, Or)):
        args = [assume(a, facts, fixed, known) if _mask(a) & known else a for a in f.args]
        if all(a is b for a, b in zip(args, f.args)):
            return f
        return conj(*args) if isinstance(f, And) else disj(*args)
    return f


def at_values(f: Formula, values: Mapping[str, object]) -> Formula:
    """The formula with each test of a field in `values` (as typed) decided at that value (`assume`)."""
    fixed = {key: values[t.name] for t in terms(f)
             if t.kind is TermKind.FIELD and t.name in values and (key := _value_key(t)) is not None}
    return assume(f, set(), fixed) if fixed else f


@lru_cache(maxsize=65536)
def disj(*parts: Formula) -> Formula:
    """`a or b or ...`, flattened, with constants folded, repeats dropped and `p and x or p and not x` merged."""
    items: list[Formula] = []
    seen: set[Formula] = set()
    for part in parts:
        for item in part.args if isinstance(part, Or) else (part,):
            if item == FALSE or item in seen:
                continue
            if item == TRUE or neg(item) in seen:
                return TRUE
            items.append(item)
            seen.add(item)
    items = _prune(_merge_complements(items), in_or=True)
    if TRUE in items:
        return TRUE
    if not items:
        return FALSE
    return items[0] if len(items) == 1 else Or(tuple(items))


def _merge_complements(items: list[Formula]) -> list[Formula]:
    # (P and x) or (P and not x) == P: keeps "if c: ... else: ..." from growing the path condition.
    changed = True
    while changed and len(items) > 1:
        changed = False
        for i, a in enumerate(items):
            for j in range(i + 1, len(items)):
                merged = _merge_pair(a, items[j])
                if merged is not None:
                    items = [*items[:i], merged, *items[i + 1 : j], *items[j + 1 :]]
                    changed = True
                    break
            if changed:
                break
    return items


def _merge_pair(a: Formula, b: Formula) -> Formula | None:
    # `p and q and r or p and not (q and r)` is `p`: what they do not share is one test and its negation.
    xs = list(a.args) if isinstance(a, And) else [a]
    ys = list(b.args) if isinstance(b, And) else [b]
    in_x, in_y = set(xs), set(ys)  # membership by (cached) hash: `in` on a list compares whole trees
    rest_x = [x for x in xs if x not in in_y]
    rest_y = [y for y in ys if y not in in_x]
    if not rest_x or not rest_y:
        return None
    if (len(rest_x) == 1 and len(rest_y) == 1 and neg(rest_x[0]) == rest_y[0]) or \
            (len(rest_x) + len(rest_y) > 2 and neg(conj(*rest_x)) == conj(*rest_y)):
        return conj(*[x for x in xs if x in in_y])
    return None


@lru_cache(maxsize=65536)
def neg(f: Formula) -> Formula:
    """Logical negation; comparisons flip their operator, double negation cancels."""
    if isinstance(f, Const):
        return Const(not f.value)
    if isinstance(f, Not):
        return f.arg
    if isinstance(f, Atom) and f.op in NEGATED_OP and _flips(f):
        return Atom(f.term, NEGATED_OP[f.op], f.other)
    return Not(f)


_ORDERING = frozenset({"<", "<=", ">", ">="})
_SET_TEXT = ("set(", "frozenset(", "{")


def _flips(atom: Atom) -> bool:
    """`not (a <= b)` is `a > b` for numbers and strings, not for sets (`<=` is "subset of" there)."""
    return atom.op not in _ORDERING or not compares_sets(atom) and all(
        not isinstance(side, Lit) or isinstance(side.value, (int, float, str)) and not isinstance(side.value, bool)
        for side in (atom.term, atom.other))


def compares_sets(atom: Atom) -> bool:
    """An ordering of sets (`backends <= {"fa3", "triton"}`): `<=` is "subset of" there."""
    return atom.op in _ORDERING and any(isinstance(side, Term) and side.text.lstrip("(").startswith(_SET_TEXT)
                                        for side in (atom.term, atom.other))


@lru_cache(maxsize=65536)
def formula_size(f: Formula) -> int:
    """Number of atoms, counted with repeats (memoized: resolved triggers share deep subformulas)."""
    if isinstance(f, Atom):
        return 1
    if isinstance(f, Not):
        return formula_size(f.arg)
    if isinstance(f, (And, Or)):
        return sum(formula_size(a) for a in f.args)
    return 0


def atoms(f: Formula) -> Iterator[Atom]:
    """The atoms left to right, repeats included (a stack, not nested generators: triggers are deep)."""
    stack = [f]
    while stack:
        g = stack.pop()
        if isinstance(g, Atom):
            yield g
        elif isinstance(g, Not):
            stack.append(g.arg)
        elif isinstance(g, (And, Or)):
            stack.extend(reversed(g.args))


def distinct_atoms(f: Formula, limit: int) -> list[Atom] | None:
    """The distinct atoms left to right, each shared part read once; None as soon as there are more
    than `limit` (a residual trigger with many unknowns is not enumerated: no need to list them all)."""
    found: dict[Atom, None] = {}
    seen: set[int] = set()
    stack = [f]
    while stack:
        g = stack.pop()
        if isinstance(g, Atom):
            if g not in found:
                found[g] = None
                if len(found) > limit:
                    return None
        elif id(g) not in seen:
            seen.add(id(g))
            if isinstance(g, Not):
                stack.append(g.arg)
            elif isinstance(g, (And, Or)):
                stack.extend(reversed(g.args))
    return list(found)


def every_atom(f: Formula) -> tuple[Atom, ...]:
    """The distinct atoms, left to right, each shared subformula read once (triggers share most).
    Found once per formula object and kept with it: by object, not by value, so that the atoms given
    are the formula's own even in a process holding an equal formula of another rule set (explain
    over several releases), whose atoms a rule set's index must not take in place of its own."""
    found = _EVERY_ATOM.get(id(f))
    if found is not None and found[0] is f:
        return found[1]
    atoms = tuple(distinct_atoms(f, sys.maxsize) or ())
    if len(_EVERY_ATOM) >= _EVERY_ATOM_KEPT:  # a process that reads many releases lets old ones go
        _EVERY_ATOM.clear()
    _EVERY_ATOM[id(f)] = (f, atoms)  # the formula kept alive with its entry: its id is not reused meanwhile
    return atoms


_EVERY_ATOM: dict[int, tuple[Formula, tuple[Atom, ...]]] = {}
_EVERY_ATOM_KEPT = 16384


def replaced(f: Formula, atom: Atom, by: Formula, memo: dict[Formula, Formula] | None = None) -> Formula:
    """The formula with every occurrence of `atom` replaced by the formula `by`, simplified."""
    memo = {} if memo is None else memo
    found = memo.get(f)
    if found is None:
        if isinstance(f, Atom):
            found = by if f == atom else f
        elif isinstance(f, Not):
            found = neg(replaced(f.arg, atom, by, memo))
        elif isinstance(f, And):
            found = conj(*(replaced(a, atom, by, memo) for a in f.args))
        elif isinstance(f, Or):
            found = disj(*(replaced(a, atom, by, memo) for a in f.args))
        else:
            found = f
        memo[f] = found
    return found


def terms(f: Formula) -> Iterator[Term]:
    for atom in atoms(f):
        yield atom.term
        if isinstance(atom.other, Term):
            yield atom.other


def terms_once(f: Formula, seen: set[Formula]) -> Iterator[Term]:
    """The terms of a formula's parts not in `seen` (each added): every shared part read once, not once
    per occurrence as `terms` reads it (triggers share large parts: the writes of a resolved field)."""
    stack = [f]
    while stack:
        g = stack.pop()
        if type(g) is Const or g in seen:
            continue
        seen.add(g)
        if type(g) is Atom:
            yield g.term
            if isinstance(g.other, Term):
                yield g.other
        elif type(g) is Not:
            stack.append(g.arg)
        else:
            stack.extend(g.args)  # type: ignore[union-attr]


@lru_cache(maxsize=65536)
def fields_read(f: Formula) -> tuple[str, ...]:
    """Server-argument fields a formula reads, sorted and unique."""
    names = {name for term in terms_once(f, set()) for name in term.fields}  # each shared part once
    return tuple(sorted(names))


def flag_name(field_name: str) -> str:
    """The `--field-name` convention: the flag of a field the catalog does not know."""
    return "--" + field_name.replace("_", "-")


class Spellings:
    """How each field is written on the command line: its flag in the catalog (`ep_join_mode` is
    `--elastic-ep-join-mode`), no flag for a field the command line cannot set, else the convention.

    Compared by identity, so renderings cached per formula stay apart per catalog.
    """

    def __init__(self, flags: Mapping[str, str | None] | None = None) -> None:
        self._flags = dict(flags or {})

    @classmethod
    def of(cls, flags: Iterable) -> Spellings:
        """From catalog entries (model.Flag or their JSON): the first spelling of each, None for none."""
        table: dict[str, str | None] = {}
        for flag in flags:
            name, spellings = (flag["name"], flag["flags"]) if isinstance(flag, Mapping) else (flag.name, flag.flags)
            table[name] = spellings[0] if spellings else None
        return cls(table)

    def flag(self, field_name: str) -> str | None:
        return self._flags[field_name] if field_name in self._flags else flag_name(field_name)

    def text(self, field_name: str) -> str:
        """The flag, or the bare field name for one that has none."""
        return self.flag(field_name) or field_name

    def flags(self, field_names: Iterable[str]) -> list[str]:
        return [flag for flag in map(self.flag, field_names) if flag is not None]


CONVENTION = Spellings()


# Precedence for parenthesizing: or < and < not < atom.
_PREC = {Or: 1, And: 2, Not: 3}


def render(f: Formula, term_text: Callable[[Term], str] | None = None) -> str:
    """Python source of a formula; `term_text` chooses how terms print (field names, flags, ...)."""
    if term_text is None:
        return _source_text(f, 0)
    if term_text is flag_term_text:
        return _flags_text(f, 0, CONVENTION)

    def sub(g: Formula, outer: int) -> str:
        return _render(g, term_text, outer, sub)  # type: ignore[arg-type]

    return sub(f, 0)


def render_flags(f: Formula, spellings: Spellings = CONVENTION) -> str:
    """The formula in command-line terms: `--disaggregation-mode != "decode"`."""
    return _flags_text(f, 0, spellings)


def flag_term_text(term: Term, spellings: Spellings = CONVENTION) -> str:
    if term.kind not in (TermKind.FIELD, TermKind.RESOLVED):
        return readable_text(term.text, spellings)
    # A field as the run resolved it reads as its flag, like the field itself: pages say once, beside
    # the condition, that flags are read as SGLang resolves them (`reads_resolved`).
    text = spellings.text(term.name)
    for t in term.transforms:
        text = f"{t}({text})" if t in ("int", "float", "str", "len", "bool", "abs") else f"{text}.{t}()"
    return text


def _term_text(term: Term) -> str:
    return term.text


# Triggers share most of their subformulas (a callee's guards all carry the caller's path), and each
# is written as source and as flags: the two standard renderings are kept per subformula.
@lru_cache(maxsize=65536)
def _source_text(f: Formula, outer: int) -> str:
    return _render(f, _term_text, outer, _source_text)


@lru_cache(maxsize=65536)
def _flags_text(f: Formula, outer: int, spellings: Spellings) -> str:
    return _render(f, lambda term: flag_term_text(term, spellings), outer,
                   lambda g, o: _flags_text(g, o, spellings))


def _render(f: Formula, show: Callable[[Term], str], outer: int, sub: Callable[[Formula, int], str]) -> str:
    if isinstance(f, Const):
        return "True" if f.value else "False"
    if isinstance(f, Atom):
        text = _render_atom(f, show)
        # A comparison inside `not` needs no parentheses; inside nothing else either.
        return text
    prec = _PREC[type(f)]
    if isinstance(f, Not):
        inner = f.arg
        body = sub(inner, prec)
        if isinstance(inner, Atom) and inner.op != "truthy":
            body = f"({body})"
        text = f"not {body}"
    else:
        joiner = " or " if isinstance(f, Or) else " and "
        text = joiner.join(sub(arg, prec) for arg in f.args)
    return f"({text})" if prec < outer else text


def _render_atom(atom: Atom, show: Callable[[Term], str]) -> str:
    left = show(atom.term)
    if atom.op == "truthy":
        return left
    right = show(atom.other) if isinstance(atom.other, Term) else literal_source(atom.other.value)  # type: ignore[union-attr]
    if atom.op in ("contains", "not contains"):
        op = "in" if atom.op == "contains" else "not in"
        return f"{right} {op} {left}"
    return f"{left} {atom.op} {right}"


def literal_source(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, tuple):
        return "[" + ", ".join(literal_source(v) for v in value) + "]"
    return repr(value)


# --- three-valued evaluation (Kleene): True, False or None for unknown ---------------------------


def evaluate(f: Formula, value_of: Callable[[Term], object], memo: dict | None = None) -> bool | None:
    """Evaluate with `value_of(term)` giving a term's value or raising LookupError when unknown.

    With `memo` (one per set of values), each distinct subformula is evaluated once: triggers share
    large subformulas (a resolved field's writes), and a document read back interns them.
    """
    if isinstance(f, Const):
        return f.value
    if memo is not None:
        found = memo.get(f, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
    if isinstance(f, Not):
        v = evaluate(f.arg, value_of, memo)
        result: bool | None = None if v is None else not v
    elif isinstance(f, And):
        result = True
        for arg in f.args:
            v = evaluate(arg, value_of, memo)
            if v is False:
                result = False
                break
            if v is None:
                result = None
    elif isinstance(f, Or):
        result = False
        for arg in f.args:
            v = evaluate(arg, value_of, memo)
            if v is True:
                result = True
                break
            if v is None:
                result = None
    else:
        result = evaluate_atom(f, value_of)
    if memo is not None:
        memo[f] = result
    return result


_MISSING = object()


class OneOf:
    """A term's value known only as one of several (a resolved field whose last writes are undecided)."""

    __slots__ = ("values",)

    def __init__(self, values: Iterable[object]) -> None:
        self.values = tuple(values)


def evaluate_atom(atom: Atom, value_of: Callable[[Term], object]) -> bool | None:
    try:
        left = value_of(atom.term)
        right = value_of(atom.other) if isinstance(atom.other, Term) else (atom.other.value if atom.other else None)
    except LookupError:
        return None
    lefts = left.values if isinstance(left, OneOf) else (left,)
    rights = right.values if isinstance(right, OneOf) else (right,)
    results = set()
    for a in lefts:
        for b in rights:
            try:
                results.add(bool(compare(a, atom.op, b)))
            except (TypeError, ValueError, AttributeError):
                return None
            if len(results) > 1:
                return None  # the values it may hold disagree
    return results.pop() if results else None


# What a comparison of a value with itself gives (launch values hold no NaN).
REFLEXIVE_TRUTH = {"==": True, "is": True, "<=": True, ">=": True, "!=": False, "is not": False, "<": False, ">": False}


def compare(left: object, op: str, right: object) -> bool:
    # A literal keeps no container type (`Lit` holds a tuple for `[1, 2]` too): against a value that is
    # no tuple (a list from a config) it is the list the source wrote; against a tuple, `(major, minor)
    # < (8, 9)`, a tuple, as Python compares them (a tuple is never less than a list: TypeError).
    if isinstance(right, tuple) and not isinstance(left, tuple):
        right = list(right)
    match op:
        case "truthy":
            return bool(left)
        case "==":
            return left == right
        case "!=":
            return left != right
        case "<":
            return left < right  # type: ignore[operator]
        case "<=":
            return left <= right  # type: ignore[operator]
        case ">":
            return left > right  # type: ignore[operator]
        case ">=":
            return left >= right  # type: ignore[operator]
        case "in":
            return left in right  # type: ignore[operator]
        case "not in":
            return left not in right  # type: ignore[operator]
        case "is":
            # Exact for the singletons None, True and False. Between other values identity is not a
            # property of the values (two equal strings may or may not be one object): a literal there
            # stands for an Enum member or interned constant, the same value of the same type.
            if left is None or right is None or isinstance(left, bool) or isinstance(right, bool):
                return left is right
            return type(left) is type(right) and left == right
        case "is not":
            return not compare(left, "is", right)
        case "contains":
            return right in left  # type: ignore[operator]
        case "not contains":
            return right not in left  # type: ignore[operator]
    raise ValueError(op)


def apply_transforms(value: object, transforms: Iterable[str]) -> object:
    for t in transforms:
        if t in ("lower", "upper", "strip", "casefold"):
            value = getattr(value, t)()
        else:
            value = {"int": int, "float": float, "str": str, "len": len, "bool": bool, "abs": abs}[t](value)
    return value


def field_values(assignment: Mapping[str, object]) -> Callable[[Term], object]:
    """A `value_of` for `evaluate` that knows field values only."""

    def value_of(term: Term) -> object:
        if term.kind is TermKind.FIELD and term.name in assignment:
            return apply_transforms(assignment[term.name], term.transforms)
        raise LookupError(term.text)

    return value_of


# A field after its first K writes of the run, as a name inside an opaque term's source text
# (`moe_runner_backend__v3.startswith("lora")`): the evaluator reads it from the resolution table.
_PINNED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*?)__v(\d+)$")
_PINNED_IN_TEXT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*?)__v(\d+)\b")


def readable_text(text: str, spellings: Spellings = CONVENTION) -> str:
    """A term's source text as people read it: the walk's names for a field at a point of the run
    (`model_path__v2`) as the field's flag, its names for an object's attribute (`self__quantization`)
    as the source writes them, a run term (`raised_in('m:C.f', 2, ...)`) as the method that raises."""
    if text.startswith("resolved(") and text.endswith(")"):  # an expression over resolved fields
        text = text[len("resolved("):-1]
    if "__" not in text and RUN_FUNCTION not in text:
        return text
    run = _RUN_TERM.match(text)
    if run is not None:
        return f"{run.group(1)}(...) raises here"
    text = _PINNED_IN_TEXT.sub(lambda m: spellings.text(m.group(1)), text)
    return _OBJECT_LOCAL.sub(lambda m: f"{m.group(1)}.{m.group(2)}", text)


def reads_resolved(f: Formula) -> bool:
    """Whether a formula reads a field as the run resolved it (after defaults and adjustments)."""
    return any(t.kind is TermKind.RESOLVED or (t.kind is not TermKind.FIELD and _PINNED_IN_TEXT.search(t.text))
               for t in terms(f))


_RUN_TERM = re.compile(RUN_FUNCTION + r"""\(['"][\w.]+:([\w.]+)['"], \d+""")
_OBJECT_LOCAL = re.compile(r"\b(self)__([A-Za-z_]\w*)\b")


def pinned_name(field: str, version: int) -> str:
    return f"{field}__v{version}"


def pinned_in(text: str) -> list[tuple[str, int]]:
    """The (field, version) of every `field__vK` name in a term's text."""
    return [(m.group(1), int(m.group(2))) for m in _PINNED_IN_TEXT.finditer(text)] if "__v" in text else []


def parse_pinned(name: str) -> tuple[str, int] | None:
    found = _PINNED.match(name)
    return (found.group(1), int(found.group(2))) if found else None
