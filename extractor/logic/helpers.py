"""SGLang's helpers read over facts: the bodies rules.json keeps (`helpers`), never run.

`get_device()` decides `--device` when it is left out: on a machine whose torch reports CUDA it
is "cuda". Its body, and those of `is_cpu()`, `is_npu()`, `get_bool_env_var(...)` and the other
helpers terms call, are read statement by statement over what is known: the platform profile's
answers of torch, the Python platform and the installed packages (`World`), the environment of
the launch, the model's config. Anything else (a call of unknown code, a loop without a known
end, a name no definition binds) makes the value unknown, never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.model import CLASS_PREFIX, HelperLibrary
from .expressions import Unknown

# Calls that fill a collection in place, by the types they apply to.
_FILLS: dict[str, tuple[type, ...]] = {"update": (dict, set), "append": (list,), "add": (set,), "extend": (list,)}
MAX_STEPS = 2000  # statements read per term, at most: a loop the facts do not end is unknown
_LOGGING = frozenset({"logger", "logging", "warnings", "print"})  # calls whose only effect is output
_STANDARD = frozenset({"os.path", "os.environ", "importlib.util", "os.getenv", "platform.machine",
                       "importlib.util.find_spec"})  # names the standard library always has


class Raised(Exception):
    """An exception a helper's `raise` (or a failed import) throws while it is read: `except` clauses
    that name it or a base of it catch it."""

    def __init__(self, kind: str, site: ast.stmt | None = None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.site = site  # the `raise` or `assert` read, when it was one


# Which exceptions an `except` clause catches, by name; a clause naming another catches nothing
# that is read here, so an exception it might catch stays unknown.
_CAUGHT_BY = {
    "BaseException": None, "Exception": None,  # everything
    "ImportError": {"ImportError", "ModuleNotFoundError"}, "ModuleNotFoundError": {"ModuleNotFoundError"},
    "RuntimeError": {"RuntimeError", "NotImplementedError"}, "ValueError": {"ValueError"},
    "AssertionError": {"AssertionError"}, "TypeError": {"TypeError"}, "KeyError": {"KeyError"},
    "AttributeError": {"AttributeError"}, "OSError": {"OSError", "FileNotFoundError"},
}


class _Return(Exception):
    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value


@dataclass(frozen=True)
class World:
    """What the machine answers outside SGLang: torch's queries, `platform.machine()`, installed
    packages (`find_spec`). `answers`: dotted query -> value (`torch.cuda.is_available()`,
    `torch.version.cuda`); `absent`: dotted names that do not exist (`torch.npu`); `packages`:
    top-level package -> installed."""

    answers: Mapping[str, object] = field(default_factory=dict)
    absent: frozenset[str] = frozenset()
    packages: Mapping[str, bool] = field(default_factory=dict)

    def has(self, path: str) -> bool:
        if path in _STANDARD:
            return True
        if path in self.absent or any(path.startswith(a + ".") for a in self.absent):
            return False
        prefix = path + "."
        if path in self.answers or any(k.startswith(prefix) or k.startswith(path + "(") for k in self.answers):
            return True
        raise Unknown(f"hasattr {path}")

    def installed(self, package: str) -> bool:
        found = self.packages.get(package.split(".")[0])
        if found is None:
            raise Unknown(f"package {package}")
        return bool(found)


SOURCE_PACKAGE = "sglang"  # the package the helpers are read from (their keys: "sglang.srt.x:f")


class _NotRead:
    """What an import of a module of the analysed package binds inside a helper: there, but not read;
    any use of it is unknown."""

    __slots__ = ()

    def __bool__(self) -> bool:
        raise Unknown("a module of the package")


NOT_READ = _NotRead()


class Outside:
    """A module imported from outside the analysed package (`torch`, `os`, `platform`) or a name in it:
    its attributes and calls are the world's answers, by dotted path."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def attribute(self, name: str, world: World) -> object:
        path = f"{self.path}.{name}"
        if path in world.answers:
            return world.answers[path]
        if not world.has(path):
            raise Raised("AttributeError")
        return Outside(path)

    def __bool__(self) -> bool:
        if self.path.startswith("spec."):
            return True  # a module spec `find_spec` found
        raise Unknown(f"truth of {self.path}")

    def __repr__(self) -> str:
        return f"Outside({self.path})"


class PackageClass:
    """A class of the analysed package, as a value (`{"fp8": Fp8Config}`): never None, always true;
    nothing else of it is known."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"PackageClass({self.path})"


@dataclass(frozen=True)
class EnumMember:
    """A member of a plain enum of the analysed package (`SpeculativeAlgorithm.EAGLE`), no int or str
    mixed in: equal to itself only; its methods are looked up on its class (`is_eagle()`), its `name`
    is known."""

    path: str  # the enum's import path
    name: str


class Instance:
    """An instance of a class of the analysed package a run term runs a method of: the attributes
    given, each read when first asked for (`pending`, by the term's own reader), and those the
    method sets; its methods are looked up along the class's bases."""

    __slots__ = ("path", "values", "pending", "read")

    def __init__(self, path: str, pending: Mapping[str, ast.expr], read: Callable[[ast.expr], object]) -> None:
        self.path = path
        self.values: dict[str, object] = {}
        self.pending = dict(pending)
        self.read = read

    def attribute(self, name: str) -> object:
        if name not in self.values and name in self.pending:
            self.values[name] = self.read(self.pending.pop(name))
        if name in self.values:
            return self.values[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"Instance({self.path})"


class BoundMethod:
    """A method looked up on an instance or a class: called with it as its first argument."""

    __slots__ = ("definition", "receiver")

    def __init__(self, definition: Definition, receiver: object) -> None:
        self.definition = definition
        self.receiver = receiver


@lru_cache(maxsize=256)
def guard_statements(function: ast.FunctionDef) -> tuple[ast.stmt, ...]:
    """A function's raises and asserts in source order, nested functions and classes left out (as
    `analysis.guards` counts them for a run term); once per parsed helper."""
    found: list[ast.stmt] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, (ast.Raise, ast.Assert)):
                found.append(child)
            visit(child)

    visit(function)
    return tuple(found)


@lru_cache(maxsize=256)
def closing_statements(function: ast.FunctionDef, target: ast.stmt) -> frozenset[int]:
    """The statements around `target` whose end, with no loop around them to run them again, means
    `target` was not reached."""
    found: set[int] = set()

    def visit(node: ast.AST, looped: bool) -> bool:
        for child in ast.iter_child_nodes(node):
            if child is target:
                return True
            inner = looped or isinstance(child, (ast.For, ast.While, ast.AsyncFor))
            if visit(child, inner):
                if isinstance(child, ast.stmt) and not looped:
                    found.add(id(child))
                return True
        return False

    visit(function, False)
    return frozenset(found)


@dataclass(frozen=True)
class Definition:
    """A helper parsed: a function's node, a constant's expression, or the module statements that
    make a collection at import time (`ast.Module`), and the names of its module."""

    key: str
    node: ast.FunctionDef | ast.Module | ast.expr
    names: Mapping[str, str]

    @property
    def is_function(self) -> bool:
        return isinstance(self.node, ast.FunctionDef)

    @property
    def made_at_import(self) -> bool:
        return isinstance(self.node, ast.Module)


class Helpers:
    """The helper library of a rule set, parsed on first use."""

    def __init__(self, library: HelperLibrary) -> None:
        self.names: dict[str, str] = dict(library.names)
        self._sources = {h.key: (h.source, dict(h.names)) for h in library.helpers}
        self._parsed: dict[str, Definition | None] = {}
        self._members: dict[tuple[str, str], EnumMember] = {}
        self._classes: dict[str, dict | None] = {}  # a class's entry, read once (asked on every launch)
        self._by_model_type: dict[str, tuple[str, ...]] | None = None  # model_type -> the class and its bases
        self.config_loader = library.config_loader  # what `AutoConfig.from_pretrained` loads (`facts`)

    def __bool__(self) -> bool:
        return bool(self.names) or self.config_loader is not None

    def __getstate__(self) -> dict:
        # A rule set's index is pickled with its helpers: parsed trees read back slower than they
        # parse (a pickled `ast` node is a dict per node), so each process parses what it calls.
        return {**self.__dict__, "_parsed": {}, "_members": {}, "_classes": {}}

    def definition(self, key: str) -> Definition | None:
        if key not in self._parsed:
            found = self._sources.get(key)
            self._parsed[key] = None if found is None else _parse(key, *found)
        return self._parsed[key]

    def method(self, path: str, name: str) -> Definition | None:
        """The method `name` of the class at import path `path`, looked up along its bases."""
        entry = self._class(path)
        if entry is None:
            return None
        for owner in (path, *entry.get("bases", ())):
            found = (self._class(owner) or {}).get("methods", {}).get(name)
            if found is not None:
                return self.definition(found)
        return None

    def member(self, path: str, name: object) -> EnumMember | None:
        """The member `name` of the enum at import path `path` (`cls[name]`, `cls.NAME`), or None; one
        object per member, as Python's (`algo is SpeculativeAlgorithm.NONE`)."""
        members = (self._class(path) or {}).get("members")
        if not isinstance(members, list) or not isinstance(name, str) or name not in members:
            return None
        return self._members.setdefault((path, name), EnumMember(path, name))

    def made(self, path: str, call: ast.Call, read: Callable[[ast.expr], object]) -> Instance:
        """A dataclass of the package made by `call` (a registry's entry): its fields as the call gives
        them, else their defaults, each read when first asked for. An instance of any other class is
        one nothing is known of but that it is one (never None, `MambaConfig(...) is None` is false)."""
        fields = (self._class(path) or {}).get("fields")
        if not isinstance(fields, list):
            return Instance(path, {}, read)
        if any(isinstance(a, ast.Starred) for a in call.args) \
                or len(call.args) > len(fields) or any(k.arg not in dict(fields) for k in call.keywords):
            raise Unknown(f"an instance of {path}")
        given = {**{name: arg for (name, _), arg in zip(fields, call.args)}, **{k.arg: k.value for k in call.keywords}}
        pending: dict[str, ast.expr] = {}
        for name, default in fields:
            if name in given:
                pending[name] = given[name]
            elif default is None:
                raise Unknown(f"an instance of {path}")  # Python's TypeError, a missing argument
            elif default:  # "": a default that is not a literal, unknown when read
                pending[name] = ast.parse(default, mode="eval").body
        return Instance(path, pending, read)

    def is_instance(self, data: object, cls: object) -> bool:
        """`isinstance(config, spec.config_class)` of a model's config (`data`, its config.json) and a
        config class of the package that declares its model_type: transformers builds the class
        registered for config.json's model_type, so whether that is the class or one of its subclasses
        among the package's classes kept (none: a class of transformers, no subclass of the package's);
        unknown for anything else."""
        declared = (self._class(cls.path) or {}).get("model_type") if isinstance(cls, PackageClass) else None
        if not isinstance(declared, str) or not isinstance(data, Mapping) or not isinstance(data.get("model_type"), str):
            raise Unknown("isinstance")
        if self._by_model_type is None:  # built on first use, kept with the index (`__getstate__`)
            entries = {key[len(CLASS_PREFIX):]: self._class(key[len(CLASS_PREFIX):]) for key in self._sources
                       if key.startswith(CLASS_PREFIX)}
            self._by_model_type = {entry["model_type"]: (path, *entry.get("bases", ()))
                                   for path, entry in sorted(entries.items())
                                   if entry and isinstance(entry.get("model_type"), str)}
        return cls.path in self._by_model_type.get(data["model_type"], ())  # type: ignore[union-attr]

    def _class(self, path: str) -> dict | None:
        if path not in self._classes:
            self._classes[path] = _class_entry(self._sources.get(CLASS_PREFIX + path))
        return self._classes[path]


def _class_entry(found: tuple[str, dict[str, str]] | None) -> dict | None:
    """A class's entry of the library (its model type, bases, methods, members), as written."""
    if found is None:
        return None
    try:
        entry = ast.literal_eval(found[0])
    except (ValueError, SyntaxError):
        return None
    return entry if isinstance(entry, dict) else None


def _parse(key: str, source: str, names: dict[str, str]) -> Definition | None:
    node = _syntax(source)
    return None if node is None else Definition(key, node, names)


@lru_cache(maxsize=1024)
def _syntax(source: str) -> ast.FunctionDef | ast.Module | ast.expr | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef):
        return tree.body[0]
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        return tree.body[0].value
    if tree.body and not any(isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for stmt in tree.body):
        return tree  # statements that make a collection at import time
    return None


class Reader:
    """Reads one helper's body: statements here, expressions by the evaluator given (`evaluate(node)`
    over `frame`, its locals)."""

    def __init__(self, evaluate: Callable[[ast.AST], object], frame: dict[str, object], world: World,
                 budget: list[int]) -> None:
        self.evaluate = evaluate
        self.frame = frame
        self.world = world
        self.budget = budget  # one counter shared by nested calls
        # Statements whose end means a watched raise was not reached (`closing_statements`), and whether one ended.
        self.closing: frozenset[int] = frozenset()
        self.passed = False

    def run(self, body: list[ast.stmt]) -> object:
        try:
            self.block(body)
        except _Return as done:
            return done.value
        return None

    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)
            if id(stmt) in self.closing:
                self.passed = True

    def statement(self, stmt: ast.stmt) -> None:  # noqa: C901 - one case per statement kind
        self.budget[0] -= 1
        if self.budget[0] < 0:
            raise Unknown("too many steps")
        if isinstance(stmt, ast.Return):
            raise _Return(None if stmt.value is None else self.evaluate(stmt.value))
        if isinstance(stmt, ast.If):
            if _only_outputs(stmt.body) and _only_outputs(stmt.orelse):
                return  # `if ...: logger.warning(...)`: either way nothing is returned, raised or bound
            self.block(stmt.body if self.evaluate(stmt.test) else stmt.orelse)
        elif isinstance(stmt, ast.Assign):
            value = self.evaluate(stmt.value)
            for target in stmt.targets:
                self.bind(target, value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.bind(stmt.target, self.evaluate(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise Unknown("augmented assignment")
            self.bind(stmt.target, self.evaluate(ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op, stmt.value)))
        elif isinstance(stmt, ast.Expr):
            if not _only_output(stmt.value) and not self.fill(stmt.value):
                raise Unknown("a call for its effect")
        elif isinstance(stmt, ast.Raise):
            raise Raised(_raised_kind(stmt), stmt)
        elif isinstance(stmt, ast.Assert):
            if not self.evaluate(stmt.test):
                raise Raised("AssertionError", stmt)
        elif isinstance(stmt, ast.Try):
            self.attempt(stmt)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.imports(stmt)
        elif isinstance(stmt, ast.For):
            self.loop(stmt)
        elif isinstance(stmt, ast.Break):
            raise _Break()
        elif isinstance(stmt, ast.Continue):
            raise _Continue()
        elif not isinstance(stmt, ast.Pass):
            raise Unknown(type(stmt).__name__)

    def fill(self, call: ast.expr) -> bool:
        """`items.update({...})`, `.append(x)`, `.add(x)`, `.extend(xs)` on a collection this body made:
        done on it; False for any other call."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                and call.func.attr in _FILLS and len(call.args) == 1 and not call.keywords):
            return False
        owner = self.frame.get(call.func.value.id)
        if not isinstance(owner, _FILLS[call.func.attr]) or isinstance(call.args[0], ast.Starred):
            return False
        argument = self.evaluate(call.args[0])
        try:
            getattr(owner, call.func.attr)(argument)
        except (TypeError, ValueError):
            raise Unknown(call.func.attr) from None
        return True

    def bind(self, target: ast.expr, value: object) -> None:
        if isinstance(target, ast.Name):
            self.frame[target.id] = value
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(self.frame.get(target.value.id), dict):
            key = self.evaluate(target.slice)
            try:
                self.frame[target.value.id][key] = value  # type: ignore[index]
            except TypeError:
                raise Unknown("subscript assignment") from None
        elif isinstance(target, ast.Attribute) and isinstance(owner := self.evaluate(target.value), Instance):
            owner.values[target.attr] = value  # `self.quantization = quant_method`
        elif isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
            if isinstance(value, Outside) or not isinstance(value, (tuple, list, str)):
                raise Unknown("unpacking")
            items = list(value)
            if len(items) != len(target.elts):
                raise Raised("ValueError")
            for element, item in zip(target.elts, items):
                self.bind(element, item)
        else:
            raise Unknown("assignment target")

    def attempt(self, stmt: ast.Try) -> None:
        try:
            self.block(stmt.body)
        except Raised as raised:
            for handler in stmt.handlers:
                if catches(handler.type, raised.kind):
                    if handler.name:
                        self.frame[handler.name] = Outside(f"exception.{raised.kind}")
                    self.block(handler.body)
                    break
                if not _known_clause(handler):
                    raise Unknown("an exception clause") from None
            else:
                raise
        else:
            self.block(stmt.orelse)
        if stmt.finalbody:
            raise Unknown("finally")

    def imports(self, stmt: ast.Import | ast.ImportFrom) -> None:
        if isinstance(stmt, ast.ImportFrom):
            try:  # a name of the package the extraction bound for this function (`analysis.helpers`)
                self.frame.update({a.asname or a.name: self.evaluate(ast.Name(a.asname or a.name, ast.Load()))
                                   for a in stmt.names})
                return
            except (Unknown, Raised):
                pass
            if stmt.level or not stmt.module:
                raise Unknown("relative import")
            if stmt.module.split(".")[0] == SOURCE_PACKAGE:
                # A module of SGLang itself (`from sglang.srt.layers import deep_gemm_wrapper`): it is
                # there, so the import succeeds; what it binds is not read here (a use is unknown).
                self.frame.update({a.asname or a.name: NOT_READ for a in stmt.names})
                return
            if not self.world.installed(stmt.module):
                raise Raised("ModuleNotFoundError")
            raise Unknown("from-import")  # what it binds is code of another package
        for alias in stmt.names:
            if not self.world.installed(alias.name):
                raise Raised("ModuleNotFoundError")
            if alias.asname:
                self.frame[alias.asname] = Outside(alias.name)
            else:
                self.frame[alias.name.split(".")[0]] = Outside(alias.name.split(".")[0])

    def loop(self, stmt: ast.For) -> None:
        items = self.evaluate(stmt.iter)
        if isinstance(items, Outside) or not isinstance(items, (tuple, list, str, dict, set, frozenset, range, *_DICT_VIEWS)):
            raise Unknown("iteration")
        if isinstance(items, (set, frozenset)):
            raise Unknown("iteration order of a set")
        for item in list(items):
            self.bind(stmt.target, item)
            try:
                self.block(stmt.body)
            except _Break:
                return
            except _Continue:
                continue
        self.block(stmt.orelse)


_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))  # in the dict's order


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _only_outputs(body: list[ast.stmt]) -> bool:
    """Statements that only log, warn or print (or `pass`): a test choosing between two such blocks is
    not read (0.5.10's `_verify_quantization` warns on `deep_gemm_wrapper.DEEPGEMM_SCALE_UE8M0`, a
    module constant of the machine, before its checks)."""
    return all(isinstance(stmt, ast.Pass) or isinstance(stmt, ast.Expr) and _only_output(stmt.value) for stmt in body)


def _only_output(value: ast.expr) -> bool:
    """A docstring, or a call of a logger, `warnings` or `print`: no effect on what the helper returns."""
    if isinstance(value, ast.Constant):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in _LOGGING


def _raised_kind(stmt: ast.Raise) -> str:
    exc = stmt.exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    if isinstance(exc, ast.Name):
        return exc.id
    if isinstance(exc, ast.Attribute):
        return exc.attr
    return "Exception"


def _clause_names(kinds: ast.expr | None) -> list[str] | None:
    if kinds is None:
        return ["BaseException"]
    nodes = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    names = []
    for node in nodes:
        if isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.Attribute):
            names.append(node.attr)
        else:
            return None
    return names


def _known_clause(handler: ast.ExceptHandler) -> bool:
    names = _clause_names(handler.type)
    return names is not None and all(n in _CAUGHT_BY for n in names)


def catches(kinds: ast.expr | None, kind: str) -> bool:
    """Does an `except` clause naming `kinds` (None: a bare `except:`) catch the exception `kind`?"""
    for name in _clause_names(kinds) or ():
        caught = _CAUGHT_BY.get(name, ())
        if caught is None or kind == name or (caught and kind in caught):
            return True
    return False


def bind_arguments(node: ast.FunctionDef, args: list[object], keywords: dict[str, object],
                   default: Callable[[ast.expr], object]) -> dict[str, object]:
    """The locals a call starts with: positional and keyword arguments, then the defaults."""
    spec = node.args
    if spec.vararg is not None or spec.kwarg is not None or spec.posonlyargs:
        raise Unknown("variadic helper")
    names = [a.arg for a in spec.args]
    if len(args) > len(names):
        raise Raised("TypeError")
    frame: dict[str, object] = dict(zip(names, args))
    for name, value in keywords.items():
        if name in frame or name not in names + [a.arg for a in spec.kwonlyargs]:
            raise Raised("TypeError")
        frame[name] = value
    defaults = dict(zip(names[len(names) - len(spec.defaults):], spec.defaults))
    defaults.update({a.arg: d for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None})
    for name in names + [a.arg for a in spec.kwonlyargs]:
        if name not in frame:
            if name not in defaults:
                raise Raised("TypeError")
            frame[name] = default(defaults[name])
    return frame
