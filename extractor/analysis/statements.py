"""Facts of libcst statements the walk asks: handlers that catch or raise again, calls outside raises,
a try body that is one call a profile or the model's config decides, imports, assignments unpacked,
iterables known to be empty."""

from __future__ import annotations


from collections.abc import Iterator

import libcst as cst

from .pyast import absolute_module
from .scope import (
    Env,
    Scope,
    code,
    constant_of,
    dotted_name,
    iter_expression,
)


def calls_outside_raises(body: cst.BaseSuite, json_modeled: bool = False) -> bool:
    """Does the block call anything, other than to build the exceptions it raises? (`json_modeled`:
    nor `json.loads` of a launch's value, whose JSONDecodeError the walk spells out itself.)"""
    found = False

    class _Calls(cst.CSTVisitor):
        def visit_Raise(self, node: cst.Raise) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> bool:
            nonlocal found
            if json_modeled and json_loads_calls(node) == [node] and not has_call(node.args[0].value):
                return False
            found = True
            return False

    body.visit(_Calls())
    return found


def _one_call(body: cst.BaseSuite) -> cst.Call | None:
    """The call a block is, when it is one statement that calls one thing (`return f(x)`, `f(x)`, `y = f(x)`)."""
    statements = body.body if type(body) is cst.IndentedBlock else [body]
    if len(statements) != 1 or type(statements[0]) not in (cst.SimpleStatementLine, cst.SimpleStatementSuite) \
            or len(statements[0].body) != 1:  # type: ignore[union-attr]
        return None
    statement = statements[0].body[0]  # type: ignore[union-attr]
    call = statement.value if type(statement) in (cst.Return, cst.Expr, cst.Assign) else None
    return call if type(call) is cst.Call else None


def platform_call(body: cst.BaseSuite) -> str | None:
    """The call of a try body that is one call of the current platform's method and nothing else
    (`return current_platform.get_device(device_id)`), its arguments plain names or literals: what a
    profile says of that method decides whether the body raises (`raised(Exception, <call>)`)."""
    call = _one_call(body)
    name = dotted_name(call.func) if call is not None else None
    if name is None or not name.startswith("current_platform.") or name.count(".") != 1 or any(
            arg.star or type(arg.value) not in (cst.Name, cst.Integer, cst.SimpleString) for arg in call.args):
        return None
    # Spelled on one line whatever the source's layout (parentheses and breaks around a long call).
    arguments = (f"{arg.keyword.value}={code(arg.value)}" if arg.keyword else code(arg.value) for arg in call.args)
    return f"{name}({', '.join(arguments)})"


def config_load_call(body: cst.BaseSuite) -> cst.Call | None:
    """The call of a try body that is one call of transformers' `AutoConfig.from_pretrained(path, ...)`:
    the checkpoint's config.json and the model types the release's transformers knows decide whether it
    raises. Given back with the arguments that decide it, `AutoConfig.from_pretrained(path,
    trust_remote_code=...)` (`raised(ValueError, <call>)`)."""
    call = _one_call(body)
    return config_load(call) if call is not None else None


def config_loads(node: cst.BaseExpression) -> list[cst.Call]:
    """The `AutoConfig.from_pretrained(path, ...)` calls of an expression, each as `config_load` spells it."""
    return [load for n in iter_expression(node) if type(n) is cst.Call and (load := config_load(n)) is not None]


def config_load(call: cst.Call) -> cst.Call | None:
    """`AutoConfig.from_pretrained(path, trust_remote_code=...)` of a call of it, with only the arguments
    that decide whether it raises; None for any other call."""
    name = dotted_name(call.func)
    if name is None or name.rpartition(".")[0].rpartition(".")[2] != "AutoConfig" or not name.endswith(".from_pretrained") \
            or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    trust = [cst.Arg(arg.value, keyword=cst.Name("trust_remote_code"), equal=_EQUAL) for arg in call.args
             if arg.keyword is not None and arg.keyword.value == "trust_remote_code"]
    loader = cst.Attribute(cst.Name("AutoConfig"), cst.Name("from_pretrained"))
    return cst.Call(loader, [cst.Arg(call.args[0].value, comma=_COMMA) if trust else cst.Arg(call.args[0].value), *trust])


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


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


# Errors a library raises on a value the launch gives, and the `except` names that catch each.
LIBRARY_ERRORS = {"json.JSONDecodeError": frozenset({"JSONDecodeError", "ValueError", "Exception", "BaseException"})}
JSON_TEMPLATE = "{msg}: line {lineno} column {colno} (char {pos})"  # json.decoder's, as `str()` of its error shows
# The message of a guard of transformers' own (`AutoConfig.from_pretrained` outside a `try` that takes
# its error), until the extraction puts there what the pinned transformers says (`config_loader.said_again`).
CONFIG_LOAD_MESSAGE = "{config_load_error}"


def json_loads_calls(node: cst.BaseExpression) -> list[cst.Call]:
    """The `json.loads(text)` calls of an expression whose text is a value a launch may give (a name,
    an attribute, a subscript; not a file's contents read by a call)."""
    return [n for n in iter_expression(node) if type(n) is cst.Call and dotted_name(n.func) == "json.loads"
            and len(n.args) == 1 and n.args[0].keyword is None and not n.args[0].star
            and type(n.args[0].value) in (cst.Name, cst.Attribute, cst.Subscript)]


def caught_by(exception: str | None, names: set[str]) -> bool:
    """Does a handler naming `names` (last names) catch a guard's `exception`? By its own name, or, for
    a library's error, by the names that catch it (`json.JSONDecodeError` is a ValueError)."""
    last = (exception or "").rsplit(".", 1)[-1]
    return last in names or bool(LIBRARY_ERRORS.get(exception or "", frozenset()) & names)


def has_call(node: cst.CSTNode) -> bool:
    return any(type(n) is cst.Call for n in iter_expression(node))


def empty_iterable(node: cst.BaseExpression, scope: Scope, env: Env) -> bool:
    """An empty literal, or a constant holding one (a registry no code of the package fills)."""
    if type(node) in (cst.List, cst.Tuple) and not node.elements:  # type: ignore[attr-defined]
        return True
    found = constant_of(node, scope, env)
    return found is not None and found.value == ()


def import_bindings(node: cst.Import | cst.ImportFrom, file: str) -> dict[str, str]:
    """Names an import statement binds, mapped to the dotted thing they denote."""
    bound: dict[str, str] = {}
    if type(node) is cst.Import:
        for alias in node.names:
            target = dotted_name(alias.name) or ""
            local = alias.asname.name.value if alias.asname else target.split(".")[0]  # type: ignore[union-attr]
            bound[local] = target if alias.asname else local
        return bound
    module = dotted_name(node.module) if node.module is not None else ""
    module = absolute_module(module, len(node.relative), file)
    if type(node.names) is cst.ImportStar:
        return bound
    for alias in node.names:
        name = dotted_name(alias.name) or ""
        local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
        bound[local] = f"{module}.{name}" if module else name
    return bound


# `x += y` read as `x = x + y`: the binary operator of each augmented assignment.
BINARY_OF_AUGMENTED = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power,
    cst.BitOrAssign: cst.BitOr,
    cst.BitAndAssign: cst.BitAnd,
    cst.BitXorAssign: cst.BitXor,
    cst.LeftShiftAssign: cst.LeftShift,
    cst.RightShiftAssign: cst.RightShift,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
}
