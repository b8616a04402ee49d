"""Where the tool keeps what it fetches and computes: one cache folder, shared by every layer."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

# The package's own data: platform profiles, the flag history, the releases shipped with it.
DATA = Path(__file__).resolve().parent.parent / "data"

# Written last into an unpacked release tree (what it is, where it came from): its presence marks the tree complete.
INFO_FILE = "source.json"


def cache_root(cache_dir: Path | None = None) -> Path:
    """The cache folder: `cache_dir` when given, else $SGLANG_CONSTRAINTS_CACHE, else the user cache."""
    if cache_dir is not None:
        return Path(cache_dir)
    return Path(os.environ.get("SGLANG_CONSTRAINTS_CACHE") or platformdirs.user_cache_dir("sglang-constraints"))


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
