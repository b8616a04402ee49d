"""One side of a comparison: a release, a git revision, a path or a rules.json, read as rules and flags.

A source is extracted once, through the extraction cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..core.errors import DocumentError, SourceError
from ..core.model import Flag, Rule
from ..core.serialize import read_rule_documents, records_of
from ..sources.trees import SourceTree, git_tree, path_tree, release_tree
from .cache import extract_documents


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
            git_tree(git, text)
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
    rules, flags, key = extract_documents(open_spec(spec), include, keep_going, use_cache)
    return rules, flags, key


def load_snapshot(spec: Spec, include: Sequence[str] | None = None, use_cache: bool = True) -> Snapshot:
    rules, flags, _ = load_documents(spec, include, use_cache=use_cache)
    try:
        return Snapshot.from_documents(rules, flags, where=spec.value)
    except DocumentError as error:
        raise SourceError(str(error)) from None
