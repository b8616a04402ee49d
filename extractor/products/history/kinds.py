"""The kinds of change `diff` reports, in the order its reports list them: names alone, so that the
command line lists them in its help without loading the comparison (each change class of
`changes` declares its kind; a test holds the two the same)."""

from __future__ import annotations

KINDS: tuple[str, ...] = (
    "added", "removed", "moved", "message-changed", "exception-changed", "tightened", "relaxed",
    "caught-earlier", "relaxed-by-new-flags", "condition-changed", "adjustment-added", "adjustment-removed",
    "adjustment-moved", "adjustment-value-changed", "adjustment-widened", "adjustment-narrowed",
    "adjustment-condition-changed", "flag-added", "flag-removed", "flag-default-changed",
    "flag-choices-changed",
)
