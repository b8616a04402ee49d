"""Values of names across the read modules, read statically from `ast`: constants, collections built
from them (`set(CHOICES)`, `["auto"] + OTHERS`, `.append`ed to), class attributes and function locals.

The flag catalog resolves choices and defaults through it; a name bound more than once, or changed
in a way not followed, has no static value (`MISSING`).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .modules import ClassInfo, ModuleSummary
from .modules import module_statements as _statements  # every block, not nested functions or classes
from .pyast import dotted, literal

_COLLECTION_CALLS = frozenset({"set", "frozenset", "list", "tuple", "sorted"})
_ADDS_ONE = frozenset({"add", "append"})
_ADDS_MANY = frozenset({"update", "extend"})
_REMOVES = frozenset({"remove", "discard", "pop", "clear", "insert", "difference_update", "intersection_update",
                      "symmetric_difference_update"})
MISSING = object()  # a value not known statically
_DEPTH = 12  # constants defined through constants: deeper is a cycle or not worth following


@dataclass
class Bindings:
    """Names a block of statements binds: each one's single assignment, additions to it, and how often it is bound."""

    values: dict[str, ast.expr] = field(default_factory=dict)
    added: dict[str, list[tuple[bool, ast.expr]]] = field(default_factory=dict)  # (many, expr): `.add(x)`, `.update(xs)`
    counts: Counter = field(default_factory=Counter)
    mutated: set[str] = field(default_factory=set)  # removed from, or changed in a way not followed

    @classmethod
    def of(cls, statements: Iterable[ast.stmt], bound: Iterable[str] = ()) -> Bindings:
        b = cls()
        b.counts.update(bound)
        for stmt in statements:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and stmt.value is not None:
                    b.values[targets[0].id] = stmt.value
                b._bind(*targets)
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                if isinstance(stmt.op, (ast.Add, ast.BitOr)):
                    b.added.setdefault(stmt.target.id, []).append((True, stmt.value))
                else:
                    b.mutated.add(stmt.target.id)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                b._bind(stmt.target)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                b._bind(*[item.optional_vars for item in stmt.items if item.optional_vars is not None])
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                b.counts[stmt.name] += 1
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                b._method_call(stmt.value)
        return b

    def _bind(self, *targets: ast.expr) -> None:
        for target in targets:
            self.counts.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))

    def _method_call(self, call: ast.Call) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return
        name, method = func.value.id, func.attr
        if method in _ADDS_ONE | _ADDS_MANY and len(call.args) == 1 and not call.keywords:
            self.added.setdefault(name, []).append((method in _ADDS_MANY, call.args[0]))
        elif method in _REMOVES:
            self.mutated.add(name)


class Index:
    """Values of names across the read modules: literal constants, collections built from them, class
    attributes and function locals, looked up through each module's imports."""

    def __init__(self, modules: Iterable[ModuleSummary], load: Callable[[str], ModuleSummary | None] | None = None) -> None:
        self.modules = {m.dotted: m for m in modules}
        self.load = load  # modules outside the read set, loaded on demand (the program's), or none
        self._module_bindings: dict[str, Bindings] = {}
        self._class_bindings: dict[tuple[str, str], Bindings] = {}

    def value(self, module: ModuleSummary, node: ast.expr, local: Bindings | None = None, depth: int = 0) -> object:
        """The value of an expression (tuples for collections), or `MISSING`."""
        if depth > _DEPTH:
            return MISSING
        lit = literal(node)  # names are looked up below: a module "constant" may be appended to
        if lit is not None:
            return lit.value
        if isinstance(node, ast.Name) and local is not None and node.id in local.counts:
            return self._bound(module, local, node.id, local, depth)  # a local (or parameter) shadows the module
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _COLLECTION_CALLS:
            if len(node.args) != 1 or node.keywords:
                return MISSING
            items = self.value(module, node.args[0], local, depth + 1)
            return _collection(node.func.id, items)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):  # with a `*spread`, or literal() would have taken it
            elements: list = []
            for element in node.elts:
                inner = element.value if isinstance(element, ast.Starred) else element
                found = self.value(module, inner, local, depth + 1)
                if found is MISSING or (isinstance(element, ast.Starred) and not isinstance(found, tuple)):
                    return MISSING
                elements.extend(found if isinstance(element, ast.Starred) else [found])  # type: ignore[arg-type]
            return _unique(tuple(elements)) if isinstance(node, ast.Set) else tuple(elements)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.BitOr)):
            left, right = self.value(module, node.left, local, depth + 1), self.value(module, node.right, local, depth + 1)
            if not (isinstance(left, tuple) and isinstance(right, tuple)):
                return MISSING
            # `["auto"] + OTHERS`; `MUSE_ARCHS | frozenset({"Qwen3ForCausalLM"})`: the union, in order
            return left + right if isinstance(node.op, ast.Add) else _unique(left + right)
        name = dotted(node)
        if name is None:
            return MISSING
        place = self.resolve(module, name)
        if place is None:
            return MISSING
        owner, rest = place
        head, _, attr = rest.partition(".")
        if not attr:
            scope = self._bindings_of(owner)
            if head not in scope.values and head in owner.constants:
                return owner.constants[head].value
            return self._bound(owner, scope, head, scope, depth)
        cls = owner.classes.get(head)
        if cls is None or "." in attr or (cls.is_enum and not _str_enum(cls)):
            return MISSING  # a plain enum's member is not its value
        scope = self._class_scope(owner, cls)
        return self._bound(owner, scope, attr, scope, depth)

    def resolve(self, module: ModuleSummary, name: str) -> tuple[ModuleSummary, str] | None:
        """The read module defining a dotted name used in `module`, and the name inside it."""
        head, _, rest = name.partition(".")
        target = module.imports.get(head)
        if target is None:
            return module, name
        parts = (target + ("." + rest if rest else "")).split(".")
        for cut in range(len(parts) - 1, 0, -1):
            dotted_module = ".".join(parts[:cut])
            owner = self.modules.get(dotted_module)
            if owner is None and self.load is not None:
                owner = self.load(dotted_module)
            if owner is not None:
                return owner, ".".join(parts[cut:])
        return None

    def function(self, module: ModuleSummary, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        place = self.resolve(module, name)
        if place is None or place[1] not in place[0].functions:
            return None
        return place[0].functions.syntax(place[1])

    def action_class(self, module: ModuleSummary, name: str) -> tuple[ModuleSummary, ClassInfo] | None:
        place = self.resolve(module, name)
        cls = place[0].classes.get(place[1]) if place else None
        return (place[0], cls) if place and cls else None

    def _bound(self, module: ModuleSummary, scope: Bindings, name: str, local: Bindings | None, depth: int) -> object:
        # A name bound once; what is added to it anywhere counts (argparse keeps the very set it was given).
        if scope.counts[name] != 1 or name in scope.mutated or name not in scope.values:
            return MISSING
        value = self.value(module, scope.values[name], local, depth + 1)
        for many, expr in scope.added.get(name, ()):
            extra = self.value(module, expr, local, depth + 1)
            if not isinstance(value, tuple) or (many and not isinstance(extra, tuple)) or extra is MISSING:
                return MISSING
            value = _unique(value + (extra if many else (extra,)))  # type: ignore[operator]
        return value

    def _bindings_of(self, module: ModuleSummary) -> Bindings:
        if module.dotted not in self._module_bindings:
            self._module_bindings[module.dotted] = Bindings.of(_statements(module.declarations.body))
        return self._module_bindings[module.dotted]

    def _class_scope(self, module: ModuleSummary, cls: ClassInfo) -> Bindings:
        key = (module.dotted, cls.name)
        if key not in self._class_bindings:
            self._class_bindings[key] = Bindings.of(module.declared_class(cls.name).body)
        return self._class_bindings[key]


def _collection(call: str, items: object) -> object:
    if not isinstance(items, (tuple, str)):
        return MISSING
    items = tuple(items)
    if call == "sorted":
        try:
            return tuple(sorted(items))  # type: ignore[type-var]
        except TypeError:
            return MISSING
    return _unique(items) if call in ("set", "frozenset") else items


def _unique(items: tuple) -> tuple:
    return tuple(dict.fromkeys(items))


def _str_enum(cls: ClassInfo) -> bool:
    return any(b.rsplit(".", 1)[-1] in ("str", "StrEnum") for b in cls.bases)
