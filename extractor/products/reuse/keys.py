"""What a rule set's index is found by: the digest of its documents and of the code that reads them,
and the note of a release's index key. Light on purpose: a check answered from what was kept
(`answers`) names its rule set by this key without loading the index or the linter."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from ...core.cache import code_fingerprint, extraction_cache, read_pickled

INDEX_FORMAT = "4"  # bumped when the index layout itself changes (4: bare launches on facts kept beside it)


def index_folder() -> Path:
    return extraction_cache() / "index"


def index_key(*parts: bytes) -> str:
    """A digest of the documents a rule set is made from and of the code that loads and uses it."""
    hasher = hashlib.sha256(INDEX_FORMAT.encode())
    hasher.update(code_fingerprint("products.reuse.rulesets", "products.check.linter").encode())
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big") + part)
    return hasher.hexdigest()


def release_pointer(version: str, index_url: str | None) -> Path:
    """Where the index key of a release is noted: by the release, its package index, the code that
    extracts and loads rules (another code, another note) and the files of the rule set shipped for
    it, if any (rewritten by `make shipped-releases`). A release's files never change."""
    from .shipped import shipped_stamp

    parts = (version, index_url or "", code_fingerprint("products.extraction.extraction", "products.extraction.output"),
             index_key(), shipped_stamp(version) if index_url is None else "")
    digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
    return index_folder() / f"release-{digest}.key"


def noted_index_key(version: str, index_url: str | None) -> str | None:
    """The index key noted for a release by an earlier load of it (`rulesets.release_rules`), or None."""
    noted = read_pickled(release_pointer(version, index_url))
    return noted if isinstance(noted, str) else None


def rules_index_key(path: str | Path) -> str | None:
    """The index key of rules.json (or a folder holding it) and flags.json beside it, or None when
    either cannot be read (loading them then says why)."""
    rules_path = Path(path) / "rules.json" if Path(path).is_dir() else Path(path)
    try:
        rules_bytes, flags_bytes = rules_path.read_bytes(), rules_path.with_name("flags.json").read_bytes()
    except OSError:
        return None
    return index_key(rules_bytes, flags_bytes, _envs_marker(rules_bytes))


def _envs_marker(rules_bytes: bytes) -> bytes:
    """Whether the env-var defaults will be at hand for this document: part of the index key, so an
    index built before the source was cached is not used once it is."""
    at = rules_bytes.rfind(b'\n  "source": ')  # the top-level key, as our writer indents it
    if at < 0:
        return b"?"
    try:
        source, _ = json.JSONDecoder().raw_decode(rules_bytes[at + 13:].decode("utf-8", "replace").lstrip())
    except ValueError:
        return b"?"
    return b"+" if isinstance(source, dict) and source_at_hand(source) else b"-"  # cheap: nothing parsed


def source_at_hand(source: Mapping) -> bool:
    """Whether the source a rules.json came from is here (a cached release, an existing folder or clone)."""
    from ...core.places import cached_releases

    kind = source.get("kind")
    if kind == "release":
        return source.get("release") in cached_releases()
    place = source.get("path") if kind == "path" else source.get("repo") if kind == "git" else None
    return bool(place) and Path(str(place)).exists()
