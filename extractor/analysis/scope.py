"""What a function's expressions are read against: server-argument aliases, the values of locals, literals.

The names that denote the server arguments, locals bound (or path-dependent, or unknown), module
constants and Enums, literals, and a walk over the variables of an expression.
"""

from __future__ import annotations

import dataclasses
import itertools
from ast import literal_eval
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst

from ..core.formula import conj
from ..core.model import Formula, Lit

_CODEGEN = cst.Module(body=[])

# Calls that return a view of the server arguments: `cfg = resolving_view(server_args)`.
VIEW_FUNCTIONS = frozenset({"resolving_view", "resolved_view", "_resolved", "ResolvedView", "ResolvingConfig", "record_of"})
# Parameter names that hold the server arguments by convention.
ALIAS_PARAMS = frozenset({"server_args", "args", "cfg", "view", "sargs"})
MAX_CHOICES = 64


# --- values of locals -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bound:
    """A local bound to an expression, to be read in the environment (and scope) of its assignment."""

    node: cst.BaseExpression
    env: Mapping[str, Value]
    scope: Scope | None = None  # set when the value crosses into another function (an argument)


@dataclass(frozen=True, slots=True)
class Choice:
    """A local whose value depends on the path: (condition, value) pairs, conditions disjoint."""

    options: tuple[tuple[Formula, Value], ...]


@dataclass(frozen=True, slots=True)
class Unknown:
    """A local whose value cannot be followed (set in a loop, unpacked, ...)."""

    text: str
    fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, repr=False)
class OnePerItem(Unknown):
    """A list a `for` loop appended one item to per item of what it iterated (`parsed = []`, then
    `for p in cfg.lora_paths: ...; parsed.append(ref)`): unknown items, but as many as those
    (`len(parsed)` is `len(cfg.lora_paths)`)."""

    items: Bound | None = field(default=None, compare=False)  # what the loop iterated, when it began

    def __repr__(self) -> str:  # a walk's memo key: the name and its fields, not the bound syntax
        return f"OnePerItem({self.text!r}, {self.fields!r})"


@dataclass(frozen=True, slots=True)
class NonEmpty:
    """A collection known to hold items (`problems.append(...)` ran)."""

    text: str
    fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Entries:
    """A dict local built up key by key from a display with literal keys (`renamed = {}`, then
    `renamed[attr] = aliases[old]` in an unrolled loop): what each key holds, a `Choice` with
    `ABSENT` where only some paths set it. `.get(key)` reads the entry; a key never set reads absent."""

    text: str
    entries: tuple[tuple[str, Value], ...]
    fields: tuple[str, ...] = ()

    def get(self, key: str) -> Value:
        return next((value for k, value in self.entries if k == key), ABSENT)

    def with_entry(self, key: str, value: Value) -> Entries:
        kept = tuple((k, v) for k, v in self.entries if k != key)
        return Entries(self.text, (*kept, (key, value)), self.fields)


@dataclass(frozen=True, slots=True)
class EnvOriginal:
    """An environment variable as the launch environment sets it: its value on a path where the
    function did not `envs.NAME.set(...)` it."""

    name: str
    fields: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return f"envs.{self.name}.get()"


@dataclass(frozen=True, slots=True)
class Absent:
    """A key a dict local does not hold (on some path)."""

    text: str = "None"
    fields: tuple[str, ...] = ()


ABSENT = Absent()


class _FieldValue:
    """A value that is one field's, read as the field itself (`text` and `fields` of its name)."""

    __slots__ = ()
    name: str

    @property
    def text(self) -> str:
        return self.name

    @property
    def fields(self) -> tuple[str, ...]:
        return (self.name,)


@dataclass(frozen=True, slots=True)
class Original(_FieldValue):
    """A field as the launch command set it: its value on a path where the function did not assign it."""

    name: str


@dataclass(frozen=True, slots=True)
class Rewritten(_FieldValue):
    """A field as a call of the function may have left it: read after that call, in the run's order.

    `handle_defaults(server_args)` may declare `page_size`; a later `cfg.page_size` in the caller
    reads what the store holds after the call, which the run fills in (`Term.after`).
    """

    name: str
    call: int  # the walk's order of the call event


Value = Bound | Choice | Unknown | NonEmpty | Entries | Absent | EnvOriginal | Original | Rewritten
Env = Mapping[str, Value]
# Env keys of the fields a function assigns itself (`self.page_size = 64`): "@page_size". Reads of
# the field after the assignment see the assigned value, path by path, as reads of a local do.
FIELD_KEY = "@"


@dataclass(frozen=True, slots=True)
class Scope:
    """What a function's expressions are read against."""

    aliases: frozenset[str]  # local names that denote the server arguments
    constants: Mapping[str, Lit]  # module-level names bound to literals
    enums: Container[str] = field(default=frozenset(), compare=False, hash=False)  # `E.MEMBER` reads as "MEMBER"
    methods: Container[str] = frozenset()  # methods and properties of ServerArgs: `self.x` of these is no field
    fields: Container[str] = field(default=frozenset(), compare=False, hash=False)  # the server-argument fields
    # Constants of the ServerArgs class (`server_args.LANGUAGE_MODEL_ONLY_ARCHITECTURES`), by name.
    record_constants: Mapping[str, Lit] = field(default_factory=dict, compare=False, hash=False)
    # What a field's resolved read answers while it holds None (`Flag.fallback`), by field.
    fallbacks: Mapping[str, Lit] = field(default_factory=dict, compare=False, hash=False)
    # Inlines a call to a one-`return` predicate: gives (returned expression, its scope, its locals).
    inline: Callable[[cst.Call, Env], tuple[cst.BaseExpression, Scope, Env] | None] | None = field(
        default=None, compare=False, hash=False
    )
    # The server-argument fields a call may write, through the functions it leads to (`run_hook(h, sa)`).
    call_writes: Callable[[cst.Call, Env], frozenset[str]] | None = field(default=None, compare=False, hash=False)
    # Reads a call to a small pure helper as the values it returns: [(when, expression, its scope, its locals)].
    inline_cases: Callable[[cst.Call, Env], list | None] | None = field(default=None, compare=False, hash=False)
    # The texts the walk in progress rendered (`normalize`: locals, and expressions for one env), or None.
    renders: Callable[[], dict | None] | None = field(default=None, compare=False, hash=False)


# Env keys of the environment variables a function sets itself (`envs.NAME.set("python")`): "$NAME".
ENV_KEY = "$"
_ENV_METHODS = frozenset({"get", "is_set", "set"})


def env_call(node: cst.BaseExpression) -> tuple[str, str] | None:
    """(NAME, method) of `envs.NAME.get()`, `envs.NAME.is_set()` or `envs.NAME.set(v)`, else None."""
    if type(node) is not cst.Call or type(node.func) is not cst.Attribute or node.func.attr.value not in _ENV_METHODS:
        return None
    owner = node.func.value
    if type(owner) is cst.Attribute and type(owner.value) is cst.Name and owner.value.value == "envs":
        return owner.attr.value, node.func.attr.value
    return None


def code(node: cst.CSTNode) -> str:
    return _CODEGEN.code_for_node(node)


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names, else None."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def is_alias(node: cst.BaseExpression, scope: Scope, env: Env) -> bool:
    """Does the expression denote the server arguments (`self`, `server_args`, `resolving_view(x)`, ...)?"""
    if type(node) is cst.Name:
        return node.value in scope.aliases and node.value not in env
    if type(node) is cst.BooleanOperation and type(node.operator) is cst.Or:
        # `cfg = cfg or resolving_view(server_args)`: the caller's view, else a new one: a view either way.
        return is_alias(node.left, scope, env) and is_alias(node.right, scope, env)
    if type(node) is cst.Call:
        name = dotted_name(node.func)
        if name is None:
            return False
        last = name.rsplit(".", 1)[-1]
        if last in VIEW_FUNCTIONS:
            if type(node.func) is cst.Attribute:  # self._resolved()
                return is_alias(node.func.value, scope, env)
            return bool(node.args) and is_alias(node.args[0].value, scope, env)
    return False


def constant_of(node: cst.BaseExpression, scope: Scope, env: Env) -> Lit | None:
    """The value of an upper-case constant the expression names: of the module or an import
    (`SUPPORTED_SCHEMES`), or of the ServerArgs class through the record
    (`server_args.LANGUAGE_MODEL_ONLY_ARCHITECTURES`)."""
    if type(node) is cst.Name and node.value.isupper() and node.value not in env:
        fixed = getattr(scope.constants, "fixed", None)  # not a registry that is filled in place
        return fixed(node.value) if fixed is not None else scope.constants.get(node.value)
    if type(node) is cst.Attribute and node.attr.value in scope.record_constants and is_alias(node.value, scope, env):
        return scope.record_constants[node.attr.value]
    return None


def field_of(node: cst.BaseExpression, scope: Scope, env: Env) -> str | None:
    """The field name if the expression reads one server argument directly."""
    if type(node) is cst.Attribute and is_alias(node.value, scope, env):
        # `_raw_input`, `_cuda_graph_config_locked`: the record's bookkeeping, not a server argument;
        # `LANGUAGE_MODEL_ONLY_ARCHITECTURES`: a class constant; a `@property` or method neither.
        name = node.attr.value
        return None if name.startswith("_") or name.isupper() or name in scope.methods else name
    if type(node) is cst.Call and dotted_name(node.func) == "getattr" and len(node.args) >= 2:
        value = bound_string(node.args[1].value, env)  # `getattr(cfg, attr)` in `for attr in ("a", "b")`
        if value is None or not is_alias(node.args[0].value, scope, env):
            return None
        return None if value.startswith("_") or value.isupper() or value in scope.methods else value
    return None


def token_value(node: cst.SimpleString | cst.Integer | cst.Float) -> object:
    """`node.evaluated_value`, memoized by the token's text: libcst runs `ast.literal_eval` on it each
    time it is asked, and walks ask for the same few thousand literals over and over."""
    return _token_value(node.value)


@lru_cache(maxsize=None)
def _token_value(text: str) -> object:
    return literal_eval(text)  # str, bytes, int or float: immutable, safe to share


def bound_string(node: cst.BaseExpression, env: Env) -> str | None:
    """A string literal, or a local bound to one (a loop over literal names, unrolled)."""
    while type(node) is cst.Name and isinstance(env.get(node.value), Bound):
        bound = env[node.value]
        node, env = bound.node, bound.env  # type: ignore[union-attr]
    if type(node) is cst.SimpleString and isinstance(value := token_value(node), str):
        return value
    return None


# --- literals ----------------------------------------------------------------------------------


class _NotLiteral(Exception):
    pass


def literal(node: cst.BaseExpression, scope: Scope | None = None) -> Lit | None:
    try:
        return Lit(_literal_value(node, scope))
    except _NotLiteral:
        return None


def _literal_value(node: cst.BaseExpression, scope: Scope | None):
    if type(node) in (cst.SimpleString, cst.ConcatenatedString):
        value = token_value(node) if type(node) is cst.SimpleString else node.evaluated_value  # type: ignore[arg-type]
        if isinstance(value, bytes) or value is None:
            raise _NotLiteral
        return value
    if type(node) in (cst.Integer, cst.Float):
        return token_value(node)  # type: ignore[arg-type]
    if type(node) is cst.Name:
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if scope is not None and node.value in scope.constants:
            return scope.constants[node.value].value
        raise _NotLiteral
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        value = _literal_value(node.expression, scope)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
        raise _NotLiteral
    if type(node) in (cst.List, cst.Tuple, cst.Set):
        values = []
        for element in node.elements:
            if type(element) is cst.StarredElement:
                raise _NotLiteral
            values.append(_literal_value(element.value, scope))
        return tuple(values)
    raise _NotLiteral


# --- the variables of an expression ----------------------------------------------------------


def _top_names(node: cst.BaseExpression) -> list[str]:
    """Variable names used in an expression (not attribute names, keywords or lambda bodies)."""
    names: list[str] = []
    for n in iter_expression(node):
        if type(n) is cst.Name and n.value not in names:
            names.append(n.value)
    return names


# libcst's visitor machinery costs more than the parse on big files; this walk reads the dataclass
# fields directly and skips whitespace and punctuation.
_SKIPPED_FIELDS = frozenset({"lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators",
                             "header", "footer", "equal", "colon", "star_tok", "operator", "dot"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_field_names(kind: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(kind)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[kind] = names
    return names


def expression_children(node: cst.CSTNode):
    """The direct parts of an expression that hold variables, in source order (what `iter_expression`
    enters next, written out there again: it runs for every test of every walk)."""
    kind = type(node)
    if kind is cst.Attribute or kind is cst.Arg:
        yield node.value  # type: ignore[attr-defined]
        return
    if kind is cst.Lambda:
        return
    for name in child_field_names(kind):
        value = getattr(node, name)
        if value is None or type(value) is str:
            continue
        if type(value) is list or type(value) is tuple:
            yield from (v for v in value if isinstance(v, cst.CSTNode))
        elif isinstance(value, cst.CSTNode):
            yield value


def iter_expression(node: cst.CSTNode):
    """The nodes of an expression that hold variables: attribute names, keywords and lambdas left out."""
    # `type(x) is` and plain-type tests: isinstance against libcst's abstract classes is slow.
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        kind = type(n)
        if kind is cst.Attribute or kind is cst.Arg:
            stack.append(n.value)  # type: ignore[attr-defined]
            continue
        if kind is cst.Lambda:
            continue
        for name in child_field_names(kind):
            value = getattr(n, name)
            if value is None or type(value) is str:
                continue
            if type(value) is list or type(value) is tuple:
                stack.extend(v for v in reversed(value) if isinstance(v, cst.CSTNode))
            elif isinstance(value, cst.CSTNode):
                stack.append(value)


def entries_of(value: Value | None) -> Entries | None:
    """A dict local's entries: built up already, or a display whose keys are all string literals."""
    if isinstance(value, Entries):
        return value
    if isinstance(value, Bound) and type(value.node) is cst.Dict:
        entries = []
        for element in value.node.elements:
            key = element.key if type(element) is cst.DictElement else None
            name = token_value(key) if type(key) is cst.SimpleString else None  # type: ignore[arg-type]
            if not isinstance(name, str):
                return None  # `**other` or a computed key: which keys it holds cannot be told
            entries.append((name, Bound(element.value, value.env, value.scope)))
        return Entries(code(value.node), tuple(entries))
    return None


def with_entry(value: Value, key: str, entry: Value, fields: tuple[str, ...]) -> Value | None:
    """The dict local after `d[key] = ...` on this path (each option of a path-dependent one); None
    when it is not a dict whose keys can be told."""
    if isinstance(value, Choice):
        options = [(when, with_entry(option, key, entry, fields)) for when, option in value.options]
        if any(option is None for _, option in options):
            return None
        return Choice(tuple(options))  # type: ignore[arg-type]
    entries = entries_of(value)
    if entries is None:
        return None
    updated = entries.with_entry(key, entry)
    return Entries(updated.text, updated.entries, tuple(sorted(set(entries.fields) | set(fields))))


def choice_names(node: cst.BaseExpression, env: Env, scope: Scope | None = None) -> list[str]:
    """The path-dependent locals an expression reads, and (given the scope) the fields it reads that
    the function assigned on some paths only."""
    names = [n for n in _top_names(node) if isinstance(env.get(n), Choice)]
    if scope is not None and any(type(v) is Choice and k.startswith(FIELD_KEY) for k, v in env.items()):
        for n in iter_expression(node):
            if type(n) is cst.Attribute or type(n) is cst.Call:
                name = field_of(n, scope, env)
                if name is not None and type(env.get(FIELD_KEY + name)) is Choice and FIELD_KEY + name not in names:
                    names.append(FIELD_KEY + name)
    return names


def bind(node: cst.BaseExpression, env: Env, scope: Scope | None = None, reading: Scope | None = None) -> Value:
    """The value of `name = node`: distributes over path-dependent locals (and assigned fields, read
    in `reading`) so uses stay exact."""
    names = choice_names(node, env, reading)
    if not names:
        return Bound(node, env, scope)
    option_lists = [env[n].options for n in names]  # type: ignore[union-attr]
    options: list[tuple[Formula, Value]] = []
    for combo in itertools.product(*option_lists):
        if len(options) >= MAX_CHOICES:
            return Unknown(code(node), ())
        local = dict(env)
        guards = []
        for name, (cond, value) in zip(names, combo):
            local[name] = value
            guards.append(cond)
        options.append((conj(*guards), Bound(node, local, scope)))
    return Choice(tuple(options))


LOCAL_PREFIX = "local_"  # `page_size`, a local whose value the walk lost, is `local_page_size` in a term


def local_text(name: str, scope: Scope) -> str:
    """How a local whose value is not followed is written in a term: its name, unless a field has that
    name (the local `page_size` of a pass is not the flag, and the run pins fields by their names)."""
    return f"{LOCAL_PREFIX}{name}" if name in scope.fields else name


def bookkeeping_value(node: cst.BaseExpression, scope: Scope, env: Env) -> Lit | None:
    """What a read of the server arguments' own bookkeeping holds at launch, or None for another read.

    `getattr(self, "_resolution_finished", False)`: unset at launch, its default. `hasattr(self,
    "model_config")` of a name that is no field, method or constant: a cache the run fills on first
    use (`if hasattr(self, "model_config"): return self.model_config`, then `self.model_config =
    ModelConfig(...)`), unset at launch, so False: what it guards runs at the first use, and raises
    there if it raises at all."""
    if type(node) is not cst.Call or len(node.args) not in (2, 3) or not is_alias(node.args[0].value, scope, env):
        return None
    key, called = node.args[1].value, dotted_name(node.func)
    if type(key) is not cst.SimpleString or not isinstance(key.evaluated_value, str):
        return None
    name = key.evaluated_value
    if called == "getattr" and len(node.args) == 3 and name.startswith("_"):
        return literal(node.args[2].value, scope)
    if called == "hasattr" and len(node.args) == 2 and name not in scope.fields and name not in scope.methods \
            and name not in scope.record_constants:
        return Lit(False)
    return None
