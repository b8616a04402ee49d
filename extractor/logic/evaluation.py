"""Three-valued (Kleene) truth of rule triggers under what is known of one launch.

Field atoms take the command line's values and the defaults; environment variables are unset
unless given, `envs.X.get()` reads its declared default; platform, model and other opaque atoms are
unknown unless assumed or decided by a platform profile and the model's config.json (`logic.facts`).
Triggers already read each field as the run resolved it.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field

from ..core.formula import (CONVENTION, OneOf, Spellings, apply_transforms, conj, disj, distinct_atoms, evaluate, neg,
                            parse_pinned,
                            pinned_in, pinned_name, readable_text,
                            render, render_flags, fields_read, terms)
from ..core.model import And, Atom, Const, Formula, Lit, Not, Or, Rule, Term, TermKind, Write
from .environment import EnvVar, env_default, parse_env
from .facts import Facts, plain_value, run_site
from .launch_host import PATH_TEST
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
    # Formulas `decided` true because Python fails evaluating them (`x % 0`), by the exception's name.
    failing: dict = field(default_factory=dict, init=False, repr=False)

    def inherit(self, base: Context, reads: Callable[[Formula], frozenset[str]], changed: frozenset[str]) -> None:
        """Take `base`'s truth (and folded form) of every subformula that reads none of the `changed`
        names. `base` must hold the same values, environment, assumptions, tables and facts but for
        those names; `reads(f)`: every name the truth of `f` depends on, through the resolution table
        too. Many command lines a flag or two apart (the witness search) are then evaluated mostly
        once, on the base."""
        self.memo = _Inherited(base, reads, changed)

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
        with `--nnodes 0`: "ZeroDivisionError"), every value it reads known; None if it does not."""
        for term in (atom.term, atom.other):
            if isinstance(term, Term):
                try:
                    self.value_of(term)
                except LookupError as error:
                    if isinstance(error.__cause__, ArithmeticError):
                        return type(error.__cause__).__name__
        return None

    def _residual(self, f: Formula) -> Formula:
        """The formula with each atom the launch decides replaced by its truth, simplified."""
        found = self._residuals.get(f)
        if found is None:
            if isinstance(self.memo, _Inherited) and self.memo.inherits(f):
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
        """A term's value, or LookupError when the command line does not decide it."""
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
                return self.facts.value(term.text, self._fields_of(term))
            if term.text.isidentifier():
                raise Unknown(term.text)  # a local of SGLang's whose value the walk lost, never the flag of that name
            try:
                return safe_eval(term.text, _Pinned(self, term.fields), self._env_value)
            except Unknown:
                if self.facts is None or term.kind is not TermKind.OPAQUE:
                    raise
                return self.facts.value(term.text, self._fields_of(term))
        except LookupError:
            raise
        except Exception as error:  # Unknown, or the expression fails on these values
            raise LookupError(term.text) from error

    def _fields_of(self, term: Term) -> dict[str, object]:
        # With the fields `model_config_of(...)` is built from (`--is-embedding`), which the term's
        # text does not name.
        names = (*term.fields, *MODEL_CONFIG_FIELDS)
        found = {name: self.values[name] for name in names if self.values.get(name, UNKNOWN) is not UNKNOWN}
        for name, version in pinned_in(term.text):  # `model_path__v2`: the field as the run resolved it
            try:
                values = self.resolved(name, version)
            except Unknown:
                continue
            if len(values) == 1:
                found[pinned_name(name, version)] = values[0]
        return found

    def resolved(self, name: str, version: int) -> tuple[object, ...]:
        """The values a field may hold after its first `version` writes of the run; Unknown when one of
        them is unknown. Memoized per launch, the unknown answers too: chains share their writes."""
        key = (name, version)
        found = self._resolved.get(key)
        if found is None:
            try:
                found = self._resolve(name, version)
            except LookupError:
                found = _UNDECIDED
            self._resolved[key] = found
        if found is _UNDECIDED:
            raise Unknown(f"resolved({name})")
        return found

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


class _Inherited(dict):
    """A context's truths of subformulas (`Context.memo`) that answers, for a subformula reading none
    of the changed names, the base context's truth (see `Context.inherit`)."""

    def __init__(self, base: Context, reads: Callable[[Formula], frozenset[str]], changed: frozenset[str]) -> None:
        super().__init__()
        self.base = base
        self.reads = reads
        self.changed = changed

    def inherits(self, f: Formula) -> bool:
        """Does `f` read none of the changed names (so it is what it is on the base)?"""
        return self.changed.isdisjoint(self.reads(f))

    def get(self, f: Formula, default: object = None) -> object:  # type: ignore[override]
        found = dict.get(self, f, _ABSENT)
        if found is _ABSENT:
            if not self.inherits(f):
                return default
            found = self[f] = self.base.truth(f)
        return found


_ABSENT = object()
_UNDECIDED: tuple = (object(),)  # a memoized "unknown"
MAX_ENUMERATED_ATOMS = 8  # unknown atoms left after folding whose every truth is tried


def truth_table(f: Formula, variables: Sequence[Atom]) -> int:
    """The formula's truth under every assignment of `variables` (the only atoms it has), as the bits
    of one integer: bit k is its truth when atom i is true exactly where bit i of k is set.

    One pass over the formula with integers as bit vectors, instead of one evaluation per assignment
    (256 of them for 8 atoms, over triggers of thousands of nodes).
    """
    size = 1 << len(variables)
    full = (1 << size) - 1
    masks: dict[Formula, int] = {}
    for i, atom in enumerate(variables):
        block = (1 << (1 << i)) - 1  # 2^i ones: atom i is false for 2^i assignments, then true for as many
        period = block << (1 << i)
        mask = 0
        for start in range(0, size, 2 << i):
            mask |= period << start
        masks[atom] = mask
    memo: dict[int, int] = {}

    def table(g: Formula) -> int:
        if isinstance(g, Const):
            return full if g.value else 0
        found = memo.get(id(g))
        if found is not None:
            return found
        if isinstance(g, Not):
            result = full ^ table(g.arg)
        elif isinstance(g, And):
            result = full
            for arg in g.args:
                result &= table(arg)
                if not result:
                    break
        elif isinstance(g, Or):
            result = 0
            for arg in g.args:
                result |= table(arg)
                if result == full:
                    break
        else:
            result = masks[g]
        memo[id(g)] = result
        return result

    return table(f)


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


def _distinct(values: Sequence[object]) -> tuple[object, ...]:
    found: list[object] = []
    for value in values:
        if not any(type(value) is type(v) and value == v for v in found):
            found.append(value)
    return tuple(found)


def assumption_key(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


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
        self._chain_kinds: dict[tuple[str, int], set[str]] = {}  # what each undecided resolved field waits for
        self._atom_kind_memo: dict[Atom, set[str]] = {}

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

    def undecided(self, rule: Rule) -> tuple[tuple[str, str], ...]:
        """The undecided atoms that would decide the trigger either way (what the user could pin down),
        each as (flag-spelled text, what it is missing: `MISSING_KINDS`)."""
        found: dict[str, str] = {}
        formula = rule.effective
        open_atoms = [atom for atom in every_atom(formula) if self.context.truth(atom) is None]
        # Forcing each atom either way costs a whole evaluation per atom: worth it for a few, and
        # past that every undecided atom is listed (it is undecided, if not always deciding).
        test_each = len(open_atoms) <= MAX_FORCED_ATOMS
        for atom in open_atoms:
            if test_each and evaluate(formula, self.context.value_of, {atom: True}) == \
                    evaluate(formula, self.context.value_of, {atom: False}):
                continue
            found.setdefault(render_flags(atom, self.context.spellings), self.missing(atom))
        return tuple(found.items())

    def missing(self, atom: Atom) -> str:
        """What an undecided atom waits for, the most specific first: platform, model, environment, code."""
        kinds = self._atom_kinds(atom, set())
        return next((k for k in MISSING_KINDS if k in kinds), "code")

    def _atom_kinds(self, atom: Atom, seen: set) -> set[str]:
        found = self._atom_kind_memo.get(atom)
        if found is None:
            found = self._atom_kind_memo[atom] = self._atom_kinds_of(atom, seen)
        return found

    def _atom_kinds_of(self, atom: Atom, seen: set) -> set[str]:
        kinds: set[str] = set()
        for term in (atom.term, atom.other):
            if isinstance(term, Term):
                try:
                    self.context.value_of(term)
                except LookupError:
                    kinds |= self._term_kinds(term, seen)
        return kinds

    def _term_kinds(self, term: Term, seen: set) -> set[str]:
        if term.kind is TermKind.RESOLVED:
            key = (term.name, term.version)
            if key in self._chain_kinds:
                return self._chain_kinds[key]
            if key in seen:
                return set()
            seen.add(key)
            kinds = self._chain_kinds[key] = self._resolved_kinds(term, seen)
            return kinds
        if term.kind is TermKind.OPAQUE and PATH_TEST.search(term.text):
            return {"files"}  # a path on the launch host (`check --local` there decides it)
        if term.kind is TermKind.OPAQUE and "__v" in term.text:  # fields as the run resolved them
            kinds = set()
            for name in re.findall(r"\b\w+__v\d+\b", term.text):
                field, version = parse_pinned(name) or (name, 0)
                kinds |= self._term_kinds(Term(TermKind.RESOLVED, field, name, (field,), version=version), seen)
            return kinds or {"code"}
        return {_MISSING_OF.get(term.kind, "code")}

    def _resolved_kinds(self, term: Term, seen: set) -> set[str]:
        kinds: set[str] = set()
        for write in self.context.writes.get(term.name, ())[:term.version]:
            for f in (write.when, *(when for when, _ in write.cases)):
                for atom in every_atom(f):
                    if self.context.truth(atom) is None:
                        kinds |= self._atom_kinds(atom, seen)
            for _, value in write.cases:
                if isinstance(value, Term):
                    kinds |= self._atom_kinds(Atom(value), seen)
        typed = self.context.values.get(term.name)
        return kinds or ({"code"} if typed is UNKNOWN else set())


def filled_message(rule: Rule, context: Context, rewritten: Container[str] = ()) -> str:
    """The rule's message with its placeholders filled with what the launch shows there, where it
    is decided (one value): a placeholder reading one server argument with the value the field holds
    where the guard runs (not the fields in `rewritten`: an adjustment that may run may change them
    first); a local's or a constant's with what the extraction found it holds (`Rule.placeholders`);
    a check `check` runs with the method's own values where it stopped. Others as written."""
    if "{" not in rule.message:
        return rule.message
    sites = _run_sites(rule.trigger)
    if sites:
        stops = context.facts.stops if context.facts is not None else {}
        held = next((stops[site] for site in sites if site in stops), None)
        return _HELD_PLACEHOLDER.sub(lambda m: _shown(m, held.get(m.group(1), _NOT_SHOWN)), known_message(rule)) \
            if held else known_message(rule)

    def field_value(name: str) -> object:
        if name in rewritten:
            return _NOT_SHOWN
        before = sum(1 for w in context.writes.get(name, ()) if rule.order is not None and w.order < rule.order)
        try:
            values = context.resolved(name, before)
        except (LookupError, Unknown):
            return _NOT_SHOWN
        # None is not shown: `make verify` met a None here where SGLang printed 10 (0.5.23's
        # `{cfg.speculative_eagle_topk}` at speculative_hook.py:1361, a write the table lacks).
        if len(values) != 1 or values[0] is UNKNOWN or values[0] is None or not plain_value(values[0]):
            return _NOT_SHOWN
        return values[0]

    message = _FIELD_PLACEHOLDER.sub(lambda m: _shown(m, field_value(m.group(1))), known_message(rule))
    for name, value in rule.placeholders:
        if isinstance(value, Term):
            shown = field_value(value.name) if value.kind is TermKind.FIELD else _fact_value(value, context)
            message = _placeholder(name).sub(lambda m: _shown(m, shown), message)
    if "{" in message:
        message = _read_in_trigger(rule, message, context, field_value)
    return message


@functools.lru_cache(maxsize=4096)  # bounded: a process that reads many releases lets old formulas go
def _run_sites(trigger: Formula | None) -> tuple:
    """The methods a trigger runs over the launch (`raised_in(...)` terms), where each stops."""
    return tuple(site for atom in every_atom(trigger) if (site := run_site(atom.term.text)) is not None) \
        if trigger is not None else ()


@functools.lru_cache(maxsize=4096)
def _trigger_reads(trigger: Formula) -> tuple[frozenset[str], dict[str, Term]]:
    """The fields a trigger reads, and its platform, model and opaque terms by their text as people
    write it: what `_read_in_trigger` looks placeholders up in."""
    return frozenset(fields_read(trigger)), {readable_name(term.text): term for term in terms(trigger)
                                             if term.kind in (TermKind.MODEL, TermKind.PLATFORM, TermKind.OPAQUE)}


# `{context_length}`, `{get_context_length(self.hf_text_config)}`: a placeholder as plain source text.
_SOURCE_PLACEHOLDER = re.compile(r"(?<!\{)\{([^{}!]+?)(![rs])?\}(?!\})")


def _read_in_trigger(rule: Rule, message: str, context: Context, field_value: Callable[[str], object]) -> str:
    """Placeholders left that the guard's own condition reads: a bare field name the trigger tests
    (a parameter that carries the flag, `{context_length}`), or a term of it written the same way
    (`{get_context_length(self.hf_text_config)}`, a fact of the model's config.json), with the
    launch's value. What the trigger does not read stays as written."""
    fields, read = _trigger_reads(rule.effective)

    def value(match: re.Match) -> str:
        text = match.group(1).strip()
        if text in fields:
            return _shown(match, field_value(text))
        term = read.get(readable_name(text))
        # A call the message writes over its locals (`get_context_length(self.hf_text_config)`) is
        # in the trigger over the launch's values: the terms calling that function, if one value.
        call = re.match(r"([A-Za-z_][\w.]*)\(", text)
        candidates = [term] if term is not None else [t for key, t in read.items()
                                                      if call and key.startswith(call.group(0))]
        found = set()
        for candidate in candidates:
            try:
                got = context.value_of(candidate)
            except LookupError:
                return match.group(0)
            if not plain_value(got) or isinstance(got, OneOf):
                return match.group(0)
            found.add(got)
        return _shown(match, found.pop()) if len(found) == 1 else match.group(0)

    return _SOURCE_PLACEHOLDER.sub(value, message)


def readable_name(text: str) -> str:
    """Source text as people write it: the walk's `self__hf_text_config` is `self.hf_text_config`."""
    return re.sub(r"\s+", "", re.sub(r"\bself__", "self.", text))


def known_message(rule: Rule) -> str:
    """The message with the placeholders whose value holds for every launch filled (a local bound to
    a literal: `{ib_sysfs_path}` -> `/sys/class/infiniband`), and a local bound to an f-string
    written out as that f-string's own text (`{msg}` -> `Warning: {reason} context_length
    ({context_length}) is greater than ...`): what pages and titles show."""
    message = rule.message
    for name, value in rule.placeholders:
        if isinstance(value, Lit):
            message = _placeholder(name).sub(lambda m: _shown(m, value.value), message)  # noqa: B023 - used at once
        elif isinstance(value, Term) and (template := _template(value.text)) is not None:
            message = _placeholder(name).sub(lambda m: template.replace("\\", "\\\\"), message)  # noqa: B023
    return message


def _template(text: str) -> str | None:
    """An f-string's (or a string's) source as a message template: its literal parts as they read, each
    replacement field as `{expression}` in people's names (`self.hf_text_config`, not the walk's);
    None when the text is no string."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            parts.append(part.value.replace("{", "{{").replace("}", "}}"))
        elif isinstance(part, ast.FormattedValue):
            conversion = {115: "!s", 114: "!r", 97: "!a"}.get(part.conversion, "")
            parts.append("{" + readable_text(ast.unparse(part.value)) + conversion + "}")
        else:
            return None
    return "".join(parts)


def _placeholder(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\{)\{" + re.escape(name) + r"(![rs])?\}(?!\})")


# `{cfg.attention_backend}`, `{self.tp_size!r}`: a placeholder of a message that reads one field.
_FIELD_PLACEHOLDER = re.compile(r"(?<!\{)\{(?:self|cfg|view|server_args|args|sa|sargs)\.([a-z_][a-z0-9_]*)(![rs])?\}(?!\})")
# `{quant_method}`, `{self.quantization!r}`: a placeholder of a local or an attribute of the instance.
_HELD_PLACEHOLDER = re.compile(r"(?<!\{)\{((?:self\.)?[A-Za-z_]\w*)(![rs])?\}(?!\})")
_NOT_SHOWN = object()


def _shown(match: re.Match, value: object) -> str:
    """A placeholder as Python's f-string shows the value (`!r`: its repr), or as written when unknown."""
    if value is _NOT_SHOWN:
        return match.group(0)
    return repr(value) if match.groups()[-1] == "!r" else str(value)  # the conversion is the last group


def _fact_value(term: Term, context: Context) -> object:
    """A term over no field (a constant, a platform query) as the launch's facts answer it."""
    if context.facts is None:
        return _NOT_SHOWN
    try:
        found = context.facts.value(term.text)
    except (Unknown, RecursionError):
        return _NOT_SHOWN
    return found if plain_value(found) else _NOT_SHOWN


@functools.lru_cache(maxsize=16384)
def every_atom(f: Formula) -> tuple[Atom, ...]:
    """The distinct atoms, left to right, each shared subformula read once (triggers share most).
    A property of the formula: found once (a formula hashes once, on creation), for the formulas of
    a release or two at a time (bounded: a process that reads many lets old ones go)."""
    return tuple(distinct_atoms(f, sys.maxsize) or ())


MISSING_KINDS = ("platform", "model", "environment", "files", "code")
MAX_FORCED_ATOMS = 12  # undecided atoms of one trigger tested one by one for whether they decide it
_MISSING_OF = {TermKind.PLATFORM: "platform", TermKind.MODEL: "model", TermKind.ENV: "environment"}


def top_conjuncts(f: Formula) -> tuple[Formula, ...]:
    return f.args if isinstance(f, And) else (f,)


def substitute_assumptions(f: Formula, assume: Mapping[str, bool],
                           spellings: Spellings = CONVENTION) -> tuple[Formula, set[str]]:
    """Replace atoms whose text (Python or flag form) was assumed by their truth; also report which matched."""
    used: set[str] = set()
    if not assume:
        return f, used

    def walk(g: Formula) -> Formula:
        if isinstance(g, Atom):
            for text in (render(g), render_flags(g), render_flags(g, spellings)):
                key = assumption_key(text)
                if key in assume:
                    used.add(key)
                    return Const(assume[key])
            return g
        if isinstance(g, Not):
            return Not(walk(g.arg))
        if isinstance(g, (And, Or)):
            return type(g)(tuple(walk(a) for a in g.args))
        return g

    return walk(f), used
