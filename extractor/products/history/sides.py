"""One side of a comparison: a release, a git revision, a path or a rules.json, read as rules and flags.

A source is extracted once, through the extraction cache; beside its documents the snapshot is
kept pickled, so a side read again costs a fraction of a second instead of parsing tens of megabytes
of JSON into formulas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ...core.errors import DocumentError, SourceError
from ...core.model import Flag, Rule
from ...core.serialize import read_rule_documents, records_of
from ...sources.trees import SourceTree, git_tree, path_tree, release_tree
from ...core.cache import code_fingerprint, compact_path, read_pickled, write_pickled
from ..reuse.cached import documents_key, extract_documents


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The rules and flags of one source, as read from its documents."""

    label: str
    source: Mapping[str, object]
    rules: tuple[Rule, ...]
    flags: tuple[Flag, ...] = ()

    @classmethod
    def from_documents(cls, rules_document: Mapping, flags_document: Mapping | None = None,
                       where: str = "rules.json") -> Snapshot:
        source = rules_document.get("source", {})
        source = dict(source) if isinstance(source, Mapping) else {}
        rules, flags = records_of({"rules": rules_document.get("rules", ())}, dict(flags_document or {}), where)
        return cls(label=str(source.get("label", "?")), source=source, rules=rules, flags=flags)


@dataclass(frozen=True, slots=True)
class Spec:
    """One side as given on the command line, resolved to a kind: documents, path, git or release."""

    kind: str
    value: str
    repo: str | None = None
    index_url: str | None = None


def resolve_spec(text: str, git: str | None = None, index_url: str | None = None) -> Spec:
    """A release (`0.5.18`), a git rev (with `git`), a local path, or a rules.json (or its folder)."""
    path = Path(text)
    if path.is_file() and path.suffix == ".json":
        return Spec("documents", str(path))
    if path.is_dir() and (path / "rules.json").is_file() and not (path / "sglang").exists():
        return Spec("documents", str(path / "rules.json"))
    if path.exists():
        return Spec("path", str(path))
    if git:
        try:
            with git_tree(git, text):  # the revision exists
                return Spec("git", text, repo=git)
        except SourceError:
            if not _is_version(text):
                raise
    if _is_version(text):
        return Spec("release", text, index_url=index_url)
    hint = "" if git else " (for a git revision, give --git REPO)"
    raise SourceError(f"{text}: not a release, a path or a rules.json{hint}")


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return text[:1].isdigit()


def open_spec(spec: Spec) -> SourceTree:
    if spec.kind == "release":
        return release_tree(spec.value, index_url=spec.index_url)
    if spec.kind == "git":
        return git_tree(spec.repo or ".", spec.value)
    if spec.kind == "path":
        return path_tree(spec.value)
    raise ValueError(f"{spec.kind}: not a source tree")


def load_documents(spec: Spec, include: Sequence[str] | None = None, keep_going: bool = False,
                   use_cache: bool = True) -> tuple[dict, dict | None, str | None]:
    """The documents of one side, and the cache key when they were extracted (None for given files)."""
    if spec.kind == "documents":
        try:
            rules, flags = read_rule_documents(spec.value)
        except DocumentError as error:
            raise SourceError(str(error)) from None
        return rules, flags, None
    with open_spec(spec) as tree:
        return extract_documents(tree, include, keep_going, use_cache)


def load_snapshot(spec: Spec, include: Sequence[str] | None = None, use_cache: bool = True) -> Snapshot:
    return load_side(spec, include, use_cache)[0]


def load_side(spec: Spec, include: Sequence[str] | None = None, use_cache: bool = True) -> tuple[Snapshot, str | None]:
    """The snapshot of one side and its extraction key (None for given documents or without the
    cache): the compact snapshot when the extraction is cached, else read from the documents."""
    if spec.kind == "documents":
        return _side_of(spec, None, include, use_cache)
    with open_spec(spec) as tree:
        return _side_of(spec, tree, include, use_cache)


def _side_of(spec: Spec, tree: SourceTree | None, include: Sequence[str] | None, use_cache: bool
             ) -> tuple[Snapshot, str | None]:
    if tree is not None and use_cache:
        key = documents_key(tree, include)
        found = read_pickled(snapshot_path(key)) if key is not None else None
        if isinstance(found, Snapshot):
            return with_source(found, tree.info.as_dict()), key
    if tree is None:
        rules, flags, key = load_documents(spec)
    else:
        rules, flags, key = extract_documents(tree, include, use_cache=use_cache)
    try:
        snapshot = Snapshot.from_documents(rules, flags, where=spec.value)
    except DocumentError as error:
        raise SourceError(str(error)) from None
    if key is not None and use_cache:
        write_pickled(snapshot_path(key), snapshot)
    return snapshot, key if use_cache else None


def snapshot_path(key: str, folder: Path | None = None) -> Path:
    """The compact snapshot of the extraction `key`, as this module's code reads it."""
    return compact_path("snapshot", key, code_fingerprint("products.history.sides"), folder=folder)


def with_source(snapshot: Snapshot, source: Mapping[str, object]) -> Snapshot:
    """The same rules and flags said to come from `source` (the same bytes can come from a release and
    its git tag), as `Snapshot.from_documents` reads a cached document's source."""
    return replace(snapshot, source=dict(source), label=str(source.get("label", "?")))
