"""The cache folder: fingerprints of the code, compact pickled forms, and pruning to its size limit.

What is kept there (documents, `products.cached`; walks, `products.kept_walks`; snapshots, verdicts,
indexes) is named by digests of its inputs and of the code that made it; the folder is kept under its
size limit, the least recently used files going first.
"""

from __future__ import annotations

import contextlib
import copyreg
import gc
import hashlib
import itertools
import marshal
import os
import pickle
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from stat import S_ISREG
from types import CodeType
from typing import BinaryIO

from .collector import collect_less_until_exit, long_lived
from .places import cache_root

# `from .x import a`, `from ..core.model import (a, b)`, `from . import x`: relative imports, lazy ones too.
_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_PACKAGE = Path(__file__).resolve().parents[1]  # the extractor package


@lru_cache(maxsize=None)
def code_fingerprint(*roots: str) -> str:
    """A digest of the package modules `roots` (dotted, inside the package) import, directly or not
    (lazy imports included).

    A cached result made by other code is not reused, while edits to unrelated modules keep the
    cache warm. The command layer (`cli`, `commands/`) is left out: no lower layer imports it.
    Reading and hashing every module costs a command 30 ms; what a module holds (a digest of its
    bytes, the modules it imports) is kept in the cache with its size and modification time
    (`_FingerprintMemo`), so a later process reads only the modules that changed or that no earlier
    fingerprint, of any roots, read: the first `check` after an `extract` reads the few modules the
    index's fingerprint did not, and later ones read none.
    """
    memo = _fingerprint_memo(extraction_cache() / "code" / "fingerprints.pickle")
    found = memo.digest(roots)
    if found is None:
        found, modules, read = _fingerprint(roots, memo.modules)
        memo.keep(roots, found, modules, read)
    return found


# What the fingerprint takes from one module: (its stamp when it was read, a digest of its bytes, the
# package modules it imports, as paths). A plain tuple: every command reads them, and a record class
# would cost each process its creation.
_Module = tuple[tuple[int, int], str, tuple[str, ...]]


def _fingerprint(roots: Sequence[str], known: Mapping[str, _Module] | None = None
                 ) -> tuple[str, dict[str, _Module], dict[str, _Module]]:
    """The digest `code_fingerprint` describes; the modules it is made from, by path; and those of them
    read from their files: those `known` does not hold with their present stamp (all of them without
    `known`)."""
    known = known or {}
    package = str(_PACKAGE)
    commands = (os.path.join(package, "commands", ""), os.path.join(package, "cli.py"),
                os.path.join(package, "__main__.py"))  # the command layer: no lower layer imports it
    modules: dict[str, _Module] = {}
    read: dict[str, _Module] = {}
    todo = [os.path.join(package, *root.split(".")) + ".py" for root in roots]
    while todo:
        path = todo.pop()
        if path in modules or path.startswith(commands[0]) or path in commands[1:]:
            continue
        stamp = _stamp(path)
        if stamp is None:
            continue  # no such module (a name imported from a package that is no submodule)
        module = known.get(path)
        if module is None or module[0] != stamp:
            module = read[path] = _module_read(Path(path), stamp)
        modules[path] = module
        todo += module[2]
    hasher = hashlib.sha256()
    start = len(package) + 1
    for name, digest in sorted((path[start:].replace(os.sep, "/"), module[1]) for path, module in modules.items()):
        hasher.update(name.encode() + b"\0" + digest.encode() + b"\0")
    return hasher.hexdigest(), modules, read


def _module_read(path: Path, stamp: tuple[int, int]) -> _Module:
    """A module's digest and the package modules it imports, read from its file. `stamp` is taken
    before: an edit meanwhile leaves a stamp that no longer holds."""
    data = path.read_bytes()
    imports: list[Path] = []
    for dots, module, names in _IMPORT.findall(data.decode("utf-8")):
        base = path.parent
        for _ in range(len(dots) - 1):
            base = base.parent
        target = base.joinpath(*module.split(".")) if module else base
        if module and target.with_suffix(".py").is_file():
            imports.append(target.with_suffix(".py"))
        elif target.is_dir():  # a package: its __init__ and the submodules named
            words = re.findall(r"\w+", re.sub(r"#[^\n]*", "", names))
            imports += [target / "__init__.py", *(target / f"{word}.py" for word in words)]
    return stamp, hashlib.sha256(data).hexdigest(), tuple(map(str, imports))


class _FingerprintMemo:
    """What `code_fingerprint` read of each module (`_Module`), by its path, and each fingerprint made,
    by the package and the roots, with the modules it is made from. A module's entry holds while a
    `stat` says the same size and modification time (an edit, a checkout or an upgrade changes them;
    a module a root newly imports is named by an edit of one already read); a fingerprint holds while
    all of its modules' do. Kept in one small file of the cache: a missing or unreadable file only
    costs the reading."""

    def __init__(self, path: Path) -> None:
        self.path = path
        found = read_pickled(path)
        _, modules, made = found if isinstance(found, tuple) and len(found) == 3 and found[0] == _MEMO_FORMAT \
            else (None, {}, {})
        self.modules: dict[str, _Module] = modules if isinstance(modules, dict) else {}
        self.made: dict[tuple[str, ...], tuple[str, tuple[tuple[str, tuple[int, int]], ...]]] = \
            made if isinstance(made, dict) else {}

    def digest(self, roots: Sequence[str]) -> str | None:
        entry = self.made.get((str(_PACKAGE), *roots))
        if entry is None:
            return None
        digest, stamps = entry
        # The stamps the fingerprint was made from, its own: a module read again for other roots since
        # has a newer record, which says nothing of this digest.
        return digest if all(_stamp(path) == stamp for path, stamp in stamps) else None

    def keep(self, roots: Sequence[str], digest: str, modules: Mapping[str, _Module], read: Mapping[str, _Module]
             ) -> None:
        self.modules.update(read)
        self.made[(str(_PACKAGE), *roots)] = (digest, tuple((path, modules[path][0]) for path in sorted(modules)))
        write_bytes(self.path, pickle.dumps((_MEMO_FORMAT, self.modules, self.made), protocol=pickle.HIGHEST_PROTOCOL))


_MEMO_FORMAT = "fingerprints-2"  # what the memo file holds; one of another shape is taken as missing


@lru_cache(maxsize=None)
def _fingerprint_memo(path: Path) -> _FingerprintMemo:
    return _FingerprintMemo(path)  # read once per process: a command asks for two or three fingerprints


def _stamp(path: str) -> tuple[int, int] | None:
    """A module file's size and modification time; None when it is no file."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_size, found.st_mtime_ns) if S_ISREG(found.st_mode) else None


def start_process() -> None:
    """What a process of the tool sets up before its work (a command, a pool worker): fewer garbage
    collections (`core.collector`)."""
    collect_less_until_exit()


def extraction_cache() -> Path:
    """The folder of cached extractions: $SGLANG_CONSTRAINTS_EXTRACTION_CACHE, else one in the user cache."""
    return Path(os.environ.get("SGLANG_CONSTRAINTS_EXTRACTION_CACHE") or cache_root() / "extractions")


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
    # Compact forms (`*.pickle`: snapshots, verdicts, function walks), check's indexes and answers count too.
    for path in [*folder.glob("*.json"), *folder.glob("*.pickle"), *folder.glob("index/*.pickle"),
                 *folder.glob("answers/*/*.pickle"), *folder.glob("code/*.marshal")]:
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


def compact_path(kind: str, *parts: str, folder: Path | None = None) -> Path:
    """Where a compact form of `kind` (a snapshot, verdicts, ...) made from `parts` is kept: the cache
    folder, under a digest of the parts (extraction keys, code fingerprints)."""
    digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return (folder or extraction_cache()) / f"{kind}-{digest}.pickle"


def compiled_code(key: str, filename: str, source: Callable[[], str]) -> CodeType:
    """Generated Python source compiled, the code object kept in the cache folder by a digest of what
    the source is made from (`key`): a schema validator is a quarter megabyte of generated code, and
    generating and compiling it cost more than reading it back."""
    digest = hashlib.sha256(f"{sys.version}\n{filename}\n{key}".encode()).hexdigest()
    path = extraction_cache() / "code" / f"{digest}.marshal"
    try:
        code = marshal.loads(path.read_bytes())
        if isinstance(code, CodeType):
            return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source(), filename, "exec")
    write_bytes(path, marshal.dumps(code))
    return code


def write_bytes(path: Path, data: bytes) -> None:
    """Write a file atomically, best effort (a read-only cache only costs the time to make it again)."""
    try:
        with written_aside(path) as stream:
            stream.write(data)
    except OSError:
        pass


_ASIDE = itertools.count()


@contextlib.contextmanager
def written_aside(path: Path) -> Iterator[BinaryIO]:
    """A new file beside `path` to write, swapped in whole when the block ends, removed when it fails.
    Named by this process and a counter and opened exclusively, so no other writer shares it (a name
    a crashed process left is passed over); not `tempfile`, whose imports (`shutil`, `random`) would
    cost every check that keeps its answer 5 ms."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        aside = path.with_name(f".{path.name}.{os.getpid()}-{next(_ASIDE)}.tmp")
        try:
            fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
        os.replace(aside, path)
    except BaseException:
        aside.unlink(missing_ok=True)
        raise


def read_pickled(path: Path, shared: Sequence[object] = ()) -> object | None:
    """What `write_pickled` left at `path`, or None when it is missing or unreadable (then rebuilt).
    `shared`: the objects it was written against, in the same order."""
    try:
        with path.open("rb") as stream, long_lived():
            found = _Unpickler(stream, shared).load() if shared else pickle.load(stream)
        os.utime(path)  # used now: the last to go when the cache is pruned
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError,
            IndexError):
        return None
    return found


def write_pickled(path: Path, value: object, shared: Sequence[object] = ()) -> None:
    """Pickle `value` to `path` atomically, best effort: a read-only cache only costs the time to rebuild.

    `shared`: objects of another pickle that `value` refers to (a rule set's formulas, kept in its
    index): written as their place in that sequence, and read back as the very objects the reader
    passes (`read_pickled`), so a part kept beside an index neither copies it nor loses identity."""
    try:
        with written_aside(path) as stream, _collector_paused():
            pickler = _SharingPickler(stream, protocol=pickle.HIGHEST_PROTOCOL, shared=shared) if shared \
                else _Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.dump(value)
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


class _SharingPickler(_Pickler):
    """`_Pickler` that writes each of the `shared` objects as its place among them (a Python call per
    object pickled: only for parts kept beside what they share)."""

    def __init__(self, *args, shared: Sequence[object], **kwargs) -> None:
        self.places = {id(obj): place for place, obj in enumerate(shared)}
        super().__init__(*args, **kwargs)

    def persistent_id(self, obj: object) -> int | None:
        return self.places.get(id(obj))


class _Unpickler(pickle.Unpickler):
    """Reads what `_Pickler` wrote against `shared` objects: each place number is the object there.

    The lookup is the sequence's own `__getitem__`, which the C unpickler calls without a Python
    frame (a part kept beside an index refers to some 100,000 shared objects); a place that is no
    index of it raises TypeError or IndexError, and `read_pickled` takes the part as unreadable."""

    def __init__(self, stream, shared: Sequence[object]) -> None:
        super().__init__(stream)
        self.persistent_load = list(shared).__getitem__ if not isinstance(shared, list) else shared.__getitem__


def _dispatch_table() -> dict[type, object]:
    """The reducer of every slotted dataclass of the package's loaded modules."""
    table: dict[type, object] = dict(copyreg.dispatch_table)
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] != __package__.partition(".")[0] or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == name and _init_fields(value) is not None:
                table[value] = _reduce_kept if _kept_fields(value) else _reduce
    return table


def _reduce(obj: object) -> tuple:
    return type(obj), tuple(getattr(obj, name) for name in _init_fields(type(obj)))  # type: ignore[union-attr]


def _reduce_kept(obj: object) -> tuple:
    """An object whose class keeps fields no `__init__` takes (a formula's `_digest`): rebuilt by
    `_revive` where one is set, else by its class as `_reduce` does."""
    cls, args = _reduce(obj)
    kept = tuple((name, getattr(obj, name)) for name in _kept_fields(cls) if hasattr(obj, name))
    return (_revive, (cls, args, kept)) if kept else (cls, args)


def _revive(cls: type, args: tuple, kept: tuple) -> object:
    obj = cls(*args)
    for name, value in kept:
        object.__setattr__(obj, name, value)
    return obj


@lru_cache(maxsize=None)
def _kept_fields(cls: type) -> tuple[str, ...]:
    """Fields left out of `__init__` that a pickle keeps (`metadata={"kept": True}`)."""
    import dataclasses  # here: a command that only reads pickles starts without it

    return tuple(f.name for f in dataclasses.fields(cls) if not f.init and f.metadata.get("kept"))


@lru_cache(maxsize=None)
def _init_fields(cls: type) -> tuple[str, ...] | None:
    """The fields a slotted dataclass is rebuilt from, or None to pickle it the default way (not slotted,
    or a field left out of `__init__` that no `__post_init__` makes)."""
    import dataclasses

    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
        return None
    fields = dataclasses.fields(cls)
    if any(not f.init for f in fields) and not hasattr(cls, "__post_init__"):
        return None
    return tuple(f.name for f in fields if f.init)


