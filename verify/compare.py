"""Compare, case by case, the real SGLang's first error with what our `check` command says.

Runs in the project's venv with the standard library only. It talks to the extractor through its
command line alone (`python -m extractor check --format json ...`), and to the real SGLang through
verify/oracle_server.py run by the SGLang venv's interpreter. Both are cached in JSON lines under
verify/.cache/, so that a rerun computes only what changed:

  oracle.jsonl  keyed by the case's arguments, the model folder's config.json sha256 and the
                oracle server's own sha256 (a harness change recomputes; SGLang is pinned);
  check.jsonl   keyed by the rules.json sha256, the case's arguments, the model config sha256,
                the options passed to `check` (a new `--platform` option recomputes) and a
                fingerprint of check's answer to one canary launch (new check code recomputes).

    python verify/compare.py [--cases verify/.cache/cases.jsonl] [--sgreal /tmp/sgreal] [--jobs 2]

Writes verify/.cache/report.json (every case with its class) and verify/.cache/disagreements.md,
and prints one summary line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    CACHE_DIR,
    CASES_FILE,
    DEFAULT_RULES,
    DEFAULT_SGREAL,
    RELEASE,
    ROOT,
    VERIFY_DIR,
    read_jsonl,
    sha256_file,
    sha256_json,
)

ORACLE_CACHE = CACHE_DIR / "oracle.jsonl"
CHECK_CACHE = CACHE_DIR / "check.jsonl"
REPORT = CACHE_DIR / "report.json"
DISAGREEMENTS = CACHE_DIR / "disagreements.md"
DEFAULT_TOOL = [str(ROOT / ".venv" / "bin" / "python"), "-m", "extractor"]
SNAPSHOT = CACHE_DIR / "snapshot"

# Classes, in the order the summary prints them. "agree-*" and "argparse-agree" are agreements;
# every other class is listed in disagreements.md.
RAISED = ["agree-first", "definite-not-first", "other-first", "possible", "missed-rule", "missed-no-rule", "check-argparse"]
OK = ["false-definite", "false-argparse", "agree-ok"]
ARGPARSE = ["argparse-agree", "argparse-missed"]
OTHER = ["real-crash", "real-timeout", "check-failed"]
AGREEMENTS = {"agree-first", "agree-ok", "argparse-agree"}


class JsonlCache:
    """An append-only JSON-lines cache: the last record of a key wins; thread-safe appends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {r["key"]: r for r in read_jsonl(path) if "key" in r}
        self.lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def get(self, key: str) -> dict[str, Any] | None:
        return self.records.get(key)

    def put(self, key: str, record: dict[str, Any]) -> None:
        record = dict(record, key=key)
        with self.lock:
            self.records[key] = record
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, sort_keys=True) + "\n")


# ---------------------------------------------------------------- the real SGLang


def run_oracle(cases: list[dict[str, Any]], cache: JsonlCache, keys: dict[str, str], sgreal: Path,
               jobs: int, timeout: float) -> float:
    """Run the cases the cache lacks through the oracle server; return the seconds it took."""
    missing = [case for case in cases if cache.get(keys[case["id"]]) is None]
    if not missing:
        return 0.0
    python = sgreal / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"compare: {python} missing: create the SGLang venv first (make verify does)")
    print(f"compare: oracle: {len(missing)} cases to run ({len(cases) - len(missing)} cached)", file=sys.stderr, flush=True)
    started = time.monotonic()
    by_id = {case["id"]: case for case in missing}
    proc = subprocess.Popen(
        [str(python), str(VERIFY_DIR / "oracle_server.py"), "--jobs", str(jobs), "--timeout", str(timeout)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=str(VERIFY_DIR),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:  # in a thread: the server answers while we still write
        for case in missing:
            proc.stdin.write(json.dumps({"id": case["id"], "argv": case["argv"]}) + "\n")
        proc.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    done = 0
    for line in proc.stdout:
        result = json.loads(line)
        case = by_id.get(result["id"])
        if case is None:
            continue
        cache.put(keys[case["id"]], result)
        done += 1
        if done % 200 == 0:
            print(f"compare: oracle: {done}/{len(missing)} in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    feeder.join()
    if proc.wait() != 0:
        raise SystemExit(f"compare: oracle server exited with {proc.returncode}")
    return time.monotonic() - started


# ---------------------------------------------------------------- our check


def snapshot_extractor(dest: Path) -> Path:
    """Copy extractor/ (and schemas/) to `dest` and return it, the folder to run check from.

    A run takes about an hour and the extractor may be edited meanwhile: `python -m extractor`
    started in `dest` imports the copy (the current directory comes first on sys.path; the
    editable install's finder comes after it), so every case of a run sees one version of check.
    """
    if dest.exists():
        shutil.rmtree(dest)
    for name in ("extractor", "schemas"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


WORKDIR = ROOT  # where check runs: the snapshot, unless --live


def check_options(tool: list[str]) -> list[str]:
    """Options to pass, from what `check --help` lists today (the interface is growing)."""
    text = subprocess.run(tool + ["check", "--help"], capture_output=True, text=True, cwd=str(WORKDIR)).stdout
    options: list[str] = []
    if "--platform" in text:
        options += ["--platform", "cpu"]
    if "--device-memory" in text:
        options += ["--device-memory", str(host_memory_mib())]
    if "--local" in text:  # the oracle's children run from verify/: relative paths are looked up there
        options += ["--local", str(VERIFY_DIR)]
    return options


def host_memory_mib() -> int:
    """This host's memory per NUMA node in MiB, as SGLang's `get_cpu_memory_capacity()` computes it on
    the CPU (MemTotal, capped by the cgroup's memory.max): the oracle runs here too."""
    total = 0
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) * 1024
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text(encoding="ascii").strip()
        if limit.isdigit():
            total = min(total, int(limit))
    except OSError:
        pass
    nodes = len(list(Path("/sys/devices/system/node").glob("node[0-9]*"))) or 1
    return int((total / nodes) // (1 << 20))


# A launch with one definite error and the usual possible ones: what check prints for it changes
# when check's behaviour or output format does, even with the same rules.json.
CANARY_ARGS = ["--disaggregation-mode", "prefill", "--disaggregation-decode-enable-offload-kvcache"]


def check_fingerprint(tool: list[str], rules: Path, options: list[str], model_folder: Path) -> str:
    """sha256 of check's JSON for the canary launch: part of the cache key, so that results of an
    older `check` (same rules.json, other code) are recomputed, not mixed with new ones."""
    result = run_check(tool, rules, options, ["--device", "cpu", "--model-path", str(model_folder)] + CANARY_ARGS, 300.0)
    return sha256_json(result.get("doc") or result.get("failed"))


def run_check(tool: list[str], rules: Path, options: list[str], argv: list[str], timeout: float) -> dict[str, Any]:
    command = tool + ["check", "--format", "json", "--rules", str(rules)] + options + ["--"] + argv
    started = time.monotonic()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, cwd=str(WORKDIR), timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"failed": f"check timed out after {timeout:.0f} s", "seconds": timeout}
    seconds = round(time.monotonic() - started, 2)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"failed": f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-1000:]}", "seconds": seconds}
    return {"exit": proc.returncode, "doc": slim(doc), "seconds": seconds}


def slim(doc: dict[str, Any]) -> dict[str, Any]:
    """What the comparison reads of check's JSON (the adjustments list is large and unused)."""
    keep = {k: v for k, v in doc.items() if k != "adjustments"}
    keep["errors"] = [
        {k: e.get(k) for k in ("certainty", "id", "location", "message", "first", "is_first", "order", "rank") if k in e}
        for e in doc.get("errors", [])
    ]
    return keep


def run_checks(cases: list[dict[str, Any]], cache: JsonlCache, keys: dict[str, str], tool: list[str], rules: Path,
               options: list[str], jobs: int, timeout: float, failures: dict[str, dict[str, Any]]) -> float:
    """Run the checks the cache lacks. A run that printed no JSON (the CLI broke, or timed out)
    goes to `failures`, not to the cache: the extractor is being worked on, so try again next time."""
    missing = [case for case in cases if cache.get(keys[case["id"]]) is None]
    if not missing:
        return 0.0
    print(f"compare: check: {len(missing)} cases to run ({len(cases) - len(missing)} cached), {jobs} at a time",
          file=sys.stderr, flush=True)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_check, tool, rules, options, case["argv"], timeout): case for case in missing}
        for done, future in enumerate(as_completed(futures), 1):
            case = futures[future]
            result = dict(future.result(), id=case["id"])
            if "failed" in result:
                failures[keys[case["id"]]] = result
            else:
                cache.put(keys[case["id"]], result)
            if done % 50 == 0:
                elapsed = time.monotonic() - started
                print(f"compare: check: {done}/{len(missing)} in {elapsed:.0f} s "
                      f"(~{elapsed / done * (len(missing) - done) / 60:.0f} min left)", file=sys.stderr, flush=True)
    return time.monotonic() - started


# ---------------------------------------------------------------- classification


class RuleIndex:
    """Guard rules (raise/assert) of rules.json by file, to find the rules at a real place."""

    def __init__(self, rules_doc: dict[str, Any]) -> None:
        self.by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.by_id: dict[str, dict[str, Any]] = {}
        # Files the extraction read whole (header `files`); others had single functions followed.
        self.read_files = {entry["path"] for entry in rules_doc.get("files", [])}
        for rule in rules_doc["rules"]:
            self.by_id[rule["id"]] = rule
            if rule.get("kind") in ("raise", "assert"):
                self.by_file[rule["location"]["file"]].append(rule)

    def at(self, file: str | None, line: int | None) -> list[str]:
        if not file or line is None:
            return []
        return [r["id"] for r in self.by_file.get(file, [])
                if r["location"]["line"] <= line <= r["location"].get("end_line", r["location"]["line"])]

    def why_no_rule(self, real: dict[str, Any]) -> str:
        """Why no rule is at a real raise: a bare `assert` (rules take messaged asserts only), a
        file the extraction never read, or a guard it read and did not extract."""
        if real.get("exception") == "AssertionError" and not real.get("message"):
            return "bare-assert"
        if real.get("file") not in self.read_files and real.get("file") not in self.by_file:
            return "file-not-read"
        return "not-extracted"

    def matching(self, real: dict[str, Any]) -> tuple[list[str], str]:
        """Rules at the real raise: those whose [line, end_line] holds the innermost sglang frame;
        failing that, the innermost of the other sglang frames that falls inside some rule's span
        (an exception raised while a guard's own statement runs, e.g. in a helper its message or
        condition calls)."""
        ids = self.at(real.get("file"), real.get("line"))
        if ids:
            return ids, "innermost"
        for file, line, _function in reversed(real.get("frames") or []):
            ids = self.at(file, line)
            if ids:
                return ids, "frame"
        return [], "none"


def first_definite(doc: dict[str, Any]) -> tuple[str | None, str]:
    """The id of check's first definite error, and how it was known ("marked" when the JSON says
    which one is first, "printed" when it is the first definite one in the order printed)."""
    for key in ("first_error", "first_definite", "first"):
        value = doc.get(key)
        if isinstance(value, str):
            return value, "marked"
        if isinstance(value, dict) and value.get("id"):
            return value["id"], "marked"
    definite = [e for e in doc.get("errors", []) if e.get("certainty") == "definite"]
    for error in definite:
        if error.get("first") is True or error.get("is_first") is True:
            return error["id"], "marked"
    ranked = [e for e in definite if isinstance(e.get("order", e.get("rank")), int)]
    if definite and len(ranked) == len(definite):
        return min(ranked, key=lambda e: e.get("order", e.get("rank")))["id"], "marked"
    return (definite[0]["id"] if definite else None), "printed"


def describe_check(check: dict[str, Any]) -> str:
    """One line of what check said, for the disagreement table."""
    if "failed" in check:
        return f"check failed: {check['failed'][:200]}"
    doc = check["doc"]
    if doc.get("argument_errors"):
        return "argument error: " + "; ".join(e.get("message", "") for e in doc["argument_errors"])[:300]
    definite = [e for e in doc.get("errors", []) if e.get("certainty") == "definite"]
    possible = [e for e in doc.get("errors", []) if e.get("certainty") == "possible"]
    if not definite:
        return f"no definite error ({len(possible)} possible)"
    first, _ = first_definite(doc)
    head = next(e for e in definite if e["id"] == first) if first else definite[0]
    where = f"{head['location']['file']}:{head['location']['line']}"
    more = f" (+{len(definite) - 1} more definite)" if len(definite) > 1 else ""
    return f"definite {head['id']} {where}: {head.get('message', '')[:160]}{more}"


def classify(real: dict[str, Any], check: dict[str, Any], index: RuleIndex) -> dict[str, Any]:
    out: dict[str, Any] = {}
    status = real["status"]
    if status == "crash":
        out["class"] = "real-crash"
    elif status == "timeout":
        out["class"] = "real-timeout"
    if "failed" in check:
        out.setdefault("class", "check-failed")
        return out
    doc = check["doc"]
    errors = doc.get("errors", [])
    definite = [e["id"] for e in errors if e.get("certainty") == "definite"]
    possible = [e["id"] for e in errors if e.get("certainty") == "possible"]
    first, first_how = first_definite(doc)
    argument_errors = doc.get("argument_errors") or []
    out.update(definite=definite, first=first, first_how=first_how, argument_errors=len(argument_errors))
    if "class" in out:
        return out
    if status == "argparse":
        out["class"] = "argparse-agree" if argument_errors else "argparse-missed"
        return out
    if status == "ok":
        out["class"] = "false-argparse" if argument_errors else ("false-definite" if definite else "agree-ok")
        return out
    # status "error": the real code raised at a guard
    ids, how = index.matching(real)
    out.update(real_rules=ids, match=how)
    if not ids:
        out["no_rule"] = index.why_no_rule(real)
    if argument_errors:
        out["class"] = "check-argparse"
    elif first in ids:
        out["class"] = "agree-first"
    elif set(ids) & set(definite):
        out["class"] = "definite-not-first"
    elif definite:
        out["class"] = "other-first"
        out["real_rule_possible"] = bool(set(ids) & set(possible))
    elif set(ids) & set(possible):
        out["class"] = "possible"
    else:
        out["class"] = "missed-rule" if ids else "missed-no-rule"
    return out


def extractor_state() -> dict[str, Any]:
    """Which extractor the checks ran: the commit, and whether extractor/ had local changes
    (the check results are cached by rules.json, not by code: see --fresh)."""
    def git(*words: str) -> str:
        proc = subprocess.run(["git", *words], capture_output=True, text=True, cwd=str(ROOT))
        return proc.stdout.strip() if proc.returncode == 0 else ""
    digest = sha256_json(sorted((str(path.relative_to(WORKDIR)), sha256_file(path))
                                for path in (WORKDIR / "extractor").rglob("*.py")))
    return {"head": git("rev-parse", "HEAD"), "extractor_modified": bool(git("status", "--porcelain", "--", "extractor")),
            "ran_from": str(WORKDIR), "extractor_sources_sha256": digest}


def pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def summary_line(counts: Counter, total: int) -> str:
    raised = sum(counts[c] for c in RAISED)
    ok = sum(counts[c] for c in OK)
    parsed = sum(counts[c] for c in ARGPARSE)
    parts = [f"verify {RELEASE}: {total} cases"]
    parts.append(f"real raised {raised}: " + ", ".join(f"{c} {counts[c]} ({pct(counts[c], raised)})" for c in RAISED))
    parts.append(f"real ok {ok}: " + ", ".join(f"{c} {counts[c]}" for c in OK))
    parts.append(f"real argparse {parsed}: " + ", ".join(f"{c.split('-', 1)[1]} {counts[c]}" for c in ARGPARSE))
    parts.append(", ".join(f"{c} {counts[c]}" for c in OTHER))
    return "; ".join(parts)


def md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_disagreements(rows: list[dict[str, Any]], path: Path, line: str) -> None:
    order = {c: i for i, c in enumerate(RAISED + OK + ARGPARSE + OTHER)}
    rows = sorted(rows, key=lambda r: (order.get(r["class"], 99), r.get("real_place") or "", r["id"]))
    out = [f"# Disagreements of the differential test ({RELEASE})", "", line, "",
           "Classes: see verify/README.md. `real` is the real SGLang's first raise (file:line of the innermost",
           "sglang frame, exception, message); `check` is what `check --format json` said (its first definite error).", ""]
    places = Counter(r["real_place"] for r in rows if r.get("real_place") and r["class"] in RAISED)
    if places:
        out += ["## Real raise places with most disagreements", "", "| place | count | classes | check said most |", "|---|---|---|---|"]
        for place, count in places.most_common(25):
            mine = [r for r in rows if r.get("real_place") == place and r["class"] in RAISED]
            classes = Counter(r["class"] for r in mine)
            said = Counter(r["check_said"] for r in mine).most_common(1)[0][0]
            out.append(f"| {place} | {count} | {', '.join(f'{c} {n}' for c, n in classes.most_common())} | {md_cell(said[:160])} |")
        out.append("")
    out += ["## Every disagreement", "", "| class | case | argv | real | check |", "|---|---|---|---|---|"]
    for row in rows:
        argv = " ".join(row["args"]) or "(plain)"
        real = row["real_said"]
        label = row["class"] + (f" ({row['verdict']['no_rule']})" if row["verdict"].get("no_rule") and row["class"] == "missed-no-rule" else "")
        out.append(f"| {label} | {row['id']} ({row['model']}) | `{md_cell(argv)}` | {md_cell(real)} | {md_cell(row['check_said'])} |")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def describe_real(real: dict[str, Any]) -> str:
    status = real["status"]
    if status == "ok":
        return "ok"
    where = f"{real.get('file')}:{real.get('line')} " if real.get("file") else ""
    return f"{status} {where}{real.get('exception', '')}: {real.get('message', '')[:200]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES_FILE)
    parser.add_argument("--rules", type=Path, default=DEFAULT_RULES)
    parser.add_argument("--sgreal", type=Path, default=DEFAULT_SGREAL, help="the SGLang venv (default /tmp/sgreal or $SGREAL_VENV)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel check runs and oracle children")
    parser.add_argument("--oracle-timeout", type=float, default=60.0, help="seconds per real case")
    parser.add_argument("--check-timeout", type=float, default=300.0, help="seconds per check run")
    parser.add_argument("--limit", type=int, default=0, help="only every k-th case so that at most this many run (quick look)")
    parser.add_argument("--fresh", choices=("oracle", "check", "both"), help="ignore that cache (e.g. after check's code changed)")
    parser.add_argument("--tool", default=" ".join(DEFAULT_TOOL), help="how to run the extractor's CLI")
    parser.add_argument("--live", action="store_true", help="run check from the working tree, not from a snapshot of extractor/")
    parser.add_argument("--disagreements", action="store_true",
                        help="only the cases the last full run disagreed on (a quick look at a fix); "
                             "writes report-disagreements.json and disagreements-again.md, not the full report")
    args = parser.parse_args(argv)
    global WORKDIR
    WORKDIR = ROOT if args.live else snapshot_extractor(SNAPSHOT)

    cases = list(read_jsonl(args.cases))
    if not cases:
        raise SystemExit(f"compare: no cases in {args.cases}: run verify/cases.py first")
    if args.limit and len(cases) > args.limit:
        cases = [cases[i * len(cases) // args.limit] for i in range(args.limit)]
    report_path, disagreements_path = REPORT, DISAGREEMENTS
    if args.disagreements:
        if not REPORT.exists():
            raise SystemExit(f"compare: --disagreements needs a full run's {REPORT}")
        last = {row["id"] for row in json.loads(REPORT.read_text())["rows"] if row["class"] not in AGREEMENTS}
        cases = [c for c in cases if c["id"] in last]
        report_path, disagreements_path = CACHE_DIR / "report-disagreements.json", CACHE_DIR / "disagreements-again.md"
    rules = args.rules.resolve()
    rules_doc = json.loads(rules.read_text())
    rules_sha = sha256_file(rules)
    tool = args.tool.split()
    options = check_options(tool)
    canary_folder = Path(cases[0]["argv"][cases[0]["argv"].index("--model-path") + 1])
    fingerprint = check_fingerprint(tool, rules, options, canary_folder)
    oracle_sha = sha256_file(VERIFY_DIR / "oracle_server.py")
    config_sha: dict[str, str] = {}
    for case in cases:
        if case["model"] not in config_sha:
            config_sha[case["model"]] = sha256_file(Path(case["argv"][case["argv"].index("--model-path") + 1]) / "config.json")

    if args.fresh in ("oracle", "both"):
        ORACLE_CACHE.unlink(missing_ok=True)
    if args.fresh in ("check", "both"):
        CHECK_CACHE.unlink(missing_ok=True)
    oracle_cache, check_cache = JsonlCache(ORACLE_CACHE), JsonlCache(CHECK_CACHE)
    oracle_keys = {c["id"]: sha256_json(["oracle", f"sglang=={RELEASE}", oracle_sha, config_sha[c["model"]], c["key"]]) for c in cases}
    check_keys = {c["id"]: sha256_json(["check", rules_sha, fingerprint, options, config_sha[c["model"]], c["key"]]) for c in cases}

    oracle_seconds = run_oracle(cases, oracle_cache, oracle_keys, args.sgreal, args.jobs, args.oracle_timeout)
    failures: dict[str, dict[str, Any]] = {}
    check_seconds = run_checks(cases, check_cache, check_keys, tool, rules, options, args.jobs, args.check_timeout, failures)

    # With --live the extractor may be edited while a long run goes on: say so rather than
    # silently mix two versions (with the snapshot this only fires if the snapshot was touched).
    changed = bool(check_seconds) and check_fingerprint(tool, rules, options, canary_folder) != fingerprint
    if changed:
        print("compare: WARNING: check's answer to the canary changed during the run: its code changed; "
              "rerun to recompute with one version", file=sys.stderr)

    index = RuleIndex(rules_doc)
    counts: Counter = Counter()
    rows: list[dict[str, Any]] = []
    statuses: Counter = Counter()
    matches: Counter = Counter()
    first_how: Counter = Counter()
    no_rule: Counter = Counter()
    for case in cases:
        real = oracle_cache.get(oracle_keys[case["id"]])
        check = check_cache.get(check_keys[case["id"]]) or failures.get(check_keys[case["id"]])
        assert real is not None and check is not None
        statuses[real["status"]] += 1
        verdict = classify(real, check, index)
        counts[verdict["class"]] += 1
        matches[verdict.get("match", "-")] += real["status"] == "error"
        if verdict.get("first"):
            first_how[verdict["first_how"]] += 1
        if verdict["class"] == "missed-no-rule":
            no_rule[verdict["no_rule"]] += 1
        row = {
            "id": case["id"], "model": case["model"], "args": case["args"], "source": case["source"],
            "rule": case.get("rule"), "class": verdict["class"], "verdict": verdict,
            "real": {k: real.get(k) for k in ("status", "stage", "exception", "message", "file", "line", "function", "frames", "cause", "statement")
                     if real.get(k) is not None},
            "real_place": f"{real['file']}:{real['line']}" if real.get("file") and real["status"] == "error" else None,
            "real_said": describe_real(real),
            "check_said": describe_check(check),
            "check_seconds": check.get("seconds"),
        }
        rows.append(row)

    line = summary_line(counts, len(cases))
    disagreements = [r for r in rows if r["class"] not in AGREEMENTS]
    report = {
        "release": RELEASE, "rules": str(rules), "extractor": extractor_state(),
        "check_fingerprint": fingerprint, "check_changed_during_run": changed, "rules_sha256": rules_sha, "check_options": options,
        "summary": line, "cases": len(cases), "classes": dict(counts), "oracle_statuses": dict(statuses),
        "match_modes": {k: v for k, v in matches.items() if k != "-"}, "first_definite_known_by": dict(first_how),
        "missed_no_rule_by_reason": dict(no_rule),
        "seconds": {"oracle": round(oracle_seconds, 1), "check": round(check_seconds, 1)},
        "rows": rows,
    }
    report_path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    write_disagreements(disagreements, disagreements_path, line)
    print(f"compare: oracle statuses {json.dumps(dict(statuses), sort_keys=True)}; real raise matched by "
          f"{json.dumps(report['match_modes'], sort_keys=True)}; first definite known by {json.dumps(dict(first_how))}; "
          f"missed-no-rule by reason {json.dumps(dict(no_rule), sort_keys=True)}; "
          f"oracle {oracle_seconds:.0f} s, check {check_seconds:.0f} s (0 = all cached)")
    print(f"compare: {report_path}, {disagreements_path} ({len(disagreements)} disagreements)")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
