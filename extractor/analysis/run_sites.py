"""The raises of a method `check` reads by running it: `raised_in("<method key>", <n>, ...)`, with what
the instance holds when it is called."""

from __future__ import annotations



import libcst as cst

from ..core.formula import render, terms
from ..core.model import RUN_FUNCTION, Atom, Formula
from .normalize import classify, term_source
from .scope import (
    Choice,
    Env,
    Scope,
    Value,
)
from .object_locals import OBJECT_PREFIX


class RunSites:
    """The raises and asserts of a method, in the order they stand, and what the instance holds when
    it is called: `raised_in("<method key>", <n>, quantization=..., ...)`, a term `check` reads by
    running the method's body over the launch's values (the instance's attributes as the caller set
    them: `self.quantization = quantization` from `--quantization`) and telling whether its n-th
    raise is where it stops."""

    def __init__(self, key: str, node: cst.FunctionDef, entry: Env, reads: frozenset[str]) -> None:
        self.key = key
        self.node = node
        self.entry = entry
        self.reads = reads
        self.sites: dict[int, int] | None = None  # counted when a guard first needs it (few do)

    def reached(self, node: cst.Raise | cst.Assert, scope: Scope) -> Formula | None:
        if self.sites is None:
            self.sites = {id(n): i for i, n in enumerate(_guard_statements(self.node))}
        number = self.sites.get(id(node))
        if number is None:
            return None
        arguments = [repr(self.key), str(number)]
        fields: set[str] = set()
        for name in sorted(self.reads):
            value = self.entry.get(OBJECT_PREFIX + name)
            if value is not None:
                text, read = _value_source(value, scope)
                arguments.append(f"{name}={text}")
                fields.update(read)
        return Atom(classify(f"{RUN_FUNCTION}({', '.join(arguments)})", tuple(sorted(fields))))


def _value_source(value: Value, scope: Scope) -> tuple[str, tuple[str, ...]]:
    """What an attribute holds as source `check` reads: a value that depends on the path as
    `(a if test else b)`, each test as its formula reads; an option the walk lost as its local's name,
    unknown only where that path is taken."""
    if isinstance(value, Choice):
        text, fields = "", set()
        for condition, option in reversed(value.options):
            option_text, option_fields = _value_source(option, scope)
            fields.update(option_fields)
            if not text:
                text = option_text
                continue
            fields.update(f for t in terms(condition) for f in t.fields)
            text = f"({option_text} if {render(condition)} else {text})"
        return text, tuple(sorted(fields))
    return term_source(cst.Name("_value"), scope, {"_value": value})


def _guard_statements(node: cst.FunctionDef) -> list[cst.CSTNode]:
    """The raises and asserts of a function in source order, nested functions and classes left out."""
    found: list[cst.CSTNode] = []

    class Visitor(cst.CSTVisitor):
        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node

        def visit_ClassDef(self, inner: cst.ClassDef) -> bool:
            return False

        def visit_Raise(self, inner: cst.Raise) -> None:
            found.append(inner)

        def visit_Assert(self, inner: cst.Assert) -> None:
            found.append(inner)

    node.visit(Visitor())
    return found
