"""Where the tool keeps what it fetches and computes: one cache folder, shared by every layer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The package's own data: platform profiles, the flag history, the releases shipped with it.
DATA = Path(__file__).resolve().parent.parent / "data"

# Written last into an unpacked release tree (what it is, where it came from): its presence marks the tree complete.
INFO_FILE = "source.json"


def cache_root(cache_dir: Path | None = None) -> Path:
    """The cache folder: `cache_dir` when given, else $SGLANG_CONSTRAINTS_CACHE, else the user cache."""
    if cache_dir is not None:
        return Path(cache_dir)
    return Path(os.environ.get("SGLANG_CONSTRAINTS_CACHE") or _user_cache_dir())


def _user_cache_dir() -> str:
    """The user's cache folder for the tool. On Linux the XDG one, as platformdirs gives it, read here:
    importing platformdirs costs every command 6 ms (it imports tempfile, shutil and random), a tenth
    of a check answered from the cache. The XDG spec: $XDG_CACHE_HOME when it is an absolute path (a
    relative one is invalid and ignored), else ~/.cache."""
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CACHE_HOME", "")
        return os.path.join(base if os.path.isabs(base) else os.path.expanduser("~/.cache"), APP_NAME)
    import platformdirs

    return platformdirs.user_cache_dir(APP_NAME)


APP_NAME = "sglang-constraints"


def cached_releases(cache_dir: Path | None = None) -> list[str]:
    """The releases whose source is unpacked in the cache, newest first."""
    from packaging.version import InvalidVersion, Version  # here: check and explain of one release need not

    trees = cache_root(cache_dir) / "trees"
    found: list[Version] = []
    if trees.is_dir():
        for entry in trees.iterdir():
            try:
                if (entry / INFO_FILE).is_file():
                    found.append(Version(entry.name))
            except InvalidVersion:
                continue
    return [str(version) for version in sorted(found, reverse=True)]
