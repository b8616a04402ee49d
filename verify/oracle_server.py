"""Run launch commands through the real SGLang's argument resolution and report the first error.

Runs under the SGLang venv's interpreter (/tmp/sgreal/bin/python), never under the project's: it
imports `sglang.srt.server_args` once (about 8 s), then forks one child per case, so that every
case starts from the same freshly imported state and no case can leak module-level caches,
environment variables or half-resolved records into the next one.

    /tmp/sgreal/bin/python verify/oracle_server.py [cases.jsonl] [--jobs 2] [--timeout 60] > results.jsonl

Input: JSON lines {"id", "argv"}; output: one JSON line per case, written as soon as it finishes
(so not in input order), with "status" one of
  ok        prepare_server_args, resolve_once and check_server_args all returned;
  error     an exception raised by a `raise`/`assert` statement of the sglang package: a guard;
  argparse  argparse rejected the command line (SystemExit from argparse, message from stderr);
  timeout   the child did not finish within --timeout seconds (killed with its process group);
  crash     anything else: an exception raised outside sglang (transformers, torch, network,
            JSON decoding), a Python error inside sglang that is no raise statement (TypeError,
            KeyError, ...), or a child that died without reporting.
Standard library only; no project code is imported.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import select
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterator

# Set before anything imports huggingface_hub: it reads these once, at import time. Offline so
# that a case never waits on the network; a resolution step that needs the Hub fails visibly.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

MAX_MESSAGE = 4000
OUTPUT_TAIL = 3000

SITE: str = ""  # site-packages of the imported sglang; frames are reported relative to it


def relative(filename: str) -> str | None:
    """`sglang/...` path of a frame's file, or None for a frame outside the sglang package."""
    path = os.path.realpath(filename)
    prefix = os.path.join(SITE, "sglang") + os.sep
    if not path.startswith(prefix):
        return None
    return os.path.relpath(path, SITE).replace(os.sep, "/")


_STATEMENTS: dict[str, list[tuple[int, int, str]]] = {}


def statement_kind(filename: str, line: int) -> str:
    """Class name of the innermost statement that spans `line` ("Raise", "Assert", "Expr", ...).

    Decides whether the exception left through a guard: a `raise`/`assert` statement, as opposed
    to a TypeError of `int(x)` or a KeyError of `d[k]` inside sglang code, which are crashes.
    """
    if filename not in _STATEMENTS:
        spans: list[tuple[int, int, str]] = []
        try:
            with open(filename, encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.stmt):
                    spans.append((node.lineno, node.end_lineno or node.lineno, type(node).__name__))
        except (OSError, SyntaxError, ValueError):
            pass
        _STATEMENTS[filename] = spans
    best: tuple[int, int, str] | None = None
    for start, end, kind in _STATEMENTS[filename]:
        if start <= line <= end and (best is None or end - start < best[1] - best[0]):
            best = (start, end, kind)
    return best[2] if best else "?"


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


def describe_exception(exc: BaseException, stage: str, output: str) -> dict[str, Any]:
    """Result record of a case whose resolution raised `exc` during `stage`."""
    summary = traceback.extract_tb(exc.__traceback__)
    frames = []
    for frame in summary:
        rel = relative(frame.filename)
        if rel is not None:
            frames.append([rel, frame.lineno, frame.name])
    record: dict[str, Any] = {
        "exception": type(exc).__name__,
        "message": clip(str(exc)),
        "stage": stage,
        "frames": frames,
    }
    cause = exc.__cause__ or exc.__context__
    if cause is not None:
        record["cause"] = {"exception": type(cause).__name__, "message": clip(str(cause), 1000)}
    innermost = summary[-1] if summary else None
    in_argparse = any(os.path.basename(f.filename) == "argparse.py" for f in summary)
    if isinstance(exc, SystemExit) and stage == "parse" and in_argparse:
        # argparse printed "usage: ...\nsglang serve: error: MESSAGE" to stderr, then exit(2).
        record["status"] = "argparse"
        lines = [line for line in output.splitlines() if ": error: " in line]
        record["message"] = lines[-1].split(": error: ", 1)[1] if lines else f"exit {exc.code}"
        record["exit_code"] = exc.code
    if frames:
        record["file"], record["line"], record["function"] = frames[-1]
    if "status" not in record:
        # A guard: the very frame the exception left from is sglang code, at a raise/assert
        # statement. Anything else (a library frame innermost, a TypeError of sglang code, a
        # sys.exit) is a crash, kept with its frames so it can still be looked at.
        kind = (
            statement_kind(innermost.filename, innermost.lineno)
            if innermost is not None and innermost.lineno is not None
            else "?"
        )
        record["statement"] = kind
        guard = innermost is not None and relative(innermost.filename) is not None and kind in ("Raise", "Assert")
        record["status"] = "error" if guard else "crash"
        if not guard and innermost is not None:
            record["raised_at"] = [innermost.filename, innermost.lineno, innermost.name]
        if not guard:
            record["output_tail"] = output[-OUTPUT_TAIL:]
    return record


def run_case(argv: list[str], report) -> dict[str, Any]:
    """Inside the child: the three stages of a launch, as `sglang serve` runs them."""
    from sglang.srt.server_args import prepare_server_args

    stage = "parse"
    try:
        report(stage)
        server_args = prepare_server_args(list(argv))
        stage = "resolve"
        report(stage)
        server_args.resolve_once()
        stage = "check"
        report(stage)
        server_args.check_server_args()
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: everything is a result
        sys.stdout.flush()
        sys.stderr.flush()
        return describe_exception(exc, stage, read_output())
    return {"status": "ok", "stage": "check"}


_OUTPUT_FD: int | None = None


def read_output() -> str:
    """What the child printed so far (its fds 1 and 2 point at one temporary file)."""
    if _OUTPUT_FD is None:
        return ""
    try:
        size = os.fstat(_OUTPUT_FD).st_size
        os.lseek(_OUTPUT_FD, max(0, size - 64 * 1024), os.SEEK_SET)
        return os.read(_OUTPUT_FD, 64 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""


def child_main(case: dict[str, Any], write_fd: int, output_fd: int) -> None:
    """Body of a forked child; never returns."""
    global _OUTPUT_FD
    try:
        os.setpgid(0, 0)  # its own process group: a timeout kills whatever it spawned too
        # SGLang's logging and warnings go to the case's output file, not to our stdout (which
        # carries the results); fd-level so that C extensions are redirected as well.
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        _OUTPUT_FD = os.dup(output_fd)
        sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), write_through=True)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        pipe = os.fdopen(write_fd, "w", buffering=1)

        def report(stage: str) -> None:
            pipe.write(json.dumps({"stage": stage}) + "\n")

        before = set(sys.modules)
        started = time.monotonic()
        result = run_case(case["argv"], report)
        result["seconds"] = round(time.monotonic() - started, 3)
        if case.get("report_modules"):
            result["modules"] = [name for name in list(sys.modules) if name not in before]
        pipe.write(json.dumps({"result": result}) + "\n")
        pipe.flush()
    except BaseException:  # the harness itself failed: say so, the parent marks a crash
        try:
            os.write(write_fd, (json.dumps({"harness_error": traceback.format_exc()}) + "\n").encode())
        except OSError:
            pass
    finally:
        os._exit(0)  # skip atexit handlers and buffered files inherited from the parent


@dataclass
class Running:
    case: dict[str, Any]
    pid: int
    fd: int
    output: Any  # the temporary file object the child writes its output to
    deadline: float
    started: float
    buffer: bytes = b""
    stage: str = "start"
    result: dict[str, Any] | None = None
    harness_error: str | None = None
    lines: list[str] = field(default_factory=list)


def spawn(case: dict[str, Any], timeout: float) -> Running:
    output = tempfile.TemporaryFile()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        child_main(case, write_fd, output.fileno())
    os.close(write_fd)
    now = time.monotonic()
    return Running(case, pid, read_fd, output, now + timeout, now)


def consume(job: Running, data: bytes) -> None:
    job.buffer += data
    while b"\n" in job.buffer:
        line, job.buffer = job.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "stage" in message:
            job.stage = message["stage"]
        elif "result" in message:
            job.result = message["result"]
        elif "harness_error" in message:
            job.harness_error = message["harness_error"]


def output_tail(job: Running) -> str:
    job.output.seek(0, os.SEEK_END)
    size = job.output.tell()
    job.output.seek(max(0, size - OUTPUT_TAIL))
    return job.output.read().decode("utf-8", "replace")


def kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def finish(job: Running, timed_out: bool) -> dict[str, Any]:
    if timed_out:
        kill_group(job.pid)
    _, status = os.waitpid(job.pid, 0)
    if not timed_out:
        kill_group(job.pid)  # grandchildren a case left behind (its group), if any
    os.close(job.fd)
    record: dict[str, Any] = {"id": job.case["id"], "argv": job.case["argv"]}
    if job.result is not None:
        record.update(job.result)
    elif timed_out:
        record.update(status="timeout", stage=job.stage, exception="", message=f"no result within {job.deadline - job.started:.0f} s",
                      output_tail=output_tail(job))
    else:
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
        record.update(status="crash", stage=job.stage, exception="ChildDied",
                      message=f"child died without a result ({how})" + (f": {job.harness_error}" if job.harness_error else ""),
                      output_tail=output_tail(job))
    record["seconds"] = round(time.monotonic() - job.started, 3)
    job.output.close()
    return record


def run_one(case: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One case, synchronously (the warm-up)."""
    job = spawn(case, timeout)
    while True:
        remaining = job.deadline - time.monotonic()
        if remaining <= 0:
            return finish(job, timed_out=True)
        readable, _, _ = select.select([job.fd], [], [], remaining)
        if readable:
            data = os.read(job.fd, 1 << 16)
            if not data:
                return finish(job, timed_out=False)
            consume(job, data)


def preload(cases: list[dict[str, Any]], timeout: float) -> None:
    """Import in the parent what resolving a plain launch imports in a child.

    Resolution imports ~2,000 modules lazily (torch, flashinfer, transformers, the model and
    quantization registries): ~9 s a case. A warm-up child per model folder reports the modules
    it added; importing them here, before forking, makes every later child start with them. Only
    imports are repeated, never a resolution, so no case-dependent state reaches the parent.
    """
    import importlib

    started = time.monotonic()
    seen_paths: set[str] = set()
    names: list[str] = []
    for case in cases:
        argv = case["argv"]
        path = argv[argv.index("--model-path") + 1] if "--model-path" in argv[:-1] else None
        if path is None or path in seen_paths:
            continue
        seen_paths.add(path)
        plain = ["--device", "cpu", "--model-path", path]
        result = run_one({"id": "warm-up", "argv": plain, "report_modules": True}, timeout)
        for name in result.get("modules", []):
            if name not in names:
                names.append(name)
        if len(seen_paths) >= 3:
            break
    failed = 0
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except BaseException:  # a module that only imports in a certain order: the child will
            failed += 1
    print(f"oracle: preloaded {len(names) - failed} modules ({failed} failed) in {time.monotonic() - started:.1f} s",
          file=sys.stderr, flush=True)


def read_cases(path: str | None) -> Iterator[dict[str, Any]]:
    handle = open(path, encoding="utf-8") if path and path != "-" else sys.stdin
    for line in handle:
        line = line.strip()
        if line:
            case = json.loads(line)
            yield {"id": case["id"], "argv": list(case["argv"])}


def main(argv: list[str] | None = None) -> int:
    global SITE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="?", help="JSON-lines file of cases (default stdin)")
    parser.add_argument("-o", "--output", help="JSON-lines results (default stdout)")
    parser.add_argument("--jobs", type=int, default=1, help="children at a time")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--no-preload", action="store_true", help="skip the warm-up imports (slower, for comparison)")
    args = parser.parse_args(argv)

    # Results go to a private copy of stdout; fd 1 itself then points at stderr, so that anything
    # an imported module prints cannot corrupt the JSON lines.
    if args.output:
        out = open(args.output, "w", encoding="utf-8")
    else:
        out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)
    started = time.monotonic()
    import sglang  # noqa: F401  (the import the children inherit)
    import sglang.srt.server_args  # noqa: F401

    SITE = os.path.realpath(os.path.dirname(os.path.dirname(sglang.__file__)))
    version = getattr(sglang, "__version__", "?")
    print(f"oracle: sglang {version} imported in {time.monotonic() - started:.1f} s from {SITE}", file=sys.stderr, flush=True)

    cases = list(read_cases(args.cases))
    if not args.no_preload:
        preload(cases, args.timeout)
    pending = iter(cases)
    running: dict[int, Running] = {}
    done = 0
    exhausted = False
    while running or not exhausted:
        while not exhausted and len(running) < max(1, args.jobs):
            case = next(pending, None)
            if case is None:
                exhausted = True
                break
            job = spawn(case, args.timeout)
            running[job.fd] = job
        if not running:
            break
        now = time.monotonic()
        wait = max(0.0, min(job.deadline for job in running.values()) - now)
        readable, _, _ = select.select(list(running), [], [], wait)
        for fd in readable:
            job = running[fd]
            data = os.read(fd, 1 << 16)
            if data:
                consume(job, data)
                continue
            record = finish(running.pop(fd), timed_out=False)
            out.write(json.dumps(record, sort_keys=True) + "\n")
            out.flush()
            done += 1
        now = time.monotonic()
        for fd, job in list(running.items()):
            if now >= job.deadline:
                record = finish(running.pop(fd), timed_out=True)
                out.write(json.dumps(record, sort_keys=True) + "\n")
                out.flush()
                done += 1
    print(f"oracle: {done} cases in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
