"""Fixes that work: each way out of a definite error applied to the launch command and checked again.

A rule's solutions (products/words.py) are read off its own condition; a fix that clears it can set
off another guard (`--disaggregation-mode decode` for the offload flag hits "only supported when
hicache-storage-backend is provided"). Each way is applied and the command checked under the same
environment and facts; a way that sets off a new error is completed with a way out of that one
that only adds flags (never removes more of what the user typed, never undoes the way), at most
`MAX_EXTRA` times; so is one that leaves an error the command already had on the same flags. Ways
that cannot be made to work are not offered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..core.formula import fields_read
from ..core.model import Rule, RuleKind
from ..logic.facts import Facts
from ..logic.launch import parse_command
from .linter import RuleSet, definite_errors, launch_evaluator
from .words import PLACEHOLDER, Edit, Flags, Way, apply_way, solutions, way_text

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
                  facts: Facts | None = None, had: Iterable[str] | None = None) -> list[str]:
    """The rule's fixes for this command line, each as text, with the flags added for other rules.
    `had`: the ids of the command's definite errors, when the caller knows them already."""
    return [fix.text for fix in checked_fixes(ruleset, rule, argv, flags, siblings, env=env, facts=facts, had=had)]


def checked_fixes(ruleset: RuleSet, rule: Rule, argv: Sequence[str], flags: Flags,
                  siblings: Mapping[tuple[str, str], Sequence[Rule]], *, env: Mapping[str, str] | None = None,
                  facts: Facts | None = None, had: Iterable[str] | None = None) -> list[Fix]:
    """`working_fixes` with the fixed command lines."""
    found: list[Fix] = []
    had = set(had) if had is not None else {r.id for r in definite_errors(ruleset, argv, env=env, facts=facts)}
    given = set(parse_command(argv, ruleset.catalog).given)
    for way in solutions(rule, flags, siblings.get((rule.location.file, rule.function), ())):
        way = _on_the_command(way, given, ruleset)
        if not way:
            continue  # only removes what the command does not have: no way out here
        completed = _completed(ruleset, rule, list(argv), way, flags, siblings, had, env, facts)
        if completed is not None and all(f.text != completed.text for f in found):
            found.append(completed)
    return found


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
    argv = list(rule.example.before)
    ways = solutions(rule, flags, siblings.get((rule.location.file, rule.function), ()))
    # What the command already sets off, among the guards a fix can touch: those reading the
    # rule's flags or what its ways edit (an example is a short command: others are rare).
    reading = (set(fields_read(rule.effective)) - _EVERYWHERE).union(*(_fields(w, ruleset) for w in ways))
    had = {r.id for r in definite_errors(ruleset, argv, reading=reading)}
    return checked_fixes(ruleset, rule, argv, flags, siblings, had=had)


def _completed(ruleset: RuleSet, rule: Rule, argv: list[str], way: Way, flags: Flags,
               siblings: Mapping[tuple[str, str], Sequence[Rule]], had: set[str],
               env: Mapping[str, str] | None, facts: Facts | None) -> Fix | None:
    edits: list[Edit] = list(way)
    extras: list[tuple[Way, Rule]] = []
    for _ in range(MAX_EXTRA + 1):
        fixed = apply_way(argv, tuple(edits), ruleset.catalog, placeholders=True)
        if fixed is None:
            return None
        # The guards that read what the edits change (only their truth can change), and those that
        # share a flag with the rule (`_shares_flags`: the model path, which nearly all read, aside);
        # and the rule itself.
        reading = _fields(edits, ruleset) | (set(fields_read(rule.effective)) - _EVERYWHERE)
        evaluator = launch_evaluator(ruleset, fixed, env=env, facts=facts)
        errors = definite_errors(ruleset, fixed, reading=reading, including=(rule,), evaluator=evaluator)
        if evaluator.holds(rule) is not False:
            return None  # the way does not clear it on this command line, or not surely
        # A new error, or one the command had that reads the same flags: the fix is not done until
        # those are (the seed's decode-only offload flag also wants a storage backend).
        new = [e for e in errors if e.id not in had or _shares_flags(e, rule)]
        if not new:
            return Fix(_text(way, extras), tuple(fixed), keeps=all(e.action != "remove" for e in edits))
        blocker = new[0]
        edited = {e.name for e in edits}
        extra = next((w for w in solutions(blocker, flags, siblings.get((blocker.location.file, blocker.function), ()))
                      if w and all(e.action != "remove" and e.name not in edited for e in w)), None)
        if extra is None:
            return None
        edits.extend(extra)
        extras.append((extra, blocker))
    return None


def _on_the_command(way: Way, given: set[str], ruleset: RuleSet) -> Way:
    """The way without removals of flags the command does not pass (`remove --decode-attention-backend`
    when only `--attention-backend` was typed: nothing to remove, and nothing to say)."""
    kept = []
    for edit in way:
        option = ruleset.catalog.option(edit.name) if edit.action == "remove" else None
        if option is not None and option.flag.name not in given:
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


def _text(way: Way, extras: Sequence[tuple[Way, Rule]]) -> str:
    if not extras:
        return way_text(way)
    combined = way + tuple(e for extra, _ in extras for e in extra)
    why = "; ".join(f"{' '.join(e.text().partition(' ')[2] for e in extra)} clears "
                    f"{blocker.location.file.rsplit('/', 1)[-1]}:{blocker.location.line}" for extra, blocker in extras)
    return f"{way_text(combined)} ({why})"
