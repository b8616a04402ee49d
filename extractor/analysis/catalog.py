"""The flag catalog: every server argument with its flags, type, default, choices and help, read statically.

Two declaration shapes exist: `parser.add_argument("--flag", ...)` calls (all releases up to 0.5.18
and a few special cases after), and annotated fields `name: A[type, "help" | Arg(...)] = default`
on `ServerArgs` (0.5.12+) or on `msgspec.Struct` namespaces in `arg_groups/fields/` (0.5.19+).
Plain fields of `ServerArgs` and of the Struct namespaces give defaults.

A field can be declared several times: a live flag and deprecated aliases that store into it
(`add_argument("--old", dest="new", action=DeprecatedAliasStoreAction)`). All declarations are
collected first and merged per field; the live one (an annotated field, else an add_argument that is
not deprecated) owns the attributes, whatever order the modules are read in. The others only add
their spellings, each recorded as an `Alias` with how it parses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..core.formula import flag_name
from ..core.model import Alias, Flag, Lit
from .modules import ClassInfo, ModuleSummary
from .modules import module_statements as _statements  # every block, not nested functions or classes
from .pyast import dotted, literal, message_text, segment, string
from .static_values import MISSING, Bindings, Index

_ANNOTATED = frozenset({"A", "Annotated", "typing.Annotated"})
# Help that opens with the word ("[Deprecated] ...", "(Deprecated: ...)", "Deprecated. ...") says the
# flag itself is deprecated; the word further in usually speaks of something else ("replaces the
# deprecated --x"), unless the help names the flag's own spelling ("--x is deprecated now").
_DEPRECATED_HELP = re.compile(r"^\W*deprecated\b", re.IGNORECASE)
_STORES_VALUE = frozenset({"store", "append", "extend"})

Default = tuple[str, object, bool]  # source text, literal value, whether it is a literal


@dataclass
class _Decl:
    """One declaration of a field: an add_argument call, an annotated field or a plain class field."""

    origin: str  # add_argument, annotated-field, dataclass-field
    file: str
    line: int
    flags: list[str] = field(default_factory=list)  # empty: no command-line spelling (plain or `no_cli` field)
    type: str | None = None
    typed: bool = False  # add_argument was given `type=`
    default: Default | None = None  # an explicit default
    default_of: str | None = None  # the default is this field's (`ServerArgs.x`, `_declared_default("x")`)
    suppressed: bool = False  # `default=argparse.SUPPRESS`: absent, the option leaves the field alone
    choices: tuple | None = None
    action: str | None = None
    nargs: str | None = None
    help: str | None = None
    deprecated: bool = False
    takes_value: bool = True
    const: Default | None = None  # what the option stores instead of its value (store_true, store_const-like)
    fallback: Default | None = None  # `Arg(fallback=...)`: what resolved reads answer while the field is None
    refused: str | None = None  # argparse refuses the option with this message (a removed flag's action)


# --- collecting declarations ------------------------------------------------------------------


# What a function's own text gives the catalog: whether it calls `add_argument`, and its namespace links.
Scan = tuple[bool, tuple[tuple[str, str], ...]]


def build_catalog(modules: list[ModuleSummary], scans: dict[str, Scan] | None = None,
                  load: Callable[[str], ModuleSummary | None] | None = None) -> list[Flag]:
    """All flags of the read modules, one entry per field (argparse dest), sorted by name.

    `scans` (by function digest, `Functions.digest`; read and filled): what each function's text gives
    the catalog. A function known there that declares no option is not read again, so a module whose
    functions are all so and that has no class is not parsed (an incremental extraction's index of
    it came from the cache). `load`: modules outside the read ones by dotted name, where a value is
    read through them (a list of parser names kept in a module of its own)."""
    index = Index(modules, load)
    decls: dict[str, list[_Decl]] = {}
    defaults: dict[str, Default] = {}
    namespace_defaults: dict[str, Default] = {}  # plain fields of Struct namespaces: only where no other default
    links: list[tuple[str, str]] = []
    scans = {} if scans is None else scans
    for module in modules:
        for cls in module.classes.values():
            _class_fields(index, module, cls, decls, defaults, namespace_defaults)
        for key in module.functions:
            digest = module.functions.digest(key)
            scan = scans.get(digest)
            if scan is None:
                scan = scans[digest] = _scan_function(module.functions.syntax(key))
            declares, own_links = scan
            links.extend(own_links)
            if not declares:
                continue
            function = module.functions.syntax(key)
            local: Bindings | None = None
            for stmt in _statements(function.body):
                if isinstance(stmt, ast.Expr) and _is_add_argument(stmt.value):
                    local = local or Bindings.of(_statements(function.body), _parameters(function), module.path)
                    found = _add_argument(index, module, stmt.value, stmt.lineno, local)  # type: ignore[arg-type]
                    if found is not None:
                        decls.setdefault(found[0], []).append(found[1])
    renamed = _follow_links(decls, links)
    defaults = {**namespace_defaults, **defaults}
    flags = [_merge(name, found, defaults, name in renamed) for name, found in decls.items()]
    return sorted(flags, key=lambda f: f.name)


def _scan_function(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Scan:
    declares = False
    links = []
    for stmt in _statements(function.body):
        if isinstance(stmt, ast.Expr) and _is_add_argument(stmt.value):
            declares = True
        elif isinstance(stmt, ast.Assign):
            link = _namespace_link(stmt)
            if link is not None:
                links.append(link)
    return declares, tuple(links)


def _is_add_argument(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = function.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return names + [p.arg for p in (a.vararg, a.kwarg) if p is not None]


def _namespace_link(stmt: ast.Assign) -> tuple[str, str] | None:
    """`args.tp_size = args.tensor_parallel_size` (0.5.10 `from_cli_args`): the field, and the dest it takes."""
    if len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    if (isinstance(target, ast.Attribute) and isinstance(value, ast.Attribute)
            and isinstance(target.value, ast.Name) and isinstance(value.value, ast.Name)
            and target.value.id == value.value.id and target.value.id not in ("self", "cls")
            and target.attr != value.attr):
        return target.attr, value.attr
    return None


def _follow_links(decls: dict[str, list[_Decl]], links: list[tuple[str, str]]) -> set[str]:
    """Move the options of a dest that is no field to the field it is copied into; the fields so named."""
    renamed = set()
    for name, dest in links:
        into, source = decls.get(name), decls.get(dest)
        if into is None or source is None or name in renamed:
            continue
        is_field = any(d.origin != "add_argument" for d in into) and not any(d.flags for d in into)
        is_dest_only = all(d.origin == "add_argument" for d in source) and any(d.flags for d in source)
        if is_field and is_dest_only:
            into.extend(decls.pop(dest))
            renamed.add(name)
    return renamed


def _class_fields(index: Index, module: ModuleSummary, cls: ClassInfo, decls, defaults, namespace_defaults) -> None:
    is_server_args = cls.name.rsplit(".", 1)[-1] == "ServerArgs"
    is_struct = any(b.rsplit(".", 1)[-1] == "Struct" for b in cls.bases)
    for stmt in module.declared_class(cls.name).body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        name = stmt.target.id
        if name.startswith("_"):
            continue
        annotation = stmt.annotation
        default = _default(index, module, stmt.value)
        if default is not None and (is_server_args or _is_annotated(annotation)):
            defaults.setdefault(name, default)
        elif default is not None and is_struct:
            namespace_defaults.setdefault(name, default)
        if _is_annotated(annotation):
            decl = _annotated_field(index, module, name, annotation, stmt.lineno)  # type: ignore[arg-type]
            if decl is not None:
                decls.setdefault(name, []).append(decl)
        elif is_server_args:
            decls.setdefault(name, []).append(_Decl("dataclass-field", module.path, stmt.lineno, type=_text(module, annotation)))


def _is_annotated(annotation: ast.expr) -> bool:
    return isinstance(annotation, ast.Subscript) and dotted(annotation.value) in _ANNOTATED


def _text(module: ModuleSummary, node: ast.AST) -> str:
    return segment(module.lines, node)


def _help(module: ModuleSummary, node: ast.expr) -> str:
    return message_text(node, lambda part: segment(module.lines, part))[0]


def _default(index: Index, module: ModuleSummary, value: ast.expr | None, local: Bindings | None = None) -> Default | None:
    if value is None:
        return None
    if isinstance(value, ast.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] == "field":
        for keyword in value.keywords:
            if keyword.arg == "default":
                value = keyword.value
                break
            if keyword.arg == "default_factory":
                return _text(module, keyword.value) + "()", None, False
    found = index.value(module, value, local)
    text = " ".join(_text(module, value).split())
    return (text, None, False) if found is MISSING else (text, found, True)


def _keywords(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg is not None}


def _nargs(module: ModuleSummary, node: ast.expr | None) -> str | None:
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return None  # `nargs=None` is argparse's own default: one value
    return string(node) or _text(module, node)


def _choices(index: Index, module: ModuleSummary, node: ast.expr, local: Bindings | None = None) -> tuple | None:
    found = index.value(module, node, local)
    return found if isinstance(found, tuple) else None


def _is_deprecated(action: str | None, help_text: str | None, options: Iterable[str]) -> bool:
    """Deprecated by its own action (`DeprecatedStoreTrueAction`) or its own help (see `_DEPRECATED_HELP`)."""
    if action is not None and "deprecat" in action.lower():
        return True
    if not help_text:
        return False
    if _DEPRECATED_HELP.match(help_text):
        return True
    return any(_says_deprecated(o, help_text) for o in options)


_DEPRECATED_AFTER = re.compile(r"\s+is\s+(?:now\s+)?deprecated\b", re.IGNORECASE)


def _says_deprecated(option: str, help_text: str) -> bool:
    """Does the help say "OPTION is (now) deprecated", in any case? (A pattern per option would be
    compiled anew for each of hundreds of options in every process.)"""
    lowered, wanted = help_text.lower(), option.lower()
    if len(lowered) != len(help_text) or len(wanted) != len(option):  # case folding moved characters
        return bool(re.search(re.escape(option) + _DEPRECATED_AFTER.pattern, help_text, re.IGNORECASE))
    start = lowered.find(wanted)
    while start >= 0:
        if _DEPRECATED_AFTER.match(help_text, start + len(option)):
            return True
        start = lowered.find(wanted, start + 1)
    return False


def _annotated_field(index: Index, module: ModuleSummary, name: str, annotation: ast.Subscript,
                     line: int) -> _Decl | None:
    elements = [e for e in _elements(annotation.slice) if not isinstance(e, ast.Slice)]
    if not elements:
        return None
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
        return None  # not a CLI field (`A[int, NS("x")]` alone)
    decl = _Decl("annotated-field", module.path, line, type=" ".join(_text(module, type_node).split()))
    no_cli = kwargs.get("no_cli")
    if isinstance(no_cli, ast.Constant) and no_cli.value is True:
        return decl  # the field's type still counts; its spellings, if any, come from add_argument
    aliases = index.value(module, kwargs["aliases"]) if "aliases" in kwargs else ()
    spellings = aliases if isinstance(aliases, tuple) else ()
    decl.flags = [string(kwargs.get("cli_name")) or flag_name(name), *[a for a in spellings if isinstance(a, str)]]
    decl.help = help_text
    inner = _unwrap_optional(type_node)
    choices = _choices(index, module, kwargs["choices"]) if "choices" in kwargs else None
    decl.choices = choices if choices is not None else _literal_choices(inner)
    if "action" in kwargs:
        decl.action = string(kwargs["action"]) or _text(module, kwargs["action"])
    elif dotted(inner) == "bool":
        decl.action = "store_true"
    elif (dotted(inner.value) if isinstance(inner, ast.Subscript) else None) in ("List", "list"):
        decl.nargs = "+"
    if "nargs" in kwargs:
        decl.nargs = _nargs(module, kwargs["nargs"])
    if "fallback" in kwargs:
        decl.fallback = _default(index, module, kwargs["fallback"])
    if "type_parser" in kwargs:  # `Arg(type_parser=json.loads)`: argparse's `type`, a parse error if it fails
        decl.type, decl.typed = _text(module, kwargs["type_parser"]), True
    extra = kwargs.get("action_kwargs")  # passed on to add_argument with a custom action
    if isinstance(extra, ast.Dict):
        for key, value in zip(extra.keys, extra.values):
            if isinstance(key, ast.Constant) and key.value == "nargs":
                decl.nargs = _nargs(module, value)
    if decl.action in ("store_true", "store_false"):
        decl.takes_value, decl.const = False, _BOOL_CONST[decl.action]
    decl.deprecated = _is_deprecated(decl.action, help_text, decl.flags)
    return decl


_BOOL_CONST: dict[str, Default] = {"store_true": ("True", True, True), "store_false": ("False", False, True)}


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


def _add_argument(index: Index, module: ModuleSummary, call: ast.Call, line: int,
                  local: Bindings) -> tuple[str, _Decl] | None:
    options = [s for s in (string(a) for a in call.args) if s]
    if not options:
        return None
    kwargs = _keywords(call)
    dest = string(kwargs.get("dest"))
    if dest is None:
        long = next((o for o in options if o.startswith("--")), options[0])
        dest = long.lstrip("-").replace("-", "_")
    decl = _Decl("add_argument", module.path, line, flags=options)
    action = kwargs.get("action")
    if action is not None:
        decl.action = string(action) or _text(module, action)
    if "type" in kwargs:
        decl.type, decl.typed = _text(module, kwargs["type"]), True
    decl.nargs = _nargs(module, kwargs.get("nargs"))
    if "help" in kwargs:
        decl.help = _help(module, kwargs["help"])
    if "choices" in kwargs:
        decl.choices = _choices(index, module, kwargs["choices"], local)
    if "default" in kwargs:
        value = kwargs["default"]
        if (dotted(value) or "").rsplit(".", 1)[-1] == "SUPPRESS":
            decl.suppressed = True
        else:
            decl.default_of = _field_reference(index, module, value)
            decl.default = _default(index, module, value, local)
    decl.takes_value, decl.const = _parsing(index, module, action, kwargs)
    decl.refused = _refusal(index, module, action, kwargs)
    decl.deprecated = _is_deprecated(decl.action, decl.help, options)
    return dest, decl


def _refusal(index: Index, module: ModuleSummary, action: ast.expr | None, kwargs: dict[str, ast.expr]) -> str | None:
    """The message a custom action's `__call__` passes to `parser.error(self.<attr>)`, where `__init__`
    sets that attribute from a parameter the call gives as text (0.5.18's `DeprecatedAction` with
    `error_message="--enable-expert-distribution-metrics is no longer supported. ..."`); None when the
    action refuses nothing, or only when given what the call does not give."""
    name = None if action is None else string(action) or dotted(action)
    found = index.action_class(module, name) if name else None
    if found is None:
        return None
    methods = _action_methods(*found)
    if methods is None:
        return None
    init, run = methods
    params = [p.arg for p in run.args.args]
    if len(params) < 2:
        return None
    for node in ast.walk(run):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "error" \
                and _is_name(node.func.value, params[1]) and len(node.args) == 1:
            attr = _attribute_of(node.args[0], params[0])
            param = _init_source(init, attr) if attr else None
            if param is not None and param in kwargs:
                return string(kwargs[param])
    return None


def _action_methods(module: ModuleSummary, cls: ClassInfo) -> tuple[ast.FunctionDef, ast.FunctionDef] | None:
    """A custom action's `__init__` and `__call__`, when its module defines both."""
    names = (f"{cls.name}.__init__", f"{cls.name}.__call__")
    if any(name not in module.functions for name in names):
        return None
    return module.functions.syntax(names[0]), module.functions.syntax(names[1])  # type: ignore[return-value]


def _field_reference(index: Index, module: ModuleSummary, node: ast.expr) -> str | None:
    """The field whose own default `node` is: `ServerArgs.x`, or `helper("x")` whose source returns it."""
    name = dotted(node)
    if name is not None:
        parts = name.split(".")
        return parts[1] if len(parts) == 2 and parts[0].endswith("ServerArgs") else None
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and string(node.args[0])):
        return None
    helper = dotted(node.func)
    function = index.function(module, helper) if helper else None
    return string(node.args[0]) if function is not None and _returns_field_default(function) else None


def _returns_field_default(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def f(name): return next(f.default for f in fields(ServerArgs) if f.name == name)`, or `getattr(ServerArgs, name)`."""
    a = function.args
    if len(a.args) != 1 or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults:
        return False
    param = a.args[0].arg
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and string(s.value) is not None)]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return False
    call = body[0].value
    func = dotted(call.func)
    if func == "getattr" and len(call.args) == 2:
        return (dotted(call.args[0]) or "").endswith("ServerArgs") and _is_name(call.args[1], param)
    if func != "next" or not call.args or not isinstance(call.args[0], ast.GeneratorExp):
        return False
    generator = call.args[0]
    if len(generator.generators) != 1:
        return False
    loop = generator.generators[0]
    if not isinstance(loop.target, ast.Name) or len(loop.ifs) != 1 or not isinstance(loop.iter, ast.Call):
        return False
    item = loop.target.id
    fields_of = loop.iter
    reads_fields = ((dotted(fields_of.func) or "").rsplit(".", 1)[-1] == "fields" and len(fields_of.args) == 1
                    and (dotted(fields_of.args[0]) or "").endswith("ServerArgs"))
    test = loop.ifs[0]
    matches_name = (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                    and {_attribute_of(test.left, item), _attribute_of(test.comparators[0], item)} >= {"name"}
                    and (_is_name(test.left, param) or _is_name(test.comparators[0], param)))
    return reads_fields and matches_name and _attribute_of(generator.elt, item) == "default"


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _attribute_of(node: ast.expr, name: str) -> str | None:
    """`x.attr` -> "attr" when x is `name`."""
    return node.attr if isinstance(node, ast.Attribute) and _is_name(node.value, name) else None


# --- how an option parses ------------------------------------------------------------------------


def _parsing(index: Index, module: ModuleSummary, action: ast.expr | None,
             kwargs: dict[str, ast.expr]) -> tuple[bool, Default | None]:
    """Whether the option takes a value, and what it stores instead of one (None: the value given)."""
    name = None if action is None else string(action) or dotted(action)
    if name is None or name in _STORES_VALUE:
        return _takes_value(kwargs.get("nargs")), None
    if name in _BOOL_CONST:
        return False, _BOOL_CONST[name]
    if name in ("store_const", "append_const"):
        return False, _default(index, module, kwargs.get("const")) or ("None", None, True)
    short = name.rsplit(".", 1)[-1]
    if short == "BooleanOptionalAction":
        return False, ("True", True, True)
    found = index.action_class(module, name)
    if found is not None:
        read = _action_class(index, module, found[0], found[1], kwargs)
        if read is not None:
            return read
    # A class the read modules do not define: its name is all there is to go by.
    if "StoreTrue" in short or "StoreFalse" in short:
        no_value = "nargs" not in kwargs or _takes_value(kwargs["nargs"]) is False
        return not no_value, _BOOL_CONST["store_true" if "StoreTrue" in short else "store_false"]
    if "StoreConst" in short:
        const = kwargs.get("const_value", kwargs.get("const"))
        return _takes_value(kwargs.get("nargs", ast.Constant(0))), _default(index, module, const) or ("None", None, True)
    return _takes_value(kwargs.get("nargs")), None


def _takes_value(nargs: ast.expr | None) -> bool:
    return not (isinstance(nargs, ast.Constant) and nargs.value == 0 and not isinstance(nargs.value, bool))


def _action_class(index: Index, at: ModuleSummary, module: ModuleSummary, cls: ClassInfo,
                  kwargs: dict[str, ast.expr]) -> tuple[bool, Default | None] | None:
    """Read a custom `argparse.Action`: `nargs` from the call or its `__init__` default, and what its
    `__call__` passes to `setattr(namespace, self.dest, ...)`: `values`, a literal, or an attribute
    `__init__` sets from one of its parameters."""
    methods = _action_methods(module, cls)
    if methods is None:
        return None
    init, run = methods
    init_defaults = _parameter_defaults(init)

    def argument(param: str) -> tuple[ModuleSummary, ast.expr | None]:
        # What a parameter of `__init__` is: passed at the add_argument call, else its default.
        return (at, kwargs[param]) if param in kwargs else (module, init_defaults.get(param))

    takes_value = _takes_value(argument("nargs")[1])
    run_params = [p.arg for p in run.args.args]
    values_param = run_params[3] if len(run_params) > 3 else "values"
    stored = [n.args[2] for n in ast.walk(run) if isinstance(n, ast.Call) and dotted(n.func) == "setattr"
              and len(n.args) == 3 and _attribute_of(n.args[1], run_params[0] if run_params else "self") == "dest"]
    if len(stored) != 1:
        return None
    what = stored[0]
    if _is_name(what, values_param):
        return takes_value, None
    lit = literal(what, module.constants)
    if lit is not None:
        return takes_value, (_text(module, what), lit.value, True)
    attr = _attribute_of(what, run_params[0] if run_params else "self")
    param = _init_source(init, attr) if attr else None
    if param is None:
        return takes_value, (_text(module, what), None, False)
    source, node = argument(param)
    return takes_value, _default(index, source, node) if node is not None else ("None", None, True)


def _parameter_defaults(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    a = function.args
    positional = [*a.posonlyargs, *a.args]
    found = {p.arg: d for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults)}
    found.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    return found


def _init_source(init: ast.FunctionDef | ast.AsyncFunctionDef, attr: str) -> str | None:
    """The `__init__` parameter `self.<attr>` is set from (`self.const_value = const_value`); `const`
    is argparse's own, passed on to `Action.__init__`."""
    self_name = init.args.args[0].arg if init.args.args else "self"
    for stmt in _statements(init.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _attribute_of(stmt.targets[0], self_name) == attr:
            return stmt.value.id if isinstance(stmt.value, ast.Name) else None
    return attr if attr == "const" else None


# --- merging the declarations of one field ------------------------------------------------------------


def _merge(name: str, decls: list[_Decl], defaults: dict[str, Default], renamed: bool) -> Flag:
    spelled = [d for d in decls if d.flags]
    # The live declaration owns the flag: not deprecated, not hidden behind SUPPRESS, an annotated
    # field before an add_argument (SGLang registers those first), else the first in reading order.
    rank = {id(d): (d.deprecated, d.suppressed, d.origin != "annotated-field", i) for i, d in enumerate(spelled)}
    owner = min(spelled, key=lambda d: rank[id(d)]) if spelled else None
    options: list[str] = []
    aliases: list[Alias] = []
    for decl in ([owner] if owner else []) + [d for d in spelled if d is not owner]:
        for option in decl.flags:
            if option in options:
                continue
            options.append(option)
            if decl is not owner:
                aliases.append(_alias(option, decl))
    if renamed and flag_name(name) in options:
        options.insert(0, options.pop(options.index(flag_name(name))))
    field_type = next((d.type for d in decls if d.origin != "add_argument" and d.type), None)
    first = owner or decls[0]
    if owner is not None and owner.origin == "add_argument" and not owner.typed and owner.action in _BOOL_CONST:
        type_text = "bool"
    else:
        type_text = (owner.type if owner else None) or field_type
    default = _merged_default(name, owner, defaults)
    return Flag(
        name=name,
        flags=tuple(options),
        type=type_text,
        default=default[0] if default else None,
        default_value=default[1] if default else None,  # type: ignore[arg-type]
        default_is_literal=default[2] if default else False,
        choices=owner.choices if owner else None,
        action=owner.action if owner else None,
        nargs=owner.nargs if owner else None,
        help=owner.help if owner else None,
        deprecated=owner.deprecated if owner else False,
        file=first.file,
        line=first.line,
        origins=tuple(dict.fromkeys(d.origin for d in decls)),
        aliases=tuple(aliases),
        fallback=Lit(owner.fallback[1]) if owner and owner.fallback and owner.fallback[2] else None,  # type: ignore[arg-type]
        refused=owner.refused if owner else None,
    )


def _alias(option: str, decl: _Decl) -> Alias:
    const = decl.const
    return Alias(
        flag=option,
        deprecated=decl.deprecated,
        takes_value=decl.takes_value,
        nargs=decl.nargs if decl.takes_value else None,
        choices=decl.choices if decl.takes_value else None,
        const=const[0] if const else None,
        const_value=const[1] if const else None,  # type: ignore[arg-type]
        const_is_literal=const[2] if const else False,
    )


def _merged_default(name: str, owner: _Decl | None, defaults: dict[str, Default]) -> Default | None:
    if owner is not None and owner.default_of is not None:
        if owner.default_of in defaults:
            return defaults[owner.default_of]
        if owner.default_of != name:
            return owner.default  # another field's default, unresolved: its text says where it comes from
    elif owner is not None and owner.default is not None:
        return owner.default
    if name in defaults:
        return defaults[name]
    if owner is not None and owner.action in _BOOL_CONST and owner.origin == "add_argument":
        return ("True", True, True) if owner.action == "store_false" else ("False", False, True)
    return None
