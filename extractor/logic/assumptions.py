"""What `check --assume` pins down: platform, model and opaque conditions taken as true or false,
named by their text in Python or as flags."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..core.formula import CONVENTION, Spellings, render, render_flags
from ..core.model import And, Atom, Const, Formula, Not, Or


def assumption_key(text: str) -> str:
    """An assumed condition's text as it is looked up: its spaces normalized."""
    return re.sub(r"\s+", " ", text.strip())


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
