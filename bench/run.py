"""Benchmark: extraction against the parser floor on real releases, incremental extraction over a git
history, diff of cached sources, and history cold/warm, serial/parallel.

Run with `make bench`. Standard library timing only; prints a table and writes bench/results.json.
It is a benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractor.core.collector import collect_less_until_exit  # noqa: E402
from extractor.products.extraction.extraction import extract, no_collections  # noqa: E402
from extractor.products.extraction.output import extract_documents, write_documents  # noqa: E402
from extractor.sources.layout import find_layout  # noqa: E402
from extractor.sources.trees import SourceTree, cache_root, path_tree, release_tree  # noqa: E402

RELEASES = ("0.5.18", "0.5.23")
HISTORY_RANGE = "0.5.10..0.5.23"
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
SYNTHETIC_FUNCTIONS = 2000  # ~25k lines, larger than any real read set
GIT_RELEASES = ("0.5.22", "0.5.23")  # a commit each, then one commit that changes one function
# Targets of the speed issue (issue 17), printed with pass/fail.
TARGET_INCREMENTAL = 0.20  # incremental extraction of a one-function change, over its cold extraction
TARGET_DIFF_CPU_S = 2.0  # diff of two cached releases, CPU seconds of the whole command
TARGET_EXTRACT_OVER_LIBCST = 3.0  # full extract of 0.5.23 over the libcst parse of the same files


def full_extract(tree: SourceTree, out: Path, timings: dict[str, float] | None = None) -> None:
    """What `sglang-constraints extract` does after reading its arguments: every document, validated, written."""
    ex = extract(tree, timings=timings)
    start = time.perf_counter()
    with no_collections():  # as `extract` writes them
        write_documents(out / ex.info.label, extract_documents(ex))
    if timings is not None:
        timings["documents"] = time.perf_counter() - start


def synthetic_tree(folder: Path) -> SourceTree:
    """A made-up server_args.py with many handler methods, each a chain of guards."""
    lines = ["import dataclasses", "", "", "@dataclasses.dataclass", "class ServerArgs:"]
    lines += [f"    f{i}: int = 0" for i in range(200)]
    lines += ["", "    def __post_init__(self):"]
    lines += [f"        self._handle_{i}()" for i in range(SYNTHETIC_FUNCTIONS)]
    for i in range(SYNTHETIC_FUNCTIONS):
        a, b, c = f"f{i % 200}", f"f{(i * 7) % 200}", f"f{(i * 13) % 200}"
        lines += [
            "",
            f"    def _handle_{i}(self):",
            f"        limit = self.{a} * 2",
            f"        if self.{b} > limit and self.{c} != {i}:",
            f'            raise ValueError("guard {i} a")',
            f"        if self.{a} == {i % 5}:",
            "            return",
            f"        if self.{c} in ({i}, {i + 1}) or not self.{b}:",
            f'            raise ValueError(f"guard {i} b {{self.{c}}}")',
            f"        if self.{b} is None:",
            f"            self.{b} = {i}",
        ]
    package = folder / "sglang" / "srt"
    package.mkdir(parents=True, exist_ok=True)
    (package / "server_args.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path_tree(folder)


# The parse floors, in a process of their own as the extract is timed: median wall seconds of REPEATS
# `ast` parses of the files read, libcst parses of them, and libcst parses of the layout's files alone.
# argv: the JSON file of texts, the layout's count among them (first), REPEATS, the collector
# ("command": as `extract` sets it; "default": as Python starts).
_PARSE_FLOORS = """
import ast, json, statistics, sys, time
import libcst
texts, layout = json.load(open(sys.argv[1], encoding="utf-8")), int(sys.argv[2])
if sys.argv[4] == "command":
    from extractor.core.collector import collect_less_until_exit
    collect_less_until_exit()
def median(parse, items):
    times = []
    for _ in range(int(sys.argv[3])):
        start = time.perf_counter()
        trees = [parse(t) for t in items]
        times.append(time.perf_counter() - start)
        del trees
    return statistics.median(times)
print(json.dumps([median(ast.parse, texts), median(libcst.parse_module, texts), median(libcst.parse_module, texts[:layout])]))
"""


def parse_floors(texts: list[str], layout: int, collector: str) -> tuple[float, float, float]:
    """(ast, libcst, libcst of the first `layout` texts) parse seconds in a fresh process (see _PARSE_FLOORS)."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "texts.json"
        source.write_text(json.dumps(texts), encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", _PARSE_FLOORS, str(source), str(layout), str(REPEATS), collector],
                              check=True, capture_output=True, text=True, cwd=ROOT)
    ast_s, cst_s, layout_s = json.loads(done.stdout)
    return ast_s, cst_s, layout_s


def measure_source(name: str, tree: SourceTree, argv: list[str]) -> dict:
    """The parse floors and a full `extract` of one source (`argv` names it to the command)."""
    stages: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as out:
        full_extract(tree, Path(out), stages)  # in this process, split by stage; and what it reads
    layout = find_layout(tree.paths()).files
    # The files the extraction reads: the layout's, and the modules it follows calls into (it indexes
    # them with `ast` and parses with libcst the functions it walks).
    read = sorted(path for path, seen in tree.looked_at().items() if isinstance(seen, str))
    ordered = [p for p in read if p in layout] + [p for p in read if p not in layout]
    texts = [tree.read_text(p) for p in ordered]
    # Both sides as the command runs: a fresh process with its collector, one after the other REPEATS
    # times (the machine's speed moves by a third within minutes: each side sees the same stretches),
    # the median of each. The parse under Python's default collector (a plain loop over
    # libcst.parse_module) is slower, and shown beside it.
    floors, runs = [], []  # (ast, libcst, layout) parse seconds; (wall s, peak RSS MiB) of extract
    for _ in range(REPEATS):
        floors.append(parse_floors(texts, len(layout), "command"))
        runs.append(command_extract(argv))
    parse_ast, parse_cst, parse_layout = (statistics.median(floor[i] for floor in floors) for i in range(3))
    parse_cst_default = parse_floors(texts, len(layout), "default")[1]
    extract_time = statistics.median(wall for wall, _ in runs)
    return {
        "source": name,
        "files": len(read),
        "lines": sum(t.count("\n") for t in texts),
        "layout_files": len(layout),
        "ast_parse_s": round(parse_ast, 3),
        "libcst_parse_s": round(parse_cst, 3),
        "libcst_parse_default_collector_s": round(parse_cst_default, 3),
        "libcst_parse_layout_s": round(parse_layout, 3),
        "extract_s": round(extract_time, 3),
        "extract_over_libcst": round(extract_time / parse_cst, 2),
        "extract_over_libcst_default_collector": round(extract_time / parse_cst_default, 2),
        "extract_over_libcst_layout": round(extract_time / parse_layout, 2),
        "extract_over_ast": round(extract_time / parse_ast, 2),
        "peak_rss_mib": max(rss for _, rss in runs),
        "stages_s": {k: round(v, 3) for k, v in stages.items()},
    }


# `extract` as the command runs it, then the peak resident memory of its process (ru_maxrss, KiB).
_EXTRACT_RSS = (
    "import resource, sys; from extractor.cli import run; code = run(); "
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(code)"
)


def command_extract(argv: list[str]) -> tuple[float, float]:
    """`sglang-constraints extract ARGV --no-cache` in a process of its own, cold, as a user runs it:
    its wall seconds and its peak resident memory (MiB)."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _EXTRACT_RSS, "extract", *argv, "--no-cache", "-o", out],
                              check=True, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - start
    return wall, round(int(done.stdout.split()[-1]) / 1024, 1)


def measure_history() -> dict | None:
    """history over a release range, cold (empty extraction cache) and warm, serial and on all cores."""
    probe = subprocess.run([sys.executable, "-m", "extractor", "history", "--help"], capture_output=True, cwd=ROOT)
    if probe.returncode != 0:
        return None
    results: dict[str, float] = {}
    jobs = os.cpu_count() or 1
    for label, n in (("serial", 1), ("parallel", jobs)):
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
            env = {**os.environ, "SGLANG_CONSTRAINTS_EXTRACTION_CACHE": cache}
            for phase in ("cold", "warm"):
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "extractor", "history", "--releases", HISTORY_RANGE,
                     "--jobs", str(n), "-o", out],
                    check=True, capture_output=True, cwd=ROOT, env=env,
                )
                results[f"{phase}_{label}_s"] = round(time.perf_counter() - start, 2)
    results["warm_over_cold"] = round(results["warm_serial_s"] / results["cold_serial_s"], 3)
    results["serial_over_parallel"] = round(results["cold_serial_s"] / results["cold_parallel_s"], 2)
    results["jobs"] = jobs
    return results


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def history_repo(repo: Path) -> list[tuple[str, str]]:
    """A SGLang-shaped git repository: a commit with each release's package, then a commit that
    changes one function (the message of the first `raise ValueError("...")` of arg_groups/); returns
    (what, commit) per commit."""
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "config", "user.name", "bench")
    commits = []
    for version in GIT_RELEASES:
        tree = release_tree(version)
        shutil.rmtree(repo / "python", ignore_errors=True)
        for path in tree.paths():
            target = repo / "python" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tree.read_bytes(path))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", version)
        commits.append((version, git(repo, "rev-parse", "HEAD")))
    for path in sorted((repo / "python" / "sglang" / "srt" / "arg_groups").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if 'raise ValueError("' in text:
            path.write_text(text.replace('raise ValueError("', 'raise ValueError("Changed: ', 1), encoding="utf-8")
            git(repo, "commit", "-q", "-am", f"one function of {path.name}")
            commits.append((f"{GIT_RELEASES[-1]} + one function", git(repo, "rev-parse", "HEAD")))
            break
    return commits


def cpu_time(fn) -> tuple[float, object]:
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


# One extraction into a cache folder, as `diff --git` or `history` makes it, in a process of its own
# started as a command starts (`cli`'s imports, `start_process`); prints the key its documents are cached under.
_EXTRACT_ONCE = (
    "import sys; from pathlib import Path; from extractor.cli import start_process; start_process(); "
    "from extractor.products.reuse.cached import extract_documents; from extractor.sources.trees import git_tree; "
    "print(extract_documents(git_tree(sys.argv[1], sys.argv[2]), folder=Path(sys.argv[3]), prune=False)[2])"
)


def extract_in_process(repo: Path, commit: str, folder: Path) -> tuple[float, bytes]:
    """CPU seconds of one extraction in a fresh process (what a command costs: its imports included, no
    warm in-process caches), and the bytes of the rules and flags documents it cached."""
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode cache
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", _EXTRACT_ONCE, str(repo), commit, str(folder)],
                          check=True, capture_output=True, text=True, cwd=ROOT, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    key = done.stdout.strip()
    documents = (folder / f"{key}.json").read_bytes() + (folder / f"{key}.flags.json").read_bytes()
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, documents


def measure_git_history(repo: Path, cache: Path) -> list[dict]:
    """Per commit: extraction (the rules and flags documents, as `diff --git` makes them) from an empty
    cache, and from the cache holding the commits before it (kept walks, run and witnesses reused);
    CPU seconds of each in a process of its own, the median of REPEATS each (every incremental run
    from a copy of the cache as it was before the commit), outputs compared byte for byte."""
    commits = history_repo(repo)
    rows = []
    for what, commit in commits:
        colds, warms, outputs = [], [], []
        for _ in range(REPEATS):
            with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as scratch:
                cold_s, cold = extract_in_process(repo, commit, Path(empty))
                before = Path(scratch) / "cache"
                shutil.copytree(cache, before)
                warm_s, warm = extract_in_process(repo, commit, before)
            colds.append(cold_s)
            warms.append(warm_s)
            outputs += [cold, warm]
        _, kept = extract_in_process(repo, commit, cache)  # the cache the next commit starts from
        cold_s, warm_s = statistics.median(colds), statistics.median(warms)
        rows.append({"commit": what, "cold_cpu_s": round(cold_s, 2), "incremental_cpu_s": round(warm_s, 2),
                     "incremental_over_cold": round(warm_s / cold_s, 3),
                     "identical": all(out == kept for out in outputs)})
    return rows


def measure_cached_diff(repo: Path, cache: Path) -> dict:
    """`diff` of the first two commits (both extractions cached): CPU seconds of the whole command the
    first time (compact forms and verdicts made) and again (read back); the reports compared.

    Python may keep its bytecode cache here, as an installed package has it (a machine that sets
    PYTHONDONTWRITEBYTECODE compiles every module of the tool on each start: about 0.3 s more)."""
    first, second = git(repo, "rev-list", "--reverse", "HEAD").split()[:2]
    env = {**os.environ, "SGLANG_CONSTRAINTS_EXTRACTION_CACHE": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    found: dict[str, float] = {}
    reports = []
    for phase in ("first", "again"):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-m", "extractor", "diff", "--git", str(repo), first, second,
                               "--format", "json"], capture_output=True, cwd=ROOT, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1):
            raise SystemExit(done.stderr.decode())
        reports.append(done.stdout)
        found[f"{phase}_cpu_s"] = round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2)
    found["identical"] = reports[0] == reports[1]
    return found


# The seed page's launch, its model named by a Hub id as launch lines name it.
SEED_COMMAND = ["--model-path", "Qwen/Qwen3-8B", "--disaggregation-mode", "prefill",
                "--disaggregation-decode-enable-offload-kvcache"]
SEED_ERROR = "The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side."
# Targets of the check speed issue (issue 34), CPU seconds, and as a ratio of a bare Python start
# (`python -c "import json"`) measured in the same run.
TARGET_CHECK_CPU_S = 0.1
TARGET_CHECK_OVER_BARE = 3.0
TARGET_FOLDER_CPU_S = 1.0
TARGET_EXPLAIN_CPU_S = 0.2
TARGET_FIRST_INDEX_CPU_S = 0.3


def child_cpu(argv: list[str], env: dict[str, str] | None = None) -> float:
    """CPU seconds of one run of the command line tool (user + system of the child), its output dropped;
    with Python's bytecode cache, as an installed package has it."""
    env = dict(env if env is not None else os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "extractor", *argv], capture_output=True, cwd=ROOT, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2)


def bare_start_cpu() -> float:
    """CPU seconds of a bare Python start, the floor of every command: best of three."""
    runs = []
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", "import json"], capture_output=True, cwd=ROOT)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        runs.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return round(min(runs), 3)


def measure_latencies() -> dict:
    """What a user waits for on a cached release: `check` of one command (the seed), of a folder of
    50 launch scripts, and `explain` of the seed error line, each answered again and evaluated afresh
    (`--fresh`); best of three, after a warm-up run that builds the release's index."""
    release = RELEASES[-1]
    with tempfile.TemporaryDirectory() as folder:
        for n in range(50):
            flags = " ".join(SEED_COMMAND[:2] + (["--tp-size", str(1 + n % 4)] if n % 2 else SEED_COMMAND[2:]))
            Path(folder, f"serve{n:02}.sh").write_text(f"python -m sglang.launch_server {flags}\n", encoding="utf-8")
        runs = {
            "check_one_cpu_s": ["check", "--release", release, "--", *SEED_COMMAND],
            "check_folder_50_cpu_s": ["check", "--release", release, "--file", *sorted(str(p) for p in Path(folder).glob("*.sh"))],
            "explain_cpu_s": ["explain", "--release", release, f"ValueError: {SEED_ERROR}"],
        }
        child_cpu(runs["check_one_cpu_s"])  # the index of the release, built once
        # Answered again: each line (and the error text) as an earlier run on the same rules, code and
        # options answered it (an editor, a hook, CI over unchanged files); --fresh: evaluated again.
        for argv in runs.values():
            child_cpu(argv)
        found = {name: min(child_cpu(argv) for _ in range(3)) for name, argv in runs.items()}
        found.update({name.replace("_cpu_s", "_fresh_cpu_s"): min(child_cpu([*argv[:3], "--fresh", *argv[3:]])
                                                                 for _ in range(3)) for name, argv in runs.items()})
        # The seed on a GPU profile (its bare launch there built by the first run), and naming a model
        # no check has named before (what launches found of a model path is kept for the next).
        # 50 distinct launch lines users wrote (SGLang's docs, recipes: verify/user_commands.txt), one per
        # script: the folder above repeats five lines, which a run checks once each.
        lines = [line for line in (ROOT / "verify" / "user_commands.txt").read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.startswith("#")]
        distinct = Path(folder, "distinct")
        distinct.mkdir()
        for n, line in enumerate(list(dict.fromkeys(lines))[:50]):
            Path(distinct, f"serve{n:02}.sh").write_text(line + "\n", encoding="utf-8")
        found["check_folder_50_distinct_cpu_s"] = min(child_cpu(["check", "--release", release, "--fresh", "--file",
                                                                 str(distinct)]) for _ in range(3))
        on_h100 = ["check", "--release", release, "--platform", "H100", "--fresh", "--", *SEED_COMMAND]
        found["check_one_h100_cpu_s"] = min(child_cpu(on_h100) for _ in range(3))
        found["check_one_new_model_cpu_s"] = min(
            child_cpu(["check", "--release", release, "--", SEED_COMMAND[0], f"{SEED_COMMAND[1]}-{os.getpid()}-{n}",
                       *SEED_COMMAND[2:]]) for n in range(3))
    found["bare_start_cpu_s"] = bare_start_cpu()
    found["check_one_over_bare"] = round(found["check_one_cpu_s"] / max(found["bare_start_cpu_s"], 0.001), 1)
    return found


def measure_first_runs() -> dict:
    """What the first use of a release costs, in a fresh cache: `check` of the seed and `explain` of its
    error line. The issue's target is the first use of the index of a cached release: the release
    (RELEASES[0]) extracted by `extract --release`, which writes its index, then the first command
    (the extraction itself not timed). Shown beside it, the first use with no index yet: the newest
    release, shipped in the package, its index built from the packed documents; and the older one with
    only its unpacked files in the cache (the download, network-bound, left out), extracted and indexed
    by that first command."""
    from extractor.products.reuse.shipped import shipped_releases

    found = {}
    for release, kind in ((RELEASES[-1], "shipped"), (RELEASES[0], "extracted"), (RELEASES[0], "indexed")):
        assert (release in shipped_releases()) == (kind == "shipped"), release
        for name, argv in (("check", ["check", "--release", release, "--", *SEED_COMMAND]),
                           ("explain", ["explain", "--release", release, f"ValueError: {SEED_ERROR}"])):
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "SGLANG_CONSTRAINTS_CACHE": cache}
                if kind != "shipped":
                    release_tree(release)  # a fresh machine's cache has no tree yet: fetched once, not timed
                    shutil.copytree(cache_root() / "trees" / release, Path(cache, "trees", release))
                if kind == "indexed":
                    subprocess.run([sys.executable, "-m", "extractor", "extract", "--release", release, "-o",
                                    str(Path(cache, "out"))], capture_output=True, cwd=ROOT, env=env, check=True)
                found[f"{name}_first_{kind}_cpu_s"] = child_cpu(argv, env)
    return found


def print_latencies(latencies: dict, first_runs: dict) -> None:
    """The latency lines, with the issue's targets: pass or FAIL."""
    bare = latencies["bare_start_cpu_s"]
    one, folder, explain = latencies["check_one_cpu_s"], latencies["check_folder_50_cpu_s"], latencies["explain_cpu_s"]
    first = first_runs["check_first_indexed_cpu_s"]
    print(f"latency on cached {RELEASES[-1]} (CPU s, best of 3; a bare Python start: {bare} s), answered again "
          f"(the same line or text, rules, code and options as an earlier run): "
          f"check of one command {one} ({latencies['check_one_over_bare']}x the bare start; target "
          f"<= {TARGET_CHECK_CPU_S} s and <= {TARGET_CHECK_OVER_BARE}x: "
          f"{verdict(one <= TARGET_CHECK_CPU_S and one <= TARGET_CHECK_OVER_BARE * bare)}), "
          f"of a folder of 50 {folder} (target <= {TARGET_FOLDER_CPU_S}: {verdict(folder <= TARGET_FOLDER_CPU_S)}), "
          f"explain {explain} (target <= {TARGET_EXPLAIN_CPU_S}: {verdict(explain <= TARGET_EXPLAIN_CPU_S)})")
    fresh_one, fresh_folder, fresh_explain = (latencies[f"{name}_fresh_cpu_s"] for name in
                                              ("check_one", "check_folder_50", "explain"))
    print(f"evaluated afresh (--fresh): check of one command {fresh_one} ({round(fresh_one / max(bare, 0.001), 1)}x; "
          f"target: {verdict(fresh_one <= TARGET_CHECK_CPU_S and fresh_one <= TARGET_CHECK_OVER_BARE * bare)}), "
          f"of the folder of 50 {fresh_folder} ({verdict(fresh_folder <= TARGET_FOLDER_CPU_S)}), explain "
          f"{fresh_explain} ({verdict(fresh_explain <= TARGET_EXPLAIN_CPU_S)}); on --platform H100 "
          f"{latencies['check_one_h100_cpu_s']}, naming a model not checked before "
          f"{latencies['check_one_new_model_cpu_s']}, of 50 distinct user launch lines "
          f"{latencies['check_folder_50_distinct_cpu_s']}")
    print(f"first use in a fresh cache (CPU s): of the index `extract --release {RELEASES[0]}` wrote: check {first} "
          f"(target <= {TARGET_FIRST_INDEX_CPU_S}: {verdict(first <= TARGET_FIRST_INDEX_CPU_S)}), explain "
          f"{first_runs['explain_first_indexed_cpu_s']}; with no index yet: {RELEASES[-1]}, shipped (its index built "
          f"from the packed documents): check {first_runs['check_first_shipped_cpu_s']}, explain "
          f"{first_runs['explain_first_shipped_cpu_s']}; {RELEASES[0]}, extracted from its unpacked files: "
          f"check {first_runs['check_first_extracted_cpu_s']}, explain {first_runs['explain_first_extracted_cpu_s']}")


def verdict(ok: bool) -> str:
    return "pass" if ok else "FAIL"


def main() -> int:
    collect_less_until_exit()  # as the command does: the in-process stage split costs what it costs there
    if os.environ.get("BENCH_ONLY") == "latency":  # the user-facing command times alone (a minute)
        print_latencies(measure_latencies(), measure_first_runs())
        return 0
    rows = []
    for version in RELEASES:
        rows.append(measure_source(version, release_tree(version), ["--release", version]))
    with tempfile.TemporaryDirectory() as folder:
        rows.append(measure_source(f"synthetic-{SYNTHETIC_FUNCTIONS}", synthetic_tree(Path(folder)), [folder]))
    with tempfile.TemporaryDirectory() as repo, tempfile.TemporaryDirectory() as cache:
        commits = measure_git_history(Path(repo), Path(cache))
        cached_diff = measure_cached_diff(Path(repo), Path(cache))
    history = None if os.environ.get("BENCH_SKIP_HISTORY") else measure_history()
    latencies = measure_latencies()
    first_runs = measure_first_runs()
    machine = {
        "python": platform.python_version(),
        "libcst": importlib.metadata.version("libcst"),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "system": platform.platform(),
    }
    header = (f"{'source':<18}{'files':>6}{'lines':>8}{'ast s':>8}{'libcst s':>10}{'layout':>8}{'extract s':>11}"
              f"{'c/b':>7}{'c/d':>7}{'c/l':>7}{'c/a':>7}{'RSS MiB':>9}")
    print(header)
    for r in rows:
        print(
            f"{r['source']:<18}{r['files']:>6}{r['lines']:>8}{r['ast_parse_s']:>8}{r['libcst_parse_s']:>10}"
            f"{r['libcst_parse_layout_s']:>8}{r['extract_s']:>11}{r['extract_over_libcst']:>7}"
            f"{r['extract_over_libcst_default_collector']:>7}"
            f"{r['extract_over_libcst_layout']:>7}{r['extract_over_ast']:>7}{r['peak_rss_mib']:>9}"
        )
    print("files: those the extraction reads (the layout's and the modules it follows); ast s, libcst s: their "
          "parse; layout: the libcst parse of the layout's files alone; all three in a process of their own "
          "with the command's collector; extract s: `extract --no-cache` in a process of its own (wall); c/b, "
          "c/l, c/a: extract over the libcst parse, over the layout's, over ast; c/d: over the libcst parse "
          "with Python's default collector")
    print("stages of one extract (s): " + "; ".join(
        f"{r['source']}: " + ", ".join(f"{k} {v}" for k, v in r["stages_s"].items()) for r in rows))
    print(f"{'git commit':<28}{'cold CPU s':>12}{'incremental CPU s':>19}{'ratio':>8}  identical")
    for c in commits:
        print(f"{c['commit']:<28}{c['cold_cpu_s']:>12}{c['incremental_cpu_s']:>19}{c['incremental_over_cold']:>8}"
              f"  {c['identical']}")
    print(f"diff of two cached commits (CPU s): first {cached_diff['first_cpu_s']}, again {cached_diff['again_cpu_s']}"
          f", identical {cached_diff['identical']}")
    if history:
        print(f"history {HISTORY_RANGE}: " + ", ".join(f"{k}={v}" for k, v in history.items()))
    print_latencies(latencies, first_runs)
    one_function = commits[-1]["incremental_over_cold"]
    ratio = next(r["extract_over_libcst"] for r in rows if r["source"] == RELEASES[-1])
    targets = {
        "incremental_one_function": {"value": one_function, "target": TARGET_INCREMENTAL,
                                     "pass": one_function <= TARGET_INCREMENTAL},
        "diff_cached_cpu_s": {"value": cached_diff["again_cpu_s"], "target": TARGET_DIFF_CPU_S,
                              "pass": cached_diff["again_cpu_s"] <= TARGET_DIFF_CPU_S},
        "extract_over_libcst": {"value": ratio, "target": TARGET_EXTRACT_OVER_LIBCST,
                                "pass": ratio <= TARGET_EXTRACT_OVER_LIBCST},
    }
    print(f"target: incremental extraction of a one-function change <= {TARGET_INCREMENTAL:.0%} of cold: "
          f"{one_function:.0%} {verdict(targets['incremental_one_function']['pass'])}")
    print(f"target: diff of two cached sources <= {TARGET_DIFF_CPU_S} s CPU: {cached_diff['again_cpu_s']} s "
          f"(first diff of the pair {cached_diff['first_cpu_s']} s) {verdict(targets['diff_cached_cpu_s']['pass'])}")
    layout_ratio = next(r["extract_over_libcst_layout"] for r in rows if r["source"] == RELEASES[-1])
    default_ratio = next(r["extract_over_libcst_default_collector"] for r in rows if r["source"] == RELEASES[-1])
    print(f"target: full extract of {RELEASES[-1]} <= {TARGET_EXTRACT_OVER_LIBCST}x the libcst parse of the files it "
          f"reads: {ratio}x {verdict(targets['extract_over_libcst']['pass'])} "
          f"(over the parse of the layout's files alone: {layout_ratio}x; over their parse with Python's default "
          f"collector: {default_ratio}x)")
    results = {"machine": machine, "repeats": REPEATS, "sources": rows, "git_commits": commits,
               "cached_diff": cached_diff, "targets": targets, "history": history, "latencies": latencies,
               "first_runs": first_runs}
    (ROOT / "bench" / "results.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    shutil.rmtree(ROOT / "bench" / "__pycache__", ignore_errors=True)
    sys.exit(main())
