"""All input of the tool: SGLang Python sources from a PyPI release, a local path or a git commit."""

from __future__ import annotations

import abc
import hashlib
import io
import json
import os
import posixpath
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import threading
import tokenize
import weakref
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePath

from packaging.version import InvalidVersion, Version

from ..core.errors import SourceError
from ..core.places import INFO_FILE, cache_root
from ..core.progress import Status, progress, step
from .index import Dist, choose, chosen_index, fetch, index_files, reason
from .libraries import REQUIRES_FILE, exact_pins, library_file

# Caps against archive bombs; module-level so tests can shrink them.
MAX_MEMBER_BYTES = 20 * 2**20
MAX_TOTAL_BYTES = 500 * 2**20
PACKAGE = "sglang"
LIBRARY_KEY = "library:"  # among what a tree looked at: the version of a library it pins


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where a source tree came from; recorded next to every output."""

    kind: str
    label: str
    release: str | None = None
    archive: str | None = None
    archive_sha256: str | None = None
    path: str | None = None
    repo: str | None = None
    commit: str | None = None
    commit_date: str | None = None
    prefix: str = ""

    def as_dict(self) -> dict:
        return {key: value for key, value in sorted(asdict(self).items()) if value is not None}


class SourceTree(abc.ABC):
    """The Python files of one source, addressed by posix paths like "sglang/srt/server_args.py"."""

    def __init__(self, info: SourceInfo, paths: Iterable[str]) -> None:
        self.info = info
        self._paths = sorted(set(paths))
        self._known = frozenset(self._paths)
        # What was looked at: a path read, by the digest of its bytes; a path asked about, by
        # whether it is there. A result cached for this source holds for another that agrees on all.
        self._seen: dict[str, str | bool] = {}
        self._read_before: dict[str, bytes] = {}

    def paths(self) -> list[str]:
        return list(self._paths)

    def has(self, path: str) -> bool:
        """Is the path a file of the source? (Kept among what was looked at.)"""
        found = path in self._known
        self._seen.setdefault(path, found)
        return found

    def read_bytes(self, path: str) -> bytes:
        if path not in self._known:
            raise SourceError(f"{path}: not in source {self.info.label}")
        data = self._bytes(path)
        if not isinstance(self._seen.get(path), str):
            self._seen[path] = hashlib.sha256(data).hexdigest()
        return data

    def _bytes(self, path: str) -> bytes:
        """A file's bytes, read once: an extraction reads the layout's files several times (the cache
        key, the index, the parse), each a round trip to `git cat-file` for a commit."""
        data = self._read_before.get(path)
        if data is None:
            data = self._read_before[path] = self._read(path)
        return data

    def looked_at(self) -> dict[str, str | bool]:
        """Every path read (its sha256) or asked about (True: there, False: not), so far."""
        return dict(sorted(self._seen.items()))

    def agrees(self, seen: dict[str, str | bool]) -> bool:
        """Does this source hold what another one was seen to hold, path by path?"""
        for path, what in seen.items():
            if path.startswith(LIBRARY_KEY):  # a library's files: the same version pinned, the same files
                if self.pins().get(path[len(LIBRARY_KEY):], "") != what:
                    return False
            elif isinstance(what, bool):
                if (path in self._known) != what:
                    return False
            elif path not in self._known or hashlib.sha256(self._bytes(path)).hexdigest() != what:
                return False
        return True

    def pins(self) -> dict[str, str]:
        """The libraries this source pins to one version, by name (a release's `Requires-Dist: x==v`)."""
        return {}

    def library_text(self, package: str, path: str) -> str | None:
        """A file of a library this source pins (`transformers/models/auto/configuration_auto.py`), or
        None: no version pinned (a local path, a git commit), or none such in that version. Kept among
        what was looked at by the version pinned: a release's library files never change."""
        version = self.pins().get(package)
        self._seen[LIBRARY_KEY + package] = version or ""
        data = self._library(package, version, path) if version is not None else None
        return data.decode("utf-8", "replace") if data is not None else None

    def _library(self, package: str, version: str, path: str) -> bytes | None:
        return None

    def read_text(self, path: str) -> str:
        data = self.read_bytes(path)
        try:
            # detect_encoding answers "utf-8-sig" for a BOM, so decoding drops it.
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            return data.decode(encoding)
        except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
            raise SourceError(f"{path}: cannot decode: {reason(exc)}") from None

    def digest(self, paths: Iterable[str]) -> str:
        hasher = hashlib.sha256()
        for path in sorted(set(paths)):
            name, data = path.encode(), self.read_bytes(path)
            # Length prefixes keep (path, bytes) boundaries unambiguous.
            hasher.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big"))
            hasher.update(data)
        return hasher.hexdigest()

    @abc.abstractmethod
    def _read(self, path: str) -> bytes: ...

    def close(self) -> None:
        """Release what reading holds (a git tree's `git cat-file` process); a later read opens it again."""

    def __enter__(self) -> SourceTree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _DirectoryTree(SourceTree):
    """Files read from a folder on disk (a local path or an unpacked release)."""

    def __init__(self, info: SourceInfo, root: Path, paths: Iterable[str]) -> None:
        super().__init__(info, paths)
        self._root = root

    def _read(self, path: str) -> bytes:
        try:
            return (self._root / path).read_bytes()
        except OSError as exc:
            raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None


class _ReleaseTree(_DirectoryTree):
    """An unpacked release: its files, and those of the libraries it pins, fetched when first asked."""

    def __init__(self, info: SourceInfo, root: Path, paths: Iterable[str], pins: dict[str, str], index: str,
                 cache: Path) -> None:
        super().__init__(info, root, paths)
        self._pinned, self._index, self._cache = pins, index, cache

    def pins(self) -> dict[str, str]:
        return dict(self._pinned)

    def _library(self, package: str, version: str, path: str) -> bytes | None:
        return library_file(package, version, path, index=self._index, root=self._cache)


class _GitTree(SourceTree):
    """Blobs of one commit, read through a single `git cat-file --batch` process."""

    def __init__(self, info: SourceInfo, repo: Path, blobs: dict[str, str]) -> None:
        super().__init__(info, blobs)
        self._repo = repo
        self._blobs = blobs
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    def _read(self, path: str) -> bytes:
        oid = self._blobs[path]
        with self._lock:
            try:
                if self._process is None:
                    self._process = subprocess.Popen(
                        ["git", "-C", str(self._repo), "cat-file", "--batch"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    )
                    # `close()` (a `with` block) stops it; the finalizer only backs that up.
                    weakref.finalize(self, _stop, self._process)
                process = self._process
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(oid.encode() + b"\n")
                process.stdin.flush()
                header = process.stdout.readline().split()
                if len(header) != 3 or header[1] != b"blob":
                    raise SourceError(f"{self._repo}: {path}: cannot read blob {oid}")
                data = process.stdout.read(int(header[2]))
                process.stdout.read(1)  # the newline after each object
            except (OSError, ValueError) as exc:
                raise SourceError(f"{self._repo}: {path}: git cat-file failed: {reason(exc)}") from None
        return data

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.communicate()  # closes its input, so `git cat-file --batch` exits; then closes the pipes


# ---- releases ---------------------------------------------------------------------------------


def release_tree(version: str, *, index_url: str | None = None, cache_dir: Path | None = None) -> SourceTree:
    try:
        release = str(Version(version))
    except InvalidVersion:
        raise SourceError(f"sglang=={version}: not a valid version") from None
    root = cache_root(cache_dir)
    tree_dir = root / "trees" / release
    info = _load_info(tree_dir)
    if info is None:
        index = chosen_index(index_url)
        progress(f"sglang {release}: fetching it from {index} (once; kept in {root})")
        with Status(f"sglang {release}"):
            dist = choose(index_files(index, PACKAGE, release), PACKAGE, release, index)
            archive = fetch(dist, root / "archives", f"{PACKAGE}=={release}")
            step("unpacking it")
            info = _unpack_release(archive, dist, release, tree_dir)
    return _ReleaseTree(info, tree_dir, _walk_py(tree_dir / PACKAGE, tree_dir), _release_pins(tree_dir, root, info),
                        chosen_index(index_url), root)


def _release_pins(tree_dir: Path, root: Path, info: SourceInfo) -> dict[str, str]:
    """What the release pins, noted beside its files when unpacked (or, for a release unpacked
    before that note existed, read from its archive while it is kept)."""
    noted = tree_dir / REQUIRES_FILE
    try:
        pins = json.loads(noted.read_text(encoding="utf-8"))
        return {str(k): str(v) for k, v in pins.items()} if isinstance(pins, dict) else {}
    except (OSError, ValueError):
        pass
    archive = root / "archives" / (info.archive or "")
    if not info.archive or not archive.is_file():
        return {}
    pins = exact_pins(archive)
    try:
        noted.write_text(json.dumps(pins, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    except OSError:
        pass
    return pins


def release_versions(*, index_url: str | None = None, pre: bool = False) -> list[str]:
    """Versions of the package on the index with a file that is not yanked, oldest first."""
    index = chosen_index(index_url)
    found = {dist.version for dist in index_files(index, PACKAGE, "*") if not dist.yanked}
    return [str(version) for version in sorted(found) if pre or not version.is_prerelease]


def release_dates(*, index_url: str | None = None) -> dict[str, str]:
    """The day each release was published (its first file's upload, `YYYY-MM-DD`), for the releases
    whose files the index dates (PyPI's JSON simple API does; an HTML page does not)."""
    index = chosen_index(index_url)
    found: dict[str, str] = {}
    for dist in index_files(index, PACKAGE, "*"):
        if dist.uploaded and not dist.yanked:
            label = str(dist.version)
            found[label] = min(found.get(label, dist.uploaded[:10]), dist.uploaded[:10])
    return dict(sorted(found.items()))


def _load_info(tree_dir: Path) -> SourceInfo | None:
    try:
        return SourceInfo(**json.loads((tree_dir / INFO_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None



def _unpack_release(archive: Path, dist: Dist, release: str, tree_dir: Path) -> SourceInfo:
    tree_dir.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(dir=tree_dir.parent, prefix=".unpack-"))
    try:
        info = SourceInfo(
            kind="release", label=_sanitize(release, "release"), release=release,
            archive=dist.filename, archive_sha256=(dist.sha256 or "").lower(), prefix=_unpack(archive, temp),
        )
        (temp / REQUIRES_FILE).write_text(json.dumps(exact_pins(archive), indent=2, sort_keys=True) + "\n",
                                          encoding="utf-8")
        (temp / INFO_FILE).write_text(json.dumps(info.as_dict(), indent=2) + "\n", encoding="utf-8")
        if tree_dir.exists() and _load_info(tree_dir) is None:
            shutil.rmtree(tree_dir)  # an incomplete leftover
        try:
            os.replace(temp, tree_dir)
        except OSError:
            if _load_info(tree_dir) is None:  # not a concurrent run that finished first
                raise
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return info


# ---- archives -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Member:
    """An archive entry as far as extraction needs it."""

    name: str
    size: int
    regular: bool
    handle: object


def _unpack(archive: Path, dest: Path) -> str:
    """Write the archive's `sglang/**/*.py` under dest; return the package's prefix ("python/" or "")."""
    try:
        if archive.name.endswith(".tar.gz"):
            with tarfile.open(archive, "r:gz") as tar:
                members = []
                for entry in tar.getmembers():
                    _check_tar_member(entry, dest, archive.name)
                    members.append(_Member(entry.name, entry.size, entry.isfile(), entry))
                return _extract(members, tar.extractfile, True, dest, archive.name)
        with zipfile.ZipFile(archive) as zipped:
            members = [
                _Member(entry.filename, entry.file_size,
                        not entry.is_dir() and not stat.S_ISLNK(entry.external_attr >> 16), entry)
                for entry in zipped.infolist()
            ]
            return _extract(members, zipped.open, not archive.name.endswith(".whl"), dest, archive.name)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError, ValueError,
            NotImplementedError, RuntimeError) as exc:  # the last two: unsupported compression, encryption
        raise SourceError(f"{archive.name}: cannot unpack: {reason(exc)}") from None


def _extract(members: list[_Member], open_member, sdist: bool, dest: Path, archive: str) -> str:
    for member in members:
        _check_name(member.name, archive)
    package = _package_dir({member.name for member in members}, sdist, archive)
    base = package[: -len(PACKAGE) - 1]
    selected = [m for m in members if m.name.startswith(package) and _is_source(m.name)]
    for member in selected:
        if not member.regular:
            raise SourceError(f"{archive}: {member.name}: not a regular file")
        if member.size > MAX_MEMBER_BYTES:
            raise SourceError(f"{archive}: {member.name}: larger than {MAX_MEMBER_BYTES} bytes")
    if sum(member.size for member in selected) > MAX_TOTAL_BYTES:
        raise SourceError(f"{archive}: package sources exceed {MAX_TOTAL_BYTES} bytes")
    total = 0
    for member in selected:
        # Declared sizes can lie; bound what is actually decompressed too.
        with open_member(member.handle) as stream:
            data = stream.read(MAX_MEMBER_BYTES + 1)
        total += len(data)
        if len(data) > MAX_MEMBER_BYTES or total > MAX_TOTAL_BYTES:
            raise SourceError(f"{archive}: {member.name}: decompresses beyond the size limit")
        target = dest / member.name[len(base):]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    # An sdist's first component is its "name-version/" folder; what follows is the repo prefix.
    return base.split("/", 1)[1] if sdist else ""


def _package_dir(names: set[str], sdist: bool, archive: str) -> str:
    init = f"{PACKAGE}/__init__.py"
    candidates = [
        name[: -len("__init__.py")] for name in names
        if (name.endswith("/" + init) if sdist else name == init)
    ]
    if not candidates:
        raise SourceError(f"{archive}: no {PACKAGE}/ package inside")
    return min(candidates, key=lambda name: (name.count("/"), name))


def _check_name(name: str, archive: str) -> None:
    parts = re.split(r"[\\/]", name)
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts:
        raise SourceError(f"{archive}: unsafe member path {name!r}")


def _check_tar_member(member: tarfile.TarInfo, dest: Path, archive: str) -> None:
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is not None:
        try:
            data_filter(member, str(dest))
        except tarfile.FilterError as exc:
            raise SourceError(f"{archive}: unsafe member {member.name!r}: {reason(exc)}") from None
        return
    # Same rules as the "data" filter for Pythons that lack it.
    if member.issym() or member.islnk():
        start = posixpath.dirname(member.name) if member.issym() else ""
        target = posixpath.normpath(posixpath.join(start, member.linkname))
        if member.linkname.startswith("/") or target == ".." or target.startswith("../"):
            raise SourceError(f"{archive}: unsafe member {member.name!r}: link points outside")
    elif not (member.isfile() or member.isdir()):
        raise SourceError(f"{archive}: unsafe member {member.name!r}: special file")


# ---- local paths and git ---------------------------------------------------------------------------


def path_tree(path: str | Path) -> SourceTree:
    given = Path(path)
    if not given.exists():
        raise SourceError(f"{path}: no such file or directory")
    absolute = Path(os.path.abspath(given))
    info = SourceInfo(kind="path", label=_sanitize(absolute.name, "path"), path=PurePath(path).as_posix())
    if absolute.is_file():
        package = _enclosing_package(absolute)
        root = package.parent if package else absolute.parent
        return _DirectoryTree(info, root, [absolute.relative_to(root).as_posix()])
    for prefix in ("", "python/"):
        if (absolute / prefix / PACKAGE).is_dir():
            root = absolute / prefix
            return _DirectoryTree(replace(info, prefix=prefix), root, _walk_py(root / PACKAGE, root))
    package = _enclosing_package(absolute)
    if package is not None:
        return _DirectoryTree(info, package.parent, _walk_py(package, package.parent))
    # Not SGLang at all (e.g. a test fixture folder): every Python file, relative to the folder.
    return _DirectoryTree(info, absolute, _walk_py(absolute, absolute))


def _enclosing_package(path: Path) -> Path | None:
    for folder in [path, *path.parents]:
        # A checkout folder that happens to be named "sglang" is not the package.
        if folder.name == PACKAGE and folder.is_dir() and not (folder / "python" / PACKAGE).is_dir():
            return folder
    return None


def _walk_py(top: Path, root: Path) -> list[str]:
    found = []
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = [name for name in subfolders if _is_source(f"{name}/x.py")]  # prune early
        # Strings, not Path objects: a release has ~4,700 files and `history` lists eighteen of them.
        relative = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        found += [prefix + name for name in files]
    return sorted(path for path in found if _is_source(path))


def _is_source(path: str) -> bool:
    """A *.py file outside hidden and __pycache__ folders, which hold no importable module."""
    *folders, name = path.split("/")
    return name.endswith(".py") and not any(part.startswith(".") or part == "__pycache__" for part in folders)


def git_tree(repo: str | Path, rev: str) -> SourceTree:
    repo_path = Path(repo)
    if rev.startswith("-"):
        raise SourceError(f"{repo}: {rev}: not a revision")
    commit = _git(repo_path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    if not commit:
        raise SourceError(f"{repo}: {rev}: no such commit")
    date = _git(repo_path, "log", "-1", "--format=%cI", commit).strip()
    blobs: dict[str, str] = {}
    for entry in _git(repo_path, "ls-tree", "-r", "-z", commit).split("\0"):
        meta, _, name = entry.partition("\t")
        fields = meta.split()
        # Regular files only: symlinks (120000) and submodules (160000) hold no source.
        if len(fields) == 3 and fields[0] in ("100644", "100755") and _is_source(name):
            blobs[name] = fields[2]
    prefix = "python/" if any(name.startswith(f"python/{PACKAGE}/") for name in blobs) else ""
    package = f"{prefix}{PACKAGE}/"
    if any(name.startswith(package) for name in blobs):
        blobs = {name[len(prefix):]: oid for name, oid in blobs.items() if name.startswith(package)}
    label = commit[:12] if re.fullmatch(r"[0-9a-fA-F]{4,40}", rev) else _sanitize(rev, commit[:12])
    info = SourceInfo(kind="git", label=label, repo=PurePath(repo).as_posix(), commit=commit,
                      commit_date=date, prefix=prefix)
    return _GitTree(info, repo_path, blobs)


def git_log(repo: str | Path, revs: str, paths: Iterable[str]) -> list[str]:
    """Full ids of the commits of `revs` (e.g. `A..B`) that touch `paths`, oldest first."""
    if revs.startswith("-"):
        raise SourceError(f"{repo}: {revs}: not a revision range")
    return _git(Path(repo), "log", "--reverse", "--format=%H", revs, "--", *paths).split()


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except OSError as exc:
        raise SourceError(f"{repo}: cannot run git: {reason(exc)}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        if args[0] == "rev-parse" and not lines:
            return ""  # --quiet: the revision does not exist
        raise SourceError(f"{repo}: git {args[0]} failed: {lines[-1] if lines else done.returncode}")
    return done.stdout.decode("utf-8", "replace")


# ---- small helpers -------------------------------------------------------------------------------


def _sanitize(text: str, fallback: str) -> str:
    label = re.sub(r"[^A-Za-z0-9._-]+", "_", text)
    return fallback if label in ("", ".", "..") else label


