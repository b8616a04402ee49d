"""Typical launches: for each guard, command lines on common setups (`check.typical`) that stop
first at it, each with a fix that makes the launch pass every check there.

A guard whose trigger reads the platform or the model (TRT-LLM MLA on Hopper, an MXFP4 checkpoint on a
CPU) has no flag-only witness; on a setup those atoms are decided, what is left reads flags, and the
witness search (`witness.Finder`) finds the flags. Each line is checked as `check` checks it under the
setup's platform profile and the model's config.json; each fix is `fixes.short_command_fixes`' own.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from ...core.formula import atoms, conj, disj, neg
from ...core.model import And, Atom, Const, Formula, Not, Or, Rule, RuleKind, Term, TermKind
from ...logic.evaluation import Context, Evaluator
from ...logic.expressions import computable
from ...logic.model_config import ModelFacts
from ...logic.platforms import find_platform
from ...logic.launch import CommandLine, parse_command
from ..check.fixes import Fix, intent_keeping, short_command_fixes
from ..check.linter import RuleSet, guards_to_check, launch_context, launch_evaluator
from ..check.typical import MAX_SHOWN, Setup, Typical, setups
from ..check.words import PLACEHOLDER, Flags
from .witness import Finder, On, eligible, same_value


_ABSENT = object()  # a name a command line does not give


def typical_launches(ruleset: RuleSet, flags: Flags, siblings: Mapping[tuple[str, str], Sequence[Rule]],
                     chosen: Sequence[Setup] | None = None, shown: int = MAX_SHOWN,
                     only: Container[str] | None = None) -> dict[str, tuple[Typical, ...]]:
    """Guard id -> its typical launches, from the first `shown` setups (in order) where one is found;
    of the guards `only` names, when given. A launch that only repeats an earlier one on another setup
    (the same flags beyond the setup's, the same fix) is not kept; a guard that reads nothing but flags
    is shown on the first setup where it is found."""
    found: dict[str, list[Typical]] = {}
    seen: set[tuple[str, object]] = set()
    guards = [r for r in ruleset.rules if r.kind is not RuleKind.ADJUSTMENT and r.reachable and r.trigger is not None
              and (only is None or r.id in only)]
    for setup in setups() if chosen is None else chosen:
        here = _OnSetup(ruleset, setup)
        finder = Finder(ruleset, None, here.on)
        for rule in guards:
            kept = found.get(rule.id, ())
            if len(kept) >= shown or kept and eligible(rule):
                continue
            goal = _decided(rule.effective, here.bare)
            if isinstance(goal, Const) or not _reads_flags_only(goal):
                continue
            before = finder.first_stop(rule, goal)
            if before is None or not _same_setup(ruleset, setup.launch, before) \
                    or here.doubtful(before, rule.order):  # a guard before it may stop it first
                continue
            fix = _clean_fix(ruleset, rule, before, flags, siblings, here)
            if fix is None:
                continue  # a launch to show is one a change of flags makes pass every check
            command = parse_command(before, ruleset.catalog)
            key = (rule.id, tuple(sorted((n, repr(v)) for n, v in here.beyond(command).items())),
                   tuple(sorted(command.env.items())), fix.text)
            if key in seen:
                continue
            seen.add(key)
            found.setdefault(rule.id, []).append(Typical(setup.title, setup.platform, tuple(before), fix.text, fix.argv))
    return {rule_id: tuple(launches) for rule_id, launches in sorted(found.items())}


class _OnSetup:
    """A setup as the search reads it: its launch parsed once, the platform and model facts, and the
    truths of the guards on that launch, which passes every check."""

    def __init__(self, ruleset: RuleSet, setup: Setup) -> None:
        self.ruleset = ruleset
        self.launch = parse_command(list(setup.launch), ruleset.catalog)
        self.on = On(tuple(self.launch.given.items()), find_platform(setup.platform),
                     ModelFacts(setup.config, setup.model), setup.launch)
        self.bare = launch_context(ruleset, self.launch, facts=self.on.facts(ruleset, setup.launch))
        self.plain = Evaluator(ruleset.by_id, self.bare)

    def beyond(self, command: CommandLine) -> dict[str, object]:
        """The values a command line gives beyond (or instead of) the setup's own launch."""
        own = self.launch.given
        return {name: value for name, value in command.given.items() if not same_value(own.get(name, _ABSENT), value)}

    def doubtful(self, argv: Sequence[str], before: int | None = None) -> list[Rule]:
        """The guards (running before order `before`, when given) that stop the command line or may
        stop it where the setup's own launch surely passes them: only guards reading what the command
        sets differently can differ."""
        command = parse_command(argv, self.ruleset.catalog)
        reading = set(self.beyond(command)) | {f"env:{name}" for name in command.env}
        here = launch_evaluator(self.ruleset, argv, facts=self.on.facts(self.ruleset, argv))
        return [rule for rule in guards_to_check(self.ruleset, reading, before)
                if (truth := here.holds(rule)) is True or truth is None and self.plain.holds(rule) is False]


def _clean_fix(ruleset: RuleSet, rule: Rule, before: Sequence[str], flags: Flags,
               siblings: Mapping[tuple[str, str], Sequence[Rule]], setup: _OnSetup) -> Fix | None:
    """The fix to show with a typical launch: the first (in `intent_keeping`'s order) that stays on the
    setup's device and model, has no value left to fill in, and makes a launch that passes every check."""
    fixes = short_command_fixes(ruleset, rule, before, flags, siblings, setup.on.facts(ruleset, before))
    while fixes:
        fix = intent_keeping(fixes)
        fixes = [f for f in fixes if f is not fix]
        if fix is None or PLACEHOLDER in fix.argv or not _same_setup(ruleset, before, fix.argv):
            continue
        if parse_command(fix.argv, ruleset.catalog).errors:
            continue
        if not setup.doubtful(fix.argv):
            return fix
    return None


def _same_setup(ruleset: RuleSet, before: Sequence[str], after: Sequence[str]) -> bool:
    """Whether a fixed launch runs on the same device and model as the one it fixes."""
    old, new = (parse_command(argv, ruleset.catalog).given for argv in (before, after))
    return all(same_value(old.get(name), new.get(name)) for name in ("device", "model_path"))


def _flag_term(term: object) -> bool:
    return not isinstance(term, Term) or term.kind in (TermKind.FIELD, TermKind.ENV) or (
        term.kind is TermKind.OPAQUE and computable(term))


def _decided(f: Formula, bare: Context) -> Formula:
    """The formula with each atom that reads more than flags (the platform, the model) replaced by
    its truth on the setup's bare launch, where that decides it."""
    if isinstance(f, Atom):
        if _flag_term(f.term) and _flag_term(f.other) and not _reads_model_path_only(f):
            return f
        truth = bare.truth(f)
        return f if truth is None else Const(truth)
    if isinstance(f, Not):
        return neg(_decided(f.arg, bare))
    if isinstance(f, And):
        return conj(*(_decided(a, bare) for a in f.args))
    if isinstance(f, Or):
        return disj(*(_decided(a, bare) for a in f.args))
    return f


def _reads_model_path_only(atom: Atom) -> bool:
    """An atom over the model path alone: the setup's model decides it (its facts are that model's)."""
    names = {n for t in (atom.term, atom.other) if isinstance(t, Term) for n in t.fields}
    return names == {"model_path"}


def _reads_flags_only(f: Formula) -> bool:
    return all(_flag_term(a.term) and _flag_term(a.other) for a in atoms(f))
