"""What one walk of a function leaves for the run and the rules, without its syntax trees.

A walk (`guards.walk_function`) carries libcst nodes and the locals they are read in, which only
other walks need. The run and the rule records need less: the guards, the writes with their
values already read as cases over fields, and for each call the functions it leads to and the
context each is walked in. That is a `Walk`: plain data, picklable, kept across extractions
(`analysis.reuse`), so a source that differs from an earlier one in a few functions walks only those.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.model import TRUE, Formula, Lit, Term
from .events import GuardEvent, WriteEvent

Context = tuple  # the memo key of a walk's bound arguments (`callgraph._value_key` texts, defaults)


@dataclass(frozen=True, slots=True)
class Callee:
    """A function a call leads to, and the context it is walked in there."""

    key: str  # "<dotted module>:<qualname>"
    label: str  # "<file>::<qualname>", as call paths spell it
    context: Context
    aliases: frozenset[str]
    # When the call reaches it, in the caller's terms: TRUE but for a method of a registered class,
    # reached when the factory's key is its (`CallQueries._dispatched`).
    when: Formula = TRUE

    @property
    def memo_key(self) -> tuple[str, Context, frozenset[str]]:
        return self.key, self.context, self.aliases


@dataclass(frozen=True, slots=True)
class Call:
    """A call event of a walk, with what the run needs to follow it."""

    condition: Formula
    order: int
    line: int
    writes: frozenset[str]  # fields the functions it leads to may write
    # Empty when the call is never made (its condition is False); None until the run enters the walk.
    callees: tuple[Callee, ...] | None
    variable: bool  # a call of a parameter or local: the registered functions a loop runs
    arguments: tuple[str | None, ...]  # positional arguments passed by plain name (registry sites)
    caught: frozenset[str] = frozenset()  # exceptions an enclosing `try` catches: not raised through it


# A write's value, read before the run: ("term", Term) for a value the walk kept as text,
# ("bool", Formula) for a boolean expression, ("cases", ((when, value), ...)) otherwise.
Value = tuple[str, object]
CaseValue = Term | Lit | None


@dataclass(frozen=True, slots=True)
class Walk:
    """One function walked in one context: its events in order, free of syntax."""

    key: str
    context: Context
    aliases: frozenset[str]
    file: str
    qualname: str
    body_line: int
    guards: tuple[GuardEvent, ...]
    writes: tuple[WriteEvent, ...]  # without `node` and `env`
    values: tuple[Value, ...] | None  # the value of each write, in the same order; None until entered
    calls: tuple[Call, ...]

    @property
    def memo_key(self) -> tuple[str, Context, frozenset[str]]:
        return self.key, self.context, self.aliases


def moved(walk: Walk, lines: int) -> Walk:
    """The walk of a function that moved down `lines` lines (up when negative): every line it reports
    moved with it. (Its calls report no line.)"""
    if lines == 0:
        return walk
    guards = tuple(replace(g, line=g.line + lines, end_line=g.end_line + lines,
                           enclosing=tuple(n + lines for n in g.enclosing)) for g in walk.guards)
    writes = tuple(replace(w, line=w.line + lines, end_line=w.end_line + lines,
                           enclosing=tuple(n + lines for n in w.enclosing)) for w in walk.writes)
    return replace(walk, guards=guards, writes=writes, body_line=walk.body_line + lines)
