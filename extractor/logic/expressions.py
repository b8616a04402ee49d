"""A safe evaluator of condition source text over field values: no code of the source ever runs."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Mapping
from functools import lru_cache

from ..core.model import Term

class _Undecided:
    """The value of what the command line does not decide: one object, the same one after pickling
    (a rule set's catalog holds it, and its index is pickled)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self) -> str:
        return "UNKNOWN"  # by name: unpickled as this module's UNKNOWN, so `is UNKNOWN` still holds


UNKNOWN = _Undecided()


class Unknown(Exception):
    """A value the command line does not decide."""


_SAFE_CALLS: dict[str, Callable] = {
    "int": int, "float": float, "str": str, "len": len, "bool": bool, "abs": abs, "max": max, "min": min,
    "tuple": tuple, "list": list, "set": set, "sorted": sorted, "any": any, "all": all, "round": round,
}
_SAFE_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "dict": dict, "tuple": tuple, "set": set}
_SAFE_METHODS = frozenset({
    "lower", "upper", "strip", "lstrip", "rstrip", "casefold", "startswith", "endswith", "split", "replace",
    "get", "keys", "values", "items", "count", "index", "isdigit", "partition", "rpartition",
})
BINARY_OPERATORS: dict[type, Callable] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
    ast.Pow: lambda a, b: a ** b if abs(b) <= 64 else _too_big(), ast.LShift: lambda a, b: a << b if b <= 64 else _too_big(),
    ast.RShift: lambda a, b: a >> b,
}
_CMPOPS: dict[type, Callable] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b, ast.Is: lambda a, b: a is b or a == b is None,
    ast.IsNot: lambda a, b: not (a is b or a == b is None),
}


def _too_big():
    raise Unknown("too large")


def safe_eval(text: str, values: Mapping[str, object], env: Callable[[str, str], object] | None = None) -> object:
    """Evaluate condition source over field values without running any code of the source.

    Only literals, arithmetic, comparisons, boolean operators, conditional expressions, a few
    builtins and string/dict methods are interpreted; env reads go through `env(name, how)`.
    Anything else (calls into SGLang, attributes of objects, unknown names) raises Unknown.
    """
    tree = parsed_expression(text)
    if tree is None:
        raise Unknown(text)
    return _eval(tree.body, values, env)


@lru_cache(maxsize=8192)
def parsed_expression(text: str) -> ast.Expression | None:
    """The parsed expression (never changed by `_eval` or the facts' reader), once per text: witnesses
    evaluate the same terms tens of thousands of times, and a term `safe_eval` leaves to the facts
    (`logic.facts`) is read there from the same tree."""
    try:
        return ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@lru_cache(maxsize=8192)
def computable(term: Term) -> bool:
    """Whether `safe_eval` can compute an opaque term from field values alone (no env, no calls out)."""
    if not term.fields:
        return False
    tree = parsed_expression(term.text)
    if tree is None:
        return False
    fields = set(term.fields)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in fields and node.id not in _SAFE_CALLS \
                and node.id not in _SAFE_TYPES and node.id != "isinstance":
            return False
        if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) or isinstance(node.func, ast.Attribute) and node.func.attr in _SAFE_METHODS):
            return False
        if isinstance(node, ast.Attribute) and node.attr not in _SAFE_METHODS:
            return False
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.comprehension, ast.Starred, ast.JoinedStr)):
            return False
    return True


def _eval(node: ast.AST, values: Mapping[str, object], env) -> object:
    ev = lambda n: _eval(n, values, env)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        value = values.get(node.id, UNKNOWN)
        if value is UNKNOWN:
            raise Unknown(node.id)
        return value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [ev(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else list(items) if isinstance(node, ast.List) else set(items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise Unknown("dict unpacking")
        return {ev(k): ev(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.BoolOp):
        return boolean_operation(node, ev)
    if isinstance(node, ast.UnaryOp):
        operand = ev(node.operand)
        return {ast.Not: lambda v: not v, ast.USub: lambda v: -v, ast.UAdd: lambda v: +v,
                ast.Invert: lambda v: ~v}[type(node.op)](operand)
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPERATORS:
        left, right = ev(node.left), ev(node.right)
        if isinstance(node.op, ast.Mult) and isinstance(left, (str, list, tuple)) | isinstance(right, (str, list, tuple)):
            sequence, times = (left, right) if isinstance(left, (str, list, tuple)) else (right, left)
            if not isinstance(times, int) or len(sequence) * times > 10_000:
                _too_big()
        return BINARY_OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        return comparison_chain(node, ev, lambda left, op, right: _CMPOPS[type(op)](left, right))
    if isinstance(node, ast.IfExp):
        return ev(node.body) if ev(node.test) else ev(node.orelse)
    if isinstance(node, ast.Subscript):
        container = ev(node.value)
        if isinstance(node.slice, ast.Slice):
            parts = [None if p is None else ev(p) for p in (node.slice.lower, node.slice.upper, node.slice.step)]
            return container[slice(*parts)]
        return container[ev(node.slice)]
    if isinstance(node, ast.Call) and not node.keywords:
        return _call(node, ev, env)
    if isinstance(node, (ast.GeneratorExp, ast.ListComp)) and len(node.generators) == 1:
        return _comprehension(node, values, env)
    raise Unknown(type(node).__name__)  # not interpreted here


_ITEMS_MAX = 10_000


def _comprehension(node: ast.GeneratorExp | ast.ListComp, values: Mapping[str, object], env) -> list:
    """`any(m not in [...] for m in limit_mm_data_per_request.keys())`: a loop's test of each item of a
    value the launch gives (the walk's form of a guard in a loop over it), item by item, in order."""
    generator = node.generators[0]
    items = _eval(generator.iter, values, env)
    if not isinstance(items, (str, Collection)) or isinstance(items, Mapping) and not isinstance(items, dict) \
            or len(items) > _ITEMS_MAX:
        raise Unknown("iteration")
    found = []
    for item in items:
        bound = _ItemValues(_bindings(generator.target, item), values)
        if all(_eval(test, bound, env) for test in generator.ifs):
            found.append(_eval(node.elt, bound, env))
    return found


def _bindings(target: ast.AST, item: object) -> dict[str, object]:
    if isinstance(target, ast.Name):
        return {target.id: item}
    if isinstance(target, ast.Tuple) and isinstance(item, (tuple, list)) and len(item) == len(target.elts):
        return {name: value for element, part in zip(target.elts, item) for name, value in _bindings(element, part).items()}
    raise Unknown("unpacking")


class _ItemValues:
    """The field values with a comprehension's target bound to one item."""

    __slots__ = ("item", "values")

    def __init__(self, item: dict[str, object], values: Mapping[str, object]) -> None:
        self.item, self.values = item, values

    def get(self, name: str, default: object = None) -> object:
        return self.item[name] if name in self.item else self.values.get(name, default)


def _call(node: ast.Call, ev, env) -> object:
    func = node.func
    if isinstance(func, ast.Name) and func.id == "isinstance" and len(node.args) == 2:
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        if all(isinstance(k, ast.Name) and k.id in _SAFE_TYPES for k in kinds):
            return isinstance(ev(node.args[0]), tuple(_SAFE_TYPES[k.id] for k in kinds))  # type: ignore[union-attr]
        raise Unknown("isinstance")
    if isinstance(func, ast.Name) and func.id in _SAFE_CALLS:
        return _SAFE_CALLS[func.id](*[ev(a) for a in node.args])
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "re" \
            and func.attr in _REGEX_CALLS and len(node.args) == 2 and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        # `re.match(r"(.+)://(.*)", model_path)`: the pattern is the source's literal; only the subject is a value.
        subject = ev(node.args[1])
        if not isinstance(subject, str):
            raise Unknown("regex subject")
        found = _REGEX_CALLS[func.attr](node.args[0].value, subject)
        return _Match(found.group(0), found.groups()) if found is not None else None
    if isinstance(func, ast.Attribute) and func.attr == "group":
        receiver = ev(func.value)
        if isinstance(receiver, _Match):
            return receiver.group(*[ev(a) for a in node.args])
    if isinstance(func, ast.Attribute):
        env_read = _env_read(node)
        if env_read is not None:
            if env is None:
                raise Unknown("environment")
            name, how, default = env_read
            value = env(name, how)
            return default if how == "environ" and value is None else value
        if func.attr in _SAFE_METHODS:
            receiver = ev(func.value)
            if isinstance(receiver, (str, dict, list, tuple)):
                return getattr(receiver, func.attr)(*[ev(a) for a in node.args])
    raise Unknown("call")


_REGEX_CALLS: dict[str, Callable] = {"match": re.match, "fullmatch": re.fullmatch, "search": re.search}


class _Match:
    """What `re.match` found: its groups, read with `.group(n)`."""

    __slots__ = ("whole", "groups")

    def __init__(self, whole: str, groups: tuple) -> None:
        self.whole, self.groups = whole, groups

    def group(self, index: int = 0) -> object:
        if not isinstance(index, int) or not 0 <= index <= len(self.groups):
            raise Unknown("group")
        return self.whole if index == 0 else self.groups[index - 1]


def _env_read(node: ast.Call) -> tuple[str, str, object] | None:
    """`envs.NAME.get()`, `envs.NAME.is_set()`, `os.environ.get("NAME"[, d])`, `os.getenv("NAME"[, d])`."""
    func = node.func
    assert isinstance(func, ast.Attribute)
    inner = func.value
    if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id == "envs" and not node.args:
        if func.attr in ("get", "is_set"):
            return inner.attr, func.attr, None
    if dotted_name(func) in ("os.environ.get", "os.getenv") and node.args \
            and isinstance(node.args[0], ast.Constant):
        default = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else None
        return str(node.args[0].value), "environ", default
    return None


def dotted_name(node: ast.expr) -> str | None:
    """`os.path.isfile` for a chain of names and attributes, else None (cheaper than `ast.unparse`:
    every call of every term is asked)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def boolean_operation(node: ast.BoolOp, ev: Callable[[ast.AST], object]) -> object:
    """`a and b` / `a or b` as Python evaluates it: the operand that decides, evaluated left to right."""
    result: object = None
    for operand in node.values:
        result = ev(operand)
        if isinstance(node.op, ast.And) and not result or isinstance(node.op, ast.Or) and result:
            return result
    return result


def comparison_chain(node: ast.Compare, ev: Callable[[ast.AST], object],
                     compare: Callable[[object, ast.cmpop, object], bool]) -> bool:
    """`a < b <= c` as Python evaluates it: pairwise, left to right, stopping at the first false."""
    left = ev(node.left)
    for op, comparator in zip(node.ops, node.comparators):
        right = ev(comparator)
        if not compare(left, op, right):
            return False
        left = right
    return True
