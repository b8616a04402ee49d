"""Extractions cached by content: the rules and flags documents of a source, keyed by inputs and code.

The key is a digest of the read files' bytes, the options and the code that extracts; the folder
is kept under its size limit, the least recently used entries going first.
"""

from __future__ import annotations

import contextlib
import copyreg
import dataclasses
import gc
import hashlib
import json
import os
import pickle
import re
import sys
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
    """A digest of what an extraction depends on, as far as it is known before extracting: the
    layout's files, the options and the code. The modules calls lead to, and the files the walk
    looked at, are known after: `found_key` checks them."""
    layout = find_layout(tree.paths(), list(include) if include else None)
    code = code_fingerprint("products.extraction", "products.output")
    parts = [tree.digest(layout.files), code, json.dumps(sorted(include or [])), str(keep_going)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def extraction_cache() -> Path:
    """The folder of cached extractions: $SGLANG_CONSTRAINTS_EXTRACTION_CACHE, else one in the user cache."""
    return Path(os.environ.get("SGLANG_CONSTRAINTS_EXTRACTION_CACHE") or cache_root() / "extractions")


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
    from .kept_walks import extract_reusing
    from .output import flags_document, rules_document, validate, write_atomic

    found = cached_documents(tree, include, keep_going, folder) if use_cache else None
    if found is not None:
        return found
    chosen = list(include) if include else None
    if use_cache:  # the walks of the nearest cached extraction are reused, and its own kept
        ex = extract_reusing(tree, chosen, keep_going, folder)
    else:
        ex = extract(tree, include=chosen, keep_going=keep_going)
    key = remember_key(tree, include, keep_going, folder, len(ex.problems)) if use_cache else cache_key(tree, include, keep_going)
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
        with path.open("rb") as stream, _collector_paused():
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
                with _collector_paused():
                    _Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
            except BaseException:
                os.unlink(stream.name)
                raise
        os.replace(stream.name, path)
    except OSError:
        pass


@contextlib.contextmanager
def _collector_paused():
    """No cyclic garbage collection while pickling: the objects made or visited are no garbage, and
    in a process that holds a parsed source (millions of objects) every collection the allocations
    set off would scan them all (a second and more per compact form)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Pickler(pickle.Pickler):
    """Slotted dataclasses (the model's records and formulas) pickled as a call of their class with
    the init fields: a third of the time of the default state protocol to read back, and derived
    fields made again by `__post_init__` (a formula's cached hash is of strings, whose hash is seeded
    anew in each process: the state protocol would keep another process's).

    The classes are looked up in the pickler's dispatch table, by exact type, in C: a
    `reducer_override` would be a Python call for every object pickled, strings and tuples too."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.dispatch_table = _dispatch_table()


def _dispatch_table() -> dict[type, object]:
    """The reducer of every slotted dataclass of the package's loaded modules."""
    table: dict[type, object] = dict(copyreg.dispatch_table)
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] != __package__.partition(".")[0] or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == name and _init_fields(value) is not None:
                table[value] = _reduce
    return table


def _reduce(obj: object) -> tuple:
    return type(obj), tuple(getattr(obj, name) for name in _init_fields(type(obj)))  # type: ignore[union-attr]


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
