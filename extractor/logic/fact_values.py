"""What the facts reader evaluates to besides plain Python values (a path, a method of a value, a helper
with arguments bound, a cache decorator), how those compare, and which values a message may show."""

from __future__ import annotations

import ast

from .expressions import Unknown
from .helpers import NOT_READ, BoundMethod, Definition, Instance, Outside, PackageClass
from .model_config import Config, ModelConfig
from .platforms import PlatformView


def plain_value(value: object) -> bool:
    """A value a message may show as Python formats it, the same in every process: no fact object
    inside, no set (its order follows string hashing, which differs between processes)."""
    if isinstance(value, (set, frozenset)):
        return False
    if isinstance(value, (list, tuple)):
        return all(plain_value(v) for v in value)
    if isinstance(value, dict):
        return all(plain_value(k) and plain_value(v) for k, v in value.items())
    return value is None or isinstance(value, (str, int, float, bool))


class Partial:
    """`functools.partial(helper, *args, **keywords)`: called, the helper with those arguments first."""

    __slots__ = ("definition", "args", "keywords")

    def __init__(self, definition: Definition, args: tuple[object, ...], keywords: dict[str, object]) -> None:
        self.definition = definition
        self.args = args
        self.keywords = keywords


class CacheDecorator:
    """What `functools.lru_cache(maxsize=...)` returns: applied to a function, the function (`cached`)."""

    __slots__ = ()


CACHE_DECORATOR = CacheDecorator()
CACHE_DECORATORS = frozenset({"functools.lru_cache", "functools.cache"})


def cached(args: list[object], keywords: dict[str, object]) -> object:
    """`functools.lru_cache(maxsize=1)`, `functools.cache(f)` over what the reader evaluated: a cache
    does not change what a call answers, so the function itself (or, given no function yet, a
    decorator that returns it)."""
    if len(args) == 1 and not keywords and isinstance(args[0], (Definition, Partial)):
        return args[0]
    return CACHE_DECORATOR


def partial(args: list[object], keywords: dict[str, object]) -> Partial:
    """`functools.partial(helper, ...)`: the helper with those arguments bound first."""
    if not args:
        raise Unknown("functools.partial")
    function, *bound = args
    if isinstance(function, Partial):
        return Partial(function.definition, (*function.args, *bound), {**function.keywords, **keywords})
    if not isinstance(function, Definition) or not function.is_function:
        raise Unknown("functools.partial")
    return Partial(function, tuple(bound), keywords)


class PathValue:
    """A `pathlib.Path` a helper made: what `.is_file()`, `.exists()`, `.is_dir()` ask of it is a path test."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path


class Method:
    __slots__ = ("owner", "name")

    def __init__(self, owner: object, name: str) -> None:
        self.owner = owner
        self.name = name

    def __call__(self, *args: object) -> object:
        try:
            return getattr(self.owner, self.name)(*args)
        except (TypeError, ValueError, AttributeError, IndexError):  # IndexError: a match's group it has not
            raise Unknown(self.name) from None


OPAQUE_VALUES = (Config, ModelConfig, PlatformView, Outside, Definition, PackageClass, Instance, BoundMethod, PathValue,
                  Partial, CacheDecorator, type(NOT_READ))


def compare(left: object, op: ast.cmpop, right: object) -> bool:
    if isinstance(left, OPAQUE_VALUES) or isinstance(right, OPAQUE_VALUES):
        if isinstance(op, (ast.Is, ast.IsNot)) and (left is None or right is None) \
                and not isinstance(left, Outside) and not isinstance(right, Outside):
            return isinstance(op, ast.IsNot)  # a config object or a function is never None
        raise Unknown("comparison of a config object")
    try:
        if isinstance(op, ast.Eq):
            return left == right
        if isinstance(op, ast.NotEq):
            return left != right
        if isinstance(op, ast.Lt):
            return left < right  # type: ignore[operator]
        if isinstance(op, ast.LtE):
            return left <= right  # type: ignore[operator]
        if isinstance(op, ast.Gt):
            return left > right  # type: ignore[operator]
        if isinstance(op, ast.GtE):
            return left >= right  # type: ignore[operator]
        if isinstance(op, ast.In):
            return left in right  # type: ignore[operator]
        if isinstance(op, ast.NotIn):
            return left not in right  # type: ignore[operator]
        if isinstance(op, ast.Is):
            return left is right or (left == right and not isinstance(left, (list, dict)))
        if isinstance(op, ast.IsNot):
            return not (left is right or (left == right and not isinstance(left, (list, dict))))
    except TypeError:
        raise Unknown("comparison") from None
    raise Unknown("comparison")
