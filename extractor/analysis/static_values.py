"""Values of names across the read modules, read statically from `ast`: constants, collections built
from them (`set(CHOICES)`, `["auto"] + OTHERS`, `.append`ed to), class attributes and function locals,
the keys of a dict (`list(Parser.DetectorMap.keys())`) and what a function without parameters returns
(`_tool_call_parser_choices()`).

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
from .pyast import dotted, import_bindings, literal

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
    imports: dict[str, str] = field(default_factory=dict)  # a function's own imports: name -> dotted target

    @classmethod
    def of(cls, statements: Iterable[ast.stmt], bound: Iterable[str] = (), path: str | None = None) -> Bindings:
        """`path`: the block is a function's body in that file, whose imports bind its own names."""
        b = cls()
        b.counts.update(bound)
        for stmt in statements:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and path is not None:
                b.imports.update(import_bindings(stmt, path))
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
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
            if items is MISSING:  # `list(SOME_DICT)`: its keys
                items = self._keys(module, node.args[0], local, depth + 1)
            return _collection(node.func.id, items)
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            if isinstance(node.func, ast.Attribute) and node.func.attr == "keys":
                return self._keys(module, node.func.value, local, depth + 1)
            return self._returned(module, node.func, local, depth + 1)
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
        place = self.resolve(module, name, local)
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

    def resolve(self, module: ModuleSummary, name: str, local: Bindings | None = None) -> tuple[ModuleSummary, str] | None:
        """The read module defining a dotted name used in `module` (in a function whose names are
        `local`), and the name inside it."""
        head, _, rest = name.partition(".")
        target = (local.imports.get(head) if local is not None else None) or module.imports.get(head)
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

    def _keys(self, module: ModuleSummary, node: ast.expr, local: Bindings | None, depth: int) -> object:
        """The keys of the dict literal a name is bound to (`Parser.DetectorMap`, `NAMES.keys()`), or
        `MISSING`: argparse's `choices=list(some_dict)` offers its keys."""
        bound = self._bound_expression(module, node, local)
        if depth > _DEPTH or bound is None or not isinstance(bound[1], ast.Dict) or None in bound[1].keys:
            return MISSING  # not a dict literal, or one with `**spread` entries
        keys = tuple(self.value(bound[0], key, None, depth + 1) for key in bound[1].keys if key is not None)
        return MISSING if any(key is MISSING for key in keys) else _unique(keys)

    def _bound_expression(self, module: ModuleSummary, node: ast.expr,
                          local: Bindings | None) -> tuple[ModuleSummary, ast.expr] | None:
        """The one expression a name (a local, a module's or a class's) is bound to and never changed
        from, with the module it is written in."""
        if isinstance(node, ast.Name) and local is not None and node.id in local.counts:
            owner, scope, key = module, local, node.id
        else:
            name = dotted(node)
            place = self.resolve(module, name, local) if name is not None else None
            if place is None:
                return None
            owner, rest = place
            head, _, attr = rest.partition(".")
            cls = owner.classes.get(head) if attr else None
            if attr and (cls is None or "." in attr):
                return None
            scope, key = (self._class_scope(owner, cls), attr) if cls is not None else (self._bindings_of(owner), head)
        if scope.counts[key] != 1 or key in scope.mutated or key in scope.added or key not in scope.values:
            return None
        return owner, scope.values[key]

    def _returned(self, module: ModuleSummary, func: ast.expr, local: Bindings | None, depth: int) -> object:
        """What a call of a function without parameters returns, read from its body: straight-line
        statements, each `if` around a `return` decided (`_decided`), else `MISSING`. Its own imports
        and locals are its names."""
        name = dotted(func)
        place = self.resolve(module, name, local) if name is not None else None
        if place is None or place[1] not in place[0].functions:
            return MISSING
        owner, function = place[0], place[0].functions.syntax(place[1])
        arguments = function.args
        if arguments.posonlyargs or arguments.args or arguments.vararg or arguments.kwonlyargs or arguments.kwarg \
                or any(not (dotted(d) or "").endswith("cache") for d in function.decorator_list):
            return MISSING  # a result that depends on its arguments (or on a decorator's doing)
        names = Bindings.of(_statements(function.body), path=owner.path)
        found = self._run(owner, function.body, names, depth)
        return MISSING if found is _FALLS_THROUGH else found

    def _run(self, module: ModuleSummary, body: list[ast.stmt], names: Bindings, depth: int) -> object:
        for stmt in body:
            if isinstance(stmt, ast.Return):
                return self.value(module, stmt.value, names, depth + 1) if stmt.value is not None else MISSING
            if not any(isinstance(inner, ast.Return) for inner in ast.walk(stmt)):
                continue  # binds names (`names` has them all), or does what the result does not read
            if not isinstance(stmt, ast.If):
                return MISSING  # a return inside a loop, a `try`, a `with`
            taken = _decided(stmt.test, names)
            if taken is None:
                return MISSING
            found = self._run(module, stmt.body if taken else stmt.orelse, names, depth)
            if found is not _FALLS_THROUGH:
                return found
        return _FALLS_THROUGH

    def display(self, module: ModuleSummary, name: str) -> str | None:
        """How a module-level name bound once is written: "list" or "tuple" for a display or a
        `list(...)`/`tuple(...)`/`sorted(...)` call; None for anything else."""
        scope = self._bindings_of(module)
        node = scope.values.get(name) if scope.counts.get(name) == 1 else None
        if isinstance(node, (ast.List, ast.Tuple)):
            return "list" if isinstance(node, ast.List) else "tuple"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple", "sorted"):
            return "tuple" if node.func.id == "tuple" else "list"
        return None

    def _bindings_of(self, module: ModuleSummary) -> Bindings:
        if module.dotted not in self._module_bindings:
            self._module_bindings[module.dotted] = Bindings.of(_statements(module.declarations.body))
        return self._module_bindings[module.dotted]

    def _class_scope(self, module: ModuleSummary, cls: ClassInfo) -> Bindings:
        key = (module.dotted, cls.name)
        if key not in self._class_bindings:
            self._class_bindings[key] = Bindings.of(module.declared_class(cls.name).body)
        return self._class_bindings[key]


_FALLS_THROUGH = object()  # a block that ends without a `return`


def _decided(test: ast.expr, names: Bindings) -> bool | None:
    """Whether an `if` test over a function's own names holds when SGLang parses its arguments, or
    None. One fact only: `sys.modules.get("...")` is None then. SGLang imports a module lazily (its
    parser registries) exactly so that parsing arguments does not load it; a function that offers
    the loaded registry's names, else a list kept equal to it, offers that list."""
    negated = False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, True
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        subject, holds_when_none = test.left, isinstance(test.ops[0], ast.Is)
    else:
        subject, holds_when_none = test, False  # `if module:`
    if not (isinstance(subject, ast.Name) and names.counts[subject.id] == 1 and subject.id not in names.mutated):
        return None
    bound = names.values.get(subject.id)
    if not (isinstance(bound, ast.Call) and dotted(bound.func) == "sys.modules.get" and names.imports.get("sys", "sys") == "sys"):
        return None
    return holds_when_none != negated


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
