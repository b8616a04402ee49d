"""The flag catalog: every server argument with its flags, type, default, choices and help, read statically.

Two declaration shapes exist: `parser.add_argument("--flag", ...)` calls (all releases up to 0.5.18
and a few special cases after), and annotated fields `name: A[type, "help" | Arg(...)] = default`
on `ServerArgs` (0.5.12+) or on `msgspec.Struct` namespaces in `arg_groups/fields/` (0.5.19+).
Plain dataclass fields of `ServerArgs` give defaults.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .lines import ast_blocks
from .model import Flag, Lit
from .modules import ClassInfo, ModuleSummary
from .pyast import dotted, literal, message_text, segment, string

_ANNOTATED = frozenset({"A", "Annotated", "typing.Annotated"})


@dataclass
class _Draft:
    name: str
    flags: list[str] = field(default_factory=list)
    type: str | None = None
    default: str | None = None
    default_value: object = None
    default_is_literal: bool = False
    choices: tuple | None = None
    action: str | None = None
    nargs: str | None = None
    help: str | None = None
    deprecated: bool = False
    file: str = ""
    line: int = 0
    origins: list[str] = field(default_factory=list)
    cli: bool = True


class Constants:
    """Literal constants across the read modules, looked up through each module's imports."""

    def __init__(self, modules: Iterable[ModuleSummary]) -> None:
        self.modules = {m.dotted: m for m in modules}
        self.by_dotted = {f"{m.dotted}.{name}": lit for m in self.modules.values() for name, lit in m.constants.items()}

    def lookup(self, module: ModuleSummary, node: ast.expr) -> Lit | None:
        lit = literal(node, module.constants)
        if lit is not None:
            return lit
        name = dotted(node)
        if name is None:
            return None
        target = module.imports.get(name.split(".")[0])
        if target is not None:
            return self.by_dotted.get(target + name[len(name.split(".")[0]) :])
        return None


def build_catalog(modules: list[ModuleSummary]) -> list[Flag]:
    """All flags of the read modules, one entry per field (argparse dest), sorted by name."""
    constants = Constants(modules)
    drafts: dict[str, _Draft] = {}
    defaults: dict[str, tuple[str, object, bool]] = {}
    for module in modules:
        for cls in module.classes.values():
            _class_fields(module, cls, drafts, defaults, constants)
        for key in module.functions:
            for stmt in _statements(module.functions.syntax(key).body):
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                    call = stmt.value
                    if isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument":
                        _add_argument(module, call, stmt.lineno, drafts, defaults, constants)
    flags = []
    for draft in drafts.values():
        if draft.default is None and draft.name in defaults:
            draft.default, draft.default_value, draft.default_is_literal = defaults[draft.name]
        flags.append(
            Flag(
                name=draft.name,
                flags=tuple(dict.fromkeys(draft.flags)),
                type=draft.type,
                default=draft.default,
                default_value=draft.default_value,  # type: ignore[arg-type]
                default_is_literal=draft.default_is_literal,
                choices=draft.choices,
                action=draft.action,
                nargs=draft.nargs,
                help=draft.help,
                deprecated=draft.deprecated,
                file=draft.file,
                line=draft.line,
                origins=tuple(dict.fromkeys(draft.origins)),
            )
        )
    return sorted(flags, key=lambda f: f.name)


def _class_fields(module: ModuleSummary, cls: ClassInfo, drafts, defaults, constants: Constants) -> None:
    is_server_args = cls.name.rsplit(".", 1)[-1] == "ServerArgs"
    for stmt in cls.node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        name = stmt.target.id
        if name.startswith("_"):
            continue
        annotation = stmt.annotation
        default = _default(module, stmt.value, constants)
        if isinstance(annotation, ast.Subscript) and dotted(annotation.value) in _ANNOTATED:
            _annotated_field(module, name, annotation, default, stmt.lineno, drafts, constants)
            if default is not None:
                defaults.setdefault(name, default)
        elif is_server_args:
            if default is not None:
                defaults.setdefault(name, default)
            draft = drafts.get(name)
            if draft is None:
                draft = drafts[name] = _Draft(name, file=module.path, line=stmt.lineno, type=_text(module, annotation), cli=False)
            draft.origins.append("dataclass-field")


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement under a body, not entering nested functions or classes (they are indexed on their own)."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for block in ast_blocks(stmt):
                yield from _statements(block)


def _text(module: ModuleSummary, node: ast.AST) -> str:
    return segment(module.lines, node)


def _help(module: ModuleSummary, node: ast.expr) -> str:
    return message_text(node, lambda part: segment(module.lines, part))[0]


def _default(module: ModuleSummary, value: ast.expr | None, constants: Constants):
    if value is None:
        return None
    if isinstance(value, ast.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] == "field":
        for keyword in value.keywords:
            if keyword.arg == "default":
                value = keyword.value
                break
            if keyword.arg == "default_factory":
                return _text(module, keyword.value) + "()", None, False
    lit = constants.lookup(module, value)
    text = " ".join(_text(module, value).split())
    return (text, lit.value, True) if lit is not None else (text, None, False)


def _keywords(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg is not None}


def _annotated_field(module: ModuleSummary, name: str, annotation: ast.Subscript, default, line: int, drafts,
                     constants: Constants) -> None:
    elements = [e for e in _elements(annotation.slice) if not isinstance(e, ast.Slice)]
    if not elements:
        return
    type_node, metadata = elements[0], elements[1:]
    kwargs: dict[str, ast.expr] = {}
    help_text = None
    for meta in metadata:
        if isinstance(meta, ast.JoinedStr) or string(meta) is not None:
            help_text = _help(module, meta)
        elif isinstance(meta, ast.Call) and (dotted(meta.func) or "").rsplit(".", 1)[-1] == "Arg":
            kwargs = _keywords(meta)
            if "help" in kwargs:
                help_text = _help(module, kwargs["help"])
    if help_text is None and not kwargs:
        return  # not a CLI field (`A[int, NS("x")]` alone)
    draft = drafts.get(name) or _Draft(name, file=module.path, line=line)
    drafts[name] = draft
    draft.origins.append("annotated-field")
    if not draft.file or "dataclass-field" in draft.origins:
        draft.file, draft.line = module.path, line
    no_cli = kwargs.get("no_cli")
    if isinstance(no_cli, ast.Constant) and no_cli.value is True:
        draft.cli = False
        return
    cli_name = string(kwargs.get("cli_name")) or "--" + name.replace("_", "-")
    aliases = constants.lookup(module, kwargs["aliases"]) if "aliases" in kwargs else None
    draft.flags[:0] = [cli_name, *[a for a in (aliases.value if aliases else ()) if isinstance(a, str)]]
    draft.help = draft.help or help_text
    type_text = " ".join(_text(module, type_node).split())
    inner = _unwrap_optional(type_node)
    literal_choices = _literal_choices(inner)
    choices = constants.lookup(module, kwargs["choices"]) if "choices" in kwargs else None
    if choices is not None and isinstance(choices.value, tuple):
        draft.choices = choices.value
    elif literal_choices is not None:
        draft.choices = literal_choices
    draft.type = draft.type or type_text
    if "action" in kwargs:
        draft.action = string(kwargs["action"]) or _text(module, kwargs["action"])
    elif dotted(inner) == "bool":
        draft.action = "store_true"
    elif (dotted(inner.value) if isinstance(inner, ast.Subscript) else None) in ("List", "list"):
        draft.nargs = "+"
    if "nargs" in kwargs:
        draft.nargs = string(kwargs["nargs"]) or _text(module, kwargs["nargs"])
    draft.deprecated = draft.deprecated or "deprecat" in (draft.action or "").lower()


def _elements(node: ast.expr) -> list[ast.expr]:
    """The items of a subscript: `A[x, y]` has two, `A[x]` one."""
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _unwrap_optional(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Subscript) and dotted(node.value) in ("Optional", "typing.Optional"):
        inner = _elements(node.slice)[0]
        return node if isinstance(inner, ast.Slice) else inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        for side in (node.left, node.right):
            if not (isinstance(side, ast.Constant) and side.value is None):
                return side
    return node


def _literal_choices(node: ast.expr) -> tuple | None:
    if isinstance(node, ast.Subscript) and dotted(node.value) in ("Literal", "typing.Literal"):
        values = []
        for element in _elements(node.slice):
            if isinstance(element, ast.Slice):
                continue
            lit = literal(element)
            if lit is None:
                return None
            values.append(lit.value)
        return tuple(values)
    return None


def _add_argument(module: ModuleSummary, call: ast.Call, line: int, drafts, defaults, constants: Constants) -> None:
    options = [s for s in (string(a) for a in call.args) if s]
    if not options:
        return
    kwargs = _keywords(call)
    dest = string(kwargs.get("dest"))
    if dest is None:
        long = next((o for o in options if o.startswith("--")), options[0])
        dest = long.lstrip("-").replace("-", "_")
    draft = drafts.get(dest)
    if draft is None:
        draft = drafts[dest] = _Draft(dest, file=module.path, line=line)
    elif "dataclass-field" in draft.origins and "add_argument" not in draft.origins:
        draft.file, draft.line = module.path, line
    draft.origins.append("add_argument")
    draft.flags.extend(options)
    draft.cli = True
    action = kwargs.get("action")
    if action is not None:
        draft.action = draft.action or string(action) or _text(module, action)
        if "deprecat" in _text(module, action).lower():
            draft.deprecated = True
    if "type" in kwargs:
        draft.type = _text(module, kwargs["type"])
    elif draft.action in ("store_true", "store_false") and (draft.type is None or "dataclass-field" in draft.origins):
        draft.type = "bool"
    if "nargs" in kwargs:
        draft.nargs = string(kwargs["nargs"]) or _text(module, kwargs["nargs"])
    if "help" in kwargs and draft.help is None:
        draft.help = _help(module, kwargs["help"])
    if "choices" in kwargs and draft.choices is None:
        choices = constants.lookup(module, kwargs["choices"])
        if choices is not None and isinstance(choices.value, tuple):
            draft.choices = choices.value
    if "default" in kwargs:
        value = kwargs["default"]
        name = dotted(value)
        if name is not None and name.endswith("." + dest) and name.split(".")[0].endswith("ServerArgs"):
            return  # `default=ServerArgs.x`: the field's own default, filled in later
        draft.default, draft.default_value, draft.default_is_literal = _default(module, value, constants)
    elif draft.action == "store_true" and draft.default is None and dest not in defaults:
        draft.default, draft.default_value, draft.default_is_literal = "False", False, True
    elif draft.action == "store_false" and draft.default is None and dest not in defaults:
        draft.default, draft.default_value, draft.default_is_literal = "True", True, True
