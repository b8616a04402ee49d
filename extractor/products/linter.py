"""The launch-command linter: a rule set, and the findings of one launch command against it, as text or JSON.

The command line is parsed as SGLang's argparse parser would (`logic.launch`); flags left out take
their defaults. Each reachable rule's trigger is evaluated in three-valued logic (`logic.evaluation`):
environment variables count as unset unless given (`--env`, `--use-env`, or `NAME=VALUE` before the
command), with `envs.X.get()` defaults read from the source's environ.py when it is at hand.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from ..core.model import Flag, Rule, RuleKind
from ..logic.environment import EnvVar
from ..logic.evaluation import Context, Evaluator, assumption_key, substitute_assumptions
from ..logic.launch import ArgError, Catalog, CommandLine, parse_command


@dataclass(frozen=True)
class RuleSet:
    """The records of one extraction: rules, flag catalog, where they came from, env-var defaults."""

    rules: tuple[Rule, ...]
    flags: tuple[Flag, ...]
    source: Mapping[str, object]
    envs: Mapping[str, EnvVar] | None = None  # None: environ.py was not at hand

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
    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}


# ---- checking a command line -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A rule the command line triggers for sure (`definite`) or may trigger (`possible`)."""

    rule: Rule
    certainty: str
    unknown: tuple[str, ...] = ()  # conditions the command line does not decide
    changed_by: tuple[str, ...] = ()  # adjustments that may rewrite a field the rule reads


@dataclass
class Report:
    findings: list[Finding]
    argument_errors: list[ArgError]
    adjustments: list[Rule]
    unused_assumptions: list[str]
    checked: int
    label: str

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
) -> Report:
    """Findings for a launch command: argparse errors, then every reachable guard that may fire."""
    command = parse_command(argv, ruleset.catalog)
    assumed = {assumption_key(k): v for k, v in (assume or {}).items()}
    context = _context(ruleset, command, env, use_env, assumed)
    rules = list(ruleset.rules)
    used: set[str] = set()
    if assumed:
        substituted = []
        for rule in rules:
            trigger, hit = substitute_assumptions(rule.effective, assumed, ruleset.catalog.spellings)
            used |= hit
            substituted.append(replace(rule, trigger=trigger) if hit else rule)
        rules = substituted
    evaluator = Evaluator(rules if assumed else ruleset.by_id, context)
    wanted = set(only) if only is not None else None
    if wanted is not None:  # a few rules (witnesses ask for one): no pass over all of them
        rules = [evaluator.rules[i] for i in sorted(wanted) if i in evaluator.rules]
    findings = []
    checked = 0
    for rule in rules:
        if not rule.reachable or rule.kind is RuleKind.ADJUSTMENT:
            continue
        checked += 1
        truth, changed = evaluator.truth(rule)
        if truth is False:
            continue
        certainty = "definite" if truth else "possible"
        unknown = () if truth else evaluator.unknown_atoms(rule)
        findings.append(Finding(rule, certainty, unknown, changed))
    findings.sort(key=lambda f: (f.certainty != "definite", f.rule.location.file, f.rule.location.line, f.rule.id))
    adjustments = [] if wanted is not None else [
        r for r in rules if r.kind is RuleKind.ADJUSTMENT and r.reachable and evaluator.fires(r.id)]
    return Report(findings, command.errors, adjustments, sorted(set(assumed) - used), checked, ruleset.label)


def definitely_triggers(ruleset: RuleSet, argv: Sequence[str], ids: Iterable[str]) -> bool:
    """Whether the command line sets off one of these guards for sure: `check` that stops at the first."""
    evaluator = Evaluator(ruleset.by_id, _context(ruleset, parse_command(argv, ruleset.catalog)))
    rules = (ruleset.by_id[i] for i in ids if i in ruleset.by_id)
    return any(evaluator.truth(r)[0] is True for r in rules if r.reachable and r.kind is not RuleKind.ADJUSTMENT)


def _context(ruleset: RuleSet, command: CommandLine, env: Mapping[str, str] | None = None, use_env: bool = False,
             assumed: Mapping[str, bool] | None = None) -> Context:
    values = dict(ruleset.defaults)
    values.update(command.given)
    environment = dict(os.environ) if use_env else {}
    environment.update(command.env)
    environment.update(env or {})
    return Context(values, environment, ruleset.envs, dict(assumed or {}), ruleset.catalog.spellings)


def report_json(report: Report, fixes: Callable[[Rule], list[str]]) -> dict:
    return {
        "source": report.label,
        "argument_errors": [{"flag": e.flag, "message": e.message} for e in report.argument_errors],
        "errors": [
            {
                "id": f.rule.id,
                "message": f.rule.message,
                "certainty": f.certainty,
                "location": {"file": f.rule.location.file, "line": f.rule.location.line},
                "fix": fixes(f.rule),
                "unknown": list(f.unknown),
                "changed_by": list(f.changed_by),
            }
            for f in report.findings
        ],
        "adjustments": [
            {"id": r.id, "message": r.message, "location": {"file": r.location.file, "line": r.location.line}}
            for r in report.adjustments
        ],
        "unused_assumptions": report.unused_assumptions,
        "summary": {
            "checked": report.checked,
            "definite": len(report.definite),
            "possible": len(report.findings) - len(report.definite),
            "argument_errors": len(report.argument_errors),
        },
    }


def report_text(report: Report, fixes: Callable[[Rule], list[str]], show_possible: bool = True) -> str:
    lines = []
    for error in report.argument_errors:
        lines.append(f"error[argument] {error.message}")
    for finding in report.findings:
        if finding.certainty == "possible" and not show_possible:
            continue
        rule = finding.rule
        lines.append(f"{'error' if finding.certainty == 'definite' else 'warning'}[{finding.certainty}] "
                     f"{rule.location.file}:{rule.location.line}: {rule.message}")
        fix = fixes(rule)
        if fix:
            lines.append("  fix: " + "; or ".join(fix))
        if finding.unknown:
            shown = ", ".join(finding.unknown[:3]) + (" ..." if len(finding.unknown) > 3 else "")
            lines.append(f"  undecided: {shown}")
        if finding.changed_by:
            lines.append(f"  may be changed by adjustments: {', '.join(finding.changed_by[:3])}")
    for text in report.unused_assumptions:
        lines.append(f"note: --assume {text!r} matched no condition")
    possible = len(report.findings) - len(report.definite)
    lines.append(f"{report.label}: {len(report.definite)} definite, {possible} possible, "
                 f"{len(report.argument_errors)} argument error(s); {report.checked} guards checked")
    return "\n".join(lines)
