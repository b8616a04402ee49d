"""A compact index of a rule set for check: the loaded records pickled once, keyed by their bytes.

Parsing a 20 MB rules.json into formulas takes seconds; `check` of one command needs a fraction of
that. The index is the RuleSet as loaded, written beside the extraction cache under a digest of the
documents' bytes, the env-var defaults and the code that reads them, so a stale or foreign index is
never used: any change gives another key, and an unreadable index is rebuilt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from ...core.cache import code_fingerprint, extraction_cache, read_pickled, write_pickled
from ..check.linter import RuleSet

INDEX_FORMAT = "3"  # bumped when the index layout itself changes (3: with the bare launch evaluated)


def index_folder() -> Path:
    return extraction_cache() / "index"


def index_key(*parts: bytes) -> str:
    """A digest of the documents a rule set is made from and of the code that loads and uses it."""
    hasher = hashlib.sha256(INDEX_FORMAT.encode())
    hasher.update(code_fingerprint("products.reuse.rulesets", "products.check.linter").encode())
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big") + part)
    return hasher.hexdigest()


def stored(key: str, folder: Path | None = None) -> RuleSet | None:
    """The rule set stored under `key`, or None."""
    found = read_pickled((folder or index_folder()) / f"{key}.pickle")
    return found if isinstance(found, RuleSet) else None


def indexed(key: str, build: Callable[[], RuleSet], folder: Path | None = None) -> RuleSet:
    """The rule set stored under `key`, else `build()` stored there first (atomically, best effort:
    a read-only cache only costs the load time)."""
    path = (folder or index_folder()) / f"{key}.pickle"
    found = stored(key, folder)
    if found is not None:
        return found
    ruleset = build()
    _ = ruleset.writes, ruleset.readers, ruleset.catalog  # stored computed: check needs them every time
    # What each term and resolution chain reads, for the fixes' evaluations (`Context.inherit`).
    ruleset.read_sets.prepare(rule.effective for rule in ruleset.rules)
    _ = ruleset.baseline  # the bare launch evaluated whole: a command is evaluated from it
    write_pickled(path, ruleset)
    return ruleset
