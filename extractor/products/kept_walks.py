"""The walks of earlier extractions on disk: a bundle per extraction, the nearest one read for the next.

An extraction keeps every walk it made or reused, with the questions each asked
(`analysis.reuse`), and the facts of the functions it parsed. Beside the bundle, a small index says
which files the source had (path and sha256). The next extraction reads the bundle of the source
that shares the most files with its own: the commit before it in a history, the base of a pull
request, the release before. Whatever a walk kept there depends on is checked when it is reused,
so a bundle of an unrelated source costs time, never correctness.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from pathlib import Path

from typing import TYPE_CHECKING

from ..analysis.reuse import MemoryStore
from ..sources.layout import find_layout
from ..sources.trees import SourceTree
from .cache import code_fingerprint, compact_path, extraction_cache, read_pickled, write_pickled

if TYPE_CHECKING:  # libcst-backed, imported when an extraction runs
    from .extraction import Extraction

BUNDLE_FORMAT = 1
_MAX_CANDIDATES = 64  # indexes read to find the nearest bundle (the most recently used first)


def extract_reusing(tree: SourceTree, include: list[str] | None = None, keep_going: bool = False,
                    folder: Path | None = None, timings: dict[str, float] | None = None) -> Extraction:
    """Extract a source, reusing the walks of the nearest extraction kept in the cache, and keep its
    own walks for the next one. The result is the same as a plain `extract`'s."""
    from .extraction import extract  # heavy (libcst): only when something is extracted

    layout = find_layout(tree.paths(), include)
    files = {path: hashlib.sha256(tree.read_bytes(path)).hexdigest() for path in layout.files}
    store = nearest_store(files, folder)
    # What is alive now (the code, the kept walks just read) lives as long as the extraction: left out
    # of the collector's scans, which the extraction's millions of allocations set off again and again.
    gc.freeze()
    try:
        ex = extract(tree, include=include, keep_going=keep_going, timings=timings, store=store, keep=True)
    finally:
        gc.unfreeze()
    if ex.kept is not None:
        keep_walks(tree, files, json.dumps([sorted(files.items()), sorted(include or []), keep_going]), ex.kept, folder)
    return ex


def walk_code() -> str:
    """The code that makes what a bundle keeps (walks, witnesses): a bundle made by other code is never read."""
    return code_fingerprint("products.extraction")


def nearest_store(files: dict[str, str], folder: Path | None = None) -> MemoryStore | None:
    """The kept walks of the cached extraction whose files agree most with `files` (path -> sha256)."""
    folder = folder or extraction_cache()
    code = walk_code()
    best: tuple[int, str] | None = None
    indexes = sorted(folder.glob("walks-*.json"), key=_last_used, reverse=True)[:_MAX_CANDIDATES]
    for index in indexes:
        try:
            header = json.loads(index.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(header, dict) or header.get("format") != BUNDLE_FORMAT or header.get("code") != code:
            continue
        kept_files = header.get("files", {})
        shared = sum(1 for path, sha in files.items() if kept_files.get(path) == sha)
        if shared and (best is None or shared > best[0]):
            best = (shared, index.with_suffix(".pickle").name)
    if best is None:
        return None
    found = read_pickled(folder / best[1])
    if not isinstance(found, MemoryStore):
        return None
    try:
        os.utime(folder / best[1].replace(".pickle", ".json"))  # used now: kept when the cache is pruned
    except OSError:
        pass
    return found


def keep_walks(tree: SourceTree, files: dict[str, str], key: str, store: MemoryStore, folder: Path | None = None) -> None:
    """Keep an extraction's walks for the next one (best effort: a cache that cannot be written only
    costs the next extraction its reuse)."""
    bundle = compact_path("walks", key, walk_code(), folder=folder)
    write_pickled(bundle, store)
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
