"""Rule sets shipped inside the package for the newest releases, so that the first `check` or
`explain` of one does not wait for a release download and extraction.

Each release is its rules.json and flags.json documents as an extraction makes them, compact JSON
compressed with xz (about 0.6 MB for 0.5.23). `make shipped-releases` writes them
(`tools/ship_releases.py`); a test holds them equal to a fresh extraction of the release, so they
never say anything the extractor would not.
"""

from __future__ import annotations

import json
import lzma
from collections.abc import Mapping
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from packaging.version import InvalidVersion, Version

_SUFFIXES = (".rules.json.xz", ".flags.json.xz")


def _folder() -> Traversable:
    return resources.files("extractor").joinpath("data", "releases")


def shipped_releases() -> list[str]:
    """The releases shipped, newest first."""
    found = []
    for entry in _folder().iterdir():
        if entry.name.endswith(_SUFFIXES[0]):
            try:
                found.append(Version(entry.name[: -len(_SUFFIXES[0])]))
            except InvalidVersion:
                continue
    return [str(v) for v in sorted(found, reverse=True)]


def packed(version: str) -> tuple[bytes, bytes] | None:
    """The compressed rules and flags documents of a shipped release, or None."""
    try:
        return tuple(_folder().joinpath(version + suffix).read_bytes() for suffix in _SUFFIXES)  # type: ignore[return-value]
    except (FileNotFoundError, NotADirectoryError):
        return None


def shipped_documents(version: str) -> tuple[dict, dict] | None:
    """The rules and flags documents of a shipped release, or None."""
    found = packed(version)
    return unpacked(found) if found is not None else None


def unpacked(packed_documents: tuple[bytes, bytes]) -> tuple[dict, dict]:
    """The rules and flags documents of `packed`'s bytes."""
    rules, flags = (json.loads(lzma.decompress(data)) for data in packed_documents)
    return rules, flags


def write_shipped(folder: Path, version: str, rules: Mapping, flags: Mapping) -> list[Path]:
    """Write a release's documents into `folder` (the package's data/releases), each whole."""
    written = []
    for suffix, document in zip(_SUFFIXES, (rules, flags)):
        text = json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        path = folder / f"{version}{suffix}"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME))
        tmp.replace(path)
        written.append(path)
    return written
