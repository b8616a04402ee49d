"""The launch as it runs: every guard and write in execution order, over a symbolic store of the arguments.

From the entry points in launch order (`__post_init__`; `resolve_once` -> `run_resolution_pipeline`
-> each `run_hook(step, server_args)`, post-process passes and model overrides; then
`check_server_args`), each function is entered where it is called and its events take their place
in one global order. A write updates its field to "the new value if the write's condition holds,
else what the field held"; a field read in a later condition reads what the store holds at that
point. So a trigger is a predicate on what the user typed (and env, platform and model facts):
SGLang checks the resolved values, not the typed ones.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from ..core.formula import REFLEXIVE_TRUTH, conj, disj, fields_read, neg, pinned_in, replaced, terms_once
from ..core.model import (FALSE, TRUE, And, Atom, Choices, Const, Formula, Lit, Not, Or, PlaceholderValue, PlaceValues,
                          Rule, RuleKind, Term, TermKind, Write)
from .callgraph import EnvSource, Program, label
from .registry import (RegisteringCalls, Registries, predicate_registered, registry_condition, registry_name,
                       without_loop_items, without_variable_calls)
from .walks import Callee, Walk
from .walks import Value as WalkValue
from .events import GuardEvent
from .statements import LIBRARY_ERRORS
from .run_values import (Template, Value, atom_of, is_pinned, pinned_atom, pinned_term, put, resolved_term,
                         substitute, transformed, undecided)

MAX_DEPTH = 12  # call-chain length followed from an entry point
MAX_OCCURRENCES = 32  # times one function is entered; past it, its triggers admit the paths not followed
# A read of a field is spelled out as "the latest write whose condition holds" when that stays
# small; otherwise it reads `resolved(field)`, a term that rules.json's `resolution` table defines.
MAX_INLINE_WRITES = 4
# Atoms (with repeats) of the conditions a message placeholder's value is chosen by, at most.
MAX_CHOICES_SIZE = 48
MAX_INLINE_SIZE = 24  # atoms (with repeats) of a read spelled out, and of each condition (or case) of a write it reads
_NO_MORE = "reached_by_other_calls"


@dataclass(frozen=True, slots=True)
class Assignment:
    """One write of the run: the field holds one of `cases` when `condition` holds."""

    field: str
    order: int
    key: tuple[str, int, str]
    condition: Formula
    cases: tuple[tuple[Formula, Value], ...]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A rule's statement reached once in the run: where, along which calls, and when it runs."""

    order: int
    condition: Formula
    path: tuple[str, ...]
    cases: tuple[tuple[Formula, Value], ...] = ()  # writes: the value written
    # guards: what the message's placeholders hold there (`Rule.placeholders`; a `Choices`' conditions
    # over launch values, as `condition`)
    placeholders: tuple[tuple[str, Lit | Term | Choices], ...] = ()


RuleKey = tuple[str, int, str]  # (function key, line, "guard" or the field written)


@dataclass
class _Instance:
    """The store's state for one entered function: at its entry, and after each call that may write."""

    entry: dict[str, int]
    after: dict[int, dict[str, int]]
    memo: dict[tuple[Formula, int], Formula]  # by formula and the number of writes so far


class Run:
    """The run of one program: occurrences of every rule and the store of assignments."""

    def __init__(self, program: Program, registering: Mapping[str, RegisteringCalls] | None = None) -> None:
        """`registering`: what an earlier extraction read of functions' texts for the registries
        (`Registries.kept`); what this run reads is in `self.registries.used`."""
        self.program = program
        self.store: dict[str, list[Assignment]] = {}
        self.occurrences: dict[RuleKey, list[Occurrence]] = {}
        self.entered: dict[str, int] = {}
        self.overflow: set[str] = set()  # functions entered more than MAX_OCCURRENCES times
        self.counter = 0
        self.written = 0  # writes in the store so far
        self._versions: dict[str, int] = {}  # writes in the store per field (`versions`), kept as they are made
        self.registries = Registries(program, registering)
        # What the run asks of the program, in order, for the next extraction (`KeptRun`).
        self.steps: list[tuple] = []
        self.kept: KeptRun | None = None
        self.triggers: dict[tuple[RuleKey, str], Formula] = {}  # each rule's, by its key and function
        self.memo_sites: dict[str, list[Formula]] = {}  # memoizing functions: the conditions of their calls
        self.reused = False  # taken from a kept run
        self._compared: dict[tuple, Formula] = {}
        self._sizes: dict[Formula, int] = {}

    # --- the walk in execution order -------------------------------------------------------

    def execute(self, kept: KeptRun | None = None) -> Run:
        """Run the launch; or, given the run an earlier extraction kept, take what it found when it
        would ask the same of the program and enter the same walks (`KeptRun`)."""
        if kept is not None and self._replayed(kept):
            self.store, self.occurrences, self.entered = kept.store, kept.occurrences, kept.entered
            self._versions = {name: len(writes) for name, writes in kept.store.items()}
            self.overflow, self.counter, self.written = set(kept.overflow), kept.counter, kept.written
            # Copied: `apply` adds the triggers of new rules, and the kept run stays as it was read.
            self.triggers, self.kept, self.reused = dict(kept.triggers), kept, True
            return self
        program = self.program
        registries = self.registries
        registries.registry_sites()  # where registered functions run (the calls of variables over registries)
        self.steps.append(("sites", _sites(registries)))
        for entry in program.entry_points:
            self._enter(program.callee(entry, {})[0], _BARE, TRUE, (label(entry),))
        # Registered functions no loop was found to call, or whose loop the run did not reach: they run
        # for their architectures, somewhere; last.
        unsited = [(fn, condition, name) for fn, condition, name in registries.unsited]
        unsited += [(fn, registry_condition(fn), registry_name(fn)) for sites in registries.run_at.values() for fn in sites]
        for fn, condition, name in unsited:
            if fn.key not in self.entered:
                self._enter(program.callee(fn, {})[0], _BARE, condition, (f"<registry {name}>", label(fn)))
        self._join_memo_sites()
        self.kept = KeptRun(tuple(self.steps), self.store, self.occurrences, self.entered, frozenset(self.overflow),
                            self.counter, self.written, self.triggers)
        return self

    def _join_memo_sites(self) -> None:
        """Each memoizing function's mark (`_built_mark`) replaced, wherever the run put it, by the
        disjunction of the conditions of its calls: the result is built if any of them is made."""
        for key, sites in sorted(self.memo_sites.items()):
            mark, built, memo = _built_mark_of(key), disj(*sites), {}
            for found in self.occurrences.values():
                found[:] = [replace(o, condition=replaced(o.condition, mark, built, memo),
                                    cases=tuple((replaced(w, mark, built, memo), v) for w, v in o.cases))
                            for o in found]
            for writes in self.store.values():
                writes[:] = [replace(a, condition=replaced(a.condition, mark, built, memo),
                                     cases=tuple((replaced(w, mark, built, memo), v) for w, v in a.cases))
                             for a in writes]

    def keep(self) -> KeptRun | None:
        """The run as the next extraction can reuse it: the kept run with the triggers `apply` composed
        (a new record when it added some: a kept run read from the cache is never changed in place)."""
        if self.kept is not None and len(self.triggers) != len(self.kept.triggers):  # triggers are only added
            self.kept = replace(self.kept, triggers=self.triggers)
        return self.kept

    def _replayed(self, kept: KeptRun) -> bool:
        """Ask what a kept run asked, in its order: the registries, and each walk it entered, bound as
        it bound them. If every answer is the same (each walk the same to the run), so is the run: it
        composes the same events over the same store. Asking changes the program as the run would."""
        registries = self.registries
        registries.registry_sites()
        for step in kept.steps:
            kind = step[0]
            if kind == "sites":
                if _sites(registries) != step[1]:
                    return False
            elif kind == "walk":
                _, callee, env, entered = step
                if self.program.loaded_function(callee.key) is None:
                    return False
                walk = self.program.walk_at(callee, self._env(callee, env))
                if walk is not entered and _run_view(walk) != _run_view(entered):
                    return False
            else:  # "loop": the containers a registered function's loop is told apart by
                _, key, containers, every, _ = step
                fn = self.program.loaded_function(key)
                if fn is None or registries.containers_of(fn) != containers or registries.every_container() != every:
                    return False
        return True

    def _env(self, callee: Callee, env: tuple) -> EnvSource:
        """How the walk of `callee` binds its arguments: none bound (`_BARE`), or as the `env[2]`-th
        callee of call `env[1]` of the walk `env[0]` (a memo key) binds them."""
        if env == _BARE:
            return lambda: self.program.bare_env(callee)
        memo, call, number = env
        return lambda: self.program.callee_env_of(memo, call, number)

    def versions(self) -> dict[str, int]:
        """Writes in the store so far, per field written (a copy: the run goes on writing)."""
        return dict(self._versions)

    def _enter(self, callee: Callee, env: tuple, condition: Formula, path: tuple[str, ...],
               caught: frozenset[str] = frozenset()) -> None:
        """Run a walk where it is called; `caught`: the exceptions a `try` around the call catches
        (`except ValueError: return False`): the walk's raises of those do not end the launch."""
        count = self.entered.get(callee.key, 0)
        if count >= MAX_OCCURRENCES:
            self.overflow.add(callee.key)
            return
        self.entered[callee.key] = count + 1
        walk = self.program.walk_at(callee, self._env(callee, env))
        self.steps.append(("walk", callee, env, walk))
        instance = _Instance(self.versions(), {}, {})
        events = sorted(
            [(g.order, 0, g) for g in walk.guards]
            + [(w.order, 1, i) for i, w in enumerate(walk.writes)]
            + [(c.order, 2, i) for i, c in enumerate(walk.calls)],
            key=lambda e: e[0],
        )
        for _, kind, event in events:
            if kind == 0:
                if escapes(event, caught):  # type: ignore[arg-type]
                    self._guard(walk, event, instance, condition, path)  # type: ignore[arg-type]
            elif kind == 1:
                self._write(walk, event, instance, condition, path)  # type: ignore[arg-type]
            else:
                self._call(walk, event, instance, condition, path, caught)  # type: ignore[arg-type]

    def _guard(self, walk: Walk, g: GuardEvent, instance: _Instance, condition: Formula,
               path: tuple[str, ...]) -> None:
        self.counter += 1
        reached = conj(condition, self.resolve(g.condition if g.run is None else g.run, instance))
        placeholders = []
        for name, value in g.placeholders:
            if isinstance(value, Choices):
                cases = tuple((self.resolve(when, instance), case) for when, case in value.cases)
                if sum(self._size(when) for when, _ in cases) > MAX_CHOICES_SIZE:
                    continue  # chosen by more than a message is worth carrying
                value = Choices(cases)
            placeholders.append((name, value))
        self.occurrences.setdefault((walk.key, g.line, "guard"), []).append(
            Occurrence(self.counter, reached, path, placeholders=tuple(placeholders)))

    def _write(self, walk: Walk, index: int, instance: _Instance, condition: Formula, path: tuple[str, ...]) -> None:
        self.counter += 1
        w = walk.writes[index]
        when = conj(condition, self.resolve(w.condition, instance))
        cases = self._value(walk.values[index], instance)
        self.occurrences.setdefault((walk.key, w.line, w.field), []).append(Occurrence(self.counter, when, path, cases))
        if when != FALSE and not w.field.startswith("_"):
            self.store.setdefault(w.field, []).append(Assignment(w.field, self.counter, (walk.key, w.line, w.field),
                                                                 when, cases))
            self._versions[w.field] = len(self.store[w.field])
            self.written += 1

    def _call(self, walk: Walk, index: int, instance: _Instance, condition: Formula, path: tuple[str, ...],
              caught: frozenset[str] = frozenset()) -> None:
        call = walk.calls[index]
        caught = caught | call.caught if call.caught else caught
        if len(path) < MAX_DEPTH:
            reached = conj(condition, self.resolve(call.condition, instance))
            if reached != FALSE:
                if not call.callees and call.variable:
                    # A call of a variable over a registry: the registered functions it runs, in place.
                    site_condition = without_loop_items(reached)
                    for fn in self.registries.run_at.get((walk.key, call.line), ()):
                        if label(fn) in path:
                            continue
                        runs = self.registries.runs_in_loop(fn, reached)
                        self.steps.append(("loop", fn.key, self.registries.containers_of(fn),
                                           self.registries.every_container(), runs))
                        if runs:
                            where = site_condition
                            if predicate_registered(fn):  # its predicate replaces the site's `predicate(arch)`
                                where = without_variable_calls(where, self._defined_in(walk.key))
                            self._enter(self.program.callee(fn, {})[0], _BARE,
                                        conj(where, registry_condition(fn)), path + (label(fn),), caught)
                for number, callee in enumerate(call.callees):
                    if callee.label in path:
                        continue  # recursion: the cycle adds nothing a first pass did not
                    where = reached if callee.when == TRUE else conj(reached, self.resolve(callee.when, instance))
                    if self.program.memoizes(callee.key):
                        # `model_config_of(server_args)` builds once and keeps the result on the record: walked
                        # at its first call, under "some call built it", the calls' conditions joined at the end.
                        sites = self.memo_sites.setdefault(callee.key, [])
                        sites.append(reached)
                        if len(sites) > 1:
                            continue
                        # What a `try` around this first call catches leaves the result unbuilt: a later
                        # call builds it again, and raises there.
                        self._enter(callee, (walk.memo_key, index, number), _built_mark(callee),
                                    path + (callee.label,))
                        continue
                    self._enter(callee, (walk.memo_key, index, number), where, path + (callee.label,), caught)
        if call.writes:
            instance.after[call.order] = self.versions()

    def _defined_in(self, key: str) -> Callable[[str], bool]:
        """Whether a name is bound at the top of the module of the function `key` (not a variable)."""
        module = self.program.modules.get(key.split(":", 1)[0])
        if module is None:
            return lambda name: True
        return lambda name: name in module.functions or name in module.imports or name in module.classes

    def _value(self, value: WalkValue, instance: _Instance) -> tuple[tuple[Formula, Value], ...]:
        """The written value as cases over launch values."""
        kind, data = value
        if kind == "term":
            return ((TRUE, data),)  # type: ignore[return-value]
        if kind == "bool":
            truth = self.resolve(data, instance)  # type: ignore[arg-type]
            return tuple((c, Lit(v)) for c, v in ((truth, True), (neg(truth), False)) if c != FALSE)
        cases = []
        for when, term in data:  # type: ignore[union-attr]
            when = self.resolve(when, instance)
            if when != FALSE:
                value = self._operand(term, instance)
                # An opaque value over fields the store wrote reads them as written so far (`device =
                # device.split(":")[0]` after `device = get_device()`): `device__v1.split(":")[0]`.
                cases.append((when, pinned_term(value) if isinstance(value, Template) else value))
        return tuple(cases)

    # --- reading the store -----------------------------------------------------------------

    def _operand(self, term: Term | Lit | None, instance: _Instance):
        """A term of a function's condition as a value of the run: a field read pins its version."""
        if not isinstance(term, Term):
            return term
        versions = instance.after.get(term.after, instance.entry) if term.after else instance.entry
        if term.kind is TermKind.FIELD:
            version = versions.get(term.name, 0)
            if version:
                return resolved_term(term.name, version, term.transforms)
            return replace(term, after=0) if term.after else term
        if term.fields and not term.text.isidentifier():
            # (A bare name is a local whose value the walk lost, `page_size` of a pass that may rewrite
            # it: no field of that name to pin.) Read where the function read them (its entry, or after the call that rewrote them), not
            # at the event: a write declared later in the function does not change what a test before it saw.
            pins = tuple((name, versions[name]) for name in term.fields if versions.get(name))
            if pins:
                return Template(term, pins)
        return term

    def resolve(self, f: Formula, instance: _Instance) -> Formula:
        """A function's condition with every field read replaced by its value in the store."""
        if isinstance(f, Const):
            return f
        found = instance.memo.get((f, self.written))
        if found is not None:
            return found
        if isinstance(f, Atom):
            result = self._atom(f, instance)
        elif isinstance(f, Not):
            result = neg(self.resolve(f.arg, instance))
        elif isinstance(f, And):
            result = conj(*(self.resolve(a, instance) for a in f.args))
        else:
            assert isinstance(f, Or)
            result = disj(*(self.resolve(a, instance) for a in f.args))
        instance.memo[(f, self.written)] = result
        return result

    def _atom(self, atom: Atom, instance: _Instance) -> Formula:
        left = self._operand(atom.term, instance)
        right = self._operand(atom.other, instance) if isinstance(atom.other, Term) else atom.other
        if left is atom.term and right is atom.other:
            return atom
        return self._compare(left, atom.op, right)

    def _compare(self, left, op: str, right) -> Formula:
        key = (left, op, right)
        found = self._compared.get(key)
        if found is None:
            found = self._compare_now(left, op, right)
            self._compared[key] = found
        return found

    def _compare_now(self, left, op: str, right) -> Formula:
        if op in REFLEXIVE_TRUTH and left == right and not isinstance(left, Lit):
            return Const(REFLEXIVE_TRUTH[op])  # `page_size != view.page_size` where both read one value
        for side, pinned in ((0, left), (1, right)):
            if is_pinned(pinned):
                spelled = self._spelled(pinned, lambda value: self._compare(*put(left, op, right, side, value)))
                if spelled is not None:
                    return spelled
        if isinstance(left, Template) or isinstance(right, Template):
            template = left if isinstance(left, Template) else right
            side = 0 if template is left else 1
            spelled = self._filled(template, lambda value: self._compare(*put(left, op, right, side, value)))
            if spelled is not None:
                return spelled
            return pinned_atom(template, op, right if side == 0 else left, side)
        return atom_of(left, op, right)

    def _spelled(self, pinned: Term, inner: Callable[[Value], Formula]) -> Formula | None:
        """`inner` of a pinned field's value spelled out: the latest write whose condition holds decides,
        else the earlier ones, else what the user typed. None when that would be too large (a `resolved`
        term reads it then)."""
        if pinned.version > MAX_INLINE_WRITES:
            return None
        writes = self.store[pinned.name][: pinned.version]
        # Too large before it is built: a write whose condition alone is past the limit, or one of its
        # cases, where the value is compared as more than a constant. Asked first: building such reads
        # to find them too large was a tenth of the run on 0.5.23 (`speculative_draft_model_path`, `model_path`).
        for write in writes:
            if self._size(write.condition) > MAX_INLINE_SIZE:
                return None
            for when, value in write.cases:
                if self._size(when) > MAX_INLINE_SIZE and type(inner(transformed(value, pinned.transforms))) is not Const:
                    return None
        typed = Term(TermKind.FIELD, pinned.name, pinned.name, (pinned.name,))
        result = inner(transformed(typed, pinned.transforms))
        for write in writes:
            written = disj(*(conj(when, inner(transformed(value, pinned.transforms))) for when, value in write.cases))
            result = disj(conj(write.condition, written), conj(neg(write.condition), result))
            if self._size(result) > MAX_INLINE_SIZE:
                return None
        return result

    def _filled(self, template: Template, inner: Callable[[Value], Formula]) -> Formula | None:
        """`inner` of an opaque term with its first pinned field replaced by each value it may hold."""
        (name, version), rest = template.pins[0], template.pins[1:]

        def substituted(value: Value) -> Formula:
            if isinstance(value, Term) and value.kind is TermKind.RESOLVED:
                return undecided(template.term, "truthy", None)  # a resolved value has no source text
            term = substitute(template.term, name, value)
            return inner(Template(term, rest) if rest else term)

        return self._spelled(resolved_term(name, version), substituted)

    def _size(self, f: Formula) -> int:
        """Atoms of a formula counted with repeats, memoized over shared subformulas."""
        found = self._sizes.get(f)
        if found is None:
            if isinstance(f, Atom):
                found = 1
            elif isinstance(f, Not):
                found = self._size(f.arg)
            elif isinstance(f, (And, Or)):
                found = sum(self._size(a) for a in f.args)
            else:
                found = 0
            self._sizes[f] = found
        return found

    def resolution(self, rules: Iterable[Rule]) -> tuple[Write, ...]:
        """The writes that the `resolved(...)` terms of these rules read, in run order per field."""
        rules = list(rules)
        ids = {rule_key(r): r.id for r in rules if r.kind is RuleKind.ADJUSTMENT}
        wanted = _resolved_versions(self, [r.trigger for r in rules if r.trigger is not None]
                                    + [w for r in rules for w, _ in r.assigns])
        writes = []
        for name in sorted(wanted):
            for version, a in enumerate(self.store.get(name, [])[: wanted[name]], 1):
                writes.append(Write(name, version, a.order, ids.get(a.key, ""), a.condition, a.cases))
        return tuple(writes)

    # --- rules -----------------------------------------------------------------------------

    def apply(self, rules: Iterable[Rule]) -> list[Rule]:
        """Rules with their trigger over launch values, call path, reachability and place in the run."""
        ranked = sorted({o.order for found in self.occurrences.values() for o in found})
        rank = {order: index + 1 for index, order in enumerate(ranked)}
        updated = []
        for rule in rules:
            key = rule_key(rule)
            found = self.occurrences.get(key, [])
            if not found:
                updated.append(replace(rule, trigger=rule.condition, reachable=False, call_path=(), order=None))
                continue
            trigger = self.triggers.get((key, rule.function))
            if trigger is None:  # kept with the run: composing them again costs as much as the run
                trigger = disj(*(o.condition for o in found))
                if key[0] in self.overflow:
                    name = f"{_NO_MORE}({rule.function!r})"
                    trigger = disj(trigger, Atom(Term(TermKind.OPAQUE, name, name)))
                self.triggers[(key, rule.function)] = trigger
            first = min(found, key=lambda o: o.order)
            assigns = first.cases if rule.kind is RuleKind.ADJUSTMENT else ()
            guard = rule.kind is not RuleKind.ADJUSTMENT
            updated.append(replace(rule, trigger=trigger, reachable=True, call_path=first.path,
                                   order=rank[first.order], assigns=assigns,
                                   places=_places(found, rank) if guard else (),
                                   placeholders=_placeholders(found, rank, rule.placeholders) if guard
                                   else rule.placeholders))
        return _affected_by(updated)


_BARE = ("bare",)  # a walk entered with no argument bound (an entry point, a registered function)


@dataclass(frozen=True, slots=True)
class KeptRun:
    """A run as kept for the next extraction: what it asked of the program in order (the registries'
    sites; each walk entered, how its arguments were bound, and the walk; each registry loop's
    containers), and what it found."""

    steps: tuple[tuple, ...]
    store: dict[str, list[Assignment]]
    occurrences: dict[RuleKey, list[Occurrence]]
    entered: dict[str, int]
    overflow: frozenset[str]
    counter: int
    written: int
    triggers: dict[tuple[RuleKey, str], Formula]  # filled as `Run.apply` composes them


def _built_mark(callee: Callee) -> Formula:
    return _built_mark_of(callee.key)


def _built_mark_of(key: str) -> Atom:
    """Stands for "some call of the memoizing function `key` was made" until the run has seen them all."""
    text = f"built({key})"
    return Atom(Term(TermKind.OPAQUE, text, text))


_NOT_EXCEPTIONS = frozenset({"SystemExit", "KeyboardInterrupt", "GeneratorExit", "BaseException"})


def escapes(guard: GuardEvent, caught: frozenset[str]) -> bool:
    """Does the guard's exception leave through `try` blocks that catch `caught` (by last name)? A
    builtin exception is caught by its bases too; another class only by its own name or `Exception`."""
    if not caught:
        return True
    if "BaseException" in caught:
        return False
    kind = "AssertionError" if guard.kind is RuleKind.ASSERT else (guard.exception or "").rsplit(".", 1)[-1]
    if not kind or kind in caught:
        return not kind  # a bare `raise` re-raises what a handler of its own function caught
    if guard.exception in LIBRARY_ERRORS:  # `json.JSONDecodeError`: caught as the ValueError it is
        return not LIBRARY_ERRORS[guard.exception] & caught
    if "Exception" in caught and kind not in _NOT_EXCEPTIONS:
        return False
    own = getattr(builtins, kind, None)
    if isinstance(own, type) and issubclass(own, BaseException):
        return not any(isinstance(base := getattr(builtins, name, None), type) and issubclass(own, base)
                       for name in caught)
    return True


def _sites(registries: Registries) -> tuple:
    """Where the registered functions run, by key: what the run reads of the registries."""
    return (tuple((site, tuple(fn.key for fn in fns)) for site, fns in registries.run_at.items()),
            tuple((fn.key, condition, name) for fn, condition, name in registries.unsited))


def _run_view(walk: Walk) -> tuple:
    """What the run reads of a walk: not messages or written texts, which only the rule records show."""
    return (walk.key,
            tuple((g.order, g.line, g.condition, g.run) for g in walk.guards),
            tuple((w.order, w.line, w.field, w.condition) for w in walk.writes),
            walk.values,
            tuple((c.order, c.line, c.condition, c.writes, c.callees, c.variable) for c in walk.calls))


def rule_key(rule: Rule) -> RuleKey:
    fn_key = f"{_dotted(rule.location.file)}:{rule.function}"
    return (fn_key, rule.location.line, rule.target if rule.kind is RuleKind.ADJUSTMENT and rule.target else "guard")


def _dotted(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def _resolved_versions(run: Run, formulas: Iterable[Formula]) -> dict[str, int]:
    """The writes per field that the `resolved(...)` terms in these formulas read, through the writes too."""
    wanted: dict[str, int] = {}
    pending = list(formulas)
    seen: set[Formula] = set()
    while pending:
        for term in terms_once(pending.pop(), seen):
            read = [(term.name, term.version)] if term.kind is TermKind.RESOLVED else pinned_in(term.text)
            for name, version in read:  # `resolved(x)`, or `x__v3` in an opaque term's text
                if version <= wanted.get(name, 0):
                    continue
                for a in run.store.get(name, [])[wanted.get(name, 0): version]:
                    pending.append(a.condition)
                    for when, value in a.cases:
                        pending.append(when)
                        if isinstance(value, Term):
                            pending.append(Atom(value))
                wanted[name] = version
    return wanted


def _places(found: list[Occurrence], rank: dict[int, int]) -> tuple[tuple[int, Formula], ...]:
    """A guard's places in the run, each with when it fires there, when there are several: a launch
    stops at the first place whose condition holds, not always the first place of all."""
    by_place: dict[int, list[Formula]] = {}
    for occurrence in found:
        by_place.setdefault(rank[occurrence.order], []).append(occurrence.condition)
    if len(by_place) < 2:
        return ()
    return tuple((place, disj(*conditions)) for place, conditions in sorted(by_place.items()))


def _placeholders(found: list[Occurrence], rank: dict[int, int], own: tuple[tuple[str, PlaceholderValue], ...]
                  ) -> tuple[tuple[str, PlaceholderValue], ...]:
    """What a guard's message placeholders hold where the run reaches it: one value where every place
    agrees, else the value at each place (`PlaceValues`, as `_places` orders them: a helper two
    callers call with other arguments); for one a place does not know, what the function's own walk
    found (`own`), if anything."""
    found = sorted(found, key=lambda o: o.order)
    at = [dict(o.placeholders) for o in found]
    kept: list[tuple[str, PlaceholderValue]] = []
    for name in sorted({name for place in at for name in place} | {name for name, _ in own}):
        values = [place.get(name) for place in at]
        if any(value is None for value in values):
            # (not one chosen by the function's own conditions: those do not read launch values)
            kept += [(name, value) for known, value in own if known == name and not isinstance(value, Choices)]
        elif all(value == values[0] for value in values):
            kept.append((name, values[0]))  # type: ignore[arg-type]
        else:
            by_place = tuple((rank[o.order], value) for o, value in zip(found, values))
            kept.append((name, PlaceValues(by_place)))  # type: ignore[arg-type]
    return tuple(kept)


def _affected_by(rules: list[Rule]) -> list[Rule]:
    """For each rule: the adjustments that run before it (before its last place) and write a field its
    own condition reads."""
    writes: dict[str, list[tuple[int, str]]] = {}
    for rule in rules:
        if rule.kind is RuleKind.ADJUSTMENT and rule.target and rule.order is not None:
            writes.setdefault(rule.target, []).append((rule.order, rule.id))
    result = []
    for rule in rules:
        if rule.order is None:
            result.append(rule)
            continue
        last = rule.places[-1][0] if rule.places else rule.order
        ids = sorted({
            rid for name in fields_read(rule.condition) for at, rid in writes.get(name, ())
            if at < last and rid != rule.id
        })
        result.append(replace(rule, affected_by=tuple(ids)) if ids else rule)
    return result
