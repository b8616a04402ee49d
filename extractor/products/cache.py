"""Extractions cached by content: the rules and flags documents of a source, keyed by inputs and code.

The key is a digest of the read files' bytes, the options and the code that extracts; the folder
is kept under its size limit, the least recently used entries going first.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import re
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from ..core.serialize import dumps
from ..sources.layout import find_layout
from ..sources.trees import SourceTree, cache_root

# `from .x import a`, `from ..core.model import (a, b)`, `from . import x`: relative imports, lazy ones too.
_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_PACKAGE = Path(__file__).resolve().parents[1]  # the extractor package


@lru_cache(maxsize=None)
def code_fingerprint(*roots: str) -> str:
    """A digest of the package modules `roots` (dotted, inside the package) import, directly or not
    (lazy imports included).

    A cached result made by other code is not reused, while edits to unrelated modules keep the
    cache warm. The command layer (`cli`, `commands/`) is left out: no lower layer imports it.
    """
    seen: set[Path] = set()
    todo = [_PACKAGE.joinpath(*root.split(".")).with_suffix(".py") for root in roots]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file() or _command_layer(path):
            continue
        seen.add(path)
        for dots, module, names in _IMPORT.findall(path.read_text(encoding="utf-8")):
            base = path.parent
            for _ in range(len(dots) - 1):
                base = base.parent
            target = base.joinpath(*module.split(".")) if module else base
            if module and target.with_suffix(".py").is_file():
                todo.append(target.with_suffix(".py"))
            elif target.is_dir():  # a package: its __init__ and the submodules named
                words = re.findall(r"\w+", re.sub(r"#[^\n]*", "", names))
                todo += [target / "__init__.py", *(target / f"{word}.py" for word in words)]
    hasher = hashlib.sha256()
    for path in sorted(seen):
        name = path.relative_to(_PACKAGE).as_posix()
        hasher.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()


def _command_layer(path: Path) -> bool:
    return path.parent == _PACKAGE and path.name in ("cli.py", "__main__.py") or _PACKAGE / "commands" in path.parents


def cache_key(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False) -> str:
    """A digest of what an extraction depends on: the read files' bytes, the options and the code."""
    layout = find_layout(tree.paths(), list(include) if include else None)
    code = code_fingerprint("products.extraction", "products.output")
    parts = [tree.digest(layout.files), code, json.dumps(sorted(include or [])), str(keep_going)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def extraction_cache() -> Path:
    """The folder of cached extractions: $SGLANG_CONSTRAINTS_EXTRACTION_CACHE, else one in the user cache."""
    return Path(os.environ.get("SGLANG_CONSTRAINTS_EXTRACTION_CACHE") or cache_root() / "extractions")


def cached_documents(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False,
                     folder: Path | None = None) -> tuple[dict, dict, str] | None:
    """The documents of an earlier extraction of the same inputs, or None."""
    key = cache_key(tree, include, keep_going)
    found = load_cached(key, folder)
    if found is None and not keep_going:
        # `history` extracts with keep-going; without a problem its documents are the ones a plain
        # extraction makes (keep-going only decides whether a problem stops it), so `diff` reads them.
        found = load_cached(cache_key(tree, include, True), folder)
        if found is not None and found[0].get("summary", {}).get("errors", 0):
            found = None
    if found is None:
        return None
    # The same bytes can come from another source (a release and its git tag): say which one.
    source = tree.info.as_dict()
    return {**found[0], "source": source}, {**found[1], "source": source}, key


def cached_key(tree: SourceTree, folder: Path | None = None) -> str | None:
    """The key of an earlier plain extraction of the tree whose documents are in the cache, read from
    the file names alone (a few hundred ms cheaper than loading them, for `check`'s index)."""
    key = cache_key(tree)
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
        found = (json.loads(rules_path.read_text(encoding="utf-8")),
                 json.loads(flags_path.read_text(encoding="utf-8")))
        for path in (rules_path, flags_path):
            os.utime(path)  # used now: the last to go when the cache is pruned
    except (OSError, ValueError):
        return None
    return found


CACHE_LIMIT_MB = 2048  # default size of the extraction cache; $SGLANG_CONSTRAINTS_CACHE_LIMIT_MB overrides


def prune_cache(folder: Path | None = None, limit_mb: float | None = None) -> int:
    """Delete the least recently used files of the extraction cache until it fits its size limit.

    Every release, git revision and extractor version adds an entry of 5-30 MB (and `check` an index
    of a few MB, `products.index`) that nothing else removes. Returns the number of files deleted; a file another process removed first is skipped.
    """
    folder = folder or extraction_cache()
    if limit_mb is None:
        try:
            limit_mb = float(os.environ.get("SGLANG_CONSTRAINTS_CACHE_LIMIT_MB", CACHE_LIMIT_MB))
        except ValueError:
            limit_mb = CACHE_LIMIT_MB
    entries = []
    # Compact forms (`*.pickle`: snapshots, verdicts, function walks) and check's indexes count too.
    for path in [*folder.glob("*.json"), *folder.glob("*.pickle"), *folder.glob("index/*.pickle")]:
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((stat.st_mtime, path.name, stat.st_size, path))
    total = sum(size for _, _, size, _ in entries)
    deleted = 0
    for _, _, size, path in sorted(entries):  # oldest use first
        if total <= limit_mb * 1024 * 1024:
            break
        path.unlink(missing_ok=True)
        total -= size
        deleted += 1
    return deleted


def extract_documents(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False,
                      use_cache: bool = True, folder: Path | None = None, prune: bool = True) -> tuple[dict, dict, str]:
    """The rules.json and flags.json documents of a source, from the cache when its inputs were seen.

    A new entry prunes the cache to its size limit, unless `prune` is off (`history` prunes once at
    the end, so no worker deletes what another is about to read back)."""
    from .extraction import extract, fewer_collections  # heavy (libcst); only needed on a cache miss
    from .output import flags_document, rules_document, validate, write_atomic

    found = cached_documents(tree, include, keep_going, folder) if use_cache else None
    if found is not None:
        return found
    key = cache_key(tree, include, keep_going)
    ex = extract(tree, include=list(include) if include else None, keep_going=keep_going)
    with fewer_collections():  # the parsed trees are still alive: a full collection would scan them all
        rules, flags = rules_document(ex), flags_document(ex)
        validate(rules, "rules.schema.json")
        validate(flags, "flags.schema.json")
    if use_cache:
        rules_path, flags_path = cache_paths(key, folder)
        # Flags first: the rules file appears last and marks the entry complete.
        write_atomic(flags_path, dumps(flags))
        write_atomic(rules_path, dumps(rules))
        if prune:
            prune_cache(folder)
    return rules, flags, key


def compact_path(kind: str, *parts: str, folder: Path | None = None) -> Path:
    """Where a compact form of `kind` (a snapshot, verdicts, ...) made from `parts` is kept: the cache
    folder, under a digest of the parts (extraction keys, code fingerprints)."""
    digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return (folder or extraction_cache()) / f"{kind}-{digest}.pickle"


def read_pickled(path: Path) -> object | None:
    """What `write_pickled` left at `path`, or None when it is missing or unreadable (then rebuilt)."""
    try:
        with path.open("rb") as stream:
            found = pickle.load(stream)
        os.utime(path)  # used now: the last to go when the cache is pruned
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        return None
    return found


def write_pickled(path: Path, value: object) -> None:
    """Pickle `value` to `path` atomically, best effort: a read-only cache only costs the time to rebuild."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=".pickle-", delete=False) as stream:
            try:
                _Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
            except BaseException:
                os.unlink(stream.name)
                raise
        os.replace(stream.name, path)
    except OSError:
        pass


class _Pickler(pickle.Pickler):
    """Slotted dataclasses (the model's records and formulas) pickled as a call of their class with
    the init fields: a third of the time of the default state protocol to read back, and derived
    fields made again by `__post_init__` (a formula's cached hash is of strings, whose hash is seeded
    anew in each process: the state protocol would keep another process's)."""

    def reducer_override(self, obj: object) -> object:
        names = _init_fields(type(obj))
        if names is None:
            return NotImplemented
        return type(obj), tuple(getattr(obj, name) for name in names)


@lru_cache(maxsize=None)
def _init_fields(cls: type) -> tuple[str, ...] | None:
    """The fields a slotted dataclass is rebuilt from, or None to pickle it the default way (not slotted,
    or a field left out of `__init__` that no `__post_init__` makes)."""
    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
        return None
    fields = dataclasses.fields(cls)
    if any(not f.init for f in fields) and not hasattr(cls, "__post_init__"):
        return None
    return tuple(f.name for f in fields if f.init)


def cache_paths(key: str, folder: Path | None = None) -> tuple[Path, Path]:
    folder = folder or extraction_cache()
    return folder / f"{key}.json", folder / f"{key}.flags.json"
