"""A guard's message as the user reads it: its text with placeholders, and what each placeholder of a
local or a constant holds where it is raised."""

from __future__ import annotations


import ast
import os
from collections.abc import Iterator

import libcst as cst

from ..core.model import FALSE, TRUE, Choices, Lit, Term, TermKind
from .conditions import operand_cases, to_term
from .pyast import message_text
from .scope import (
    FIELD_KEY,
    Bound,
    Choice,
    Env,
    Original,
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


def placeholder_values(node: cst.BaseExpression, scope: Scope, env: Env,
                       depth: int = 0) -> tuple[tuple[str, Lit | Term | Choices], ...]:
    """What the message's placeholders of a bare name hold where it is raised, when the walk knows: a
    plain literal (`ib_sysfs_path = "/sys/class/infiniband"`), the field a local was read from
    (`backend = cfg.attention_backend`: the field's value there), or a term over no field that a
    checker evaluates over the platform and the model; one of a few by the way there (`reason =
    "Target model's" if is_draft_model else "User-specified"`: `Choices`). A local bound to an
    f-string (`raise ValueError(f"{msg} ...")`) brings its own placeholders' values. A tuple literal
    only where the local's display says how it prints (a module constant's Lit does not);
    placeholders with a format spec stay."""
    while type(node) is cst.Name and isinstance(env.get(node.value), Bound):  # `raise ValueError(msg)`
        bound = env[node.value]
        node, env, scope = bound.node, bound.env, bound.scope or scope  # type: ignore[union-attr]
    strings = list(_formatted_strings(node))
    parts = [p for string in strings for p in string.parts
             if type(p) is cst.FormattedStringExpression and type(p.expression) is cst.Name]
    # `{x!r}` is filled as `repr(x)` (the message keeps the conversion); a format spec is left as written.
    converted = {p.expression.value for p in parts if p.format_spec is not None or p.conversion not in (None, "r", "s")}
    found: dict[str, Lit | Term | Choices] = {}
    inner: list[tuple[str, Lit | Term | Choices]] = []
    for part in parts:
        name = part.expression.value
        if name in converted or name in found or field_of(part.expression, scope, env) is not None:
            continue  # a server argument's own placeholder: `check` fills those already
        value = _placeholder_value(part.expression, scope, env, name)
        if value is not None:
            found[name] = value
        bound = env.get(name)
        if depth < _MAX_NESTED and isinstance(bound, Bound) and type(bound.node) in (cst.FormattedString,
                                                                                  cst.ConcatenatedString):
            # `msg = f"Warning: {reason} context_length ..."`: the message shows msg's own placeholders.
            inner += placeholder_values(bound.node, bound.scope or scope, bound.env, depth + 1)
    for name, value in inner:
        found.setdefault(name, value)
    for string in strings:  # `{sorted(SUPPORTED)}`: a call over a constant prints one text
        for before, part, after in zip((None, *string.parts), string.parts, (*string.parts[1:], None)):
            # (`{{{x}}}` prints x in braces, which a message's text cannot tell from an escaped `{{x}}`)
            braced = type(before) is cst.FormattedStringText and before.value.endswith("{{") \
                or type(after) is cst.FormattedStringText and after.value.startswith("}}")
            if type(part) is cst.FormattedStringExpression and type(part.expression) is cst.Call \
                    and part.format_spec is None and part.conversion in (None, "s") and not braced:
                shown = constant_display(part.expression, scope, env)
                if shown is not None:
                    found.setdefault(code(part.expression), Lit(shown))
    found.update(_reassigned_fields(strings, scope, env))
    return tuple(sorted(found.items(), key=lambda item: item[0]))


def _reassigned_fields(strings: list[cst.FormattedString], scope: Scope, env: Env) -> dict[str, Lit | Term]:
    """Placeholders of a server argument (`{cfg.speculative_eagle_topk}`) the function itself assigned
    before it raises (`declare_resolution(..., speculative_eagle_topk=cfg.speculative_ngram_max_bfs_breadth)`):
    what it assigned, by the placeholder's text, so that no value the field held before is shown."""
    found: dict[str, Lit | Term] = {}
    for string in strings:
        for part in string.parts:
            if type(part) is not cst.FormattedStringExpression or type(part.expression) is not cst.Attribute \
                    or part.format_spec is not None or part.conversion not in (None, "r", "s"):
                continue
            name = field_of(part.expression, scope, env)
            assigned = env.get(FIELD_KEY + name) if name is not None else None
            if assigned is None or isinstance(assigned, Original):
                continue
            value = to_term(part.expression, scope, env)
            # (one the walk does not follow is left to the run's table, which may know the write)
            if _showable(value, name) and not (isinstance(value, Term) and value.kind is TermKind.FIELD
                                               and value.name == name):
                found[code(part.expression)] = value
    return found


_MAX_NESTED = 2  # f-string locals inside f-string locals followed for their placeholders
_MAX_CHOICES = 6  # values of a placeholder kept by the way to the guard


def _placeholder_value(expression: cst.Name, scope: Scope, env: Env, name: str) -> Lit | Term | Choices | None:
    """A placeholder's value where the guard raises (see `placeholder_values`), or None."""
    value: Lit | Term | None = to_term(expression, scope, env)
    if isinstance(value, Lit) and isinstance(value.value, tuple):
        bound = env.get(name)
        # A module constant's Lit keeps no display (list or tuple): its module says which it is.
        display = getattr(scope.constants, "display", None) if bound is None else None
        kind = display(name) if display is not None else None
        value = _displayed(value, bound) if kind is None else Lit(str(list(value.value) if kind == "list" else value.value))
    if value is not None and _showable(value, name) and not (isinstance(value, Term) and value.kind is TermKind.OPAQUE):
        return value
    # A local that holds one of a few values by the way there (`a if test else b`, set in branches).
    if _chosen_by_way(env.get(name)):
        cases = [(when, case) for when, case in operand_cases(expression, scope, env, False) if when != FALSE]
        if len(cases) == 1 and cases[0][0] == TRUE and _showable(cases[0][1], name):
            return cases[0][1]
        if 2 <= len(cases) <= _MAX_CHOICES and all(isinstance(case, Lit) and _showable(case, name)
                                                   or isinstance(case, Term) and case.kind is TermKind.FIELD
                                                   and _showable(case, name) for _, case in cases):
            return Choices(tuple(cases))
    return value if value is not None and _showable(value, name) else None


def constant_display(call: cst.Call, scope: Scope, env: Env) -> str | None:
    """What Python prints for `sorted(X)`, `len(X)`, `list(X)`, `tuple(X)` or `"sep".join(X)` (also of
    `sorted(X)`) where X is a constant the walk knows (a module constant never changed in place, a local
    bound to a literal), else None. `list`, `tuple` and a bare `join` only of a list or tuple: a set's
    order is the process's own (`list(allowed_modalities)` prints another order each run)."""
    argument = _only_argument(call)
    if argument is None:
        return None
    if type(call.func) is cst.Attribute and call.func.attr.value == "join" and type(call.func.value) is cst.SimpleString:
        separator, items = call.func.value.evaluated_value, _in_order(argument, scope, env)
        if isinstance(separator, str) and items is not None and all(isinstance(item, str) for item in items):
            return separator.join(items)
        return None
    if type(call.func) is not cst.Name or call.func.value not in ("sorted", "len", "list", "tuple"):
        return None
    if call.func.value == "len":
        found = _constant_items(argument, scope, env)
        return str(len(found[0])) if found is not None else None
    items = _in_order(call if call.func.value == "sorted" else argument, scope, env)
    return None if items is None else str(tuple(items) if call.func.value == "tuple" else items)


def _only_argument(call: cst.Call) -> cst.BaseExpression | None:
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value


def _in_order(node: cst.BaseExpression, scope: Scope, env: Env) -> list | None:
    """The items Python iterates, in its order: of `sorted(X)` over any constant X the walk knows, of X
    itself only when it is a list or tuple; else None."""
    if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "sorted":
        argument = _only_argument(node)
        found = _constant_items(argument, scope, env) if argument is not None else None
        try:
            return sorted(found[0]) if found is not None else None  # type: ignore[type-var]
        except TypeError:  # mixed kinds: Python raises there too
            return None
    found = _constant_items(node, scope, env)
    return list(found[0]) if found is not None and found[1] else None


def _constant_items(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[tuple, bool] | None:
    """The items of a constant sequence or set the walk knows, and whether their order is the source's
    (a list or tuple display)."""
    if type(node) is not cst.Name:
        return None
    value = to_term(node, scope, env)
    if not isinstance(value, Lit) or not isinstance(value.value, tuple) \
            or not all(item is None or isinstance(item, (str, int, float, bool)) for item in value.value):
        return None
    bound = env.get(node.value)
    if bound is None:
        display = getattr(scope.constants, "display", None)
        return value.value, display is not None and display(node.value) is not None
    return value.value, isinstance(bound, Bound) and type(bound.node) in (cst.List, cst.Tuple)


def _chosen_by_way(bound: object) -> bool:
    """A local bound, maybe through other locals (`prefill_attn_backend, _ = attention_backends_of(cfg)`
    binds it to the helper's `prefill`), to a value chosen by a test (`a if t else b`, `a or b`) or
    set in branches (`Choice`)."""
    for _ in range(_MAX_NESTED * 4):
        if not (isinstance(bound, Bound) and type(bound.node) is cst.Name and bound.node.value in bound.env):
            break
        bound = bound.env[bound.node.value]
    return isinstance(bound, Choice) or isinstance(bound, Bound) and type(bound.node) in (cst.IfExp,
                                                                                          cst.BooleanOperation)


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
