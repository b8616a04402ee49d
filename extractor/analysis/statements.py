"""Facts of libcst statements the walk asks: handlers that catch or raise again, calls outside raises,
assignments unpacked, iterables known to be empty."""

from __future__ import annotations


from collections.abc import Iterator

import libcst as cst

from .scope import (
    Env,
    Scope,
    code,
    constant_of,
    dotted_name,
    iter_expression,
)


def calls_outside_raises(body: cst.BaseSuite) -> bool:
    """Does the block call anything, other than to build the exceptions it raises?"""
    found = False

    class _Calls(cst.CSTVisitor):
        def visit_Raise(self, node: cst.Raise) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> bool:
            nonlocal found
            found = True
            return False

    body.visit(_Calls())
    return found


def platform_call(body: cst.BaseSuite) -> str | None:
    """The call of a try body that is one call of the current platform's method and nothing else
    (`return current_platform.get_device(device_id)`), its arguments plain names or literals: what a
    profile says of that method decides whether the body raises (`raised(Exception, <call>)`)."""
    statements = body.body if type(body) is cst.IndentedBlock else [body]
    if len(statements) != 1 or type(statements[0]) not in (cst.SimpleStatementLine, cst.SimpleStatementSuite) \
            or len(statements[0].body) != 1:  # type: ignore[union-attr]
        return None
    statement = statements[0].body[0]  # type: ignore[union-attr]
    call = statement.value if type(statement) in (cst.Return, cst.Expr, cst.Assign) else None
    name = dotted_name(call.func) if type(call) is cst.Call else None
    if name is None or not name.startswith("current_platform.") or name.count(".") != 1 or any(
            arg.star or type(arg.value) not in (cst.Name, cst.Integer, cst.SimpleString) for arg in call.args):
        return None
    # Spelled on one line whatever the source's layout (parentheses and breaks around a long call).
    arguments = (f"{arg.keyword.value}={code(arg.value)}" if arg.keyword else code(arg.value) for arg in call.args)
    return f"{name}({', '.join(arguments)})"


def caught_names(handler: cst.ExceptHandler) -> list[str]:
    """The exception classes an `except` clause names, by their last name (`except (ValueError, KeyError)`)."""
    if handler.type is None:
        return ["BaseException"]
    types = [e.value for e in handler.type.elements] if type(handler.type) is cst.Tuple else [handler.type]
    return [name.rsplit(".", 1)[-1] for name in (dotted_name(t) for t in types) if name]


def handler_raises(handler: cst.ExceptHandler) -> bool:
    """Does an `except` clause raise (again, or another error)? Then what it catches still ends the launch."""
    return any(type(n) is cst.Raise for n in _all_nodes(handler.body))


def _all_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if type(current) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(current.children)


def unpacked(target: cst.Tuple | cst.List, value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The part of `value` each element of an unpacking target takes: the items of a tuple or list of as
    many, else `value[i]`; None with a starred target or item."""
    elements = target.elements
    if any(type(e) is cst.StarredElement for e in elements):
        return None
    if type(value) in (cst.Tuple, cst.List):
        items = value.elements  # type: ignore[attr-defined]
        if len(items) != len(elements) or any(type(i) is cst.StarredElement for i in items):
            return None
        return [i.value for i in items]
    whole = value if type(value) in (cst.Name, cst.Attribute, cst.Call, cst.Subscript) or getattr(value, "lpar", None) else \
        value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return [cst.Subscript(value=whole, slice=[cst.SubscriptElement(slice=cst.Index(value=cst.Integer(str(i))))])
            for i in range(len(elements))]


def has_call(node: cst.CSTNode) -> bool:
    return any(type(n) is cst.Call for n in iter_expression(node))


def empty_iterable(node: cst.BaseExpression, scope: Scope, env: Env) -> bool:
    """An empty literal, or a constant holding one (a registry no code of the package fills)."""
    if type(node) in (cst.List, cst.Tuple) and not node.elements:  # type: ignore[attr-defined]
        return True
    found = constant_of(node, scope, env)
    return found is not None and found.value == ()
