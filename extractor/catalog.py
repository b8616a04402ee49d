"""The flag catalog: every server argument with its flags, type, default, choices and help, read statically.

Two declaration shapes exist: `parser.add_argument("--flag", ...)` calls (all releases up to 0.5.18
and a few special cases after), and annotated fields `name: A[type, "help" | Arg(...)] = default`
on `ServerArgs` (0.5.12+) or on `msgspec.Struct` namespaces in `arg_groups/fields/` (0.5.19+).
Plain dataclass fields of `ServerArgs` give defaults.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from .conditions import Scope, code, dotted_name, literal
from .guards import message_of
from .lines import iter_statements
from .model import Flag, Lit
from .modules import ModuleSummary

_ANNOTATED = frozenset({"A", "Annotated", "typing.Annotated"})
_EMPTY_SCOPE = Scope(frozenset(), {})


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

    def lookup(self, module: ModuleSummary, node: cst.BaseExpression) -> Lit | None:
        lit = literal(node, Scope(frozenset(), module.constants))
        if lit is not None:
            return lit
        name = dotted_name(node)
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
        for cls_name in module.classes:
            _class_fields(module, cls_name, drafts, defaults, constants)
        for fn in module.functions.values():
            for stmt in iter_statements(fn.node.body.body):
                if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
                    call = stmt.value
                    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument":
                        line = module.spans.get(id(stmt), (0, 0))[0]
                        _add_argument(module, call, line, drafts, defaults, constants)
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


def _class_fields(module, cls_name: str, drafts, defaults, constants: Constants) -> None:
    node = _class_node(module, cls_name)
    if node is None:
        return
    is_server_args = cls_name.rsplit(".", 1)[-1] == "ServerArgs"
    for stmt in node.body.body:  # type: ignore[union-attr]
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not (isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)):
                continue
            name = small.target.value
            if name.startswith("_"):
                continue
            line = module.spans.get(id(small), (0, 0))[0]
            annotation = small.annotation.annotation
            default = _default(module, small.value, constants)
            if isinstance(annotation, cst.Subscript) and dotted_name(annotation.value) in _ANNOTATED:
                _annotated_field(module, name, annotation, default, line, drafts, constants)
                if default is not None:
                    defaults.setdefault(name, default)
            elif is_server_args:
                if default is not None:
                    defaults.setdefault(name, default)
                draft = drafts.get(name)
                if draft is None:
                    draft = drafts[name] = _Draft(name, file=module.path, line=line, type=code(annotation), cli=False)
                draft.origins.append("dataclass-field")


def _class_node(module: ModuleSummary, qualname: str) -> cst.ClassDef | None:
    body = module.module.body
    node = None
    for part in qualname.split("."):
        found = None
        for stmt in _flatten(body):
            if isinstance(stmt, cst.ClassDef) and stmt.name.value == part:
                found = stmt
                break
        if found is None:
            return None
        node, body = found, found.body.body  # type: ignore[union-attr]
    return node


def _flatten(body):
    for stmt in body:
        if isinstance(stmt, cst.If):
            yield from _flatten(stmt.body.body)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            yield from _flatten(stmt.body.body)
        else:
            yield stmt


def _default(module, value: cst.BaseExpression | None, constants: Constants):
    if value is None:
        return None
    if isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "field":
        for arg in value.args:
            if arg.keyword is not None and arg.keyword.value == "default":
                value = arg.value
                break
            if arg.keyword is not None and arg.keyword.value == "default_factory":
                return code(arg.value) + "()", None, False
    lit = constants.lookup(module, value)
    text = " ".join(code(value).split())
    return (text, lit.value, True) if lit is not None else (text, None, False)


def _annotated_field(module, name: str, annotation: cst.Subscript, default, line: int, drafts, constants) -> None:
    elements = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
    if not elements:
        return
    type_node, metadata = elements[0], elements[1:]
    kwargs: dict[str, cst.BaseExpression] = {}
    help_text = None
    for meta in metadata:
        if isinstance(meta, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            help_text = message_of(meta, _EMPTY_SCOPE, {})[0]
        elif isinstance(meta, cst.Call) and (dotted_name(meta.func) or "").rsplit(".", 1)[-1] == "Arg":
            kwargs = {a.keyword.value: a.value for a in meta.args if a.keyword is not None}
            if "help" in kwargs:
                help_text = message_of(kwargs["help"], _EMPTY_SCOPE, {})[0]
    if help_text is None and not kwargs:
        return  # not a CLI field (`A[int, NS("x")]` alone)
    draft = drafts.get(name) or _Draft(name, file=module.path, line=line)
    drafts[name] = draft
    draft.origins.append("annotated-field")
    if not draft.file or "dataclass-field" in draft.origins:
        draft.file, draft.line = module.path, line
    no_cli = kwargs.get("no_cli")
    if isinstance(no_cli, cst.Name) and no_cli.value == "True":
        draft.cli = False
        return
    cli_name = _string(kwargs.get("cli_name")) or "--" + name.replace("_", "-")
    aliases = constants.lookup(module, kwargs["aliases"]) if "aliases" in kwargs else None
    draft.flags[:0] = [cli_name, *[a for a in (aliases.value if aliases else ()) if isinstance(a, str)]]
    draft.help = draft.help or help_text
    type_text = " ".join(code(type_node).split())
    inner = _unwrap_optional(type_node)
    literal_choices = _literal_choices(inner)
    choices = constants.lookup(module, kwargs["choices"]) if "choices" in kwargs else None
    if choices is not None and isinstance(choices.value, tuple):
        draft.choices = choices.value
    elif literal_choices is not None:
        draft.choices = literal_choices
    draft.type = draft.type or type_text
    if "action" in kwargs:
        draft.action = _string(kwargs["action"]) or code(kwargs["action"])
    elif dotted_name(inner) == "bool":
        draft.action = "store_true"
    elif (dotted_name(inner.value) if isinstance(inner, cst.Subscript) else None) in ("List", "list"):
        draft.nargs = "+"
    if "nargs" in kwargs:
        draft.nargs = _string(kwargs["nargs"]) or code(kwargs["nargs"])
    draft.deprecated = draft.deprecated or "deprecat" in (draft.action or "").lower()


def _unwrap_optional(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, cst.Subscript) and dotted_name(node.value) in ("Optional", "typing.Optional"):
        inner = node.slice[0].slice
        return inner.value if isinstance(inner, cst.Index) else node
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        for side in (node.left, node.right):
            if not (isinstance(side, cst.Name) and side.value == "None"):
                return side
    return node


def _literal_choices(node: cst.BaseExpression) -> tuple | None:
    if isinstance(node, cst.Subscript) and dotted_name(node.value) in ("Literal", "typing.Literal"):
        values = []
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                lit = literal(element.slice.value)
                if lit is None:
                    return None
                values.append(lit.value)
        return tuple(values)
    return None


def _string(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _add_argument(module, call: cst.Call, line: int, drafts, defaults, constants: Constants) -> None:
    options = [s for s in (_string(a.value) for a in call.args if a.keyword is None) if s]
    if not options:
        return
    kwargs = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    dest = _string(kwargs.get("dest"))
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
        draft.action = draft.action or _string(action) or code(action)
        if "deprecat" in code(action).lower():
            draft.deprecated = True
    if "type" in kwargs:
        draft.type = code(kwargs["type"])
    elif draft.action in ("store_true", "store_false") and (draft.type is None or "dataclass-field" in draft.origins):
        draft.type = "bool"
    if "nargs" in kwargs:
        draft.nargs = _string(kwargs["nargs"]) or code(kwargs["nargs"])
    if "help" in kwargs and draft.help is None:
        draft.help = message_of(kwargs["help"], _EMPTY_SCOPE, {})[0]
    if "choices" in kwargs and draft.choices is None:
        choices = constants.lookup(module, kwargs["choices"])
        if choices is not None and isinstance(choices.value, tuple):
            draft.choices = choices.value
    if "default" in kwargs:
        value = kwargs["default"]
        name = dotted_name(value)
        if name is not None and name.endswith("." + dest) and name.split(".")[0].endswith("ServerArgs"):
            return  # `default=ServerArgs.x`: the field's own default, filled in later
        draft.default, draft.default_value, draft.default_is_literal = _default(module, value, constants)
    elif draft.action == "store_true" and draft.default is None and dest not in defaults:
        draft.default, draft.default_value, draft.default_is_literal = "False", False, True
    elif draft.action == "store_false" and draft.default is None and dest not in defaults:
        draft.default, draft.default_value, draft.default_is_literal = "True", True, True

