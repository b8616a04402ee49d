"""History of the rules across releases or commits: parallel cached extractions, changes step by step.

Each source is extracted in a worker process and cached by the content of the files it reads
(`diff.extract_documents`), and each step between consecutive sources is diffed once and cached by
the two extraction keys, so a second run only hashes the inputs. The result, `history.json`, follows
every rule through the steps (its first and last source, and what changed when); `timeline.md`
counts rules and changes per source.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from .diff import (
    Snapshot,
    Spec,
    cached_documents,
    code_fingerprint,
    counts,
    extract_documents,
    find_changes,
    match_rules,
    open_spec,
)
from .layout import ARG_GROUPS, SERVER_ARGS, find_layout
from .serialize import SCHEMA_VERSION, dumps
from .sources import SourceError, cache_root, cached_releases, git_log, git_tree, release_versions

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
    tip = git_tree(repo, end)
    first = git_tree(repo, start)
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
    """One source's outcome: its documents and cache key, or the one-line error that stopped it."""

    spec: Spec
    rules: dict | None = None
    flags: dict | None = None
    key: str | None = None
    error: str | None = None


def extract_one(spec: Spec, include: Sequence[str] | None, use_cache: bool) -> Extracted:
    from .layout import LayoutError
    from .modules import ParseError

    try:
        rules, flags, key = extract_documents(open_spec(spec), include, keep_going=True, use_cache=use_cache)
    except (SourceError, LayoutError, ParseError, OSError) as error:
        return Extracted(spec, error=str(error))
    return Extracted(spec, rules, flags, key)


def diff_step(old: Mapping, new: Mapping, compare: str) -> dict:
    """The changes of one step as JSON, with the pairs whose id changed (to follow rules by lineage)."""
    before = Snapshot.from_documents(old["rules"], old["flags"])
    after = Snapshot.from_documents(new["rules"], new["flags"])
    pairs, _, _ = match_rules(before.rules, after.rules)
    return {
        "changes": [c.as_dict() for c in find_changes(before, after, compare)],
        "renamed": sorted([p.old.id, p.new.id] for p in pairs if p.old.id != p.new.id),
    }


def _step_key(old_key: str, new_key: str, compare: str) -> str:
    parts = (old_key, new_key, compare, code_fingerprint("diff"))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# ---- the run ----------------------------------------------------------------------------------------


class Progress:
    """A one-line progress display on a terminal; silent otherwise (logs and CI stay clean)."""

    def __init__(self, total: int, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.total, self.done = total, 0

    def step(self, what: str) -> None:
        self.done += 1
        if self.enabled:
            width = 30
            filled = width * self.done // max(self.total, 1)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {what[:40]:<40}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


@dataclass(slots=True)
class History:
    sources: list[Extracted]
    steps: list[tuple[Extracted, Extracted, dict]] = field(default_factory=list)


def run_history(specs: Sequence[Spec], *, include: Sequence[str] | None = None, jobs: int | None = None,
                use_cache: bool = True, compare: str = "trigger", progress: Progress | None = None) -> History:
    """Extract every source and diff every consecutive pair: cache hits here, the rest in parallel processes."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    progress = progress or Progress(2 * len(specs) - 1)
    results: list[Extracted | None] = [None] * len(specs)
    with contextlib.ExitStack() as stack:
        pools: list[concurrent.futures.Executor] = []

        def pool() -> concurrent.futures.Executor:  # started only if something is not cached
            if not pools:
                pools.append(stack.enter_context(_executor(jobs)))
            return pools[0]

        futures = {}
        for index, spec in enumerate(specs):
            hit = _cached_one(spec, include) if use_cache else None
            if hit is None:
                futures[pool().submit(extract_one, spec, include, use_cache)] = index
            else:
                results[index] = hit
                progress.step(f"cached {_label(hit)}")
        for future in concurrent.futures.as_completed(futures):
            result = results[futures[future]] = future.result()
            progress.step(f"extracted {_label(result)}")
        done = [r for r in results if r is not None]
        good = [r for r in done if r.error is None]
        steps: list[tuple[Extracted, Extracted, dict | None]] = []
        pending = {}
        for old, new in zip(good, good[1:]):
            cached = _load_step(old, new, compare) if use_cache else None
            steps.append((old, new, cached))
            if cached is None:
                old_docs = {"rules": old.rules, "flags": old.flags}
                new_docs = {"rules": new.rules, "flags": new.flags}
                pending[pool().submit(diff_step, old_docs, new_docs, compare)] = len(steps) - 1
            else:
                progress.step(f"diffed {_label(new)}")
        for future in concurrent.futures.as_completed(pending):
            index = pending[future]
            old, new, _ = steps[index]
            steps[index] = (old, new, future.result())
            if use_cache:
                _store_step(old, new, compare, steps[index][2])
            progress.step(f"diffed {_label(new)}")
    progress.close()
    return History(done, [(a, b, s) for a, b, s in steps if s is not None])


def _cached_one(spec: Spec, include: Sequence[str] | None) -> Extracted | None:
    """A source already extracted, looked up here; None sends it to a worker (a release not yet
    downloaded too, so downloads run in parallel)."""
    from .layout import LayoutError

    if spec.kind == "release" and spec.value not in cached_releases():
        return None
    try:
        found = cached_documents(open_spec(spec), include, keep_going=True)
    except (SourceError, LayoutError, OSError):
        return None  # the worker reports it
    return None if found is None else Extracted(spec, *found)


def _executor(jobs: int) -> concurrent.futures.Executor:
    # One job: no worker processes at all (cheaper, and tests can see what happens).
    if jobs == 1:
        return _InlineExecutor()
    # "spawn": a forked child of a process that has threads (a test server, a git pipe reader) can
    # inherit a lock held by another thread and hang; fresh interpreters cannot.
    spawn = multiprocessing.get_context("spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=spawn)


class _InlineExecutor(concurrent.futures.Executor):
    def submit(self, fn: Callable, /, *args, **kwargs) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the caller through the future, as a pool would
            future.set_exception(error)
        return future


def _label(result: Extracted) -> str:
    if result.rules is not None:
        return str(result.rules["source"].get("label", result.spec.value))
    return result.spec.value[:12] if result.spec.kind == "git" else result.spec.value


def _step_path(old: Extracted, new: Extracted, compare: str) -> Path:
    assert old.key and new.key
    return cache_root() / "extractions" / f"step-{_step_key(old.key, new.key, compare)}.json"


def _load_step(old: Extracted, new: Extracted, compare: str) -> dict | None:
    try:
        data = json.loads(_step_path(old, new, compare).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "changes" in data else None


def _store_step(old: Extracted, new: Extracted, compare: str, step: dict) -> None:
    from .output import write_atomic

    write_atomic(_step_path(old, new, compare), dumps(step))


# ---- documents ----------------------------------------------------------------------------------------


def history_document(history: History, compare: str = "trigger") -> dict:
    from .output import GENERATOR

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
    assert source.rules is not None and source.flags is not None
    summary = source.rules.get("summary", {})
    return {
        "label": _label(source),
        "source": source.rules["source"],
        "key": source.key,
        "rules": len(source.rules["rules"]),
        "guards": sum(r["kind"] != "adjustment" for r in source.rules["rules"]),
        "adjustments": sum(r["kind"] == "adjustment" for r in source.rules["rules"]),
        "flags": len(source.flags["flags"]),
        "errors": summary.get("errors", 0),
    }


def _compact(change: Mapping, old_label: str, new_label: str) -> dict:
    """One change in a rule's or flag's history: kind, step, and the little that changed."""
    entry = {"kind": change["kind"], "from": old_label, "to": new_label}
    old, new = change.get("old"), change.get("new")
    for side, data in (("old", old), ("new", new)):
        if data:
            entry[side] = {k: data[k] for k in ("file", "line", "function", "message", "value", "default", "choices")
                           if k in data}
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
        assert source.rules is not None
        label = _label(source)
        step = step_of.get((id(previous), id(source))) if previous is not None else None
        renamed = dict(map(tuple, step["renamed"])) if step else {}
        current: dict[str, dict] = {}
        for rule in source.rules["rules"]:
            earlier = [old for old, new in renamed.items() if new == rule["id"]]
            entry = lineage_of.get(earlier[0] if earlier else rule["id"])
            if entry is None or entry["last_seen"] != (_label(previous) if previous else None):
                entry = {"id": rule["id"], "ids": [], "first_seen": label, "present_in": 0, "changes": []}
                entries.append(entry)
            if rule["id"] not in entry["ids"]:
                entry["ids"].append(rule["id"])
            entry.update(id=rule["id"], kind=rule["kind"], message=rule["message"], last_seen=label,
                         file=rule["location"]["file"], line=rule["location"]["line"])
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
        assert source.flags is not None
        label = _label(source)
        names = {f["name"] for f in source.flags["flags"]}
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
        date = (info.get("commit_date") or "")[:10]
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


# ---- the command --------------------------------------------------------------------------------------


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "history", help="follow the rules across releases or commits",
        description="Extract every source (in parallel, cached by content) and write history.json and "
                    "timeline.md: each rule's first and last source and its changes step by step.")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--releases", metavar="A..B|A,B,...", help="a range of releases on the index, or a list")
    which.add_argument("--all", action="store_true", help="every release on the index")
    which.add_argument("--revs", metavar="A..B", help="commits of --git from A to B that touch the read files")
    parser.add_argument("--git", metavar="REPO", help="a local SGLang clone (with --revs)")
    parser.add_argument("--pre", action="store_true", help="include pre-releases in a range or --all")
    parser.add_argument("--index-url", help="package index (default: $PIP_INDEX_URL or PyPI)")
    parser.add_argument("--include", action="append", metavar="GLOB", help="read these files instead of the layout's")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--compare", choices=("trigger", "condition"), default="trigger")
    parser.add_argument("-o", "--output", default="out/history", help="folder for history.json and timeline.md")
    parser.add_argument("--no-cache", action="store_true", help="extract and diff again even if seen before")
    parser.set_defaults(func=cmd_history)


def cmd_history(args) -> int:
    from .cli import EXIT_OK, EXIT_PARTIAL, UsageError
    from .output import write_documents

    if args.revs and not args.git:
        raise UsageError("--revs needs --git REPO")
    if args.git and not args.revs:
        raise UsageError("--git goes with --revs A..B")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.revs:
        specs = git_specs(args.git, args.revs, args.include)
    else:
        specs = release_specs(args.releases, all_releases=args.all, pre=args.pre, index_url=args.index_url)
    history = run_history(specs, include=args.include, jobs=args.jobs, use_cache=not args.no_cache,
                          compare=args.compare)
    document = history_document(history, args.compare)
    if not document["sources"]:
        raise SourceError("no source could be extracted: " + "; ".join(e["message"] for e in document["errors"]))
    folder = Path(args.output)
    write_documents(folder, {
        "history.json": (document, "history.schema.json"),
        "timeline.md": ({"text": timeline_markdown(document)}, None),
    })
    totals = {k: n for k, n in counts(c for _, _, s in history.steps for c in s["changes"]).items() if n}
    print(f"{len(document['sources'])} sources, {len(document['steps'])} steps, "
          f"{len(document['rules'])} rule lineages; "
          + (", ".join(f"{n} {k}" for k, n in totals.items()) or "no changes") + f" -> {folder}")
    for error in document["errors"]:
        print(f"warning: {error['label']}: {error['message']}", file=sys.stderr)
    return EXIT_PARTIAL if document["errors"] else EXIT_OK

