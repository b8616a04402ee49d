"""The walks of earlier extractions on disk: a bundle per extraction, the nearest one read for the next.

An extraction keeps every walk it made or reused, with the questions each asked
(`analysis.reuse`), and the facts of the functions it parsed. Beside the bundle, a small index says
which files the source had (path and sha256). The next extraction reads the bundle of the source
that shares the most files with its own: the commit before it in a history, the base of a pull
request, the release before. Whatever a walk kept there depends on is checked when it is reused,
so a bundle of an unrelated source costs time, never correctness.

An extraction that reused a bundle keeps only what it changed (`_Delta`): a commit that changes one
function writes a few kilobytes, not megabytes, and a history of them a chain of deltas on one full
bundle, read back in order. A chain is at most `MAX_CHAIN` long; a missing or unreadable link makes
the bundle unreadable, which again only costs time. So does a base rewritten since (its source
extracted again): what a store holds is checked where it is reused, whatever bundle it came from.
"""

from __future__ import annotations

import gc
import hashlib
import json
import operator
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...analysis.reuse import MemoryStore
from ...sources.layout import find_layout
from ...sources.trees import SourceTree
from ...core.cache import code_fingerprint, compact_path, extraction_cache, read_pickled, write_pickled

if TYPE_CHECKING:  # libcst-backed, imported when an extraction runs
    from ..extraction.extraction import Extraction

BUNDLE_FORMAT = 2  # 2: a bundle may be a delta of another
_MAX_CANDIDATES = 64  # indexes read to find the nearest bundle (the most recently used first)
_READ_TRIES = 3  # bundles tried, nearest first, when one cannot be read
MAX_CHAIN = 8  # bundles read for one store: a delta of a chain this long is written whole instead
DELTA_SHARE = 0.25  # a store that changed more of its walks than this is written whole


@dataclass(frozen=True, slots=True)
class Bundle:
    """A store read from the cache, and the bundle files it was read from (itself first, then each base)."""

    store: MemoryStore
    chain: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Delta:
    """A store as what changed from the store of the bundle `base`: entries added or replaced, and the
    keys gone. Unchanged means the very object read from the base (what an extraction reuses, it
    reuses as read; the stages replace what they keep, never change it in place)."""

    base: str
    walks: dict
    walks_gone: tuple
    facts: dict
    facts_gone: tuple
    later: dict
    later_gone: tuple
    outlines: dict
    outlines_gone: tuple

    def applied(self, base: MemoryStore) -> MemoryStore:
        return MemoryStore(_applied(base.walks, self.walks, self.walks_gone),
                           _applied(base.facts, self.facts, self.facts_gone),
                           _applied(base.later, self.later, self.later_gone),
                           _applied(base.outlines, self.outlines, self.outlines_gone))


def _applied(base: Mapping, changed: dict, gone: tuple) -> dict:
    found = dict(base)
    for key in gone:
        del found[key]
    found.update(changed)
    return found


def _changed(base: Mapping, new: Mapping, same) -> tuple[dict, tuple]:
    changed = {key: value for key, value in new.items() if key not in base or not same(base[key], value)}
    return changed, tuple(key for key in base if key not in new)


def _same_later(old: object, new: object) -> bool:
    """A later stage's entry unchanged: the same object, or a dict of the same objects (the witness
    memo is a new dict each run, of the entries it kept)."""
    if old is new:
        return True
    return (type(old) is dict and type(new) is dict and old.keys() == new.keys()  # type: ignore[union-attr]
            and all(old[key] is new[key] for key in old))  # type: ignore[index]


def delta(base: str, old: MemoryStore, new: MemoryStore) -> _Delta:
    """What `new` changed from `old` (read from the bundle `base`)."""
    walks, walks_gone = _changed(old.walks, new.walks, operator.is_)
    facts, facts_gone = _changed(old.facts, new.facts, operator.is_)
    later, later_gone = _changed(old.later, new.later, _same_later)
    outlines, outlines_gone = _changed(old.outlines, new.outlines, operator.is_)
    return _Delta(base, walks, walks_gone, facts, facts_gone, later, later_gone, outlines, outlines_gone)


def extract_reusing(tree: SourceTree, include: list[str] | None = None, keep_going: bool = False,
                    folder: Path | None = None, timings: dict[str, float] | None = None, jobs: int = 1) -> Extraction:
    """Extract a source, reusing the walks of the nearest extraction kept in the cache, and keep its
    own walks for the next one (`jobs` as `extract` takes it). The result is the same as a plain `extract`'s."""
    from ..extraction.extraction import extract  # heavy (libcst): only when something is extracted

    layout = find_layout(tree.paths(), include)
    files = {path: hashlib.sha256(tree.read_bytes(path)).hexdigest() for path in layout.files}
    nearest = nearest_bundle(files, folder)
    # What is alive now (the code, the kept walks just read) lives as long as the extraction: left out
    # of the collector's scans, which the extraction's millions of allocations set off again and again.
    gc.freeze()
    try:
        ex = extract(tree, include=include, keep_going=keep_going, timings=timings,
                     store=nearest.store if nearest is not None else None, keep=True, jobs=jobs)
    finally:
        gc.unfreeze()
    if ex.kept is not None:
        key = json.dumps([sorted(files.items()), sorted(include or []), keep_going])
        keep_walks(tree, files, key, ex.kept, folder, nearest)
    return ex


def walk_code() -> str:
    """The code that makes what a bundle keeps (walks, witnesses): a bundle made by other code is never read."""
    return code_fingerprint("products.extraction.extraction")


def nearest_bundle(files: dict[str, str], folder: Path | None = None) -> Bundle | None:
    """The kept walks of the cached extraction whose files agree most with `files` (path -> sha256)."""
    folder = folder or extraction_cache()
    code = walk_code()
    candidates: list[tuple[int, int, Path]] = []  # (files shared, recency rank, index)
    indexes = sorted(folder.glob("walks-*.json"), key=_last_used, reverse=True)[:_MAX_CANDIDATES]
    for rank, index in enumerate(indexes):
        try:
            header = json.loads(index.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(header, dict) or header.get("format") != BUNDLE_FORMAT or header.get("code") != code:
            continue
        kept_files = header.get("files", {})
        shared = sum(1 for path, sha in files.items() if kept_files.get(path) == sha)
        if shared:
            candidates.append((-shared, rank, index))
    # The most files shared first, the most recently used among equals; one whose chain is broken
    # (a base pruned from the cache) gives way to the next.
    for _, _, index in sorted(candidates)[:_READ_TRIES]:
        found = read_bundle(folder, index.with_suffix(".pickle").name)
        if found is not None:
            try:
                os.utime(index)  # used now: kept when the cache is pruned
            except OSError:
                pass
            return found
    return None


def read_bundle(folder: Path, name: str) -> Bundle | None:
    """The store of a bundle file, its deltas applied to the full bundle under them; None when a link
    is missing or unreadable, or the chain loops or is longer than MAX_CHAIN."""
    chain: list[str] = []
    deltas: list[_Delta] = []
    while True:
        if name in chain or len(chain) >= MAX_CHAIN:
            return None
        chain.append(name)
        found = read_pickled(folder / name)  # marks each link used: pruning keeps a chain in use
        if isinstance(found, MemoryStore):
            break
        if not isinstance(found, _Delta):
            return None
        deltas.append(found)
        name = found.base
    store = found
    for link in reversed(deltas):
        store = link.applied(store)
    return Bundle(store, tuple(chain))


def keep_walks(tree: SourceTree, files: dict[str, str], key: str, store: MemoryStore, folder: Path | None = None,
               base: Bundle | None = None) -> None:
    """Keep an extraction's walks for the next one (best effort: a cache that cannot be written only
    costs the next extraction its reuse): as a delta of the bundle it reused, `base`, unless that
    would make the chain too long or loop back to this bundle."""
    bundle = compact_path("walks", key, walk_code(), folder=folder)
    kept: MemoryStore | _Delta = store
    if base is not None and bundle.name not in base.chain and len(base.chain) < MAX_CHAIN:
        change = delta(base.chain[0], base.store, store)
        if len(change.walks) <= len(store.walks) * DELTA_SHARE:  # else reading it costs what a whole one does
            kept = change
    write_pickled(bundle, kept)
    header = {"format": BUNDLE_FORMAT, "code": walk_code(), "source": tree.info.label, "files": files}
    try:
        text = json.dumps(header, sort_keys=True)
        temporary = bundle.with_name(f".{bundle.stem}.json.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, bundle.with_suffix(".json"))
    except OSError:
        pass


def _last_used(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
