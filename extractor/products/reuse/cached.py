"""Extractions cached by content: a source's documents found by its inputs, and checked against
everything else the extraction looked at; on a miss, extracted reusing the walks of the nearest one.

The key of an entry is a digest of the layout's files, the options and the code, then of every other
file the extraction read or asked about (a module a call led to, an Enum's class line, a path only
probed): those are listed beside the documents, and a later tree is checked against that list
(`found_key`). So a commit that changes only a module outside the layout's files gets its own entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from ...core.parallel import default_jobs
from ...core.serialize import loads
from ...sources.layout import find_layout
from ...sources.trees import SourceTree
from ...core.cache import code_fingerprint, compact_path, extraction_cache, prune_cache, read_pickled, write_pickled


def cache_key(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False) -> str:
    """A digest of what an extraction depends on, as far as it is known before extracting: the
    layout's files, the options and the code. The modules calls lead to, and the files the walk
    looked at, are known after: `found_key` checks them."""
    layout = find_layout(tree.paths(), list(include) if include else None)
    code = code_fingerprint("products.extraction.extraction", "products.extraction.output")
    parts = [tree.digest(layout.files), code, json.dumps(sorted(include or [])), str(keep_going)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def found_key(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False,
              folder: Path | None = None, clean: bool = False) -> str | None:
    """The key of a cached extraction of these inputs: of the same layout files and options, and
    whose every other file looked at (a module a call led to, an Enum's class line, a path only
    asked about) is the same in this tree; with `clean`, one that skipped no broken file. None when
    there is none."""
    try:
        entries = json.loads(_seen_path(cache_key(tree, include, keep_going), folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("seen"), dict) and not (clean and entry.get("errors")) \
                and tree.agrees(entry["seen"]):
            return entry.get("key")
    return None


def documents_key(tree: SourceTree, include: Sequence[str] | None = None, folder: Path | None = None) -> str | None:
    """The key of the cached documents a plain extraction of the tree would make: its own, or those
    of a keep-going one (`history` extracts so) that skipped no file: the same documents."""
    return found_key(tree, include, False, folder) or found_key(tree, include, True, folder, clean=True)


def remember_key(tree: SourceTree, include: Sequence[str] | None, keep_going: bool, folder: Path | None = None,
                 errors: int = 0) -> str:
    """The key an extraction just made is kept under: the inputs' key with everything else it looked
    at, listed beside it so `found_key` can check a later tree against it."""
    layout_key = cache_key(tree, include, keep_going)
    layout = set(find_layout(tree.paths(), list(include) if include else None).files)
    seen = {path: what for path, what in tree.looked_at().items() if path not in layout}
    key = hashlib.sha256(f"{layout_key}\n{json.dumps(seen, sort_keys=True)}".encode()).hexdigest()
    path = _seen_path(layout_key, folder)
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = []
    kept = [entry for entry in earlier if isinstance(entry, dict) and entry.get("key") != key] if isinstance(earlier, list) else []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        entry = {"key": key, "seen": seen, "errors": errors}
        temporary.write_text(json.dumps([entry, *kept[: _SEEN_LIMIT - 1]], sort_keys=True),
                             encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass
    return key


_SEEN_LIMIT = 16  # extractions kept per set of layout files (the sources they led to differ elsewhere)


def _seen_path(layout_key: str, folder: Path | None) -> Path:
    return (folder or extraction_cache()) / f"{layout_key}.seen.json"


def cached_documents(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False,
                     folder: Path | None = None) -> tuple[dict, dict, str] | None:
    """The documents of an earlier extraction of the same inputs, or None."""
    # `history` extracts with keep-going; without a problem its documents are the ones a plain
    # extraction makes (keep-going only decides whether a problem stops it), so `diff` reads them.
    key = found_key(tree, include, True, folder) if keep_going else documents_key(tree, include, folder)
    found = load_cached(key, folder) if key is not None else None
    if found is None or key is None:
        return None
    # The same bytes can come from another source (a release and its git tag): say which one.
    source = tree.info.as_dict()
    return {**found[0], "source": source}, {**found[1], "source": source}, key


def cached_key(tree: SourceTree, folder: Path | None = None) -> str | None:
    """The key of an earlier plain extraction of the tree whose documents are in the cache, read from
    the file names alone (a few hundred ms cheaper than loading them, for `check`'s index)."""
    key = documents_key(tree, folder=folder)
    if key is None:
        return None
    paths = cache_paths(key, folder)
    try:
        for path in paths:
            os.utime(path)  # used now: the last to go when the cache is pruned
    except OSError:
        return None
    return key


def load_cached(key: str, folder: Path | None = None) -> tuple[dict, dict] | None:
    """The rules and flags documents cached under `key` (their source is the first one seen), or None."""
    rules_path, flags_path = cache_paths(key, folder)
    try:
        found = (loads(rules_path.read_text(encoding="utf-8")), loads(flags_path.read_text(encoding="utf-8")))
        for path in (rules_path, flags_path):
            os.utime(path)  # used now: the last to go when the cache is pruned
    except (OSError, ValueError):
        return None
    return found


def extract_documents(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False,
                      use_cache: bool = True, folder: Path | None = None, prune: bool = True,
                      jobs: int | None = None) -> tuple[dict, dict, str]:
    """The rules.json and flags.json documents of a source, from the cache when its inputs were seen.

    A new entry prunes the cache to its size limit, unless `prune` is off (`history` prunes once at
    the end, so no worker deletes what another is about to read back). `jobs`: processes an
    extraction may use (default: every core; `history`'s workers, already one per core, use one)."""
    from ..extraction.extraction import extract, no_collections  # heavy (libcst); only needed on a cache miss
    from .kept_walks import extract_reusing
    from ..extraction.output import checked_pieces, flags_document, rules_document, write_atomic

    found = cached_documents(tree, include, keep_going, folder) if use_cache else None
    if found is not None:
        return found
    chosen = list(include) if include else None
    jobs = jobs if jobs is not None else default_jobs()
    if use_cache:  # the walks of the nearest cached extraction are reused, and its own kept
        ex = extract_reusing(tree, chosen, keep_going, folder, jobs=jobs)
    else:
        ex = extract(tree, include=chosen, keep_going=keep_going, jobs=jobs)
    key = remember_key(tree, include, keep_going, folder, len(ex.problems)) if use_cache else cache_key(tree, include, keep_going)
    checked = validated_path(folder) if use_cache else None
    known = read_pickled(checked) if checked is not None else None
    known = known if isinstance(known, frozenset) else frozenset()
    with no_collections():  # the parsed trees are still alive: a full collection would scan them all
        rules, flags = rules_document(ex), flags_document(ex)
        rules_text, rules_records = checked_pieces(rules, "rules.schema.json", known)
        flags_text, flags_records = checked_pieces(flags, "flags.schema.json", known)
    if checked is not None:
        rules_path, flags_path = cache_paths(key, folder)
        # Flags first: the rules file appears last and marks the entry complete. Not made durable:
        # an entry a crash tore does not parse (`load_cached`) and is extracted again.
        write_atomic(flags_path, flags_text, durable=False)
        write_atomic(rules_path, rules_text, durable=False)
        write_pickled(checked, frozenset(rules_records | flags_records))  # the last extraction's records
        if prune:
            prune_cache(folder)
    return rules, flags, key


def validated_path(folder: Path | None = None) -> Path:
    """Where the digests of the records the last extraction validated are kept: by the code that
    makes and validates documents, and the schemas' text."""
    from ..extraction.output import SCHEMA_DIR

    schemas = [(SCHEMA_DIR / name).read_bytes() for name in ("rules.schema.json", "flags.schema.json")]
    parts = [code_fingerprint("products.extraction.output"), *(hashlib.sha256(text).hexdigest() for text in schemas)]
    return compact_path("validated", *parts, folder=folder)


def cache_paths(key: str, folder: Path | None = None) -> tuple[Path, Path]:
    folder = folder or extraction_cache()
    return folder / f"{key}.json", folder / f"{key}.flags.json"
