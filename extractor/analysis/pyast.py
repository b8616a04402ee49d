"""Facts read from Python's own `ast` nodes: source lines and text, dotted names, literals, messages, imports.

The module index and the flag catalog read declarations with `ast`, which parses a 10k-line file
in a tenth of libcst's time; only the functions the walk follows are parsed again with libcst
(see modules.py). These helpers give the same answers as their libcst counterparts in conditions.py
and guards.py, so either parser's node leads to the same record.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable, Mapping

from ..core.model import Lit

_NEWLINE = re.compile(r"\r\n|\r|\n")


def source_lines(text: str) -> list[str]:
    """The lines of a source as the Python tokenizer counts them (`str.splitlines` also breaks at form feeds)."""
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def segment(lines: list[str], node: ast.AST) -> str:
    """The exact source of a node, sliced from the module's lines (`ast` columns count UTF-8 bytes)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1  # type: ignore[attr-defined]
    start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    if first == last:
        return _columns(lines[first], start, end)
    return "\n".join([_columns(lines[first], start, None), *lines[first + 1 : last], _columns(lines[last], 0, end)])


def _columns(line: str, start: int, end: int | None) -> str:
    if line.isascii():
        return line[start:end]
    return line.encode("utf-8")[start:end].decode("utf-8", errors="replace")


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def string(node: ast.AST | None) -> str | None:
    """The value of a plain (not f-) string literal, implicit concatenations joined."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


class _NotLiteral(Exception):
    pass


def literal(node: ast.AST, constants: Mapping[str, Lit] | None = None) -> Lit | None:
    """A literal value (strings, numbers, booleans, None, tuples of them, named module constants)."""
    try:
        return Lit(_literal_value(node, constants))
    except _NotLiteral:
        return None


def _literal_value(node: ast.AST, constants: Mapping[str, Lit] | None):
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (str, int, float)) or node.value is None:  # bool is an int
            return node.value
        raise _NotLiteral  # bytes, complex, Ellipsis
    if isinstance(node, ast.Name) and constants is not None and node.id in constants:
        return constants[node.id].value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _literal_value(node.operand, constants)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
        raise _NotLiteral
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        if any(isinstance(element, ast.Starred) for element in node.elts):
            raise _NotLiteral
        return tuple(_literal_value(element, constants) for element in node.elts)
    raise _NotLiteral


def message_text(node: ast.expr, text_of: Callable[[ast.AST], str]) -> tuple[str, bool]:
    """A message with f-string placeholders kept as `{expr}`, and whether it is fully static."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        static = True
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                static = False
                parts.append("{" + text_of(value.value) + _conversion(value) + "}")
        return "".join(parts), static
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, s1 = message_text(node.left, text_of)
        right, s2 = message_text(node.right, text_of)
        return left + right, s1 and s2
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return message_text(node.left, text_of)[0], False
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        return node.func.value.value, False
    return "{" + text_of(node) + "}", False


def _conversion(value: ast.FormattedValue) -> str:
    """`!r` and a constant format spec (`:.2f`) as the f-string writes them: how the value is shown."""
    text = f"!{chr(value.conversion)}" if value.conversion != -1 else ""
    spec = value.format_spec
    if isinstance(spec, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in spec.values):
        text += ":" + "".join(str(v.value) for v in spec.values)  # type: ignore[union-attr]
    return text


def absolute_module(module: str, level: int, file: str) -> str:
    """The dotted module a `from <dots><module> import` in `file` names (`level` = number of dots)."""
    if not level:
        return module
    package = file.removesuffix(".py").split("/")[:-1]
    up = level - 1
    base = package[: len(package) - up] if up else package
    return ".".join([*base, module] if module else base)


def import_bindings(node: ast.Import | ast.ImportFrom, file: str) -> dict[str, str]:
    """Names an import statement binds, mapped to the dotted thing they denote."""
    bound: dict[str, str] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        return bound
    module = absolute_module(node.module or "", node.level, file)
    for alias in node.names:
        if alias.name == "*":
            if module:
                bound[f"*{module}"] = module  # `from m import *`: names not found here are looked up in m
            return bound
        bound[alias.asname or alias.name] = f"{module}.{alias.name}" if module else alias.name
    return bound


_DOC_LINES = 60  # a docstring longer than this is not looked for


def docstring_at(lines: list[str], line: int) -> str | None:
    """The first paragraph of the docstring that opens a function body at `line` (1-based; the body's
    first statement), in one line; None when that statement is no string literal."""
    first = lines[line - 1].lstrip() if 0 < line <= len(lines) else ""
    if not first[:4].lstrip("rRuU").startswith(('"', "'")):
        return None
    for end in range(line, min(line + _DOC_LINES, len(lines)) + 1):
        # Under an `if` so that the body's own indentation parses, whatever a string's lines hold.
        try:
            tree = ast.parse("if 1:\n" + "\n".join(lines[line - 1:end]))
        except SyntaxError:
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.If) else []
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            paragraph = inspect.cleandoc(body[0].value.value).split("\n\n", 1)[0]
            return " ".join(paragraph.split()) or None
        return None
    return None

