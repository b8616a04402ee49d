"""What a walk of a function records: its guard, call, write and return events, the function's
identity (`FunctionInfo`) and its summary."""

from __future__ import annotations


from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import libcst as cst

from ..core.model import Choices, Formula, Lit, RuleKind, Term
from .scope import (
    Env,
    Scope,
)


@dataclass(frozen=True, slots=True)
class GuardEvent:
    """A `raise`, or an `assert` with a message, and when control reaches it."""

    kind: RuleKind
    exception: str | None
    message: str
    message_static: bool
    line: int
    end_line: int
    condition: Formula
    enclosing: tuple[int, ...]
    order: int = 0
    anchor: tuple[str, ...] = ()  # fields its own tests read (not earlier guards'): tells duplicates apart
    # When it fires, as `check` reads it by running the method over the launch's values (`RunSites`),
    # where the walk lost a value its test reads; None: the condition says it.
    run: Formula | None = None
    placeholders: tuple[tuple[str, Lit | Term | Choices], ...] = ()  # `Rule.placeholders`, over the function's locals


@dataclass(frozen=True, slots=True)
class CallEvent:
    """A call made by the function, with the locals in force, for the call graph."""

    condition: Formula
    node: cst.Call
    env: Env
    line: int
    order: int  # position among all events of the function, for dispatch order
    writes: frozenset[str] = frozenset()  # the fields the functions it leads to may write
    caught: frozenset[str] = frozenset()  # exceptions an enclosing `try` of the function catches


@dataclass(frozen=True, slots=True)
class WriteEvent:
    """An assignment to a server argument: `self.x = ...`, `setattr(cfg, "x", ...)`, `declare_resolution(..., x=...)`."""

    field: str
    value: str
    line: int
    end_line: int
    condition: Formula
    enclosing: tuple[int, ...]
    order: int
    anchor: tuple[str, ...] = ()
    # The written expression and the locals it is read in: the run turns it into launch values.
    node: cst.BaseExpression | None = field(default=None, compare=False, hash=False)
    env: Env = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class ReturnEvent:
    condition: Formula
    node: cst.BaseExpression | None
    env: Env


@dataclass(frozen=True, slots=True)
class FunctionInfo:
    """A function found in a module, before any walk."""

    key: str  # "<dotted module>:<qualname>"
    qualname: str
    name: str
    class_name: str | None
    file: str
    module: str  # dotted module name
    line: int
    end_line: int
    body_line: int
    params: tuple[str, ...]
    aliases: frozenset[str]
    # Gives the libcst tree, parsed when first read: a function known from an earlier extraction is
    # called and reused without it.
    source: Callable[[], cst.FunctionDef] = field(compare=False, hash=False, repr=False)
    declares: bool = False  # returns {"field": value} decisions (post-process passes, model overrides)
    returns_value: bool = False  # has a `return <value>` (and no `yield`): a helper read by what it returns
    defaulted: tuple[str, ...] = ()  # parameters with a default value
    imports: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)  # its own imports
    # The decorator that puts it in a registry (`@register_for("A", "B")`) and the strings it is given.
    registry: tuple[str, tuple[str, ...]] | None = None
    decorators: tuple[str, ...] = ()  # what each decorator calls or is, as a dotted name ("" for anything else)
    # Whether it may be `straight_return`-shaped (False: known not to be, without its syntax).
    straight: bool = True

    @property
    def node(self) -> cst.FunctionDef:
        return self.source()

    @property
    def straight_return(self) -> tuple[tuple[tuple[str, cst.BaseExpression], ...], cst.BaseExpression] | None:
        """A function that is straight-line local assignments, then one `return`: (assignments, returned).

        `return cfg.x is not None` (a predicate), or `prefill = ...; decode = ...; return prefill, decode`.
        """
        return straight_return(self.node) if self.straight else None


@dataclass
class FunctionSummary:
    """The events of one walk of a function, in the order they happen."""

    info: FunctionInfo
    scope: Scope
    guards: list[GuardEvent] = field(default_factory=list)
    calls: list[CallEvent] = field(default_factory=list)
    writes: list[WriteEvent] = field(default_factory=list)
    returns: list[ReturnEvent] = field(default_factory=list)
    imports: dict[str, str] = field(default_factory=dict)  # function-level imports: local name -> dotted target


def straight_return(node: cst.FunctionDef) -> tuple[tuple[tuple[str, cst.BaseExpression], ...], cst.BaseExpression] | None:
    """`FunctionInfo.straight_return` of a function's syntax."""
    body = [s for s in node.body.body if not _is_docstring(s)]
    assignments: list[tuple[str, cst.BaseExpression]] = []
    for stmt in body[:-1]:
        if not (type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1):
            return None
        small = stmt.body[0]
        if type(small) in (cst.Import, cst.ImportFrom):
            continue  # `from x import helper` then `return helper(cfg)`: the call resolves through it
        if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
            assignments.append((small.targets[0].target.value, small.value))
        elif type(small) is cst.AnnAssign and type(small.target) is cst.Name and small.value is not None:
            assignments.append((small.target.value, small.value))
        else:
            return None
    if body and type(body[-1]) is cst.SimpleStatementLine and len(body[-1].body) == 1:
        stmt = body[-1].body[0]
        if type(stmt) is cst.Return and stmt.value is not None:
            return tuple(assignments), stmt.value
    return None


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        type(stmt) is cst.SimpleStatementLine
        and len(stmt.body) == 1
        and type(stmt.body[0]) is cst.Expr
        and type(stmt.body[0].value) in (cst.SimpleString, cst.ConcatenatedString)
    )
