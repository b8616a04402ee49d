"""What a formula's truth on a launch can depend on: the names it reads, through the resolution table.

Two launches that agree on every name a subformula reads give it the same truth, so an evaluation
of one launch can take another's (`Context.inherit`): the witness search over command lines a flag
or two apart, and `check`'s fixes, each a few edits away from the command.

The names are over-counted on purpose (never missed): a term's field, the fields it lists, every word
of its text (`safe_eval` looks names up, `os.environ.get("X")` reads X, a method run over the launch
reads the attributes its text passes), and, for a term the platform and model facts may decide, the
fields a model config is built from (`model_config.MODEL_CONFIG_FIELDS`, handed to every such term).
A resolved field reads its chain: the writes before it, their conditions and the terms they write,
and the chains those read in turn.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TypeVar

from ..core.formula import distinct_atoms, parse_pinned
from ..core.model import And, Atom, Formula, Not, Or, Term, TermKind, Write
from .model_config import MODEL_CONFIG_FIELDS

Reads = tuple[frozenset[str], frozenset[tuple[str, int]]]  # names, and resolution chains (field, writes seen)
# A chain's parts: its field (a mask), its writes' condition atoms, what each written value reads.
ChainParts = tuple[int, tuple[Atom, ...], tuple[tuple[int, tuple[tuple[str, int], ...]], ...]]
T = TypeVar("T")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OTHER = 1  # the bit of every name outside a FormulaReads' universe
# Terms a launch's facts may decide (`Context.value_of` hands them the MODEL_CONFIG_FIELDS too).
_FACT_KINDS = frozenset({TermKind.PLATFORM, TermKind.MODEL, TermKind.OPAQUE})


class FormulaReads:
    """The reads of one rule set's formulas and resolution chains, memoized per object while the
    rule set lives (triggers share most of their subformulas); each entry keeps its object, so an id
    is never reused for another."""

    def __init__(self, writes: Mapping[str, Sequence[Write]], universe: Collection[str] | None = None) -> None:
        self.writes = writes
        # The names two launches may differ in (fields, environment variables), each a bit of its own
        # in a mask; every other name a term's text holds shares one bit (`_OTHER`): masks stay small.
        self.universe = frozenset(universe) if universe is not None else None
        self._width = 1  # bits given out: bit 0 is `_OTHER`
        self._formulas: dict[int, tuple[Formula, Reads]] = {}
        self._chains: dict[tuple[str, int], Reads] = {}
        self._closures: dict[tuple[str, int], Reads] = {}
        self._names: dict[int, tuple[Formula, frozenset[str]]] = {}
        self._masks: dict[int, tuple[Formula, int]] = {}
        # Kept with the rule set (`prepare`, then pickled in its index): by value, not by object id.
        self._bits: dict[str, int] = {}
        self._chain_masks: dict[tuple[str, int], int] = {}
        self._term_masks: dict[Term, int] = {}
        self._step_masks: dict[tuple[str, int], tuple[int, frozenset[tuple[str, int]]]] = {}
        self._atom_lists: dict[int, tuple[Formula, list[Atom]]] = {}
        self._atom_memo: dict[int, tuple[Atom, Reads]] = {}
        self._term_memo: dict[Term, Reads] = {}
        self._atom_parts: dict[Atom, tuple[int, tuple[tuple[str, int], ...]]] = {}
        self._top_masks: dict[Formula, int] = {}  # `mask` of every part of the formulas `prepare` was given
        self._chain_parts: dict[tuple[str, int], ChainParts] = {}

    def prepare(self, formulas: Iterable[Formula]) -> None:
        """Work out the masks of the formulas, of every term of them and of every chain the resolution
        table has, so that a process that reads them back (a rule set's index) only ORs them together."""
        formulas = list(formulas)
        for f in formulas:
            self.mask(f)
            for atom in self._atoms_of(f):
                self._atom_mask(atom)
        # Every part's mask, by value, kept with the index: a launch carried from the bare one does not
        # enter a part that reads none of the names it changes (`Carried.inherits`), a lookup per part.
        for node, mask in self._masks.values():
            self._top_masks[node] = mask
        for name, writes in self.writes.items():
            for version in range(len(writes) + 1):
                self.chain_mask((name, version))
                self.chain_parts((name, version))
        for f in formulas:
            for atom in self._atoms_of(f):
                self.atom_parts(atom)

    def __getstate__(self) -> dict:
        # The memos by object id are never kept past this process; those by value are.
        return {"writes": self.writes, "universe": self.universe, "bits": self._bits, "chains": self._chain_masks,
                "terms": self._term_masks, "atom_parts": self._atom_parts, "chain_parts": self._chain_parts,
                "top_masks": self._top_masks}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["writes"], state["universe"])  # type: ignore[misc]
        self._bits, self._chain_masks, self._term_masks = state["bits"], state["chains"], state["terms"]
        self._atom_parts, self._chain_parts = state["atom_parts"], state["chain_parts"]
        self._top_masks = state["top_masks"]
        self._width = max(self._bits.values(), default=1).bit_length()

    def atom_parts(self, atom: Atom) -> tuple[int, tuple[tuple[str, int], ...]]:
        """What an atom reads itself (a mask: its terms' fields and words), and the chains it reads:
        it comes out the same on two launches that agree on the first and on the values of the second."""
        found = self._atom_parts.get(atom)
        if found is None:
            names, chains = self._atom_reads(atom)
            found = self._atom_parts[atom] = (self.mask_of(names), tuple(sorted(chains)))
        return found

    def chain_parts(self, chain: tuple[str, int]) -> ChainParts:
        """What a chain's value is made of: the field itself (a mask), the atoms of its writes'
        conditions, and what each value a write may take reads (`atom_parts` of it)."""
        found = self._chain_parts.get(chain)
        if found is None:
            atoms: dict[Atom, None] = {}
            values = []
            for write in self.writes.get(chain[0], ())[:chain[1]]:
                for part in (write.when, *(when for when, _ in write.cases)):
                    atoms.update(dict.fromkeys(self._atoms_of(part)))
                for _, value in write.cases:
                    if isinstance(value, Term):
                        names, chains = self._term_reads(value)
                        values.append((self.mask_of(names), tuple(sorted(chains))))
            found = self._chain_parts[chain] = (self.mask_of((chain[0],)), tuple(atoms), tuple(values))
        return found

    def reads(self, f: Formula) -> Reads:
        """Every name a formula's truth can depend on, and every chain it reads, through the writes of
        those chains too."""
        names, direct = self.direct(f)
        closures = [self.chain(chain) for chain in direct]
        return names.union(*(n for n, _ in closures)), direct.union(*(c for _, c in closures))

    def names(self, f: Formula) -> frozenset[str]:
        """The names of `reads` alone (those of every chain included), memoized per formula object."""
        found = self._names.get(id(f))
        if found is None:
            found = self._names[id(f)] = (f, self.reads(f)[0])
        return found[1]

    def mask(self, f: Formula) -> int:
        """`names(f)` as the bits of one integer (`mask_of`): what inheriting asks of every subformula
        it meets, an OR per node instead of a union of sets."""
        found = self._top_masks.get(f)
        return found if found is not None else fold(f, self._masks, self._node_mask)

    def kept_mask(self, f: Formula) -> int | None:
        """`mask(f)` if it was worked out beforehand (`prepare`), else None."""
        return self._top_masks.get(f)

    def _node_mask(self, node: Formula, children: list[int]) -> int:
        found = self._atom_mask(node) if isinstance(node, Atom) else 0
        for child in children:
            found |= child
        return found

    def atom_mask(self, atom: Atom) -> int:
        """`mask` of one atom: its terms' masks, kept with the rule set."""
        return self._atom_mask(atom)

    def _atom_mask(self, atom: Atom) -> int:
        found = self._term_mask(atom.term)
        return found | self._term_mask(atom.other) if isinstance(atom.other, Term) else found

    def _term_mask(self, term: Term) -> int:
        found = self._term_masks.get(term)
        if found is None:
            names, chains = self._term_reads(term)
            found = self.mask_of(names)
            for chain in chains:
                found |= self.chain_mask(chain)
            self._term_masks[term] = found
        return found

    def chain_mask(self, chain: tuple[str, int]) -> int:
        """The names a resolved field's chain reads (`chain`), as bits: a walk over the chains it
        reads, each step's names as bits."""
        found = self._chain_masks.get(chain)
        if found is None:
            found = 0
            seen: set[tuple[str, int]] = set()
            todo = [chain]
            while todo:
                item = todo.pop()
                if item in seen:
                    continue
                seen.add(item)
                step = self._step_masks.get(item)
                if step is None:
                    names, chains = self.chain_step(item)
                    step = self._step_masks[item] = (self.mask_of(names), chains)
                found |= step[0]
                todo += step[1]
            self._chain_masks[chain] = found
        return found

    def _atoms_of(self, f: Formula) -> list[Atom]:
        # By object: in a lookup by value, an equal formula of other objects (another rule set's, in a
        # process that reads two) is compared node by node.
        found = self._atom_lists.get(id(f))
        if found is None:
            found = self._atom_lists[id(f)] = (f, distinct_atoms(f, sys.maxsize) or [])
        return found[1]

    def _atom_reads(self, atom: Atom) -> Reads:
        found = self._atom_memo.get(id(atom))
        if found is None:
            reads = self._term_reads(atom.term)
            if isinstance(atom.other, Term):
                other = self._term_reads(atom.other)
                reads = (reads[0] | other[0], reads[1] | other[1])
            found = self._atom_memo[id(atom)] = (atom, reads)
        return found[1]

    def _term_reads(self, term: Term) -> Reads:
        found = self._term_memo.get(term)
        if found is None:
            found = self._term_memo[term] = term_reads((term,))
        return found

    def mask_of(self, names: Iterable[str]) -> int:
        """Names as the bits of one integer, a bit per name of the universe in the order they are first
        met, one bit shared by all others."""
        found = 0
        for name in names:
            bit = self._bits.get(name)
            if bit is None:
                if self.universe is not None and name not in self.universe:
                    bit = _OTHER
                else:
                    bit, self._width = 1 << self._width, self._width + 1
                self._bits[name] = bit
            found |= bit
        return found

    def direct(self, f: Formula) -> Reads:
        """What the formula's own terms read, chains not followed."""
        return fold(f, self._formulas, _node_reads)

    def chain(self, chain: tuple[str, int]) -> Reads:
        """The chain, the chains its writes read, theirs, ..., and every name they read."""
        found = self._closures.get(chain)
        if found is None:
            names: set[str] = set()
            chains: set[tuple[str, int]] = set()
            todo = [chain]
            while todo:  # chains may read each other in a cycle: a walk, not a memoized recursion
                item = todo.pop()
                if item in chains:
                    continue
                chains.add(item)
                more_names, more_chains = self.chain_step(item)
                names |= more_names
                todo += more_chains
            found = self._closures[chain] = (frozenset(names), frozenset(chains))
        return found

    def chain_step(self, chain: tuple[str, int]) -> Reads:
        """What the writes of one chain read, and the field itself (its value before them)."""
        found = self._chains.get(chain)
        if found is None:
            names: set[str] = {chain[0]}
            chains: set[tuple[str, int]] = set()
            for write in self.writes.get(chain[0], ())[:chain[1]]:
                for part in (write.when, *(when for when, _ in write.cases)):
                    for atom in self._atoms_of(part):
                        more_names, more_chains = self._atom_reads(atom)
                        names |= more_names
                        chains |= more_chains
                more_names, more_chains = term_reads(value for _, value in write.cases if isinstance(value, Term))
                names |= more_names
                chains |= more_chains
            found = self._chains[chain] = (frozenset(names), frozenset(chains))
        return found


def fold(f: Formula, memo: dict[int, tuple[Formula, T]], make: Callable[[Formula, list[T]], T]) -> T:
    """`make(node, what its children made)` over the distinct subformulas, children first, memoized
    by object in `memo` (each entry keeps its node alive, so an id stays its). A loop, not recursion:
    triggers are deeper than the recursion limit allows."""
    found = memo.get(id(f))
    if found is not None:
        return found[1]
    stack = [f]
    while stack:
        g = stack[-1]
        if id(g) in memo:
            stack.pop()
            continue
        children = (g.arg,) if isinstance(g, Not) else g.args if isinstance(g, (And, Or)) else ()
        waiting = [c for c in children if id(c) not in memo]
        if waiting:
            stack.extend(waiting)
            continue
        stack.pop()
        memo[id(g)] = (g, make(g, [memo[id(c)][1] for c in children]))
    return memo[id(f)][1]


def _node_reads(node: Formula, children: list[Reads]) -> Reads:
    if isinstance(node, Atom):
        return _atom_reads(node)
    return frozenset().union(*(n for n, _ in children)), frozenset().union(*(c for _, c in children))


def _atom_reads(atom: Atom) -> Reads:
    return term_reads((atom.term, atom.other) if isinstance(atom.other, Term) else (atom.term,))


def term_reads(items: Iterable[Term]) -> Reads:
    """What some terms read, chains not followed (see the module's docstring)."""
    names: set[str] = set()
    chains: set[tuple[str, int]] = set()
    for term in items:
        names.add(term.name)
        names.update(term.fields)
        if term.kind is TermKind.RESOLVED:
            chains.add((term.name, term.version))
        if term.kind in _FACT_KINDS:
            names.update(MODEL_CONFIG_FIELDS)
        for word in _NAME.findall(term.text):
            names.add(word)
            pinned = parse_pinned(word) if "__v" in word else None
            if pinned is not None:
                chains.add(pinned)
    return frozenset(names), frozenset(chains)
