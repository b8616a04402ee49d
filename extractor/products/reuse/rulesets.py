"""Rule sets to check against: from a rules.json, a fresh extraction, or a release (shipped in the
package for the newest ones, else through the cache).

flags.json is read beside rules.json; env-var defaults come from the source when it is at hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...core.errors import SourceError
from ...core.progress import Status, progress
from ...core.serialize import environment_of, helpers_of, read_rule_documents, records_of, resolution_of
from ...logic.environment import EnvVar
from ...core.cache import write_pickled
from .index import indexed, stored
from .keys import index_key, noted_index_key, release_pointer, rules_index_key, source_at_hand
from ..check.linter import RuleSet
from .shipped import packed, unpacked


def load_rules(path: str | Path) -> RuleSet:
    """rules.json with flags.json from the same folder; env defaults from the source when it is at hand.

    Read through the index (`products.index`): the first load of these bytes parses them, later
    ones unpickle what it built.
    """
    key = rules_index_key(path)
    if key is None:
        return parse_rules(path)  # its own one-line errors
    return indexed(key, lambda: parse_rules(path))


def parse_rules(path: str | Path) -> RuleSet:
    """rules.json and flags.json parsed, without the index."""
    rules, flags = read_rule_documents(path)
    if flags is None:
        rules_path = Path(path) / "rules.json" if Path(path).is_dir() else Path(path)
        raise FileNotFoundError(f"{rules_path.with_name('flags.json')}: no flag catalog beside {rules_path.name}")
    source = rules.get("source")
    envs = environment_of(rules, str(path))  # written beside the rules since 1.2.0; older documents: read from the source
    if envs is None and isinstance(source, dict):
        envs = _local_envs(source)
    return ruleset_from_documents(rules, flags, envs, where=str(path))


def ruleset_from_documents(rules: Mapping, flags: Mapping, envs: Mapping[str, EnvVar] | None = None,
                           where: str = "rules.json") -> RuleSet:
    # One intern table for the triggers and the resolution table: a launch's evaluation keys its
    # memo by formula, and a write's condition equal to a trigger's subformula is then the same
    # object (found at once, not by comparing two deep trees).
    intern: dict = {}
    records, flag_records = records_of(dict(rules), dict(flags), where, intern)
    source = rules.get("source", {})
    return RuleSet(rules=records, flags=flag_records, source=source if isinstance(source, Mapping) else {}, envs=envs,
                   resolution=resolution_of(dict(rules), where, intern), helpers=helpers_of(dict(rules), where))


def ruleset_of(ex, tree=None) -> RuleSet:
    """The rule set of a fresh extraction; env-var defaults read from `tree` when given."""
    from ...analysis.environ import env_defaults  # reads the source: only where a source is at hand

    return RuleSet(ex.rules, ex.flags, ex.info.as_dict(), env_defaults(tree) if tree is not None else None,
                   ex.resolution, ex.helpers)


def release_rules(version: str, index_url: str | None = None) -> RuleSet:
    """The rule set of a release, through the extraction cache (`cache.extract_documents`).

    Once a release's index is made, a note of its key (`keys.release_pointer`) lets the next call read the index
    without opening the release's source: a release's files never change, and the note names the
    code that extracted it."""
    pointer = release_pointer(version, index_url)
    noted = noted_index_key(version, index_url)
    found = stored(noted) if noted is not None else None
    if found is not None:
        return found
    shipped = packed(version) if index_url is None else None
    if shipped is not None:  # inside the package: nothing to download or extract
        index = index_key(*shipped, b"shipped")
        ruleset = indexed(index, lambda: _shipped_ruleset(version, shipped))
        write_pickled(pointer, index)
        return ruleset
    from ...sources.trees import release_tree
    from .cached import cached_documents, cached_key

    tree = release_tree(version, index_url=index_url)
    key = cached_key(tree)  # the documents are not read when their index is there
    if key is None:
        cached = cached_documents(tree)  # a keep-going extraction without problems serves too
        key = cached[2] if cached is not None else None
    fresh = None
    if key is None:
        progress(f"sglang {tree.info.label}: extracting its rules (once, about 20 s; kept in the cache)")
        with Status(f"sglang {tree.info.label}: extracting"):
            fresh = _release_ruleset(tree)
        key = cached_key(tree)
        if key is None:
            return fresh
    # The index of the cached documents, keyed by the extraction's own key.
    index = index_key(key.encode(), b"release")
    ruleset = indexed(index, (lambda: fresh) if fresh is not None else (lambda: _release_ruleset(tree)))
    write_pickled(pointer, index)
    return ruleset


def git_rules(repo: str, rev: str) -> RuleSet:
    """The rule set of a commit of a local git clone, through the extraction cache."""
    from ...sources.trees import git_tree

    with git_tree(repo, rev) as tree:
        return _release_ruleset(tree)


def _shipped_ruleset(version: str, packed_documents: tuple[bytes, bytes]) -> RuleSet:
    rules, flags = unpacked(packed_documents)
    return ruleset_from_documents(rules, flags, environment_of(rules), where=f"shipped sglang {version}")


def _release_ruleset(tree) -> RuleSet:
    """The rule set of a source tree (a release's, a commit's), through the extraction cache."""
    from ...analysis.environ import env_defaults
    from .cached import extract_documents

    rules, flags, _ = extract_documents(tree)
    envs = environment_of(rules)
    return ruleset_from_documents(rules, flags, envs if envs is not None else env_defaults(tree))


def _local_envs(source: Mapping) -> dict[str, EnvVar] | None:
    """environ.py of the source a rules.json came from, if it is here already (never downloaded)."""
    from ...analysis.environ import env_defaults
    from ...sources.trees import git_tree, path_tree, release_tree

    if not source_at_hand(source):
        return None
    try:
        if source.get("kind") == "release":
            return env_defaults(release_tree(str(source["release"])))
        if source.get("kind") == "path":
            return env_defaults(path_tree(str(source["path"])))
        with git_tree(str(source["repo"]), str(source["commit"])) as tree:
            return env_defaults(tree)
    except (SourceError, OSError, KeyError):
        return None
