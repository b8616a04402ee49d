"""Rule sets to check against: from a rules.json, a fresh extraction, or a release through the cache.

flags.json is read beside rules.json; env-var defaults come from the source when it is at hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..analysis.environ import env_defaults
from ..core.errors import SourceError
from ..core.serialize import read_rule_documents, records_of
from ..logic.environment import EnvVar
from .linter import RuleSet


def load_rules(path: str | Path) -> RuleSet:
    """rules.json with flags.json from the same folder; env defaults from the source when it is at hand."""
    rules, flags = read_rule_documents(path)
    if flags is None:
        rules_path = Path(path) / "rules.json" if Path(path).is_dir() else Path(path)
        raise FileNotFoundError(f"{rules_path.with_name('flags.json')}: no flag catalog beside {rules_path.name}")
    source = rules.get("source")
    envs = _local_envs(source) if isinstance(source, dict) else None
    return ruleset_from_documents(rules, flags, envs, where=str(path))


def ruleset_from_documents(rules: Mapping, flags: Mapping, envs: Mapping[str, EnvVar] | None = None,
                           where: str = "rules.json") -> RuleSet:
    records, flag_records = records_of(dict(rules), dict(flags), where)
    source = rules.get("source", {})
    return RuleSet(rules=records, flags=flag_records, source=source if isinstance(source, Mapping) else {}, envs=envs)


def ruleset_of(ex, tree=None) -> RuleSet:
    """The rule set of a fresh extraction; env-var defaults read from `tree` when given."""
    return RuleSet(ex.rules, ex.flags, ex.info.as_dict(), env_defaults(tree) if tree is not None else None)


def release_rules(version: str, index_url: str | None = None) -> RuleSet:
    """The rule set of a release, through the extraction cache (`cache.extract_documents`)."""
    from ..sources.trees import release_tree
    from .cache import extract_documents

    tree = release_tree(version, index_url=index_url)
    rules, flags, _ = extract_documents(tree)
    return ruleset_from_documents(rules, flags, env_defaults(tree))


def _local_envs(source: Mapping) -> dict[str, EnvVar] | None:
    """environ.py of the source a rules.json came from, if it is here already (never downloaded)."""
    from ..sources.trees import cached_releases, git_tree, path_tree, release_tree

    try:
        if source.get("kind") == "release" and source.get("release") in cached_releases():
            return env_defaults(release_tree(str(source["release"])))
        if source.get("kind") == "path" and source.get("path") and Path(str(source["path"])).exists():
            return env_defaults(path_tree(str(source["path"])))
        if source.get("kind") == "git" and source.get("repo") and Path(str(source["repo"])).exists():
            return env_defaults(git_tree(str(source["repo"]), str(source["commit"])))
    except (SourceError, OSError):
        pass
    return None
