"""From libcst expressions to formulas over terms: receivers normalized, locals substituted, atoms classified."""

from __future__ import annotations

import dataclasses
import io
import itertools
import re
import tokenize
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field

import libcst as cst

from ..core.formula import conj, disj, formula_size, literal_source, neg
from ..core.model import FALSE, SWAPPED_OP, TRUE, Atom, Const, Formula, Lit, Term, TermKind

_CODEGEN = cst.Module(body=[])

# Calls that return a view of the server arguments: `cfg = resolving_view(server_args)`.
VIEW_FUNCTIONS = frozenset({"resolving_view", "resolved_view", "_resolved", "ResolvedView", "ResolvingConfig"})
# Parameter names that hold the server arguments by convention.
ALIAS_PARAMS = frozenset({"server_args", "args", "cfg", "view", "sargs"})
_STRING_METHODS = frozenset({"lower", "upper", "strip", "casefold"})
_BUILTIN_TRANSFORMS = frozenset({"int", "float", "str", "len", "bool", "abs"})
_MAX_CHOICES = 64
_MAX_EXPANDED_ATOMS = 128  # a test over path-dependent locals larger than this stays one opaque atom

_ENV_PATTERNS = (
    re.compile(r"^envs\.([A-Za-z_][A-Za-z0-9_]*)\b"),
    re.compile(r"\bos\.environ\.get\(\s*['\"]([^'\"]+)['\"]"),
    re.compile(r"\bos\.environ\[\s*['\"]([^'\"]+)['\"]"),
    re.compile(r"\bos\.getenv\(\s*['\"]([^'\"]+)['\"]"),
    re.compile(r"\bget_\w*env\w*\(\s*['\"]([^'\"]+)['\"]"),
    re.compile(r"^['\"]([^'\"]+)['\"] (?:not )?in os\.environ$"),
)
_PLATFORM = re.compile(
    r"\b(_?is_(?:cuda|hip|npu|cpu|xpu|mps|hpu|musa|cuda_alike|sm\d+\w*|blackwell\w*|hopper\w*|gfx\w*|arm\w*|"
    r"x86\w*|host_cpu\w*|ascend\w*|flashinfer_available|\w+_available|\w+_supported)|get_device_\w+|get_platform|"
    r"current_platform|torch\.cuda|torch\.version|torch\.xpu|torch\.npu|cuda_version|get_\w*gpu_memory\w*|"
    r"use_mlx|platform\.\w+)\b"
)
_MODEL = re.compile(
    r"\b(model_config\w*|hf_config\w*|hf_text_config|model_arch\w*|architectures|get_model_arch\w*|model_type|"
    r"get_hf_config|get_model_config|is_deepseek\w*|is_\w+_model\w*|quant_config|get_config|is_mla\w*|"
    r"use_mla_backend|is_multimodal\w*)\b"
)


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


@dataclass(frozen=True, slots=True)
class NonEmpty:
    """A collection known to hold items (`problems.append(...)` ran)."""

    text: str
    fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Original:
    """A field as the launch command set it: its value on a path where the function did not assign it."""

    name: str

    @property
    def text(self) -> str:
        return self.name

    @property
    def fields(self) -> tuple[str, ...]:
        return (self.name,)


Value = Bound | Choice | Unknown | NonEmpty | Original
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
    methods: frozenset[str] = frozenset()  # methods and properties of ServerArgs: `self.x` of these is no field
    # Inlines a call to a one-`return` predicate: gives (returned expression, its scope, its locals).
    inline: Callable[[cst.Call, Env], tuple[cst.BaseExpression, Scope, Env] | None] | None = field(
        default=None, compare=False, hash=False
    )


def code(node: cst.CSTNode) -> str:
    return _CODEGEN.code_for_node(node)


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def is_alias(node: cst.BaseExpression, scope: Scope, env: Env) -> bool:
    """Does the expression denote the server arguments (`self`, `server_args`, `resolving_view(x)`, ...)?"""
    if isinstance(node, cst.Name):
        return node.value in scope.aliases and node.value not in env
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        # `cfg = cfg or resolving_view(server_args)`: the caller's view, else a new one: a view either way.
        return is_alias(node.left, scope, env) and is_alias(node.right, scope, env)
    if isinstance(node, cst.Call):
        name = dotted_name(node.func)
        if name is None:
            return False
        last = name.rsplit(".", 1)[-1]
        if last in VIEW_FUNCTIONS:
            if isinstance(node.func, cst.Attribute):  # self._resolved()
                return is_alias(node.func.value, scope, env)
            return bool(node.args) and is_alias(node.args[0].value, scope, env)
    return False


def field_of(node: cst.BaseExpression, scope: Scope, env: Env) -> str | None:
    """The field name if the expression reads one server argument directly."""
    if isinstance(node, cst.Attribute) and is_alias(node.value, scope, env):
        # `_raw_input`, `_cuda_graph_config_locked`: the record's bookkeeping, not a server argument;
        # `LANGUAGE_MODEL_ONLY_ARCHITECTURES`: a class constant; a `@property` or method neither.
        name = node.attr.value
        return None if name.startswith("_") or name.isupper() or name in scope.methods else name
    if isinstance(node, cst.Call) and dotted_name(node.func) == "getattr" and len(node.args) >= 2:
        value = bound_string(node.args[1].value, env)  # `getattr(cfg, attr)` in `for attr in ("a", "b")`
        if value is None or not is_alias(node.args[0].value, scope, env):
            return None
        return None if value.startswith("_") or value.isupper() or value in scope.methods else value
    return None


def bound_string(node: cst.BaseExpression, env: Env) -> str | None:
    """A string literal, or a local bound to one (a loop over literal names, unrolled)."""
    while isinstance(node, cst.Name) and isinstance(env.get(node.value), Bound):
        bound = env[node.value]
        node, env = bound.node, bound.env  # type: ignore[union-attr]
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        return node.evaluated_value
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
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        if isinstance(value, bytes) or value is None:
            raise _NotLiteral
        return value
    if isinstance(node, cst.Integer):
        return node.evaluated_value
    if isinstance(node, cst.Float):
        return node.evaluated_value
    if isinstance(node, cst.Name):
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if scope is not None and node.value in scope.constants:
            return scope.constants[node.value].value
        raise _NotLiteral
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = _literal_value(node.expression, scope)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
        raise _NotLiteral
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        values = []
        for element in node.elements:
            if isinstance(element, cst.StarredElement):
                raise _NotLiteral
            values.append(_literal_value(element.value, scope))
        return tuple(values)
    raise _NotLiteral


# --- normalized source -------------------------------------------------------------------------


# Expressions that need no parentheses where a local bound to them is substituted.
_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.Integer, cst.Float)


class _Normalizer(cst.CSTTransformer):
    """Rewrites receivers to bare field names and locals to their expressions, collecting fields."""

    def __init__(self, scope: Scope, env: Env) -> None:
        super().__init__()
        self.scope = scope
        self.env = env
        self.fields: set[str] = set()
        self.methods: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False  # the attribute name is not a variable; the value is rewritten in leave_Attribute

    def visit_Call(self, node: cst.Call) -> bool:
        if isinstance(node.func, cst.Attribute):
            self.methods.add(id(node.func))  # `self.get_x()` calls a method; it reads no field named get_x
        return True

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        name = None if id(original_node) in self.methods else field_of(original_node, self.scope, self.env)
        if name is not None:
            self.fields.add(name)
            return cst.Name(name)
        return updated_node.with_changes(value=original_node.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        name = field_of(original_node, self.scope, self.env)
        if name is not None:
            self.fields.add(name)
            return cst.Name(name)
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        value = self.env.get(original_node.value)
        if value is None:
            return updated_node
        if isinstance(value, Bound):
            inner = _Normalizer(value.scope or self.scope, value.env)
            rewritten = value.node.visit(inner)
            self.fields |= inner.fields
            return _parenthesize(rewritten)
        self.fields.update(value_fields(value, self.scope))
        return updated_node


def _parenthesize(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, _ATOMIC):
        return node
    if node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def normalize(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[str, tuple[str, ...]]:
    """Normalized source of an expression and the fields it reads."""
    renderer = _Renderer(scope, env)
    text = renderer.expression(node, outer=True)
    if "  " in text or "\n" in text or "\t" in text:
        text = " ".join(text.split())
    return text, tuple(sorted(renderer.fields))


_OPERATORS: dict[type, str] = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.Power: "**", cst.MatrixMultiply: "@", cst.LeftShift: "<<", cst.RightShift: ">>",
    cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^", cst.And: "and", cst.Or: "or",
    cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=", cst.In: "in", cst.NotIn: "not in", cst.Is: "is", cst.IsNot: "is not",
}
_UNARY = {cst.Not: "not ", cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~"}


class _Renderer:
    """Writes an expression's source with receivers as bare field names and locals replaced by their
    expressions, in one pass, collecting the fields read.

    The common expression nodes are written directly (spaced the one usual way); the rest (lambdas,
    comprehensions, f-strings) go through `_Normalizer` and libcst's code generation, which cost ten
    times more: this runs for every test of every walk.
    """

    def __init__(self, scope: Scope, env: Env) -> None:
        self.scope = scope
        self.env = env
        self.fields: set[str] = set()

    def expression(self, node: cst.BaseExpression, outer: bool = False) -> str:
        """The text of `node`; `outer`: the whole expression, its own parentheses dropped."""
        kind = type(node)
        if kind is cst.Name:
            return self._name(node, outer)  # type: ignore[arg-type]
        write = _WRITERS.get(kind)
        if write is None:
            return self._fallback(node, outer)
        text = write(self, node)
        if node.lpar and not outer:
            text = "(" * len(node.lpar) + text + ")" * len(node.rpar)
        elif outer and kind is cst.Tuple and not node.elements:  # type: ignore[attr-defined]
            return "()"
        return text

    def _name(self, node: cst.Name, outer: bool) -> str:
        value = self.env.get(node.value)
        if isinstance(value, Bound):
            inner = _Renderer(value.scope or self.scope, value.env)
            text = inner.expression(value.node, outer=outer)
            self.fields |= inner.fields
            if outer or isinstance(value.node, _ATOMIC) or value.node.lpar:  # type: ignore[attr-defined]
                return text
            return f"({text})"
        if value is not None:
            self.fields.update(value_fields(value, self.scope))
        text = node.value
        return "(" * len(node.lpar) + text + ")" * len(node.rpar) if node.lpar and not outer else text

    def _fallback(self, node: cst.BaseExpression, outer: bool) -> str:
        normalizer = _Normalizer(self.scope, self.env)
        rewritten = node.visit(normalizer)
        self.fields |= normalizer.fields
        if outer and getattr(rewritten, "lpar", None) and not (isinstance(rewritten, cst.Tuple) and not rewritten.elements):
            rewritten = rewritten.with_changes(lpar=[], rpar=[])
        text = code(rewritten)
        return _without_comments(text) if "#" in text else text

    def attribute(self, node: cst.Attribute) -> str:
        name = field_of(node, self.scope, self.env)
        if name is not None:
            self.fields.add(name)
            return name
        return f"{self.expression(node.value)}.{node.attr.value}"

    def call(self, node: cst.Call) -> str:
        name = field_of(node, self.scope, self.env)
        if name is not None:
            self.fields.add(name)
            return name
        func = node.func
        # `self.get_x()` calls a method: it reads no field named get_x.
        head = f"{self.expression(func.value)}.{func.attr.value}" if type(func) is cst.Attribute else self.expression(func)
        return f"{head}({', '.join(self.argument(a) for a in node.args)})"

    def argument(self, arg: cst.Arg) -> str:
        keyword = f"{arg.keyword.value}=" if arg.keyword is not None else ""
        return f"{keyword}{arg.star}{self.expression(arg.value)}"

    def subscript(self, node: cst.Subscript) -> str:
        parts = []
        for element in node.slice:
            index = element.slice
            if type(index) is cst.Index:
                parts.append(f"{index.star or ''}{self.expression(index.value)}")  # type: ignore[union-attr]
            else:
                bounds = [self.expression(b) if b is not None else "" for b in (index.lower, index.upper)]  # type: ignore[union-attr]
                step = index.step  # type: ignore[union-attr]
                parts.append(":".join(bounds) + (f":{self.expression(step)}" if step is not None else ""))
        return f"{self.expression(node.value)}[{', '.join(parts)}]"

    def comparison(self, node: cst.Comparison) -> str:
        text = self.expression(node.left)
        for target in node.comparisons:
            text += f" {_OPERATORS[type(target.operator)]} {self.expression(target.comparator)}"
        return text

    def binary(self, node: cst.BinaryOperation | cst.BooleanOperation) -> str:
        return f"{self.expression(node.left)} {_OPERATORS[type(node.operator)]} {self.expression(node.right)}"

    def unary(self, node: cst.UnaryOperation) -> str:
        return _UNARY[type(node.operator)] + self.expression(node.expression)

    def if_exp(self, node: cst.IfExp) -> str:
        return f"{self.expression(node.body)} if {self.expression(node.test)} else {self.expression(node.orelse)}"

    def token(self, node: cst.SimpleString | cst.Integer | cst.Float | cst.Imaginary) -> str:
        return node.value

    def concatenated(self, node: cst.ConcatenatedString) -> str:
        return f"{self.expression(node.left)} {self.expression(node.right)}"

    def sequence(self, node: cst.Tuple | cst.List | cst.Set) -> str:
        items = [("*" if type(e) is cst.StarredElement else "") + self.expression(e.value) for e in node.elements]
        if type(node) is cst.Tuple:
            return ", ".join(items) + ("," if len(items) == 1 else "")
        open_, close = ("[", "]") if type(node) is cst.List else ("{", "}")
        return f"{open_}{', '.join(items)}{close}"

    def dict(self, node: cst.Dict) -> str:
        items = [f"**{self.expression(e.value)}" if type(e) is cst.StarredDictElement
                 else f"{self.expression(e.key)}: {self.expression(e.value)}" for e in node.elements]  # type: ignore[union-attr]
        return "{" + ", ".join(items) + "}"

    def ellipsis(self, node: cst.Ellipsis) -> str:
        return "..."


_WRITERS: dict[type, Callable[[_Renderer, cst.BaseExpression], str]] = {  # type: ignore[dict-item]
    cst.Attribute: _Renderer.attribute, cst.Call: _Renderer.call, cst.Subscript: _Renderer.subscript,
    cst.Comparison: _Renderer.comparison, cst.BinaryOperation: _Renderer.binary, cst.BooleanOperation: _Renderer.binary,
    cst.UnaryOperation: _Renderer.unary, cst.IfExp: _Renderer.if_exp, cst.SimpleString: _Renderer.token,
    cst.Integer: _Renderer.token, cst.Float: _Renderer.token, cst.Imaginary: _Renderer.token,
    cst.ConcatenatedString: _Renderer.concatenated, cst.Tuple: _Renderer.sequence, cst.List: _Renderer.sequence,
    cst.Set: _Renderer.sequence, cst.Dict: _Renderer.dict, cst.Ellipsis: _Renderer.ellipsis,
}


def _without_comments(source: str) -> str:
    """The source with its `# ...` comments cut, so joining its lines cannot comment out the rest."""
    cuts: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                cuts[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):
        return source
    lines = source.splitlines()
    return "\n".join(line[: cuts[n]] if n in cuts else line for n, line in enumerate(lines, 1))


# Expressions that bind more loosely than a comparison operand: as a term they need parentheses, or
# `(a or b) == "x"` would print as `a or b == "x"` and mean something else.
_LOOSE = (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Comparison, cst.Tuple, cst.Yield)


def term_source(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[str, tuple[str, ...]]:
    """Like `normalize`, but parenthesized where needed so the text can stand as an operand."""
    text, fields = normalize(node, scope, env)
    while isinstance(node, cst.Name) and isinstance(env.get(node.value), Bound):
        value = env[node.value]
        node, env = value.node, value.env  # type: ignore[union-attr]
    loose = isinstance(node, _LOOSE) or (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not))
    if loose and not (isinstance(node, cst.Tuple) and not node.elements):  # `()` keeps its own
        text = f"({text})"
    return text, fields


def opaque(node: cst.BaseExpression, scope: Scope, env: Env) -> Term:
    """An expression kept as (parenthesized, normalized) source text, classified by what it reads."""
    return classify(*term_source(node, scope, env))


# --- terms -------------------------------------------------------------------------------------


def classify(text: str, fields: tuple[str, ...]) -> Term:
    """An opaque piece of source, told apart as env, platform or model when it looks like one."""
    for pattern in _ENV_PATTERNS:
        match = pattern.search(text)
        if match:
            return Term(TermKind.ENV, match.group(1), text, fields)
    if _PLATFORM.search(text):
        return Term(TermKind.PLATFORM, text, text, fields)
    if _MODEL.search(text):
        return Term(TermKind.MODEL, text, text, fields)
    return Term(TermKind.OPAQUE, text, text, fields)


def to_term(node: cst.BaseExpression, scope: Scope, env: Env) -> Term | Lit:
    if isinstance(node, cst.NamedExpr):
        return to_term(node.value, scope, env)
    private = _private_default(node, scope, env)
    if private is not None:
        return private
    lit = literal(node, scope)
    if lit is not None and not (isinstance(node, cst.Name) and node.value in env):
        return lit
    name = field_of(node, scope, env)
    if name is not None:
        assigned = env.get(FIELD_KEY + name) if env else None
        if assigned is not None and not isinstance(assigned, Original):
            return _value_term(name, assigned, scope)
        return Term(TermKind.FIELD, name, name, (name,))
    if isinstance(node, cst.Name) and node.value in env:
        return _value_term(node.value, env[node.value], scope)
    enum_value = _enum_term(node, scope, env)
    if enum_value is not None:
        return enum_value
    looked_up = _dict_get(node, scope, env)
    if looked_up is not None:
        return looked_up
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _ARITHMETIC:
        folded = _folded(node, scope, env)  # `20 * 1024`, `MAX_MB * 1024`
        if folded is not None:
            return folded
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)) and scope.enums and node.elements:
        # `(SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)`: a literal once each member is one.
        items = [to_term(e.value, scope, env) if isinstance(e, cst.Element) else None for e in node.elements]
        if all(isinstance(item, Lit) for item in items):
            return Lit(tuple(item.value for item in items))  # type: ignore[union-attr]
    if isinstance(node, cst.Call) and scope.inline is not None:
        inlined = scope.inline(node, env)
        if inlined is not None:
            return to_term(*inlined)
    if isinstance(node, cst.Call) and not node.args:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _STRING_METHODS:
            transformed = _transformed(to_term(node.func.value, scope, env), node.func.attr.value)
            if transformed is not None:
                return transformed
    if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star:
        func = dotted_name(node.func)
        if func in _BUILTIN_TRANSFORMS:
            transformed = _transformed(to_term(node.args[0].value, scope, env), func)
            if transformed is not None:
                return transformed
    return opaque(node, scope, env)


_ARITHMETIC: dict[type, Callable[[float, float], float]] = {
    cst.Add: lambda a, b: a + b,
    cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b,
    cst.Divide: lambda a, b: a / b,
    cst.Modulo: lambda a, b: a % b,
}


def _dict_get(node: cst.BaseExpression, scope: Scope, env: Env) -> Term | Lit | None:
    """`d.get("k", default)` where `d` holds a dict display with literal keys: the entry, or the default."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get"):
        return None
    if not 1 <= len(node.args) <= 2 or any(a.keyword or a.star for a in node.args):
        return None
    key = literal(node.args[0].value, scope)
    target, target_scope, target_env = _resolved(node.func.value, scope, env)
    if key is None or not isinstance(target, cst.Dict):
        return None
    for element in target.elements:
        element_key = literal(element.key, target_scope) if isinstance(element, cst.DictElement) else None
        if element_key is None:
            return None  # `**other` or a computed key: the entry cannot be told
        if element_key == key:
            return to_term(element.value, target_scope, target_env)  # type: ignore[union-attr]
    return to_term(node.args[1].value, scope, env) if len(node.args) == 2 else Lit(None)


def _folded(node: cst.BinaryOperation, scope: Scope, env: Env) -> Lit | None:
    """Arithmetic on two numbers known statically, computed."""
    left, right = to_term(node.left, scope, env), to_term(node.right, scope, env)
    numbers = [side.value for side in (left, right) if isinstance(side, Lit)]
    if len(numbers) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
        return None
    try:
        return Lit(_ARITHMETIC[type(node.operator)](*numbers))
    except ArithmeticError:
        return None


def _private_default(node: cst.BaseExpression, scope: Scope, env: Env) -> Lit | None:
    """`getattr(self, "_resolution_finished", False)` is bookkeeping, unset at launch: its default."""
    if isinstance(node, cst.Call) and dotted_name(node.func) == "getattr" and len(node.args) == 3:
        key = node.args[1].value
        if (
            isinstance(key, cst.SimpleString)
            and str(key.evaluated_value).startswith("_")
            and is_alias(node.args[0].value, scope, env)
        ):
            return literal(node.args[2].value, scope)
    return None


def _enum_term(node: cst.BaseExpression, scope: Scope, env: Env) -> Term | Lit | None:
    """`E.MEMBER` is the member's name (or value, for a `str` Enum); `E.from_string(x)`, `E(x)` and `E[x]` are `x`.

    Enums of algorithm names are parsed from a flag's string and compared by member, so comparing
    the flag with the member name is what the user types (`--speculative-algorithm UNO`); a `str`
    Enum member equals its value (`ConnectorType.INSTANCE == "instance"`).
    """
    if not scope.enums:
        return None
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value in scope.enums:
        if node.value.value not in env:
            member = getattr(scope.enums, "member", None)
            return Lit(member(node.value.value, node.attr.value) if member else node.attr.value)
    if isinstance(node, cst.Call) and len(node.args) == 1 and node.args[0].keyword is None:
        func = dotted_name(node.func) or ""
        owner = func.split(".")[0]
        if owner in scope.enums and (func == owner or func.count(".") == 1 and "from" in func.split(".")[1]):
            return to_term(node.args[0].value, scope, env)
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in scope.enums:
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if isinstance(index, cst.Index):
            return to_term(index.value, scope, env)
    return None


def _transformed(inner: Term | Lit, transform: str) -> Term | None:
    if isinstance(inner, Term) and inner.kind in (TermKind.FIELD, TermKind.ENV):
        text = f"{transform}({inner.text})" if transform in _BUILTIN_TRANSFORMS else f"{inner.text}.{transform}()"
        return Term(inner.kind, inner.name, text, inner.fields, inner.transforms + (transform,))
    return None


def _value_term(name: str, value: Value, scope: Scope) -> Term | Lit:
    if isinstance(value, Original):
        return Term(TermKind.FIELD, value.name, value.name, (value.name,))
    if isinstance(value, Bound):
        return to_term(value.node, value.scope or scope, value.env)
    if isinstance(value, (Unknown, NonEmpty)):
        return classify(value.text, value.fields)
    return Term(TermKind.OPAQUE, name, name, value_fields(value, scope))


# --- formulas ----------------------------------------------------------------------------------

_COMPARE_OPS: dict[type, str] = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.Is: "is",
    cst.IsNot: "is not",
}


def to_formula(node: cst.BaseExpression, scope: Scope, env: Env) -> Formula:
    """The truth of an expression as a formula over atoms."""
    if env and any(type(v) is Choice for v in env.values()):
        choices = choice_names(node, env, scope)
        if choices:
            return _expand_choices(node, scope, env, choices)
    if isinstance(node, cst.BooleanOperation):
        left = to_formula(node.left, scope, env)
        right = to_formula(node.right, scope, env)
        return conj(left, right) if isinstance(node.operator, cst.And) else disj(left, right)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return neg(to_formula(node.expression, scope, env))
    if isinstance(node, cst.Comparison):
        return _comparison(node, scope, env)
    if isinstance(node, cst.IfExp):
        test = to_formula(node.test, scope, env)
        return disj(conj(test, to_formula(node.body, scope, env)), conj(neg(test), to_formula(node.orelse, scope, env)))
    if isinstance(node, cst.NamedExpr):  # `if (x := cfg.a) is not None`: the walker binds x
        return to_formula(node.value, scope, env)
    if isinstance(node, cst.Name) and node.value in env:
        value = env[node.value]
        if isinstance(value, Bound):
            return to_formula(value.node, value.scope or scope, value.env)
        if isinstance(value, NonEmpty):
            return TRUE
    if env and isinstance(node, (cst.Attribute, cst.Call)):
        assigned = _assigned_field(node, scope, env)
        if isinstance(assigned, Bound):  # `self.enable_x = cfg.a > 1` ... `if self.enable_x:`
            return to_formula(assigned.node, assigned.scope or scope, assigned.env)
    if isinstance(node, cst.Call) and scope.inline is not None:
        inlined = scope.inline(node, env)
        if inlined is not None:
            return to_formula(*inlined)
    if isinstance(node, (cst.Dict, cst.List, cst.Tuple, cst.Set)):
        return Const(bool(node.elements))  # a display is truthy exactly when it has elements
    term = to_term(node, scope, env)
    if isinstance(term, Lit):
        return Const(bool(term.value))
    return Atom(term)


def _assigned_field(node: cst.BaseExpression, scope: Scope, env: Env) -> Value | None:
    """What the function assigned to the field this expression reads, if it reads one it assigned."""
    name = field_of(node, scope, env)
    return env.get(FIELD_KEY + name) if name is not None else None


def _resolved(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[cst.BaseExpression, Scope, Env]:
    """An expression with the locals and assigned fields it consists of replaced by what they hold."""
    while True:
        if isinstance(node, cst.Name) and isinstance(env.get(node.value), Bound):
            value = env[node.value]
        elif isinstance(node, (cst.Attribute, cst.Call)) and env and isinstance(_assigned_field(node, scope, env), Bound):
            value = _assigned_field(node, scope, env)
        elif isinstance(node, cst.NamedExpr):
            node = node.value
            continue
        else:
            return node, scope, env
        node, scope, env = value.node, value.scope or scope, value.env  # type: ignore[union-attr]


def _truth_test(node: cst.Comparison, scope: Scope, env: Env) -> Formula | None:
    """`flag == False` / `flag is True` where the flag holds a comparison: the comparison's truth itself."""
    if len(node.comparisons) != 1:
        return None
    target = node.comparisons[0]
    op = _COMPARE_OPS[type(target.operator)]
    if op not in ("==", "!=", "is", "is not"):
        return None
    for this, other in ((node.left, target.comparator), (target.comparator, node.left)):
        if isinstance(other, cst.Name) and other.value in ("True", "False") and other.value not in env:
            inner, inner_scope, inner_env = _resolved(this, scope, env)
            if inner is this or not _bool_valued(inner, inner_scope, inner_env):
                return None
            truth = to_formula(inner, inner_scope, inner_env)
            wanted = (other.value == "True") == (op in ("==", "is"))
            return truth if wanted else neg(truth)
    return None


def _bool_valued(node: cst.BaseExpression, scope: Scope, env: Env) -> bool:
    """Does the expression evaluate to True or False? Comparisons and `not` do; `a and b` does when both
    parts do; a field compared with True/False is taken for a boolean flag (store_true)."""
    node, scope, env = _resolved(node, scope, env)
    if isinstance(node, cst.Comparison) or (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)):
        return True
    if isinstance(node, cst.BooleanOperation):
        return _bool_valued(node.left, scope, env) and _bool_valued(node.right, scope, env)
    if isinstance(node, cst.Name) and node.value in ("True", "False") and node.value not in env:
        return True
    return field_of(node, scope, env) is not None


def _comparison(node: cst.Comparison, scope: Scope, env: Env) -> Formula:
    truth = _truth_test(node, scope, env)
    if truth is not None:
        return truth
    pairs = _elementwise(node)
    if pairs is not None:
        # `(prefill, decode) != ("dsv4", "dsv4")`: equal exactly when every item is.
        equal = conj(*(
            _comparison(cst.Comparison(left, [cst.ComparisonTarget(cst.Equal(), right)]), scope, env)
            for left, right in pairs
        ))
        return equal if isinstance(node.comparisons[0].operator, cst.Equal) else neg(equal)
    parts: list[Formula] = []
    left_node = node.left
    for target in node.comparisons:
        op = _COMPARE_OPS[type(target.operator)]
        left_cases = _operand_cases(left_node, scope, env, False)
        right_cases = _operand_cases(target.comparator, scope, env, op in ("in", "not in"))
        parts.append(disj(*(
            conj(when_left, when_right, _compare(left, op, right, node, scope, env))
            for when_left, left in left_cases
            for when_right, right in right_cases
        )))
        left_node = target.comparator
    return conj(*parts)


def _elementwise(node: cst.Comparison) -> list[tuple[cst.BaseExpression, cst.BaseExpression]] | None:
    """The item pairs of `(a, b) == (x, y)` / `!=` between two tuple displays of one length, else None."""
    if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        return None
    left, right = node.left, node.comparisons[0].comparator
    if not (isinstance(left, cst.Tuple) and isinstance(right, cst.Tuple)) or len(left.elements) != len(right.elements):
        return None
    if not all(isinstance(e, cst.Element) for e in (*left.elements, *right.elements)):
        return None  # a starred item
    return [(a.value, b.value) for a, b in zip(left.elements, right.elements)]


_MAX_OPERAND_CASES = 8


def _operand_cases(
    node: cst.BaseExpression, scope: Scope, env: Env, container_ok: bool
) -> list[tuple[Formula, Term | Lit]]:
    """The values a compared operand takes, each with when it takes it.

    `backend = cfg.a or cfg.b; if backend == "x"` compares `a` when `a` is truthy and `b` otherwise;
    split so, the comparison stays over fields instead of one opaque `(a or b) == "x"`.

    A literal list, tuple or set is a `Lit` (which keeps no container type) only where the type
    cannot matter: the right side of `in` / `not in`, holding no nested containers. Elsewhere it
    stays source text, so `(tp, pp) != (1, 1)` and `set(x) <= {"a"}` do not print as lists.
    """
    start = node
    node, scope, env = _resolved(node, scope, env)
    cases: list[tuple[Formula, Term | Lit]]
    transform, inner = _transform_of(node)
    if inner is not None and _resolved(inner, scope, env)[0] is not inner:
        # `mode.upper()` where the function assigned `mode = a if t else "x"`: the transform of each value.
        inner_cases = _operand_cases(inner, scope, env, container_ok)
        transformed = [(w, _transformed_value(v, transform)) for w, v in inner_cases]  # type: ignore[arg-type]
        if all(v is not None for _, v in transformed):
            return transformed  # type: ignore[return-value]
    if isinstance(node, cst.IfExp):
        test = to_formula(node.test, scope, env)
        cases = [(conj(test, w), v) for w, v in _operand_cases(node.body, scope, env, container_ok)]
        cases += [(conj(neg(test), w), v) for w, v in _operand_cases(node.orelse, scope, env, container_ok)]
    elif isinstance(node, cst.BooleanOperation):
        # `a or b` is a when a is truthy, else b; `a and b` is a when a is falsy, else b.
        first = to_formula(node.left, scope, env)
        keep_first = isinstance(node.operator, cst.Or)
        cases = [
            (conj(w, _truth(v) if keep_first else neg(_truth(v))), v)
            for w, v in _operand_cases(node.left, scope, env, container_ok)
        ]
        cases += [
            (conj(neg(first) if keep_first else first, w), v)
            for w, v in _operand_cases(node.right, scope, env, container_ok)
        ]
    else:
        term = to_term(node, scope, env)
        if isinstance(term, Lit) and isinstance(term.value, tuple):
            if not container_ok or any(isinstance(v, tuple) for v in term.value):
                term = opaque(node, scope, env)
        return [(TRUE, term)]
    cases = [(w, v) for w, v in cases if w != FALSE]
    if len(cases) > _MAX_OPERAND_CASES:
        return [(TRUE, to_term(start, scope, env) if start is node else opaque(node, scope, env))]
    return cases


def _transform_of(node: cst.BaseExpression) -> tuple[str | None, cst.BaseExpression | None]:
    """`x.upper()` -> ("upper", x), `int(x)` -> ("int", x); else (None, None)."""
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in _STRING_METHODS:
            return node.func.attr.value, node.func.value
    if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star:
        func = dotted_name(node.func)
        if func in _BUILTIN_TRANSFORMS:
            return func, node.args[0].value
    return None, None


def _transformed_value(value: Term | Lit, transform: str) -> Term | Lit | None:
    if isinstance(value, Lit):
        from ..core.formula import apply_transforms

        try:
            return Lit(apply_transforms(value.value, (transform,)))
        except (TypeError, ValueError, AttributeError):
            return None
    return _transformed(value, transform)


def _truth(value: Term | Lit) -> Formula:
    return Const(bool(value.value)) if isinstance(value, Lit) else Atom(value)


def _compare(left: Term | Lit, op: str, right: Term | Lit, node: cst.Comparison, scope: Scope, env: Env) -> Formula:
    if isinstance(left, Lit) and isinstance(right, Lit):
        from ..core.formula import compare

        try:
            return Const(compare(left.value, op, right.value))
        except (TypeError, ValueError):
            return Atom(opaque(node, scope, env))
    if isinstance(left, Lit):
        if op in ("in", "not in") and isinstance(left.value, str) and isinstance(right, Term) and right.text == "os.environ":
            # `"X" in os.environ`: whether the variable is set.
            variable = Term(TermKind.ENV, left.value, f"os.environ.get({literal_source(left.value)})")
            return Atom(variable, "is not" if op == "in" else "is", Lit(None))
        return Atom(right, SWAPPED_OP[op], left)  # type: ignore[arg-type]
    return Atom(left, op, right)


def _top_names(node: cst.BaseExpression) -> list[str]:
    """Variable names used in an expression (not attribute names, keywords or lambda bodies)."""
    names: list[str] = []
    for n in iter_expression(node):
        if isinstance(n, cst.Name) and n.value not in names:
            names.append(n.value)
    return names


# libcst's visitor machinery costs more than the parse on big files; this walk reads the dataclass
# fields directly and skips whitespace and punctuation.
_SKIPPED_FIELDS = frozenset({"lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators",
                             "header", "footer", "equal", "colon", "star_tok", "operator", "dot"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(kind)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[kind] = names
    return names


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
        for name in _child_fields(kind):
            value = getattr(n, name)
            if value is None or type(value) is str:
                continue
            if type(value) is list or type(value) is tuple:
                stack.extend(v for v in reversed(value) if isinstance(v, cst.CSTNode))
            elif isinstance(value, cst.CSTNode):
                stack.append(value)


def _expand_choices(node: cst.BaseExpression, scope: Scope, env: Env, names: list[str]) -> Formula:
    option_lists = [env[n].options for n in names]  # type: ignore[union-attr]
    total = 1
    for options in option_lists:
        total *= len(options)
    if total > _MAX_CHOICES:
        return Atom(opaque(node, scope, env))
    branches: list[Formula] = []
    for combo in itertools.product(*option_lists):
        local = dict(env)
        guards = []
        for name, (cond, value) in zip(names, combo):
            local[name] = value
            guards.append(cond)
        branches.append(conj(*guards, to_formula(node, scope, local)))
    result = disj(*branches) if branches else FALSE
    if formula_size(result) > _MAX_EXPANDED_ATOMS:
        return Atom(opaque(node, scope, env))
    return result


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
        if len(options) >= _MAX_CHOICES:
            return Unknown(code(node), ())
        local = dict(env)
        guards = []
        for name, (cond, value) in zip(names, combo):
            local[name] = value
            guards.append(cond)
        options.append((conj(*guards), Bound(node, local, scope)))
    return Choice(tuple(options))


def value_fields(value: Value, scope: Scope) -> tuple[str, ...]:
    if isinstance(value, Bound):
        return normalize(value.node, value.scope or scope, value.env)[1]
    if isinstance(value, Choice):
        return tuple(sorted({f for _, v in value.options for f in value_fields(v, scope)}))
    return value.fields
