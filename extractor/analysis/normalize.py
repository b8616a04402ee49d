"""Normalized source of expressions: receivers as bare field names, locals replaced by what they hold.

The fields read are collected on the way; opaque terms are classified as env, platform, model or other.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

import libcst as cst

from ..core.formula import literal_source
from ..core.model import Term, TermKind
from .scope import (FIELD_KEY, Bound, Choice, Env, Rewritten, Scope, Value, code, constant_of, field_of, is_alias,
                    local_text)

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


# --- normalized source -------------------------------------------------------------------------


def _method_of_arguments(node: cst.Call, scope: Scope, env: Env) -> bool:
    """`self.method()`, `server_args.method()`: a call of a method of the server arguments."""
    return type(node.func) is cst.Attribute and is_alias(node.func.value, scope, env)


# Expressions that need no parentheses where a local bound to them is substituted.
_ATOMIC = frozenset({cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.Integer, cst.Float})
# A name or a dotted name: its text needs no parentheses anywhere, and reading it twice reads one value.
_DOTTED = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*\Z")


def _folded(operator: type, left: str, right: str) -> str | None:
    """`left or right` (`left and right`) as the one operand that decides it whatever the values, when
    there is one: `None or x` and `x or x` are `x`. A call site passes its default (`model_path=None`)
    or the very field (`model_path or cfg.model_path`): without this a term read through such a
    parameter takes two spellings more, and every test of it is written three times over."""
    if left == right and _DOTTED.match(left):
        return left
    if left in (("None", "False") if operator is cst.Or else ("True",)):
        return right
    return None


class _Normalizer(cst.CSTTransformer):
    """Rewrites receivers to bare field names and locals to their expressions, collecting fields."""

    def __init__(self, scope: Scope, env: Env) -> None:
        super().__init__()
        self.scope = scope
        self.env = env
        self.fields: set[str] = set()
        self.methods: set[int] = set()
        self.quotes: list[str] = []  # the quotes of the f-strings we are inside, innermost last

    def visit_FormattedString(self, node: cst.FormattedString) -> bool:
        self.quotes.append(node.quote)
        return True

    def leave_FormattedString(self, original_node: cst.FormattedString, updated_node: cst.FormattedString) -> cst.BaseExpression:
        self.quotes.pop()
        return updated_node

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False  # the attribute name is not a variable; the value is rewritten in leave_Attribute

    def visit_Call(self, node: cst.Call) -> bool:
        if type(node.func) is cst.Attribute:
            self.methods.add(id(node.func))  # `self.get_x()` calls a method; it reads no field named get_x
        return True

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        name = None if id(original_node) in self.methods else field_of(original_node, self.scope, self.env)
        if name is not None:
            self.fields.add(name)
            return cst.Name(name)
        constant = None if self.quotes else _constant_text(original_node, self.scope, self.env)
        if constant is not None:
            return _parenthesize(cst.parse_expression(constant))
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

    def leave_BooleanOperation(self, original_node: cst.BooleanOperation,
                               updated_node: cst.BooleanOperation) -> cst.BaseExpression:
        if self.quotes:
            return updated_node  # a message keeps its source text
        left, right = code(updated_node.left), code(updated_node.right)
        folded = _folded(type(updated_node.operator), left, right)
        if folded is None:
            return updated_node
        kept = updated_node.left if folded is left else updated_node.right
        return kept if type(kept) in _ATOMIC else _parenthesize(kept)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        value = self.env.get(original_node.value)
        if value is None:
            # A constant's value, so that the evaluator can compute the test (not inside an f-string:
            # messages keep their source text).
            constant = None if self.quotes else _constant_text(original_node, self.scope, self.env)
            return updated_node if constant is None else _parenthesize(cst.parse_expression(constant))
        if isinstance(value, Bound):
            inner = _Normalizer(value.scope or self.scope, value.env)
            rewritten = value.node.visit(inner)
            if self.quotes and any(q[0] in code(rewritten) for q in self.quotes):
                return updated_node  # inside an f-string its quotes would end it (before Python 3.12)
            self.fields |= inner.fields
            return _parenthesize(rewritten)
        self.fields.update(value_fields(value, self.scope))
        renamed = local_text(original_node.value, self.scope)
        return updated_node if renamed == original_node.value else updated_node.with_changes(value=renamed)


def _parenthesize(node: cst.BaseExpression) -> cst.BaseExpression:
    if type(node) in _ATOMIC:
        return node
    if node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def normalize(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[str, tuple[str, ...]]:
    """Normalized source of an expression and the fields it reads; once per walk for one node,
    scope and env (a walk tests its conditions again on other paths with the env they share), kept
    as `_Renderer._bound` keeps a local's text."""
    memo = scope.renders() if scope.renders is not None else None
    key = ("normalize", id(node), id(scope), id(env))
    if memo is not None:
        found = memo.get(key)
        if found is not None and found[0] is node and found[1] is scope and found[2] is env:  # kept alive: ids not reused
            return found[3]
    renderer = _Renderer(scope, env)
    text = renderer.expression(node, outer=True)
    if "  " in text or "\n" in text or "\t" in text:
        text = " ".join(text.split())
    result = text, tuple(sorted(renderer.fields))
    if memo is not None:
        memo[key] = (node, scope, env, result)
    return result


_OPERATORS: dict[type, str] = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.Power: "**", cst.MatrixMultiply: "@", cst.LeftShift: "<<", cst.RightShift: ">>",
    cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^", cst.And: "and", cst.Or: "or",
    cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=", cst.In: "in", cst.NotIn: "not in", cst.Is: "is", cst.IsNot: "is not",
}
_UNARY = {cst.Not: "not ", cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~"}


MAX_CONSTANT_TEXT = 2000  # a longer constant keeps its name in a term's text


def _constant_text(node: cst.BaseExpression, scope: Scope, env: Env) -> str | None:
    """The source of a constant's value, written in place of its name in a term."""
    constant = constant_of(node, scope, env)
    if constant is None:
        return None
    text = literal_source(constant.value)
    return text if len(text) <= MAX_CONSTANT_TEXT else None


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
        if node.lpar and not outer and not (kind is cst.BooleanOperation and _DOTTED.match(text)):
            text = "(" * len(node.lpar) + text + ")" * len(node.rpar)
        elif outer and kind is cst.Tuple and not node.elements:  # type: ignore[attr-defined]
            return "()"
        return text

    def _name(self, node: cst.Name, outer: bool) -> str:
        value = self.env.get(node.value)
        if isinstance(value, Bound):
            text, fields = self._bound(value, outer)
            self.fields |= fields
            if outer or type(value.node) in _ATOMIC or value.node.lpar or _DOTTED.match(text):  # type: ignore[attr-defined]
                return text
            return f"({text})"
        if value is not None:
            self.fields.update(value_fields(value, self.scope))
            renamed = local_text(node.value, self.scope)
            if renamed != node.value:
                return renamed
        else:
            constant = _constant_text(node, self.scope, self.env)
            if constant is not None:
                return constant
        text = node.value
        return "(" * len(node.lpar) + text + ")" * len(node.rpar) if node.lpar and not outer else text

    def _bound(self, value: Bound, outer: bool) -> tuple[str, set[str] | frozenset[str]]:
        """The text of a local's expression and the fields it reads: rendered once per walk (the
        conditions of a function read the same locals again and again)."""
        scope = value.scope or self.scope
        memo = self.scope.renders() if self.scope.renders is not None else None
        key = (id(value), id(scope), outer)
        if memo is not None:
            found = memo.get(key)
            if found is not None and found[0] is value and found[1] is scope:  # kept alive: ids not reused
                return found[2], found[3]
        inner = _Renderer(scope, value.env)
        text = inner.expression(value.node, outer=outer)
        if memo is not None:
            memo[key] = (value, scope, text, frozenset(inner.fields))
        return text, inner.fields

    def _field(self, name: str) -> str:
        """A field read: the value the function assigned it on every path (`self.device = get_device()`,
        then `self.device.split(":")`), as a local's; else its name (the run reads it as resolved)."""
        assigned = self.env.get(FIELD_KEY + name)
        if isinstance(assigned, Bound):
            text, fields = self._bound(assigned, False)
            self.fields |= fields
            return text if type(assigned.node) in _ATOMIC or assigned.node.lpar or _DOTTED.match(text) else f"({text})"  # type: ignore[attr-defined]
        self.fields.add(name)
        return name

    def _fallback(self, node: cst.BaseExpression, outer: bool) -> str:
        normalizer = _Normalizer(self.scope, self.env)
        rewritten = node.visit(normalizer)
        self.fields |= normalizer.fields
        if outer and getattr(rewritten, "lpar", None) and not (type(rewritten) is cst.Tuple and not rewritten.elements):
            rewritten = rewritten.with_changes(lpar=[], rpar=[])
        text = code(rewritten)
        return _without_comments(text) if "#" in text else text

    def attribute(self, node: cst.Attribute) -> str:
        name = field_of(node, self.scope, self.env)
        if name is not None:
            return self._field(name)
        constant = _constant_text(node, self.scope, self.env)
        if constant is not None:
            return constant
        return f"{self.expression(node.value)}.{node.attr.value}"

    def call(self, node: cst.Call) -> str:
        name = field_of(node, self.scope, self.env)
        if name is not None:
            return self._field(name)
        inlined = self._inlined(node)
        if inlined is not None:
            return inlined
        func = node.func
        # `self.get_x()` calls a method: it reads no field named get_x.
        head = f"{self.expression(func.value)}.{func.attr.value}" if type(func) is cst.Attribute else self.expression(func)
        return f"{head}({', '.join(self.argument(a) for a in node.args)})"

    def _inlined(self, node: cst.Call) -> str | None:
        """A call to a one-`return` helper that reads server arguments (`attention_backends_of(cfg)`),
        written as the expression it returns, so that the fields it reads are seen (and the run can
        read them as resolved). Calls whose result reads no field keep their name: they stand for a
        platform or model fact (`model_config_of(server_args)`, `is_host_cpu_arm64()`). A method of the
        server arguments takes them as its receiver (0.5.18's `self._resolved_attention_backends()`)."""
        if self.scope.inline is None or not (node.args or _method_of_arguments(node, self.scope, self.env)):
            return None
        found = self.scope.inline(node, self.env)
        if found is None:
            return None
        returned, scope, env = found
        inner = _Renderer(scope, env)
        text = inner.expression(returned, outer=True)
        if not inner.fields:
            return None
        self.fields |= inner.fields
        return f"({text})"

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
        left, right = self.expression(node.left), self.expression(node.right)
        if type(node) is cst.BooleanOperation:
            folded = _folded(type(node.operator), left, right)
            if folded is not None:
                return folded
        return f"{left} {_OPERATORS[type(node.operator)]} {right}"

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
_LOOSE = frozenset({cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Comparison, cst.Tuple, cst.Yield})


def term_source(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[str, tuple[str, ...]]:
    """Like `normalize`, but parenthesized where needed so the text can stand as an operand."""
    text, fields = normalize(node, scope, env)
    while type(node) is cst.Name and isinstance(env.get(node.value), Bound):
        value = env[node.value]
        node, env = value.node, value.env  # type: ignore[union-attr]
    loose = type(node) in _LOOSE or (type(node) is cst.UnaryOperation and type(node.operator) is cst.Not)
    if loose and not (type(node) is cst.Tuple and not node.elements):  # `()` keeps its own
        text = f"({text})"
    return text, fields


def opaque(node: cst.BaseExpression, scope: Scope, env: Env) -> Term:
    """An expression kept as (parenthesized, normalized) source text, classified by what it reads.

    Read after a call that may rewrite a field it reads (`run_post_process_pass(sa, fn)` then
    `cfg.backend.startswith("lora")` in the same function), it reads the fields as the store holds
    them after the latest such call (`Term.after`), as a plain field read does."""
    term = classify(*term_source(node, scope, env))
    after = max((value.call for name in term.fields if isinstance(value := env.get(FIELD_KEY + name), Rewritten)),
                default=0)
    return replace(term, after=after) if after else term


# --- terms -------------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def classify(text: str, fields: tuple[str, ...]) -> Term:
    """An opaque piece of source, told apart as env, platform or model when it looks like one."""
    if "env" in text:  # every pattern of _ENV_PATTERNS spells it
        for pattern in _ENV_PATTERNS:
            match = pattern.search(text)
            if match:
                return Term(TermKind.ENV, match.group(1), text, fields)
    if _PLATFORM.search(text):
        return Term(TermKind.PLATFORM, text, text, fields)
    if _MODEL.search(text):
        return Term(TermKind.MODEL, text, text, fields)
    return Term(TermKind.OPAQUE, text, text, fields)


def value_fields(value: Value, scope: Scope) -> tuple[str, ...]:
    if isinstance(value, Bound):
        return normalize(value.node, value.scope or scope, value.env)[1]
    if isinstance(value, Choice):
        return tuple(sorted({f for _, v in value.options for f in value_fields(v, scope)}))
    return value.fields
