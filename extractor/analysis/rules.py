"""Rule records from function summaries: snippets, adjustment records and stable ids."""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..core.formula import fields_read
from ..core.model import Location, Rule, RuleKind, Snippet
from .pyast import docstring_at

if TYPE_CHECKING:  # libcst-backed; `diff` uses the id helpers here without parsing anything
    from .events import GuardEvent, WriteEvent
    from .modules import ModuleSummary
    from .walks import Walk

SNIPPET_CONTEXT = 12  # at most this many lines above the raise, starting at its outermost enclosing `if`
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def rules_of(functions: Iterable[tuple[ModuleSummary, Walk]]) -> list[Rule]:
    """Every guard and every write to a server argument, as records with stable ids, sorted by file and line."""
    drafts: list[tuple[Rule, tuple[str, ...]]] = []
    for module, walk in functions:
        drafts.extend((_guard_rule(module, walk, g), g.anchor) for g in walk.guards)
        drafts.extend((_write_rule(module, walk, w), w.anchor) for w in walk.writes if not w.field.startswith("_"))
    drafts.sort(key=lambda d: (d[0].location.file, d[0].location.line, d[0].kind.value, d[0].message))
    return assign_ids([rule for rule, _ in drafts], [anchor for _, anchor in drafts])


def _guard_rule(module: ModuleSummary, fn: Walk, g: GuardEvent) -> Rule:
    return Rule(
        id="",
        kind=g.kind,
        exception=g.exception,
        message=g.message,
        message_static=g.message_static,
        location=Location(module.path, g.line, g.end_line),
        function=fn.qualname,
        snippet=snippet(module.lines, g.line, g.end_line, g.enclosing, fn.body_line),
        condition=g.condition,
        enclosing=g.enclosing,
        placeholders=g.placeholders,
        doc=docstring_at(module.lines, fn.body_line) if fn.body_line else None,
    )


def _write_rule(module: ModuleSummary, fn: Walk, w: WriteEvent) -> Rule:
    flag = "--" + w.field.replace("_", "-")
    return Rule(
        id="",
        kind=RuleKind.ADJUSTMENT,
        exception=None,
        message=f"Sets {flag} to {w.value}",
        message_static=True,
        location=Location(module.path, w.line, w.end_line),
        function=fn.qualname,
        snippet=snippet(module.lines, w.line, w.end_line, w.enclosing, fn.body_line),
        condition=w.condition,
        enclosing=w.enclosing,
        target=w.field,
        value=w.value,
    )


def snippet(lines: list[str], line: int, end_line: int, enclosing: tuple[int, ...], body_line: int) -> Snippet:
    """The statement with its enclosing guard lines above it, dedented."""
    start = enclosing[0] if enclosing else max(body_line, line - 2)
    start = max(start, line - SNIPPET_CONTEXT, 1)
    end = min(end_line, len(lines))
    while start < line and not lines[start - 1].strip():
        start += 1
    text = textwrap.dedent("\n".join(lines[start - 1 : end]))
    return Snippet(start, end, text)


def normalized_message(message: str) -> str:
    return " ".join(_PLACEHOLDER.sub("{}", message).split())


def function_key(qualname: str) -> str:
    # `ServerArgs._handle_cache_compatibility` and `handle_cache_compatibility` are the same guard's home.
    return qualname.rsplit(".", 1)[-1].lstrip("_")


def _identity(rule: Rule) -> str:
    if rule.kind is RuleKind.ADJUSTMENT:
        return f"adjust|{rule.target}|{' '.join((rule.value or '').split())}"
    return f"guard|{normalized_message(rule.message)}"


def assign_ids(rules: list[Rule], anchors: list[tuple[str, ...]] | None = None) -> list[Rule]:
    """Ids from the message alone where it is unique, else refined by function, own tests, then order.

    The message survives moves between files and functions (0.5.18 `ServerArgs._handle_x` ->
    0.5.19 `arg_groups/..::handle_x`), so it is the first key; duplicates are told apart by what
    is most stable about them: the function, then the fields the guard's own tests read (`anchors`,
    not the whole path condition, which changes whenever a guard is added above), then their order.
    """
    keys = [_identity(r) for r in rules]
    tests = anchors if anchors is not None else [fields_read(r.condition) for r in rules]
    refiners = (
        lambda i: function_key(rules[i].function),
        lambda i: ",".join(tests[i]),
        None,  # order among the rest
    )
    for refine in refiners:
        groups: dict[str, list[int]] = defaultdict(list)
        for index, key in enumerate(keys):
            groups[key].append(index)
        duplicated = [members for members in groups.values() if len(members) > 1]
        if not duplicated:
            break
        for members in duplicated:
            for ordinal, index in enumerate(members):
                suffix = refine(index) if refine else str(ordinal)
                keys[index] = f"{keys[index]}|{suffix}"
    return [replace(rule, id=hashlib.sha256(key.encode()).hexdigest()[:16]) for rule, key in zip(rules, keys)]
