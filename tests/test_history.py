"""Tests for extractor.history: sources to follow, cached parallel runs, lineages and the timeline."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest
from packaging.version import Version

from extractor import cli
from extractor.products.history import history
from extractor.products.history.diff import find_changes
from extractor.products.extraction.output import validate
from extractor.products.history.sides import Snapshot
from extractor.sources import trees as sources
from extractor.sources.trees import SourceError

from .test_diff import history_repo  # noqa: F401  (the git fixture, shared)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request) -> Path:
    if "network" in request.keywords:
        return Path(os.environ.get("SGLANG_CONSTRAINTS_CACHE") or sources.cache_root())
    cache = tmp_path / "cache"
    monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE", str(cache))
    return cache


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def by_message(document: dict) -> dict[str, dict]:
    return {entry["message"]: entry for entry in document["rules"]}


def test_git_history(history_repo, tmp_path: Path, capsys: pytest.CaptureFixture,  # noqa: F811
                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo, commits = history_repo
    out = tmp_path / "history"
    code, text, err = run(capsys, "history", "--git", str(repo), "--revs", f"{commits[0]}..{commits[-1]}",
                          "-o", str(out), "--jobs", "1")
    assert code == 0, err
    document = json.loads((out / "history.json").read_text())
    validate(document, "history.schema.json")
    labels = [c[:12] for c in commits]
    # The README-only commit touches no read file: it is not a source.
    assert [s["label"] for s in document["sources"]] == [labels[i] for i in (0, 1, 3, 4, 5, 6)]
    assert [(s["from"], s["to"]) for s in document["steps"]] == list(zip(
        [labels[i] for i in (0, 1, 3, 4, 5)], [labels[i] for i in (1, 3, 4, 5, 6)]))

    rules = by_message(document)
    added = rules["At most eight ranks in total."]
    assert (added["first_seen"], added["last_seen"], added["present_in"]) == (labels[1], labels[6], 5)
    reworded = rules["Decode instances support at most 4 tensor-parallel ranks."]
    assert reworded["first_seen"] == labels[0] and len(reworded["ids"]) == 2 and reworded["ids"][-1] == reworded["id"]
    assert [(c["kind"], c["from"], c["to"]) for c in reworded["changes"]] == [("message-changed", labels[1], labels[3])]
    moved = rules["Data parallelism cannot be combined with disaggregation."]
    assert [(c["kind"], c["old"]["file"], c["new"]["file"]) for c in moved["changes"]] == [
        ("moved", "sglang/srt/server_args.py", "sglang/srt/arg_groups/parallel.py")]
    assert [c["kind"] for c in rules["page-size must be positive"]["changes"]] == ["tightened"]
    assert [c["kind"] for c in rules["Offloading needs a storage backend."]["changes"]] == ["relaxed"]
    assert len(document["rules"]) == 5  # one lineage per guard, the reworded one included

    timeline = (out / "timeline.md").read_text()
    assert "do not edit" in timeline
    rows = [line for line in timeline.splitlines() if line.startswith("| ") and not line.startswith("| source")]
    assert [row.split(" | ")[0].lstrip("| ") for row in rows] == [s["label"] for s in document["sources"]]
    assert "6 sources, 5 steps, 5 rule lineages" in text

    # Second run: everything comes from the cache, nothing is extracted or diffed again.
    monkeypatch.setattr("extractor.products.extraction.extraction.extract", fail)
    monkeypatch.setattr(history, "find_changes", fail)
    monkeypatch.setattr(history, "load_cached", fail)  # nor are the documents read: outlines suffice
    again = tmp_path / "again"
    code, _, err = run(capsys, "history", "--git", str(repo), "--revs", f"{commits[0]}..{commits[-1]}",
                       "-o", str(again), "--jobs", "1")
    assert code == 0, err
    assert (again / "history.json").read_bytes() == (out / "history.json").read_bytes()


def test_parallel_run_gives_the_same_history(history_repo, tmp_path: Path) -> None:  # noqa: F811
    repo, commits = history_repo
    specs = history.git_specs(str(repo), f"{commits[0]}..{commits[-1]}")
    serial = history.history_document(history.run_history(specs, jobs=1, use_cache=False))
    parallel = history.history_document(history.run_history(specs, jobs=2, use_cache=False))
    assert parallel == serial
    assert not any(Path(tmp_path / "cache" / "extractions").glob("*.json"))  # --no-cache writes nothing


def fail(*args, **kwargs):
    raise AssertionError("should not be called")


def test_a_serial_run_diffs_what_it_just_extracted(history_repo, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    repo, commits = history_repo
    specs = history.git_specs(str(repo), f"{commits[0]}..{commits[-1]}")
    monkeypatch.setattr(history, "load_cached", fail)  # no document is read back from the cache
    result = history.run_history(specs, jobs=1)
    assert len(result.steps) == len(specs) - 1 and not history._RECENT  # and none is kept after the run


def test_outlines_and_steps_are_rebuilt_from_cached_documents(history_repo, tmp_path: Path,  # noqa: F811
                                                               capsys: pytest.CaptureFixture,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo, commits = history_repo
    argv = ["history", "--git", str(repo), "--revs", f"{commits[0]}..{commits[-1]}", "--jobs", "1"]
    assert run(capsys, *argv, "-o", str(tmp_path / "first"))[0] == 0
    # A cache written before outlines existed (or by other history code) holds only the documents.
    extractions = tmp_path / "cache" / "extractions"
    dropped = [*extractions.glob("outline-*.json"), *extractions.glob("step-*.json")]
    assert len(dropped) == 2 * len(commits) - 3  # 6 sources, 5 steps (the README commit is not a source)
    for path in dropped:
        path.unlink()
    monkeypatch.setattr("extractor.products.extraction.extraction.extract", fail)
    assert run(capsys, *argv, "-o", str(tmp_path / "again"))[0] == 0
    assert (tmp_path / "again" / "history.json").read_bytes() == (tmp_path / "first" / "history.json").read_bytes()
    assert len([*extractions.glob("outline-*.json"), *extractions.glob("step-*.json")]) == len(dropped)


def test_extraction_cache_can_live_elsewhere(history_repo, tmp_path: Path,  # noqa: F811
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    repo, commits = history_repo
    monkeypatch.setenv("SGLANG_CONSTRAINTS_EXTRACTION_CACHE", str(tmp_path / "elsewhere"))
    history.run_history(history.git_specs(str(repo), f"{commits[0]}..{commits[1]}"), jobs=1)
    assert len(list((tmp_path / "elsewhere").glob("outline-*.json"))) == 2
    assert not (tmp_path / "cache" / "extractions").exists()


def test_steps_keep_what_the_history_shows(history_repo) -> None:  # noqa: F811
    repo, commits = history_repo
    result = history.run_history(history.git_specs(str(repo), f"{commits[0]}..{commits[-1]}"), jobs=1)
    full = []  # the same steps with every change whole, as `diff` reports them
    for old, new, step in result.steps:
        before, after = (Snapshot.from_documents(*history.load_cached(s.key)) for s in (old, new))
        full.append((old, new, {**step, "changes": [c.as_dict() for c in find_changes(before, after)]}))
    assert any(len(json.dumps(a)) < len(json.dumps(b)) for (_, _, a), (_, _, b) in zip(result.steps, full))
    assert history.history_document(history.History(result.sources, full)) == history.history_document(result)


def simulate(count: int, workers: int, broken: frozenset[int] = frozenset()) -> list[list[tuple]]:
    """Run a plan with `workers` workers that finish in the order they started; what each one did."""
    plan = history._Plan(count)
    done_by: list[list[tuple]] = [[] for _ in range(workers)]
    running = [(worker, work) for worker in range(workers) if (work := plan.next(None)) is not None]
    while running:
        worker, (what, old, new, way) = running.pop(0)
        done_by[worker].append((what, old, new) if what == "diff" else (what, new))
        if what == "extract":
            spec = history.Spec("path", str(new))
            plan.sources[new] = history.Extracted(spec, error="broken") if new in broken else \
                history.Extracted(spec, key=str(new))
        else:
            plan.steps[old, new] = {}
        if (work := plan.next(new if way > 0 else old, way)) is not None:
            running.append((worker, work))
        for idle in set(range(workers)) - {w for w, _ in running}:
            if (work := plan.next(None)) is not None:
                running.append((idle, work))
    return done_by


def test_plan_one_worker_diffs_each_source_right_after_extracting_it() -> None:
    assert simulate(4, 1) == [[("extract", 0), ("extract", 1), ("diff", 0, 1), ("extract", 2), ("diff", 1, 2),
                               ("extract", 3), ("diff", 2, 3)]]
    # A source that fails is skipped: its neighbours make one step.
    assert simulate(3, 1, frozenset({1})) == [[("extract", 0), ("extract", 1), ("extract", 2), ("diff", 0, 2)]]


def test_plan_workers_follow_runs_from_both_ends_and_meet_once() -> None:
    first, second = simulate(6, 2)
    assert [w for w in first if w[0] == "extract"] == [("extract", i) for i in (0, 1, 2)]
    assert [w for w in second if w[0] == "extract"] == [("extract", i) for i in (5, 4, 3)]
    steps = [w[1:] for w in first + second if w[0] == "diff"]
    assert sorted(steps) == [(i, i + 1) for i in range(5)]
    # Every step is diffed by a worker that extracted one of its sources; only where runs meet not both.
    for mine in (first, second):
        extracted = {w[1] for w in mine if w[0] == "extract"}
        assert all(w[1] in extracted or w[2] in extracted for w in mine if w[0] == "diff")
    assert sum(not {w[1], w[2]} <= {v[1] for v in mine if v[0] == "extract"}
               for mine in (first, second) for w in mine if w[0] == "diff") == 1
    # More workers: each further one starts in the middle of the longest run nobody has started.
    assert [mine[0] for mine in simulate(9, 3)] == [("extract", 0), ("extract", 8), ("extract", 4)]


def test_history_keeps_going_past_a_broken_source(tmp_path: Path) -> None:
    specs = [history.Spec("path", str(tmp_path / "missing")), history.Spec("path", str(tmp_path / "also-missing"))]
    result = history.run_history(specs, jobs=1)
    document = history.history_document(result)
    assert not document["sources"] and [e["label"] for e in document["errors"]] == [str(tmp_path / "missing"),
                                                                                  str(tmp_path / "also-missing")]


def test_usage_errors(history_repo, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:  # noqa: F811
    repo, commits = history_repo
    assert run(capsys, "history", "--revs", "a..b")[0] == 2
    assert run(capsys, "history", "--git", str(repo), "--releases", "0.5.1")[0] == 2
    code, _, err = run(capsys, "history", "--git", str(repo), "--revs", commits[0])
    assert code == 2 and "A..B" in err
    code, _, err = run(capsys, "history", "--releases", "0.5.x,0.5.2")
    assert code == 2 and "not a valid version" in err
    assert run(capsys, "history", "--releases", "0.5.1", "--jobs", "0")[0] == 2


def test_release_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = ["0.5.9", "0.5.10", "0.5.10.post1", "0.5.11", "0.5.12", "0.5.13"]
    monkeypatch.setattr(history, "release_versions", lambda index_url=None, pre=False: versions)
    values = lambda specs: [s.value for s in specs]  # noqa: E731
    assert values(history.release_specs("0.5.10..0.5.12")) == ["0.5.10", "0.5.10.post1", "0.5.11", "0.5.12"]
    assert values(history.release_specs("0.5.12..")) == ["0.5.12", "0.5.13"]
    assert values(history.release_specs("0.5.11, 0.5.9")) == ["0.5.11", "0.5.9"]
    assert values(history.release_specs(None, all_releases=True)) == versions
    with pytest.raises(SourceError, match="no release in this range"):
        history.release_specs("0.6.0..0.7.0")


def test_release_versions_skip_yanked_and_pre_releases(monkeypatch: pytest.MonkeyPatch) -> None:
    def dist(version: str, yanked: bool = False) -> sources.Dist:
        return sources.Dist(f"sglang-{version}.tar.gz", "u", "0" * 64, 1, yanked, Version(version))

    files = [dist("0.5.2"), dist("0.5.10"), dist("0.5.10"), dist("0.5.11rc1"), dist("0.5.3", yanked=True)]
    monkeypatch.setattr(sources, "index_files", lambda index, package, release: files)
    assert sources.release_versions() == ["0.5.2", "0.5.10"]
    assert sources.release_versions(pre=True) == ["0.5.2", "0.5.10", "0.5.11rc1"]


def test_progress_only_on_a_terminal() -> None:
    quiet = io.StringIO()
    progress = history.Progress(2, quiet)
    progress.step("one")
    progress.close()
    assert quiet.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    loud = Terminal()
    progress = history.Progress(2, loud)
    progress.step("extracted 0.5.10")
    progress.close()
    assert "1/2 extracted 0.5.10" in loud.getvalue() and loud.getvalue().endswith("\r")  # the line cleared


# Full range by hand: SGLANG_CONSTRAINTS_FULL_HISTORY=1 (about 18 releases; minutes on a cold cache).
RANGE = "0.5.10..0.5.23" if os.environ.get("SGLANG_CONSTRAINTS_FULL_HISTORY") else "0.5.17..0.5.19"


@pytest.mark.network
def test_release_history(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, text, err = run(capsys, "history", "--releases", RANGE, "-o", str(tmp_path))
    assert code == 0, err
    document = json.loads((tmp_path / "history.json").read_text())
    labels = [s["label"] for s in document["sources"]]
    low, high = (Version(v) for v in RANGE.split(".."))
    assert labels[0] == str(low) and labels[-1] == str(high)
    assert [Version(v) for v in labels] == sorted(Version(v) for v in labels)
    order = {label: i for i, label in enumerate(labels)}
    last_ids = set()
    for entry in document["rules"]:
        assert order[entry["first_seen"]] <= order[entry["last_seen"]]
        assert entry["present_in"] <= order[entry["last_seen"]] - order[entry["first_seen"]] + 1
        if entry["last_seen"] == labels[-1]:
            last_ids.add(entry["id"])
    assert len(last_ids) == document["sources"][-1]["rules"]
    refactor = next(s for s in document["steps"] if s["to"] == "0.5.19")
    assert refactor["summary"]["moved"] > refactor["summary"]["added"] + refactor["summary"]["removed"]
    assert (tmp_path / "timeline.md").read_text().count("\n| 0.5.") == len(labels)
    # Each release dated with the day PyPI published it (the shipped history records it).
    assert "\n| 0.5.19 | 2026-" in (tmp_path / "timeline.md").read_text()


def test_the_cache_keeps_the_most_recently_used_files_within_its_limit(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from extractor.core.cache import prune_cache
    from extractor.products.reuse.cached import load_cached

    for age, key in enumerate(["new", "mid", "old"]):  # 0.4 MiB per entry, older by a day each
        for name in (f"{key}.json", f"{key}.flags.json"):
            (tmp_path / name).write_text(json.dumps({"rules": [], "flags": [], "pad": "x" * 200_000}))
            os.utime(tmp_path / name, (time.time() - age * 86400,) * 2)
    assert load_cached("old", tmp_path) is not None  # a hit: "old" is now the most recently used
    monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE_LIMIT_MB", "0.9")
    assert prune_cache(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.flags.json", "new.json", "old.flags.json", "old.json"]
    assert prune_cache(tmp_path) == 0  # within the limit now
    assert prune_cache(tmp_path, limit_mb=0) == 4


def test_check_indexes_are_pruned_with_the_cache(tmp_path: Path) -> None:
    from extractor.core.cache import prune_cache

    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "stale.pickle").write_bytes(b"x" * 300_000)
    os.utime(tmp_path / "index" / "stale.pickle", (time.time() - 86400,) * 2)
    (tmp_path / "fresh.json").write_text("{}" + " " * 300_000)
    assert prune_cache(tmp_path, limit_mb=0.4) == 1
    assert not (tmp_path / "index" / "stale.pickle").exists() and (tmp_path / "fresh.json").exists()


def test_diff_reads_what_history_extracted(history_repo, tmp_path: Path, capsys: pytest.CaptureFixture,  # noqa: F811
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`diff` of two commits a `history` run extracted (keep-going, no problem) extracts nothing again,
    and reports what fresh extractions give."""
    repo, commits = history_repo
    code, _, err = run(capsys, "history", "--git", str(repo), "--revs", f"{commits[0]}..{commits[-1]}",
                       "-o", str(tmp_path / "history"), "--jobs", "1")
    assert code == 0, err
    argv = ("diff", "--git", str(repo), commits[0], commits[-1], "--format", "json")
    expected = run(capsys, *argv, "--no-cache")
    from extractor.products.extraction import extraction

    def extracted_again(*args, **kwargs):
        raise AssertionError("extracted again")

    monkeypatch.setattr(extraction, "extract", extracted_again)
    for _ in range(2):  # from the history's documents, then from the snapshots
        assert run(capsys, *argv) == expected
