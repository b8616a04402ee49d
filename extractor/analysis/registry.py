"""Functions a decorator registers, and where the run calls them: the loops over a registry that call
a variable (`for fn in _MODEL_OVERRIDE_FNS: fn(server_args, hf_config)`), since no call names them."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

import libcst as cst

from ..core.formula import atoms, conj, disj, neg
from ..core.model import TRUE, And, Atom, Formula, Lit, Not, Or, Term, TermKind
from .scope import dotted_name

if TYPE_CHECKING:
    from .events import CallEvent, FunctionInfo, FunctionSummary
    from .modules import ModuleSummary
    from .walks import Walk


class Program(Protocol):
    """What the registries read of the program (`analysis.callgraph.Program`, which imports this module)."""

    read: tuple[str, ...]
    modules: dict[str, ModuleSummary]

    def walk(self, info: FunctionInfo) -> Walk: ...

    def registered(self) -> list[FunctionInfo]: ...

    def resolve(self, info: FunctionInfo, func: cst.BaseExpression, env: dict) -> tuple[FunctionInfo, dict] | None: ...


@dataclass(frozen=True, slots=True)
class DynamicCall:
    """A call of a function held in a variable (`fn(server_args, hf_config)` over a registry): where
    the functions a decorator registers are run."""

    condition: Formula
    path: tuple[str, ...]
    arguments: tuple[str | None, ...]  # positional arguments: a plain name, or None for anything else
    site: tuple[str, int] = ("", 0)  # the calling function's key and the call's line

    def loops_over(self, names: frozenset[str]) -> bool:
        """Is the call inside a loop over one of these module-level containers?"""
        return any(
            _LOOP_ITEM.match(atom.term.text) and any(re.search(rf"\b{re.escape(n)}\b", atom.term.text) for n in names)
            for atom in atoms(self.condition)
        )

    def runs(self, fn: FunctionInfo) -> bool:
        """Could this call run `fn`? Same number of arguments, passed by the names `fn` gives its parameters."""
        return len(self.arguments) == len(fn.params) and any(
            a == p for a, p in zip(self.arguments, fn.params)
        ) and all(a is None or a == p for a, p in zip(self.arguments, fn.params))


# What a function's own text says of registries (`registering_calls`): the module-level names it adds to
# with `NAME.append(...)`-like calls, and the dotted names of the registrars it calls.
RegisteringCalls = tuple[frozenset[str], tuple[str, ...]]


class Registries:
    """Where each registered function of a program runs, found once before the run.

    `kept`: what an earlier extraction found in each function's text (`registering_calls`, by the
    function's digest), reused without parsing it; `used` is what this one read, kept for the next."""

    def __init__(self, program: Program, kept: Mapping[str, RegisteringCalls] | None = None) -> None:
        self.program = program
        self.kept: Mapping[str, RegisteringCalls] = kept if kept is not None else {}
        self.used: dict[str, RegisteringCalls] = {}
        # Registered functions by the dynamic call that runs them: (caller key, call line) -> functions.
        self.run_at: dict[tuple[str, int], list[FunctionInfo]] = {}
        self.unsited: list[tuple[FunctionInfo, Formula, str]] = []  # registered, run by no call found
        self._sited = False
        self._containers: dict[str, frozenset[str]] = {}
        self._all_containers: frozenset[str] | None = None

    def registry_sites(self) -> None:
        """Where each function a decorator registers runs (`@_register_for("GptOssForCausalLM")`,
        `@register_post_process`): no call names it; a loop over the registry calls a variable with
        the arguments it takes (`fn(server_args, hf_config)` for `def _x(server_args, hf_config)`).
        Of several such calls, those that loop over the container its decorator fills
        (`_MODEL_OVERRIDE_FNS`, not `_PREDICATE_OVERRIDE_FNS`). Found over the read functions' own
        walks, before the run, so the run can enter each where its loop calls it."""
        if self._sited:
            return
        self._sited = True
        sites = []
        for dotted in self.program.read:
            for fn in self.program.modules[dotted].functions.values():
                try:
                    walk = self.program.walk(fn)
                except RecursionError:
                    continue
                for call in walk.calls:
                    if call.variable:
                        sites.append(DynamicCall(call.condition, (), call.arguments, (fn.key, call.line)))
        for fn in self.program.registered():
            name, condition = registry_of(fn)  # type: ignore[misc]
            candidates = [site for site in sites if site.runs(fn)]
            containers = self.containers_of(fn)
            candidates = [site for site in candidates if site.loops_over(containers)] or candidates
            for site in candidates:
                runs_here = self.run_at.setdefault(site.site, [])
                if fn not in runs_here:
                    runs_here.append(fn)
            if not candidates:
                self.unsited.append((fn, condition, name))

    def runs_in_loop(self, fn: FunctionInfo, condition: Formula) -> bool:
        """May a call of a variable reached under `condition` run `fn`? Not when the loops around it
        (its callers' too) go over another decorator's registry only."""
        containers = self.containers_of(fn)
        others = self.every_container() - containers
        site = DynamicCall(condition, (), ())
        if site.loops_over(containers):
            return True
        return not (others and site.loops_over(others))

    def containers_of(self, fn: FunctionInfo) -> frozenset[str]:
        found = self._containers.get(fn.key)
        if found is None:
            found = self._containers[fn.key] = self._registry_containers(fn)
        return found

    def every_container(self) -> frozenset[str]:
        """Every module-level container a registering function fills (`_BY_PREDICATE.append(...)` in
        `register_predicate`), whether or not a read function is registered into it."""
        if self._all_containers is None:
            found: set[str] = set()
            for fn in self.program.registered():
                found |= self.containers_of(fn)
            for dotted in self.program.read:
                for fn in self.program.modules[dotted].functions.values():
                    if "register" in fn.name:
                        found |= self._calls(fn)[0]
            self._all_containers = frozenset(found)
        return self._all_containers

    def _registry_containers(self, fn: FunctionInfo) -> frozenset[str]:
        """Module-level names the registering decorators of `fn` add it to, through other registrars too."""
        found: set[str] = set()
        for name in fn.decorators:  # each decorator's callee, by its dotted name (others resolve to nothing)
            if name:
                self._filled_by(fn, cst.parse_expression(name), found, 0)
        return frozenset(found)

    def _filled_by(self, info: FunctionInfo, func: cst.BaseExpression, found: set[str], depth: int) -> None:
        resolved = self.program.resolve(info, func, {}) if depth <= 3 else None
        if resolved is None:
            return
        target = resolved[0]
        filled, registrars = self._calls(target)
        found |= filled
        for name in registrars:
            self._filled_by(target, cst.parse_expression(name), found, depth + 1)

    def _calls(self, fn: FunctionInfo) -> RegisteringCalls:
        """`registering_calls` of a function, read from its text once per extraction (by its digest)."""
        module = self.program.modules[fn.module]
        digest = module.functions.digest(fn.key.split(":", 1)[1])
        found = self.used.get(digest) or self.kept.get(digest)
        if found is None:
            found = registering_calls(fn.node)
        self.used[digest] = found
        return found


def registry_of(fn: FunctionInfo) -> tuple[str, Formula] | None:
    """The registering decorator of a function and the condition it runs under, if any."""
    if fn.registry is None:
        return None
    name, names, predicate = fn.registry
    if predicate:  # `@register_model_override_predicate(lambda arch: ...)`: its test of the architecture
        return name, Atom(Term(TermKind.MODEL, predicate, predicate))
    if not names:
        return name, TRUE
    term = Term(TermKind.MODEL, "model_architecture", "model_architecture")
    return name, Atom(term, "in", Lit(names))


def predicate_registered(fn: FunctionInfo) -> bool:
    """Is the function registered with a predicate of the architecture (which its site calls)?"""
    return fn.registry is not None and bool(fn.registry[2])


_VARIABLE_CALL = re.compile(r"^([A-Za-z_]\w*)\((.*)\)$", re.DOTALL)


def without_variable_calls(f: Formula, defined: Callable[[str], bool]) -> Formula:
    """A site's condition without the tests that call a variable (`if predicate(architecture):` in a
    loop over registered predicates): the registered function's own predicate says when it runs."""
    if isinstance(f, Atom):
        found = _VARIABLE_CALL.match(f.term.text) if f.op == "truthy" and f.term.kind is not TermKind.FIELD else None
        return TRUE if found is not None and not defined(found.group(1)) else f
    if isinstance(f, Not):
        return neg(without_variable_calls(f.arg, defined))
    if isinstance(f, And):
        return conj(*(without_variable_calls(a, defined) for a in f.args))
    if isinstance(f, Or):
        return disj(*(without_variable_calls(a, defined) for a in f.args))
    return f


_LOOP_ITEM = re.compile(r"^\(?[A-Za-z_]\w*(?:, [A-Za-z_]\w*)*\)? in ")


def has_loop_items(f: Formula) -> bool:
    """Does the condition pass through a loop (`item in iterable` contexts)?"""
    return any(a.op == "truthy" and a.term.kind is not TermKind.FIELD and _LOOP_ITEM.match(a.term.text)
               for a in atoms(f))


def without_loop_items(f: Formula) -> Formula:
    """A path condition without the `item in iterable` contexts of the loops it passes through."""
    if isinstance(f, Atom):
        return TRUE if f.op == "truthy" and f.term.kind is not TermKind.FIELD and _LOOP_ITEM.match(f.term.text) else f
    if isinstance(f, Not):
        return neg(without_loop_items(f.arg))
    if isinstance(f, And):
        return conj(*(without_loop_items(a) for a in f.args))
    if isinstance(f, Or):
        return disj(*(without_loop_items(a) for a in f.args))
    return f


_REGISTERING_METHODS = frozenset({"append", "add", "insert", "setdefault", "update", "__setitem__"})


def _descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node`, read from the dataclass fields: libcst's `children` runs a visitor
    per node, ten times dearer. (The order differs; what is looked for here is a set.)"""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for name in _node_fields(type(current)):
            value = getattr(current, name)
            if isinstance(value, cst.CSTNode):
                stack.append(value)
            elif isinstance(value, (list, tuple)):
                stack.extend(item for item in value if isinstance(item, cst.CSTNode))


@lru_cache(maxsize=None)
def _node_fields(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))


def runs_call(call: cst.Call, fn: FunctionInfo) -> bool:
    """Could this call of a variable run `fn`? As `DynamicCall.runs`: its parameters passed by their names."""
    arguments = [a.value.value if type(a.value) is cst.Name and a.keyword is None and not a.star else None
                 for a in call.args]
    return len(arguments) == len(fn.params) and any(a == p for a, p in zip(arguments, fn.params)) and all(
        a is None or a == p for a, p in zip(arguments, fn.params))


def registering_calls(node: cst.FunctionDef) -> RegisteringCalls:
    """The names a function adds to with `NAME.append(...)`-like calls, and the dotted names of the
    registrars it calls (a callee whose last name says "register", `register_model_override(arch)(fn)`
    included), sorted: a pure function of its text."""
    filled: set[str] = set()
    registrars: set[str] = set()
    for found in _descendants(node):
        if not type(found) is cst.Call:
            continue
        callee = found.func
        if type(callee) is cst.Attribute and callee.attr.value in _REGISTERING_METHODS:
            if type(callee.value) is cst.Name:
                filled.add(callee.value.value)
            continue
        while type(callee) is cst.Call:
            callee = callee.func
        name = dotted_name(callee) or ""
        if "register" in name.rsplit(".", 1)[-1]:
            registrars.add(name)
    return frozenset(filled), tuple(sorted(registrars))


def registry_name(fn: FunctionInfo) -> str:
    """The decorator that registers the function (`register_for`), or "" when none does."""
    found = registry_of(fn)
    return found[0] if found is not None else ""


def registry_condition(fn: FunctionInfo) -> Formula:
    """The condition a registered function runs under (its architectures), TRUE when it is not registered."""
    found = registry_of(fn)
    return found[1] if found is not None else TRUE


def calls_variable(summary: FunctionSummary, call: CallEvent) -> bool:
    """A call of a parameter or local (`fn(...)`, `step(...)`) the program could not resolve."""
    func = call.node.func
    return type(func) is cst.Name and (func.value in summary.info.params or func.value in call.env)
