"""Rule sets shipped inside the package for the newest releases, so that the first `check` or
`explain` of one does not wait for a release download and extraction.

Each release is its rules.json and flags.json documents as an extraction makes them, each distinct
subtree written once in a table (`_packed`: the 35 MB of 0.5.23's rules.json repeat their shared
subformulas), compact JSON compressed with xz (about 0.55 MB for 0.5.23). `make shipped-releases` writes them
(`tools/ship_releases.py`); a test holds them equal to a fresh extraction of the release, so they
never say anything the extractor would not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ...core.places import DATA

_SUFFIXES = (".rules.json.xz", ".flags.json.xz")


def _folder() -> Path:
    return DATA / "releases"


def shipped_releases() -> list[str]:
    """The releases shipped, newest first."""
    from packaging.version import InvalidVersion, Version

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


def shipped_stamp(version: str) -> str:
    """The size and modification time of a shipped release's files ("" when it is not shipped): what
    tells a note of its index from one made before `make shipped-releases` rewrote them."""
    stamps = []
    for suffix in _SUFFIXES:
        try:
            found = _folder().joinpath(version + suffix).stat()
        except (FileNotFoundError, NotADirectoryError):
            return ""
        stamps.append(f"{found.st_size}:{found.st_mtime_ns}")
    return " ".join(stamps)


def shipped_documents(version: str) -> tuple[dict, dict] | None:
    """The rules and flags documents of a shipped release, or None."""
    found = packed(version)
    return unpacked(found) if found is not None else None


def unpacked(packed_documents: tuple[bytes, bytes]) -> tuple[dict, dict]:
    """The rules and flags documents of `packed`'s bytes (equal to what was packed; a subtree written
    once and used many times is one object in them)."""
    import lzma  # here, as the reader: a note of an index asks only the files' stamps (`shipped_stamp`)

    from ...core.serialize import loads  # here: listing the releases shipped reads no document

    rules, flags = (_expanded(loads(lzma.decompress(data))) for data in packed_documents)
    return rules, flags


# A rules document writes each shared subformula out in full wherever it is used (35 MB for 0.5.23);
# shipped, each distinct subtree is written once, in a table, and used by its place there.
_PACKING = "shared-subtrees-1"


def _packed(document: object) -> dict:
    """The document as a table of its distinct subtrees (objects and arrays), children before
    parents, each naming its parts by their place in the table (`{"@": k}`); `root` is the whole."""
    table: list[object] = []
    places: dict[str, int] = {}

    def place(value: object) -> object:
        if isinstance(value, dict):
            node: object = {key: place(item) for key, item in value.items()}
        elif isinstance(value, list):
            node = [place(item) for item in value]
        else:
            return value
        key = json.dumps(node, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        if key not in places:
            places[key] = len(table)
            table.append(node)
        return {"@": places[key]}

    return {"packing": _PACKING, "table": table, "root": place(document)}


def _expanded(packed: object) -> object:
    """The document `_packed` made a table of; an unpacked document (as shipped before) as it is."""
    if not (isinstance(packed, dict) and packed.get("packing") == _PACKING):
        return packed
    built: list[object] = []

    def part(value: object) -> object:  # in the table, every object or array is a place
        return built[value["@"]] if isinstance(value, dict) else value

    for node in packed["table"]:
        built.append({key: part(item) for key, item in node.items()} if isinstance(node, dict)
                     else [part(item) for item in node])
    return part(packed["root"])


def write_shipped(folder: Path, version: str, rules: Mapping, flags: Mapping) -> list[Path]:
    """Write a release's documents into `folder` (the package's data/releases), each whole."""
    import lzma

    written = []
    for suffix, document in zip(_SUFFIXES, (rules, flags)):
        text = json.dumps(_packed(document), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        path = folder / f"{version}{suffix}"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME))
        tmp.replace(path)
        written.append(path)
    return written
