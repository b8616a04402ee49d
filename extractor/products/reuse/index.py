"""A compact index of a rule set for check: the loaded records pickled once, keyed by their bytes.

Parsing a 20 MB rules.json into formulas takes seconds; `check` of one command needs a fraction of
that. The index is the RuleSet as loaded, written beside the extraction cache under a digest of the
documents' bytes, the env-var defaults and the code that reads them, so a stale or foreign index is
never used: any change gives another key, and an unreadable index is rebuilt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path

from ...core.cache import read_pickled, write_pickled
from ...core.model import And, Formula, Not, Or
from ...logic.carried import found_of_one_value
from ...logic.model_config import ModelFacts
from ...logic.platforms import Platform
from ..check.linter import Baseline, RuleSet, bare_baseline, facts_key
from .keys import index_folder


def stored(key: str, folder: Path | None = None) -> RuleSet | None:
    """The rule set stored under `key`, or None."""
    found = read_pickled((folder or index_folder()) / f"{key}.pickle")
    if not isinstance(found, RuleSet):
        return None
    found.__dict__["index_key"] = key  # where its other parts are kept (`with_baseline_on`)
    return found


def indexed(key: str, build: Callable[[], RuleSet], folder: Path | None = None) -> RuleSet:
    """The rule set stored under `key`, else `build()` stored there first (atomically, best effort:
    a read-only cache only costs the load time)."""
    path = (folder or index_folder()) / f"{key}.pickle"
    found = stored(key, folder)
    if found is not None:
        return found
    ruleset = build()
    _ = ruleset.writes, ruleset.readers, ruleset.catalog  # stored computed: check needs them every time
    # What each term, resolution chain and part of a trigger or of a write's conditions reads: a
    # command evaluated from the bare launch, and the fixes' evaluations, ask it (`Context.inherit`).
    ruleset.read_sets.prepare([*(rule.effective for rule in ruleset.rules),
                               *(part for write in ruleset.resolution
                                 for part in (write.when, *(when for when, _ in write.cases)))])
    _ = ruleset.baseline  # the bare launch evaluated whole: a command is evaluated from it
    shared_of(ruleset)  # what parts kept beside the index refer to, by place
    write_pickled(path, ruleset)
    ruleset.__dict__["index_key"] = key
    return ruleset


def with_baseline_on(ruleset: RuleSet, platform: Platform | None, model: ModelFacts | None,
                     folder: Path | None = None, without_facts: bool = False) -> None:
    """Give an indexed rule set the bare launch evaluated on `platform` with `model`, so a command
    on them is evaluated from it (`linter.Baseline`): read from beside the index, else worked out
    (a full evaluation, once per profile) and kept there. Its formulas are the index's own objects,
    written by their place in the rule set (`shared_objects`). `without_facts`: the bare launch as a
    page's short command line is evaluated (`launch_evaluator` without facts: `explain`, pages)."""
    key = ruleset.__dict__.get("index_key")
    if key is None or (platform is None and model is None and not without_facts):
        return  # not indexed (evaluated in full), or the bare launch is in the index already
    facts = facts_key(platform, model, without_facts)
    if facts in ruleset.baselines_on_facts:
        return
    path = (folder or index_folder()) / f"{key}-on-{facts}.pickle"
    shared = shared_of(ruleset)
    found = read_pickled(path, shared)
    if not isinstance(found, Baseline) or found.evaluator.rules is not ruleset.by_id:
        found = bare_baseline(ruleset, platform, model, without_facts)
        write_pickled(path, found, shared)
    ruleset.baselines_on_facts[facts] = found


def shared_objects(ruleset: RuleSet) -> list[object]:
    """The rule set's objects a part kept beside its index refers to, in an order every process
    finds the same from the same index: its tables, then every formula node of its rules and
    resolution, depth first."""
    found: list[object] = [table for table in (ruleset.by_id, ruleset.writes, ruleset.envs, ruleset.library,
                                               ruleset.catalog, ruleset.catalog.spellings) if table is not None]
    seen = {id(obj) for obj in found}
    roots: list[Formula] = []
    for rule in ruleset.rules:
        roots += [rule.condition, *([rule.trigger] if rule.trigger is not None else []),
                  *(when for when, _ in rule.assigns)]
    for write in ruleset.resolution:
        roots += [write.when, *(when for when, _ in write.cases)]
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        if isinstance(node, Not):
            stack.append(node.arg)
        elif isinstance(node, (And, Or)):
            stack.extend(reversed(node.args))
    return found


# ---- what launches from a bare one found, by model path ----------------------------------------------
# Deciding a command from a bare launch works out each atom that reads a value the command changes
# (`Context.carry`); a model path is read by about 1,500 atoms and chains of 0.5.23 (`get_config(...)`
# and the like), which come out as on the bare launch for any Hub id, but only working them out says
# so. What a launch found of those that read no other changed value is kept beside the index by the
# model path: the next check naming it (an editor, a hook, CI over the same files) reads it back.


def load_model_states(ruleset: RuleSet, model_paths: Iterable[object], folder: Path | None = None) -> dict:
    """Add to each bare launch of the rule set what earlier checks kept of `model_paths`; returns what
    was read (`keep_model_states` writes only what is new). A local path is never kept: its atoms read
    the folder, which may change."""
    key = ruleset.__dict__.get("index_key")
    loaded: dict[tuple[str, str], int] = {}
    if key is None:
        return loaded
    kept = [path for path in dict.fromkeys(model_paths) if _keepable(path)]
    for facts, base in _bare_launches(ruleset):
        for model_path in kept:
            path = _states_path(folder, key, facts, model_path)
            found = read_pickled(path, shared_of(ruleset)) if path.is_file() else None
            if isinstance(found, dict):
                base.states.update(found)
            loaded[(facts, model_path)] = len(found) if isinstance(found, dict) else 0
    return loaded


def keep_model_states(ruleset: RuleSet, loaded: dict, folder: Path | None = None) -> None:
    """Write, for each model path `load_model_states` was given, what the checks since found of the
    atoms and chains that read it and no other changed value, when that is more than was read."""
    key = ruleset.__dict__.get("index_key")
    if key is None:
        return
    bases = dict(_bare_launches(ruleset))
    for (facts, model_path), count in loaded.items():
        found = found_of_one_value(bases[facts].states, "model_path", model_path)
        if len(found) > count:
            write_pickled(_states_path(folder, key, facts, model_path), found, shared_of(ruleset))


def _bare_launches(ruleset: RuleSet) -> list[tuple[str, Baseline]]:
    bare = ruleset.__dict__.get("baseline")
    return [*((("bare", bare),) if isinstance(bare, Baseline) else ()), *ruleset.baselines_on_facts.items()]


def _keepable(model_path: object) -> bool:
    return isinstance(model_path, str) and bool(model_path) and not Path(model_path).expanduser().exists()


def _states_path(folder: Path | None, key: str, facts: str, model_path: str) -> Path:
    digest = hashlib.sha256(f"{facts}\n{model_path}".encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return (folder or index_folder()) / f"{key}-states-{digest}.pickle"


def shared_of(ruleset: RuleSet) -> list[object]:
    """`shared_objects`, kept in the index (a list of its objects costs little to read back)."""
    found = ruleset.__dict__.get("shared")
    if found is None:
        found = ruleset.__dict__["shared"] = shared_objects(ruleset)
    return found
