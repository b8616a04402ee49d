"""The program: modules loaded on demand, names and calls resolved, memoized walks, inlined helpers.

Calls are followed into any module of the package on demand, so the dispatch through
`SpeculativeAlgorithm.handle_server_args` in `speculative/spec_info.py` counts; the run
(`analysis.run`) enters functions in execution order from the entry points found here
(`ServerArgs.__post_init__` / `resolve_once` / `check_server_args`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

import libcst as cst

from ..core.errors import ParseError, SourceError
from ..core.formula import disj, fields_read, neg, render
from ..core.model import FALSE, Flag, Lit, Notice, Rule, TermKind
from ..sources.trees import SourceTree
from .guards import CallEvent, FunctionInfo, FunctionSummary, import_bindings, walk_function
from .lines import iter_statements
from .modules import ModuleSummary, outline
from .normalize import classify, normalize
from .pyast import literal as ast_literal
from .scope import FIELD_KEY, Bound, Choice, Env, Scope, bind, dotted_name, field_of, is_alias
from .registry import registry_of, runs_call
from .static_values import MISSING, Index

ENTRY_METHODS = ("__post_init__", "resolve_once", "check_server_args")
ENTRY_FUNCTIONS = ("run_resolution_pipeline",)
MAX_INLINE = 6  # nested predicate inlining
MAX_RETURNS = 8  # a helper read as the values it returns has at most this many `return`s


class _Enums:
    """The Enum class names a function sees, decided lazily by the program."""

    def __init__(self, program: Program, info: FunctionInfo) -> None:
        self.program = program
        self.info = info

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name[:1].isupper() and self.program.is_enum(self.info, name)

    def __bool__(self) -> bool:
        return True

    def member(self, name: str, member: str) -> object:
        """What `E.MEMBER` compares equal to: the value of a `str` Enum, else the member's name."""
        return self.program.enum_member(self.info, name, member)


class _Constants(Mapping):
    """The literal constants a function sees: its module's, and names it imports (at module level or in
    its body) that are constants of another module of the package (`SP_SUPPORTED_ARCHITECTURES`),
    looked up when read."""

    def __init__(self, program: Program, info: FunctionInfo, own: Mapping[str, Lit]) -> None:
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

    def fixed(self, name: str) -> Lit | None:
        """The value, when the name is never changed in place (a registry filled by decorators is not)."""
        found = self.get(name)
        if found is None:
            return None
        module = self.program.modules[self.info.module]
        target = self.program.local_imports(self.info).get(name) or module.imports.get(name)
        owner = self.program.modules.get(target.rpartition(".")[0]) if target else module
        if owner is None or self.program.mutated_anywhere(owner, target.rpartition(".")[2] if target else name):
            return None
        return found

    def __iter__(self):
        return iter(self.own)

    def __len__(self) -> int:
        return len(self.own)


class Program:
    """The read modules plus any package module a call leads to, with memoized function walks."""

    def __init__(self, tree: SourceTree | None, modules: Iterable[ModuleSummary]) -> None:
        self.tree = tree
        self.modules: dict[str, ModuleSummary] = {m.dotted: m for m in modules}
        self.read = tuple(self.modules)
        self._paths = set(tree.paths()) if tree is not None else set()
        self._missing: set[str] = set()
        self._summaries: dict[tuple, FunctionSummary] = {}
        self._function_imports: dict[str, dict[str, str]] = {}
        self._may_load = True
        self._enum_classes: dict[str, bool] = {}
        self._imported_constants: dict[str, Lit | None] = {}
        self._static = Index(self.modules.values(), load=self.module)
        self._writes: dict[str, frozenset[str]] = {}
        self._writing: set[str] = set()
        self._registered: list[FunctionInfo] | None = None
        self._mutated: dict[tuple[str, str], bool] = {}  # (module, name) -> changed in place somewhere
        self._inlining: set[str] = set()  # helpers whose returns are being read (a cycle stops there)
        self.entry_points = self._entry_points()
        # Methods and properties of ServerArgs: `self.modelexpress_url` is a computed value, not a flag.
        self.server_args_methods = frozenset(
            method
            for dotted in self.read
            for name, cls in self.modules[dotted].classes.items()
            if name.rsplit(".", 1)[-1] == "ServerArgs"
            for method in cls.methods
        )

        self.server_args_constants = self._record_constants()

    def _record_constants(self) -> dict[str, Lit]:
        """Upper-case constants of the ServerArgs class bound to literals or collections of them."""
        found: dict[str, Lit] = {}
        for dotted in sorted(self.read):
            module = self.modules[dotted]
            for name, cls in module.classes.items():
                if name.rsplit(".", 1)[-1] != "ServerArgs" or module.syntax is None:
                    continue
                for stmt in cls.node.body:
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                        [stmt.target] if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
                    for target in targets:
                        if isinstance(target, ast.Name) and target.id.isupper():
                            value = self._static.value(module, stmt.value)
                            if value is not MISSING:
                                found.setdefault(target.id, Lit(value))
        return found

    # --- modules and functions -----------------------------------------------------------------

    def module(self, dotted: str) -> ModuleSummary | None:
        """A module by dotted name, parsed on first use if the package has it."""
        if dotted in self.modules:
            return self.modules[dotted]
        if dotted in self._missing or self.tree is None or not self._may_load:
            return None
        base = dotted.replace(".", "/")
        for path in (base + ".py", base + "/__init__.py"):
            if path in self._paths:
                try:
                    module = outline(path, self.tree.read_text(path))
                except (ParseError, SourceError):
                    break
                self.modules[dotted] = module
                return module
        self._missing.add(dotted)
        return None

    def function(self, dotted: str, qualname: str) -> FunctionInfo | None:
        module = self.module(dotted)
        return module.functions.get(qualname) if module else None

    def _entry_points(self) -> list[FunctionInfo]:
        found = [
            fn
            for dotted in self.read
            for cls in self.modules[dotted].classes
            if cls.rsplit(".", 1)[-1] == "ServerArgs"
            for name in ENTRY_METHODS
            if (fn := self.modules[dotted].functions.get(f"{cls}.{name}")) is not None
        ]
        if not found:
            found = [
                fn for dotted in self.read for name in ENTRY_FUNCTIONS if (fn := self.modules[dotted].functions.get(name))
            ]
        if not found:
            found = [fn for d in self.read for fn in self.modules[d].functions.values() if fn.name == "__post_init__"]
        return found

    def scope(self, info: FunctionInfo, extra_aliases: frozenset[str] = frozenset(), depth: int = 0) -> Scope:
        """The scope of a function's walk; its `inline` hook reads predicates `depth` calls deep."""
        module = self.modules[info.module]
        holder: list[Scope] = []

        def inline(call: cst.Call, env: Env):
            return self._inline(info, holder[0], call, env, depth)

        def call_writes(call: cst.Call, env: Env) -> frozenset[str]:
            return self.call_writes(info, holder[0], call, env)

        def inline_cases(call: cst.Call, env: Env):
            return self._inline_cases(info, holder[0], call, env, depth)

        scope = Scope(info.aliases | extra_aliases, _Constants(self, info, module.constants), _Enums(self, info),
                      inline=inline,
                      methods=self.server_args_methods, record_constants=self.server_args_constants,
                      call_writes=call_writes, inline_cases=inline_cases)
        holder.append(scope)
        return scope

    def summary(self, info: FunctionInfo, env: Env | None = None, key: tuple = (), aliases=frozenset()) -> FunctionSummary:
        defaults = _defaults(info, env, aliases) if env is not None else {}
        if defaults:  # a call leaves parameters out: they hold their defaults, unlike in the function alone
            env = {**defaults, **env}  # type: ignore[dict-item]
            key = (*key, ("<defaults>", ",".join(sorted(defaults))))
        cache_key = (info.key, key, aliases)
        summary = self._summaries.get(cache_key)
        if summary is None:
            module = self.modules[info.module]
            summary = walk_function(info, self.scope(info, aliases), module.spans, env)
            self._summaries[cache_key] = summary
        return summary

    def local_imports(self, info: FunctionInfo) -> dict[str, str]:
        imports = self._function_imports.get(info.key)
        if imports is None:
            imports = {}
            for stmt in iter_statements(info.node.body.body):
                if isinstance(stmt, (cst.Import, cst.ImportFrom)):
                    imports.update(import_bindings(stmt, info.file))
            self._function_imports[info.key] = imports
        return imports

    # --- name resolution -----------------------------------------------------------------------

    def imported_constant(self, info: FunctionInfo, name: str) -> Lit | None:
        """The literal value of a name the function imports from another module of the package, when
        that module binds it once to a literal or to a collection built from literals."""
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
                    if found is None and owner.syntax is not None:
                        value = self._static.value(owner, ast.Name(attr))
                        found = Lit(value) if value is not MISSING else None
            self._imported_constants[target] = found
        return self._imported_constants[target]

    def module_constant(self, info: FunctionInfo, name: str) -> Lit | None:
        """The value of a name the function's own module binds to a collection built from literals
        (`MUSE = frozenset({...})`), which the module's literal constants leave out."""
        key = f"{info.module}.{name}"
        if key not in self._imported_constants:
            module = self.modules[info.module]
            found = None
            if name.isupper() and module.syntax is not None and not self.mutated_anywhere(module, name):
                value = self._static.value(module, ast.Name(name))
                found = Lit(value) if value is not MISSING else None
            self._imported_constants[key] = found
        return self._imported_constants[key]

    def mutated_anywhere(self, module: ModuleSummary, name: str) -> bool:
        """Is the name changed in place anywhere in its module (`_REGISTRY.append(fn)` in a decorator)?
        The static value reads module-level statements only: a registry is no constant."""
        key = (module.dotted, name)
        if key not in self._mutated:
            self._mutated[key] = self._changed_in_place(module, name)
        return self._mutated[key]

    def _changed_in_place(self, module: ModuleSummary, name: str) -> bool:
        if self.tree is None:
            return True
        pattern = re.compile(rf"\b{re.escape(name)}\s*(\.\s*(append|add|extend|update|insert|remove|discard|pop|clear|"
                             rf"setdefault)\s*\(|\[[^\]]*\]\s*=[^=])")
        return bool(pattern.search(self.tree.read_text(module.path)))

    def is_enum(self, info: FunctionInfo, name: str) -> bool:
        """Is `name`, as seen from the function, an Enum class? Read from the class line, without parsing."""
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
                    if path in self._paths:
                        pattern = re.compile(rf"^class {re.escape(cls)}\(([^)]*)\)\s*:", re.M)
                        match = pattern.search(self.tree.read_text(path))
                        found = bool(match and re.search(r"\b(Int|Str)?(Enum|Flag)\b", match.group(1)))
                        break
            self._enum_classes[target] = found
        return found

    def enum_member(self, info: FunctionInfo, name: str, member: str) -> object:
        """`class E(str, Enum): M = "m"` compares "m" == E.M; a plain Enum is parsed from its member names
        (`SpeculativeAlgorithm.from_string("EAGLE")`), so the name is what a flag holds."""
        module = self.modules[info.module]
        target = self.local_imports(info).get(name) or module.imports.get(name) or f"{info.module}.{name}"
        dotted, _, cls = target.rpartition(".")
        with self._loading(True):
            found = self.module(dotted)
        classes = found.classes if found is not None else {}
        if cls not in classes:
            return member
        node = classes[cls].node
        if not any(b in ("str", "StrEnum", "enum.StrEnum") for b in classes[cls].bases):
            return member
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == member for t in stmt.targets):
                value = ast_literal(stmt.value)
                return value.value if value is not None and isinstance(value.value, str) else member
        return member

    @contextmanager
    def _loading(self, allowed: bool):
        """Parse modules outside the read set only for calls that can reach the server arguments."""
        previous, self._may_load = self._may_load, allowed
        try:
            yield
        finally:
            self._may_load = previous

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
            return None
        if self.module(target) is not None:
            return "module", target
        return None

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
        value = env.get(node.value) if isinstance(node, cst.Name) else None
        if isinstance(value, Bound):
            return self._class_of_value(info, value.node, value.env)
        if isinstance(value, Choice):  # `algo = None; if ...: algo = Cls.from_string(...)`
            for _, option in value.options:
                if isinstance(option, Bound):
                    found = self._class_of_value(info, option.node, option.env)
                    if found is not None:
                        return found
            return None
        if isinstance(node, cst.Call):
            name = dotted_name(node.func)
            if name is None:
                return None
            head = name.split(".")[0]
            found = self._lookup(info, head)
            if found and found[0] == "class" and name.count(".") <= 1:
                return found[1]
        return None

    def resolve(self, info: FunctionInfo, func: cst.BaseExpression, env: Env) -> tuple[FunctionInfo, dict[str, Bound]] | None:
        """The function a call expression calls, and the implicit `self` binding if any."""
        if isinstance(func, cst.Name):
            found = self._lookup(info, func.value)
            if found and found[0] == "function":
                target = self._function_by_key(found[1])
                return (target, {}) if target else None
            return None
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        owner = func.value
        if isinstance(owner, cst.Name):
            if info.class_name and info.params and owner.value == info.params[0] and owner.value not in env:
                target = self._method(f"{info.module}:{info.class_name}", method)
                return (target, {}) if target else None
            if owner.value in env:
                class_key = self._class_of_value(info, owner, env)
                if class_key is not None:
                    target = self._method(class_key, method)
                    if target is not None and target.params:
                        return target, {target.params[0]: env[owner.value]}  # type: ignore[dict-item]
                return None
            found = self._lookup(info, owner.value)
            if found and found[0] == "class":
                target = self._method(found[1], method)
                return (target, {}) if target else None
            if found and found[0] == "module":
                target = self.function(found[1], method)
                return (target, {}) if target else None
        return None

    # --- calls ---------------------------------------------------------------------------------

    def _bindings(self, caller: FunctionInfo, caller_scope: Scope, target: FunctionInfo, call: cst.Call, env: Env,
                  implicit: dict[str, Bound], skip_self: bool) -> tuple[dict, tuple, frozenset[str]]:
        """Callee parameters bound to the caller's arguments: aliases stay aliases, the rest become locals."""
        params = list(target.params)
        if skip_self and params and params[0] in ("self", "cls"):
            params = params[1:]
        callee_env: dict = {name: _with_scope(value, caller_scope) for name, value in implicit.items()}
        aliases: set[str] = set()
        positional = [a for a in call.args if a.keyword is None and not a.star]
        named = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        pairs = list(zip(params, (a.value for a in positional))) + [(k, v) for k, v in named.items() if k in target.params]
        for param, arg in pairs:
            if is_alias(arg, caller_scope, env):
                aliases.add(param)
            elif param not in target.aliases:
                callee_env[param] = bind(arg, env, caller_scope, reading=caller_scope)
        key = tuple(sorted((p, _value_key(v, caller_scope)) for p, v in callee_env.items()))
        return callee_env, key, frozenset(aliases - target.aliases)

    def callees(self, summary: FunctionSummary, call: CallEvent) -> Iterator[tuple[FunctionInfo, dict, tuple, frozenset]]:
        """Functions a call event leads to: the callee itself, and functions passed as arguments (`run_hook(h, sa)`)."""
        with self._loading(self._reaches_arguments(call.node, summary.scope, call.env)):
            yield from self._callees(summary, call)

    def _reaches_arguments(self, call: cst.Call, scope: Scope, env: Env) -> bool:
        """Does the call hand over the server arguments, a value read from them, or a dispatch object?"""
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in env:
            return True
        # A helper handed only a field value (`is_sm100_supported(cfg.device)`) stays an opaque atom:
        # following every utility module would parse most of the package.
        return any(is_alias(a.value, scope, env) for a in call.args)

    @staticmethod
    def _reads_fields(call: cst.Call, scope: Scope, env: Env) -> bool:
        """Is the call handed a server argument's value (`parse_connector_type(cfg.model_path)`)? A small
        helper of it is read through, from whatever module defines it."""
        return any(field_of(a.value, scope, env) is not None for a in call.args)

    def _callees(self, summary: FunctionSummary, call: CallEvent):
        info = summary.info
        resolved = self.resolve(info, call.node.func, call.env)
        if resolved is not None:
            target, implicit = resolved
            skip_self = isinstance(call.node.func, cst.Attribute)
            yield (target, *self._bindings(info, summary.scope, target, call.node, call.env, implicit, skip_self))
        for arg in call.node.args:
            if isinstance(arg.value, (cst.Name, cst.Attribute)) and not is_alias(arg.value, summary.scope, call.env):
                if isinstance(arg.value, cst.Name) and arg.value.value in call.env:
                    continue
                passed = self.resolve(info, arg.value, call.env)
                if passed is not None and passed[0] is not (resolved[0] if resolved else None):
                    implicit = {k: _with_scope(v, summary.scope) for k, v in passed[1].items()}
                    yield passed[0], implicit, tuple(sorted((k, _value_key(v, summary.scope)) for k, v in implicit.items())), frozenset()

    def _inline_target(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env, depth: int):
        """The function a call to inline reaches (and its implicit bindings), within the depth limit."""
        if depth >= MAX_INLINE:
            return None
        if classify(f"{dotted_name(call.func)}()", ()).kind is TermKind.PLATFORM:
            # `is_host_cpu_arm64()`, `get_device_memory_capacity(cfg.device)`: a platform fact, kept by
            # the name the profiles answer.
            return None
        with self._loading(self._reaches_arguments(call, scope, env) or self._reads_fields(call, scope, env)):
            return self.resolve(info, call.func, env)

    def _inline(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env, depth: int):
        """A call to a one-`return` predicate, as its returned expression in the callee's terms."""
        resolved = self._inline_target(info, scope, call, env, depth)
        if resolved is None:
            return None
        target, implicit = resolved
        found = target.straight_return
        if found is None:
            return None
        assignments, expr = found
        callee_env, _, aliases = self._bindings(info, scope, target, call, env, implicit, isinstance(call.func, cst.Attribute))
        callee_env = {**_assigned_fields(env, scope), **callee_env}
        callee_scope = self.scope(target, aliases, depth + 1)
        for name, value in assignments:
            if name in callee_scope.aliases and is_alias(value, callee_scope, callee_env):
                continue  # `cfg = resolving_view(server_args)`: a view, read as the arguments
            callee_env = {**callee_env, name: bind(value, callee_env)}
        return expr, callee_scope, callee_env

    def _inline_cases(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env, depth: int):
        """A call to a small pure helper with several returns (`_resolve_alias(cfg.algo, ...)`), as the
        values it returns, each with when: [(condition, returned expression, its scope, its locals)]."""
        resolved = None if len(self._inlining) >= MAX_INLINE else self._inline_target(info, scope, call, env, depth)
        if resolved is None:
            return None
        target, implicit = resolved
        if target.key in self._inlining or not target.returns_value or target.straight_return is not None:
            return None
        callee_env, key, aliases = self._bindings(info, scope, target, call, env, implicit,
                                                  isinstance(call.func, cst.Attribute))
        assigned = _assigned_fields(env, scope)
        if assigned:
            callee_env = {**assigned, **callee_env}
            key = (*key, ("<fields>", _value_key_of(assigned, scope)))
        self._inlining.add(target.key)
        try:
            summary = self.summary(target, callee_env, key, aliases)
        except RecursionError:
            return None
        finally:
            self._inlining.discard(target.key)
        if summary.writes or any(c.writes for c in summary.calls) or not summary.returns \
                or len(summary.returns) > MAX_RETURNS:
            return None  # not a pure helper: its value is not one of a few expressions over its inputs
        cases = [(r.condition, r.node if r.node is not None else cst.Name("None"), summary.scope, r.env)
                 for r in summary.returns if r.condition != FALSE]
        rest = neg(disj(*(r.condition for r in summary.returns)))
        if rest != FALSE:
            cases.append((rest, cst.Name("None"), summary.scope, {}))  # it falls off its end
        return cases

    # --- what calls may write ------------------------------------------------------------------

    def call_writes(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env) -> frozenset[str]:
        """The server-argument fields a call may write: through the function it calls, the functions it
        is handed (`run_hook(step, server_args)`), or the registered functions a call of a variable runs."""
        with self._loading(self._reaches_arguments(call, scope, env)):
            targets = [target for target, _ in self._call_targets(info, scope, call, env)]
        if not targets and isinstance(call.func, cst.Name) and (call.func.value in info.params or call.func.value in env):
            targets = [fn for fn in self.registered() if runs_call(call, fn)]
        found: set[str] = set()
        for target in targets:
            found |= self.writes_of(target)
        return frozenset(found)

    def _call_targets(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env):
        resolved = self.resolve(info, call.func, env)
        if resolved is not None:
            yield resolved
        for arg in call.args:
            if isinstance(arg.value, (cst.Name, cst.Attribute)) and not is_alias(arg.value, scope, env):
                if isinstance(arg.value, cst.Name) and arg.value.value in env:
                    continue
                passed = self.resolve(info, arg.value, env)
                if passed is not None and passed[0] is not (resolved[0] if resolved else None):
                    yield passed

    def writes_of(self, fn: FunctionInfo) -> frozenset[str]:
        """Every field the function, or a function it calls, may write (a cycle adds nothing)."""
        found = self._writes.get(fn.key)
        if found is not None:
            return found
        if fn.key in self._writing:
            return frozenset()
        self._writing.add(fn.key)
        try:
            summary = self.summary(fn)
            names = {w.field for w in summary.writes if not w.field.startswith("_")}
            for call in summary.calls:
                names |= call.writes
        except RecursionError:
            names = set()
        finally:
            self._writing.discard(fn.key)
        found = frozenset(names)
        self._writes[fn.key] = found
        return found

    def registered(self) -> list[FunctionInfo]:
        """Functions of the read modules that a decorator puts in a registry, in file order."""
        if self._registered is None:
            self._registered = [
                fn for dotted in self.read for fn in self.modules[dotted].functions.values() if registry_of(fn) is not None
            ]
        return self._registered

    def notices(self, rules: list[Rule], flags: Iterable[Flag]) -> list[Notice]:
        """Field atoms with no flag in the catalog, one notice per field name."""
        known = {f.name for f in flags}
        missing: dict[str, set[str]] = {}
        for rule in rules:
            for name in set(fields_read(rule.condition)) | set(fields_read(rule.trigger or rule.condition)):
                if name not in known:
                    missing.setdefault(name, set()).add(rule.id)
        return [
            Notice("unresolved-field", f"field {name!r} is read by {len(ids)} rule(s) but has no flag in the catalog",
                   name, tuple(sorted(ids)))
            for name, ids in sorted(missing.items())
        ]


def _defaults(info: FunctionInfo, env: Env, aliases: frozenset[str]) -> dict[str, Bound]:
    """Parameters a call leaves out, bound to their defaults (`run_hook` calls `step(server_args)`)."""
    params = info.node.params
    return {
        p.name.value: Bound(p.default, {})
        for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        if p.default is not None and p.name.value not in env and p.name.value not in info.aliases | aliases
    }


def _assigned_fields(env: Env, scope: Scope) -> dict:
    """The fields the caller assigned or had rewritten, for a helper it hands the arguments to."""
    return {k: _with_scope(v, scope) for k, v in env.items() if k.startswith(FIELD_KEY)}


def _value_key_of(values: dict, scope: Scope) -> str:
    return ";".join(f"{k}={_value_key(v, scope)}" for k, v in sorted(values.items()))


def _with_scope(value, scope: Scope):
    """A local's value as it crosses into another function: it keeps the scope it was written in."""
    if isinstance(value, Bound) and value.scope is None:
        return Bound(value.node, value.env, scope)
    if isinstance(value, Choice):
        return Choice(tuple((c, _with_scope(v, scope)) for c, v in value.options))
    return value


def _value_key(value, scope: Scope) -> str:
    """A text that tells bound argument values apart, for memoizing walks per call context."""
    if isinstance(value, Bound):
        text, fields = normalize(value.node, value.scope or scope, value.env)
        # `helper(self.x)` before and after the function assigned x are different contexts.
        assigned = [f"{f}={_value_key(value.env[FIELD_KEY + f], scope)}" for f in fields if FIELD_KEY + f in value.env]
        return ";".join([text, *assigned])
    if isinstance(value, Choice):
        return "|".join(f"{render(c)}=>{_value_key(v, scope)}" for c, v in value.options)
    return repr(value)


def label(info: FunctionInfo) -> str:
    return f"{info.file}::{info.qualname}"
