"""What changes for a launch command that works on one release when it moves to another.

`check --from 0.5.10 --release 0.5.23 -- <command>`: the command checked against both rule sets,
and the differences a user upgrading cares about: options the new release does not accept (with the
flag history's words), definite errors it now hits and those it no longer hits, defaults it relies
on (flags it does not set) that changed, and adjustments that now rewrite what it set. Errors are
matched by rule id, else by message, so a guard that moved to another file is the same guard.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...core.model import Flag, Rule
from ...logic.launch import ArgError, parse_command
from .linter import Report, RuleSet


@dataclass(frozen=True)
class Upgrade:
    """A command's changes between two releases."""

    old: str
    new: str
    argument_errors: tuple[ArgError, ...]  # on the new release, not on the old
    new_errors: tuple[Rule, ...]  # definite on the new release only, in run order
    gone_errors: tuple[Rule, ...]  # definite on the old release only
    defaults: tuple[tuple[str, str | None, str | None], ...]  # (option, old default, new default) it relies on
    rewrites: tuple[Rule, ...]  # adjustments on the new release that write a field the command sets

    @property
    def breaks(self) -> bool:
        return bool(self.argument_errors or self.new_errors)


def upgrade(old: RuleSet, new: RuleSet, old_report: Report, new_report: Report, argv: Sequence[str]) -> Upgrade:
    """The changes for `argv`, from each release's check report of it."""
    had_args = {e.message.split(":", 1)[0] + (e.flag or "") for e in old_report.argument_errors}
    argument_errors = tuple(e for e in new_report.argument_errors if e.message.split(":", 1)[0] + (e.flag or "")
                            not in had_args)
    old_definite = [f.rule for f in old_report.definite]
    new_definite = [f.rule for f in new_report.definite]
    new_errors = tuple(r for r in new_definite if not _matched(r, old_definite))
    gone_errors = tuple(r for r in old_definite if not _matched(r, new_definite))
    given = set(parse_command(list(argv), new.catalog).given)
    old_flags = {f.name: f for f in old.flags}
    defaults = []
    for flag in sorted(new.flags, key=lambda f: f.flags[0] if f.flags else f.name):
        before = old_flags.get(flag.name)
        if before is None or flag.name in given or not flag.flags:
            continue
        if _default_changed(before, flag):
            defaults.append((flag.flags[0], before.default, flag.default))
    old_adjusting = {(r.target, r.message) for r in old_report.adjustments}
    rewrites = tuple(r for r in new_report.adjustments if r.target in given and (r.target, r.message) not in old_adjusting)
    return Upgrade(old.label, new.label, argument_errors, new_errors, gone_errors, tuple(defaults), rewrites)


def _default_changed(before: Flag, after: Flag) -> bool:
    """Known to differ: two literals of other values, or two expressions of other text (`[]` against
    `list()`, or a literal against a name, cannot be told apart statically: not reported)."""
    if before.default_is_literal and after.default_is_literal:
        return type(before.default_value) is not type(after.default_value) or before.default_value != after.default_value
    if not before.default_is_literal and not after.default_is_literal:
        return (before.default or None) != (after.default or None)
    return False


def _matched(rule: Rule, others: Sequence[Rule]) -> bool:
    return any(o.id == rule.id or o.message == rule.message for o in others)


MAX_DEFAULTS = 12


def upgrade_text(change: Upgrade) -> str:
    lines = [f"from {change.old} to {change.new}:"]
    for error in change.argument_errors:
        lines.append(f"  now rejected: {error.message}")
    for rule in change.new_errors:
        lines.append(f"  new error: {rule.location.file}:{rule.location.line}: {rule.message}")
    for rule in change.gone_errors:
        lines.append(f"  no longer an error: {rule.location.file}:{rule.location.line}: {rule.message}")
    for rule in change.rewrites:
        lines.append(f"  now rewrites what it sets: {rule.location.file}:{rule.location.line}: {rule.message}")
    for option, before, after in change.defaults[:MAX_DEFAULTS]:
        lines.append(f"  default of {option} (not set here): {before} -> {after}")
    if len(change.defaults) > MAX_DEFAULTS:
        lines.append(f"  and {len(change.defaults) - MAX_DEFAULTS} more defaults changed")
    if len(lines) == 1:
        lines.append("  nothing changes for this command")
    return "\n".join(lines)


def upgrade_json(change: Upgrade) -> dict:
    return {
        "from": change.old,
        "to": change.new,
        "argument_errors": [{"flag": e.flag, "message": e.message} for e in change.argument_errors],
        "new_errors": [_rule_json(r) for r in change.new_errors],
        "gone_errors": [_rule_json(r) for r in change.gone_errors],
        "rewrites": [_rule_json(r) for r in change.rewrites],
        "defaults": [{"flag": o, "from": b, "to": a} for o, b, a in change.defaults],
    }


def _rule_json(rule: Rule) -> dict:
    return {"id": rule.id, "message": rule.message, "location": {"file": rule.location.file, "line": rule.location.line}}
