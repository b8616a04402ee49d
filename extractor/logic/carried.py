"""Evaluations taken from another launch's: what a launch a few values away from a base leaves as the
base has it (`Context.inherit`, `Context.carry`), and what launches carried from one base found."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..core.model import And, Atom, Formula, Not, Or
from .reads import FormulaReads


# What is taken from a base: its evaluation (`evaluation.Context`, `evaluation.Evaluator`), which
# imports this module; named here by what this module asks of it (evaluation.py asks its own Context
# more: `decided`, `failing`, `resolution`).
class Context(Protocol):
    values: Mapping[str, object]

    def truth(self, f: Formula) -> bool | None: ...


class Evaluator(Protocol):
    context: Context

    def state(self, atom: Atom, fresh: bool = False) -> tuple: ...


class Inherited(dict):
    """A context's truths of subformulas (`Context.memo`) that answers, for a subformula reading none
    of the changed names, the base context's truth (see `Context.inherit`)."""

    def __init__(self, base: Context, reads: FormulaReads, changed: frozenset[str]) -> None:
        super().__init__()
        self.base = base
        self.reads = reads
        self.changed = reads.mask_of(changed)

    def inherits(self, f: Formula) -> bool:
        """Does `f` read none of the changed names (so it is what it is on the base)?"""
        return not self.reads.mask(f) & self.changed

    def inherits_chain(self, chain: tuple[str, int]) -> bool:
        """Does a resolved field's chain read none of the changed names?"""
        return not self.reads.chain_mask(chain) & self.changed

    def get(self, f: Formula, default: object = None) -> object:  # type: ignore[override]
        found = dict.get(self, f, _ABSENT)
        if found is _ABSENT:
            if not self.inherits(f):
                return default
            found = self[f] = self.base.truth(f)
        return found


_ABSENT = object()


class Carried(Inherited):
    """`Inherited` that tells changed atoms by their outcome, not by what they read (`Context.carry`).
    Its `evaluator` (the launch's own, set by `Evaluator`) works out each atom's state here."""

    def __init__(self, base: Evaluator, reads: FormulaReads, changed: frozenset[str],
                 states: dict[tuple, object] | None = None, values: Mapping[str, object] | None = None) -> None:
        super().__init__(base.context, reads, changed)
        self.base_evaluator = base
        self.evaluator: Evaluator | None = None
        # What launches carried from the same base found of an atom or a chain (whether it changes,
        # an atom's state), by it and the values of the changed names it reads: a launch that
        # agrees on those finds the same (a folder of launch lines naming one model).
        self.states = states if states is not None else {}
        values = self.base.values if values is None else values
        self._values = [(reads.mask_of((name,)), _keyed(name, values.get(name))) for name in sorted(changed)]
        self._atom_changed: dict[Atom, bool] = {}
        self._chain_changed: dict[tuple[str, int], bool] = {}
        self._touched: dict[int, tuple[Formula, bool]] = {}

    def inherits(self, f: Formula) -> bool:
        return not self._touched_below(f)

    def _touched_below(self, f: Formula) -> bool:
        """Does an atom of `f` change? A walk, children first, memoized by object, that does not enter
        a part reading none of the changed names (its mask, kept with the rule set's triggers: most
        of a trigger, when a launch changes a few flags)."""
        found = self._touched.get(id(f))
        if found is not None:
            return found[1]
        memo, masks, atom_mask, changed = self._touched, self.reads.kept_mask, self.reads.atom_mask, self.changed
        stack: list[tuple[Formula, bool]] = [(f, False)]  # (part, its children done)
        while stack:
            g, done = stack.pop()
            if done:
                children = (g.arg,) if isinstance(g, Not) else g.args
                memo[id(g)] = (g, any(memo[id(c)][1] for c in children))
            elif id(g) in memo:
                continue
            elif isinstance(g, Atom):
                memo[id(g)] = (g, bool(atom_mask(g) & changed) and self.changes(g))
            elif not isinstance(g, (Not, And, Or)) or ((mask := masks(g)) is not None and not mask & changed):
                memo[id(g)] = (g, False)  # a constant, or a part that reads no changed name: not entered
            else:
                stack.append((g, True))
                stack.extend((c, False) for c in ((g.arg,) if isinstance(g, Not) else g.args) if id(c) not in memo)
        return memo[id(f)][1]

    def inherits_chain(self, chain: tuple[str, int]) -> bool:
        return not self.chain_changes(chain)

    def changes(self, atom: Atom) -> bool:
        """Is the atom's state on this launch another than on the base (or not known to be the same)?
        Not when it reads none of the changed names, nor when none of what it reads itself is among
        them and the chains it reads are made the same; else its state is worked out here."""
        found = self._atom_changed.get(atom)
        return found if found is not None else \
            self._worked_out(self._atom_changed, "atom", atom, self.reads.atom_mask(atom), self._atom_changes)

    def chain_changes(self, chain: tuple[str, int]) -> bool:
        """Might a resolved field's chain come out otherwise here (its values, or what it waits for)?
        Not when its field keeps its value and its writes' conditions and values are the same."""
        found = self._chain_changed.get(chain)
        return found if found is not None else \
            self._worked_out(self._chain_changed, "chain", chain, self.reads.chain_mask(chain), self._chain_alters)

    def _atom_changes(self, atom: Atom) -> bool:
        own, chains = self.reads.atom_parts(atom)
        return (bool(own & self.changed) or any(map(self.chain_changes, chains))) and \
            (self.evaluator is None or self.evaluator.state(atom, fresh=True) != self.base_evaluator.state(atom))

    def _chain_alters(self, chain: tuple[str, int]) -> bool:
        own, atoms, values = self.reads.chain_parts(chain)
        return bool(own & self.changed) or any(map(self.changes, atoms)) or any(
            mask & self.changed or any(map(self.chain_changes, chains)) for mask, chains in values)

    def _worked_out(self, memo: dict, kind: str, item: object, mask: int, work: Callable[[Any], bool]) -> bool:
        """`work(item)`, unless the item reads none of the changed names (then False) or a launch
        agreeing with this one on those it reads worked it out (`states`)."""
        if not mask & self.changed:
            memo[item] = False
            return False
        key = (kind, item, *(value for bit, value in self._values if bit & mask))
        found = self.states.get(key)
        if found is None:
            memo[item] = True  # while it is worked out (a chain reading itself): taken as changed
            found = work(item)
            if self.evaluator is not None:  # without the launch's evaluator nothing was worked out
                self.states[key] = found
        memo[item] = found
        return found  # type: ignore[return-value]


def _keyed(name: str, value: object) -> tuple:
    """A changed name's value as `Carried.states` keys hold it (1, 1.0 and True are three values)."""
    return name, type(value), repr(value)


def found_of_one_value(states: Mapping[tuple, object], name: str, value: object) -> dict[tuple, object]:
    """What launches carried from one base found (`Carried.states`) of the atoms and chains that read
    `name` holding `value` and no other changed name: it holds for any launch from that base with
    that value (a model path), whatever else the launch changes."""
    only = _keyed(name, value)
    return {key: found for key, found in states.items() if len(key) == 3 and key[2] == only}
