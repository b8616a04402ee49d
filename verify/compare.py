"""Compare, case by case, the real SGLang's first error with what our `check` command says.

Runs in the project's venv with the standard library only. It talks to the extractor through its
command line alone (`python -m extractor check --format json ...`), and to the real SGLang through
verify/oracle_server.py run by the SGLang venv's interpreter. Both are cached in JSON lines under
verify/.cache/, so that a rerun computes only what changed:

  oracle.jsonl  keyed by the profile (the machine the oracle simulates), the case's arguments and
                environment, the model folder's config.json sha256 and the oracle server's own
                sha256 (a harness change recomputes; SGLang is pinned);
  check.jsonl   keyed by the profile, the rules.json sha256, the case's arguments, the model config
                sha256, the options passed to `check` (`--platform`, ...) and a fingerprint of check's
                answer to one canary launch on that profile (new check code recomputes).

    python verify/compare.py [--source generated|user|all] [--profiles cpu,H100,B200,A100]
                             [--budget N] [--sgreal /tmp/sgreal] [--jobs 2]

The matrix is profiles x cases: the generated cases (cases.jsonl) run on the cpu profile only, as
they always did (`--device cpu` in their argv); the user cases (cases-user.jsonl) run on every
profile given, with `--device cpu` put first on cpu and no `--device` on a GPU profile (SGLang
derives it), and `check --platform <profile>`. `check` runs many commands per process (`check
--file`, a shell script of the missing cases, whose per-command JSON is check's JSON for that
command alone) to save its start-up.

Writes verify/.cache/report.json (every case with its class), verify/.cache/disagreements.md, and
prints one summary line per profile (and source).
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
    USER_CASES_FILE,
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
CHECK_USER_CACHE = CACHE_DIR / "check-user-cache"  # SGLANG_CONSTRAINTS_CACHE of the check runs

# Classes, in the order the summary prints them. "agree-*" and "argparse-agree" are agreements;
# every other class is listed in disagreements.md.
RAISED = ["agree-first", "definite-not-first", "other-first", "possible", "missed-rule", "missed-no-rule", "check-argparse"]
OK = ["false-definite", "false-argparse", "agree-ok"]
ARGPARSE = ["argparse-agree", "argparse-missed"]
OTHER = ["crash-agree", "real-crash", "real-timeout", "check-failed"]
UNREPLAYABLE = "unreplayable"  # the simulation, not SGLang, stopped the case: not counted
AGREEMENTS = {"agree-first", "agree-ok", "argparse-agree", "crash-agree"}


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
               jobs: int, timeout: float, profile: str = "cpu") -> float:
    """Run the cases the cache lacks through the oracle server; return the seconds it took."""
    missing = [case for case in cases if cache.get(keys[case["id"]]) is None]
    if not missing:
        return 0.0
    python = sgreal / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"compare: {python} missing: create the SGLang venv first (make verify does)")
    print(f"compare: {profile}: oracle: {len(missing)} cases to run ({len(cases) - len(missing)} cached)",
          file=sys.stderr, flush=True)
    started = time.monotonic()
    by_id = {case["id"]: case for case in missing}
    proc = subprocess.Popen(
        [str(python), str(VERIFY_DIR / "oracle_server.py"), "--jobs", str(jobs), "--timeout", str(timeout),
         "--profile", machine(profile)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=str(VERIFY_DIR),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:  # in a thread: the server answers while we still write
        for case in missing:
            proc.stdin.write(json.dumps({"id": case["id"], "argv": case["argv"], "env": case.get("env") or {}}) + "\n")
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
            print(f"compare: {profile}: oracle: {done}/{len(missing)} in {time.monotonic() - started:.0f} s",
                  file=sys.stderr, flush=True)
    feeder.join()
    if proc.wait() != 0:
        raise SystemExit(f"compare: oracle server exited with {proc.returncode}")
    return time.monotonic() - started


def check_installed_release(sgreal: Path, release: str) -> None:
    """Refuse a run whose oracle venv holds another SGLang than `release` (its answers would be
    cached under the wrong release). Reads the installed distribution's metadata, without importing
    sglang; a missing venv is left to run_oracle (a run whose oracle answers are all cached needs none)."""
    python = sgreal / "bin" / "python"
    if not python.exists():
        return
    proc = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('sglang'))"],
                          capture_output=True, text=True)
    installed = proc.stdout.strip()
    if proc.returncode == 0 and installed != release:
        raise SystemExit(f"compare: {sgreal} has sglang {installed}, the run is for {release} "
                         "(--release, or --rules' source.release): pass the matching --sgreal")


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
STARTED_FROM: dict[str, Any] | None = None  # `extractor_state()` when the run took its snapshot


# GPU memory (MiB) of a simulated profile whose `check --platform` profile assumes another size: passed
# as --device-memory so that both sides size their defaults by the same memory (none now: each GPU of
# extractor/data/platforms.json has its own size, an H200's 143771 MiB as the oracle simulates it).
DEVICE_MEMORY_OVERRIDES: dict[str, int] = {}


# The cpu profile with the user cases run as typed: no `--device cpu` put first (a GPU launch line
# checked on a host without accelerators, where SGLang cannot derive the device).
AS_TYPED = "cpu-as-typed"


# Variables SGLang reads as it is imported (`SGLANG_USE_CPU_ENGINE` chooses the platform whose
# `get_device` derives the device): the oracle's children are forked from a server that imported
# SGLang first, and apply a case's variables after that. A case run as typed that sets one is not
# replayed (the CPU engine itself needs sgl_kernel's CPU build, which this machine lacks).
IMPORT_TIME_ENV = frozenset({"SGLANG_USE_CPU_ENGINE"})


def replayed(real: dict[str, Any], case: dict[str, Any], profile: str) -> dict[str, Any]:
    """The oracle's record, or `unreplayable` where the harness cannot apply what the case sets."""
    chosen = sorted(IMPORT_TIME_ENV & set(case.get("env") or {}))
    if profile != AS_TYPED or not chosen:
        return real
    return {**real, "status": UNREPLAYABLE,
            "unreplayable_reason": f"{', '.join(chosen)} is read as SGLang is imported, before the case's variables apply"}


def machine(profile: str) -> str:
    """The machine a profile simulates (the oracle's --profile, check's --platform)."""
    return "cpu" if profile == AS_TYPED else profile


def device_first(profile: str) -> list[str]:
    """What the user cases get put first on a profile: `--device cpu` on cpu, else nothing."""
    return ["--device", "cpu"] if profile == "cpu" else []


def check_options(tool: list[str], profile: str = "cpu") -> list[str]:
    """Options to pass, from what `check --help` lists today (the interface is growing)."""
    profile = machine(profile)
    text = subprocess.run(tool + ["check", "--help"], capture_output=True, text=True, cwd=str(WORKDIR)).stdout
    options: list[str] = []
    if "--platform" in text:
        options += ["--platform", profile]
    if "--device-memory" in text and profile == "cpu":
        options += ["--device-memory", str(host_memory_mib())]
    elif "--device-memory" in text and profile in DEVICE_MEMORY_OVERRIDES:
        options += ["--device-memory", str(DEVICE_MEMORY_OVERRIDES[profile])]
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


def check_fingerprint(tool: list[str], rules: Path, options: list[str], model_folder: Path, profile: str = "cpu") -> str:
    """sha256 of check's JSON for the canary launch: part of the cache key, so that results of an
    older `check` (same rules.json, other code) are recomputed, not mixed with new ones."""
    device = device_first(profile)
    result = run_check(tool, rules, options, device + ["--model-path", str(model_folder)] + CANARY_ARGS, 300.0)
    return sha256_json(result.get("doc") or result.get("failed"))


def run_check(tool: list[str], rules: Path, options: list[str], argv: list[str], timeout: float,
              env: dict[str, str] | None = None) -> dict[str, Any]:
    env_options = [word for name, value in sorted((env or {}).items()) for word in ("--env", f"{name}={value}")]
    command = tool + ["check", "--format", "json", "--rules", str(rules)] + options + env_options + ["--"] + argv
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
        {k: e.get(k) for k in ("certainty", "id", "location", "message", "first", "is_first", "order", "rank", "fails_with") if k in e}
        for e in doc.get("errors", [])
    ]
    return keep


BATCH = 40  # commands per `check --file` run


def run_check_batch(tool: list[str], rules: Path, options: list[str], batch: list[dict[str, Any]],
                    timeout: float, folder: Path) -> list[dict[str, Any]]:
    """check's JSON for several cases from one process: a shell script with one launch command a
    line (the environment as NAME=VALUE prefixes), read by `check --file`; the JSON of each command
    is what `check -- <argv>` prints for it. A batch whose output does not parse falls back to one
    run per case."""
    import shlex
    import tempfile

    lines = []
    for case in batch:
        env = " ".join(f"{name}={shlex.quote(value)}" for name, value in sorted((case.get("env") or {}).items()))
        words = " ".join(shlex.quote(word) for word in case["argv_run"])
        lines.append(f"{env + ' ' if env else ''}python -m sglang.launch_server {words}")
    with tempfile.NamedTemporaryFile("w", suffix=".sh", dir=folder, delete=False, encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
        script = Path(handle.name)
    command = tool + ["check", "--format", "json", "--rules", str(rules)] + options + ["--file", str(script)]
    started = time.monotonic()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, cwd=str(WORKDIR), timeout=timeout * len(batch))
        doc = json.loads(proc.stdout)
        by_line = {entry.get("line"): entry for entry in doc["commands"]}
        if len(by_line) != len(batch):
            raise ValueError(f"{len(by_line)} answers for {len(batch)} commands")
    except (subprocess.TimeoutExpired, json.JSONDecodeError, KeyError, TypeError, ValueError):
        return [run_check(tool, rules, options, case["argv_run"], timeout, case.get("env")) for case in batch]
    finally:
        script.unlink(missing_ok=True)
    seconds = round((time.monotonic() - started) / len(batch), 2)
    results = []
    for number, _case in enumerate(batch, 1):
        entry = {k: v for k, v in by_line[number].items() if k not in ("file", "line")}
        definite = any(e.get("certainty") == "definite" for e in entry.get("errors", []))
        results.append({"exit": 1 if definite or entry.get("argument_errors") else 0, "doc": slim(entry),
                        "seconds": seconds, "batched": True})
    return results


def run_checks(cases: list[dict[str, Any]], cache: JsonlCache, keys: dict[str, str], tool: list[str], rules: Path,
               options: list[str], jobs: int, timeout: float, failures: dict[str, dict[str, Any]],
               profile: str = "cpu", batch_size: int = BATCH) -> float:
    """Run the checks the cache lacks. A run that printed no JSON (the CLI broke, or timed out)
    goes to `failures`, not to the cache: the extractor is being worked on, so try again next time."""
    missing = [case for case in cases if cache.get(keys[case["id"]]) is None]
    if not missing:
        return 0.0
    print(f"compare: {profile}: check: {len(missing)} cases to run ({len(cases) - len(missing)} cached), "
          f"{jobs} processes at a time, {batch_size} commands each", file=sys.stderr, flush=True)
    started = time.monotonic()
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    batches = [missing[i:i + batch_size] for i in range(0, len(missing), batch_size)] if batch_size > 1 else []
    done = 0
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        if batches:
            futures = {pool.submit(run_check_batch, tool, rules, options, batch, timeout, CACHE_DIR): batch for batch in batches}
        else:
            futures = {pool.submit(lambda c: [run_check(tool, rules, options, c["argv_run"], timeout, c.get("env"))], case): [case]
                       for case in missing}
        for future in as_completed(futures):
            for case, outcome in zip(futures[future], future.result()):
                result = dict(outcome, id=case["id"])
                if "failed" in result:
                    failures[keys[case["id"]]] = result
                else:
                    cache.put(keys[case["id"]], result)
                done += 1
            elapsed = time.monotonic() - started
            print(f"compare: {profile}: check: {done}/{len(missing)} in {elapsed:.0f} s "
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
    if status == UNREPLAYABLE:
        out["class"] = UNREPLAYABLE
        out["unreplayable_reason"] = real.get("unreplayable_reason")
    elif status == "crash":
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
    if out.get("class") == "real-crash" and crash_foreseen(real, doc, first, index):
        out["class"] = "crash-agree"
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
        said = next((e.get("message", "") for e in errors if e["id"] == first), "")
        out["message"] = message_agreement(real.get("message") or "", said)
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


def message_agreement(real: str, said: str) -> str:
    """Does check's message of the real first error read as SGLang printed it: `same` (spaces aside),
    `template` (a placeholder left as written), or `differs` (a wrong value filled in)?"""
    if " ".join(real.split()) == " ".join(said.split()) or not real and said.startswith("AssertionError without a message"):
        return "same"  # (a bare assert: SGLang prints no message, check says which assert)
    return "template" if re.search(r"\{[^{}]+\}", said) and not re.search(r"\{[^{}]+\}", real) else "differs"


def crash_foreseen(real: dict[str, Any], doc: dict[str, Any], first: str | None, index: RuleIndex) -> bool:
    """Did check name, as the launch's first error, the guard whose own test the real run crashed on
    (`fails_with` the same exception, the crash's innermost sglang frame between the guard's innermost
    enclosing `if` and the end of its raise), or the raise the library's error left SGLang through
    (a frame of the traceback at the guard's raise)?"""
    finding = next((e for e in doc.get("errors", []) if e["id"] == first), None)
    rule = index.by_id.get(first or "")
    if finding is None or rule is None or not real.get("exception"):
        return False
    where = rule["location"]
    if rule.get("kind") == "raise" and any(
            frame[0] == where["file"] and where["line"] <= frame[1] <= where.get("end_line", where["line"])
            for frame in real.get("frames") or ()):
        return True  # raised again at the guard (`except ValueError as e: raise e` of a library's error)
    if not str(finding.get("fails_with", "")).startswith(real["exception"]):
        return False
    start = min([where["line"], *rule.get("enclosing", [])[-1:]])
    return real.get("file") == where["file"] and start <= (real.get("line") or 0) <= where.get("end_line", where["line"])


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


def summary_line(counts: Counter, total: int, label: str = "", release: str = RELEASE) -> str:
    """`H100: 412 cases; raised 150: agree-first 120 (80.0%), ...; accepted 230: false-definite 0, ...;
    argparse 20: agree 18, missed 2; unreplayable 30; real-crash ..., real-timeout ..., check-failed ...`"""
    raised = sum(counts[c] for c in RAISED)
    ok = sum(counts[c] for c in OK)
    parsed = sum(counts[c] for c in ARGPARSE)
    parts = [f"{label or 'verify ' + release}: {total} cases"]
    parts.append(f"raised {raised}: " + ", ".join(f"{c} {counts[c]}" + (f" ({pct(counts[c], raised)})" if c == "agree-first" else "")
                                                  for c in RAISED))
    parts.append(f"accepted {ok}: " + ", ".join(f"{c} {counts[c]}" for c in OK))
    parts.append(f"argparse {parsed}: " + ", ".join(f"{c.split('-', 1)[1]} {counts[c]}" for c in ARGPARSE))
    parts.append(f"{UNREPLAYABLE} {counts[UNREPLAYABLE]}")
    parts.append(", ".join(f"{c} {counts[c]}" for c in OTHER))
    return "; ".join(parts)


def md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_disagreements(rows: list[dict[str, Any]], path: Path, lines: list[str], release: str = RELEASE,
                        unlike: list[dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
    """`unlike`: the agree-first rows whose message is not as SGLang printed it."""
    order = {c: i for i, c in enumerate(RAISED + OK + ARGPARSE + OTHER + [UNREPLAYABLE])}
    rows = sorted(rows, key=lambda r: (r.get("profile", ""), order.get(r["class"], 99), r.get("real_place") or "", r["id"]))
    out = [f"# Disagreements of the differential test ({release})", ""] + [f"    {line}" for line in lines] + ["",
           "Classes: see verify/README.md. `real` is the real SGLang's first raise (file:line of the innermost",
           "sglang frame, exception, message); `check` is what `check --format json` said (its first definite error).", ""]
    for profile in sorted({r.get("profile", "cpu") for r in [*rows, *unlike]}):
        mine_all = [r for r in rows if r.get("profile", "cpu") == profile]
        out += [f"## {profile}", ""]
        places = Counter(r["real_place"] for r in mine_all if r.get("real_place") and r["class"] in RAISED)
        if places:
            out += ["### Real raise places with most disagreements", "",
                    "| place | count | classes | real message | check said most | sample argv |", "|---|---|---|---|---|---|"]
            for place, count in places.most_common(25):
                mine = [r for r in mine_all if r.get("real_place") == place and r["class"] in RAISED]
                classes = Counter(r["class"] for r in mine)
                said = Counter(r["check_said"] for r in mine).most_common(1)[0][0]
                sample = min(mine, key=lambda r: (len(r["args"]), r["id"]))
                out.append(f"| {place} | {count} | {', '.join(f'{c} {n}' for c, n in classes.most_common())} | "
                           f"{md_cell(sample['real'].get('message', '')[:140])} | {md_cell(said[:160])} | "
                           f"`{md_cell(' '.join(sample['args']) or '(plain)')}` ({sample['model']}) |")
            out.append("")
        false = Counter((r["check_said"].split(":", 1)[0]) for r in mine_all if r["class"] == "false-definite")
        if false:
            out += ["### false-definite: check's first definite error where the real launch succeeds", "",
                    "| check's error | count | sample argv |", "|---|---|---|"]
            for said, count in false.most_common(25):
                sample = min((r for r in mine_all if r["class"] == "false-definite" and r["check_said"].split(":", 1)[0] == said),
                             key=lambda r: (len(r["args"]), r["id"]))
                out.append(f"| {md_cell(sample['check_said'][:200])} | {count} | `{md_cell(' '.join(sample['args']) or '(plain)')}` ({sample['model']}) |")
            out.append("")
        worded = Counter(r["real_place"] for r in unlike if r.get("profile", "cpu") == profile)
        if worded:
            out += ["### The first error named, its message not as SGLang printed it", "",
                    "| place | count | how | real message | check said | sample argv |", "|---|---|---|---|---|---|"]
            for place, count in worded.most_common(25):
                sample = min((r for r in unlike if r.get("profile", "cpu") == profile and r["real_place"] == place),
                             key=lambda r: (len(r["args"]), r["id"]))
                out.append(f"| {place} | {count} | {sample['verdict']['message']} | "
                           f"{md_cell(sample['real'].get('message', '')[:160])} | {md_cell(sample['check_said'][:200])} | "
                           f"`{md_cell(' '.join(sample['args']) or '(plain)')}` ({sample['model']}) |")
            out.append("")
        out += ["### Every disagreement", "", "| class | case | argv | real | check |", "|---|---|---|---|---|"]
        for row in mine_all:
            argv = " ".join(row["args"]) or "(plain)"
            if row.get("env"):
                argv = " ".join(f"{k}={v}" for k, v in sorted(row["env"].items())) + " " + argv
            real = row["real_said"]
            label = row["class"] + (f" ({row['verdict']['no_rule']})" if row["verdict"].get("no_rule") and row["class"] == "missed-no-rule" else "")
            out.append(f"| {label} | {row['id']} ({row['model']}) | `{md_cell(argv)}` | {md_cell(real)} | {md_cell(row['check_said'])} |")
        out.append("")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def describe_real(real: dict[str, Any]) -> str:
    status = real["status"]
    if status == "ok":
        return "ok"
    if status == UNREPLAYABLE:
        return f"unreplayable: {real.get('unreplayable_reason', '')[:200]}"
    where = f"{real.get('file')}:{real.get('line')} " if real.get("file") else ""
    return f"{status} {where}{real.get('exception', '')}: {real.get('message', '')[:200]}"


def budget_sample(cases: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """At most `budget` user cases, deterministically: every base command first, then an evenly
    spaced sample of the mutations (all when budget <= 0 or enough)."""
    if budget <= 0 or len(cases) <= budget:
        return cases
    base = [c for c in cases if c["source"] == "user:base"]
    others = [c for c in cases if c["source"] != "user:base"]
    room = max(0, budget - len(base))
    keep = {id(c) for c in base[:budget]}
    if room and others:
        keep.update(id(others[j * len(others) // room]) for j in range(min(room, len(others))))
    return [c for c in cases if id(c) in keep]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=None,
                        help="the cases file (default: cases.jsonl for --source generated, cases-user.jsonl for user)")
    parser.add_argument("--source", choices=("generated", "user", "all"), default="generated",
                        help="generated: the cases from flags/rules (cpu only); user: the user commands on every "
                             "profile; all: both (default generated)")
    parser.add_argument("--profiles", default="cpu",
                        help="comma-separated machines to simulate for the user cases: cpu, H100, H200, B200, A100, "
                             "L40S, MI300X (oracle_server.py PROFILES; check gets --platform NAME), and "
                             f"{AS_TYPED} (cpu, the user cases without `--device cpu` put first). Default cpu")
    parser.add_argument("--budget", type=int, default=int(os.environ.get("VERIFY_USER_BUDGET", "0")),
                        help="at most this many user cases per profile (every base command, then an even sample "
                             "of the mutations); 0 = all (default 0 or $VERIFY_USER_BUDGET)")
    parser.add_argument("--rules", type=Path, default=DEFAULT_RULES)
    parser.add_argument("--sgreal", type=Path, default=DEFAULT_SGREAL, help="the SGLang venv (default /tmp/sgreal or $SGREAL_VENV)")
    parser.add_argument("--release", default=None,
                        help="the SGLang release the oracle runs (its cache key and the report's labels); default: "
                             f"--rules' source.release (a release's rules), else {RELEASE}. Must be the version installed in --sgreal")
    parser.add_argument("--jobs", type=int, default=2, help="parallel check runs and oracle children")
    parser.add_argument("--batch", type=int, default=BATCH, help="commands per check process (1: one `check --` each)")
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
    global WORKDIR, STARTED_FROM
    WORKDIR = ROOT if args.live else snapshot_extractor(SNAPSHOT)
    STARTED_FROM = extractor_state()  # the commit and local changes the snapshot was taken of, not those at the end
    # check keeps an index of the rules it reads (and compiled code) under its user cache, which
    # whoever works on the extractor meanwhile rewrites: a run once saw check's answer to the canary
    # change mid-run although its code (the snapshot) did not. Each run gets a cache of its own.
    if CHECK_USER_CACHE.exists():
        shutil.rmtree(CHECK_USER_CACHE)
    CHECK_USER_CACHE.mkdir(parents=True)
    os.environ["SGLANG_CONSTRAINTS_CACHE"] = str(CHECK_USER_CACHE)
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]

    # The runs: (profile, source, cases). Generated cases carry `--device cpu` and run on cpu only.
    runs: list[tuple[str, str, list[dict[str, Any]]]] = []
    if args.source in ("generated", "all"):
        cases = list(read_jsonl(args.cases if args.cases and args.source == "generated" else CASES_FILE))
        if not cases:
            raise SystemExit("compare: no generated cases: run verify/cases.py first")
        runs.append(("cpu", "generated", cases))
    if args.source in ("user", "all"):
        user = list(read_jsonl(args.cases if args.cases and args.source == "user" else USER_CASES_FILE))
        if not user:
            raise SystemExit("compare: no user cases: run verify/cases.py --source user first")
        user = budget_sample(user, args.budget)
        for profile in profiles:
            runs.append((profile, "user", user))
    report_path, disagreements_path = REPORT, DISAGREEMENTS
    last: set[str] | None = None
    if args.disagreements:
        if not REPORT.exists():
            raise SystemExit(f"compare: --disagreements needs a full run's {REPORT}")
        last = {row["row_key"] for row in json.loads(REPORT.read_text())["rows"]
                if row["class"] not in AGREEMENTS and row["class"] != UNREPLAYABLE}
        report_path, disagreements_path = CACHE_DIR / "report-disagreements.json", CACHE_DIR / "disagreements-again.md"

    rules = args.rules.resolve()
    rules_doc = json.loads(rules.read_text())
    rules_sha = sha256_file(rules)
    source_doc = rules_doc.get("source") or {}
    release = args.release or (source_doc.get("release") if source_doc.get("kind") == "release" else None) or RELEASE
    check_installed_release(args.sgreal, release)
    tool = args.tool.split()
    oracle_sha = sha256_file(VERIFY_DIR / "oracle_server.py")
    if args.fresh in ("oracle", "both"):
        ORACLE_CACHE.unlink(missing_ok=True)
    if args.fresh in ("check", "both"):
        CHECK_CACHE.unlink(missing_ok=True)
    oracle_cache, check_cache = JsonlCache(ORACLE_CACHE), JsonlCache(CHECK_CACHE)
    index = RuleIndex(rules_doc)
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    per_run: list[dict[str, Any]] = []
    changed_any = False
    for profile, source, cases in runs:
        label = profile if source == "user" else f"{profile} (generated)"
        # The argv each side runs on this profile: user cases get `--device cpu` on cpu only.
        prepared = []
        for case in cases:
            case = dict(case)
            device = device_first(profile) if source == "user" else []
            case["argv_run"] = device + case["argv"]
            case["row_key"] = f"{profile}|{source}|{case['id']}"
            prepared.append(case)
        cases = prepared
        if last is not None:
            cases = [c for c in cases if c["row_key"] in last]
        if args.limit and len(cases) > args.limit:
            cases = [cases[i * len(cases) // args.limit] for i in range(args.limit)]
        if not cases:
            continue
        options = check_options(tool, profile)
        canary_folder = Path(cases[0]["argv"][cases[0]["argv"].index("--model-path") + 1])
        fingerprint = check_fingerprint(tool, rules, options, canary_folder, profile)
        config_sha: dict[str, str] = {}
        for case in cases:
            if case["model"] not in config_sha:
                config_sha[case["model"]] = sha256_file(Path(case["argv"][case["argv"].index("--model-path") + 1]) / "config.json")
        # Keys: the generated cases on cpu keep the key layout they always had (their caches stay
        # valid); everything else is keyed by its profile too.
        def oracle_key(c: dict[str, Any]) -> str:
            head = ["oracle", f"sglang=={release}", oracle_sha, config_sha[c["model"]], c["key"]]
            return sha256_json(head if source == "generated" else head + [profile, c.get("env") or {}])

        def check_key(c: dict[str, Any]) -> str:
            head = ["check", rules_sha, fingerprint, options, config_sha[c["model"]], c["key"]]
            return sha256_json(head if source == "generated" else head + [profile, c.get("env") or {}])

        oracle_keys = {c["id"]: oracle_key(c) for c in cases}
        check_keys = {c["id"]: check_key(c) for c in cases}
        oracle_runs = [dict(c, argv=c["argv_run"]) for c in cases]
        oracle_seconds = run_oracle(oracle_runs, oracle_cache, oracle_keys, args.sgreal, args.jobs, args.oracle_timeout, profile)
        failures: dict[str, dict[str, Any]] = {}
        check_seconds = run_checks(cases, check_cache, check_keys, tool, rules, options, args.jobs, args.check_timeout,
                                   failures, profile, args.batch)
        changed = bool(check_seconds) and check_fingerprint(tool, rules, options, canary_folder, profile) != fingerprint
        if changed:
            changed_any = True
            print(f"compare: {label}: WARNING: check's answer to the canary changed during the run: its code changed; "
                  "rerun to recompute with one version", file=sys.stderr)

        counts: Counter = Counter()
        statuses: Counter = Counter()
        matches: Counter = Counter()
        first_how: Counter = Counter()
        no_rule: Counter = Counter()
        unreplayable: Counter = Counter()
        messages: Counter = Counter()
        for case in cases:
            real = oracle_cache.get(oracle_keys[case["id"]])
            check = check_cache.get(check_keys[case["id"]]) or failures.get(check_keys[case["id"]])
            assert real is not None and check is not None
            real = replayed(real, case, profile)
            statuses[real["status"]] += 1
            verdict = classify(real, check, index)
            counts[verdict["class"]] += 1
            matches[verdict.get("match", "-")] += real["status"] == "error"
            if verdict.get("first"):
                first_how[verdict["first_how"]] += 1
            if verdict["class"] == "missed-no-rule":
                no_rule[verdict["no_rule"]] += 1
            if "message" in verdict:
                messages[verdict["message"]] += 1
            if verdict["class"] == UNREPLAYABLE:
                unreplayable[(real.get("unreplayable_reason") or "")[:120]] += 1
            rows.append({
                "profile": profile, "source_set": source, "row_key": case["row_key"],
                "id": case["id"], "model": case["model"], "args": case["args"], "env": case.get("env") or {},
                "source": case["source"], "origin": case.get("origin"),
                "rule": case.get("rule"), "class": verdict["class"], "verdict": verdict,
                "real": {k: real.get(k) for k in ("status", "stage", "exception", "message", "file", "line", "function", "frames",
                                                 "cause", "statement", "unreplayable_reason", "resolved")
                         if real.get(k) is not None},
                "real_place": f"{real['file']}:{real['line']}" if real.get("file") and real["status"] == "error" else None,
                "real_said": describe_real(real),
                "check_said": describe_check(check),
                "check_seconds": check.get("seconds"),
            })
        line = summary_line(counts, len(cases), label, release)
        if counts["agree-first"]:  # the message as SGLang printed it, of the first errors named
            line += "; messages of agree-first: " + ", ".join(f"{k} {messages[k]}" for k in ("same", "template", "differs"))
        lines.append(line)
        per_run.append({
            "profile": profile, "source": source, "summary": line, "cases": len(cases), "classes": dict(counts),
            "oracle_statuses": dict(statuses), "check_options": options, "check_fingerprint": fingerprint,
            "check_changed_during_run": changed,
            "match_modes": {k: v for k, v in matches.items() if k != "-"}, "first_definite_known_by": dict(first_how),
            "missed_no_rule_by_reason": dict(no_rule), "messages_of_agree_first": dict(messages), "unreplayable_by_reason": dict(unreplayable.most_common(20)),
            "seconds": {"oracle": round(oracle_seconds, 1), "check": round(check_seconds, 1)},
        })
        print(f"compare: {label}: oracle statuses {json.dumps(dict(statuses), sort_keys=True)}; real raise matched by "
              f"{json.dumps({k: v for k, v in matches.items() if k != '-'}, sort_keys=True)}; "
              f"missed-no-rule by reason {json.dumps(dict(no_rule), sort_keys=True)}; "
              f"oracle {oracle_seconds:.0f} s, check {check_seconds:.0f} s (0 = all cached)", flush=True)

    disagreements = [r for r in rows if r["class"] not in AGREEMENTS]
    report = {
        "release": release, "rules": str(rules), "extractor": STARTED_FROM or extractor_state(), "rules_sha256": rules_sha,
        "check_changed_during_run": changed_any, "summary": lines, "runs": per_run, "rows": rows,
    }
    report_path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    unlike = [r for r in rows if r["verdict"].get("message", "same") != "same"]
    write_disagreements(disagreements, disagreements_path, lines, release, unlike)
    print(f"compare: {report_path}, {disagreements_path} ({len(disagreements)} disagreements)")
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
