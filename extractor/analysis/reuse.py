"""Walks kept across extractions, and the proof that one still holds: the questions it asked.

A walk of a function depends on the function's text and its module's declarations, and on what
it asked the program while it ran: is this module loaded (a call is followed into a module outside
the read files only when something asked for it before), what does this constant hold, is this
name an Enum, which fields may this callee write, what did this helper's walk find. The program
changes as it answers (a module loaded is visible to every later question), so the answers
depend on when they are asked, not only on the source.

So each walk keeps its `trace`: the questions in the order asked, with their answers. A later
extraction reuses a kept walk only after asking the same questions again, in the same order, at
the same point of its own run, and getting the same answers; asking them again has the same
effects (the modules loaded, the answers remembered) as walking would. Every question is a
deterministic function of the source and of the program's state, and so is a walk of its
function's text and its answers: an extraction that reuses walks asks, step by step, what one
that walks everything asks, and writes the same bytes. A walk that has to be made again after its
kept form was reused (its syntax is needed) must come out the same, or the extraction starts over
without reuse (`StaleReuse`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..core.model import Lit
from .modules import FunctionFacts, Outline
from .walks import Walk

# A question and its answer: (kind, arguments..., answer), all plain values (see `canonical`).
Item = tuple
# What a kept walk is found by: (function key, its text's digest, its module's skeleton, context, aliases).
EntryKey = tuple


class StaleReuse(Exception):
    """A walk made again after its kept form was reused came out different: start over without reuse."""


@dataclass(frozen=True, slots=True)
class Kept:
    """A walk as kept between extractions, with the questions it asked and, when the run entered
    it, its calls' callees and its writes' values (`Walk` complete) with the questions those asked."""

    walk: Walk
    trace: tuple[Item, ...]
    signature: str
    line: int  # the function's `def` line when it was walked: its lines move with it (`walks.moved`)
    entered: Walk | None = None
    entry_trace: tuple[Item, ...] = ()


class WalkStore(Protocol):
    """Walks and function facts of earlier extractions (an empty one is valid)."""

    facts: Mapping[str, FunctionFacts]  # by function digest (`modules.Functions.digest`)

    def get(self, key: EntryKey) -> Kept | None: ...


@dataclass
class MemoryStore:
    """A store held in memory: what one extraction kept, for the next (`products.kept_walks` writes it)."""

    walks: dict[EntryKey, Kept]
    facts: dict[str, FunctionFacts]
    later: dict = field(default_factory=dict)  # what later stages keep (`products.witness`'s memo)
    outlines: dict[str, Outline] = field(default_factory=dict)  # every module's index, by `outline_key`

    def get(self, key: EntryKey) -> Kept | None:
        return self.walks.get(key)


def canonical(answer: object) -> object:
    """An answer as a plain, ordered value: equal answers compare equal in any process."""
    if isinstance(answer, (frozenset, set)):
        return tuple(sorted(answer))
    if isinstance(answer, Lit):
        return ("lit", repr(answer.value))
    if answer is None or isinstance(answer, (bool, int, str)):
        return answer
    if isinstance(answer, tuple):
        return tuple(canonical(a) for a in answer)
    return ("repr", repr(answer))


def signature(key: EntryKey, trace: tuple[Item, ...]) -> str:
    """What a walk is determined by: its function, context and every answer it was given."""
    function, digest, skeleton, context, aliases = key
    text = repr((function, digest, skeleton, context, tuple(sorted(aliases)), trace))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Trace(list):
    """The questions of one walk in progress, in order, and the last answer kept for each; and the
    texts this walk rendered (`normalize`: locals, and expressions for one env), which it renders
    once: rendering again asks what it asked the first time, which the trace keeps once anyway."""

    def __init__(self) -> None:
        super().__init__()
        self.last: dict[tuple, object] = {}
        self.renders: dict = {}


class Script:
    """A kept walk's questions, answered in order as they were (a question asked again with the
    answer it got last was kept once: see `callgraph.Program._asked`)."""

    def __init__(self, trace: tuple[Item, ...]) -> None:
        self.trace = trace
        self.at = 0
        self.last: dict[tuple, object] = {}

    def next(self, question: tuple) -> object:
        if self.at < len(self.trace) and self.trace[self.at][:-1] == question:
            answer = self.trace[self.at][-1]
            self.at += 1
            self.last[question] = answer
            return answer
        if question in self.last:
            return self.last[question]
        raise StaleReuse(f"made again, a walk asked {question!r}, not what it asked when kept")

    def done(self) -> bool:
        return self.at == len(self.trace)
