"""Witnesses: for a rule whose trigger reads only flags (and env vars), a minimal command line that
triggers it and one fixed command line, each checked by the same evaluation as `check`.

The triggering line comes from `logic.solver.find_model` with every flag preferring its default (so only
the flags that matter are passed); the fixed line applies the first of the page's solutions that
clears the rule without setting off a sibling guard of the same function, else a minimal change
found by the solver that keeps the inherited path and falsifies the rule's own condition.

Consecutive commits of SGLang differ in a function or two, so a later extraction can reuse an
earlier one's work through a memo (a plain dict the caller keeps between runs, for the same code):
the whole stage's outcomes under a digest of everything it reads, and, when that differs, each
verification's verdict under a digest of the guard and the command line (`witness_keys`). The
outcomes are the same as without it, byte for byte.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from ...analysis.environ import env_defaults
from ...core.formula import atoms, conj, evaluate, neg
from ...core.parallel import Shared, shared_map
from ...core.model import And, Example, Flag, Formula, Lit, Rule, RuleKind, Term, TermKind, Write
from ...logic.evaluation import Context, Evaluator, identical
from ...logic.expressions import UNKNOWN, computable, safe_eval
from ...logic.facts import Facts
from ...logic.model_config import ModelFacts
from ...logic.platforms import Platform
from ...logic.launch import CommandLine, parse_command, takes_list, value_type
from ...logic.launch_words import ENV_ASSIGNMENT
from ...logic.solver import find_model
from ..check.linter import RuleSet, check, definite_errors, guards_to_check, launch_context, launch_facts
from .witness_keys import FORMAT, Digests, command_digest
from ..check.words import Flags, apply_way, solutions, split_condition

MODEL_PATH = "org/model"  # a stand-in for the required --model-path
_A = TypeVar("_A")
_REQUIRED_VALUE = {"model_path": MODEL_PATH}
_SEARCH_LIMIT = 512  # value combinations tried for flags read inside expressions
# Guards dealt to each process at a time (`jobs`): a function's guards share command lines, so their
# verdicts are made once when they stay together.
_CHUNK = 8


@dataclass(frozen=True)
class Outcome:
    """What happened to one rule: its witness, or why there is none."""

    rule_id: str
    example: Example | None
    reason: str  # ok, not-eligible, unsatisfiable, not-expressible, before-failed, no-fix


def eligible(rule: Rule) -> bool:
    """A reachable guard whose trigger reads nothing but flags and env vars (or expressions over flags)."""
    if rule.kind is RuleKind.ADJUSTMENT or not rule.reachable or rule.trigger is None:
        return False
    for atom in atoms(rule.effective):
        for term in (atom.term, atom.other):
            if isinstance(term, Term) and term.kind not in (TermKind.FIELD, TermKind.ENV) and not (
                    term.kind is TermKind.OPAQUE and computable(term)):
                return False
    return True


def attach_witnesses(rules: Sequence[Rule], flags: Sequence[Flag], tree=None, resolution: Sequence[Write] = (),
                     memo: MutableMapping | None = None, jobs: int = 1) -> list[Rule]:
    """The rules with `example` filled in wherever a verified witness was found (env defaults from `tree`).

    `memo`: a dict an earlier call filled (with the same code), reused where sound and updated; pickle
    it between runs. `jobs`: processes to share the guards with (`core.parallel`). The result is the
    same with or without either.
    """
    return witnessed(rules, flags, tree, resolution, memo, jobs).items


def witnessed(rules: Sequence[Rule], flags: Sequence[Flag], tree=None, resolution: Sequence[Write] = (),
              memo: MutableMapping | None = None, jobs: int = 1,
              beside: Callable[[], _A] | None = None) -> Shared[Rule, _A]:
    """`attach_witnesses`, and `beside` (a task that does not read the witnesses) made in this process
    while helper processes, when there are some, start on the guards: the rules, and what `beside` gave."""
    envs = env_defaults(tree) if tree is not None else None
    ruleset = RuleSet(tuple(rules), tuple(flags), {}, envs, tuple(resolution))
    found = _outcomes(ruleset, memo, jobs, beside)
    outcomes = {o.rule_id: o for o in found.items}
    return Shared([replace(r, example=outcomes[r.id].example) if r.id in outcomes and outcomes[r.id].example else r
                   for r in rules], found.aside)


def witnesses(ruleset: RuleSet, memo: MutableMapping | None = None, jobs: int = 1) -> list[Outcome]:
    """One outcome per guard, in rule order (see `attach_witnesses` for `memo` and `jobs`)."""
    return _outcomes(ruleset, memo, jobs, None).items


def _outcomes(ruleset: RuleSet, memo: MutableMapping | None, jobs: int,
              beside: Callable[[], _A] | None) -> Shared[Outcome, _A]:
    guards = [rule for rule in ruleset.rules if rule.kind is not RuleKind.ADJUSTMENT]
    if memo is None:
        # Candidate lines repeat (a third of them: retries, the fixed line of one rule the triggering
        # line of another): each trigger's truth on a line is evaluated once in this run.
        finder = Finder(ruleset, _Verdicts(ruleset, Digests(ruleset), id, _InRun()))
        return shared_map(lambda i: finder.outcome(guards[i]), len(guards), jobs, _CHUNK, aside=beside)
    store = _Memo(memo)
    digests = Digests(ruleset)
    key = digests.stage()
    kept = store.outcomes(key)
    if kept is not None and len(kept) == len(guards):
        return Shared([Outcome(rule.id, Example(before, after) if before is not None else None, reason)
                       for rule, (reason, before, after) in zip(guards, kept)], beside() if beside is not None else None)
    finder = Finder(ruleset, _Verdicts(ruleset, digests, digests.guard, store))
    if store.earlier and sum(not store.judged(digests.guard(rule)) for rule in guards) <= 2 * _CHUNK:
        jobs = 1  # the next commit of an extracted one: its verdicts are looked up, not made (a helper costs more)
    found = shared_map(lambda i: finder.outcome(guards[i]), len(guards), jobs, _CHUNK,
                       finish=lambda: store.used, absorb=store.absorb, aside=beside)
    store.keep_outcomes(key, tuple((o.reason, *((o.example.before, o.example.after) if o.example else (None, None)))
                                   for o in found.items))
    store.keep_verdicts()
    return found


def verify(ruleset: RuleSet, rule: Rule, example: Example) -> tuple[bool, bool]:
    """(the triggering line makes the rule definite, the fixed line clears it)."""
    before = _certainty(ruleset, rule, example.before)
    after = _certainty(ruleset, rule, example.after)
    return before == "definite", after is None


def _certainty(ruleset: RuleSet, rule: Rule, argv: Sequence[str], on: On | None = None) -> str | None:
    report = check(ruleset, argv, only=[rule.id], platform=on.platform if on else None, model=on.model if on else None)
    if report.argument_errors:
        return "argument-error"
    return next((f.certainty for f in report.findings if f.rule.id == rule.id), None)


# ---- reuse across extractions ---------------------------------------------------------------------------

_STAGES = "witness.stages"  # stage key -> each guard's (reason, before, after), the newest last
_VERDICTS = "witness.verdicts"  # command digest -> guard digest -> the trigger's truth on that command
_FORMAT = "witness.format"
_KEPT_STAGES = 4  # whole-stage outcomes kept: the last few sources extracted


class _Memo:
    """The witness entries of a caller's memo: outcomes of whole stages, and verdicts.

    Verdicts kept are those the last run looked up or made: a memo stays the size of one run, and
    what the next commit asks is what this one asked, but for the few guards that changed. They are
    grouped by command line, so each guard digest (one object per run) is pickled once.
    """

    def __init__(self, memo: MutableMapping) -> None:
        if memo.get(_FORMAT) != FORMAT:  # filled by code that keyed or stored differently
            for name in (_STAGES, _VERDICTS):
                memo.pop(name, None)
            memo[_FORMAT] = FORMAT
        self.memo = memo
        self.earlier: dict[bytes, dict[bytes, bool | None]] = memo.get(_VERDICTS, {})
        self.used: dict[bytes, dict[bytes, bool | None]] = {}
        self._judged: set[bytes] | None = None  # every guard digest of `earlier`, when first asked

    def outcomes(self, key: bytes) -> tuple | None:
        return self.memo.get(_STAGES, {}).get(key)

    def keep_outcomes(self, key: bytes, outcomes: tuple) -> None:
        stages = {k: v for k, v in self.memo.get(_STAGES, {}).items() if k != key}
        stages[key] = outcomes
        self.memo[_STAGES] = dict(list(stages.items())[-_KEPT_STAGES:])

    def verdict(self, command: bytes, guard: bytes, compute: Callable[[], bool | None]) -> bool | None:
        used = self.used.setdefault(command, {})
        if guard not in used:
            earlier = self.earlier.get(command, {})
            used[guard] = earlier[guard] if guard in earlier else compute()
        return used[guard]

    def judged(self, guard: bytes) -> bool:
        """Has an earlier run a verdict of this guard on some command line?"""
        if self._judged is None:
            self._judged = {g for verdicts in self.earlier.values() for g in verdicts}
        return guard in self._judged

    def absorb(self, used: dict[bytes, dict[bytes, bool | None]]) -> None:
        """What another process looked up or made (`core.parallel`), as if here."""
        for command, verdicts in used.items():
            self.used.setdefault(command, {}).update(verdicts)

    def keep_verdicts(self) -> None:
        self.memo[_VERDICTS] = self.used


class _InRun:
    """Verdicts kept for one run only (no memo between runs): by command digest and rule object."""

    def __init__(self) -> None:
        self.found: dict[tuple[bytes, object], bool | None] = {}

    def verdict(self, command: bytes, guard: object, compute: Callable[[], bool | None]) -> bool | None:
        key = (command, guard)
        if key not in self.found:
            self.found[key] = compute()
        return self.found[key]


_ABSENT = object()  # a name one command line does not give


class _Verdicts:
    """`definite_errors` and `_certainty` with each trigger's truth on a command line looked up in
    `memo` by command digest and `guard_key` before it is evaluated: the same answers. Between runs
    the key is the guard's content (`Digests.guard`); within one run, the rule object."""

    def __init__(self, ruleset: RuleSet, digests: Digests, guard_key: Callable[[Rule], object],
                 memo: _Memo | _InRun) -> None:
        self.ruleset = ruleset
        self.digests = digests
        self.guard_key = guard_key
        self.memo = memo
        self._last: tuple[bytes, Evaluator] | None = None
        self._bare: tuple[CommandLine, Context] | None = None

    def definite_errors(self, argv: Sequence[str], reading: Iterable[str] | None = None,
                        before: int | None = None) -> list[Rule]:
        truth = self._truth(parse_command(argv, self.ruleset.catalog))
        return [rule for rule in guards_to_check(self.ruleset, reading, before) if truth(rule) is True]

    def certainty(self, rule: Rule, argv: Sequence[str]) -> str | None:
        command = parse_command(argv, self.ruleset.catalog)
        if command.errors:
            return "argument-error"
        if launch_facts(command) is not None:  # a model folder on this machine: as `check` reads it
            return _certainty(self.ruleset, rule, argv)
        target = self.ruleset.by_id.get(rule.id)  # what `check(only=[id])` evaluates
        if target is None or not target.reachable or target.kind is RuleKind.ADJUSTMENT:
            return None
        truth = self._truth(command)(target)
        return "definite" if truth else None if truth is False else "possible"

    def _truth(self, command: CommandLine) -> Callable[[Rule], bool | None]:
        call = command_digest(command)

        def truth(rule: Rule) -> bool | None:
            return self.memo.verdict(call, self.guard_key(rule), lambda: self._evaluator(call, command).holds(rule))

        return truth

    def _evaluator(self, call: bytes, command: CommandLine) -> Evaluator:
        """The evaluator of a command line, made on the first miss (most lookups find their verdict)
        and kept while the next lookups are of the same line (a rule's lines are checked together):
        what it resolved once, it does not resolve again."""
        if self._last is None or self._last[0] != call:
            context = launch_context(self.ruleset, command)
            if self._bare is None:
                bare = parse_command(["--model-path", MODEL_PATH], self.ruleset.catalog)
                self._bare = (bare, launch_context(self.ruleset, bare))
            context.inherit(self._bare[1], self.digests.read_sets, self._changed(command, self._bare[0]))
            self._last = (call, Evaluator(self.ruleset.by_id, context))
        return self._last[1]

    def _changed(self, command: CommandLine, bare: CommandLine) -> frozenset[str]:
        """The names whose values differ between the command line and the bare launch: fields given
        differently, and env vars it sets (with the variables that read one as their deprecated alias)."""
        names = {name for name in command.given.keys() | bare.given.keys()
                 if not identical(command.given.get(name, _ABSENT), bare.given.get(name, _ABSENT))}
        for name in command.env.keys() | bare.env.keys():
            names.add(name)
            names.update(var for var, declared in (self.ruleset.envs or {}).items() if declared.alias == name)
        return frozenset(names)


def domains(ruleset: RuleSet) -> dict[str, list[object]]:
    """Values worth trying per flag, typed as argparse would give them.

    Choices when the flag has them; otherwise its default, the literals the rules compare it with
    (and their integer neighbours), and one fresh value, so the solver never proposes a value the
    command line cannot spell (`True` for a string flag, `1.5` for an int flag, a whole list).
    Float flags are left to the solver's own candidates.
    """
    seen: dict[str, list[object]] = {}
    for rule in ruleset.rules:
        for atom in atoms(rule.effective):
            if atom.term.kind is TermKind.FIELD and isinstance(atom.other, Lit):
                value = atom.other.value
                seen.setdefault(atom.term.name, []).extend(value if isinstance(value, tuple) else (value,))
    result: dict[str, list[object]] = {}
    switches = Flags(ruleset.flags)
    for flag in ruleset.flags:
        default = ruleset.defaults.get(flag.name, UNKNOWN)
        start = [] if default is UNKNOWN else [default]
        kind = value_type(flag)
        kind = "int" if kind == "human_readable_int" else kind  # `128k` parses to an int
        literals = seen.get(flag.name, [])
        if flag.choices:
            values = start + list(flag.choices)
        elif switches.is_switch(flag.name):
            values = start + [False, True]
        elif takes_list(flag):
            sample = next((v for v in literals if isinstance(v, str) if kind == "str"), None)
            item = sample if sample is not None else 1 if kind == "int" else "other"
            # `len(x) > 4` needs a list of five: one list per length the rules compare with, plus one.
            lengths = sorted({min(int(v) + 1, 64) for v in literals if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0})
            values = start + [[item]] + [[item] * n for n in lengths if n > 1]
        elif kind == "int":
            numbers = [v for v in literals if isinstance(v, (int, float)) and not isinstance(v, bool)]
            values = start + [n for v in numbers for n in (math.floor(v), math.ceil(v), math.floor(v) - 1, math.ceil(v) + 1)]
            values += [0, 1, 2] + ([None] if "Optional" in (flag.type or "") or default is None else [])
        elif kind == "str":
            values = start + [v for v in literals if isinstance(v, str)] + ["other"]
            values += [None] if "Optional" in (flag.type or "") or default is None else []
        elif kind == "json":
            values = start + [{}]
        else:
            continue
        result[flag.name] = _distinct(values)
    return result


def _distinct(values: Iterable[object]) -> list[object]:
    """The values in order, without repeats by `_same` (1 and 1.0 are one value, 1 and True two)."""
    found: list[object] = []
    seen: set[tuple[str, object]] = set()
    for value in values:
        try:
            key = ("bool" if isinstance(value, bool) else "number" if isinstance(value, (int, float)) else
                   type(value).__name__, value)
            if key in seen:
                continue
            seen.add(key)
        except TypeError:  # a list value: compared one by one
            if any(same_value(value, v) for v in found):
                continue
        found.append(value)
    return found


@dataclass(frozen=True)
class On:
    """A machine and a model the search runs its command lines on (`typical`): the values every such
    launch carries, its model path first, and the platform and model facts `check` is given."""

    required: tuple[tuple[str, object], ...]
    platform: Platform
    model: ModelFacts
    launch: tuple[str, ...] = ()  # the setup's own launch (it passes every check)

    def facts(self, ruleset: RuleSet, argv: Sequence[str]) -> Facts | None:
        """The facts `check` decides this command line under (fresh: a Facts keeps what it read)."""
        command = parse_command(argv, ruleset.catalog)
        return launch_facts(command, self.platform, self.model, None, ruleset.library, command.env, ruleset.envs)


class Finder:
    """The witness search of one rule set: a command line that stops first at a guard, and one
    that clears it; on a setup (`On`) when given, with its platform and model facts."""

    def __init__(self, ruleset: RuleSet, verdicts: _Verdicts | None = None, on: On | None = None) -> None:
        self.ruleset = ruleset
        self.verdicts = verdicts
        self.on = on
        self.required: dict[str, object] = dict(on.required) if on is not None else _REQUIRED_VALUE
        self.flags = Flags(ruleset.flags)
        self.by_id = {r.id: r for r in ruleset.rules}
        self.catalog = ruleset.catalog
        self.prefer: dict[str, object] = {k: v for k, v in ruleset.defaults.items() if v is not UNKNOWN}
        self.prefer.update(self.required)
        for name, var in (ruleset.envs or {}).items():
            if var.default_known:
                self.prefer[f"envs.{name}.get()"] = var.default
        self.domains = domains(ruleset)
        # Expressions over flags (`tp_size * dp_size`) are variables of their own to the solver:
        # let them prefer the value the defaults give.
        for rule in ruleset.rules:
            for atom in atoms(rule.effective):
                for term in (atom.term, atom.other):
                    if isinstance(term, Term) and term.kind is TermKind.OPAQUE and term.text not in self.prefer \
                            and computable(term):
                        try:
                            self.prefer[term.text] = safe_eval(term.text, self.prefer)
                        except Exception:  # Unknown, or not defined on the defaults
                            pass
        # Guards that fire on the bare launch (the stand-in model path and every default): they would
        # stand before every witness, so they are left out of "is it the first error".
        self.baseline = {r.id for r in self._definite_errors(self._command({}) or [])}
        self.siblings: dict[tuple[str, str], list[Rule]] = {}
        for rule in ruleset.rules:
            if rule.kind is not RuleKind.ADJUSTMENT and rule.reachable:
                self.siblings.setdefault((rule.location.file, rule.function), []).append(rule)

    def outcome(self, rule: Rule) -> Outcome:
        if not eligible(rule):
            return Outcome(rule.id, None, "not-eligible")
        before = self._before(rule, rule.effective)
        if isinstance(before, str):
            return Outcome(rule.id, None, before)
        after = self._after(rule, before)
        if after is None:
            return Outcome(rule.id, None, "no-fix")
        return Outcome(rule.id, Example(tuple(before), tuple(after)), "ok")

    # -- the triggering line --

    def first_stop(self, rule: Rule, goal: Formula) -> list[str] | None:
        """A command line that stops first at the rule, made to satisfy `goal` (its trigger, or the
        trigger with the platform and model atoms decided), or None."""
        found = self._before(rule, goal)
        return None if isinstance(found, str) else found

    def _before(self, rule: Rule, goal: Formula) -> list[str] | str:
        # Adjustments that run first and read only flags: ask that they stay quiet, so the guard
        # sees the values the command line gives (a second try, only when the first is not definite).
        quiet = [neg(a.effective) for a in (self.by_id.get(i) for i in rule.affected_by)
                 if a is not None and a.kind is RuleKind.ADJUSTMENT and eligible(replace(a, kind=RuleKind.RAISE))]
        reason = "unsatisfiable"
        attempts = [goal, conj(goal, *quiet)] if quiet else [goal]
        retries = 2  # formulas that also ask the guards found first to stay quiet
        while attempts:
            formula = attempts.pop(0)
            model = find_model(formula, self.prefer, self.domains)
            if model is None:
                continue
            for repaired in (model, _equate(model, formula), self._search(goal, model)):
                argv = self._command(repaired) if repaired is not None else None
                if argv is None:
                    reason = "not-expressible" if repaired is not None else reason
                    continue
                if self._certainty(rule, argv) != "definite":
                    reason = "before-failed"
                    continue
                earlier = self._errors(argv, before=rule.order)
                if not earlier:
                    return argv  # the launch stops at this rule first
                reason = "not-first"
                if retries:  # once more, asking that the guards that came first stay quiet
                    retries -= 1
                    attempts.append(conj(formula, *(neg(e.effective) for e in earlier)))
                break
        return reason

    def _errors(self, argv: list[str], before: int | None = None) -> list[Rule]:
        """The definite errors of a command line among the guards the flags and env vars it sets can change."""
        reading = set()
        values = parse_command(argv, self.catalog).given
        for name, value in values.items():
            if not (name in self.prefer and same_value(value, self.prefer[name])):
                reading.add(name)
        reading |= {f"env:{item.split('=', 1)[0]}" for item in argv if ENV_ASSIGNMENT.match(item)}
        return [r for r in self._definite_errors(argv, reading, before) if r.id not in self.baseline]

    def _definite_errors(self, argv: Sequence[str], reading: Iterable[str] | None = None,
                         before: int | None = None) -> list[Rule]:
        if self.on is not None:
            return definite_errors(self.ruleset, argv, reading, before, facts=self.on.facts(self.ruleset, argv))
        if self.verdicts is not None:
            return self.verdicts.definite_errors(argv, reading, before)
        return definite_errors(self.ruleset, argv, reading, before)

    def _certainty(self, rule: Rule, argv: Sequence[str]) -> str | None:
        if self.on is not None:
            return _certainty(self.ruleset, rule, argv, self.on)
        if self.verdicts is not None:
            return self.verdicts.certainty(rule, argv)
        return _certainty(self.ruleset, rule, argv)

    def _search(self, goal: Formula, model: Mapping[Term, object]) -> dict[Term, object] | None:
        """The solver sees `tp_size * pp_size` or `device.startswith("cuda")` as free variables: try
        the flags such expressions read over their domains until the trigger holds on the values."""
        names = sorted({n for atom in atoms(goal) for t in (atom.term, atom.other)
                        if isinstance(t, Term) and t.kind is TermKind.OPAQUE for n in t.fields})
        if not names:
            return None
        fixed = {t.name: v for t, v in model.items() if t.kind is TermKind.FIELD}
        base = {**self.prefer, **fixed}
        options = [self.domains.get(n, [base.get(n)]) for n in names]
        for combo in itertools.islice(itertools.product(*options), _SEARCH_LIMIT):
            values = {**base, **dict(zip(names, combo))}
            context = Context(values, {}, self.ruleset.envs)
            if evaluate(goal, context.value_of) is True:
                found = {t: v for t, v in model.items() if t.kind is TermKind.ENV}
                found.update({_field(n): values[n] for n in {*fixed, *names}})
                return found
        return None

    def _command(self, model: Mapping[Term, object]) -> list[str] | None:
        env: list[str] = []
        args: list[str] = []
        values = {t.name: v for t, v in model.items() if t.kind is TermKind.FIELD}
        # On a setup, what every launch there carries comes first, as people write it.
        first = list(self.required) if self.on is not None else []
        for name in first + sorted((set(values) | set(self.required)) - set(first)):
            value = values.get(name, self.required.get(name))
            has_default = name in self.prefer and name not in self.required
            if has_default and same_value(value, self.prefer[name]):
                continue
            tokens = self._tokens(name, value)
            if tokens is None:
                return None
            args += tokens
        for term, value in sorted(model.items(), key=lambda item: item[0].name):
            if term.kind is not TermKind.ENV:
                continue
            assignment = self._env_assignment(term, value)
            if assignment is False:
                return None
            if assignment:
                env.append(assignment)
        return env + args

    def _tokens(self, name: str, value: object) -> list[str] | None:
        flag = self.flags.by_field.get(name)
        if flag is None or not flag.flags:
            return None
        option = flag.flags[0]
        if self.flags.is_switch(name):
            if value is True:
                return [option]
            if value is False and self.flags.negatable(name) and option.startswith("--"):
                return ["--no-" + option[2:]]
            return None
        if value is None:
            return [option] if flag.nargs == "?" else None
        if isinstance(value, (list, tuple)):
            return [option, *(_text(v) for v in value)] if value else None
        return [option, _text(value)]

    def _env_assignment(self, term: Term, value: object) -> str | bool | None:
        """`NAME=VALUE` for an env var the model needs, None when unset will do, False when impossible."""
        var = (self.ruleset.envs or {}).get(term.name)
        if term.text.endswith(".is_set()"):
            return f"{term.name}=1" if value else None
        if var is not None and var.default_known and same_value(value, var.default):
            return None
        if value is None:
            return None if var is None or var.default is None else False
        if isinstance(value, bool):
            return f"{term.name}={'true' if value else 'false'}"
        if isinstance(value, (list, tuple)):
            return f"{term.name}={','.join(str(v) for v in value)}"
        return f"{term.name}={value}"

    # -- the fixed line --

    def _after(self, rule: Rule, before: list[str]) -> list[str] | None:
        siblings = self.siblings.get((rule.location.file, rule.function), [])
        candidates = [apply_way(before, way, self.catalog) for way in solutions(rule, self.flags, siblings)]
        own, inherited = split_condition(rule, siblings)
        if own:
            model = find_model(conj(*inherited, neg(And(tuple(own)) if len(own) > 1 else own[0])),
                               {**self.prefer, **self._values(before)}, self.domains)
            if model is not None:
                candidates.append(self._command(model))
        for argv in candidates:
            if argv is None or argv == before or self._certainty(rule, argv) is not None:
                continue
            if not self._errors(argv):
                return argv  # clears the rule and sets off no other guard
        return None

    def _values(self, argv: list[str]) -> dict[str, object]:
        return {k: v for k, v in parse_command(argv, self.catalog).given.items() if v is not UNKNOWN}


def _field(name: str) -> Term:
    return Term(TermKind.FIELD, name, name, (name,))


def _equate(model: Mapping[Term, object], formula: Formula) -> dict[Term, object]:
    """The model with `a == b` between two flags made to hold (the solver treats it as a free boolean)."""
    values = dict(model)
    by_name = {t.name: t for t in values if t.kind is TermKind.FIELD}
    for atom in atoms(formula):
        other = atom.other
        if atom.op == "==" and isinstance(other, Term) and atom.term.kind is other.kind is TermKind.FIELD \
                and not atom.term.transforms and not other.transforms:
            left, right = by_name.get(atom.term.name), by_name.get(other.name)
            if left is not None and right is not None:
                values[right] = values[left]
            elif left is not None:
                values[Term(TermKind.FIELD, other.name, other.name, (other.name,))] = values[left]
    return values


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def same_value(a: object, b: object) -> bool:
    """The same value to argparse and a trigger: equal and of one type, or two equal numbers (not booleans)."""
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                             and not isinstance(a, bool) and not isinstance(b, bool) and a == b)
