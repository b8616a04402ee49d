"""Variants of a real rule set as a next commit of SGLang would make them: a message reworded (new
ids, same triggers), one guard's compared value changed, one guard added, one removed.

Shared by tests/test_witness_memo.py and bench/witness_memo.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from extractor.core.formula import atoms
from extractor.core.model import And, Atom, Example, Formula, Lit, Not, Or, Rule, RuleKind, Snippet, Write
from extractor.products.extraction.witness import eligible


@dataclass(frozen=True)
class Variant:
    name: str
    rules: tuple[Rule, ...]
    resolution: tuple[Write, ...]


def stripped(rules: Sequence[Rule]) -> tuple[Rule, ...]:
    """The rules as the witness stage gets them: no example, no related list yet."""
    return tuple(replace(r, example=None, related=()) for r in rules)


def new_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def reworded(rules: Sequence[Rule], resolution: Sequence[Write], index: int) -> tuple[tuple[Rule, ...], tuple[Write, ...]]:
    """Rule `index` with another message (and so another id, everywhere it is named); its snippet
    says the new message too."""
    old = rules[index]
    message = old.message + " (reworded)"
    renamed = new_id(message)

    def rename(i: str) -> str:
        return renamed if i == old.id else i

    snippet = Snippet(old.snippet.start_line, old.snippet.end_line, old.snippet.text.replace(old.message, message))
    changed = [replace(r, affected_by=tuple(map(rename, r.affected_by))) for r in rules]
    changed[index] = replace(changed[index], id=renamed, message=message, snippet=snippet)
    return tuple(changed), tuple(replace(w, rule=rename(w.rule)) for w in resolution)


def _bump(value: object) -> object:
    return value + 1 if isinstance(value, int) and not isinstance(value, bool) else f"{value}-next"


def bumpable(atom: Atom) -> bool:
    value = atom.other.value if isinstance(atom.other, Lit) else None
    return isinstance(value, str) and bool(value) or isinstance(value, int) and not isinstance(value, bool)


def _rewrite(f: Formula, change: Callable[[Atom], Atom]) -> Formula:
    if isinstance(f, Atom):
        return change(f)
    if isinstance(f, Not):
        return Not(_rewrite(f.arg, change))
    if isinstance(f, (And, Or)):
        return type(f)(tuple(_rewrite(a, change) for a in f.args))
    return f


def with_value_changed(rule: Rule, atom: Atom) -> Rule:
    """The guard comparing with another value wherever it compares `atom`'s term with its literal."""
    moved = Atom(atom.term, atom.op, Lit(_bump(atom.other.value)))

    def change(a: Atom) -> Atom:
        return moved if a == atom else a

    trigger = _rewrite(rule.trigger, change) if rule.trigger is not None else None
    return replace(rule, trigger=trigger, condition=_rewrite(rule.condition, change))


def witness_literal(rule: Rule, example: Example | None) -> Atom | None:
    """An atom of the guard's own condition whose literal its triggering line spells: changing that
    value changes the witness."""
    if example is None:
        return None
    for atom in atoms(rule.condition):
        if bumpable(atom) and str(atom.other.value) in example.before and any(a == atom for a in atoms(rule.effective)):
            return atom
    return None


def pick_guard(rules: Sequence[Rule], examples: dict[str, Example | None]) -> int:
    """The first guard with a witness that spells a literal of its own condition."""
    return next(i for i, r in enumerate(rules) if eligible(r) and witness_literal(r, examples.get(r.id)) is not None)


def pick_adjustment(rules: Sequence[Rule], resolution: Sequence[Write]) -> int:
    """The first adjustment that both a guard's `affected_by` and the resolution table name."""
    named = {i for r in rules for i in r.affected_by} & {w.rule for w in resolution}
    return next(i for i, r in enumerate(rules) if r.kind is RuleKind.ADJUSTMENT and r.id in named)


def variants(rules: Sequence[Rule], resolution: Sequence[Write], examples: dict[str, Example | None]) -> list[Variant]:
    """The four kinds of next commit, built around the first guard whose witness spells a value it compares."""
    rules, resolution = tuple(rules), tuple(resolution)
    index = pick_guard(rules, examples)
    guard = rules[index]
    atom = witness_literal(guard, examples[guard.id])
    found = []
    words, table = reworded(rules, resolution, index)
    found.append(Variant("message", words, table))
    adjusted, table = reworded(rules, resolution, pick_adjustment(rules, resolution))
    found.append(Variant("adjustment message", adjusted, table))
    changed = list(rules)
    changed[index] = with_value_changed(guard, atom)
    found.append(Variant("trigger", tuple(changed), resolution))
    found.append(Variant("removed", rules[:index] + rules[index + 1:], resolution))
    found.append(Variant("added", *_added(rules, resolution, index, atom)))
    return found


def _added(rules: tuple[Rule, ...], resolution: tuple[Write, ...], index: int, atom: Atom) -> tuple[tuple[Rule, ...], tuple[Write, ...]]:
    """A new guard right after rule `index`, like it but comparing with another value; everything
    after it runs one step later."""
    guard = rules[index]
    message = guard.message + " (a new guard)"
    location = replace(guard.location, line=guard.location.end_line + 1, end_line=guard.location.end_line + 1)
    new = replace(with_value_changed(guard, atom), id=new_id(message), message=message, location=location,
                  order=guard.order + 1)

    def later(order: int | None) -> int | None:
        return order + 1 if order is not None and order > guard.order else order

    shifted = [replace(r, order=later(r.order)) for r in rules]
    return (tuple(shifted[:index + 1] + [new] + shifted[index + 1:]),
            tuple(replace(w, order=later(w.order)) for w in resolution))
