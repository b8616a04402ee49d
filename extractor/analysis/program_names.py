"""The program's names: imports and constants of a module, values changed in place, enums, what a
dotted name denotes, results memoized on the record, methods and classes of values. A mixin of
`callgraph.Program`, which holds the modules and the questions each walk asks."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

import libcst as cst

from ..core.model import Lit
from .events import FunctionInfo
from .modules import ModuleSummary
from .pyast import literal as ast_literal
from .scope import Bound, Choice, Env, dotted_name
from .reuse import StaleReuse
from .static_values import MISSING

# What follows a name changed in place: `.append(`-like calls, or an item assigned (`[key] = `).
# `getattr(server_args, "_model_config", None)`: a result kept on the record (`Program.memoizes`).
# `if hasattr(self, "model_config"): return self.model_config` (0.5.10-0.5.18's ServerArgs.get_model_config).
_MEMO_HAS = re.compile(r"hasattr\(\s*(\w+)\s*,\s*[\"'](\w+)[\"']\s*\)")
_MEMO_READ = re.compile(r"(\w+)\s*=\s*getattr\(\s*(\w+)\s*,\s*[\"'](_\w+)[\"']\s*,\s*None\s*\)")
_CHANGED_IN_PLACE = re.compile(r"\s*(\.\s*(append|add|extend|update|insert|remove|discard|pop|clear|setdefault)\s*\(|"
                               r"\[[^\]]*\]\s*=[^=])")


_MAX_REEXPORTS = 4  # modules a constant's name is imported through, followed to where it is written


class NameQueries:
    """What the names of the program denote (mixed into `callgraph.Program`)."""

    def local_imports(self, info: FunctionInfo) -> Mapping[str, str]:
        return info.imports

    # --- name resolution -----------------------------------------------------------------------

    def imported_constant(self, info: FunctionInfo, name: str) -> Lit | None:
        """The literal value of a name the function imports from another module of the package, when
        that module binds it once to a literal or to a collection built from literals."""
        return self._ask(("imported", info.key, name), lambda: self._imported_constant(info, name), revive=kept_lit)

    def _imported_constant(self, info: FunctionInfo, name: str) -> Lit | None:
        module = self.modules[info.module]
        target = self.local_imports(info).get(name) or module.imports.get(name)
        if target is None or "." not in target:
            return None
        if target not in self._imported_constants:
            dotted, _, attr = target.rpartition(".")
            found = None
            with self._loading(True):
                owner = self.module(dotted)
                if owner is not None:
                    found = owner.constants.get(attr)
                    if found is None:
                        value = self._static.value(owner, ast.Name(attr))
                        found = Lit(value) if value is not MISSING else None
            self._imported_constants[target] = found
        return self._imported_constants[target]

    def constant_display(self, info: FunctionInfo, name: str) -> str | None:
        """How the module that defines a constant the function reads writes it: "list" or "tuple" (its
        Lit keeps neither), or None."""
        return self._ask(("display", info.key, name), lambda: self._constant_display(info, name))

    def _constant_display(self, info: FunctionInfo, name: str) -> str | None:
        module = self.modules[info.module]
        target = self.local_imports(info).get(name) or module.imports.get(name)
        owner, attr = module, name
        with self._loading(True):
            if target is not None:
                if "." not in target:
                    return None
                dotted, _, attr = target.rpartition(".")
                owner = self.module(dotted)
            for _ in range(_MAX_REEXPORTS):  # `server_args` imports what `choices` defines
                if owner is None or "." in attr:
                    return None
                kind = self._static.display(owner, attr)
                if kind is not None:
                    return kind
                place = self._static.resolve(owner, attr)
                if place is None or place[0] is owner:
                    return None
                owner, attr = place
        return None

    def module_constant(self, info: FunctionInfo, name: str) -> Lit | None:
        """The value of a name the function's own module binds to a collection built from literals
        (`MUSE = frozenset({...})`), which the module's literal constants leave out."""
        return self._ask(("constant", info.key, name, self._may_load), lambda: self._module_constant(info, name),
                         revive=kept_lit)

    def _module_constant(self, info: FunctionInfo, name: str) -> Lit | None:
        key = f"{info.module}.{name}"
        if key not in self._imported_constants:
            module = self.modules[info.module]
            found = None
            if name.isupper() and not self.mutated_anywhere(module, name):
                value = self._static.value(module, ast.Name(name))
                found = Lit(value) if value is not MISSING else None
            self._imported_constants[key] = found
        return self._imported_constants[key]

    def mutated_anywhere(self, module: ModuleSummary, name: str) -> bool:
        """Is the name changed in place anywhere in its module (`_REGISTRY.append(fn)` in a decorator)?
        The static value reads module-level statements only: a registry is no constant."""
        key = (module.dotted, name)

        def changed() -> bool:
            if key not in self._mutated:
                self._mutated[key] = self._changed_in_place(module, name)
            return self._mutated[key]

        return self._ask(("mutated", module.dotted, name), changed)

    def visible(self, dotted: str) -> ModuleSummary | None:
        """The module if it is loaded, without loading it."""
        return self._ask(("visible", dotted), lambda: self.modules.get(dotted), lambda found: found is not None,
                         lambda there: self._loaded(dotted) if there else None)

    def changed_by_functions(self, module: ModuleSummary, name: str) -> bool:
        """Is the name changed in place by a used function of its module, not only by statements run at
        import time (`if is_cpu(): METHODS.update(...)`, which the helpers keep as the name's making)?"""
        _, registrars = self._changes_in_place(module, name)
        return any(self._used(module, registrar) for registrar in registrars)

    def registrations(self, module: ModuleSummary, name: str) -> list[tuple[str, ast.expr]] | None:
        """What a registry that functions fill holds once the package is imported: the entry of each
        `register_x(entry)` statement at module level of a module imported by then, with that module,
        in the order of the modules' names (`register_linear_attn_model(LinearAttnModelSpec(...))` in
        `configs/gigachat35.py`, which `configs/__init__.py` imports). Imported by then: the read
        modules, and those the registry's package imports in its `__init__`. None when a function that
        changes it does more than append its one parameter, when one is called from anywhere else (a
        function: what the registry holds would depend on what ran), or a module is not at hand."""
        at_import, registrars = self._changes_in_place(module, name)
        if at_import or not registrars or not all(_appends_its_parameter(module.function_node(r), name)
                                                  for r in registrars):
            return None
        package = module.dotted.rpartition(".")[0]
        init = self.module(package)
        imported = {target.rpartition(".")[0] if self.module(target) is None else target
                    for target in (init.imports.values() if init is not None else ())
                    if target.startswith(package + ".")}
        found: list[tuple[str, ast.expr]] = []
        for dotted in sorted({*self.read, *imported}):
            summary = self.module(dotted)
            if summary is None:
                return None
            if not any(registrar in summary.text for registrar in registrars):
                continue
            # Every mention a call statement at module level: a decorator (`@register_x`), a call in a
            # function or the function passed on would fill it otherwise.
            mentions = [node for node in ast.walk(summary.syntax) if isinstance(node, ast.Name) and node.id in registrars]
            at_top = [stmt.value for stmt in summary.syntax.body if isinstance(stmt, ast.Expr)
                      and isinstance(stmt.value, ast.Call) and stmt.value.func in mentions]
            if len(at_top) != len(mentions) or any(len(c.args) != 1 or c.keywords for c in at_top):
                return None
            found += [(dotted, call.args[0]) for call in at_top]
        return found

    def _changed_in_place(self, module: ModuleSummary, name: str) -> bool:
        """`NAME.append(...)`-like calls or `NAME[key] = ...` in the module's text. A change inside a
        function counts only if the function is used: called, or a decorator, in its module or in a
        read file (`register_model_config_factory`, which only a plugin calls, leaves its registry empty
        in a launch of the package itself)."""
        at_import, registrars = self._changes_in_place(module, name)
        return at_import or any(self._used(module, registrar) for registrar in registrars)

    def _changes_in_place(self, module: ModuleSummary, name: str) -> tuple[bool, list[str]]:
        """(changed at import time, the functions that change it), each place the name starts a word
        tried (a pattern per name would be compiled in every process)."""
        if self.tree is None:
            return True, []
        text = self.tree.read_text(module.path)
        at_import, registrars = False, set()
        start = text.find(name)
        while start >= 0:
            if (start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")) \
                    and _CHANGED_IN_PLACE.match(text, start + len(name)):
                owner = module.functions.outermost(text.count("\n", 0, start) + 1)
                if owner is None:
                    at_import = True
                else:
                    registrars.add(owner)
            start = text.find(name, start + 1)
        return at_import, sorted(registrars)

    def _used(self, module: ModuleSummary, function: str) -> bool:
        """Is a module-level function called or applied as a decorator anywhere but its own lines, in its
        module or a read file, or applied as a decorator in a loaded module that imports it?"""
        use = re.compile(rf"(?<![\w.]){re.escape(function)}\s*\(|@\s*{re.escape(function)}\b")
        first, last = module.functions.lines_of(function)
        own = module.text.splitlines()
        outside = "\n".join(own[: first - 1] + own[last:])
        if use.search(outside):
            return True
        if any(use.search(self.modules[dotted].text) for dotted in self.read if dotted != module.dotted):
            return True
        # A class decorator of a module the launch loaded (`@register_model_config_parser("hf")` in
        # the module whose `get_config` takes a parser from the registry): applied when it is imported.
        decorator = re.compile(rf"^\s*@\s*{re.escape(function)}\b", re.MULTILINE)
        target = f"{module.dotted}.{function}"
        return any(decorator.search(other.text) for dotted, other in sorted(self.modules.items())
                   if dotted != module.dotted and other.imports.get(function) == target)

    def is_enum(self, info: FunctionInfo, name: str) -> bool:
        """Is `name`, as seen from the function, an Enum class? Read from the class line, without parsing."""
        return self._ask(("enum", info.key, name), lambda: self._is_enum(info, name))

    def _is_enum(self, info: FunctionInfo, name: str) -> bool:
        module = self.modules[info.module]
        target = self.local_imports(info).get(name) or module.imports.get(name) or f"{info.module}.{name}"
        found = self._enum_classes.get(target)
        if found is None:
            found = False
            dotted, _, cls = target.rpartition(".")
            parsed = self.modules.get(dotted)
            if parsed is not None:
                found = cls in parsed.classes and parsed.classes[cls].is_enum
            elif self.tree is not None:
                for path in (dotted.replace(".", "/") + ".py", dotted.replace(".", "/") + "/__init__.py"):
                    if self.tree.has(path):
                        pattern = re.compile(rf"^class {re.escape(cls)}\(([^)]*)\)\s*:", re.M)
                        match = pattern.search(self.tree.read_text(path))
                        found = bool(match and re.search(r"\b(Int|Str)?(Enum|Flag)\b", match.group(1)))
                        break
            self._enum_classes[target] = found
        return found

    def enum_member(self, info: FunctionInfo, name: str, member: str) -> object:
        """`class E(str, Enum): M = "m"` compares "m" == E.M; a plain Enum is parsed from its member names
        (`SpeculativeAlgorithm.from_string("EAGLE")`), so the name is what a flag holds."""
        return self._ask(("member", info.key, name, member), lambda: self._enum_member(info, name, member),
                         revive=revived)

    def enum_members(self, info: FunctionInfo, name: str) -> tuple[str, ...]:
        """The member names an Enum class declares (`EAGLE = auto()`), in order; () when not found."""
        return self._ask(("members", info.key, name), lambda: self._enum_members(info, name), revive=tuple)

    def _enum_members(self, info: FunctionInfo, name: str) -> tuple[str, ...]:
        module = self.modules[info.module]
        target = self.local_imports(info).get(name) or module.imports.get(name) or f"{info.module}.{name}"
        dotted, _, cls = target.rpartition(".")
        with self._loading(True):
            found = self.module(dotted)
        if found is None or cls not in found.classes or not found.classes[cls].is_enum:
            return ()
        return tuple(t.id for stmt in found.declared_class(cls).body if isinstance(stmt, ast.Assign)
                     for t in stmt.targets if isinstance(t, ast.Name) and t.id.isupper())

    def _enum_member(self, info: FunctionInfo, name: str, member: str) -> object:
        module = self.modules[info.module]
        target = self.local_imports(info).get(name) or module.imports.get(name) or f"{info.module}.{name}"
        dotted, _, cls = target.rpartition(".")
        with self._loading(True):
            found = self.module(dotted)
        classes = found.classes if found is not None else {}
        if cls not in classes:
            return member
        if not any(b in ("str", "StrEnum", "enum.StrEnum") for b in classes[cls].bases):
            # Parsed by a `from_string` of its own that maps strings to members (`"zigzag"` to
            # `ContextParallelStrategyKind.ZIGZAG`): the member is what the flag holds to get it.
            return _parsed_from_strings(found, cls).get(member, member)  # type: ignore[union-attr]
        for stmt in found.declared_class(cls).body:  # type: ignore[union-attr]
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == member for t in stmt.targets):
                value = ast_literal(stmt.value)
                return value.value if value is not None and isinstance(value.value, str) else member
        return member

    def _loading(self, allowed: bool) -> MayLoad:
        """Parse modules outside the read set only for calls that can reach the server arguments."""
        return MayLoad(self, allowed)

    def _lookup(self, info: FunctionInfo, name: str) -> tuple[str, str] | None:
        """What a bare name in a function denotes: ("function"|"class"|"module", dotted key)."""
        module = self.modules[info.module]
        nested = f"{info.qualname}.{name}"
        if nested in module.functions:
            return "function", f"{info.module}:{nested}"
        target = self.local_imports(info).get(name)
        if target is None:
            if name in module.functions:
                return "function", f"{info.module}:{name}"
            if name in module.classes:
                return "class", f"{info.module}:{name}"
            target = module.imports.get(name)
        if target is None:
            return None
        return self._resolve_dotted(target)

    def _resolve_dotted(self, target: str) -> tuple[str, str] | None:
        parts = target.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            dotted, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
            module = self.module(dotted)
            if module is None:
                continue
            if rest in module.functions:
                return "function", f"{dotted}:{rest}"
            if rest in module.classes:
                return "class", f"{dotted}:{rest}"
            reexport = module.imports.get(rest)
            if reexport is not None and reexport != target:
                return self._resolve_dotted(reexport)
            if "." not in rest:  # `from .common import *`: each starred module in turn
                for starred in sorted(v for k, v in module.imports.items() if k.startswith("*")):
                    found = self._resolve_dotted(f"{starred}.{rest}") if starred != dotted else None
                    if found is not None:
                        return found
            return None
        if self.module(target) is not None:
            return "module", target
        return None

    def denotes(self, dotted: str, name: str) -> str | None:
        """What a top-level name of a module denotes, for the helpers terms call (`analysis.helpers`):
        "module:name" of a function (or of a name a package module may bind: a constant), "import:dotted"
        of something imported from outside the package, "class:dotted" of a class of the package (a value
        that is no None, whatever else it is); None for a name neither defined nor imported here (it may
        be a constant the module binds). Loads modules."""
        with self._loading(True):
            module = self.module(dotted)
            if module is None:
                return None
            if name in module.classes:
                return f"class:{dotted}.{name}"
            if name in module.functions:
                return f"{dotted}:{name}"
            target = module.imports.get(name)
            if target is None:
                return None
            resolved = self._resolve_dotted(target)
            if resolved is not None:
                return resolved[1] if resolved[0] == "function" else f"class:{target}" if resolved[0] == "class" \
                    else f"import:{target}"
            head, _, rest = target.rpartition(".")
            if head and self.module(head) is not None:
                return f"{head}:{rest}"  # a constant of a package module
            root = target.split(".")[0]
            if self.tree is not None and any(self.tree.has(f"{root}/{end}") for end in ("__init__.py",)):
                return None  # in the package, not found
            return f"import:{target}"

    def memoizes(self, key: str) -> bool:
        """Does the function keep its result on the arguments' record and return it when called again
        (`memo = getattr(server_args, "_model_config", None)` ... `return memo` ... `server_args._model_config = x`,
        or `if hasattr(self, "model_config"): return self.model_config` ... `self.model_config = x`)?"""
        found = self._memoizing.get(key)
        if found is None:
            fn = self.loaded_function(key)
            found = False
            if fn is not None:
                module = self.modules[fn.module]
                text = "\n".join(module.lines[fn.line - 1: fn.end_line])
                found = any(re.search(rf"\breturn\s+{re.escape(kept)}\b", text)
                            and re.search(rf"\b{re.escape(owner)}\.{re.escape(name)}\s*=[^=]", text)
                            for kept, owner, name in _MEMO_READ.findall(text)) \
                    or any(re.search(rf"\breturn\s+{re.escape(owner)}\.{re.escape(name)}\b", text)
                           and re.search(rf"\b{re.escape(owner)}\.{re.escape(name)}\s*=[^=]", text)
                           for owner, name in _MEMO_HAS.findall(text))
            self._memoizing[key] = found
        return found

    def loaded_function(self, key: str) -> FunctionInfo | None:
        """A function of a module already loaded, by key; no question asked, nothing loaded."""
        dotted, qualname = key.split(":", 1)
        module = self.modules.get(dotted)
        return module.functions.get(qualname) if module is not None else None

    def _function_by_key(self, key: str) -> FunctionInfo | None:
        dotted, qualname = key.split(":", 1)
        return self.function(dotted, qualname)

    def _method(self, class_key: str, method: str, seen: frozenset[str] = frozenset()) -> FunctionInfo | None:
        dotted, cls = class_key.split(":", 1)
        module = self.module(dotted)
        if module is None or cls not in module.classes or class_key in seen:
            return None
        fn = module.functions.get(f"{cls}.{method}")
        if fn is not None:
            self._ask(("function", fn.key), lambda: module.functions.digest(f"{cls}.{method}"))
            return fn
        for base in module.classes[cls].bases:
            resolved = self._class_of_name(module, base)
            if resolved is not None:
                holder = self._method(resolved, method, seen | {class_key})
                if holder is not None:
                    return holder
        return None

    def _class_of_name(self, module: ModuleSummary, name: str) -> str | None:
        if name in module.classes:
            return f"{module.dotted}:{name}"
        target = module.imports.get(name.split(".")[0])
        if target is None:
            return None
        resolved = self._resolve_dotted(target + name[len(name.split(".")[0]) :])
        return resolved[1] if resolved and resolved[0] == "class" else None

    def _class_of_value(self, info: FunctionInfo, node: cst.BaseExpression, env: Env) -> str | None:
        """The class of an instance expression: `Cls(...)`, `Cls.from_x(...)`, or a local bound to one."""
        value = env.get(node.value) if type(node) is cst.Name else None
        if isinstance(value, Bound):
            return self._class_of_value(info, value.node, value.env)
        if isinstance(value, Choice):  # `algo = None; if ...: algo = Cls.from_string(...)`
            for _, option in value.options:
                if isinstance(option, Bound):
                    found = self._class_of_value(info, option.node, option.env)
                    if found is not None:
                        return found
            return None
        if type(node) is cst.Call:
            name = dotted_name(node.func)
            if name is None:
                return None
            head = name.split(".")[0]
            found = self._lookup(info, head)
            if found and found[0] == "class" and name.count(".") <= 1:
                return found[1]
        return None


def kept_lit(kept: object) -> Lit | None:
    """A kept constant answer as the value it was (`reuse.canonical` wrote it)."""
    if kept is None:
        return None
    try:
        return Lit(ast.literal_eval(kept[1]))  # type: ignore[index]
    except (ValueError, SyntaxError, TypeError, IndexError):
        raise StaleReuse(f"cannot read the kept constant {kept!r}") from None


def revived(kept: object) -> object:
    if isinstance(kept, tuple) and kept[:1] == ("repr",):
        raise StaleReuse(f"cannot read the kept answer {kept!r}")
    return kept


class MayLoad:
    """`with program._loading(allowed)`: sets whether modules outside the read set may be parsed, and
    puts back what it was. A class, not a @contextmanager generator: entered for most calls a walk
    resolves, where the generator's setup cost showed."""

    __slots__ = ("program", "allowed", "previous")

    def __init__(self, program: NameQueries, allowed: bool) -> None:
        self.program = program
        self.allowed = allowed

    def __enter__(self) -> None:
        self.previous = self.program._may_load
        self.program._may_load = self.allowed

    def __exit__(self, *exc: object) -> None:
        self.program._may_load = self.previous


def _parsed_from_strings(module: ModuleSummary, cls: str) -> dict[str, str]:
    """Member name -> the string an Enum's own parser maps to it, where the class has one parser
    (`from_string`, any `from_*` classmethod or staticmethod) written as `if value == "zigzag":
    return cls.ZIGZAG`; {} otherwise (the members are parsed from their names)."""
    declared = module.declared_class(cls)
    if not any(isinstance(stmt, ast.FunctionDef) and stmt.name.startswith("from") for stmt in declared.body):
        return {}  # no parser of its own: the module's function bodies need not be parsed
    found: list[dict[str, str]] = []
    for method in module.class_node(cls).body:
        if not isinstance(method, ast.FunctionDef) or not method.name.startswith("from"):
            continue
        decorators = {d.id for d in method.decorator_list if isinstance(d, ast.Name)}
        skip = 1 if "classmethod" in decorators else 0 if "staticmethod" in decorators else None
        if skip is None or len(method.args.args) <= skip:
            continue
        param, owners = method.args.args[skip].arg, {cls, *(method.args.args[0].arg for _ in range(skip))}
        mapping: dict[str, str] = {}
        for node in ast.walk(method):
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1
                    and isinstance(node.test.ops[0], ast.Eq) and isinstance(node.test.left, ast.Name)
                    and node.test.left.id == param and isinstance(node.test.comparators[0], ast.Constant)
                    and isinstance(node.test.comparators[0].value, str) and len(node.body) == 1
                    and isinstance(node.body[0], ast.Return)):
                continue
            returned = node.body[0].value
            if isinstance(returned, ast.Attribute) and isinstance(returned.value, ast.Name) \
                    and returned.value.id in owners:
                mapping.setdefault(returned.attr, node.test.comparators[0].value)
        if mapping:
            found.append(mapping)
    return found[0] if len(found) == 1 else {}


class EnumNames:
    """The Enum class names a function sees, decided lazily by the program."""

    def __init__(self, program: NameQueries, info: FunctionInfo) -> None:
        self.program = program
        self.info = info

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name[:1].isupper() and self.program.is_enum(self.info, name)

    def __bool__(self) -> bool:
        return True

    def member(self, name: str, member: str) -> object:
        """What `E.MEMBER` compares equal to: the value of a `str` Enum, else the member's name."""
        return self.program.enum_member(self.info, name, member)

    def members(self, name: str) -> tuple[str, ...]:
        """The names of the Enum's members (a plain Enum is parsed from them), () when not known."""
        return self.program.enum_members(self.info, name)


class ScopeConstants(Mapping):
    """The literal constants a function sees: its module's, and names it imports (at module level or in
    its body) that are constants of another module of the package (`SP_SUPPORTED_ARCHITECTURES`),
    looked up when read."""

    def __init__(self, program: NameQueries, info: FunctionInfo, own: Mapping[str, Lit]) -> None:
        self.program = program
        self.info = info
        self.own = own

    def __getitem__(self, name: str) -> Lit:
        found = self.own.get(name)
        if found is None:
            found = self.program.imported_constant(self.info, name) or self.program.module_constant(self.info, name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in self.own or self.program.imported_constant(self.info, name) is not None \
            or self.program.module_constant(self.info, name) is not None

    def display(self, name: str) -> str | None:
        """"list" or "tuple": how the constant's module writes it (`NameQueries.constant_display`)."""
        return self.program.constant_display(self.info, name)

    def fixed(self, name: str) -> Lit | None:
        """The value, when the name is never changed in place (a registry filled by decorators is not)."""
        found = self.get(name)
        if found is None:
            return None
        module = self.program.modules[self.info.module]
        target = self.program.local_imports(self.info).get(name) or module.imports.get(name)
        owner = self.program.visible(target.rpartition(".")[0]) if target else module
        if owner is None or self.program.mutated_anywhere(owner, target.rpartition(".")[2] if target else name):
            return None
        return found

    def __iter__(self):
        return iter(self.own)

    def __len__(self) -> int:
        return len(self.own)


def _appends_its_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """`def register(spec): NAME.append(spec)`, logging aside: all the function does to the registry."""
    params = [a.arg for a in function.args.args]
    if len(params) != 1 or function.args.vararg or function.args.kwarg or function.args.kwonlyargs:
        return False
    appends = 0
    for stmt in function.body:
        call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if call is None or not isinstance(call.func, ast.Attribute) or not isinstance(call.func.value, ast.Name):
            return False
        if call.func.value.id == name and call.func.attr == "append" and len(call.args) == 1 \
                and isinstance(call.args[0], ast.Name) and call.args[0].id == params[0] and not call.keywords:
            appends += 1
        elif call.func.value.id not in ("logger", "logging"):
            return False
    return appends == 1
