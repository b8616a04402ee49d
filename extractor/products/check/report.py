"""A linter's report of one launch command, as the user reads it: text, or a JSON document."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from ...core.model import Rule, RuleKind
from ...logic.evaluation import MISSING_KINDS
from .linter import Beyond, Report


def report_json(report: Report, fixes: Callable[[Rule], list[str]],
                beyond: Callable[[Rule], Beyond | None] = lambda rule: None) -> dict:
    """`beyond(rule)`: for a definite error no change of flags avoids, what decides it (`fixes.beyond_flags`)."""
    return {
        "source": report.label,
        "argument_errors": [{"flag": e.flag, "message": e.message} for e in report.argument_errors],
        "placeholders": list(report.placeholders),
        **({"unread_config": report.unread_config} if report.unread_config else {}),
        "errors": [
            {
                "id": f.rule.id,
                "message": f.text,
                **({"template": f.rule.message} if f.text != f.rule.message else {}),
                "certainty": f.certainty,
                "first": index == 0 and f.certainty == "definite",
                "order": f.place if f.place is not None else f.rule.order,
                "location": {"file": f.rule.location.file, "line": f.rule.location.line},
                "fix": fixes(f.rule),
                **(found.record() if f.certainty == "definite" and (found := beyond(f.rule)) else {}),
                "unknown": list(f.unknown),
                "needs": list(f.needs),
                "changed_by": list(f.changed_by),
                **({"fails_with": f.fails_with} if f.fails_with else {}),
            }
            for index, f in enumerate(report.findings)
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


# What to pass for each kind of missing fact (the quiet text report's summary lines).
_WAITING = {
    "platform": "depend on the GPU or platform: pass --platform NAME (e.g. cuda-sm90, H100, rocm-mi300, cpu)",
    "model": "depend on the model: give the launch a --model-path that is a local folder with its "
             "config.json (or a Hub id the Hugging Face cache holds), or check --model-config FILE or "
             "--model-arch NAME",
    "environment": "depend on environment variables: pass --env NAME=VALUE or --use-env",
    "files": "depend on files the command names: run check with --local where the launch runs",
    "code": "depend on values only the running code computes (helpers, run-time state)",
}
_WAITING_GIVEN = {  # the facts were given but do not decide these
    "platform": "depend on platform facts the profile does not set: decide them with --assume 'ATOM=true|false'",
    "model": "depend on model facts its config.json does not hold: decide them with --assume 'ATOM=true|false'",
    "files": "depend on files the command names that are not where they are looked for",
}


def report_text(report: Report, fixes: Callable[[Rule], list[str]], show_possible: bool = False,
                given: frozenset[str] = frozenset(),
                beyond: Callable[[Rule], Beyond | None] = lambda rule: None, notes: Sequence[str] = ()) -> str:
    """Definite errors in run order (the first marked as where the launch stops); possible ones as one
    summary line per kind of missing fact, or each with what would decide it when `show_possible`;
    `notes`: what the caller says of the launch's facts, before the summary line.
    `given`: the kinds of facts the user passed (platform, model), so the summary asks for the right thing."""
    lines = []
    for error in report.argument_errors:
        lines.append(f"error[argument] {error.message}")
    definite = report.definite
    for index, finding in enumerate(report.findings):
        if finding.certainty == "possible" and not show_possible:
            continue
        rule = finding.rule
        lines.append(f"{'error' if finding.certainty == 'definite' else 'warning'}[{finding.certainty}] "
                     f"{rule.location.file}:{rule.location.line}: {shown_message(rule, finding.text)}")
        if finding.fails_with:
            lines.append(f"  SGLang fails computing this value itself: {finding.fails_with}"
                         if rule.kind is RuleKind.ADJUSTMENT else
                         f"  SGLang fails evaluating this check itself: {finding.fails_with}")
        if finding.certainty == "definite" and len(definite) > 1:
            lines.append("  the launch stops here" if index == 0 else "  then, once that is fixed")
        fix = fixes(rule)
        if fix:
            lines.append("  fix: " + "; or ".join(fix))
        elif finding.certainty == "definite" and (found := beyond(rule)):
            lines.append("  " + found.text())
        if finding.unknown:
            shown = ", ".join(finding.unknown[:3]) + (" ..." if len(finding.unknown) > 3 else "")
            needs = f" (needs {', '.join(finding.needs)})" if finding.needs else ""
            lines.append(f"  undecided{needs}: {shown}")
        if finding.changed_by:
            lines.append(f"  may be changed by adjustments: {', '.join(finding.changed_by[:3])}")
    possible = [f for f in report.findings if f.certainty == "possible"]
    if possible and not show_possible:
        waiting = Counter(f.waits_for for f in possible)
        for kind in MISSING_KINDS:
            if waiting.get(kind):
                words = (_WAITING_GIVEN.get(kind) if kind in given else None) or _WAITING[kind]
                lines.append(f"{waiting[kind]} more {words}")
    for text in report.placeholders:
        lines.append(f"note: {text} is a shell placeholder; its value is unknown here" if text.startswith("-") else
                     f"note: {text} is a shell placeholder where options go; what it sets is unknown here")
    if report.unread_config:
        lines.append(f"note: --config {report.unread_config} is not on this machine: every option the command line "
                     "does not give may come from it, so is unknown here; run check with --local where the launch "
                     "runs, or check the file itself with --file")
    for text in report.unused_assumptions:
        lines.append(f"note: --assume {text!r} matched no condition")
    lines.extend(f"note: {text}" for text in notes)
    listed = " (--show-possible lists them)" if possible and not show_possible else ""
    lines.append(f"{report.label}: {len(definite)} definite, {len(possible)} possible{listed}, "
                 f"{len(report.argument_errors)} argument error(s); {report.checked} guards checked")
    return "\n".join(lines)


def shown_message(rule: Rule, text: str | None = None) -> str:
    """The message as the user would see it (`text`: with the launch's values filled in); never empty
    (a bare `raise` re-raises what it caught)."""
    if rule.message.strip():
        return text or rule.message
    return f"{rule.exception or 'an exception'} re-raised (`raise` without a message)" if rule.kind is RuleKind.RAISE \
        else f"{rule.exception or 'AssertionError'} without a message"
