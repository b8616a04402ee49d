"""The helpers that platform, model and other opaque terms call, kept as source for `check` to read over facts.

A trigger keeps `get_device()` or `is_fi_a2a_supported(dcp_size=...)` as an opaque term: what it
answers depends on the machine, the model or the environment, which the extraction does not know.
`check` does, once given a platform profile (torch's own answers: CUDA available, capability, ...),
a model's config.json and `--env`. So for every bare name such a term calls, the function it
denotes where the term was read is found, and kept with the module-level functions and constants
it reads in turn, as normalized source: `logic.helpers` reads them over the facts, never running
them. A name that denotes different functions in different modules is left out (unknown, not
wrong), as is a function too large or reading names no definition is found for (the reader says
unknown where it meets them).
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Iterable, Iterator, Mapping

from ..core.model import CLASS_PREFIX, RUN_FUNCTION, And, Atom, Formula, Helper, HelperLibrary, Not, Or, Term, TermKind
from .modules import ModuleSummary, module_statements

MAX_HELPER_LINES = 60  # a function longer than this is no helper to read over facts
MAX_METHOD_LINES = 250  # ... and a method of a class a run term reads (`ModelConfig._verify_quantization`)
RUN_PREFIX = RUN_FUNCTION + ":"  # how `called_names` names the method a run term runs
METHOD_PREFIX = "method:"  # ... and a method a term calls by name on anything (`x.get_platform_worker_cls()`)
MAX_HELPERS = 400  # definitions kept per extraction, at most
MAX_DEPTH = 6  # helpers calling helpers, at most this deep from a term

_BUILTINS = frozenset(dir(builtins))
_NOT_KEPT = ("import:", "class:")  # keys that name something without a definition to keep
_TERM_KINDS = (TermKind.PLATFORM, TermKind.MODEL, TermKind.OPAQUE)


def called_names(text: str) -> frozenset[str]:
    """The bare names a term's source calls (`get_device` of `get_device()`), or whose attributes it reads
    (`_MODEL_CONFIG_FACTORIES.get(t)`) or calls (`SpeculativeAlgorithm.from_string(a)`): functions,
    module constants and classes; builtins left out. And each method it calls by name, prefixed
    `METHOD_PREFIX` (`get_platform_worker_cls`): kept for the classes kept code names."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == RUN_FUNCTION \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found.add(RUN_PREFIX + node.args[0].value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            found.add(node.func.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            found.add(METHOD_PREFIX + node.func.attr)
            if isinstance(node.func.value, ast.Name):
                found.add(node.func.value.id)  # `SpeculativeAlgorithm.from_string(a)`: a class, when one
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id.isupper():
            found.add(node.value.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id.isupper():
            found.add(node.id)  # `q not in [*QUANTIZATION_METHODS]`: a module constant read whole
    return frozenset(found - _BUILTINS)


class CalledNames:
    """The names the platform, model and opaque terms of formulas call, each shared part read once:
    triggers share large parts (the writes of a resolved field)."""

    def __init__(self) -> None:
        self._of_formula: dict[Formula, frozenset[str]] = {}
        self._of_text: dict[str, frozenset[str]] = {}

    def of(self, formulas: Iterable[Formula], values: Iterable[object] = ()) -> frozenset[str]:
        found: set[str] = set()
        for f in formulas:
            found |= self._formula(f)
        for value in values:
            if isinstance(value, Term):
                found |= self._term(value)
        return frozenset(found)

    def _term(self, term: Term) -> frozenset[str]:
        if term.kind not in _TERM_KINDS:
            return frozenset()
        found = self._of_text.get(term.text)
        if found is None:
            found = self._of_text[term.text] = called_names(term.text)
        return found

    def _formula(self, f: Formula) -> frozenset[str]:
        found = self._of_formula.get(f)
        if found is not None:
            return found
        if isinstance(f, Atom):
            found = self._term(f.term) | (self._term(f.other) if isinstance(f.other, Term) else frozenset())
        elif isinstance(f, Not):
            found = self._formula(f.arg)
        elif isinstance(f, (And, Or)):
            found = frozenset().union(*(self._formula(a) for a in f.args))
        else:
            found = frozenset()
        self._of_formula[f] = found
        return found


def places_of_names(uses: Iterable[tuple[Iterable[str], Iterable[str]]]) -> dict[str, set[str]]:
    """name -> the modules it may be read in, from (names called, modules they were read in) pairs."""
    found: dict[str, set[str]] = {}
    for names, modules in uses:
        if names:
            modules = set(modules)
            for name in names:
                found.setdefault(name, set()).update(modules)
    return found


class _Finder:
    """Definitions found through a program's modules (`resolve(module, name)` -> key of a function or
    constant, `module(dotted)` -> its summary)."""

    def __init__(self, denotes, module, mutated, changed_by_functions, registrations,
                 term_methods: frozenset[str] = frozenset()) -> None:
        self.denotes = denotes
        self.module = module
        self.mutated = mutated  # (module summary, name) -> changed in place (a registry is no constant)
        self.changed_by_functions = changed_by_functions  # ... by a used function, not only at import
        self.registrations = registrations  # ... -> [(module, entry)] its functions append at import, or None
        self.kept: dict[str, Helper | None] = {}  # key -> definition, None when it cannot be read
        self.called: dict[str, frozenset[str]] = {}  # key -> the names it calls as attributes (`cls.get_name()`)
        self.lineages: dict[str, list[str]] = {}  # a class's import path -> it and its bases, where defined
        self.term_methods = term_methods  # the methods the terms themselves call by name
        self.term_classes: set[str] = set()  # the classes the terms name (import paths)

    def resolve(self, dotted: str, name: str) -> str | None:
        """What a top-level name of a module denotes: a function, an import, or a constant it binds once."""
        found = self.denotes(dotted, name)
        if found is not None:
            return found
        module = self.module(dotted)
        return f"{dotted}:{name}" if module is not None and _constant_value(module, name) is not None else None

    def define(self, key: str, depth: int) -> bool:
        """Keep the definition of `key` and of what it reads; whether it could be kept."""
        if key in self.kept:
            return self.kept[key] is not None
        if len(self.kept) >= MAX_HELPERS or depth > MAX_DEPTH:
            return False
        self.kept[key] = None  # a cycle reads as unknown
        made = self._made(key)
        if made is None:
            return False
        source, names, module, tree = made
        self.called[key] = frozenset(n.func.attr for n in ast.walk(tree)
                                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute))
        bound = []
        for name, dotted, imported in [*names, *_imported_inside(tree, module.dotted)]:
            target = self.resolve(dotted, imported)
            if target is not None and (target.startswith(_NOT_KEPT) or self.define(target, depth + 1)):
                bound.append((name, target))
        self.kept[key] = Helper(key, source, tuple(sorted(bound)))
        return True

    def _made(self, key: str) -> tuple[str, list[tuple[str, str, str]], ModuleSummary, ast.AST] | None:
        """The definition's source, the names it reads (each with the module that binds it), its
        module and syntax tree; None when it cannot be kept."""
        dotted, _, name = key.partition(":")
        module = self.module(dotted)
        if module is None:
            return None
        if name in module.functions:
            node = module.function_node(name)
            limit = MAX_METHOD_LINES if "." in name else MAX_HELPER_LINES
            if (node.end_lineno or node.lineno) - node.lineno + 1 > limit or isinstance(node, ast.AsyncFunctionDef):
                return None
            plain = copy.copy(node)
            plain.decorator_list, plain.returns, plain.body = [], None, _without_docstring(node.body)
            return ast.unparse(plain), _own(_free_names(node), module), module, node
        value = _constant_value(module, name)
        if value is None or f"global {name}" in module.text:
            return None  # a name bound more than once, or one a function rebinds: no constant
        if not self.mutated(module, name):
            return ast.unparse(value), _own(_names_read(value), module), module, value
        made = _made_at_import(module.declarations.body, name)
        if made is None:
            return None
        names = _own(_names_read(ast.Module(made, [])) - {name}, module)
        if self.changed_by_functions(module, name):
            # A registry its functions fill: what it holds once the package is imported, when only
            # registrations at module level fill it (`register_linear_attn_model(Spec(...))`), each
            # entry's names read where it is written; else it depends on what ran.
            registered = self.registrations(module, name)
            if registered is None:
                return None
            for dotted, entry in registered:
                made.append(ast.Expr(ast.Call(ast.Attribute(ast.Name(name, ast.Load()), "append", ast.Load()), [entry], [])))
                names += [(n, dotted, n) for n in sorted(_names_read(entry))]
        program = ast.Module(made, [])
        return ast.unparse(program), names, module, program

    def classes(self) -> None:
        """Keep, for every class kept code names (`{"fp8": Fp8Config}`) or runs a method of, its bases
        and the methods kept code calls by name on anything (`method.override_quantization_method(...)`,
        `cls.get_name()`): what `check` looks up along the class's bases when such a call meets it."""
        done: set[tuple[str, str]] = set()
        while True:
            paths = self._named_classes()
            called = set(self.term_methods).union(
                *(self.called.get(key, ()) for key, helper in self.kept.items() if helper is not None))
            todo = [(path, attr) for path in sorted(paths) for attr in sorted(called) if (path, attr) not in done]
            if not todo:
                return
            for path, attr in todo:
                done.add((path, attr))
                for owner in self._lineage(path):
                    dotted, _, cls = owner.rpartition(".")
                    module = self.module(dotted)
                    if module is not None and f"{cls}.{attr}" in module.functions:
                        self.define(f"{dotted}:{cls}.{attr}", 0)
                        break

    def _named_classes(self) -> set[str]:
        """The import paths of the classes kept code names, and of those whose methods were kept."""
        paths = set(self.term_classes)
        for key, helper in self.kept.items():
            if helper is None:
                continue
            paths.update(t[len("class:"):] for _, t in helper.names if t.startswith("class:"))
            dotted, _, name = key.partition(":")
            if "." in name:
                paths.add(f"{dotted}.{name.rpartition('.')[0]}")
        return paths

    def _defining(self, path: str) -> str | None:
        """Where a class named by an import path is defined (`quantization.awq.AWQConfig` re-exported
        by the package from `quantization.awq.awq`)."""
        for _ in range(MAX_DEPTH):
            dotted, _, cls = path.rpartition(".")
            module = self.module(dotted) if dotted else None
            if module is None:
                return None
            if cls in module.classes:
                return path
            found = self.denotes(dotted, cls)
            if not found or not found.startswith("class:") or found[len("class:"):] == path:
                return None
            path = found[len("class:"):]
        return None

    def _lineage(self, path: str) -> list[str]:
        """The class and its bases, depth first (single inheritance, as the registries use it)."""
        if path not in self.lineages:
            self.lineages[path] = self._bases(path)
        return self.lineages[path]

    def _bases(self, path: str) -> list[str]:
        found: list[str] = []
        while path and len(found) < MAX_DEPTH:
            path = self._defining(path) or ""
            if not path or path in found:
                break
            found.append(path)
            dotted, _, cls = path.rpartition(".")
            module = self.module(dotted)
            info = module.classes.get(cls) if module is not None else None
            bases = [self.denotes(dotted, b) for b in (info.bases if info is not None else ()) if "." not in b]
            classes = [b[len("class:"):] for b in bases if b and b.startswith("class:")]
            path = classes[0] if classes else ""
        return found

    def class_entries(self) -> list[Helper]:
        """Each class kept code reads: its first base, and its own methods kept."""
        owners: dict[str, dict[str, str]] = {}
        for key, helper in self.kept.items():
            dotted, _, name = key.partition(":")
            if helper is not None and "." in name:
                cls, _, attr = name.rpartition(".")
                owners.setdefault(f"{dotted}.{cls}", {})[attr] = key
        paths = self._named_classes()
        entries = []
        for path in sorted(paths):
            lineage = self._lineage(path)
            if not lineage:
                continue
            entry = {"bases": lineage[1:], "methods": dict(sorted(owners.get(lineage[0], {}).items()))}
            dotted, _, cls = lineage[0].rpartition(".")
            module = self.module(dotted)
            entry.update(_declared(module.declared_class(cls)) if module is not None and cls in module.classes else {})
            entries.append(Helper(CLASS_PREFIX + path, repr(entry)))
        return entries


def _declared(node: ast.ClassDef) -> dict[str, object]:
    """What `check` reads of a class's own body: a dataclass's fields in order, each with the source of
    its default (None: none, "": one that is not a literal, read as unknown), for
    an instance its registrations make (`LinearAttnModelSpec(config_class=..., arch_names=[...])`); a
    plain enum's member names; and the `model_type` a config class declares, which an `isinstance` of a
    model's config tests."""
    found: dict[str, object] = {}
    if any(_dotted_end(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in node.decorator_list):
        fields: list[tuple[str, str | None]] = []
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                    and "ClassVar" not in ast.unparse(stmt.annotation):
                fields.append((stmt.target.id, _field_default(stmt.value) or ("" if stmt.value is not None else None)))
        found["fields"] = fields
    if [_dotted_end(base) for base in node.bases] == ["Enum"]:
        # `EAGLE = auto()`: `SpeculativeAlgorithm.from_string(name)` looks a member up by its name. A
        # member of an enum with `str` or `int` mixed in equals its value: left unknown.
        found["members"] = [t.id for stmt in node.body if isinstance(stmt, ast.Assign)
                            for t in stmt.targets if isinstance(t, ast.Name) and not t.id.startswith("_")]
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and [ast.unparse(t) for t in stmt.targets] == ["model_type"] \
                and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            found["model_type"] = stmt.value.value
    return found


def _field_default(value: ast.expr | None) -> str | None:
    """The source of a dataclass field's default value: a literal, or `field(default_factory=list)`'s `[]`."""
    if isinstance(value, ast.Call) and _dotted_end(value.func) == "field" and not value.args:
        keywords = {k.arg: k.value for k in value.keywords}
        factory = keywords.get("default_factory")
        if isinstance(factory, ast.Name) and factory.id in ("list", "dict", "tuple"):
            return {"list": "[]", "dict": "{}", "tuple": "()"}[factory.id]
        value = keywords.get("default")
    try:
        ast.literal_eval(value) if value is not None else None
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return ast.unparse(value) if value is not None else None


def _dotted_end(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _own(names: set[str], module: ModuleSummary) -> list[tuple[str, str, str]]:
    """Names read by a definition, each bound in its own module: (local name, module, name there)."""
    return [(n, module.dotted, n) for n in sorted(names)]


def _imported_inside(tree: ast.AST, dotted: str) -> list[tuple[str, str, str]]:
    """(local name, module, name) of a function's own `from module import name` (as `logic.helpers`
    binds them when it reads the import): a module of the package read like the function's own."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = dotted.split(".")
            target = ".".join([*base[: len(base) - node.level], *([node.module] if node.module else [])]) \
                if node.level else node.module or ""
            found.extend((a.asname or a.name, target, a.name) for a in node.names if a.name != "*")
    return found


_MAKING_CALLS = frozenset({"update", "append", "add", "extend"})


def _made_at_import(body: list[ast.stmt], name: str) -> list[ast.stmt] | None:
    """The module statements that make a collection filled at import time, in their `if` blocks:

        BASE = {"fp8": Fp8Config, ...}
        if is_cpu() or is_cuda():
            BASE.update({"mxfp4": Mxfp4Config})

    kept as the name's definition, for `logic.helpers` to run over the platform's facts. None when
    it is changed another way (in a loop, a `try`, by `pop`), which would not be read right."""
    kept: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If):
            inside, orelse = _made_at_import(stmt.body, name), _made_at_import(stmt.orelse, name)
            if inside is None or orelse is None:
                return None
            if inside or orelse:
                kept.append(ast.If(stmt.test, inside or [ast.Pass()], orelse))
        elif _makes(stmt, name):
            kept.append(stmt)
        elif any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)) and not _only_reads(stmt, name):
            return None
    return kept


def _makes(stmt: ast.stmt, name: str) -> bool:
    """`NAME = ...`, `NAME[key] = ...`, `NAME.update(...)` (and append, add, extend)."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and (isinstance(stmt, ast.AnnAssign) or len(stmt.targets) == 1):
        if stmt.value is None:
            return False
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else stmt.targets[0]
        return isinstance(target, ast.Name) and target.id == name or (
            isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return isinstance(func, ast.Attribute) and func.attr in _MAKING_CALLS and isinstance(func.value, ast.Name) \
            and func.value.id == name
    return False


def _only_reads(stmt: ast.stmt, name: str) -> bool:
    """A statement that reads the name without changing it (`OTHER = {**NAME}`)."""
    if isinstance(stmt, (ast.If, ast.For, ast.While, ast.Try, ast.With)):
        return False  # a block: what it does to the name is not looked into
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return False
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name \
                and isinstance(getattr(node, "ctx", None), ast.Load) and node.attr not in ("keys", "values", "items", "get"):
            return False  # a method that may change it
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
                and not isinstance(node.ctx, ast.Load):
            return False
    return True


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def _constant_value(module: ModuleSummary, name: str) -> ast.expr | None:
    """The expression a module-level name is bound to, when it is bound exactly once, at import time."""
    found: list[ast.expr] = []
    for stmt in module_statements(module.declarations.body):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for node in _bound_names(target):  # `NAME[key] = v` fills it, rebinds nothing
                    if node.id == name:
                        found.append(stmt.value if isinstance(target, ast.Name) else None)  # type: ignore[arg-type]
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name) \
                and stmt.target.id == name:
            found.append(stmt.value if isinstance(stmt, ast.AnnAssign) else None)  # type: ignore[arg-type]
    return found[0] if len(found) == 1 and found[0] is not None else None


def _bound_names(target: ast.expr) -> Iterator[ast.Name]:
    """The names an assignment target binds: itself, or the items of a tuple or list it unpacks."""
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - _BUILTINS


def _free_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function reads that it does not bind itself: its module's (or builtins, left out)."""
    bound = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    bound |= {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
            bound.add(inner.id)
        elif isinstance(inner, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in inner.names}
        elif isinstance(inner, ast.ExceptHandler) and inner.name:
            bound.add(inner.name)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) and inner is not node:
            if not isinstance(inner, ast.Lambda):
                bound.add(inner.name)
            if not isinstance(inner, ast.ClassDef):
                bound |= {a.arg for a in inner.args.args}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound - _BUILTINS


def helper_library(places: Mapping[str, Iterable[str]], denotes, module, mutated=lambda module, name: False,
                   changed_by_functions=lambda module, name: True,
                   registrations=lambda module, name: None) -> HelperLibrary:
    """The definitions behind the called names, each looked up in the modules its terms were read in
    (`places`: name -> dotted modules: of the rules whose terms call it, and their call paths).

    `denotes(dotted, name)`: the key a top-level name of that module denotes ("module:name" of a
    function, "import:dotted" of an imported module), or None (`Program.denotes`); `module(dotted)`:
    its summary; `mutated(summary, name)`: the name is changed in place (`Program.mutated_anywhere`);
    `changed_by_functions(summary, name)`: by a used function, not only at import time;
    `registrations(summary, name)`: what such a registry's functions append at import, or None.
    """
    # A method a term calls on a class kept code names (`SpeculativeAlgorithm.from_string(a)
    # .get_platform_worker_cls()`) is kept as one kept code calls.
    term_methods = frozenset(name[len(METHOD_PREFIX):] for name in places if name.startswith(METHOD_PREFIX))
    finder = _Finder(denotes, module, mutated, changed_by_functions, registrations, term_methods)
    entries = []
    for name in sorted(places):
        if name.startswith(METHOD_PREFIX):
            continue
        if name.startswith(RUN_PREFIX):
            finder.define(name[len(RUN_PREFIX):], 0)  # read by its key, no name binds it
            continue
        keys = {key for key in (finder.resolve(dotted, name) for dotted in sorted(places[name])) if key is not None}
        if len(keys) != 1:
            continue  # nowhere, or different functions in different modules: left unknown
        key = keys.pop()
        if key.startswith("class:"):  # a class the term reads a method of: kept with its methods
            finder.term_classes.add(key[len("class:"):])
            entries.append((name, key))
        elif not key.startswith(_NOT_KEPT) and finder.define(key, 0):
            entries.append((name, key))
    finder.classes()
    helpers = tuple(sorted([*(h for h in finder.kept.values() if h is not None), *finder.class_entries()],
                           key=lambda h: h.key))
    kept = {h.key for h in helpers}
    return HelperLibrary(tuple(e for e in entries if e[1] in kept or e[1].startswith("class:")
                               and CLASS_PREFIX + e[1][len("class:"):] in kept), tuple(_bound_to(helpers, kept)))


def _bound_to(helpers: tuple[Helper, ...], kept: set[str]) -> Iterator[Helper]:
    """Each helper with only the names whose definitions were kept (a cycle's member may have failed)."""
    for helper in helpers:
        names = tuple(n for n in helper.names if n[1].startswith(_NOT_KEPT) or n[1] in kept)
        yield helper if names == helper.names else Helper(helper.key, helper.source, names)
