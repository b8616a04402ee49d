"""Check reports as SARIF 2.1.0, the format code-scanning services read (GitHub, GitLab, Azure DevOps).

One run; a result per definite error and per argument error of each launch command, located at the
command's file and line (or nowhere, for a command given on the command line), its rule described
once in the driver with the SGLang source line it comes from. Possible errors are not results: a
scanner that flags them would cry wolf on every pull request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...core.model import Rule
from .linter import Beyond, Report
from .report import shown_message

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
ARGUMENT_RULE = "argument-error"
TOOL_URI = "https://github.com/sglang-constraints/sglang-constraints"


def sarif_document(reports: Sequence[tuple[tuple[str, int] | None, Report, Callable[[Rule], list[str]],
                                      Callable[[Rule], Beyond | None]]], version: str) -> dict:
    """The SARIF log of several launch commands' reports, each with where the command is, its fixes and,
    for an error no change of flags avoids, what decides it."""
    rules: dict[str, dict] = {}
    results = []
    label = reports[0][1].label if reports else ""
    for place, report, fixes, beyond in reports:
        for error in report.argument_errors:
            rules.setdefault(ARGUMENT_RULE, {
                "id": ARGUMENT_RULE, "name": "ArgumentError",
                "shortDescription": {"text": "SGLang's argument parser rejects the launch command"},
            })
            results.append(_result(ARGUMENT_RULE, error.message, place))
        for finding in report.definite:
            rule = finding.rule
            rules.setdefault(rule.id, {
                "id": rule.id,
                "name": rule.exception or "Error",
                "shortDescription": {"text": shown_message(rule)},
                "properties": {"sglangLocation": f"{rule.location.file}:{rule.location.line}", "kind": rule.kind.value},
            })
            fix = fixes(rule)
            found = beyond(rule) if not fix else None
            sentence = found.text() if found else ""
            text = shown_message(rule, finding.text) + (f" Fix: {'; or '.join(fix)}." if fix else "") + (
                f" {sentence[:1].upper()}{sentence[1:]}." if sentence else "")
            results.append(_result(rule.id, f"{text} ({rule.location.file}:{rule.location.line})", place))
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "sglang-constraints", "version": version, "informationUri": TOOL_URI,
                                "rules": [rules[k] for k in sorted(rules)]}},
            "results": results,
            "properties": {"sglangRelease": label},
        }],
    }


def _result(rule_id: str, message: str, place: tuple[str, int] | None) -> dict:
    result: dict = {"ruleId": rule_id, "level": "error", "message": {"text": message}}
    if place is not None:
        result["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": place[0]},
                                                     "region": {"startLine": place[1]}}}]
    return result
