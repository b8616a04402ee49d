"""A guard's fixes checked on its example, kept beside its rule set's index by guard.

What `explain` shows under Solutions (as the guard's page does) is its ways checked on its example's
command line, which takes evaluating that line from the bare launch and each way applied. They depend
on the rule set and the code that checks fixes alone, not on the text pasted: the first `explain` that
shows a guard works them out and keeps them, the next reads them. A module of its own, so that the
index (and its key, a digest of the code that reads it) does not depend on the code of fixes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...core.cache import code_fingerprint, read_pickled, write_pickled
from ...core.model import Rule
from ..check.fixes import Fix
from ..check.linter import RuleSet
from .keys import index_folder


def kept_example_fix(ruleset: RuleSet, rule: Rule, work_out: Callable[[], list[Fix]],
                     folder: Path | None = None) -> list[Fix]:
    """`work_out()` (the rule's fixes on its example), read from beside the rule set's index when an
    earlier run kept them with the same code, else worked out and kept there."""
    key = ruleset.__dict__.get("index_key")
    if key is None:
        return work_out()
    code = code_fingerprint("products.check.fixes")[:16]  # the code that checks them, the evaluation's too
    path = (folder or index_folder()) / f"{key}-example-{rule.id}-{code}.pickle"
    found = read_pickled(path) if path.is_file() else None
    if isinstance(found, tuple) and all(isinstance(fix, Fix) for fix in found):
        return list(found)
    fixes = work_out()
    write_pickled(path, tuple(fixes))
    return fixes
