"""Line numbers of libcst statements, read from an `ast` tree of the same text walked in step.

libcst's PositionProvider regenerates the whole module to find positions and costs several times
the parse on a 10k-line file; `ast` has line numbers for free and lists statements in the same
order, so walking both trees together gives every statement its lines at a fraction of the cost.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

Span = tuple[int, int]  # first line, last line (1-based, inclusive)


def statement_lines(module: cst.Module, tree: ast.Module) -> dict[int, Span]:
    """Map `id(libcst statement)` to its (line, end_line) for every statement in the module."""
    return {
        id(node): (stmt.lineno, stmt.end_lineno or stmt.lineno)
        for node, stmt in statement_pairs(list(_cst_block(module.body)), tree.body)
    }


def statement_pairs(cst_stmts: list[cst.CSTNode], ast_stmts: list[ast.stmt]) -> Iterator[tuple[cst.CSTNode, ast.stmt]]:
    """Each libcst statement with the `ast` statement of the same source, nested blocks included."""
    if len(cst_stmts) != len(ast_stmts):  # pragma: no cover - both parsers read the same grammar
        raise AssertionError(f"statement lists differ near line {ast_stmts[0].lineno if ast_stmts else '?'}")
    for node, stmt in zip(cst_stmts, ast_stmts):
        yield node, stmt
        for cst_children, ast_children in zip(child_blocks(node), ast_blocks(stmt)):
            yield from statement_pairs(cst_children, ast_children)


def _cst_block(statements) -> Iterator[cst.CSTNode]:
    """Flatten `a; b` lines into their small statements, as `ast` lists them."""
    for stmt in statements:
        if type(stmt) is cst.SimpleStatementLine:
            yield from stmt.body
        else:
            yield stmt


def _suite(block: cst.BaseSuite) -> list[cst.CSTNode]:
    return list(_cst_block(block.body))


def iter_statements(statements) -> Iterator[cst.CSTNode]:
    """Every small and compound statement under a body, not entering nested functions or classes."""
    for node in _cst_block(statements):
        yield node
        if not type(node) in (cst.FunctionDef, cst.ClassDef):
            for block in child_blocks(node):
                yield from iter_statements(block)


def child_blocks(node: cst.CSTNode) -> list[list[cst.CSTNode]]:
    """The statement lists directly under a compound statement, in source order."""
    if type(node) in (cst.FunctionDef, cst.ClassDef, cst.With):
        return [_suite(node.body)]
    if type(node) is cst.If:
        orelse = node.orelse
        if orelse is None:
            return [_suite(node.body), []]
        if type(orelse) is cst.If:
            return [_suite(node.body), [orelse]]
        return [_suite(node.body), _suite(orelse.body)]
    if type(node) in (cst.For, cst.While):
        return [_suite(node.body), _suite(node.orelse.body) if node.orelse else []]
    if type(node) in (cst.Try, cst.TryStar):
        return [
            _suite(node.body),
            *[_suite(h.body) for h in node.handlers],
            _suite(node.orelse.body) if node.orelse else [],
            _suite(node.finalbody.body) if node.finalbody else [],
        ]
    if type(node) is cst.Match:
        return [_suite(case.body) for case in node.cases]
    return []


def ast_blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly under a compound `ast` statement, as `child_blocks` lists libcst's."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        return [stmt.body, *[h.body for h in stmt.handlers], stmt.orelse, stmt.finalbody]  # type: ignore[attr-defined]
    if isinstance(stmt, ast.Match):
        return [case.body for case in stmt.cases]
    return []
