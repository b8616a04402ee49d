"""The program: modules loaded on demand, names and calls resolved, memoized walks, inlined helpers.

Calls are followed into any module of the package on demand, so the dispatch through
`SpeculativeAlgorithm.handle_server_args` in `speculative/spec_info.py` counts; the run
(`analysis.run`) enters functions in execution order from the entry points found here
(`ServerArgs.__post_init__` / `resolve_once` / `check_server_args`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import TypeVar

import libcst as cst

from ..core.errors import ParseError, SourceError
from ..core.formula import disj, fields_read, neg, render
from ..core.model import FALSE, Flag, Lit, Notice, Rule, TermKind
from ..sources.trees import SourceTree
from .conditions import is_boolean, operand_cases, to_formula
from .guards import CallEvent, FunctionInfo, FunctionSummary, WriteEvent, object_local, object_locals, walk_function
from .modules import FunctionFacts, ModuleSummary, Outline, outline, outline_key
from .normalize import classify, normalize
from .pyast import literal as ast_literal
from .scope import FIELD_KEY, Bound, Choice, Env, Scope, bind, dotted_name, field_of, is_alias
from .registry import calls_variable, has_loop_items, registry_of, runs_call
from .reuse import EntryKey, Item, Kept, StaleReuse, WalkStore, canonical, signature
from .static_values import MISSING, Index
from .walks import Call, Callee, Value, Walk, moved

EnvSource = Callable[[], Env]  # gives the bound arguments of a walk when it has to be made

ENTRY_METHODS = ("__post_init__", "resolve_once", "check_server_args")
ENTRY_FUNCTIONS = ("run_resolution_pipeline",)
MAX_INLINE = 6  # nested predicate inlining
MAX_RETURNS = 24  # a helper read as the values it returns has at most this many `return`s
# What follows a name changed in place: `.append(`-like calls, or an item assigned (`[key] = `).
# `getattr(server_args, "_model_config", None)`: a result kept on the record (`Program.memoizes`).
# `if hasattr(self, "model_config"): return self.model_config` (0.5.10-0.5.18's ServerArgs.get_model_config).
_MEMO_HAS = re.compile(r"hasattr\(\s*(\w+)\s*,\s*[\"'](\w+)[\"']\s*\)")
_MEMO_READ = re.compile(r"(\w+)\s*=\s*getattr\(\s*(\w+)\s*,\s*[\"'](_\w+)[\"']\s*,\s*None\s*\)")
_CHANGED_IN_PLACE = re.compile(r"\s*(\.\s*(append|add|extend|update|insert|remove|discard|pop|clear|setdefault)\s*\(|"
                               r"\[[^\]]*\]\s*=[^=])")


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


class _RecordConstants(Mapping):
    """The constants of the ServerArgs class (`server_args.LANGUAGE_MODEL_ONLY_ARCHITECTURES`), asked
    name by name."""

    def __init__(self, program: Program) -> None:
        self.program = program

    def __getitem__(self, name: str) -> Lit:
        found = self.program._ask(("record", name), lambda: self.program.server_args_constants.get(name), revive=_lit)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self):
        return iter(self.program.server_args_constants)

    def __len__(self) -> int:
        return len(self.program.server_args_constants)


class _Trace(list):
    """The questions of one walk in progress, in order, and the last answer kept for each; and the
    texts this walk rendered (`normalize`: locals, and expressions for one env), which it renders
    once: rendering again asks what it asked the first time, which the trace keeps once anyway."""

    def __init__(self) -> None:
        super().__init__()
        self.last: dict[tuple, object] = {}
        self.renders: dict = {}


class _Script:
    """A kept walk's questions, answered in order as they were (a question asked again with the
    answer it got last was kept once: see `Program._asked`)."""

    def __init__(self, trace: tuple[Item, ...]) -> None:
        self.trace = trace
        self.at = 0
        self.last: dict[tuple, object] = {}

    def next(self, question: tuple) -> object:
        if self.at < len(self.trace) and self.trace[self.at][:-1] == question:
            answer = self.trace[self.at][-1]
            self.at += 1
            self.last[question] = answer
            return answer
        if question in self.last:
            return self.last[question]
        raise StaleReuse(f"made again, a walk asked {question!r}, not what it asked when kept")

    def done(self) -> bool:
        return self.at == len(self.trace)


_NOTHING = object()
_T = TypeVar("_T")


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

    def members(self, name: str) -> tuple[str, ...]:
        """The names of the Enum's members (a plain Enum is parsed from them), () when not known."""
        return self.program.enum_members(self.info, name)


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
        owner = self.program.visible(target.rpartition(".")[0]) if target else module
        if owner is None or self.program.mutated_anywhere(owner, target.rpartition(".")[2] if target else name):
            return None
        return found

    def __iter__(self):
        return iter(self.own)

    def __len__(self) -> int:
        return len(self.own)


class Program:
    """The read modules plus any package module a call leads to, with memoized function walks."""

    def __init__(self, tree: SourceTree | None, modules: Iterable[ModuleSummary], store: WalkStore | None = None,
                 field_names: frozenset[str] = frozenset()) -> None:
        self.tree = tree
        self.field_names = field_names  # the flag catalog's fields (`_FieldNames`)
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
        self._script: _Script | None = None  # the answers of a walk being made again (`_scripted`)
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
        self._record = _RecordConstants(self)

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

        scope = Scope(info.aliases | extra_aliases, _Constants(self, info, module.constants), _Enums(self, info),
                      inline=inline,
                      methods=self._methods, record_constants=self._record, fields=self._fields,
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
        receiver = _receiver(info)
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
        if _receiver(info) is None:
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
        script = _Script(trace)
        previous, self._script = self._script, script
        try:
            # A frame of its own, as the walk had when it was made: it renders each local once as
            # that walk did (`_Trace.renders`), so it asks its questions in the same order. Nothing
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
                for target, callee_env, callee_key, callee_aliases in self.callees(summary, event):
                    context = _context(target, callee_env, callee_key, callee_aliases)
                    callee_env = _with_defaults(target, callee_env, callee_aliases)
                    found.append((Callee(target.key, label(target), context, callee_aliases), callee_env))
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
                return canonical(_registered_answer(found))
            if self._registered_said is None:  # asked again by most replayed walks: made once
                self._registered_said = canonical(_registered_answer(found))
            return self._registered_said
        if kind == "inlining":
            return len(self._inlining) >= MAX_INLINE if args[0] == "full" else args[1] in self._inlining
        if kind == "method":
            return args[0] in self.server_args_methods
        if kind == "field-name":
            return args[0] in self.field_names
        if kind == "record":
            return canonical(self.server_args_constants.get(args[0]))
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
        trace = _Trace()
        self._recording.append(trace)
        try:
            yield trace
        finally:
            self._recording.pop()

    def _renders(self) -> dict | None:
        """The texts rendered in the walk in progress (`_Trace.renders`); None inside a question's own
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

    def local_imports(self, info: FunctionInfo) -> Mapping[str, str]:
        return info.imports

    # --- name resolution -----------------------------------------------------------------------

    def imported_constant(self, info: FunctionInfo, name: str) -> Lit | None:
        """The literal value of a name the function imports from another module of the package, when
        that module binds it once to a literal or to a collection built from literals."""
        return self._ask(("imported", info.key, name), lambda: self._imported_constant(info, name), revive=_lit)

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

    def module_constant(self, info: FunctionInfo, name: str) -> Lit | None:
        """The value of a name the function's own module binds to a collection built from literals
        (`MUSE = frozenset({...})`), which the module's literal constants leave out."""
        return self._ask(("constant", info.key, name, self._may_load), lambda: self._module_constant(info, name),
                         revive=_lit)

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
        module or a read file?"""
        use = re.compile(rf"(?<![\w.]){re.escape(function)}\s*\(|@\s*{re.escape(function)}\b")
        first, last = module.functions.lines_of(function)
        own = module.text.splitlines()
        outside = "\n".join(own[: first - 1] + own[last:])
        if use.search(outside):
            return True
        return any(use.search(self.modules[dotted].text) for dotted in self.read if dotted != module.dotted)

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
                         revive=_revived)

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
            return member
        for stmt in found.declared_class(cls).body:  # type: ignore[union-attr]
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == member for t in stmt.targets):
                value = ast_literal(stmt.value)
                return value.value if value is not None and isinstance(value.value, str) else member
        return member

    def _loading(self, allowed: bool) -> _MayLoad:
        """Parse modules outside the read set only for calls that can reach the server arguments."""
        return _MayLoad(self, allowed)

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

    def resolve(self, info: FunctionInfo, func: cst.BaseExpression, env: Env) -> tuple[FunctionInfo, dict[str, Bound]] | None:
        """The function a call expression calls, and the implicit `self` binding if any."""
        if type(func) is cst.Name:
            found = self._lookup(info, func.value)
            if found and found[0] == "function":
                target = self._function_by_key(found[1])
                return (target, {}) if target else None
            if found and found[0] == "class":
                target = self._method(found[1], "__init__")  # `ModelConfig(...)`: its constructor runs
                return (target, {}) if target else None
            return None
        if not type(func) is cst.Attribute:
            return None
        method = func.attr.value
        owner = func.value
        if type(owner) is cst.Name:
            if info.class_name and info.params and owner.value == info.params[0] and owner.value not in env:
                target = self._method(f"{info.module}:{info.class_name}", method)
                return (target, {}) if target else None
            if owner.value in info.aliases and owner.value not in env and self._record_class is not None:
                # `view._get_default_attn_backend(...)` in a hook handed the arguments: a method of ServerArgs.
                target = self._method(self._record_class, method)
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
        """Callee parameters bound to the caller's arguments: aliases stay aliases, the rest become locals.
        A method called on the caller's own instance (`self._verify_quantization()`) gets its attributes."""
        params = list(target.params)
        if (skip_self or target.name == "__init__") and params and params[0] in ("self", "cls"):
            params = params[1:]
        callee_env: dict = {name: _with_scope(value, caller_scope) for name, value in implicit.items()}
        receiver = _receiver(caller)
        if receiver is not None and type(call.func) is cst.Attribute and type(call.func.value) is cst.Name \
                and call.func.value.value == receiver and _receiver(target) == receiver:
            prefix = object_local(receiver, "")
            callee_env.update({k: _with_scope(v, caller_scope) for k, v in env.items() if k.startswith(prefix)})
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
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in env:
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
            skip_self = type(call.node.func) is cst.Attribute
            yield (target, *self._bindings(info, summary.scope, target, call.node, call.env, implicit, skip_self))
        for arg in call.node.args:
            if type(arg.value) in (cst.Name, cst.Attribute) and not is_alias(arg.value, summary.scope, call.env):
                if type(arg.value) is cst.Name and arg.value.value in call.env:
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
        callee_env, _, aliases = self._bindings(info, scope, target, call, env, implicit, type(call.func) is cst.Attribute)
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
        full = self._ask(("inlining", "full"), lambda: len(self._inlining) >= MAX_INLINE)
        resolved = None if full else self._inline_target(info, scope, call, env, depth)
        if resolved is None:
            return None
        target, implicit = resolved
        inside = self._ask(("inlining", "in", target.key), lambda: target.key in self._inlining)
        if inside or not target.returns_value or target.straight_return is not None:
            return None
        callee_env, key, aliases = self._bindings(info, scope, target, call, env, implicit,
                                                  type(call.func) is cst.Attribute)
        assigned = _assigned_fields(env, scope)
        if assigned:
            callee_env = {**assigned, **callee_env}
            key = (*key, ("<fields>", _value_key_of(assigned, scope)))
        self._ask(("push", target.key), lambda: None)
        self._inlining.add(target.key)
        try:
            summary = self.summary(target, callee_env, key, aliases)
        except RecursionError:
            return None
        finally:
            self._inlining.discard(target.key)
            self._ask(("pop", target.key), lambda: None)
        if summary.writes or any(c.writes for c in summary.calls) or not summary.returns \
                or len(summary.returns) > MAX_RETURNS:
            return None  # not a pure helper: its value is not one of a few expressions over its inputs
        if any(has_loop_items(r.condition) for r in summary.returns):
            return None  # a value found by a loop (`for key in KEYS: ... return val`): a term `check` reads
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
        if not targets and type(call.func) is cst.Name and (call.func.value in info.params or call.func.value in env):
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
            if type(arg.value) in (cst.Name, cst.Attribute) and not is_alias(arg.value, scope, env):
                if type(arg.value) is cst.Name and arg.value.value in env:
                    continue
                passed = self.resolve(info, arg.value, env)
                if passed is not None and passed[0] is not (resolved[0] if resolved else None):
                    yield passed

    def writes_of(self, fn: FunctionInfo) -> frozenset[str]:
        """Every field the function, or a function it calls, may write (a cycle adds nothing)."""
        return self._ask(("writes", fn.key, self._may_load), lambda: self._writes_of(fn), revive=frozenset)

    def _writes_of(self, fn: FunctionInfo) -> frozenset[str]:
        found = self._writes.get(fn.key)
        if found is not None:
            return found
        if fn.key in self._writing:
            return frozenset()
        self._writing.add(fn.key)
        try:
            walk = self.walk(fn)
            names = {w.field for w in walk.writes if not w.field.startswith("_")}
            for call in walk.calls:
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
        if self._registered is None and self._script is None:
            self._registered = []
            for dotted in self.read:
                module = self.modules[dotted]
                for key in module.functions:
                    # Only a decorator that says "register" registers: the others' functions stay unparsed.
                    if module.functions.registers(key):
                        fn = module.functions[key]
                        if registry_of(fn) is not None:
                            self._registered.append(fn)
        return self._ask(("registered",), lambda: self._registered, _registered_answer,
                         lambda kept: [self._function_of(key) for key, _ in kept])

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


def _receiver(info: FunctionInfo) -> str | None:
    """The instance parameter of a method (`self`), else None (functions, static and class methods)."""
    if not info.class_name or not info.params or info.params[0] != "self":
        return None
    return None if any(d.rsplit(".", 1)[-1] in ("staticmethod", "classmethod", "property") for d in info.decorators) \
        else "self"


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


def _lit(kept: object) -> Lit | None:
    """A kept constant answer as the value it was (`reuse.canonical` wrote it)."""
    if kept is None:
        return None
    try:
        return Lit(ast.literal_eval(kept[1]))  # type: ignore[index]
    except (ValueError, SyntaxError, TypeError, IndexError):
        raise StaleReuse(f"cannot read the kept constant {kept!r}") from None


def _revived(kept: object) -> object:
    if isinstance(kept, tuple) and kept[:1] == ("repr",):
        raise StaleReuse(f"cannot read the kept answer {kept!r}")
    return kept


def _registered_answer(functions: list[FunctionInfo]) -> tuple:
    """What a walk reads of the registered functions: which, and the parameters a call passes by name."""
    return tuple((fn.key, fn.params) for fn in functions)


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


def _assigned_fields(env: Env, scope: Scope) -> dict:
    """The fields the caller assigned or had rewritten, for a helper it hands the arguments to."""
    return {k: _with_scope(v, scope) for k, v in env.items() if k.startswith(FIELD_KEY)}


class _MayLoad:
    """`with program._loading(allowed)`: sets whether modules outside the read set may be parsed, and
    puts back what it was. A class, not a @contextmanager generator: entered for most calls a walk
    resolves, where the generator's setup cost showed."""

    __slots__ = ("program", "allowed", "previous")

    def __init__(self, program: Program, allowed: bool) -> None:
        self.program = program
        self.allowed = allowed

    def __enter__(self) -> None:
        self.previous = self.program._may_load
        self.program._may_load = self.allowed

    def __exit__(self, *exc: object) -> None:
        self.program._may_load = self.previous


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
