"""History of the rules across releases or commits: parallel cached extractions, changes step by step.

Each source is extracted in a worker process and cached by the content of the files it reads
(`cache.extract_documents`), with a small outline of what the history needs of it; each step between
consecutive sources is diffed once, mostly in the worker that holds both sources, and cached by the
two extraction keys. So a second run only hashes the inputs and reads outlines and steps, never the
documents. The result, `history.json`, follows every rule through the steps (its first and last
source, and what changed when); `timeline.md` counts rules and changes per source.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import hashlib
import json
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ...core.errors import LayoutError, ParseError, SourceError
from ...core.places import cached_releases
from ...core.progress import Status
from ...core.serialize import SCHEMA_VERSION, dumps
from ...logic.releases import release_date
from ...sources.layout import ARG_GROUPS, SERVER_ARGS, find_layout
from ...sources.trees import git_log, git_tree, release_versions
from ...core.cache import code_fingerprint, extraction_cache, prune_cache, read_pickled, start_process, write_pickled
from ..reuse.cached import cache_paths, extract_documents, found_key, load_cached
from .diff import counts, find_changes, known_memo, memo_path
from .sides import Snapshot, Spec, open_spec, snapshot_path

HISTORY_SCHEMA_ID = "https://github.com/sglang-constraints/schemas/history.schema.json"


# ---- which sources -----------------------------------------------------------------------------------


def release_specs(text: str | None, *, all_releases: bool = False, pre: bool = False,
                  index_url: str | None = None) -> list[Spec]:
    """`A..B` (the index's versions between the bounds, inclusive), `A,B,C`, or every release."""
    if all_releases:
        versions = release_versions(index_url=index_url, pre=pre)
    elif text and ".." in text:
        low, _, high = text.partition("..")
        bounds = [_version(low or "0"), _version(high)] if high else [_version(low), None]
        versions = [v for v in release_versions(index_url=index_url, pre=pre)
                    if Version(v) >= bounds[0] and (bounds[1] is None or Version(v) <= bounds[1])]
        if not versions:
            raise SourceError(f"{text}: no release in this range on the package index")
    else:
        versions = [str(_version(v.strip())) for v in (text or "").split(",") if v.strip()]
        if not versions:
            raise SourceError("no release given")
    return [Spec("release", v, index_url=index_url) for v in versions]


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise SourceError(f"{text}: not a valid version") from None


def git_specs(repo: str, revs: str, include: Sequence[str] | None = None) -> list[Spec]:
    """The first commit of `A..B`, then every later one that touches the files the extractor reads."""
    start, dots, end = revs.partition("..")
    if not dots or not start or not end:
        raise SourceError(f"{revs}: give a range A..B")
    with git_tree(repo, end) as tip, git_tree(repo, start) as first:
        prefix = tip.info.prefix
        if include:
            paths = [f":(glob){prefix}{pattern}" for pattern in include]
        else:
            # The layout's read set over time: server_args.py and everything under arg_groups/.
            read = set(find_layout(tip.paths(), None).files) | {SERVER_ARGS, ARG_GROUPS}
            paths = sorted(prefix + p for p in read)
        commits = [first.info.commit or start] + git_log(repo, f"{first.info.commit}..{tip.info.commit}", paths)
    return [Spec("git", commit, repo=repo) for commit in dict.fromkeys(commits)]


# ---- work done in worker processes -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Extracted:
    """One source's outcome: its cache key and outline (see `outline`), or the one-line error that stopped it."""

    spec: Spec
    key: str | None = None
    outline: dict | None = None
    error: str | None = None


def outline(rules: Mapping, flags: Mapping) -> dict:
    """What the history needs of a source's documents: a few counts, and of each rule what its lineage shows.

    It is cached next to the documents, so a run whose steps are all cached never reads the documents
    (tens of megabytes each).
    """
    kinds = [r["kind"] for r in rules["rules"]]
    return {
        "source": rules["source"],
        "rules": len(kinds),
        "guards": sum(k != "adjustment" for k in kinds),
        "adjustments": kinds.count("adjustment"),
        "flags": len(flags["flags"]),
        "errors": rules.get("summary", {}).get("errors", 0),
        "rule_list": [{"id": r["id"], "kind": r["kind"], "message": r["message"],
                       "file": r["location"]["file"], "line": r["location"]["line"]} for r in rules["rules"]],
        "flag_names": [f["name"] for f in flags["flags"]],
    }


def extract_one(spec: Spec, include: Sequence[str] | None, folder: Path) -> Extracted:
    """Extract a source into the cache `folder` (or find it there); only the small outline crosses back."""
    try:
        with open_spec(spec) as tree:
            rules, flags, key = extract_documents(tree, include, keep_going=True, folder=folder, prune=False, jobs=1)
    except (SourceError, LayoutError, ParseError, OSError) as error:
        return Extracted(spec, error=str(error))
    _remember(key, (rules, flags))  # the next step diffs it, most likely in this process
    found = outline(rules, flags)
    _store(_outline_path(folder, key), found)
    return Extracted(spec, key, found)


def diff_keys(folder: Path, old_key: str, new_key: str, compare: str) -> dict:
    """Diff two cached extractions and cache the step: the changes as the history keeps them, and the
    pairs whose id changed (to follow rules by lineage)."""
    before, after = _snapshot(folder, old_key), _snapshot(folder, new_key)
    # The memo `diff` keeps for the same two extractions: either command reuses what the other decided.
    memo = known_memo(memo_path(old_key, new_key, compare, folder))
    known = copy.deepcopy(memo)
    step = {
        "changes": [_trimmed(c.as_dict()) for c in find_changes(before, after, compare, memo)],
        "renamed": sorted([p.old.id, p.new.id] for p in memo.matched(before.rules, after.rules)[0]
                          if p.old.id != p.new.id),
    }
    if memo != known:
        write_pickled(memo_path(old_key, new_key, compare, folder), memo)
    _store(_step_path(folder, old_key, new_key, compare), step)
    return step


_SHOWN = ("file", "line", "function", "message", "value", "default", "choices")  # of a changed side


def _trimmed(change: dict) -> dict:
    """A change with only what `_lineages` and `_compact` read: sides shrink to their id and shown fields."""
    kept = {k: change[k] for k in ("kind", "subject", "id", "details") if k in change}
    for side in ("old", "new"):
        data = change.get(side)
        kept[side] = data and {k: data[k] for k in ("id", *_SHOWN) if k in data}
    return kept


# Documents and snapshots this process made or read last: a step mostly diffs the source just extracted
# (or diffed) here, so it is rarely read back from the cache.
_RECENT: dict[str, object] = {}
_RECENT_SIZE = 3


def _remember(key: str, value: object) -> None:
    _RECENT.pop(key, None)
    _RECENT[key] = value
    while len(_RECENT) > _RECENT_SIZE:
        del _RECENT[next(iter(_RECENT))]


def _snapshot(folder: Path, key: str) -> Snapshot:
    found = _RECENT.get(key)
    if not isinstance(found, Snapshot):
        compact = None if found else read_pickled(snapshot_path(key, folder))
        if isinstance(compact, Snapshot):
            found = compact
        else:
            documents = found or load_cached(key, folder)
            if documents is None:
                raise SourceError(f"extraction {key[:12]} is missing from the cache {folder}")
            found = Snapshot.from_documents(*documents)
            write_pickled(snapshot_path(key, folder), found)
    _remember(key, found)
    return found


def _store(path: Path, data: dict) -> None:
    from ..extraction.output import write_atomic

    write_atomic(path, dumps(data))


def _load(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _outline_path(folder: Path, key: str) -> Path:
    # Keyed by the history code too: an outline is this module's view of the documents.
    digest = hashlib.sha256(f"{key}\n{code_fingerprint('products.history.history')}".encode()).hexdigest()
    return folder / f"outline-{digest}.json"


def _step_path(folder: Path, old_key: str, new_key: str, compare: str) -> Path:
    digest = hashlib.sha256("\n".join((old_key, new_key, compare, code_fingerprint("products.history.history"))).encode())
    return folder / f"step-{digest.hexdigest()}.json"


# ---- the run ----------------------------------------------------------------------------------------


class Progress:
    """The steps of a history counted on the terminal's status line (`core.progress.Status`): a bar,
    how many of how many, the last step; silent when stderr is no terminal (logs and CI stay clean)."""

    WIDTH = 30

    def __init__(self, total: int, stream=None) -> None:
        self.line = Status("history", stream).open()
        self.total, self.done = total, 0

    def step(self, what: str) -> None:
        self.done += 1
        filled = self.WIDTH * self.done // max(self.total, 1)
        self.line.step(f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} {what[:40]}")

    def close(self) -> None:
        self.line.close()


@dataclass(slots=True)
class History:
    sources: list[Extracted]
    steps: list[tuple[Extracted, Extracted, dict]] = field(default_factory=list)


def run_history(specs: Sequence[Spec], *, include: Sequence[str] | None = None, jobs: int | None = None,
                use_cache: bool = True, compare: str = "trigger", progress: Progress | None = None) -> History:
    """Extract every source and diff every consecutive pair: cache hits here, the rest in parallel processes.

    The extraction cache is how work crosses processes: a worker leaves a source's documents there and
    sends back its outline. Each worker is a process of its own that follows a run of consecutive
    sources (see `_Plan`), so it mostly diffs sources it still holds; only where runs meet is one read
    back. Without the cache, a temporary folder plays its part for the run.
    """
    jobs = max(1, jobs or os.cpu_count() or 1)
    progress = progress or Progress(2 * len(specs) - 1)
    with contextlib.ExitStack() as stack:
        folder = extraction_cache() if use_cache else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        stack.callback(_RECENT.clear)  # with one job, this process held them
        plan = _Plan(len(specs))
        workers: list[concurrent.futures.Executor | None] = [None] * jobs  # started only if something is not cached
        running: dict[concurrent.futures.Future, tuple[int, tuple[str, int, int, int]]] = {}

        def cached(work: tuple[str, int, int, int]) -> tuple | None:
            """Take a piece of work from the cache if it is there; else the call that does it."""
            what, old, new, _ = work
            if what == "extract":
                hit = _cached_one(specs[new], include, folder)
                if hit is None:
                    return (extract_one, specs[new], include, folder)
                plan.sources[new] = hit
                progress.step(f"cached {_label(hit)}")
                return None
            a, b = plan.sources[old], plan.sources[new]
            assert a is not None and b is not None and a.key and b.key
            step = _load(_step_path(folder, a.key, b.key, compare))
            if step is None or "changes" not in step:
                return (diff_keys, folder, a.key, b.key, compare)
            plan.steps[old, new] = step
            progress.step(f"diffed {_label(b)}")
            return None

        def start(worker: int, last: int | None = None, way: int = 1) -> None:
            """Give a free worker its next piece of work, going on from source `last` (held) its way."""
            while (work := plan.next(last, way)) is not None:
                call = cached(work)
                if call is not None:
                    if workers[worker] is None:
                        workers[worker] = stack.enter_context(_executor(jobs))
                    running[workers[worker].submit(*call)] = (worker, work)
                    return
                what, old, new, way = work
                last = new if what == "extract" else last

        while True:
            for worker in range(jobs):
                if all(worker != busy for busy, _ in running.values()):
                    start(worker)
            if not running:
                break
            done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: running[f][0]):
                worker, (what, old, new, way) = running.pop(future)
                if what == "extract":
                    result = plan.sources[new] = future.result()
                    progress.step(f"extracted {_label(result)}")
                else:
                    plan.steps[old, new] = future.result()
                    progress.step(f"diffed {_label(plan.sources[new])}")
                start(worker, new if way > 0 else old, way)
    progress.close()
    if use_cache:
        prune_cache(folder)
    steps = [(plan.sources[a], plan.sources[b], step) for (a, b), step in sorted(plan.steps.items())]
    return History([r for r in plan.sources if r is not None], steps)


class _Plan:
    """What to do next: sources in runs of consecutive ones per worker, and each step once both ends are in.

    A worker that extracted or diffed source i goes on with the step that source makes ready, then
    with the next source its way (i + 1, or i - 1 going back). A worker with nothing to follow takes
    the longest run nobody has started: from its start, or from its end going back (the second
    worker takes the last source: later sources are usually the larger ones, so the runs meet at a
    middling step rather than ending on the largest), or, with someone coming from both sides,
    from its middle. So each worker diffs sources it holds in memory, and only where two runs meet is
    a source read back from the cache.
    """

    def __init__(self, count: int) -> None:
        self.sources: list[Extracted | None] = [None] * count
        self.taken = [False] * count
        self.steps: dict[tuple[int, int], dict | None] = {}

    def next(self, last: int | None, way: int = 1) -> tuple[str, int, int, int] | None:
        """("extract", i, i, way) or ("diff", old, new, way), or None when nothing can start now."""
        ready = [pair for pair in self._pairs() if pair not in self.steps]
        if ready:
            # Best the step back to the source before (on its way), which this worker likely holds too.
            pair = min(ready, key=lambda p: (last not in p, p[1 if way > 0 else 0] != last))
            self.steps[pair] = None
            return ("diff", *pair, way)
        if last is not None and 0 <= last + way < len(self.taken) and not self.taken[last + way]:
            return self._take(last + way, way)
        runs = self._untaken_runs()
        if not runs:
            return None
        first, end = max(runs, key=lambda run: run[1] - run[0])
        # Someone works on the source just before (or after) the run, and will likely go on into it.
        if not (first > 0 and self.sources[first - 1] is None):
            return self._take(first, 1)
        if not (end < len(self.taken) and self.sources[end] is None):
            return self._take(end - 1, -1)
        return self._take((first + end) // 2, 1)

    def _take(self, index: int, way: int) -> tuple[str, int, int, int]:
        self.taken[index] = True
        return ("extract", index, index, way)

    def _pairs(self):
        """Consecutive extracted sources (with only failed ones between), each pair once."""
        previous = None
        for index, source in enumerate(self.sources):
            if source is None:
                previous = None
            elif source.error is None:
                if previous is not None:
                    yield previous, index
                previous = index

    def _untaken_runs(self) -> list[tuple[int, int]]:
        runs, first = [], None
        for index, taken in enumerate([*self.taken, True]):
            if not taken and first is None:
                first = index
            elif taken and first is not None:
                runs.append((first, index))
                first = None
        return runs


def _cached_one(spec: Spec, include: Sequence[str] | None, folder: Path) -> Extracted | None:
    """A source whose outline is cached, looked up here; None sends it to a worker (a release not yet
    downloaded too, so downloads run in parallel)."""
    if spec.kind == "release" and spec.value not in cached_releases():
        return None
    try:
        with open_spec(spec) as tree:
            key = found_key(tree, include, keep_going=True, folder=folder)
    except (SourceError, LayoutError, OSError):
        return None  # the worker reports it
    if key is None:
        return None
    found = _load(_outline_path(folder, key))
    if found is None or not cache_paths(key, folder)[0].is_file():
        return None
    # The same bytes can come from another source (a release and its git tag): say which one.
    return Extracted(spec, key, {**found, "source": tree.info.as_dict()})


def _executor(jobs: int) -> concurrent.futures.Executor:
    """One worker: this process when there is one job (cheaper, and tests can see what happens), else
    a process of its own, so that work sent to it finds what it holds."""
    if jobs == 1:
        return _InlineExecutor()
    # "spawn": a forked child of a process that has threads (a test server, a git pipe reader) can
    # inherit a lock held by another thread and hang; fresh interpreters cannot.
    spawn = multiprocessing.get_context("spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn, initializer=_worker_start)


def _worker_start() -> None:
    # A worker's heap ends up large (documents, snapshots, formula caches), and the collector's last
    # pass over it as the interpreter exits takes seconds, while the pool waits: nothing needs it then.
    # And it imports libcst afresh: with the dataclass code kept, in half the time.
    start_process()


class _InlineExecutor(concurrent.futures.Executor):
    def submit(self, fn: Callable, /, *args, **kwargs) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the caller through the future, as a pool would
            future.set_exception(error)
        return future


def _label(result: Extracted) -> str:
    if result.outline is not None:
        return str(result.outline["source"].get("label", result.spec.value))
    return result.spec.value[:12] if result.spec.kind == "git" else result.spec.value


# ---- documents ----------------------------------------------------------------------------------------


def history_document(history: History, compare: str = "trigger") -> dict:
    from ..extraction.output import GENERATOR

    good = [s for s in history.sources if s.error is None]
    return {
        "schema_version": SCHEMA_VERSION,
        "schema": HISTORY_SCHEMA_ID,
        "generator": GENERATOR,
        "compare": compare,
        "sources": [_source_entry(s) for s in good],
        "errors": [{"label": _label(s), "message": s.error} for s in history.sources if s.error is not None],
        "steps": [{"from": _label(a), "to": _label(b), "summary": counts(step["changes"])}
                  for a, b, step in history.steps],
        "rules": _lineages(good, history.steps),
        "flags": _flag_lineages(good, history.steps),
    }


def _source_entry(source: Extracted) -> dict:
    assert source.outline is not None
    numbers = {k: source.outline[k] for k in ("rules", "guards", "adjustments", "flags", "errors")}
    return {"label": _label(source), "source": source.outline["source"], "key": source.key, **numbers}


def _compact(change: Mapping, old_label: str, new_label: str) -> dict:
    """One change in a rule's or flag's history: kind, step, and the little that changed."""
    entry = {"kind": change["kind"], "from": old_label, "to": new_label}
    old, new = change.get("old"), change.get("new")
    for side, data in (("old", old), ("new", new)):
        if data:
            entry[side] = {k: data[k] for k in _SHOWN if k in data}
    if change.get("details"):
        entry["details"] = change["details"]
    return entry


def _lineages(sources: list[Extracted], steps: Sequence[tuple[Extracted, Extracted, dict]]) -> list[dict]:
    """Every rule followed through the sources, keyed by its latest id, with its earlier ids."""
    lineage_of: dict[str, dict] = {}  # id in the current source -> its lineage
    entries: list[dict] = []
    step_of = {(id(a), id(b)): s for a, b, s in steps}
    previous: Extracted | None = None
    for source in sources:
        assert source.outline is not None
        label = _label(source)
        step = step_of.get((id(previous), id(source))) if previous is not None else None
        earlier: dict[str, str] = {}  # new id -> the first old id renamed to it
        for old, new in dict(map(tuple, step["renamed"]) if step else ()).items():
            earlier.setdefault(new, old)
        current: dict[str, dict] = {}
        for rule in source.outline["rule_list"]:
            entry = lineage_of.get(earlier.get(rule["id"], rule["id"]))
            if entry is None or entry["last_seen"] != (_label(previous) if previous else None):
                entry = {"id": rule["id"], "ids": [], "first_seen": label, "present_in": 0, "changes": []}
                entries.append(entry)
            if rule["id"] not in entry["ids"]:
                entry["ids"].append(rule["id"])
            entry.update(id=rule["id"], kind=rule["kind"], message=rule["message"], last_seen=label,
                         file=rule["file"], line=rule["line"])
            entry["present_in"] += 1
            current[rule["id"]] = entry
        if step:
            for change in step["changes"]:
                if change["subject"] != "rule":
                    continue
                side = change["new"] or change["old"]
                owner = current.get(side["id"]) if change["new"] else lineage_of.get(side["id"])
                if owner is not None:
                    owner["changes"].append(_compact(change, _label(previous), label))
        lineage_of, previous = current, source
    for entry in entries:
        entry["ids"] = entry["ids"] if len(entry["ids"]) > 1 else []
        if not entry["ids"]:
            del entry["ids"]
    return sorted(entries, key=lambda e: (e["id"], e["first_seen"]))


def _flag_lineages(sources: list[Extracted], steps: Sequence[tuple[Extracted, Extracted, dict]]) -> list[dict]:
    entries: dict[str, list[dict]] = {}
    step_of = {id(b): (a, s) for a, b, s in steps}
    previous_names: set[str] = set()
    previous_label: str | None = None
    for source in sources:
        assert source.outline is not None
        label = _label(source)
        names = set(source.outline["flag_names"])
        for name in sorted(names):
            runs = entries.setdefault(name, [])
            if not runs or name not in previous_names:
                runs.append({"name": name, "first_seen": label, "present_in": 0, "changes": []})
            runs[-1]["last_seen"] = label
            runs[-1]["present_in"] += 1
        found = step_of.get(id(source))
        if found:
            for change in found[1]["changes"]:
                if change["subject"] == "flag" and entries.get(change["id"]):
                    entries[change["id"]][-1]["changes"].append(_compact(change, previous_label or "", label))
        previous_names, previous_label = names, label
    return [run for name in sorted(entries) for run in entries[name]]


def timeline_markdown(document: Mapping) -> str:
    """A table of rule and change counts per source (generated: do not edit)."""
    shown = ("added", "removed", "moved", "message-changed", "tightened", "relaxed", "condition-changed")
    header = ["source", "date", "rules", "guards", "adjustments", "flags", *shown,
              "adjustments changed", "flags changed"]
    lines = ["# Constraint timeline", "",
             "<!-- generated by `sglang-constraints history`: do not edit -->", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    by_target = {step["to"]: step["summary"] for step in document["steps"]}
    for source in document["sources"]:
        summary = by_target.get(source["label"])
        info = source["source"]
        date = (info.get("commit_date") or release_date(str(info.get("release") or "")) or "")[:10]
        row = [source["label"], date, source["rules"], source["guards"], source["adjustments"], source["flags"]]
        if summary is None:
            row += [""] * (len(shown) + 2)
        else:
            row += [summary.get(k, 0) for k in shown]
            row.append(sum(n for k, n in summary.items() if k.startswith("adjustment-")))
            row.append(sum(n for k, n in summary.items() if k.startswith("flag-")))
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    for error in document["errors"]:
        lines.append(f"\n- {error['label']}: not extracted: {error['message']}")
    return "\n".join(lines) + "\n"
