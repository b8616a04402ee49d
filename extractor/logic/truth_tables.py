"""Truth tables of small formulas: a formula's truth under every assignment of its few atoms at once,
as the bits of one integer (what `Context.decided` tries when Kleene's logic leaves it unknown)."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.model import And, Atom, Const, Formula, Not, Or


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
