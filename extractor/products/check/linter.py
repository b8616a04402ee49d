"""The launch-command linter: a rule set, and the findings of one launch command against it, as text or JSON.

The command line is parsed as SGLang's argparse parser would (`logic.launch`); flags left out take
their defaults. Each reachable rule's trigger is evaluated in three-valued logic (`logic.evaluation`):
environment variables count as unset unless given (`--env`, `--use-env`, or `NAME=VALUE` before the
command), with `envs.X.get()` defaults read from the source's environ.py when it is at hand.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from functools import cached_property

from ...core.formula import every_atom
from ...core.model import Atom, Flag, HelperLibrary, Lit, Rule, RuleKind, Term, TermKind, Write
from ...logic.environment import EnvVar
from ...logic.assumptions import assumption_key, substitute_assumptions
from ...logic.carried import Carried
from ...logic.evaluation import MISSING_KINDS, Context, Evaluator
from ...logic.expressions import UNKNOWN
from ...logic.messages import IN_TABLE, filled_message
from ...logic.facts import Facts
from ...logic.launch_host import LaunchHost
from ...logic.model_config import ModelFacts, local_model
from ...logic.platforms import Platform
from ...logic.reads import FormulaReads
from ...logic.helpers import Helpers
from ...logic.launch import ArgError, Catalog, CommandLine, config_reader, parse_command
from ...logic.releases import FlagHistory, shipped_flag_history


@dataclass(frozen=True)
class RuleSet:
    """The records of one extraction: rules, flag catalog, where they came from, env-var defaults."""

    rules: tuple[Rule, ...]
    flags: tuple[Flag, ...]
    source: Mapping[str, object]
    envs: Mapping[str, EnvVar] | None = None  # None: environ.py was not at hand
    resolution: tuple[Write, ...] = ()  # the writes that resolved terms of triggers read
    helpers: HelperLibrary = HelperLibrary()  # the source's helpers that terms call (`get_device()`)

    @cached_property
    def readers(self) -> dict[str, tuple[Rule, ...]]:
        """The reachable guards that read each field or env var (`env:NAME`), through resolved fields
        too, in run order: a command line that sets none of them cannot change their truth."""
        found: dict[str, list[Rule]] = {}
        chains: dict[tuple[str, int], frozenset[str]] = {}
        for rule in self.rules:
            if rule.reachable and rule.kind is not RuleKind.ADJUSTMENT:
                for name in self._reads(rule.effective, chains):
                    found.setdefault(name, []).append(rule)
        return {name: tuple(sorted(rules, key=_position)) for name, rules in found.items()}

    def _reads(self, f, chains: dict) -> frozenset[str]:
        names: set[str] = set()
        # Each distinct atom once: a trigger repeats shared parts (a resolved field's writes) many times.
        for term in _terms(f):
            if term.kind is TermKind.ENV:
                names.add(f"env:{term.name}")
            elif term.kind is TermKind.RESOLVED:
                names |= self._chain_reads(term.name, term.version, chains)
            names.update(term.fields)
        return frozenset(names)

    def _chain_reads(self, name: str, version: int, chains: dict) -> frozenset[str]:
        key = (name, version)
        if key not in chains:
            chains[key] = frozenset({name})  # a cycle adds nothing
            found = {name}
            for write in self.writes.get(name, ())[:version]:
                found |= self._reads(write.when, chains)
                for when, value in write.cases:
                    found |= self._reads(when, chains)
                    if isinstance(value, Term):
                        found |= self._reads(Atom(value), chains)
            chains[key] = frozenset(found)
        return chains[key]

    @cached_property
    def writes(self) -> dict[str, tuple[Write, ...]]:
        """The resolution table by field, in version order."""
        found: dict[str, list[Write]] = {}
        for write in sorted(self.resolution, key=lambda w: (w.field, w.version)):
            found.setdefault(write.field, []).append(write)
        return {name: tuple(writes) for name, writes in found.items()}

    @cached_property
    def read_sets(self) -> FormulaReads:
        """What each formula and resolution chain reads (`logic.reads`), memoized while the set lives."""
        envs = self.envs or {}
        return FormulaReads(self.writes, {*self.catalog.flags, *envs, *(v.alias for v in envs.values() if v.alias)})

    @property
    def label(self) -> str:
        return str(self.source.get("label", "rules"))

    @cached_property
    def catalog(self) -> Catalog:
        return Catalog(self.flags)

    @cached_property
    def defaults(self) -> dict[str, object]:
        return self.catalog.defaults()

    @cached_property
    def library(self) -> Helpers:
        """The helpers, ready to be read over a launch's facts (parsed as they are called)."""
        return Helpers(self.helpers)

    @cached_property
    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}

    @cached_property
    def baseline(self) -> Baseline:
        """The bare launch evaluated whole (`bare_baseline`): worked out when the index is built."""
        return bare_baseline(self)

    @cached_property
    def baselines_on_facts(self) -> dict[str, Baseline]:
        """The bare launch evaluated on a platform profile or a given model, by `facts_key`: added
        where they are kept (`products.reuse.index.with_baseline_on`), never in the index itself."""
        return {}

    def __getstate__(self) -> dict:
        return {name: value for name, value in self.__dict__.items() if name not in _NOT_INDEXED}


# ---- checking a command line -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A rule the command line triggers for sure (`definite`) or may trigger (`possible`)."""

    rule: Rule
    certainty: str
    # The conditions the command line does not decide (`unknown`), or what spells them when asked.
    undecided: tuple[str, ...] | Callable[[], tuple[str, ...]] = field(default=(), compare=False, repr=False)
    changed_by: tuple[str, ...] = ()  # adjustments that may rewrite a field the rule reads
    needs: tuple[str, ...] = ()  # what would decide it: platform, model, environment, code (`MISSING_KINDS`)
    # The exception SGLang raises evaluating the check itself, instead of its message (`x % 0`).
    fails_with: str | None = None
    # Where the launch meets it, for a guard the run reaches at several places (`Rule.places`): the
    # first place whose condition holds (may hold, for a possible one); None: the rule's own place.
    place: int | None = None
    # Fills the rule's message with the launch's values, where it decides them: asked only of the
    # findings shown (a text report shows the definite ones).
    fill: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    @cached_property
    def unknown(self) -> tuple[str, ...]:
        """The conditions the command line does not decide, as the user types them."""
        return self.undecided() if callable(self.undecided) else self.undecided

    @cached_property
    def message(self) -> str:
        """The rule's message with the launch's values filled in where it decides them ("" if none)."""
        return self.fill() if self.fill is not None else ""

    @property
    def text(self) -> str:
        return self.message or self.rule.message

    @property
    def waits_for(self) -> str:
        """The one kind of fact a possible finding is counted under: the first it needs (`needs` is in
        `MISSING_KINDS` order)."""
        return self.needs[0] if self.needs else "code"


@dataclass(frozen=True)
class Beyond:
    """Why no change of flags avoids a definite error: what decides it instead (the GPU or platform,
    the model's config, environment variables)."""

    deciders: tuple[str, ...]

    def text(self) -> str:
        return "no change of flags avoids it here; it depends on " + "; ".join(self.deciders)

    def record(self) -> dict:
        return {"beyond_flags": list(self.deciders)}


@dataclass
class Report:
    findings: list[Finding]
    argument_errors: list[ArgError]
    adjustments: list[Rule]
    unused_assumptions: list[str]
    checked: int
    label: str
    placeholders: list[str] = field(default_factory=list)  # `--port $PORT`: left unknown
    unread_config: str | None = None  # `--config FILE` not on this machine: what it sets is unknown
    # The evaluation the findings come from: the fixes of its definite errors, a few values away, take
    # what those values leave as is from it (`launch_evaluator(..., base=...)`).
    evaluator: Evaluator | None = field(default=None, compare=False, repr=False)

    @property
    def definite(self) -> list[Finding]:
        return [f for f in self.findings if f.certainty == "definite"]


def check(
    ruleset: RuleSet,
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    use_env: bool = False,
    assume: Mapping[str, bool] | None = None,
    only: Iterable[str] | None = None,
    platform: Platform | None = None,
    model: ModelFacts | None = None,
    host: LaunchHost | None = None,
    baseline: bool = True,
    without_facts: bool = False,
    files: Mapping[str, str] | None = None,
) -> Report:
    """Findings for a launch command: argparse errors, then every reachable guard that may fire.

    `platform` and `model` decide platform and model atoms; without `model`, a `--model-path` that
    names a local folder with a config.json is read. `without_facts`: none of those, nor the source's
    helpers (as `launch_evaluator` evaluates a page's short command line). `files`: what the deployment
    puts where the launch runs (a mounted ConfigMap's keys), by path: a `--config` is read there first.
    """
    # A `--config` file not found here is SGLang's error only where the launch runs (`--local`).
    command = parse_command(argv, ruleset.catalog, config_reader(files or {}), config_here=host is not None)
    assumed = {assumption_key(k): v for k, v in (assume or {}).items()}
    environment = {**(os.environ if use_env else {}), **command.env, **(env or {})}
    facts = None if without_facts else launch_facts(command, platform, model, host, ruleset.library, environment,
                                                    ruleset.envs)
    context = launch_context(ruleset, command, env, use_env, assumed, facts)
    # From the index's evaluation of the bare launch (on the same platform and model): a guard none of
    # whose atoms comes out otherwise here is what it is there.
    base, carried = _carry_from_bare(ruleset, context) if baseline and only is None and not assumed else (None, None)
    rules = list(ruleset.rules)
    used: set[str] = set()
    if assumed:
        substituted = []
        for rule in rules:
            trigger, hit = substitute_assumptions(rule.effective, assumed, ruleset.catalog.spellings)
            used |= hit
            places = tuple((order, substitute_assumptions(when, assumed, ruleset.catalog.spellings)[0])
                           for order, when in rule.places) if hit else rule.places
            substituted.append(replace(rule, trigger=trigger, places=places) if hit else rule)
        rules = substituted
    evaluator = Evaluator(rules if assumed else ruleset.by_id, context)
    moved = base.moved(carried) if base is not None else frozenset()  # `carried` is set with it
    wanted = set(only) if only is not None else None
    if wanted is not None:  # a few rules (witnesses ask for one): no pass over all of them
        rules = [evaluator.rules[i] for i in sorted(wanted) if i in evaluator.rules]
    findings = []
    checked = 0
    for rule in rules:
        if not rule.reachable or rule.kind is RuleKind.ADJUSTMENT:
            continue
        checked += 1
        if base is not None and rule.id not in moved:
            outcome = base.outcomes.get(rule.id)
            if outcome is not None:
                place = outcome[-1] if outcome[0] == "definite" else None
                findings.append(Finding(rule, *outcome, fill=_filler(rule, evaluator, place)))
            continue
        truth, adjusted = evaluator.truth(rule)
        if truth is False:
            continue
        certainty = "definite" if truth else "possible"
        undecided = () if truth else evaluator.undecided(rule)
        waits = {evaluator.missing(atom) for atom in undecided}
        needs = tuple(k for k in MISSING_KINDS if k in waits)
        place = _place(rule, evaluator, truth)
        findings.append(Finding(rule, certainty, functools.partial(evaluator.spelled, undecided), adjusted, needs,
                                context.failing.get(rule.effective), place,
                                _filler(rule, evaluator, place if truth else None)))
    adjustments = [] if wanted is not None else [
        r for r in rules if r.kind is RuleKind.ADJUSTMENT and r.reachable and evaluator.fires(r.id)]
    # An adjustment that surely runs and cannot compute what it writes stops the launch too.
    findings += [Finding(r, "definite", fails_with=failure) for r in adjustments
                 if (failure := value_failure(r, evaluator.context)) is not None]
    # In execution order: the first definite error is where the launch stops.
    findings.sort(key=lambda f: (f.certainty != "definite", f.place if f.place is not None else _position(f.rule),
                                 f.rule.location.file, f.rule.location.line, f.rule.id))
    return Report(findings, told_errors(command.errors, ruleset.label), adjustments, sorted(set(assumed) - used), checked,
                  ruleset.label, list(command.placeholders), command.unread_config, evaluator)


def _place(rule: Rule, evaluator: Evaluator, truth: bool | None) -> int | None:
    """The place a guard the run reaches at several places fires first on this launch: the first whose
    condition holds for a definite finding, may hold for a possible one; None for a guard of one place."""
    if not rule.places:
        return None
    states = [(order, evaluator.context.truth(when)) for order, when in rule.places]
    held = [order for order, state in states if state is True] if truth is True else []
    return (held or [order for order, state in states if state is not False] or [rule.order])[0]


def _filler(rule: Rule, evaluator: Evaluator, place: int | None = None) -> Callable[[], str] | None:
    """What fills a finding's message on its launch, when it has placeholders: a field an adjustment
    that runs first rewrites with what it writes there; `place`: where the launch surely meets the
    guard, for a placeholder with a value per place."""
    if "{" not in rule.message:
        return None

    def fill() -> str:
        return filled_message(rule, evaluator.context, _written(rule, evaluator), place)
    return fill


def _written(rule: Rule, evaluator: Evaluator) -> dict[str, object]:
    """What the adjustments that run before the guard and write a field it reads leave in each such
    field: the value the latest one that runs writes (`UNKNOWN` while the launch does not decide which
    runs, or what it writes), or `IN_TABLE` where that one is a write of the run's table, which
    `Context.resolved` reads (`filled_message`)."""
    context = evaluator.context
    tabled = {write.rule for writes in context.writes.values() for write in writes}
    by_field: dict[str, list[Rule]] = {}
    for adjustment in rule.affected_by:
        writer = evaluator.rules.get(adjustment)
        if writer is not None and writer.target:
            by_field.setdefault(writer.target, []).append(writer)
    written: dict[str, object] = {}
    for name, writers in by_field.items():
        for writer in sorted(writers, key=_position, reverse=True):
            fires = evaluator.fires(writer.id)
            if fires is False:
                continue
            if fires is None or _refilled(writer):
                written[name] = UNKNOWN
            else:
                written[name] = IN_TABLE if writer.id in tabled else _assigned(writer, context)
            break
    return written


def _refilled(writer: Rule) -> bool:
    """An adjustment that writes a new list, dict or set, which the code may fill in place after
    (`self.lora_paths = []`, then `.append(...)` per path, which is no write): what it wrote is not
    what the field holds at the guard (`make verify` met `lora_paths=0` for four paths)."""
    text = (writer.value or "").lstrip()
    return text.startswith(("[", "{", "list(", "dict(", "set(")) or text in ("list()", "dict()", "set()")


def written_case(adjustment: Rule, context: Context) -> tuple[bool | None, Lit | Term | None]:
    """An adjustment's first case whose condition is not false on the launch: (True, its value) when
    it holds, (None, None) while undecided; (False, None) when no case holds."""
    for when, value in adjustment.assigns:
        truth = context.truth(when)
        if truth is not False:
            return (True, value) if truth else (None, None)
    return False, None


def _assigned(writer: Rule, context: Context) -> object:
    """The value an adjustment that runs writes (`written_case`); `UNKNOWN` while undecided."""
    holds, value = written_case(writer, context)
    if not holds:
        return UNKNOWN
    if isinstance(value, Lit):
        return value.value
    try:
        return context.value_of(value)  # type: ignore[arg-type]
    except LookupError:
        return UNKNOWN


def value_failure(adjustment: Rule, context: Context) -> str | None:
    """The exception Python raises computing the value an adjustment that runs writes, when the launch
    decides which value that is and every value it reads (`12 // speculative_ngram_max_bfs_breadth`
    with `--speculative-ngram-max-bfs-breadth 0`: "ZeroDivisionError"); None otherwise. Only a
    division or a remainder is computed here: nothing else in a value fails on known numbers."""
    if not any(_divides(value) for _, value in adjustment.assigns):
        return None  # most adjustments: no case is worked out
    holds, value = written_case(adjustment, context)
    if not holds or not _divides(value):
        return None
    try:
        context.value_of(value)  # type: ignore[arg-type]
    except LookupError as error:
        if isinstance(error.__cause__, ArithmeticError):
            return type(error.__cause__).__name__
    return None


def _divides(value: Lit | Term | None) -> bool:
    return isinstance(value, Term) and ("/" in value.text or "%" in value.text)


# What a rule set keeps only while it lives, not in its index (`RuleSet.__getstate__`).
_NOT_INDEXED = ("baselines_on_facts", "index_key")

# The launch every command is evaluated from: a model path shaped as a Hub id (what most launches
# name, and what no rule singles out), the rest defaults.
BARE_LAUNCH = ("--model-path", "org/model")


@dataclass
class Baseline:
    """The bare launch (`BARE_LAUNCH`) evaluated whole, kept in a rule set's index. A command that
    differs from it in values only is evaluated from it (`Context.carry`): a guard is evaluated again
    only when one of its atoms, or of the adjustments that may rewrite what it reads, comes out
    otherwise on the command, the others are what they are on the bare launch."""

    evaluator: Evaluator
    outcomes: dict[str, tuple]  # guard id -> its Finding's fields but the rule, where the bare launch may set it off
    atoms: dict[str, tuple[int, tuple[Atom, ...]]]  # guard id -> what its atoms and theirs read (a mask), those atoms
    atom_masks: tuple[tuple[Atom, int], ...]  # every atom of those, and what it reads
    # What launches carried from it found of atoms that read what they change (`Carried.states`):
    # kept while the process lives (a folder of launch lines naming one model), not in the index.
    states: dict[tuple, object] = field(default_factory=dict, compare=False, repr=False)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "states": {}}

    def moved(self, carried: Carried) -> frozenset[str]:
        """The guards that might come out otherwise on the launch `carried` evaluates than on the bare
        one: those over an atom whose state changes."""
        changed = carried.changed
        atoms = {atom for atom, mask in self.atom_masks if mask & changed and carried.changes(atom)}
        return frozenset(guard for guard, (mask, over) in self.atoms.items()
                         if mask & changed and not atoms.isdisjoint(over))


def bare_baseline(ruleset: RuleSet, platform: Platform | None = None, model: ModelFacts | None = None,
                  without_facts: bool = False) -> Baseline:
    """The bare launch evaluated over every guard (on `platform` with `model` when given; `without_facts`:
    as `check` says), with what deciding a command from it asks again: each guard's atoms (and those of
    the adjustments it waits for) and their states there."""
    report = check(ruleset, BARE_LAUNCH, platform=platform, model=model, baseline=False, without_facts=without_facts)
    evaluator = report.evaluator
    assert evaluator is not None
    outcomes = {f.rule.id: (f.certainty, f.unknown, f.changed_by, f.needs, f.fails_with, f.place)
                for f in report.findings}
    reads = ruleset.read_sets
    atoms: dict[str, tuple[int, tuple[Atom, ...]]] = {}
    masks: dict[Atom, int] = {}
    for rule in ruleset.rules:
        if not rule.reachable or rule.kind is RuleKind.ADJUSTMENT:
            continue
        found = dict.fromkeys(every_atom(rule.effective))
        for adjustment in rule.affected_by:
            if adjustment in ruleset.by_id:
                found.update(dict.fromkeys(every_atom(ruleset.by_id[adjustment].effective)))
        mask = 0
        for atom in found:
            if atom not in masks:
                masks[atom] = reads.atom_mask(atom)
                evaluator.state(atom)
            mask |= masks[atom]
        atoms[rule.id] = (mask, tuple(found))
    return Baseline(evaluator, outcomes, atoms, tuple(masks.items()))


def facts_key(platform: Platform | None, model: ModelFacts | None, without_facts: bool = False) -> str:
    """What names the platform and model a bare launch is evaluated on (a profile edited by
    `--device-memory` is another), or that it is evaluated without facts."""
    if without_facts:
        return "without-facts"
    return hashlib.sha256(repr(_canonical((platform, model))).encode()).hexdigest()[:24]


def _canonical(value: object) -> object:
    """A value with its sets sorted and its records and mappings as sorted pairs: its repr is the same
    in every process (a set's order follows string hashing, seeded per process)."""
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, *((f.name, _canonical(getattr(value, f.name))) for f in fields(value)))
    if isinstance(value, Mapping):
        return tuple(sorted((repr(k), _canonical(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", *sorted(repr(_canonical(v)) for v in value))
    if isinstance(value, (tuple, list)):
        return tuple(_canonical(v) for v in value)
    return value


def _carry_from_bare(ruleset: RuleSet, context: Context) -> tuple[Baseline, Carried] | tuple[None, None]:
    """Evaluate the launch from a bare one, when the rule set holds one evaluated on the same facts
    (the index's, without a platform; those kept beside it for a profile) and the launch differs from
    it in values only; else (None, None): a rule set built here is evaluated in full."""
    bare = ruleset.__dict__.get("baseline")
    for base in (bare, *ruleset.__dict__.get("baselines_on_facts", {}).values()):
        if isinstance(base, Baseline) and (changed := context.changed_from(base.evaluator.context)) is not None:
            return base, context.carry(base.evaluator, ruleset.read_sets, changed, base.states)
    return None, None


def launch_facts(command: CommandLine, platform: Platform | None = None, model: ModelFacts | None = None,
                 host: LaunchHost | None = None, helpers: Helpers | None = None,
                 env: Mapping[str, str] | None = None, envs: Mapping[str, EnvVar] | None = None) -> Facts | None:
    """The platform, model and host facts of a launch: as given, the model else read from a
    `--model-path` folder's config.json; with the source's helpers and the launch's environment,
    which helpers read (`logic.helpers`)."""
    if model is None:
        model = local_model(command.given.get("model_path"))
    if platform is None and model is None and host is None and not helpers:
        return None
    return Facts(platform, model, host, helpers or None, dict(env or {}), envs)


def told_errors(errors: Sequence[ArgError], release: str, history: FlagHistory | None = None) -> list[ArgError]:
    """Argument errors, an unknown option worded with what other releases say of it: removed (and
    what sets its field now), or newer than this release; a typo keeps argparse's words."""
    history = history if history is not None else shipped_flag_history()
    if history is None:
        return list(errors)
    told = []
    for error in errors:
        story = history.story(error.flag, release) if error.flag and error.flag.startswith("--") else None
        if story is None or not error.message.startswith(("unrecognized arguments", "ambiguous option")):
            told.append(error)
            continue
        message, _, hint = error.message.partition(" (did you mean ")
        if hint and " sets that field with " not in story:
            story += f"; did you mean {hint.rstrip(')').rstrip('?')}?"
        told.append(ArgError(error.flag, f"{message}: {story}"))
    return told


def _terms(f) -> Iterable[Term]:
    """The terms of a formula's distinct atoms."""
    for atom in every_atom(f):
        yield atom.term
        if isinstance(atom.other, Term):
            yield atom.other


def _position(rule: Rule) -> int:
    return rule.order if rule.order is not None else 1 << 30


def definite_errors(ruleset: RuleSet, argv: Sequence[str], reading: Iterable[str] | None = None,
                    before: int | None = None, *, env: Mapping[str, str] | None = None,
                    facts: Facts | None = None, including: Iterable[Rule] = (),
                    evaluator: Evaluator | None = None) -> list[Rule]:
    """The guards the command line sets off for sure, in run order: those that read one of `reading`
    (fields, `env:NAME`) when given, and those of `including`, and only those that run before order
    `before` when given; under `env` and the platform and model `facts` when given (or through
    `evaluator`, the command's own, when the caller asks it more)."""
    evaluator = evaluator or launch_evaluator(ruleset, argv, env=env, facts=facts)
    return [rule for rule in guards_to_check(ruleset, reading, before, including) if evaluator.holds(rule) is True]


def launch_evaluator(ruleset: RuleSet, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                     facts: Facts | None = None, base: Evaluator | None = None) -> Evaluator:
    """The truth of the rules on one command line (memoized per formula); `base`: the evaluator of a
    command line it differs from in a few values (what those do not change is taken from there)."""
    context = launch_context(ruleset, parse_command(argv, ruleset.catalog), env, facts=facts)
    if base is not None and (changed := context.changed_from(base.context)) is not None:
        context.inherit(base.context, ruleset.read_sets, changed)
    else:
        _carry_from_bare(ruleset, context)
    return Evaluator(ruleset.by_id, context)


def guards_to_check(ruleset: RuleSet, reading: Iterable[str] | None = None, before: int | None = None,
                    including: Iterable[Rule] = ()) -> list[Rule]:
    """The guards `definite_errors` evaluates, in run order (see there)."""
    if reading is None:
        candidates = sorted((r for r in ruleset.rules if r.reachable and r.kind is not RuleKind.ADJUSTMENT),
                            key=_position)
    else:
        chosen = {r.id: r for name in reading for r in ruleset.readers.get(name, ())}
        chosen.update((r.id, r) for r in including)
        candidates = sorted(chosen.values(), key=_position)
    if before is not None:
        candidates = list(itertools.takewhile(lambda rule: _position(rule) < before, candidates))
    return candidates


def launch_context(ruleset: RuleSet, command: CommandLine, env: Mapping[str, str] | None = None, use_env: bool = False,
                   assumed: Mapping[str, bool] | None = None, facts: Facts | None = None) -> Context:
    """What a launch decides: the defaults with the command line's values over them, its environment."""
    values = dict(ruleset.defaults)
    values.update(command.given)
    environment = dict(os.environ) if use_env else {}
    environment.update(command.env)
    environment.update(env or {})
    return Context(values, environment, ruleset.envs, dict(assumed or {}), ruleset.catalog.spellings, ruleset.writes,
                   facts)
