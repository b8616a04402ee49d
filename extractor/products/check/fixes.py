"""Fixes that work: each way out of a definite error applied to the launch command and checked again.

A rule's solutions (products/words.py) are read off its own condition; a fix that clears it can set
off another guard (`--disaggregation-mode decode` for the offload flag hits "only supported when
hicache-storage-backend is provided"). Each way is applied and the command checked under the same
environment and facts; a way that sets off a new error is completed with a way out of that one
that only adds flags (never removes more of what the user typed, never undoes the way), at most
`MAX_EXTRA` times; so is one that leaves an error the command already had on the same flags. Ways
that cannot be made to work are not offered. When none read off the condition works (it tests a
value SGLang derives from the flags, the platform, or a method run over the launch), single edits
of what the rule reads are searched (`_searched_ways`). Each fixed command is checked with facts of
its own.

`beyond_flags` proves the other case: no change of flags avoids the error on this machine, with
this model and environment, and says what decides it instead.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ...core.formula import fields_read, terms
from ...core.model import RUN_FUNCTION, Atom, Lit, Rule, RuleKind, Term, TermKind
from ...logic.evaluation import Context, Evaluator
from ...logic.facts import Facts
from ...logic.launch import parse_command
from ...logic.model_config import config_load_error
from .linter import Beyond, RuleSet, definite_errors, launch_context, launch_evaluator, written_case
from .words import (NOT_A_FIX, PLACEHOLDER, Edit, Flags, Way, apply_way, library_test, library_tests, solutions,
                    way_text)

MAX_EXTRA = 3


@dataclass(frozen=True)
class Fix:
    """A way out of a definite error, checked: its words, the command line it makes, and whether it
    keeps every flag the command passed (changing values or adding flags only: what the user asked
    for stays, as the seed's fix moves the decode-only flag to a decode server)."""

    text: str
    argv: tuple[str, ...]
    keeps: bool


def working_fixes(ruleset: RuleSet, rule: Rule, argv: Sequence[str], flags: Flags,
                  siblings: Mapping[tuple[str, str], Sequence[Rule]], *, env: Mapping[str, str] | None = None,
                  facts: Facts | None = None, had: Iterable[str] | None = None,
                  base: Evaluator | None = None) -> list[str]:
    """The rule's fixes for this command line, each as text, with the flags added for other rules.
    `had`: the ids of the command's definite errors, when the caller knows them already; `base`:
    the command's own evaluation, when the caller has it (`Report.evaluator`)."""
    return [fix.text for fix in checked_fixes(ruleset, rule, argv, flags, siblings, env=env, facts=facts, had=had,
                                              base=base)]


def checked_fixes(ruleset: RuleSet, rule: Rule, argv: Sequence[str], flags: Flags,
                  siblings: Mapping[tuple[str, str], Sequence[Rule]], *, env: Mapping[str, str] | None = None,
                  facts: Facts | None = None, had: Iterable[str] | None = None,
                  base: Evaluator | None = None) -> list[Fix]:
    """`working_fixes` with the fixed command lines."""
    found: list[Fix] = []
    had = set(had) if had is not None else {r.id for r in definite_errors(ruleset, argv, env=env, facts=facts)}
    command = parse_command(argv, ruleset.catalog)
    typed = command.given
    given = set(typed)
    # The ways read off the rule, without removals of what the command does not have (a way left
    # empty is no way out here).
    environment = {**(env or {}), **command.env}
    ways = [w for w in (_on_the_command(w, given, ruleset, environment) for w in
                        solutions(rule, flags, siblings.get((rule.location.file, rule.function), ()))) if w]
    searched: list[Way] = []
    # The command's own evaluation: each fixed command a few values away takes what those leave as is.
    base = base or launch_evaluator(ruleset, argv, env=env, facts=dataclasses.replace(facts) if facts else None)
    # Python fails on the guard's own test (a flag left None compared as a number): that flag given a
    # value first, before any way read off the test as if it could be evaluated.
    failing = base.context.failure_reached(rule.effective)
    if failing is not None:
        ways = list(dict.fromkeys([*_ways_past_failure(failing, base.context, flags, typed), *ways]))
    # An adjustment that cannot compute what it writes (`12 // breadth` with a breadth of 0): the
    # number flags its value divides by, passed as another number first.
    written = _written_value(rule, base.context)
    if written is not None:
        ways = list(dict.fromkeys([*_nonzero_ways(Atom(written), flags, typed), *ways]))
    for way in ways:
        completed = _completed(ruleset, rule, list(argv), way, flags, siblings, had, env, facts, base)
        if completed is not None and all(f.text != completed.text for f in found):
            found.append(completed)
    if not found:
        # Nothing read off the condition works (it tests a value SGLang derives, `attn_dp_size` from
        # `--dp` under `--enable-dp-attention`, or the platform): single edits of what the rule reads.
        left = None  # ways still tried once one works: the alternatives nearest it, not every one
        searched = _searched_ways(ruleset, rule, argv, typed, flags, command.env, env, facts)
        for way in searched:
            completed = _completed(ruleset, rule, list(argv), way, flags, siblings, had, env, facts, base)
            if completed is not None and all(f.text != completed.text for f in found):
                found.append(completed)
                left = _AFTER_FIRST if left is None else left
                if len(found) == MAX_SEARCHED:
                    break
            elif left is not None:
                left -= 1
                if left == 0:
                    break
    if not found:
        # Last: a way whose edit sets off an error no added flag clears, completed by taking away
        # what that error names (an MXFP4 checkpoint requantized on a CPU, the MoE runner that does
        # not take it left to its default). Never where a way that takes nothing away works.
        for way in ways + searched:
            completed = _completed(ruleset, rule, list(argv), way, flags, siblings, had, env, facts, base,
                                   take_away=True)
            if completed is not None:
                return [completed]  # one, the nearest: a last resort
    return found


def _written_value(adjustment: Rule, context: Context) -> Term | None:
    """The term an adjustment's value is computed from on this launch (`written_case`), when it is
    one; None for a guard, or while the launch does not decide the case."""
    if adjustment.kind is not RuleKind.ADJUSTMENT:
        return None
    holds, value = written_case(adjustment, context)
    return value if holds and isinstance(value, Term) else None


def _cleared(rule: Rule, evaluator: Evaluator) -> bool:
    """Does a fixed launch surely get past the rule: a guard's test fails; an adjustment does not
    run, or computes what it writes (a division no longer by zero)."""
    truth = evaluator.holds(rule)
    if truth is not True or rule.kind is not RuleKind.ADJUSTMENT:
        return truth is False
    holds, value = written_case(rule, evaluator.context)
    if not holds:
        return False
    if isinstance(value, Term):
        try:
            evaluator.context.value_of(value)
        except LookupError:
            return False
    return True


def _ways_past_failure(atom: Atom, context: Context, flags: Flags, given: Mapping[str, object]) -> list[Way]:
    """The flag whose None value Python cannot compare (`speculative_eagle_topk > 1` while unset), passed
    with the number it is compared with, or 1; a flag the command passes as 0 that the failing test
    divides by (`tp_size % nnodes` with `--nnodes 0`), passed with its default, or 1. `_completed`
    keeps those that clear the guard."""
    if context.raises(atom) == "ZeroDivisionError":
        return _nonzero_ways(atom, flags, given)
    number = atom.other.value if isinstance(atom.other, Lit) else None
    if not isinstance(number, int) or isinstance(number, bool):
        return []
    ways = []
    for term in (atom.term, atom.other):
        if not isinstance(term, Term) or term.kind not in (TermKind.FIELD, TermKind.RESOLVED) or term.name in given:
            continue
        try:
            held = context.value_of(term)
        except LookupError:
            continue
        if held is None and flags.settable(term.name):
            option = flags.option(term.name)
            ways += [(Edit("pass", option, str(value)),) for value in dict.fromkeys((number, 1)) if value >= 0]
    return ways


def _nonzero_ways(atom: Atom, flags: Flags, given: Mapping[str, object]) -> list[Way]:
    """For a test Python fails by dividing by zero: each number flag it reads that the command passes
    as 0, passed with its default when that is another number, else with 1."""
    ways = []
    read = [term for term in (atom.term, atom.other) if isinstance(term, Term)]
    for name in dict.fromkeys(name for term in read for name in term.fields):
        value = given.get(name)
        if value == 0 and not isinstance(value, bool) and flags.settable(name):
            known, default = flags.default(name)
            number = default if known and isinstance(default, int) and not isinstance(default, bool) and default else 1
            ways.append((Edit("pass", flags.option(name), str(number)),))
    return ways


MAX_SEARCHED = 3  # fixes kept from the search over the command's own flags
_AFTER_FIRST = 4  # ways tried after the first that works, when fewer than MAX_SEARCHED have
_SEARCHED_VALUES = 8  # values of one flag tried
_ADDED = 24  # ways that pass a flag the command leaves at its default, tried at most (a run's flags aside)
_POWERS = (1, 2, 4, 8, 16)  # sizes tried for an integer flag, besides the command's own numbers


def _searched_ways(ruleset: RuleSet, rule: Rule, argv: Sequence[str], given: Mapping[str, object], flags: Flags,
                   assignments: Iterable[str] = (), env: Mapping[str, str] | None = None,
                   facts: Facts | None = None) -> list[Way]:
    """Single edits the rule's reads suggest, in this order: the flags the command passes that the
    rule reads (`RuleSet.readers`: through the values SGLang derives from them too) changed to
    another value, the nearest first (what was asked for stays, in another amount or kind); flags of
    few values the rule reads and the command leaves at their defaults, passed, those its message
    names first (`--mm-feature-transport cpu` overrides what `SGLANG_USE_CUDA_IPC_TRANSPORT=1`
    selects); the variables of the command's environment the rule reads, unset; the other flags
    left unset, passed; the flags the command passes, removed."""
    # A flag a method run reads (`--quantization` in `_verify_quantization`) is tried at each of its
    # values, nearest first to what the run held where it stopped: the run tells which one passes
    # (`quark_mxfp4` for an MXFP4 checkpoint on a CPU).
    run_reads = {name for t in terms(rule.effective) if RUN_FUNCTION in t.text for name in t.fields}
    if run_reads and facts is not None and not facts.stops:
        launch_evaluator(ruleset, argv, env=env, facts=facts).holds(rule)  # where the run stops, with what it held
    held = {k: v for values in (facts.stops.values() if facts is not None else ()) for k, v in values.items()}
    changes, removals = _changes(ruleset, rule, given, flags, run_reads, held)
    message = rule.message or ""
    machine = facts.platform.facts if facts is not None and facts.platform is not None else None
    additions = _additions(rule, given, flags, run_reads, held, message, machine)
    named = [way for way in additions if _named_in(flags, ruleset.catalog.option(way[0].name).flag.name, message)]
    set_here = {text.partition("=")[0] for text in assignments}
    unsets = [(Edit("env", t.name),) for t in sorted(terms(rule.effective), key=lambda t: t.name)
              if t.kind is TermKind.ENV and t.name in set_here]
    ways = changes + named + unsets + [way for way in additions if way not in named] + removals
    return list(dict.fromkeys(ways))


def _changes(ruleset: RuleSet, rule: Rule, given: Mapping[str, object], flags: Flags, run_reads: set[str],
             held: Mapping[str, object]) -> tuple[list[Way], list[Way]]:
    """Another value for each flag the command passes that the rule reads (the nearest first: `--dp 3`
    to 4 or 2 before `--tp 8` to 3), and the removals of those flags."""
    reading = [name for name in given if name not in NOT_A_FIX and flags.settable(name)
               and any(r.id == rule.id for r in ruleset.readers.get(name, ()))]
    numbers = sorted({v for v in given.values() if isinstance(v, int) and not isinstance(v, bool) and v > 0})
    changes: list[tuple[float, Way]] = []
    removals: list[Way] = []
    for name in reading:
        option = flags.option(name)
        current = given[name]
        has_default, _ = flags.default(name)
        if flags.is_switch(name):
            removals.append((Edit("remove", option),))
            continue
        values: list[object] = [c for c in flags.choices(name) if c != current]
        if isinstance(current, int) and not isinstance(current, bool):
            values += [n for n in (*_POWERS, *numbers) if n != current and n not in values]
        values = _nearest_first(values, held.get(f"self.{name}", current)) if name in run_reads \
            else values[:_SEARCHED_VALUES]
        for value in values:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            changes.append((_distance(current, value), (Edit("pass", option, text),)))
        if has_default:
            removals.append((Edit("remove", option),))
    # sorted() keeps ties in their order.
    return [way for _, way in sorted(changes, key=lambda c: c[0])], removals


def _additions(rule: Rule, given: Mapping[str, object], flags: Flags, run_reads: set[str],
               held: Mapping[str, object], message: str, machine: Mapping[str, object] | None = None) -> list[Way]:
    """Flags of few values the rule reads and the command leaves at their defaults, passed: those the
    message names first (it says what to change), then those a run reads, then others, switches
    last (a switch turns on another way of serving: `--encoder-only`). A flag the platform profile
    gives the value of on its machine (`"--device": "cpu"` where SGLang cannot derive it) is passed
    with that value alone."""
    additions: list[Way] = []
    for name in sorted(set(fields_read(rule.effective)) - set(given) - NOT_A_FIX,
                       key=lambda n: (not _named_in(flags, n, message), n not in run_reads, flags.is_switch(n), n)):
        if not flags.settable(name):
            continue
        has_default, default = flags.default(name)
        if flags.is_switch(name):
            if has_default and default is False:
                additions.append((Edit("pass", flags.option(name)),))
            continue
        values = _nearest_first(flags.choices(name), held.get(f"self.{name}")) if name in run_reads \
            else flags.choices(name)[:_SEARCHED_VALUES]
        if machine is not None and isinstance(machine.get(flags.option(name)), str):
            values = (machine[flags.option(name)],)
        additions += [(Edit("pass", flags.option(name), str(c)),) for c in values if not (has_default and c == default)]
    return additions[:_ADDED + sum(len(flags.choices(name)) for name in run_reads)]


def _nearest_first(choices: Sequence[object], current: object) -> list[object]:
    """Choices ordered by how much they share with the value a run held where it stopped (`mxfp4`:
    `quark_mxfp4` first), in their own order when there is none."""
    if not isinstance(current, str):
        return list(choices)
    import difflib  # here: only a choice to suggest needs it

    return sorted(choices, key=lambda c: -difflib.SequenceMatcher(None, str(c), current).ratio())


def _named_in(flags: Flags, name: str, message: str) -> bool:
    """Whether the message names the field's option (`--mm-feature-transport=cuda_ipc requires ...`)."""
    option = flags.option(name)
    return bool(option) and option in message


def _distance(current: object, value: object) -> float:
    """How far another value is from the one asked for: the ratio of two sizes, else one step."""
    if isinstance(current, int) and isinstance(value, int) and not isinstance(value, bool) and current > 0 and value > 0:
        return abs(math.log(value / current))
    return 1.0


def intent_keeping(fixes: Sequence[Fix]) -> Fix | None:
    """The fix to show as the example: a runnable command before one with a placeholder value, then
    the smallest that keeps every flag the command passed, else the first (in the solutions' order)."""
    # A fix with a placeholder (`--ssl-keyfile VALUE`) says what to add, but is no command to run.
    ranked = sorted(fixes, key=lambda f: (PLACEHOLDER in f.argv, not f.keeps, len(f.argv)))
    return ranked[0] if ranked else None


def example_fixes(ruleset: RuleSet, flags: Flags, siblings: Mapping[tuple[str, str], Sequence[Rule]]
                  ) -> dict[str, list[Fix]]:
    """The fixes of each guard with an example, checked on the example's command line (docs pages'
    Solutions): rule id -> fixes (empty when no way works there)."""
    return {rule.id: example_fix(ruleset, rule, flags, siblings) for rule in ruleset.rules
            if rule.example is not None and rule.kind is not RuleKind.ADJUSTMENT}


def example_fix(ruleset: RuleSet, rule: Rule, flags: Flags, siblings: Mapping[tuple[str, str], Sequence[Rule]]
                ) -> list[Fix]:
    """One guard's fixes checked on its example's command line (what its page and `explain` show);
    empty when it has no example or no way works there."""
    if rule.example is None or rule.kind is RuleKind.ADJUSTMENT:
        return []
    return short_command_fixes(ruleset, rule, rule.example.before, flags, siblings)


def short_command_fixes(ruleset: RuleSet, rule: Rule, argv: Sequence[str], flags: Flags,
                        siblings: Mapping[tuple[str, str], Sequence[Rule]], facts: Facts | None = None) -> list[Fix]:
    """`checked_fixes` of a short command line made to show the rule (an example, a typical launch),
    under the platform and model `facts` when given."""
    ways = solutions(rule, flags, siblings.get((rule.location.file, rule.function), ()))
    # What the command already sets off, among the guards a fix can touch: those reading the
    # rule's flags or what its ways edit (a short command: others are rare).
    reading = (set(fields_read(rule.effective)) - _EVERYWHERE).union(*(_fields(w, ruleset) for w in ways))
    base = launch_evaluator(ruleset, argv, facts=dataclasses.replace(facts) if facts else None)
    had = {r.id for r in definite_errors(ruleset, argv, reading=reading, evaluator=base)}
    return checked_fixes(ruleset, rule, argv, flags, siblings, facts=facts, had=had, base=base)


# The evaluations of fixed command lines made from one launch's (its `base`): the fixes of its several
# definite errors reach the same fixed command line by edits in another order (the seed's two errors,
# each fixed by passing a decode mode and a storage backend), evaluated once.
_FIXED: weakref.WeakKeyDictionary[Evaluator, dict[tuple, Evaluator]] = weakref.WeakKeyDictionary()


def _fixed_evaluator(ruleset: RuleSet, fixed: Sequence[str], env: Mapping[str, str] | None, facts: Facts | None,
                     base: Evaluator | None) -> Evaluator:
    """`launch_evaluator` of a fixed command line, from `base` (fresh facts: the launch's keep what
    its terms read by their text); the same command line, whatever its order, evaluated once."""
    command = parse_command(fixed, ruleset.catalog)
    key = (repr(sorted(command.given.items())), repr(sorted(command.env.items())), repr(command.errors),
           tuple(command.placeholders), command.unread_config, repr(sorted((env or {}).items())), id(facts))
    made = _FIXED.setdefault(base, {}) if base is not None else {}
    if key not in made:
        made[key] = launch_evaluator(ruleset, fixed, env=env, facts=dataclasses.replace(facts) if facts else None,
                                     base=base)
    return made[key]


def _completed(ruleset: RuleSet, rule: Rule, argv: list[str], way: Way, flags: Flags,
               siblings: Mapping[tuple[str, str], Sequence[Rule]], had: set[str],
               env: Mapping[str, str] | None, facts: Facts | None, base: Evaluator | None = None,
               take_away: bool = False) -> Fix | None:
    """The way applied to the command and completed, up to MAX_EXTRA times, with what clears the
    errors it sets off (`take_away`: also by a removal, for the error the edit itself sets off);
    None when it does not clear the rule or cannot be completed."""
    edits: list[Edit] = list(way)
    extras: list[tuple[Way, Rule]] = []
    # The way as it stood when it set off nothing new, only errors the command had already: what is
    # given when completing it for those fails (they keep their own fixes).
    fallback: Fix | None = None
    for _ in range(MAX_EXTRA + 1):
        fixed = apply_way(argv, tuple(edits), ruleset.catalog, placeholders=True)
        if fixed is None:
            return fallback
        # The guards that read what the edits change (only their truth can change), and those that
        # share a flag with the rule (`_shares_flags`: the model path, which nearly all read, aside);
        # and the rule itself.
        reading = _fields(edits, ruleset) | (set(fields_read(rule.effective)) - _EVERYWHERE)
        # Fresh facts for the fixed command: the launch's keep what its terms read by their text,
        # and a method run over the launch (`--quantization` read by `_verify_quantization`) reads the flags.
        evaluator = _fixed_evaluator(ruleset, fixed, env, facts, base)
        if not _cleared(rule, evaluator):
            return fallback  # the way does not clear it on this command line, or not surely
        errors = definite_errors(ruleset, fixed, reading=reading, evaluator=evaluator)
        # A new error, or one the command had that reads the same flags: the fix is not done until
        # those are (the seed's decode-only offload flag also wants a storage backend).
        caused = [e for e in errors if e.id not in had]
        new = caused or [e for e in errors if _shares_flags(e, rule)]
        done = Fix(_text(way, extras), tuple(fixed), keeps=all(e.action != "remove" for e in edits))
        if not new:
            return done
        if not caused and fallback is None:
            fallback = done
        blocker = new[0]
        edited = {e.name for e in edits}
        ways = [w for w in solutions(blocker, flags, siblings.get((blocker.location.file, blocker.function), ()))
                if w and all(e.name not in edited for e in w)]
        extra = next((w for w in ways if all(e.action != "remove" for e in w)), None) or \
            (next(iter(ways), None) if caused and take_away else None)
        if extra is None:
            return fallback
        edits.extend(extra)
        extras.append((extra, blocker))
    return fallback


def _on_the_command(way: Way, given: set[str], ruleset: RuleSet, environment: Mapping[str, str]) -> Way:
    """The way without removals of flags the command does not pass (`remove --decode-attention-backend`
    when only `--attention-backend` was typed: nothing to remove, and nothing to say), nor unsets of
    variables its environment does not set."""
    kept = []
    for edit in way:
        option = ruleset.catalog.option(edit.name) if edit.action == "remove" else None
        if option is not None and option.flag.name not in given:
            continue
        if edit.action == "env" and edit.value is None and edit.name not in environment:
            continue
        kept.append(edit)
    return tuple(kept)


def _shares_flags(other: Rule, rule: Rule) -> bool:
    """Whether two guards read a flag in common (not the model path, which nearly every one reads)."""
    return bool((set(fields_read(other.effective)) & set(fields_read(rule.effective))) - _EVERYWHERE)


_EVERYWHERE = frozenset({"model_path"})


def _fields(edits: Sequence[Edit], ruleset: RuleSet) -> set[str]:
    """What the edits change: the fields their options set, `env:NAME` for variables."""
    fields = set()
    for edit in edits:
        if edit.action == "env":
            fields.add(f"env:{edit.name}")
            continue
        option = ruleset.catalog.option(edit.name)
        if option is not None:
            fields.add(option.flag.name)
    return fields


def _what_clears(edit: Edit) -> str:
    """An edit as the subject of "... clears X": `--hicache-storage-backend file`, `removing --x`,
    `SGLANG_X=1`, `unsetting SGLANG_X`."""
    if edit.action == "remove":
        return f"removing {edit.name}"
    if edit.action == "env" and edit.value is None:
        return f"unsetting {edit.name}"
    return edit.text().partition(" ")[2]


def _text(way: Way, extras: Sequence[tuple[Way, Rule]]) -> str:
    if not extras:
        return way_text(way)
    combined = way + tuple(e for extra, _ in extras for e in extra)
    why = "; ".join(f"{' and '.join(_what_clears(e) for e in extra)} clears "
                    f"{blocker.location.file.rsplit('/', 1)[-1]}:{blocker.location.line}" for extra, blocker in extras)
    return f"{way_text(combined)} ({why})"


# ---- when no flag change avoids it --------------------------------------------------------------------


def beyond_flags(ruleset: RuleSet, rule: Rule, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 facts: Facts | None = None) -> Beyond | None:
    """What decides a definite error when no change of flags avoids it on this machine, with this
    model and environment; None when that is not proven.

    The proof: the rule's trigger evaluated with every flag the user can set unknown (those that say
    which model and which config of it are served aside: the model is what is served) and the
    platform, model and environment as the launch has them. Kleene's logic only answers true when
    the trigger holds for every value of the unknowns, so true is a proof; `decided` treats the
    unknown atoms as independent, which can only leave more unknown. A method run over the launch's
    values (a run term) reads the flags it needs as it goes: one it reads leaves the run unknown.
    What decides it: each of the platform, the model and the environment without which the proof
    no longer holds."""
    command = parse_command(argv, ruleset.catalog)
    launch = launch_context(ruleset, command, env, facts=facts)
    flags = Flags(ruleset.flags)
    kept = {name: value for name, value in launch.values.items()
            if name in NOT_A_FIX or name in THE_MODEL or not flags.settable(name)}

    def proven(unknown: frozenset[TermKind]) -> bool:
        # Fresh facts: the launch's keep its terms' values by their text, read with its flags.
        fresh = dataclasses.replace(launch.facts) if launch.facts is not None else None
        context = _Unknowing(kept, launch.env, launch.envs, {}, launch.spellings, launch.writes, fresh)
        context.unknown, context.settable = unknown, frozenset(n for n in launch.values if n not in kept)
        return context.decided(rule.effective) is True

    if not proven(frozenset()):
        return None
    if any(test[-1] == "AutoConfig.from_pretrained" for test in map(library_test, library_tests(rule.effective))):
        # transformers failed to load the checkpoint's config.json: that is what decides it, on any GPU
        # (the platform tests on the paths that load it only say where the load happens first). Not
        # where trusting the checkpoint's own code loads it (`config_load_error`): then
        # `--trust-remote-code` avoids this error, which no fix here checks (it keeps that flag as
        # part of the model), and saying nothing beats saying no flag does.
        model = launch.facts.model if launch.facts is not None else None
        loader = ruleset.library.config_loader
        if model is not None and model.local_folder and loader is not None \
                and not launch.values.get("trust_remote_code") and config_load_error(model.config, True, loader) is None:
            return None
        return Beyond((_NO_LOAD,))
    read = {t.kind for t in terms(rule.effective)}
    deciding = [kind for kind in _DECIDED_BY if kind in read and not proven(frozenset({kind}))]
    found = []
    for kind in deciding or [k for k in _DECIDED_BY if k in read]:
        if kind is TermKind.ENV:
            names = sorted({t.name for t in terms(rule.effective) if t.kind is TermKind.ENV})
            found.append(_DECIDED_BY[kind] + " " + ", ".join(names[:3]) + (" …" if len(names) > 3 else ""))
        else:
            found.append(_DECIDED_BY[kind])
    return Beyond(tuple(found or ["the model path"]))


# Flags that say which model and which config of it are served: as the model path, no way out of an
# error (overriding the checkpoint's `quantization_config` serves another model).
THE_MODEL = frozenset({"revision", "json_model_override_args", "model_config_parser", "decrypted_config_file",
                       "decrypted_draft_config_file", "trust_remote_code"})


class _Unknowing(Context):
    """A launch's context that knows no term reading a flag the user can set (`settable`): not even
    a platform or model term over one, nor terms of the kinds in `unknown`. A run term runs (a flag
    it reads that is not known leaves it unknown), but not with a kind unknown: it may read any."""

    unknown: frozenset[TermKind] = frozenset()
    settable: frozenset[str] = frozenset()

    def value_of(self, term: Term) -> object:
        if RUN_FUNCTION in term.text:
            if self.unknown:
                raise LookupError(term.text)
            return super().value_of(term)
        if term.kind in self.unknown or (term.kind is not TermKind.FIELD and not self.settable.isdisjoint(term.fields)):
            raise LookupError(term.text)
        return super().value_of(term)


_NO_LOAD = "the checkpoint's config.json: its model type is none the transformers this release pins knows"
_DECIDED_BY = {TermKind.PLATFORM: "the GPU or platform", TermKind.MODEL: "the model's config",
               TermKind.ENV: "environment variable"}
