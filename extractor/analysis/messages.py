"""A guard's message as the user reads it: its text with placeholders, and what each placeholder of a
local or a constant holds where it is raised."""

from __future__ import annotations


import ast
import os
from collections.abc import Iterator

import libcst as cst

from ..core.model import Lit, Term, TermKind
from .conditions import to_term
from .pyast import message_text
from .scope import (
    Bound,
    Choice,
    Env,
    Scope,
    code,
    field_of,
)


def message_arg(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("msg", "message"):
            return arg.value
    return None


def message_of(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[str, bool]:
    """The message text with f-string placeholders kept as `{expr}`, and whether it is fully static."""
    if type(node) is cst.Name and node.value in env:
        value = env[node.value]
        if isinstance(value, Bound):
            return message_of(value.node, scope, value.env)
        if isinstance(value, Choice):
            # `error = "base"; if x: error += " more"`: what every variant starts with, then the rest open.
            variants = [message_of(v.node, scope, v.env) for _, v in value.options if isinstance(v, Bound)]
            if len(variants) == len(value.options) and len({text for text, _ in variants}) == 1:
                return variants[0]
            prefix = os.path.commonprefix([text for text, _ in variants]) if variants else ""
            return prefix + "{" + node.value + "}", False
        return "{" + node.value + "}", False
    if type(node) in (cst.SimpleString, cst.ConcatenatedString) and isinstance(node.evaluated_value, str):
        return node.evaluated_value, True  # no f-string part: libcst already joined and unescaped it
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Add:
        left, left_static = message_of(node.left, scope, env)  # `error + " more"`: each part in the locals
        right, right_static = message_of(node.right, scope, env)
        return left + right, left_static and right_static
    source = code(node)
    wrapped = "(" + source + ")"
    try:
        tree = ast.parse(wrapped, mode="eval").body
    except SyntaxError:
        return "{" + source + "}", False
    return message_text(tree, lambda n: ast.get_source_segment(wrapped, n) or ast.unparse(n))


def placeholder_values(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[tuple[str, Lit | Term], ...]:
    """What the message's placeholders of a bare name hold where it is raised, when the walk knows: a
    plain literal (`ib_sysfs_path = "/sys/class/infiniband"`), the field a local was read from
    (`backend = cfg.attention_backend`: the field's value there), or a term over no field that a
    checker evaluates over the platform and the model. A tuple literal only where the local's display
    says how it prints (a module constant's Lit does not); placeholders with a format spec stay."""
    while type(node) is cst.Name and isinstance(env.get(node.value), Bound):  # `raise ValueError(msg)`
        bound = env[node.value]
        node, env, scope = bound.node, bound.env, bound.scope or scope  # type: ignore[union-attr]
    parts = [p for string in _formatted_strings(node) for p in string.parts
             if type(p) is cst.FormattedStringExpression and type(p.expression) is cst.Name]
    # `{x!r}` is filled as `repr(x)` (the message keeps the conversion); a format spec is left as written.
    converted = {p.expression.value for p in parts if p.format_spec is not None or p.conversion not in (None, "r", "s")}
    found: dict[str, Lit | Term] = {}
    for part in parts:
        name = part.expression.value
        if name in converted or name in found or field_of(part.expression, scope, env) is not None:
            continue  # a server argument's own placeholder: `check` fills those already
        value: Lit | Term | None = to_term(part.expression, scope, env)
        if isinstance(value, Lit) and isinstance(value.value, tuple):
            value = _displayed(value, env.get(name))
        if value is not None and _showable(value, name):
            found[name] = value
    return tuple(sorted(found.items(), key=lambda item: item[0]))


def _showable(value: Lit | Term, name: str) -> bool:
    """A placeholder's value `check` can show: a plain literal, a field read as it is, or a term over
    no field that is no lost local's own name (a module constant's name is fine: the facts read it)."""
    if isinstance(value, Lit):
        return value.value is None or isinstance(value.value, (str, int, float, bool))
    if value.kind is TermKind.FIELD:
        return not value.transforms
    return not value.fields and (value.text.isupper() or value.text != name and not value.text.isidentifier())


def _formatted_strings(node: cst.BaseExpression) -> Iterator[cst.FormattedString]:
    if type(node) is cst.ConcatenatedString:
        yield from _formatted_strings(node.left)
        yield from _formatted_strings(node.right)
    elif type(node) is cst.FormattedString:
        yield node


def _displayed(value: Lit, bound: object) -> Lit | None:
    """A tuple literal as the message prints it, when the local is bound to a display that says which
    kind of sequence it is (`("flashinfer", "fa3")` prints as a tuple, `[...]` as a list)."""
    node = bound.node if isinstance(bound, Bound) else None
    if type(node) is cst.Tuple:
        return Lit(str(value.value))
    if type(node) is cst.List:
        return Lit(str(list(value.value)))  # type: ignore[arg-type]
    return None
