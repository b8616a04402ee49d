"""Walks kept across extractions (`analysis.reuse`): an extraction that reuses an earlier one's walks
writes the same bytes as one that walks everything, on a git history of the fixture package and on
real releases; the document cache sees a change in a module only a call leads to."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from extractor.core.serialize import dumps
from extractor.products.reuse.cached import extract_documents
from extractor.products.extraction.extraction import extract, no_collections
from extractor.products.extraction.output import flags_document, rules_document
from extractor.sources.trees import git_tree, path_tree, release_tree

FIXTURE = Path(__file__).parent / "fixtures" / "split_layout" / "sglang"
HOOK = "sglang/srt/arg_groups/speculative_hook.py"
KV_HOOK = "sglang/srt/arg_groups/kv_cache_hook.py"
FOLLOWED = "sglang/srt/speculative/spec_info.py"  # outside the layout's files: a call leads there

# Each commit of the fixture history: (what, path, old text, new text), applied to the one before.
CHANGES = [
    ("a message", HOOK, 'raise ValueError("UNO requires --uno-path.")', 'raise ValueError("UNO needs --uno-path.")'),
    ("a condition", HOOK, "if tokens < 2:", "if tokens < 3:"),
    ("only a followed module", FOLLOWED, "        if name is None:\n            return cls.NONE\n",
     "        if name is None:\n            return cls.NONE\n        if name.upper() not in cls.__members__:\n"
     "            raise ValueError(f\"Unknown speculative algorithm {name}.\")\n"),
    ("lines above every function", KV_HOOK, "from typing import Any\n", "from typing import Any\n\n# moved down\n\n"),
    ("a guard added", KV_HOOK, "def handle_cache_compatibility(server_args: Any) -> None:\n",
     "def handle_cache_compatibility(server_args: Any) -> None:\n"
     "    if resolving_view(server_args).dcp_size > 64:\n        raise ValueError(\"At most 64.\")\n"),
    # A method of ServerArgs named like a field: `cfg.num_draft_tokens` in a hook is no field any more,
    # though no file a hook's walk looked at changed.
    ("a ServerArgs method", "sglang/srt/server_args.py", "    def resolve_once(self) -> None:\n",
     "    def num_draft_tokens(self):\n        return 4\n\n    def resolve_once(self) -> None:\n"),
]


def documents(ex) -> str:
    with no_collections():
        return dumps(rules_document(ex)) + dumps(flags_document(ex))


def git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[str]]:
    """A git repository of the fixture package, a commit per change."""
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q")
    shutil.copytree(FIXTURE, repo / "python" / "sglang")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    commits = [git(repo, "rev-parse", "HEAD")]
    for what, path, old, new in CHANGES:
        target = repo / "python" / path
        text = target.read_text(encoding="utf-8")
        assert old in text, what
        target.write_text(text.replace(old, new, 1), encoding="utf-8")
        git(repo, "commit", "-q", "-am", what)
        commits.append(git(repo, "rev-parse", "HEAD"))
    return repo, commits


def test_every_commit_extracts_the_same_with_the_walks_of_the_one_before(history) -> None:
    repo, commits = history
    before = None
    for commit in commits:
        cold = extract(git_tree(repo, commit), keep=True)
        assert cold.reused == (0, cold.reused[1]) and cold.reused[1] > 0
        if before is not None:
            warm = extract(git_tree(repo, commit), store=before.kept)
            assert documents(warm) == documents(cold), commit
            reused, made = warm.reused
            # Most walks come from the commit before; after the ServerArgs method, only those that
            # read `num_draft_tokens` through the record are walked again (with the rest of server_args.py).
            assert reused > made > 0, (commit, warm.reused)
            before = warm
        else:
            before = cold


def test_the_change_each_commit_makes_is_in_its_rules(history) -> None:
    repo, commits = history
    kept = extract(git_tree(repo, commits[0]), keep=True).kept
    messages, runs = [], []
    for commit in commits[1:]:
        ex = extract(git_tree(repo, commit), store=kept)
        kept = ex.kept
        messages.append({r.message for r in ex.rules})
        runs.append(ex.run_reused)
    # A reworded message leaves the run as it was; a changed condition, a guard added or lines moved do not.
    assert runs[0] is True and runs[1] is False and runs[4] is False
    assert "UNO needs --uno-path." in messages[0] and "UNO requires --uno-path." not in messages[0]
    assert "Unknown speculative algorithm {name}." in messages[2]
    assert "At most 64." in messages[4]


def test_cached_documents_see_a_change_in_a_module_only_a_call_leads_to(history, tmp_path) -> None:
    """The third commit changes nothing but `speculative/spec_info.py`, which the layout does not read:
    its cached documents must not be the second commit's."""
    repo, commits = history
    second, third = commits[2], commits[3]
    old_rules, _, old_key = extract_documents(git_tree(repo, second), folder=tmp_path)
    new_rules, _, new_key = extract_documents(git_tree(repo, third), folder=tmp_path)
    assert old_key != new_key
    messages = {r["message"] for r in new_rules["rules"]}
    assert "Unknown speculative algorithm {name}." in messages
    assert "Unknown speculative algorithm {name}." not in {r["message"] for r in old_rules["rules"]}
    again, _, key = extract_documents(git_tree(repo, second), folder=tmp_path)  # both stay cached
    assert key == old_key and again["rules"] == old_rules["rules"]


def test_walks_kept_on_disk_are_reused_by_the_next_commit(history, tmp_path) -> None:
    repo, commits = history
    cold = [extract_documents(git_tree(repo, c), folder=tmp_path / "cold" / c, prune=False) for c in commits]
    for commit, (rules, flags, _) in zip(commits, cold):
        warm_rules, warm_flags, _ = extract_documents(git_tree(repo, commit), folder=tmp_path / "warm", prune=False)
        assert dumps(warm_rules) == dumps(rules) and dumps(warm_flags) == dumps(flags)
    # A bundle per set of layout files: the commit that changes only a followed module shares the
    # layout files of the one before, and its bundle replaces that one's.
    assert len(list((tmp_path / "warm").glob("walks-*.pickle"))) == len(commits) - 1


@pytest.mark.parametrize("before, after", [("0.5.22", "0.5.23"), ("0.5.17", "0.5.18")])
def test_consecutive_releases_extract_the_same_with_the_walks_of_the_one_before(before, after) -> None:
    kept = extract(release_tree(before), keep=True).kept
    warm = extract(release_tree(after), store=kept)
    assert documents(warm) == documents(extract(release_tree(after)))
    assert warm.reused[0] > 0


@pytest.mark.parametrize("version, path, old, new, same_run", [
    # 0.5.23: the split layout; one message of one hook changed, as `make bench` does.
    ("0.5.23", "sglang/srt/arg_groups/attention_hook.py", 'raise ValueError("', 'raise ValueError("Changed: ', True),
    # 0.5.10: one file; a line added to `__post_init__` moves every method below it: their walks are
    # kept and moved with them, the run (which reads lines) is composed again.
    ("0.5.10", "sglang/srt/server_args.py", "    def __post_init__(self):\n",
     "    def __post_init__(self):\n        # one more line\n", False),
])
def test_a_real_release_changed_in_one_place_extracts_the_same_with_its_walks(version, path, old, new, same_run,
                                                                               tmp_path) -> None:
    release = release_tree(version)
    for name in release.paths():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(release.read_bytes(name))
    kept = extract(path_tree(tmp_path), keep=True).kept
    target = tmp_path / path
    text = target.read_text(encoding="utf-8")
    assert old in text
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    cold = extract(path_tree(tmp_path))
    warm = extract(path_tree(tmp_path), store=kept)
    assert documents(warm) == documents(cold)
    reused, walked = warm.reused
    assert reused > 10 * walked  # nearly every walk reused
    assert warm.run_reused is same_run  # a message leaves the run as it was; moved lines do not


def test_relations_kept_rank_the_same_under_other_ids(real_extraction) -> None:
    """The kept pair weights are reused when only ids (and messages) changed; ties are broken by id,
    so every rule's top list is ranked again, and must be what a fresh computation gives."""
    import random
    from dataclasses import replace

    from extractor.products.extraction.relations import relations

    rules = [replace(r, related=()) for r in real_extraction("0.5.18").rules]
    memo: dict = {}
    first = relations(rules, memo)
    assert first == relations(rules)
    # New ids in another order, but in the same order among rules of one function on one line (that
    # order decides their own tests: the weights are made again when it changes).
    shuffled = random.Random(7).sample([r.id for r in rules], len(rules))
    renamed = {r.id: new for r, new in zip(rules, shuffled)}
    lines: dict[tuple, list[str]] = {}
    for r in rules:
        lines.setdefault((r.location.file, r.function, r.location.line), []).append(r.id)
    for members in lines.values():
        renamed.update(zip(sorted(members), sorted(renamed[m] for m in members)))
    other = [replace(r, id=renamed[r.id], affected_by=tuple(sorted(renamed.get(a, a) for a in r.affected_by)))
             for r in rules]
    kept = memo["relations"]
    again = relations(other, memo)
    assert memo["relations"] is kept  # reused, not made again
    assert again == relations(other) and again != first  # ranked anew: ties are broken by id
    changed = [replace(r, condition=r.trigger) if r.kind.value == "raise" else r for r in rules]
    assert relations(changed, memo) == relations(changed) and memo["relations"] is not kept
    kept = memo["relations"]
    repeated = [*changed, changed[0]]  # no extraction repeats an id; a rule set given may
    assert relations(repeated, memo) == relations(repeated) and memo["relations"] is kept


def _new_bundle(folder: Path, before: set[Path]) -> Path:
    (found,) = set(folder.glob("walks-*.pickle")) - before
    return found


def test_a_bundle_that_reused_another_keeps_only_what_changed(history, tmp_path, monkeypatch) -> None:
    """Each commit's bundle is a delta of the bundle its extraction reused: read back through its chain,
    it is the store the extraction kept. A chain with a link gone is no store (the next extraction
    only loses its reuse), and one at MAX_CHAIN links is written whole."""
    from extractor.analysis.reuse import MemoryStore
    from extractor.products.reuse import kept_walks
    from extractor.core.cache import read_pickled

    repo, commits = history
    folder = tmp_path / "cache"
    bundles, stores = [], []
    for commit in commits[:3]:
        before = set(folder.glob("walks-*.pickle"))
        stores.append(kept_walks.extract_reusing(git_tree(repo, commit), folder=folder).kept)
        bundles.append(_new_bundle(folder, before))
    assert isinstance(read_pickled(bundles[0]), MemoryStore)
    for bundle, store in zip(bundles[1:], stores[1:]):
        delta = read_pickled(bundle)
        assert isinstance(delta, kept_walks._Delta)
        assert 0 < len(delta.walks) <= len(store.walks) * kept_walks.DELTA_SHARE  # the walks of the changed file
        found = kept_walks.read_bundle(folder, bundle.name)
        assert found is not None and found.chain[0] == bundle.name
        assert (found.store.walks, found.store.facts, found.store.later, found.store.outlines) == \
               (store.walks, store.facts, store.later, store.outlines)
    assert kept_walks.read_bundle(folder, bundles[2].name).chain == tuple(b.name for b in reversed(bundles))

    # At MAX_CHAIN links, the next bundle is whole again.
    monkeypatch.setattr(kept_walks, "MAX_CHAIN", 3)
    before = set(folder.glob("walks-*.pickle"))
    kept_walks.extract_reusing(git_tree(repo, commits[4]), folder=folder)
    assert isinstance(read_pickled(_new_bundle(folder, before)), MemoryStore)

    # The full bundle under the deltas gone: they read as nothing; the next nearest bundle that reads
    # (the whole one just written) is reused instead, and extracting gives the same.
    bundles[0].unlink()
    assert kept_walks.read_bundle(folder, bundles[2].name) is None
    for name in (bundles[1].name, bundles[2].name):
        (folder / name).with_suffix(".json").touch()  # the most recently used: the nearest candidates
    warm = kept_walks.extract_reusing(git_tree(repo, commits[3]), folder=folder)
    assert documents(warm) == documents(extract(git_tree(repo, commits[3])))
    assert warm.reused[0] > warm.reused[1]


def test_a_reused_run_is_kept_anew_when_it_composes_more_triggers(history) -> None:
    """`Run.apply` adds the triggers of rules the kept run had not composed: the run read from a store
    stays as it was (a bundle's delta tells what changed by identity), the extraction keeps a new one."""
    repo, commits = history
    first = extract(git_tree(repo, commits[0]), keep=True)
    kept_run = first.kept.later["run"]
    triggers = dict(kept_run.triggers)
    kept_run.triggers.clear()  # as if the rules had been composed by none of them
    warm = extract(git_tree(repo, commits[0]), store=first.kept)
    assert warm.run_reused
    assert kept_run.triggers == {} and warm.kept.later["run"] is not kept_run
    assert warm.kept.later["run"].triggers == triggers


def test_objects_made_long_lived_are_not_scanned_as_young_ones() -> None:
    import gc

    from extractor.core.collector import long_lived

    gc.collect()
    with long_lived():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]
    assert gc.isenabled() and gc.get_count()[0] < 10 and gc.get_freeze_count() == 0
    young = {id(o) for o in gc.get_objects(generation=0)} | {id(o) for o in gc.get_objects(generation=1)}
    assert not any(id(item) in young for item in made) and id(made) not in young
    assert any(o is made for o in gc.get_objects(generation=2))
