"""The program: modules loaded on demand, names and calls resolved, memoized walks, inlined helpers.

Calls are followed into any module of the package on demand, so the dispatch through
`SpeculativeAlgorithm.handle_server_args` in `speculative/spec_info.py` counts; the run
(`analysis.run`) enters functions in execution order from the entry points found here
(`ServerArgs.__post_init__` / `resolve_once` / `check_server_args`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import TypeVar

import libcst as cst

from ..core.errors import ParseError, SourceError
from ..core.model import FALSE, Lit
from ..sources.trees import SourceTree
from .conditions import is_boolean, operand_cases, to_formula
from .events import FunctionInfo, FunctionSummary, WriteEvent
from .guards import walk_function
from .object_locals import object_locals
from .modules import FunctionFacts, ModuleSummary, Outline, outline, outline_key
from .normalize import classify
from .scope import Bound, Env, Scope
from .registry import calls_variable
from .reuse import EntryKey, Item, Kept, Script, StaleReuse, Trace, WalkStore, canonical, signature
from .static_values import MISSING, Index
from .walks import Call, Callee, Value, Walk, moved
from .program_calls import MAX_INLINE, CallQueries, receiver_of, registered_answer
from .program_names import EnumNames, NameQueries, ScopeConstants, kept_lit

EnvSource = Callable[[], Env]  # gives the bound arguments of a walk when it has to be made

ENTRY_METHODS = ("__post_init__", "resolve_once", "check_server_args")
ENTRY_FUNCTIONS = ("run_resolution_pipeline",)


class _AskedNames:
    """Names asked one by one, each question kept for the walk that asks it (`_ask`): the methods and
    properties of ServerArgs (`self.x` of one is no field), the fields of the flag catalog (a local
    named like one is written apart). A walk holds while the names it read are what they were,
    whatever else the class or the catalog gained."""

    def __init__(self, program: Program, question: str, names: frozenset[str]) -> None:
        self.program = program
        self.question = question
        self.names = names

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        program = self.program
        if program._script is not None:  # a walk made again: the answer it was given then
            return program._ask((self.question, name), lambda: name in self.names)
        # `_ask` without its frame: the answer asks nothing more (asked for every `self.x` a walk reads)
        found = name in self.names
        program._asked((self.question, name), found)
        return found


class _AskedLiterals(Mapping):
    """Literals asked name by name, each question kept for the walk that asks it (`_ask`): the constants
    of the ServerArgs class (`server_args.LANGUAGE_MODEL_ONLY_ARCHITECTURES`), the fallbacks the
    catalog's fields declare (`Flag.fallback`, read by `resolution_result`)."""

    def __init__(self, program: Program, question: str, table: Mapping[str, Lit]) -> None:
        self.program = program
        self.question = question
        self.table = table

    def __getitem__(self, name: str) -> Lit:
        found = self.program._ask((self.question, name), lambda: self.table.get(name), revive=kept_lit)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self):
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


_NOTHING = object()
_T = TypeVar("_T")


class Program(NameQueries, CallQueries):
    """The read modules plus any package module a call leads to, with memoized function walks."""

    def __init__(self, tree: SourceTree | None, modules: Iterable[ModuleSummary], store: WalkStore | None = None,
                 field_names: frozenset[str] = frozenset(), fallbacks: Mapping[str, Lit] | None = None) -> None:
        self.tree = tree
        self.field_names = field_names  # the flag catalog's fields (`_FieldNames`)
        self.field_fallbacks = dict(fallbacks or {})  # what resolved reads of a field answer while it is None
        # The modules loaded so far: the read ones, then those calls and constants led to. Which are
        # loaded changes what a call of a name resolves to (see `module`), so it is part of the state
        # the questions of a walk are answered from (`analysis.reuse`).
        self.modules: dict[str, ModuleSummary] = {m.dotted: m for m in modules}
        self.read = tuple(self.modules)
        self.store = store
        for module in self.modules.values():
            self._know(module)
        # Walks by (function key, context, aliases): with syntax (`summary`), without (`walk`), and
        # complete for the run (`entered`: callees and values read where the run first enters it).
        self._walks: dict[tuple, Walk] = {}
        self._entered: dict[tuple, Walk] = {}
        self._callee_envs: dict[tuple, list[list[Env]]] = {}  # per entered walk, per call: each callee's bound arguments
        self._env_sources: dict[tuple, EnvSource] = {}  # how to bind a walk's arguments, to make it again
        self._kept: dict[tuple, Kept] = {}  # what each walk made or reused here keeps for the next extraction
        self._reused: set[tuple] = set()  # walks taken from the store
        self._recording: list[list | None] = []  # the questions of the walks in progress, innermost last
        self._script: Script | None = None  # the answers of a walk being made again (`_scripted`)
        self._missing: set[str] = set()
        self._summaries: dict[tuple, FunctionSummary] = {}
        self._may_load = True
        self._enum_classes: dict[str, bool] = {}
        self._imported_constants: dict[str, Lit | None] = {}
        self._static = Index(self.modules.values(), load=self.module)
        self._writes: dict[str, frozenset[str]] = {}
        self._writing: set[str] = set()
        self._registered: list[FunctionInfo] | None = None
        self._registered_said: tuple | None = None  # its answer as a replay compares it, once asked
        self._mutated: dict[tuple[str, str], bool] = {}  # (module, name) -> changed in place somewhere
        self._inlining: set[str] = set()  # helpers whose returns are being read (a cycle stops there)
        self._object_trees: dict[str, tuple] = {}  # methods with `self.x` as locals, by key (`_instance_method`)
        self._reads: dict[str, frozenset[str]] = {}  # attributes of `self` a method reads, by key (`_instance_reads`)
        self._memoizing: dict[str, bool] = {}  # `memoizes`, by function key
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
        # The ServerArgs class ("module:qualname"), whose methods a hook calls through its argument.
        self._record_class = next((f"{dotted}:{name}" for dotted in sorted(self.read)
                                   for name in self.modules[dotted].classes if name.rsplit(".", 1)[-1] == "ServerArgs"),
                                  None)
        # Every walk asks of the names it reads through the record: a method? a class constant?
        self._methods = _AskedNames(self, "method", self.server_args_methods)
        self._fields = _AskedNames(self, "field-name", self.field_names)
        self._record = _AskedLiterals(self, "record", self.server_args_constants)
        self._fallbacks = _AskedLiterals(self, "fallback", self.field_fallbacks)

    def _record_constants(self) -> dict[str, Lit]:
        """Upper-case constants of the ServerArgs class bound to literals or collections of them."""
        found: dict[str, Lit] = {}
        for dotted in sorted(self.read):
            module = self.modules[dotted]
            for name, cls in module.classes.items():
                if name.rsplit(".", 1)[-1] != "ServerArgs":
                    continue
                for stmt in module.declared_class(name).body:
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
        """A module by dotted name, parsed on first use if the package has it; outside the read
        files, only where loading is allowed (`_loading`) or something loaded it before."""
        loaded = self.modules.get(dotted)
        if self._script is None and (loaded is not None or dotted in self._missing or not self._may_load):
            # `_ask` without its frame where `_module` would load nothing (asked 80,000 times on a release)
            self._asked(("module", dotted, self._may_load), loaded.skeleton if loaded is not None else None)
            return loaded
        return self._ask(("module", dotted, self._may_load), lambda: self._module(dotted),
                         lambda found: found.skeleton if found is not None else None,
                         lambda skeleton: None if skeleton is None else self._loaded(dotted))

    def _module(self, dotted: str) -> ModuleSummary | None:
        if dotted in self.modules:
            return self.modules[dotted]
        if dotted in self._missing or self.tree is None or not self._may_load:
            return None
        base = dotted.replace(".", "/")
        for path in (base + ".py", base + "/__init__.py"):
            if self.tree.has(path):
                try:
                    module = outline(path, self.tree.read_text(path), self.store.outlines if self.store is not None else None)
                except (ParseError, SourceError):
                    break
                self._know(module)
                self.modules[dotted] = module
                return module
        self._missing.add(dotted)
        return None

    def _know(self, module: ModuleSummary) -> None:
        """Let the module's functions come from the facts an earlier extraction kept, unparsed."""
        if self.store is not None:
            module.functions.known = self.store.facts

    def function(self, dotted: str, qualname: str) -> FunctionInfo | None:
        module = self.module(dotted)
        found = module.functions.get(qualname) if module else None
        if found is not None:
            question = ("function", found.key)
            if self._script is None:  # `_ask` without its frame: the digest asks nothing more
                self._asked(question, module.functions.digest(qualname))  # type: ignore[union-attr]
            else:
                self._ask(question, lambda: module.functions.digest(qualname))  # type: ignore[union-attr]
        return found

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

        scope = Scope(info.aliases | extra_aliases, ScopeConstants(self, info, module.constants), EnumNames(self, info),
                      inline=inline,
                      methods=self._methods, record_constants=self._record, fields=self._fields,
                      fallbacks=self._fallbacks,
                      call_writes=call_writes, inline_cases=inline_cases, renders=self._renders)
        holder.append(scope)
        return scope

    # --- walks ---------------------------------------------------------------------------------

    def summary(self, info: FunctionInfo, env: Env | None = None, key: tuple = (), aliases=frozenset()) -> FunctionSummary:
        """The walk of a function in a context, with its syntax trees (what another walk reads of a
        helper it inlines)."""
        key = _context(info, env, key, aliases)
        memo = (info.key, key, aliases)
        found = self._summaries.get(memo)
        if found is None:
            self._env_sources.setdefault(memo, lambda: _with_defaults(info, env, aliases))
            if memo in self._kept:  # reused: made again as it was made, from its questions
                found = self._full(memo, _with_defaults(info, env, aliases))
            elif self._script is not None:
                raise StaleReuse(f"{info.key}: a walk made again leads to a walk never made")
            else:
                found = self._walk_now(info, _with_defaults(info, env, aliases), key, aliases)
        self._ask(("summary", info.key, key, tuple(sorted(aliases))), lambda: self._kept[memo].signature)
        return found

    def walk(self, info: FunctionInfo, env: Env | None = None, key: tuple = (), aliases=frozenset()) -> Walk:
        """What the run and the rules read of a function's walk in a context: kept from an earlier
        extraction when its questions get the same answers, else walked now."""
        key = _context(info, env, key, aliases)
        memo = (info.key, key, aliases)
        if memo not in self._walks:
            self._env_sources.setdefault(memo, lambda: _with_defaults(info, env, aliases))
            if self._reuse(info, key, aliases) is None:
                self._walk_now(info, _with_defaults(info, env, aliases), key, aliases)
        return self._walks[memo]

    def callee(self, info: FunctionInfo, env: Env, key: tuple = (), aliases=frozenset()) -> tuple[Callee, EnvSource]:
        """A function entered with these bound arguments (an entry point, a registered function)."""
        context = _context(info, env, key, aliases)
        return Callee(info.key, label(info), context, aliases), lambda: _with_defaults(info, env, aliases)

    def walk_at(self, callee: Callee, env: EnvSource) -> Walk:
        """The walk of a function where a call leads to it, complete for the run; `env` gives the
        bound arguments when it has to be walked (read from the caller's own walk)."""
        memo = callee.memo_key
        self._env_sources.setdefault(memo, env)
        if memo not in self._walks:
            info = self.loaded_function(callee.key)
            assert info is not None, callee.key
            if not _binds(callee.context):  # no argument of the caller's: nothing to read from its walk
                env = self._env_sources[memo] = lambda: _with_defaults(info, {}, callee.aliases)
            if self._reuse(info, callee.context, callee.aliases) is None:
                self._walk_now(info, env(), callee.context, callee.aliases)
        return self._enter(memo)

    def bare_env(self, callee: Callee) -> Env:
        """The arguments of a walk entered with none bound: the parameters' defaults."""
        info = self.loaded_function(callee.key)
        assert info is not None, callee.key
        return _with_defaults(info, {}, callee.aliases)  # type: ignore[return-value]

    def callee_env_of(self, memo: tuple, call: int, callee: int) -> Env:
        """The bound arguments of the `callee`-th function the `call`-th call of the entered walk `memo` leads to."""
        return self.callee_env(self._entered[memo], call, callee)

    def callee_env(self, walk: Walk, call: int, callee: int) -> Env:
        """The bound arguments of the `callee`-th function the `call`-th call of an entered walk leads to."""
        memo = walk.memo_key
        if memo not in self._callee_envs:  # entered as kept: bound again, as they were bound
            summary = self._full(memo)
            entered, envs = self._scripted(self._kept[memo].entry_trace, lambda: self._entered_now(summary, memo))
            if entered != self._entered[memo]:
                raise StaleReuse(f"{walk.key}: its calls lead elsewhere when read again")
            self._callee_envs[memo] = envs
        return self._callee_envs[memo][call][callee]

    def kept(self) -> dict[EntryKey, Kept]:
        """Every walk of this extraction, by what finds it in the next one."""
        return {self._entry_key(memo): kept for memo, kept in self._kept.items()}

    def outlines(self) -> dict[str, Outline]:
        """The index of every module loaded, for the next extraction (`outline`)."""
        return {outline_key(m.path, m.text): m.outline() for _, m in sorted(self.modules.items())}

    def reuse_counts(self) -> tuple[int, int]:
        """(walks taken from the store, walks made here)."""
        return len(self._reused), len(self._kept) - len(self._reused)

    def facts(self) -> dict[str, FunctionFacts]:
        """The facts of every function parsed here, by digest (with those known before)."""
        found = dict(self.store.facts) if self.store is not None else {}
        for module in self.modules.values():
            found.update(module.functions.found)
        return found

    def _walk_now(self, info: FunctionInfo, env: Env | None, key: tuple, aliases: frozenset[str]) -> FunctionSummary:
        """Walk the function, keeping the questions it asks; one reused before must come out the same."""
        memo = (info.key, key, aliases)
        module = self.modules[info.module]
        with self._questions() as trace:
            summary = walk_function(info, self.scope(info, aliases), module.spans, env, self._instance_method(info),
                                    self._instance_reads(info))
        found = signature(self._entry_key(memo), tuple(trace))
        if memo in self._reused and self._kept[memo].signature != found:
            raise StaleReuse(f"{info.key}: walked again, it asks other questions than when it was kept")
        self._summaries[memo] = summary
        if memo not in self._reused:
            self._walks[memo] = _compact(summary, key, aliases)
            self._kept[memo] = Kept(self._walks[memo], tuple(trace), found, info.line)
        return summary

    def _instance_method(self, info: FunctionInfo) -> cst.FunctionDef | None:
        """A method of an instance whose attributes are walked as locals (`guards.object_locals`):
        of a class other than ServerArgs and Enums, called on `self`; None for any other function."""
        receiver = receiver_of(info)
        if receiver is None:
            return None
        module = self.modules[info.module]
        cls = module.classes.get(info.class_name) if info.class_name else None
        if cls is None or cls.is_enum or f"{info.module}:{info.class_name}" == self._record_class:
            return None
        found = self._object_trees.get(info.key)
        if found is None or found[0] is not info.node:
            found = self._object_trees[info.key] = (info.node, object_locals(info.node, receiver, module.spans))
        return found[1]

    def _instance_reads(self, info: FunctionInfo) -> frozenset[str]:
        """The attributes of `self` a method reads, itself or through the methods it calls on `self`."""
        if receiver_of(info) is None:
            return frozenset()
        if info.key in self._reads:
            return self._reads[info.key]
        module = self.modules[info.module]
        found: set[str] = set()
        todo, seen = [info.qualname], set()
        while todo:
            qualname = todo.pop()
            if qualname in seen or qualname not in module.functions:
                continue
            seen.add(qualname)
            for node in ast.walk(module.function_node(qualname)):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                    found.add(node.attr)
                    todo.append(f"{info.class_name}.{node.attr}")
        self._reads[info.key] = frozenset(found)
        return self._reads[info.key]

    def _full(self, memo: tuple, env: Env | None = None) -> FunctionSummary:
        """A walk with its syntax. When only its kept form is here, it is made again with every
        question answered as it was answered when it was made (its trace): the same walk, whatever
        the program has loaded since, and nothing loaded or remembered by making it again."""
        found = self._summaries.get(memo)
        if found is None:
            info = self.loaded_function(memo[0])
            if info is None:
                raise StaleReuse(f"{memo[0]}: not loaded")
            if env is None:
                env = self._env_sources[memo]()
            module = self.modules[info.module]
            found = self._scripted(self._kept[memo].trace,
                                   lambda: walk_function(info, self.scope(info, memo[2]), module.spans, env,
                                                         self._instance_method(info), self._instance_reads(info)))
            self._summaries[memo] = found
        return found

    def _scripted(self, trace: tuple[Item, ...], make: Callable[[], _T]) -> _T:
        """`make()` with every question answered from `trace`, in order."""
        script = Script(trace)
        previous, self._script = self._script, script
        try:
            # A frame of its own, as the walk had when it was made: it renders each local once as
            # that walk did (`Trace.renders`), so it asks its questions in the same order. Nothing
            # is kept in it: every question is answered from the script.
            with self._questions():
                made = make()
        finally:
            self._script = previous
        if not script.done():
            raise StaleReuse("made again, a walk asked fewer questions than when it was kept")
        return made

    def _enter(self, memo: tuple) -> Walk:
        """The walk complete for the run: each call's callees and each write's value, read where the
        run first enters it (the modules loaded by then decide what a call resolves to)."""
        found = self._entered.get(memo)
        if found is not None:
            return found
        kept = self._kept[memo]
        if memo in self._reused and kept.entered is not None and self._replayed(kept.entry_trace):
            self._entered[memo] = kept.entered
            return kept.entered
        summary = self._full(memo)
        with self._questions() as trace:
            found, self._callee_envs[memo] = self._entered_now(summary, memo)
        self._entered[memo] = found
        self._kept[memo] = replace(self._kept[memo], entered=found, entry_trace=tuple(trace))
        return found

    def _entered_now(self, summary: FunctionSummary, memo: tuple) -> tuple[Walk, list[list[Env]]]:
        calls, envs = [], []
        for event, call in zip(summary.calls, self._walks[memo].calls):
            found: list[tuple[Callee, Env]] = []
            if call.condition != FALSE:
                for target, callee_env, callee_key, callee_aliases, when in self.callees(summary, event):
                    context = _context(target, callee_env, callee_key, callee_aliases)
                    callee_env = _with_defaults(target, callee_env, callee_aliases)
                    found.append((Callee(target.key, label(target), context, callee_aliases, when), callee_env))
            calls.append(replace(call, callees=tuple(c for c, _ in found)))
            envs.append([e for _, e in found])
        values = tuple(_write_value(summary, w) for w in summary.writes)
        return replace(self._walks[memo], calls=tuple(calls), values=values), envs

    # --- walks kept across extractions (`analysis.reuse`) -----------------------------------

    def _entry_key(self, memo: tuple) -> EntryKey:
        key, context, aliases = memo
        dotted, qualname = key.split(":", 1)
        module = self.modules[dotted]
        return key, module.functions.digest(qualname), module.skeleton, context, aliases

    def _reuse(self, info: FunctionInfo, context: tuple, aliases: frozenset[str]) -> Walk | None:
        """The walk kept by an earlier extraction, if every question it asked has the same answer now."""
        if self.store is None:
            return None
        memo = (info.key, context, aliases)
        kept = self.store.get(self._entry_key(memo))
        if kept is None or not self._replayed(kept.trace):
            return None
        if kept.line != info.line:  # the function moved: its walk reports the lines it is on now
            lines = info.line - kept.line
            entered = moved(kept.entered, lines) if kept.entered is not None else None
            kept = replace(kept, walk=moved(kept.walk, lines), entered=entered, line=info.line)
        self._walks[memo] = kept.walk
        self._kept[memo] = kept
        self._reused.add(memo)
        return kept.walk

    def _replayed(self, trace: tuple[Item, ...]) -> bool:
        """Ask a kept walk's questions again, in order: do they get the answers it got?"""
        pushed: list[str] = []
        try:
            with self._not_asked():
                for item in trace:
                    kind = item[0]
                    if kind == "push":
                        self._inlining.add(item[1])
                        pushed.append(item[1])
                    elif kind == "pop":
                        self._inlining.discard(item[1])
                        pushed.remove(item[1])
                    elif self._answer(item[:-1]) != item[-1]:
                        return False
            return True
        finally:
            for key in pushed:
                self._inlining.discard(key)

    def _answer(self, question: tuple) -> object:
        """The answer a question gets now, in the form `_asked` keeps."""
        kind, *args = question
        if kind == "module":
            previous, self._may_load = self._may_load, args[1]
            try:
                found = self._module(args[0])
            finally:
                self._may_load = previous
            return found.skeleton if found is not None else None
        if kind == "function":
            dotted, qualname = args[0].split(":", 1)
            module = self.modules.get(dotted)
            return module.functions.digest(qualname) if module is not None and qualname in module.functions else None
        if kind == "summary":
            memo = (args[0], args[1], frozenset(args[2]))
            if memo not in self._kept:
                info = self.loaded_function(args[0])
                if info is None or self._reuse(info, memo[1], memo[2]) is None:
                    return None  # it would have to be walked, with arguments only its caller's walk binds
            return self._kept[memo].signature
        if kind == "mutated":
            return self.mutated_anywhere(self.modules[args[0]], args[1])
        if kind == "visible":
            return args[0] in self.modules
        if kind == "registered":
            found = self.registered()
            if found is not self._registered:
                return canonical(registered_answer(found))
            if self._registered_said is None:  # asked again by most replayed walks: made once
                self._registered_said = canonical(registered_answer(found))
            return self._registered_said
        if kind == "inlining":
            return len(self._inlining) >= MAX_INLINE if args[0] == "full" else args[1] in self._inlining
        if kind == "dispatch":
            return canonical(tuple(self._registered_methods((args[0], args[1]), args[1], args[2])))
        if kind == "method":
            return args[0] in self.server_args_methods
        if kind == "field-name":
            return args[0] in self.field_names
        if kind in ("record", "fallback"):
            return canonical((self.server_args_constants if kind == "record" else self.field_fallbacks).get(args[0]))
        info = self.loaded_function(args[0])
        if info is None:
            return None
        if kind == "enum":
            return canonical(self.is_enum(info, args[1]))
        if kind == "member":
            return canonical(self.enum_member(info, args[1], args[2]))
        if kind == "members":
            return canonical(self.enum_members(info, args[1]))
        if kind == "imported":
            return canonical(self.imported_constant(info, args[1]))
        if kind == "display":
            return self.constant_display(info, args[1])
        if kind == "constant":
            with self._loading(args[2]):
                return canonical(self.module_constant(info, args[1]))
        if kind == "writes":
            with self._loading(args[1]):
                return canonical(self.writes_of(info))
        raise ValueError(f"unknown question {kind!r}")

    def _asked(self, question: tuple, answer: object) -> None:
        """Keep a question a walk asked, and its answer, in the innermost walk in progress.

        A question asked again with the same answer is not kept twice: asking it changed nothing
        the first time it got that answer (a module loaded stays loaded, an answer once remembered
        stays), so asking it again in a replay could not tell anything new."""
        if self._recording and (trace := self._recording[-1]) is not None:
            kept = canonical(answer)
            if question[0] in ("push", "pop") or trace.last.get(question, _NOTHING) != kept:
                trace.last[question] = kept
                trace.append((*question, kept))

    def _ask(self, question: tuple, compute: Callable[[], _T], answer_of: Callable[[_T], object] = lambda a: a,
             revive: Callable[[object], _T] | None = None) -> _T:
        """A question a walk asks: answered now and kept (`_asked`), or, while a walk is made again
        (`_scripted`), answered as it was when it was kept, without asking the program."""
        if self._script is not None:
            kept = self._script.next(question)
            return revive(kept) if revive is not None else kept  # type: ignore[return-value]
        self._recording.append(None)  # what `compute` asks is its own (a `with` costs more, asked this often)
        try:
            found = compute()
        finally:
            self._recording.pop()
        self._asked(question, answer_of(found))
        return found

    def _loaded(self, dotted: str) -> ModuleSummary:
        found = self.modules.get(dotted)
        if found is None:
            raise StaleReuse(f"{dotted}: loaded when the walk was kept, not now")
        return found

    def _function_of(self, key: str) -> FunctionInfo:
        found = self.loaded_function(key)
        if found is None:
            raise StaleReuse(f"{key}: no such function now")
        return found

    @contextmanager
    def _questions(self):
        """Keep the questions asked inside, as a walk's own."""
        trace = Trace()
        self._recording.append(trace)
        try:
            yield trace
        finally:
            self._recording.pop()

    def _renders(self) -> dict | None:
        """The texts rendered in the walk in progress (`Trace.renders`); None inside a question's own
        work, whose questions are not the walk's (what is rendered there is rendered again, and asks)."""
        top = self._recording[-1] if self._recording else None
        return top.renders if top is not None else None

    @contextmanager
    def _not_asked(self):
        """Questions asked inside belong to no walk: a question's own, or a replay's."""
        self._recording.append(None)
        try:
            yield
        finally:
            self._recording.pop()

def _context(info: FunctionInfo, env: Env | None, key: tuple, aliases: frozenset[str]) -> tuple:
    """The memo key of a walk: a call that leaves parameters out adds them, holding their defaults
    (unlike the function walked alone)."""
    if env is None:
        return key
    defaults = [p for p in info.defaulted if p not in env and p not in info.aliases | aliases]
    return (*key, ("<defaults>", ",".join(sorted(defaults)))) if defaults else key


def _with_defaults(info: FunctionInfo, env: Env | None, aliases: frozenset[str]) -> Env | None:
    """The bound arguments, and the parameters a call leaves out bound to their defaults."""
    defaults = _defaults(info, env, aliases) if env is not None else {}
    return {**defaults, **env} if defaults else env  # type: ignore[dict-item]


def _compact(summary: FunctionSummary, key: tuple, aliases: frozenset[str]) -> Walk:
    """A walk without syntax; its calls' callees and writes' values are read where the run enters it."""
    calls = tuple(
        Call(call.condition, call.order, call.line, call.writes, None, calls_variable(summary, call),
             tuple(a.value.value if type(a.value) is cst.Name and a.keyword is None and not a.star else None
                   for a in call.node.args), call.caught)
        for call in summary.calls
    )
    info = summary.info
    writes = tuple(replace(w, node=None, env={}) for w in summary.writes)
    return Walk(info.key, key, aliases, info.file, info.qualname, info.body_line, tuple(summary.guards), writes, None,
                calls)


def _binds(context: tuple) -> bool:
    """Does a walk's context bind arguments of its caller (not only parameters left to their defaults)?"""
    return any(entry[0] != "<defaults>" for entry in context)


def _write_value(summary: FunctionSummary, w: WriteEvent) -> Value:
    """A written value as the run reads it: the written text, a boolean formula, or cases over fields."""
    if w.node is None:
        return "term", classify(w.value, ())
    if is_boolean(w.node):
        return "bool", to_formula(w.node, summary.scope, w.env)
    return "cases", tuple(operand_cases(w.node, summary.scope, w.env, True))


def _defaults(info: FunctionInfo, env: Env, aliases: frozenset[str]) -> dict[str, Bound]:
    """Parameters a call leaves out, bound to their defaults (`run_hook` calls `step(server_args)`)."""
    if all(p in env or p in info.aliases or p in aliases for p in info.defaulted):
        return {}  # none left out: known from the function's facts, without its syntax
    params = info.node.params
    return {
        p.name.value: Bound(p.default, {})
        for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        if p.default is not None and p.name.value not in env and p.name.value not in info.aliases | aliases
    }


def label(info: FunctionInfo) -> str:
    return f"{info.file}::{info.qualname}"
