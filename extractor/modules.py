"""Parse one module once and summarize it: its functions (walked), classes, constants and imports."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import libcst as cst

from .conditions import code, dotted_name, literal
from .guards import FunctionInfo, function_aliases, import_bindings
from .lines import Span, child_blocks, statement_lines
from .model import Lit, SourceProblem


class ParseError(Exception):
    """A file that is not valid Python; carries a SourceProblem."""

    def __init__(self, problem: SourceProblem) -> None:
        super().__init__(f"{problem.file}:{problem.line}:{problem.column}: {problem.message}")
        self.problem = problem


@dataclass(frozen=True, slots=True)
class ClassInfo:
    name: str
    bases: tuple[str, ...]
    methods: tuple[str, ...]
    line: int
    is_enum: bool


@dataclass
class ModuleSummary:
    path: str  # sglang/srt/server_args.py
    dotted: str  # sglang.srt.server_args
    lines: list[str]
    module: cst.Module
    spans: dict[int, Span]
    functions: dict[str, FunctionInfo] = field(default_factory=dict)  # by qualname
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    constants: dict[str, Lit] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # module-level: local name -> dotted target


def dotted_module(path: str) -> str:
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def parse(path: str, text: str) -> tuple[cst.Module, ast.Module]:
    """Parse with both parsers; a syntax error becomes ParseError with file:line:col."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        raise ParseError(SourceProblem(path, error.lineno or 0, error.offset or 0, error.msg)) from None
    except RecursionError:
        raise ParseError(SourceProblem(path, 0, 0, "nesting too deep to parse")) from None
    except (ValueError, MemoryError) as error:
        raise ParseError(SourceProblem(path, 0, 0, f"cannot parse: {error.__class__.__name__}")) from None
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise ParseError(SourceProblem(path, error.raw_line, error.raw_column, error.message)) from None
    except RecursionError:
        raise ParseError(SourceProblem(path, 0, 0, "nesting too deep to parse")) from None
    return module, tree


def summarize(path: str, text: str) -> ModuleSummary:
    """Parse a module and index its functions, classes, constants and imports."""
    module, tree = parse(path, text)
    try:
        with deep_recursion():
            summary = ModuleSummary(path, dotted_module(path), text.splitlines(), module, statement_lines(module, tree))
            _module_names(summary, module.body)
            _scan(summary, module.body, prefix="", class_name=None)
    except RecursionError:
        raise ParseError(SourceProblem(path, 0, 0, "nesting too deep to analyse")) from None
    return summary


@contextmanager
def deep_recursion(limit: int = 20000) -> Iterator[None]:
    """Walks recurse once per level of `if` nests and expressions, which `ast.parse` lets reach ~1,000."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _scan(summary: ModuleSummary, body, prefix: str, class_name: str | None) -> None:
    """Find functions and classes in a block, at any depth of `if`, `try`, `with`, loop and `match` blocks."""
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            _function(summary, stmt, prefix, class_name)
        elif isinstance(stmt, cst.ClassDef):
            _class(summary, stmt, prefix)
        elif not isinstance(stmt, cst.SimpleStatementLine):
            for block in child_blocks(stmt):
                _scan(summary, block, prefix, class_name)


def _module_names(summary: ModuleSummary, body) -> None:
    """Module-level imports and literal constants, also inside `if TYPE_CHECKING:` and `try` blocks."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            _module_statement(summary, stmt)
        elif isinstance(stmt, cst.If):
            _module_names(summary, stmt.body.body)
            if isinstance(stmt.orelse, cst.Else):
                _module_names(summary, stmt.orelse.body.body)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            _module_names(summary, stmt.body.body)
            for handler in stmt.handlers:
                _module_names(summary, handler.body.body)


def _module_statement(summary: ModuleSummary, stmt: cst.SimpleStatementLine) -> None:
    for small in stmt.body:
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            summary.imports.update(import_bindings(small, summary.path))
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            lit = literal(small.value)
            if lit is not None:
                summary.constants[small.targets[0].target.value] = lit
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
            lit = literal(small.value)
            if lit is not None:
                summary.constants[small.target.value] = lit


def _declares(node: cst.FunctionDef, aliases: frozenset[str]) -> bool:
    """A pass whose returned dict becomes declared argument values: registered, or `(view) -> dict`."""
    if any("register" in code(d.decorator) for d in node.decorators):
        return True
    returns = code(node.returns.annotation) if node.returns is not None else ""
    return bool(aliases) and returns.split("[")[0] in ("dict", "Dict", "typing.Dict")


def _class(summary: ModuleSummary, node: cst.ClassDef, prefix: str) -> None:
    qualname = f"{prefix}{node.name.value}"
    bases = tuple(dotted_name(b.value) or code(b.value) for b in node.bases)
    methods = tuple(
        s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)  # type: ignore[union-attr]
    )
    is_enum = any(b.rsplit(".", 1)[-1] in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag") for b in bases)
    summary.classes[qualname] = ClassInfo(qualname, bases, methods, summary.spans[id(node)][0], is_enum)
    _scan(summary, node.body.body, f"{qualname}.", qualname)  # type: ignore[union-attr]


def _function(summary: ModuleSummary, node: cst.FunctionDef, prefix: str, class_name: str | None) -> None:
    qualname = f"{prefix}{node.name.value}"
    params, aliases = function_aliases(node, class_name)
    line, end_line = summary.spans[id(node)]
    body = node.body.body
    first = body[0] if body else None
    body_line = summary.spans.get(id(first.body[0] if isinstance(first, cst.SimpleStatementLine) else first), (line, 0))[0]
    earlier = summary.functions.pop(qualname, None)
    if earlier is not None:
        # A name defined twice (`@property` and its setter, `if`/`else` variants): the last one is what
        # the name calls, the earlier one keeps its guards under a key of its own.
        shadowed = f"{qualname}@{earlier.line}"
        summary.functions[shadowed] = replace(earlier, key=f"{summary.dotted}:{shadowed}")
    summary.functions[qualname] = FunctionInfo(
        f"{summary.dotted}:{qualname}", qualname, node.name.value, class_name, summary.path, summary.dotted,
        line, end_line, body_line, params, aliases, node, _declares(node, aliases),
    )
    # Nested functions are functions of their own.
    _scan(summary, body, f"{qualname}.", None)


# --- outlines: modules outside the read set, parsed one function at a time ------------------------


class _LazyFunctions(dict):
    """Functions of an outlined module, each parsed with libcst the first time it is asked for.

    A call can lead out of the read files into a 5,000-line utility module for one function;
    `ast` finds where every function is for a tenth of libcst's parse, and only the functions
    the call graph really visits pay for a full parse.
    """

    def __init__(self, summary: ModuleSummary, places: dict[str, tuple[int, int, str | None]]) -> None:
        super().__init__()
        self.summary = summary
        self.places = places  # qualname -> (first line incl. decorators, last line, class name)

    def __contains__(self, qualname: object) -> bool:
        return qualname in self.places

    def __getitem__(self, qualname: str) -> FunctionInfo:
        if not dict.__contains__(self, qualname):
            dict.__setitem__(self, qualname, self._parse(qualname))
        return dict.__getitem__(self, qualname)

    def get(self, qualname, default=None):  # type: ignore[override]
        return self[qualname] if qualname in self.places else default

    def values(self):  # type: ignore[override]
        return [self[q] for q in sorted(self.places)]

    def _parse(self, qualname: str) -> FunctionInfo:
        first, last, class_name = self.places[qualname]
        lines = self.summary.lines[first - 1 : last]
        indent = len(lines[0]) - len(lines[0].lstrip())
        text = "\n".join(line[indent:] for line in lines) + "\n"
        module, tree = parse(self.summary.path, text)
        offset = first - 1
        spans = {key: (a + offset, b + offset) for key, (a, b) in statement_lines(module, tree).items()}
        self.summary.spans.update(spans)
        node = next(s for s in module.body if isinstance(s, cst.FunctionDef))
        holder = ModuleSummary(self.summary.path, self.summary.dotted, self.summary.lines, module, self.summary.spans)
        _function(holder, node, f"{qualname.rsplit('.', 1)[0]}." if "." in qualname else "", class_name)
        return holder.functions[qualname]


def outline(path: str, text: str) -> ModuleSummary:
    """Index a module with `ast` only: classes, imports, constants, and functions parsed on demand."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise ParseError(SourceProblem(path, getattr(error, "lineno", 0) or 0, 0, "cannot parse")) from None
    summary = ModuleSummary(path, dotted_module(path), text.splitlines(), cst.Module(body=[]), {})
    places: dict[str, tuple[int, int, str | None]] = {}

    def visit(body: list[ast.stmt], prefix: str, class_name: str | None) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
                places[f"{prefix}{stmt.name}"] = (first, stmt.end_lineno or stmt.lineno, class_name)
            elif isinstance(stmt, ast.ClassDef):
                qualname = f"{prefix}{stmt.name}"
                bases = tuple(ast.unparse(b) for b in stmt.bases)
                methods = tuple(s.name for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
                is_enum = any(b.rsplit(".", 1)[-1] in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag") for b in bases)
                summary.classes[qualname] = ClassInfo(qualname, bases, methods, stmt.lineno, is_enum)
                visit(stmt.body, f"{qualname}.", qualname)
            elif isinstance(stmt, (ast.If, ast.Try)) and not prefix:
                visit(stmt.body, prefix, class_name)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)) and not prefix:
                summary.imports.update(import_bindings(_as_cst_import(summary.lines, stmt), path))
            elif isinstance(stmt, ast.Assign) and not prefix and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    try:
                        value = ast.literal_eval(stmt.value)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                        continue
                    if isinstance(value, (str, int, float, bool, type(None), list, tuple, set)):
                        lit = literal(cst.parse_expression(_segment(summary.lines, stmt.value)))
                        if lit is not None:
                            summary.constants[target.id] = lit

    visit(tree.body, "", None)
    summary.functions = _LazyFunctions(summary, places)  # type: ignore[assignment]
    return summary


def _segment(lines: list[str], node: ast.AST) -> str:
    """The source of a node, sliced from the module's lines (get_source_segment re-splits the file)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1  # type: ignore[attr-defined]
    if first == last:
        return lines[first][node.col_offset : node.end_col_offset]  # type: ignore[attr-defined]
    chunk = [lines[first][node.col_offset :], *lines[first + 1 : last], lines[last][: node.end_col_offset]]  # type: ignore[attr-defined]
    return "\n".join(chunk)


def _as_cst_import(lines: list[str], stmt: ast.stmt) -> cst.Import | cst.ImportFrom:
    """An import statement re-read with libcst, so one function maps imports to names for both parsers."""
    parsed = cst.parse_statement(_segment(lines, stmt).strip() + "\n")
    return parsed.body[0]  # type: ignore[attr-defined,return-value]
