"""Three-valued (Kleene) truth of rule triggers under what is known of one launch.

Field atoms take the command line's values and the defaults; environment variables are unset
unless given, `envs.X.get()` reads its declared default; platform, model and other opaque atoms are
unknown unless assumed or decided by a platform profile and the model's config.json (`logic.facts`).
Triggers already read each field as the run resolved it.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..core.formula import (CONVENTION, OneOf, Spellings, apply_transforms, compare, conj, disj, distinct_atoms,
                            evaluate, evaluate_atom, every_atom, neg, parse_pinned, pinned_in, pinned_name, render_flags)
from ..core.model import And, Atom, Const, Formula, Not, Or, Rule, Term, TermKind, Write
from .environment import EnvVar, env_default, parse_env
from .facts import Facts
from .launch_host import PATH_TEST
from .assumptions import assumption_key
from .carried import Carried, Inherited
from .reads import FormulaReads
from .truth_tables import truth_table
from .model_config import MODEL_CONFIG_FIELDS
from .expressions import UNKNOWN, Unknown, safe_eval

# ---- values of terms ---------------------------------------------------------------------------------


@dataclass
class Context:
    """What is known when evaluating: field values, the environment, assumed atoms."""

    values: dict[str, object]
    env: Mapping[str, str] = field(default_factory=dict)
    envs: Mapping[str, EnvVar] | None = None
    assume: Mapping[str, bool] = field(default_factory=dict)  # normalized atom or term text -> truth
    spellings: Spellings = CONVENTION  # how the catalog spells each field's flag
    writes: Mapping[str, Sequence[Write]] = field(default_factory=dict)  # the resolution table by field
    facts: Facts | None = None  # the platform profile and the model, when known
    _resolved: dict[tuple[str, int], tuple[object, ...]] = field(default_factory=dict, init=False, repr=False)
    memo: dict = field(default_factory=dict, init=False, repr=False)  # truths of subformulas under these values

    _residuals: dict = field(default_factory=dict, init=False, repr=False)  # formulas with known atoms folded
    _terms: dict = field(default_factory=dict, init=False, repr=False)  # id(term) -> (term, value, LookupError)
    _decided: dict = field(default_factory=dict, init=False, repr=False)  # formula -> `decided`
    _failures: dict = field(default_factory=dict, init=False, repr=False)  # id(f) -> (f, `failure_reached`)
    # Formulas `decided` true because Python fails evaluating them (`x % 0`), by the exception's name.
    failing: dict = field(default_factory=dict, init=False, repr=False)

    def __getstate__(self) -> dict:
        # Terms are memoized by id, not kept; the truths, folded forms and failures of subformulas and
        # the resolved fields are (a baseline in a rule set's index).
        if type(self.memo) is not dict:
            raise TypeError("only a context evaluated on its own is kept")
        return {**self.__dict__, "_terms": {}, "_failures": {}}

    def inherit(self, base: Context, reads: FormulaReads, changed: frozenset[str]) -> None:
        """Take `base`'s truth (and folded form) of every subformula, and its values of every resolved
        field, that read none of the `changed` names. `base` must hold the same values, environment,
        assumptions, tables and facts but for those names; `reads` over-counts what each reads
        (`logic.reads`). Many command lines a flag or two apart (the witness search, a command's
        fixes) are then evaluated mostly once, on the base."""
        self.memo = Inherited(base, reads, changed)

    def changed_from(self, base: Context) -> frozenset[str] | None:
        """The fields whose values differ on `base`, a launch with the same environment, assumptions,
        tables and facts; None when it differs in more than values."""
        if self.env != base.env or self.envs is not base.envs or self.assume != base.assume \
                or self.writes is not base.writes or not _same_facts(self.facts, base.facts):
            return None
        absent = object()
        return frozenset(name for name in self.values.keys() | base.values.keys()
                         if not identical(self.values.get(name, absent), base.values.get(name, absent)))

    def carry(self, base: Evaluator, reads: FormulaReads, changed: frozenset[str],
              states: dict[tuple, object] | None = None) -> Carried:
        """Take from `base`, the evaluation of another launch that differs from this one in the values
        of the `changed` names only, the truth of every subformula whose atoms this launch leaves
        as they are there: an atom reading none of those names, or one reading some whose truth,
        and when unknown what it waits for and how Python fails on it, come out the same here (a
        model path other than the base's: its `not in ["none", "dummy"]` test holds on both).
        `states`: what other launches carried from `base` found of atoms and chains, shared."""
        self.memo = carried = Carried(base, reads, changed, states, self.values)
        return carried

    def truth(self, f: Formula) -> bool | None:
        """The three-valued (Kleene) truth of a formula under what is known."""
        return evaluate(f, self.value_of, self.memo)

    def decided(self, f: Formula) -> bool | None:
        """Kleene's truth, then, when that is unknown, whether the formula holds (or fails) whatever
        its unknown atoms are.

        Kleene's logic leaves `a and x or a and not x` unknown while `x` is; the launch decides it
        either way. Folding the known atoms and trying every truth of the few left says so. The
        atoms are taken as independent, which only ever leaves more unknown, never less. Costlier
        than `truth`: for a trigger's final answer, not for every subformula.
        """
        found = self._decided.get(f, _ABSENT)
        if found is _ABSENT:
            memo = self.memo
            if isinstance(memo, Inherited) and memo.inherits(f):  # and so how Python fails on it
                found = memo.base.decided(f)
                if f in memo.base.failing:
                    self.failing[f] = memo.base.failing[f]
            else:
                found = self._decide(f)
            self._decided[f] = found
        return found  # type: ignore[return-value]

    def _decide(self, f: Formula) -> bool | None:
        failing = self.failure_reached(f)
        if failing is not None:
            self.failing[f] = self.raises(failing)
            return True  # Python stops there, before the guard's own test is decided: so does the launch
        found = evaluate(f, self.value_of, self.memo)
        if found is not None or isinstance(f, Atom):
            return found
        residual = self._residual(f)
        if isinstance(residual, Const):
            return residual.value
        left = distinct_atoms(residual, MAX_ENUMERATED_ATOMS)
        if left is None:
            return None
        table = truth_table(residual, left)
        full = (1 << (1 << len(left))) - 1
        if table not in (0, full) and (failures := [self.raises(atom) for atom in left]) and all(failures):
            self.failing[f] = failures[0]
            return True  # Python fails on the first of them it reaches (`x % 0`): the launch stops here
        return True if table == full else False if table == 0 else None

    def raises(self, atom: Atom) -> str | None:
        """The exception Python raises evaluating the atom on the launch's values (`tp_size % nnodes`
        with `--nnodes 0`: "ZeroDivisionError"; `speculative_eagle_topk > 1` while it is None: "TypeError:
        '>' not supported between instances of 'NoneType' and 'int'"), every value it reads known;
        None if it does not."""
        known = True
        for term in (atom.term, atom.other):
            if isinstance(term, Term):
                try:
                    self.value_of(term)
                except LookupError as error:
                    if isinstance(error.__cause__, ArithmeticError):
                        return type(error.__cause__).__name__
                    known = False
        return _ordering_failure(atom, self.value_of) if known and atom.op in _ORDERING else None

    def failure_reached(self, f: Formula) -> Atom | None:
        """The test Python cannot evaluate (`raises`) that it surely reaches evaluating `f` left to
        right on this launch before the outcome is decided: every part and-ed before it holds, every
        part or-ed before it fails. None when there is none, or Python may not reach it (a part before
        it is undecided). A guard's trigger keeps the order Python tests its parts in (`formula.conj`)."""
        if isinstance(f, Atom):
            return f if self.truth(f) is None and self.raises(f) is not None else None
        if isinstance(f, Not):
            return self.failure_reached(f.arg)
        if not isinstance(f, (And, Or)):
            return None
        found = self._failures.get(id(f))  # triggers share their path conditions: each walked once
        if found is not None:
            return found[1]
        failing = None
        going_on = isinstance(f, And)  # what a part must come out for Python to test the next
        for part in f.args:
            truth = self.truth(part)
            if isinstance(part, Atom):  # most parts: no call for them
                failing = part if truth is None and self.raises(part) is not None else None
            else:
                failing = self.failure_reached(part)
            if failing is not None or truth is not going_on:
                break
        self._failures[id(f)] = (f, failing)  # the formula kept with its id: an id is never another's
        return failing

    def _residual(self, f: Formula) -> Formula:
        """The formula with each atom the launch decides replaced by its truth, simplified."""
        found = self._residuals.get(f)
        if found is None:
            if isinstance(self.memo, Inherited) and self.memo.inherits(f):
                found = self.memo.base._residual(f)
            elif isinstance(f, Atom):
                value = evaluate(f, self.value_of, self.memo)
                found = f if value is None else Const(value)
            elif isinstance(f, Not):
                found = neg(self._residual(f.arg))
            elif isinstance(f, And):
                found = conj(*(self._residual(a) for a in f.args))
            elif isinstance(f, Or):
                found = disj(*(self._residual(a) for a in f.args))
            else:
                found = f
            self._residuals[f] = found
        return found

    def value_of(self, term: Term) -> object:
        """A term's value, or LookupError when the command line does not decide it (each term worked
        out once per launch: triggers, their residues and `undecided` ask for the same ones)."""
        found = self._terms.get(id(term))
        if found is None:
            try:
                found = (term, self._value_of(term), None)
            except LookupError as error:
                cause = error.__cause__ or error  # what `raises` reads (`ZeroDivisionError`)
                cause.__traceback__ = cause.__context__ = None  # nothing kept of where it was raised
                found = (term, None, cause)
            self._terms[id(term)] = found  # the term kept with its id: an id is never another's
        if found[2] is not None:
            # A new exception each time (one raised again would chain every handler it crossed).
            raise LookupError(term.text) from found[2]
        return found[1]

    def _value_of(self, term: Term) -> object:
        try:
            if term.kind is TermKind.FIELD:
                value = self.values.get(term.name, UNKNOWN)
                if value is UNKNOWN:
                    raise Unknown(term.name)
                return apply_transforms(value, term.transforms)
            if term.kind is TermKind.RESOLVED:
                values = self.resolved(term.name, term.version)
                if len(values) == 1:
                    return apply_transforms(values[0], term.transforms)
                return OneOf(apply_transforms(v, term.transforms) for v in values)
            if self.assume and (key := assumption_key(term.text)) in self.assume:
                return self.assume[key]
            if term.kind in (TermKind.PLATFORM, TermKind.MODEL):
                if self.facts is None or (term.kind is TermKind.PLATFORM and self.facts.platform is None):
                    raise Unknown(term.text)  # what the machine answers, without a profile: unknown
                return self._facts_value(term)
            if term.text.isidentifier():
                if self.facts is None or self.facts.helpers is None or term.text not in self.facts.helpers.names:
                    raise Unknown(term.text)  # a local of SGLang's whose value the walk lost, never the flag of that name
                return self.facts.value(term.text, {})  # a module constant the terms read (0.5.23's dict comprehension)
            try:
                return safe_eval(term.text, _Pinned(self, term.fields), self._env_value)
            except Unknown:
                if self.facts is None or term.kind is not TermKind.OPAQUE:
                    raise
            # Out of the handler: what the facts raise does not chain onto it.
            return self._facts_value(term)
        except LookupError:
            raise
        except Exception as error:  # Unknown, or the expression fails on these values
            raise LookupError(term.text) from error

    def _facts_value(self, term: Term) -> object:
        """A term read over the facts. Where a field it names as the run resolved it (`x__v3`) is
        one of a few values, the term is read on each: one value when they all agree."""
        assert self.facts is not None
        fields, choices = self._fields_of(term)
        if not choices:
            return self.facts.value(term.text, fields)
        found = []
        for chosen in itertools.product(*(((name, value) for value in values) for name, values in choices.items())):
            value = self.facts.value_on(term.text, {**fields, **dict(chosen)})
            if value not in found:
                found.append(value)
        return found[0] if len(found) == 1 else OneOf(found)

    def _fields_of(self, term: Term) -> tuple[dict[str, object], dict[str, tuple[object, ...]]]:
        """The values of the fields a term reads, and of those it reads as the run resolved them
        (`model_path__v2`) when one; those that are one of a few (at most `MAX_CHOICES` readings in all)."""
        # With the fields `model_config_of(...)` is built from (`--is-embedding`), which the term's
        # text does not name.
        names = (*term.fields, *MODEL_CONFIG_FIELDS)
        found = {name: self.values[name] for name in names if self.values.get(name, UNKNOWN) is not UNKNOWN}
        choices: dict[str, tuple[object, ...]] = {}
        for name, version in pinned_in(term.text):  # `model_path__v2`: the field as the run resolved it
            try:
                values = self.resolved(name, version)
            except Unknown:
                continue
            if len(values) == 1:
                found[pinned_name(name, version)] = values[0]
            elif math.prod(len(v) for v in choices.values()) * len(values) <= MAX_CHOICES:
                choices[pinned_name(name, version)] = values
        return found, choices

    def resolved(self, name: str, version: int) -> tuple[object, ...]:
        """The values a field may hold after its first `version` writes of the run; Unknown when one of
        them is unknown. Memoized per launch, the unknown answers too: chains share their writes."""
        key = (name, version)
        found = self._resolved.get(key)
        if found is None:
            if isinstance(self.memo, Inherited) and self.memo.inherits_chain(key):
                found = self.memo.base.resolution(key)
            else:
                try:
                    found = self._resolve(name, version)
                except LookupError:
                    found = _UNDECIDED
            self._resolved[key] = found
        if found is _UNDECIDED:
            raise Unknown(f"resolved({name})")
        return found

    def resolution(self, key: tuple[str, int]) -> tuple[object, ...]:
        """`resolved(*key)`, with a memoized "unknown" for Unknown (what an inheriting context takes)."""
        try:
            return self.resolved(*key)
        except Unknown:
            return _UNDECIDED

    def _resolve(self, name: str, version: int) -> tuple[object, ...]:
        writes = self.writes.get(name, ())
        if version > len(writes):
            raise Unknown(f"resolved({name})")  # a table that does not reach this far
        if version == 0:
            typed = self.values.get(name, UNKNOWN)
            if typed is UNKNOWN:
                raise Unknown(name)
            return (typed,)
        write = writes[version - 1]
        when = self.truth(write.when)
        earlier = () if when is True else self.resolved(name, version - 1)
        written = () if when is False else self._written(write)
        return _distinct((*written, *earlier))

    def _written(self, write: Write) -> tuple[object, ...]:
        values: list[object] = []
        for when, value in write.cases:
            holds = self.truth(when)
            if holds is False:
                continue
            if isinstance(value, Term):
                got = self.value_of(value)
                values.extend(got.values if isinstance(got, OneOf) else (got,))
            else:
                values.append(value.value)
            if holds is True:
                break
        return tuple(values)

    def _env_value(self, name: str, how: str) -> object:
        var = (self.envs or {}).get(name)
        text = self.env.get(name)
        if text is None and var is not None and var.alias:
            text = self.env.get(var.alias)
        if how == "is_set":
            return text is not None
        if how == "environ":  # os.environ.get / os.getenv: the raw string
            return text
        if var is None:
            raise Unknown(name)  # not declared in environ.py (or it was not at hand): no parser, no default
        return env_default(var) if text is None else parse_env(var, text)


_ORDERING = frozenset(("<", "<=", ">", ">="))


def _ordering_failure(atom: Atom, value_of: Callable[[Term], object]) -> str | None:
    """Python's TypeError for an order comparison of None with a number (a flag left at its None
    default and compared as if set: `speculative_eagle_topk > 1`), when every value each side may
    hold makes such a pair; None otherwise. No other mix is taken as failing: where the values' types
    are less sure (a string against a number), the comparison stays undecided."""
    left = value_of(atom.term)
    right = value_of(atom.other) if isinstance(atom.other, Term) else atom.other.value if atom.other else None
    pairs = [(a, b) for a in (left.values if isinstance(left, OneOf) else (left,))
             for b in (right.values if isinstance(right, OneOf) else (right,))]
    if not pairs or not all((a is None) != (b is None) and isinstance(b if a is None else a, (int, float))
                            for a, b in pairs):
        return None
    try:
        compare(pairs[0][0], atom.op, pairs[0][1])
    except TypeError as error:
        return f"TypeError: {error}"
    return None


_ABSENT = object()


class _Ancestors:
    """The subformulas over each atom of a formula (those whose truth forcing the atom may change)."""

    def __init__(self, formula: Formula) -> None:
        self.parents: dict[int, list[int]] = {}
        self.atoms: dict[Atom, list[int]] = {}  # each atom, by equality, to its nodes
        seen: set[int] = set()
        stack = [formula]
        while stack:
            g = stack.pop()
            if id(g) in seen:
                continue
            seen.add(id(g))
            children = (g.arg,) if isinstance(g, Not) else g.args if isinstance(g, (And, Or)) else ()
            for child in children:
                self.parents.setdefault(id(child), []).append(id(g))
                stack.append(child)
            if isinstance(g, Atom):
                self.atoms.setdefault(g, []).append(id(g))

    def of(self, atom: Atom) -> set[int]:
        found: set[int] = set()
        todo = list(self.atoms.get(atom, ()))
        while todo:
            node = todo.pop()
            if node not in found:
                found.add(node)
                todo += self.parents.get(node, ())
        return found


class _Forced(dict):
    """Truths of subformulas with one atom forced (`Evaluator.undecided`): a subformula not over it
    is what the launch makes it (`Context.truth`); those over it are evaluated again."""

    def __init__(self, atom: Atom, value: bool, over: set[int], context: Context) -> None:
        super().__init__({atom: value})
        self.over = over
        self.context = context

    def get(self, f: Formula, default: object = None) -> object:  # type: ignore[override]
        found = dict.get(self, f, _ABSENT)
        if found is _ABSENT:
            if id(f) in self.over:
                return default
            found = self[f] = self.context.truth(f)
        return found
class _Unresolved:
    """A memoized "unknown" resolved field, kept by name when a context is pickled (a baseline's)."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "_UNDECIDED"


_UNDECIDED: tuple = _Unresolved()  # type: ignore[assignment]
MAX_CHOICES = 8  # readings of a term over the values a resolved field it names may have, at most
MAX_ENUMERATED_ATOMS = 8  # unknown atoms left after folding whose every truth is tried


class _Pinned(Mapping):
    """The launch values of the fields an opaque term reads, plus `field__vK` names read as the field
    after its first K writes. Other names are no fields: a helper's local `moe_runner_backend` whose
    value the walk lost is not the flag of that name."""

    def __init__(self, context: Context, fields: Sequence[str]) -> None:
        self.context = context
        self.fields = fields

    def __getitem__(self, name: str) -> object:
        value = self.get(name, UNKNOWN)
        if value is UNKNOWN:
            raise KeyError(name)
        return value

    def get(self, name: str, default: object = None) -> object:
        pinned = parse_pinned(name)
        if pinned is None:
            return self.context.values.get(name, default) if name in self.fields else default
        values = self.context.resolved(*pinned)  # Unknown when undecided
        if len(values) != 1:
            raise Unknown(name)
        return values[0]

    def __iter__(self):
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)


def _same_facts(a: Facts | None, b: Facts | None) -> bool:
    """The same platform, model, host, helpers and environment (each fact cache its own)."""
    if a is None or b is None:
        return a is b
    return (a.platform == b.platform and a.model == b.model and a.host == b.host and a.helpers is b.helpers
            and a.env == b.env and a.envs is b.envs)


def identical(a: object, b: object) -> bool:
    """The same value of the same type (1, 1.0 and True are three values to a trigger)."""
    return type(a) is type(b) and a == b


def _distinct(values: Sequence[object]) -> tuple[object, ...]:
    found: list[object] = []
    for value in values:
        if not any(type(value) is type(v) and value == v for v in found):
            found.append(value)
    return tuple(found)


# ---- evaluating rules ----------------------------------------------------------------------------------


class Evaluator:
    """Three-valued truth of rule triggers for one command line.

    A trigger already reads every field as the run resolved it (earlier writes composed), so it is
    evaluated over the launch values directly.
    """

    def __init__(self, rules: Sequence[Rule] | Mapping[str, Rule], context: Context) -> None:
        self.context = context
        self.rules = rules if isinstance(rules, Mapping) else {r.id: r for r in rules}
        self._firing: dict[str, bool | None] = {}
        self._chain_kinds: dict[tuple[str, int], int] = {}  # what each undecided resolved field waits for
        self._atom_kind_memo: dict[Atom, int] = {}  # as a rank in MISSING_KINDS (`_atom_rank`)
        self._states: dict[Atom, tuple] = {}
        if isinstance(context.memo, Carried):
            context.memo.evaluator = self

    def state(self, atom: Atom, fresh: bool = False) -> tuple:
        """What decides the outcome of every formula over the atom: its truth on the launch, and, when
        unknown, what it waits for and the exception Python raises on it. `fresh`: its truth worked
        out here, not taken from a base (`Context.carry` asks it to compare the two)."""
        found = self._states.get(atom)
        if found is None:
            truth = evaluate_atom(atom, self.context.value_of) if fresh else self.context.truth(atom)
            found = self._states[atom] = (truth,) if truth is not None else \
                (None, self._atom_rank(atom, set()), self.context.raises(atom))
        return found

    def fires(self, adjustment_id: str) -> bool | None:
        """Whether an adjustment runs."""
        if adjustment_id not in self._firing:
            rule = self.rules.get(adjustment_id)
            self._firing[adjustment_id] = None if rule is None else (
                self.context.decided(rule.effective) if rule.reachable else False)
        return self._firing[adjustment_id]

    def holds(self, rule: Rule) -> bool | None:
        """The trigger's truth alone (`truth` without the adjustments that may change it)."""
        return self.context.decided(rule.effective)

    def truth(self, rule: Rule) -> tuple[bool | None, tuple[str, ...]]:
        """The trigger's truth, and the earlier adjustments that write what it reads and may run."""
        truth = self.context.decided(rule.effective)
        changed = tuple(a for a in rule.affected_by if a in self.rules and self.fires(a) is not False) \
            if truth is None else ()
        return truth, changed

    def undecided(self, rule: Rule) -> tuple[Atom, ...]:
        """The undecided atoms that would decide the trigger either way (what the user could pin down),
        left to right; `spelled` writes them as the user types them, `missing` says what each waits for."""
        formula = rule.effective
        open_atoms = [atom for atom in every_atom(formula) if self.context.truth(atom) is None]
        # Forcing each atom either way costs a whole evaluation per atom: worth it for a few, and
        # past that every undecided atom is listed (it is undecided, if not always deciding).
        if not open_atoms or len(open_atoms) > MAX_FORCED_ATOMS:
            return tuple(open_atoms)
        above = _Ancestors(formula)
        return tuple(atom for atom in open_atoms
                     if self._forced(formula, atom, True, above) != self._forced(formula, atom, False, above))

    def spelled(self, atoms: Sequence[Atom]) -> tuple[str, ...]:
        """Atoms as the user types them (flags spelled as options), each text once: rendering is asked
        only of the findings whose undecided conditions are shown (JSON, `--show-possible`)."""
        return tuple(dict.fromkeys(render_flags(atom, self.context.spellings) for atom in atoms))

    def _forced(self, formula: Formula, atom: Atom, value: bool, above: _Ancestors) -> bool | None:
        """The formula's truth with the atom taken as `value`: only the subformulas over it are
        evaluated again, the others are what they are on the launch."""
        return evaluate(formula, self.context.value_of, _Forced(atom, value, above.of(atom), self.context))

    def missing(self, atom: Atom) -> str:
        """What an undecided atom waits for, the most specific first: platform, model, environment, code."""
        rank = self._atom_rank(atom, set())
        return MISSING_KINDS[rank] if rank < _NOTHING else "code"

    # What an atom, a term or a resolved field waits for is the most specific kind among what its
    # undecided parts wait for: its rank in MISSING_KINDS, the lowest found (`_NOTHING`: none). The
    # search stops at the most specific (a platform fact): nothing found after it would come first.

    def _atom_rank(self, atom: Atom, seen: set) -> int:
        found = self._atom_kind_memo.get(atom)
        if found is None:
            memo = self.context.memo
            if isinstance(memo, Carried) and not memo.changes(atom):  # what it waits for there, it waits for here
                found = self._atom_kind_memo[atom] = memo.base_evaluator._atom_rank(atom, set())
            else:
                found = self._atom_kind_memo[atom] = self._atom_rank_of(atom, seen)
        return found

    def _atom_rank_of(self, atom: Atom, seen: set) -> int:
        rank = _NOTHING
        for term in (atom.term, atom.other):
            if isinstance(term, Term):
                try:
                    self.context.value_of(term)
                except LookupError:
                    rank = min(rank, self._term_rank(term, seen))
                    if rank == 0:
                        break
        return rank

    def _term_rank(self, term: Term, seen: set) -> int:
        if term.kind is TermKind.RESOLVED:
            key = (term.name, term.version)
            if key in self._chain_kinds:
                return self._chain_kinds[key]
            if key in seen:
                return _NOTHING
            seen.add(key)
            rank = self._chain_kinds[key] = self._resolved_rank(term, seen)
            return rank
        if term.kind is TermKind.OPAQUE and PATH_TEST.search(term.text):
            return _FILES  # a path on the launch host (`check --local` there decides it)
        if term.kind is TermKind.OPAQUE and "__v" in term.text:  # fields as the run resolved them
            rank = _NOTHING
            for name in re.findall(r"\b\w+__v\d+\b", term.text):
                field, version = parse_pinned(name) or (name, 0)
                rank = min(rank, self._term_rank(Term(TermKind.RESOLVED, field, name, (field,), version=version), seen))
                if rank == 0:
                    break
            return rank if rank < _NOTHING else _CODE
        return MISSING_KINDS.index(_MISSING_OF.get(term.kind, "code"))

    def _resolved_rank(self, term: Term, seen: set) -> int:
        rank = _NOTHING
        for write in self.context.writes.get(term.name, ())[:term.version]:
            for f in (write.when, *(when for when, _ in write.cases)):
                for atom in every_atom(f):
                    if self.context.truth(atom) is None:
                        rank = min(rank, self._atom_rank(atom, seen))
                        if rank == 0:
                            return rank
            for _, value in write.cases:
                if isinstance(value, Term):
                    rank = min(rank, self._atom_rank(Atom(value), seen))
                    if rank == 0:
                        return rank
        typed = self.context.values.get(term.name)
        return rank if rank < _NOTHING else _CODE if typed is UNKNOWN else _NOTHING


MISSING_KINDS = ("platform", "model", "environment", "files", "code")
_FILES, _CODE, _NOTHING = MISSING_KINDS.index("files"), MISSING_KINDS.index("code"), len(MISSING_KINDS)
MAX_FORCED_ATOMS = 12  # undecided atoms of one trigger tested one by one for whether they decide it
_MISSING_OF = {TermKind.PLATFORM: "platform", TermKind.MODEL: "model", TermKind.ENV: "environment"}
