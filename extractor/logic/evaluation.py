"""Three-valued (Kleene) truth of rule triggers under what is known of one launch.

Field atoms take the command line's values and the defaults; environment variables are unset
unless given, `envs.X.get()` reads its declared default; platform, model and other opaque atoms are
unknown unless assumed. Adjustments that run earlier and may fire make the fields they write
uncertain, so a guard they can change is at most undecided.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..core.formula import CONVENTION, Spellings, apply_transforms, atoms, evaluate, render, render_flags, terms
from ..core.model import And, Atom, Const, Formula, Not, Or, Rule, Term, TermKind
from .environment import EnvVar, env_default, parse_env
from .expressions import UNKNOWN, Unknown, safe_eval

_MAX_COMBINATIONS = 64  # value combinations tried when adjustments may rewrite several fields


# ---- values of terms ---------------------------------------------------------------------------------


@dataclass
class Context:
    """What is known when evaluating: field values, the environment, assumed atoms."""

    values: dict[str, object]
    env: Mapping[str, str] = field(default_factory=dict)
    envs: Mapping[str, EnvVar] | None = None
    assume: Mapping[str, bool] = field(default_factory=dict)  # normalized atom or term text -> truth
    spellings: Spellings = CONVENTION  # how the catalog spells each field's flag

    def value_of(self, term: Term) -> object:
        """A term's value, or LookupError when the command line does not decide it."""
        try:
            if term.kind is TermKind.FIELD:
                value = self.values.get(term.name, UNKNOWN)
                if value is UNKNOWN:
                    raise Unknown(term.name)
                return apply_transforms(value, term.transforms)
            key = assumption_key(term.text)
            if key in self.assume:
                return self.assume[key]
            if term.kind in (TermKind.PLATFORM, TermKind.MODEL):
                raise Unknown(term.text)
            return safe_eval(term.text, self.values, self._env_value)
        except LookupError:
            raise
        except Exception as error:  # Unknown, or the expression fails on these values
            raise LookupError(term.text) from error

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


def assumption_key(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


# ---- evaluating rules ----------------------------------------------------------------------------------


class Evaluator:
    """Three-valued truth of rule triggers for one command line, adjustments taken into account."""

    def __init__(self, rules: Sequence[Rule] | Mapping[str, Rule], context: Context) -> None:
        self.context = context
        self.rules = rules if isinstance(rules, Mapping) else {r.id: r for r in rules}
        self._firing: dict[str, bool | None] = {}

    def fires(self, adjustment_id: str) -> bool | None:
        """Whether an adjustment runs (on the command-line values; its own writes come after)."""
        if adjustment_id not in self._firing:
            rule = self.rules.get(adjustment_id)
            self._firing[adjustment_id] = None if rule is None else (
                evaluate(rule.effective, self.context.value_of) if rule.reachable else False)
        return self._firing[adjustment_id]

    def truth(self, rule: Rule) -> tuple[bool | None, tuple[str, ...]]:
        """The trigger's truth, and the adjustments that made it uncertain."""
        formula = rule.effective
        writers = [self.rules[a] for a in rule.affected_by if a in self.rules and self.fires(a) is not False]
        if not writers:
            return evaluate(formula, self.context.value_of), ()
        plain = evaluate(formula, self.context.value_of)
        formula = _freeze(formula, rule, writers, self.context)
        choices: dict[str, list[object]] = {}
        for target in sorted({w.target for w in writers if w.target}):
            options: list[object] = []
            by = [w for w in writers if w.target == target]
            if not any(self.fires(w.id) for w in by):
                options.append(self.context.values.get(target, UNKNOWN))
            for w in by:
                options.append(self._new_value(w.value))
            choices[target] = _unique(options)
        names = sorted(choices)
        combos = list(itertools.islice(itertools.product(*(choices[n] for n in names)), _MAX_COMBINATIONS + 1))
        if len(combos) > _MAX_COMBINATIONS:
            combos = [tuple(UNKNOWN for _ in names)]
        results = set()
        for combo in combos:
            values = dict(self.context.values)
            values.update(zip(names, combo))
            results.add(evaluate(formula, replace(self.context, values=values).value_of))
        truth = results.pop() if len(results) == 1 else None
        changed = tuple(w.id for w in writers) if truth != plain else ()
        return truth, changed

    def unknown_atoms(self, rule: Rule) -> tuple[str, ...]:
        """Undecided atoms that would decide the trigger either way (what the user could pin down)."""
        found: list[str] = []
        formula = rule.effective
        for atom in dict.fromkeys(atoms(formula)):
            if evaluate(atom, self.context.value_of) is not None:
                continue
            if_true = evaluate(_replace_atom(formula, atom, Const(True)), self.context.value_of)
            if_false = evaluate(_replace_atom(formula, atom, Const(False)), self.context.value_of)
            if if_true != if_false:
                text = render_flags(atom, self.context.spellings)
                if text not in found:
                    found.append(text)
        return tuple(found)

    def _new_value(self, text: str | None) -> object:
        """An adjustment's new value when it is a literal or computable from the flags (`x.upper()`)."""
        if text is None:
            return UNKNOWN
        try:
            return safe_eval(text, self.context.values, self.context._env_value)
        except Exception:  # Unknown, or the expression fails on these values
            return UNKNOWN


def _replace_atom(f: Formula, atom: Atom, by: Formula) -> Formula:
    if f == atom:
        return by
    if isinstance(f, Not):
        return Not(_replace_atom(f.arg, atom, by))
    if isinstance(f, (And, Or)):
        return type(f)(tuple(_replace_atom(a, atom, by) for a in f.args))
    return f


def _unique(options: list[object]) -> list[object]:
    result: list[object] = []
    for option in options:
        if option is UNKNOWN:
            return [UNKNOWN]
        if not any(type(option) is type(o) and option == o for o in result):
            result.append(option)
    return result


def top_conjuncts(f: Formula) -> tuple[Formula, ...]:
    return f.args if isinstance(f, And) else (f,)


def _freeze(formula: Formula, rule: Rule, writers: Sequence[Rule], context: Context) -> Formula:
    """Fix the atoms read before the adjustments ran to their command-line truth.

    A top-level conjunct that the guard shares with an adjustment's own trigger belongs to the path
    both inherit (the dispatcher's `model_path` check, say): it was read before the adjustment ran.
    A conjunct of the guard's own function condition is read after, so it is left alone.
    """
    own = set(top_conjuncts(rule.condition))
    shared = set()
    for writer in writers:
        mine = set(top_conjuncts(writer.effective))
        for part in top_conjuncts(formula):
            if part in mine and part not in own and writer.target in {n for t in terms(part) for n in t.fields}:
                shared.add(part)
    if not shared:
        return formula
    parts = []
    for part in top_conjuncts(formula):
        if part in shared:
            truth = evaluate(part, context.value_of)
            parts.append(part if truth is None else Const(truth))
        else:
            parts.append(part)
    return And(tuple(parts)) if len(parts) > 1 else parts[0]


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
