"""Index one module with `ast` (functions, classes, constants, imports) and parse its functions with libcst.

libcst builds a Python object for every token, which makes its parse ten times dearer than `ast`'s,
and half of what the extractor reads is declarations (annotated fields with long help texts,
imports, constants) that `ast` answers for just as well. So a module is indexed with `ast`, and
only the source lines of each function are handed to libcst, the first time the function is
asked for: all functions of the files the layout reads, a few of the modules calls lead to.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst

from ..core.collector import long_lived
from ..core.errors import ParseError
from ..core.model import Lit, SourceProblem
from .events import FunctionInfo, straight_return
from .guards import function_aliases
from .statements import import_bindings as cst_import_bindings
from .lines import iter_statements
from .lines import Span, ast_blocks, child_blocks, statement_lines, statement_pairs
from .pyast import dotted, import_bindings, literal, segment, source_lines
from .scope import code, dotted_name
from .scope import literal as cst_literal

_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
AstFunction = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, slots=True)
class ClassInfo:
    name: str
    bases: tuple[str, ...]
    methods: tuple[str, ...]
    line: int
    is_enum: bool
    # `@register_model_config_parser("hf")`: the decorator that puts the class in a registry by a
    # key, and the key (a factory of that decorator's module gives the class back by it).
    registered: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class _Syntax:
    """A module's `ast` tree, and the nodes of its functions (by key) and classes (by qualname)."""

    tree: ast.Module
    functions: dict[str, AstFunction]
    classes: dict[str, ast.ClassDef]


@dataclass
class ModuleSummary:
    path: str  # sglang/srt/server_args.py
    dotted: str  # sglang.srt.server_args
    text: str = field(repr=False)
    lines: list[str] = field(repr=False)
    spans: dict[int, Span] = field(default_factory=dict)  # id(libcst statement) -> lines, as functions are parsed
    functions: Functions = field(init=False)  # by qualname
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    constants: dict[str, Lit] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # module-level: local name -> dotted target
    _skeleton: str | None = field(default=None, repr=False)
    _syntax: _Syntax | None = field(default=None, repr=False)  # None until read, for an index kept before
    _declared: _Syntax | None = field(default=None, repr=False)  # `declarations`, when the syntax is not read
    _kept: Outline | None = field(default=None, repr=False)  # the kept index it was made from

    @property
    def skeleton(self) -> str:
        """A digest of the module without its function bodies: its imports, constants, classes and
        signatures. A walk reads that much of every module it looks names up in; a body it reads
        is a function's own text (`Functions.digest`)."""
        if self._skeleton is None:
            self._skeleton = _skeleton_digest(self)
        return self._skeleton

    @property
    def syntax(self) -> ast.Module:
        return self._parsed().tree

    def function_node(self, key: str) -> AstFunction:
        """The `ast` node of a function, by key."""
        return self._parsed().functions[key]

    def class_node(self, qualname: str) -> ast.ClassDef:
        return self._parsed().classes[qualname]

    @property
    def declarations(self) -> ast.Module:
        """The syntax tree without function bodies: what module and class bindings are read from."""
        return self._declarations().tree

    def declared_class(self, qualname: str) -> ast.ClassDef:
        """A class node with its statements; its methods may be bodiless (`declarations`)."""
        found = self._declarations().classes.get(qualname)
        return found if found is not None else self.class_node(qualname)  # a class inside a function

    def _declarations(self) -> _Syntax:
        """The syntax tree when it is parsed already; else, for a module indexed from a kept `Outline`,
        the module parsed with each function a bodiless `def` on its first line (its other lines left
        blank, so every other statement keeps its place): a fifth of the parse, and all that module
        constants, class fields and enum members are read from."""
        if self._syntax is not None:
            return self._syntax
        if self._declared is None:
            text = _without_bodies(self)
            try:
                tree = ast.parse(text, filename=self.path) if text is not None else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            if tree is None:
                return self._parsed()
            classes: dict[str, ast.ClassDef] = {}
            _declared_classes(tree.body, "", classes)
            self._declared = _Syntax(tree, {}, classes)
        return self._declared

    def _parsed(self) -> _Syntax:
        """The syntax tree; a module indexed from a kept `Outline` is parsed the first time it is read
        (the same text gives the same index: the nodes go by the same keys)."""
        if self._syntax is None:
            self._syntax = outline(self.path, self.text)._parsed()
        return self._syntax

    def outline(self) -> Outline:
        """The index as kept for a later extraction (the very one it was made from, when it was)."""
        if self._kept is None:
            self._kept = Outline(tuple(self.functions._places.items()), tuple(self.classes.items()),
                                 tuple(self.constants.items()), tuple(self.imports.items()), self.skeleton)
        return self._kept


@dataclass(frozen=True, slots=True)
class Outline:
    """What `outline` finds in a module but its syntax tree, kept across extractions by the module's
    path and text (`outline_key`): a module that only a call leads to, most of which no question
    reads beyond its names and lines, is then indexed without parsing it."""

    places: tuple[tuple[str, _Place], ...]
    classes: tuple[tuple[str, ClassInfo], ...]
    constants: tuple[tuple[str, Lit], ...]
    imports: tuple[tuple[str, str], ...]
    skeleton: str


def _without_bodies(summary: ModuleSummary) -> str | None:
    """The module's text with each function (decorators included) replaced by `def name(): pass` on its
    first line and blank lines after; None when a function does not start its own line."""
    lines = list(summary.lines)
    for place in summary.functions._places.values():
        if place.root is not None:
            continue  # inside a function replaced already
        head = lines[place.first - 1]
        stripped = head.lstrip()
        if not stripped.startswith(("@", "def", "async")):
            return None
        lines[place.first - 1] = f"{head[: len(head) - len(stripped)]}def {place.name}(): pass"
        for index in range(place.first, place.last):
            lines[index] = ""
    return "\n".join(lines) + "\n"


def _declared_classes(body: list[ast.stmt], prefix: str, found: dict[str, ast.ClassDef]) -> None:
    """Classes by qualname, as `_scan` names them (functions are bodiless here: none is inside one)."""
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            qualname = f"{prefix}{stmt.name}"
            found[qualname] = stmt
            _declared_classes(stmt.body, f"{qualname}.", found)
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for block in ast_blocks(stmt):
                _declared_classes(block, prefix, found)


def outline_key(path: str, text: str) -> str:
    """What a module's index is kept under: its path and text, and the Python that parsed it."""
    return hashlib.sha256(f"{sys.version}\0{path}\0{text}".encode()).hexdigest()


def dotted_module(path: str) -> str:
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


@contextmanager
def deep_recursion(limit: int = 20000) -> Iterator[None]:
    """Walks recurse once per level of `if` nests and expressions, which `ast.parse` lets reach ~1,000."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def summarize(path: str, text: str, known: Mapping[str, FunctionFacts] | None = None,
              outlines: Mapping[str, Outline] | None = None) -> ModuleSummary:
    """Index a module and parse all its functions now, so a file libcst cannot read fails here, as a
    whole; unless an earlier extraction parsed every one of them (`known`, by digest), and then with
    the index it kept (`outlines`, see `outline`)."""
    summary = outline(path, text, outlines)
    if known is not None:
        summary.functions.known = known
        if all(summary.functions.digest(key) in known for key in summary.functions):
            return summary
    try:
        with deep_recursion():
            summary.functions.parse_all()
    except RecursionError:
        raise ParseError(SourceProblem(path, 0, 0, "nesting too deep to analyse")) from None
    return summary


def outline(path: str, text: str, kept: Mapping[str, Outline] | None = None) -> ModuleSummary:
    """Index a module with `ast`; its functions are parsed with libcst when first asked for. With
    `kept` (by `outline_key`), an index kept before is taken as it is, the tree parsed when read."""
    found = kept.get(outline_key(path, text)) if kept else None
    if found is not None:
        summary = ModuleSummary(path, dotted_module(path), text, source_lines(text), classes=dict(found.classes),
                                constants=dict(found.constants), imports=dict(found.imports),
                                _skeleton=found.skeleton, _kept=found)
        summary.functions = Functions(summary, dict(found.places))
        return summary
    try:
        with long_lived():  # the tree lives as long as the extraction
            tree = ast.parse(text, filename=path)  # at the default recursion limit: deeper is C stack at risk
            with deep_recursion():
                summary = ModuleSummary(path, dotted_module(path), text, source_lines(text))
                places: dict[str, _Place] = {}
                nodes: dict[int, AstFunction] = {}  # by id(place), while places are still being keyed
                class_nodes: dict[str, ast.ClassDef] = {}
                _module_names(summary, tree.body)
                _scan(summary, places, nodes, class_nodes, tree.body, "", None, None)
                summary._syntax = _Syntax(tree, {key: nodes[id(place)] for key, place in places.items()}, class_nodes)
    except SyntaxError as error:
        raise ParseError(SourceProblem(path, error.lineno or 0, error.offset or 0, error.msg)) from None
    except RecursionError:
        raise ParseError(SourceProblem(path, 0, 0, "nesting too deep to parse")) from None
    except (ValueError, MemoryError) as error:
        raise ParseError(SourceProblem(path, 0, 0, f"cannot parse: {error.__class__.__name__}")) from None
    summary.functions = Functions(summary, places)
    return summary


# --- the index, from `ast` ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a function is, and the outermost function whose libcst parse also gives this one."""

    qualname: str
    name: str
    line: int  # the `def` line
    first: int  # first line, decorators included
    last: int
    class_name: str | None
    registers: bool  # a decorator's text says "register" (`Program.registered`)
    root: _Place | None  # None: this function is parsed on its own


def _module_names(summary: ModuleSummary, body: list[ast.stmt]) -> None:
    """Module-level imports and literal constants, also inside `if TYPE_CHECKING:` and `try` blocks.

    A constant is a name bound once, to a literal: `X = f()` in a `try` and `X = False` in its
    `except` is a value known only at run time, not the constant False.
    """
    values: dict[str, ast.expr | None] = {}
    bound: dict[str, int] = {}
    for stmt in module_statements(body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            summary.imports.update(import_bindings(stmt, summary.path))
            continue
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                values[targets[0].id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets = [stmt.target]
            if isinstance(stmt.target, ast.Name):
                values[stmt.target.id] = stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = [stmt.target]
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[stmt.name] = bound.get(stmt.name, 0) + 1
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    bound[node.id] = bound.get(node.id, 0) + 1
    for name, value in values.items():
        lit = literal(value) if value is not None and bound.get(name) == 1 else None
        if lit is not None:
            summary.constants[name] = lit


def module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at import time: every block at module level, not function or class bodies."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for block in ast_blocks(stmt):
                yield from module_statements(block)


def _registered(decorators: list[ast.expr]) -> tuple[str, str] | None:
    """The one decorator of a class called with one string, `@register_x("key")`: (its name, the key)."""
    found = [(name, d.args[0].value) for d in decorators
             if isinstance(d, ast.Call) and len(d.args) == 1 and not d.keywords and (name := dotted(d.func))
             and isinstance(d.args[0], ast.Constant) and isinstance(d.args[0].value, str)]
    return found[0] if len(found) == 1 else None


def _scan(summary: ModuleSummary, places: dict[str, _Place], nodes: dict[int, AstFunction],
          class_nodes: dict[str, ast.ClassDef], body: list[ast.stmt], prefix: str, class_name: str | None,
          root: _Place | None) -> None:
    """Find functions and classes in a block, at any depth of `if`, `try`, `with`, loop and `match` blocks."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = f"{prefix}{stmt.name}"
            first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
            registers = any("register" in (segment(summary.lines, d) or "") for d in stmt.decorator_list)
            place = _Place(qualname, stmt.name, stmt.lineno, first, stmt.end_lineno or stmt.lineno, class_name,
                           registers, root)
            nodes[id(place)] = stmt
            earlier = places.pop(qualname, None)
            if earlier is not None:
                # A name defined twice (`@property` and its setter, `if`/`else` variants): the last one is what
                # the name calls, the earlier one keeps its guards under a key of its own.
                places[f"{qualname}@{earlier.line}"] = earlier
            places[qualname] = place
            # Nested functions are functions of their own, parsed with the one around them.
            _scan(summary, places, nodes, class_nodes, stmt.body, f"{qualname}.", None, root or place)
        elif isinstance(stmt, ast.ClassDef):
            qualname = f"{prefix}{stmt.name}"
            bases = tuple(dotted(b) or segment(summary.lines, b) for b in stmt.bases)
            methods = tuple(s.name for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
            is_enum = any(b.rsplit(".", 1)[-1] in _ENUM_BASES for b in bases)
            summary.classes[qualname] = ClassInfo(qualname, bases, methods, stmt.lineno, is_enum,
                                                  _registered(stmt.decorator_list))
            class_nodes[qualname] = stmt
            _scan(summary, places, nodes, class_nodes, stmt.body, f"{qualname}.", qualname, root)
        else:
            for block in ast_blocks(stmt):
                _scan(summary, places, nodes, class_nodes, block, prefix, class_name, root)


# --- functions, parsed with libcst on demand ----------------------------------------------------


class Functions(Mapping[str, FunctionInfo]):
    """The functions of a module by qualname (`name@line` for one a later definition shadows).

    Keys and `ast` nodes are known from the index; a FunctionInfo, which carries the libcst tree the
    walk reads, is built the first time it is asked for, by parsing the function's own lines.
    """

    def __init__(self, summary: ModuleSummary, places: dict[str, _Place]) -> None:
        self._summary = summary
        self._places = places
        self._keys = {(p.qualname, p.line): key for key, p in places.items()}
        self._parsed: dict[str, FunctionInfo] = {}
        self._nodes: dict[str, cst.FunctionDef] = {}
        self._digests: dict[str, str] = {}
        self._whole: cst.Module | None = None  # the module parsed at once, when a function cannot be alone
        # Facts of functions seen before (an earlier extraction's), by digest: a function asked for is
        # then parsed only when its syntax is read (it is walked), not to know its parameters.
        self.known: Mapping[str, FunctionFacts] = {}
        self.found: dict[str, FunctionFacts] = {}  # facts of the functions parsed here, by digest

    def outermost(self, line: int) -> str | None:
        """The module-level function whose lines hold `line`, else None (module level, or a class)."""
        for key, place in self._places.items():
            if "." not in key and "@" not in key and place.first <= line <= place.last:
                return key
        return None

    def lines_of(self, key: str) -> tuple[int, int]:
        """The first (decorators included) and last line of a function."""
        place = self._places[key]
        return place.first, place.last

    def __getitem__(self, key: str) -> FunctionInfo:
        info = self._parsed.get(key)
        if info is None:
            facts = self.known.get(self.digest(key))
            if facts is not None:
                info = self._parsed[key] = _function_info(self._summary, key, self._places[key], facts, self._node_source(key))
            else:
                place = self._places[key]
                self._parse(place.root or place)
                info = self._parsed[key]
        return info

    def digest(self, key: str) -> str:
        """A digest of the function's text and of where it is (the same text means other aliases in a
        ServerArgs class, other imports in another package), but not of its line: a function that
        only moved is the same function (a kept walk of it is moved with it, `walks.moved`)."""
        found = self._digests.get(key)
        if found is None:
            place = self._places[key]
            text = "\n".join(self._summary.lines[place.first - 1 : place.last])
            where = f"{self._summary.path}\n{key}\n{place.line - place.first}"
            found = self._digests[key] = hashlib.sha256(f"{where}\n{text}".encode()).hexdigest()[:32]
        return found

    def _node_source(self, key: str) -> Callable[[], cst.FunctionDef]:
        def node() -> cst.FunctionDef:
            if key not in self._nodes:
                place = self._places[key]
                self._parse(place.root or place)
            return self._nodes[key]
        return node

    def __contains__(self, key: object) -> bool:
        return key in self._places

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def syntax(self, key: str) -> AstFunction:
        """The function's `ast` node, without parsing it with libcst."""
        return self._summary.function_node(key)

    def registers(self, key: str) -> bool:
        """Does a decorator of the function say "register" (only those may put it in a registry)?"""
        return self._places[key].registers

    def parse_all(self) -> None:
        for key in self._places:
            self[key]

    def _parse(self, place: _Place) -> None:
        node = self._own_tree(place)
        if node is None:
            node = self._from_whole_module(place)
        prefix = place.qualname[: -len(place.name)]
        for found, qualname, class_name in _functions_in(node, prefix, place.class_name):
            line, _ = self._summary.spans[id(found)]
            key = self._keys[(qualname, line)]
            self._nodes[key] = found
            facts = _facts(self._summary, found, class_name, line)
            self.found[self.digest(key)] = facts
            if key not in self._parsed:
                self._parsed[key] = _function_info(self._summary, key, self._places[key], facts, self._node_source(key))

    def _own_tree(self, place: _Place) -> cst.FunctionDef | None:
        """The function parsed from its own lines; indented ones under an `if 1:` so columns stay as they are."""
        lines = self._summary.lines[place.first - 1 : place.last]
        head = lines[0]
        indent = head[: len(head) - len(head.lstrip())]
        if not head.lstrip().startswith(("@", "def", "async")):
            return None  # `if x: def f(): ...` on one line: the function has no lines of its own
        text = ("if 1:\n" if indent else "") + "\n".join(lines) + "\n"
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError:
            return None
        node = module.body[0]
        if indent:
            node = node.body.body[0]  # type: ignore[attr-defined]
        if not type(node) is cst.FunctionDef:  # pragma: no cover - the lines are a function by the index
            return None
        syntax = self._summary.function_node(self._keys[(place.qualname, place.line)])
        for cst_node, ast_node in statement_pairs([node], [syntax]):
            self._summary.spans[id(cst_node)] = (ast_node.lineno, ast_node.end_lineno or ast_node.lineno)
        return node

    def _from_whole_module(self, place: _Place) -> cst.FunctionDef:
        """The fallback: parse the module at once (as libcst reads it whole) and find the function in it."""
        if self._whole is None:
            text = "\n".join(self._summary.lines) + "\n"
            try:
                self._whole = cst.parse_module(text)
            except cst.ParserSyntaxError as error:
                raise ParseError(SourceProblem(self._summary.path, error.raw_line, error.raw_column, error.message)) from None
            self._summary.spans.update(statement_lines(self._whole, self._summary.syntax))
        for node in _all_statements(self._whole.body):
            if type(node) is cst.FunctionDef and self._summary.spans[id(node)][0] == place.line:
                return node
        raise ParseError(SourceProblem(self._summary.path, place.line, 0, "libcst reads this function differently"))


def _all_statements(body) -> Iterator[cst.CSTNode]:
    for stmt in body:
        yield stmt
        for block in child_blocks(stmt):
            yield from _all_statements(block)


def _functions_in(node: cst.FunctionDef, prefix: str, class_name: str | None):
    """The function and those nested in it, with qualnames and classes as the index names them."""
    qualname = f"{prefix}{node.name.value}"
    yield node, qualname, class_name
    yield from _nested(node.body.body, f"{qualname}.", None)  # type: ignore[union-attr]


def _nested(body, prefix: str, class_name: str | None):
    for stmt in body:
        if type(stmt) is cst.FunctionDef:
            yield from _functions_in(stmt, prefix, class_name)
        elif type(stmt) is cst.ClassDef:
            qualname = f"{prefix}{stmt.name.value}"
            yield from _nested(stmt.body.body, f"{qualname}.", qualname)  # type: ignore[union-attr]
        elif not type(stmt) is cst.SimpleStatementLine:
            for block in child_blocks(stmt):
                yield from _nested(block, prefix, class_name)


@dataclass(frozen=True, slots=True)
class FunctionFacts:
    """What a function's own text says that is needed before (or without) walking it; kept across
    extractions by the function's digest, so an unchanged function is not parsed to be called."""

    body_line: int  # the first statement's line, counted from the `def` line (0 when on it)
    params: tuple[str, ...]
    aliases: frozenset[str]
    declares: bool
    defaulted: tuple[str, ...]  # parameters with a default value
    imports: tuple[tuple[str, str], ...]  # names its own import statements bind, to dotted targets
    returns_value: bool  # has a `return <value>` and no `yield`
    registry: tuple[str, tuple[str, ...], str] | None  # its registering decorator, the strings it is given, a predicate's test
    decorators: tuple[str, ...]  # what each decorator calls or is, as a dotted name ("" for anything else)
    straight: bool  # straight-line assignments, then one `return` (`guards.straight_return`)


def _facts(summary: ModuleSummary, node: cst.FunctionDef, class_name: str | None, line: int) -> FunctionFacts:
    params, aliases = function_aliases(node, class_name)
    body = node.body.body
    first = body[0] if body else None
    inner = first.body[0] if type(first) is cst.SimpleStatementLine else first
    body_line = summary.spans.get(id(inner), (line, 0))[0]
    every = (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
    imports: dict[str, str] = {}
    for stmt in iter_statements(node.body.body):
        if type(stmt) in (cst.Import, cst.ImportFrom):
            imports.update(cst_import_bindings(stmt, summary.path))
    end_line = summary.spans[id(node)][1]
    text = "\n".join(summary.lines[line - 1 : end_line])
    returns_value = bool(_RETURNS_VALUE.search(text)) and not _YIELDS.search(text)
    return FunctionFacts(body_line - line, params, aliases, _declares(node, aliases),
                         tuple(p.name.value for p in every if p.default is not None), tuple(imports.items()),
                         returns_value, _registering(node),
                         tuple(dotted_name(d.decorator.func if type(d.decorator) is cst.Call else d.decorator) or ""
                               for d in node.decorators),
                         straight_return(node) is not None)


def _registering(node: cst.FunctionDef) -> tuple[str, tuple[str, ...], str] | None:
    """The first decorator whose name says "register", the string literals it is called with, and the
    test of a one-parameter lambda it is given (`lambda arch: "Step3p5" in arch`), written over the
    model's architecture (`"Step3p5" in model_architecture`), else ""."""
    for decorator in node.decorators:
        expr = decorator.decorator
        func = expr.func if type(expr) is cst.Call else expr
        name = dotted_name(func) or ""
        if "register" not in name.rsplit(".", 1)[-1]:
            continue
        names = []
        predicate = ""
        if type(expr) is cst.Call:
            for arg in expr.args:
                lit = cst_literal(arg.value)
                if lit is not None and isinstance(lit.value, str):
                    names.append(lit.value)
                elif type(arg.value) is cst.Lambda and not predicate:
                    predicate = _over_architecture(arg.value)
        return name, tuple(names), predicate
    return None


def _over_architecture(node: cst.Lambda) -> str:
    """A predicate lambda's test with its one parameter read as the model's architecture, or ""."""
    params = node.params
    if len(params.params) != 1 or isinstance(params.star_arg, cst.Param) or params.kwonly_params \
            or params.star_kwarg is not None:
        return ""
    body = node.body.visit(_Renamed(params.params[0].name.value, "model_architecture"))
    text = " ".join(code(body).split())
    if type(body) in (cst.BooleanOperation, cst.IfExp) and not body.lpar:  # type: ignore[union-attr]
        text = f"({text})"  # one atom of a trigger: its `or` must not read as the trigger's
    return text


class _Renamed(cst.CSTTransformer):
    """An expression with one variable renamed (not attributes or keywords of that name)."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.new) if original_node.value == self.old else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)


def _function_info(summary: ModuleSummary, key: str, place: _Place, facts: FunctionFacts,
                   node: Callable[[], cst.FunctionDef]) -> FunctionInfo:
    return FunctionInfo(
        f"{summary.dotted}:{key}", place.qualname, place.name, place.class_name, summary.path, summary.dotted,
        place.line, place.last, place.line + facts.body_line, facts.params, facts.aliases, node, facts.declares,
        facts.returns_value,
        facts.defaulted, dict(facts.imports), facts.registry, facts.decorators, facts.straight,
    )


def _skeleton_digest(summary: ModuleSummary) -> str:
    """The module's text without the bodies of its functions (the outermost ones: nested functions
    are in their bodies), and the keys of its functions."""
    starts = [0]
    for line in summary.lines:
        starts.append(starts[-1] + len(line) + 1)
    text = "\n".join(summary.lines)
    cuts = []
    for key, place in summary.functions._places.items():
        end = summary.function_node(key)
        if place.root is None and end.body:
            first = end.body[0]
            header = max([end.lineno, *(n.end_lineno or n.lineno for n in _signature_parts(end.args)),
                          *([end.returns.end_lineno or end.returns.lineno] if end.returns is not None else [])])
            if first.lineno > header:  # from the line after the signature: comments above the body are body
                begin = starts[header]
            else:  # `def f(): return 1`
                begin = starts[first.lineno - 1] + _column(summary.lines[first.lineno - 1], first.col_offset)
            stop = starts[(end.end_lineno or end.lineno) - 1] + _column(summary.lines[(end.end_lineno or end.lineno) - 1],
                                                                         end.end_col_offset or 0)
            cuts.append((begin, stop))
    kept, last = [], 0
    for begin, stop in sorted(cuts):
        if begin >= last:
            kept.append(text[last:begin])
            last = stop
    kept.append(text[last:])
    kept.append("\0".join(sorted(summary.functions)))
    return hashlib.sha256("\0".join(kept).encode()).hexdigest()[:32]


def _signature_parts(args: ast.arguments) -> Iterator[ast.arg | ast.expr]:
    """The parameters (an annotation inside its parameter's span) and default values of a signature:
    a node ends where the last of its children does, so these end where everything under them does."""
    yield from args.posonlyargs
    yield from args.args
    yield from args.kwonlyargs
    yield from (node for node in (args.vararg, args.kwarg) if node is not None)
    yield from args.defaults
    yield from (node for node in args.kw_defaults if node is not None)


def _column(line: str, offset: int) -> int:
    """A character index from `ast`'s UTF-8 byte offset."""
    return len(line.encode()[:offset].decode(errors="ignore"))


_RETURNS_VALUE = re.compile(r"^\s*return\s+[^\s#;]", re.M)
# A `yield` before any `#` on its line. `[^#\n]`, not `[^#]`: the same matches, without retrying the rest
# of the function from every line (quadratic in its length).
_YIELDS = re.compile(r"^[^#\n]*\byield\b", re.M)


def _declares(node: cst.FunctionDef, aliases: frozenset[str]) -> bool:
    """A pass whose returned dict becomes declared argument values: registered, or `(view) -> dict`."""
    if any("register" in code(d.decorator) for d in node.decorators):
        return True
    returns = code(node.returns.annotation) if node.returns is not None else ""
    return bool(aliases) and returns.split("[")[0] in ("dict", "Dict", "typing.Dict")
