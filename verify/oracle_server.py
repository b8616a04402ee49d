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
            KeyError, ...), or a child that died without reporting;
  unreplayable  (GPU profiles only) a failure the simulation causes, not a guard: an import of a
            package a GPU node has and this machine cannot load, or a CUDA runtime call
            (`unreplayable_reason` says which).
Standard library only; no project code is imported.

`--profile NAME` simulates a GPU machine (see PROFILES): before sglang is imported, torch-level
facts (torch.cuda.is_available/device_count/get_device_capability/get_device_name/
get_device_properties/mem_get_info/current_device, torch.version.cuda/hip) and what the machine's
tools report (`nvidia-smi`/`rocminfo` on PATH, the pynvml library's answers) are replaced with
those of an 8-GPU node of that kind. SGLang's own functions are never patched: its platform
detection, memory sizing and guards run for real on the simulated facts. What the simulation cannot
give (CUDA kernels, a CUDA context) stays missing: a case that reaches it is `unreplayable`
(see `unreplayable_reason`), not a verdict on the guards.
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

# ---------------------------------------------------------------- simulated GPU machines
#
# Each profile is an 8-GPU node. The name and memory in MiB are what torch and `nvidia-smi
# --query-gpu=name,memory.total` (or rocminfo's pool size) report on that machine: those of the GPU of
# the same name in extractor/data/platforms.json (`check --platform NAME` takes both from there).
PROFILES: dict[str, dict[str, Any]] = {
    "cpu": {},  # no simulation: this machine as it is
    "H100": {"vendor": "nvidia", "name": "NVIDIA H100 80GB HBM3", "capability": (9, 0), "memory_mib": 81559,
             "sms": 132, "driver": "575.57.08"},
    "H200": {"vendor": "nvidia", "name": "NVIDIA H200", "capability": (9, 0), "memory_mib": 143771,
             "sms": 132, "driver": "575.57.08"},
    "B200": {"vendor": "nvidia", "name": "NVIDIA B200", "capability": (10, 0), "memory_mib": 183359,
             "sms": 148, "driver": "575.57.08"},
    "A100": {"vendor": "nvidia", "name": "NVIDIA A100-SXM4-80GB", "capability": (8, 0), "memory_mib": 81920,
             "sms": 108, "driver": "575.57.08"},
    "L40S": {"vendor": "nvidia", "name": "NVIDIA L40S", "capability": (8, 9), "memory_mib": 46068,
             "sms": 142, "driver": "575.57.08"},
    "B300": {"vendor": "nvidia", "name": "NVIDIA B300 SXM6 AC", "capability": (10, 3), "memory_mib": 275040,
             "sms": 148, "driver": "580.95.05"},
    "A10G": {"vendor": "nvidia", "name": "NVIDIA A10G", "capability": (8, 6), "memory_mib": 23028,
             "sms": 80, "driver": "575.57.08"},
    "RTX5090": {"vendor": "nvidia", "name": "NVIDIA GeForce RTX 5090", "capability": (12, 0), "memory_mib": 32607,
                "sms": 170, "driver": "575.57.08"},
    "T4": {"vendor": "nvidia", "name": "Tesla T4", "capability": (7, 5), "memory_mib": 15360,
           "sms": 40, "driver": "575.57.08"},
    "MI300X": {"vendor": "amd", "name": "AMD Instinct MI300X", "capability": (9, 4), "memory_mib": 196592,
               "sms": 304, "gcn_arch": "gfx942:sramecc+:xnack-", "hip": "6.3.42131-fa1d09cbd"},
}
DEVICES_PER_NODE = 8
# torch.version.cuda stays what the installed torch was built with (13.0 for the pip wheel of
# SGLang 0.5.23): torchvision refuses to import when it differs from its own build.


class SimulatedDeviceProperties:
    """What torch.cuda.get_device_properties() returns, for one simulated device."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.name = spec["name"]
        self.major, self.minor = spec["capability"]
        self.total_memory = spec["memory_mib"] << 20
        self.multi_processor_count = spec["sms"]
        self.is_integrated = 0
        self.is_multi_gpu_board = 0
        self.max_threads_per_multi_processor = 2048
        self.max_threads_per_block = 1024
        self.warp_size = 64 if spec["vendor"] == "amd" else 32
        self.regs_per_multiprocessor = 65536
        self.shared_memory_per_block = 49152
        self.shared_memory_per_block_optin = 232448 if self.major >= 9 else 166912
        self.shared_memory_per_multiprocessor = 233472 if self.major >= 9 else 167936
        self.L2_cache_size = 50 * 1024 * 1024
        self.uuid = "00000000-0000-0000-0000-000000000000"
        self.pci_bus_id = 0
        self.pci_device_id = 0
        self.pci_domain_id = 0
        self.gcnArchName = spec.get("gcn_arch", "NVIDIA")

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory >> 20}MB, multi_processor_count={self.multi_processor_count})")


def _fake_tools(spec: dict[str, Any]) -> str:
    """A folder with `nvidia-smi` (NVIDIA) or `rocminfo` (AMD) scripts answering the queries SGLang
    makes of them, put first on PATH: on a real node these tools answer before torch is asked."""
    folder = tempfile.mkdtemp(prefix="oracle-tools-")
    python = sys.executable
    if spec["vendor"] == "nvidia":
        answers = {
            "memory.total": str(spec["memory_mib"]),
            "compute_cap": "{}.{}".format(*spec["capability"]),
            "driver_version": spec["driver"],
            "name": spec["name"],
            "count": str(DEVICES_PER_NODE),
        }
        body = (
            "import sys\n"
            f"answers = {answers!r}\n"
            "query = [a.split('=', 1)[1] for a in sys.argv[1:] if a.startswith('--query-gpu=')]\n"
            "if not query or any(q not in answers for q in query[0].split(',')):\n"
            "    sys.stderr.write('simulated nvidia-smi: unsupported query %r\\n' % sys.argv[1:])\n"
            "    sys.exit(2)\n"
            f"for _ in range({DEVICES_PER_NODE}):\n"
            "    print(', '.join(answers[q] for q in query[0].split(',')))\n"
        )
        name = "nvidia-smi"
    else:
        kib = spec["memory_mib"] * 1024
        arch = spec["gcn_arch"].split(":")[0]
        agent = (f"  Name:                    {arch}\n  Marketing Name:          {spec['name']}\n"
                 "  Pool Info:\n    Pool 1\n      Segment:                 GLOBAL; FLAGS: COARSE GRAINED\n"
                 f"      Size:                    {kib}(0x{kib:x}) KB\n")
        body = f"import sys\nsys.stdout.write({(agent * DEVICES_PER_NODE)!r})\n"
        name = "rocminfo"
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"#!{python}\n{body}")
    os.chmod(path, 0o755)
    return folder


def _fake_pynvml(spec: dict[str, Any]) -> None:
    """Answer the NVML queries SGLang makes (compute capability, memory, name, count) as the
    simulated node's driver would; pynvml is a library, SGLang's own code is untouched."""
    try:
        import pynvml
    except ImportError:
        return

    class Memory:
        total = spec["memory_mib"] << 20
        free = total
        used = 0

    def handle_by_index(index: int) -> int:
        if not 0 <= int(index) < DEVICES_PER_NODE:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return int(index)

    fakes = {
        "nvmlInit": lambda *a, **k: None,
        "nvmlShutdown": lambda *a, **k: None,
        "nvmlDeviceGetCount": lambda: DEVICES_PER_NODE,
        "nvmlDeviceGetHandleByIndex": handle_by_index,
        "nvmlDeviceGetCudaComputeCapability": lambda handle: tuple(spec["capability"]),
        "nvmlDeviceGetName": lambda handle: spec["name"],
        "nvmlDeviceGetMemoryInfo": lambda handle, *a: Memory(),
        "nvmlSystemGetDriverVersion": lambda: spec["driver"],
        "nvmlSystemGetCudaDriverVersion": lambda: 12090,
        "nvmlSystemGetCudaDriverVersion_v2": lambda: 12090,
    }
    for name, fake in fakes.items():
        setattr(pynvml, name, fake)


def _driver_stub() -> str:
    """Build (once per SGLang venv) and return a stand-in for the NVIDIA driver library.

    The CUDA builds of the kernel packages SGLang imports (sgl_kernel, flash_mla, deep_ep, ...)
    link against `libcuda.so.1`, which only a machine with the NVIDIA driver has: without it their
    import fails before any guard runs. The stand-in defines every driver entry point those
    libraries name (read from their dynamic symbol tables) as a function that answers
    CUDA_ERROR_NO_DEVICE, so that they load as on a GPU node while any real use of the GPU still
    fails (such a case is `unreplayable`). Loaded RTLD_GLOBAL before sglang, its soname satisfies
    their dependency.
    """
    import hashlib
    import subprocess

    # Every site-packages on sys.path: a side venv of another release (verify/README.md, "Config-file
    # schemas") takes the kernel packages from the main venv's, which its .pth file adds after its own.
    sites = list(dict.fromkeys(entry for entry in sys.path if entry.endswith("site-packages") and os.path.isdir(entry)))
    sites = sites or [os.path.dirname(os.path.dirname(os.__file__))]
    name = "\n".join(sites)  # one site-packages: its path, as the stub folder was always named
    folder = os.path.join(tempfile.gettempdir(), "oracle-libcuda-" + hashlib.sha1(name.encode()).hexdigest()[:12])
    target = os.path.join(folder, "libcuda.so.1")
    if os.path.exists(target):
        return target
    needing: list[str] = []
    for root, _dirs, files in (walked for site in sites for walked in os.walk(site)):
        for name in files:
            if ".so" not in name:
                continue
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as handle:
                    if handle.read(4) != b"\x7fELF":
                        continue
            except OSError:
                continue
            dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
            if "[libcuda.so.1]" in dynamic:
                needing.append(path)
    symbols: set[str] = set()
    for path in needing:
        listing = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True, text=True).stdout
        for line in listing.splitlines():
            name = line.split()[-1].split("@")[0] if line.split() else ""
            if name.startswith("cu") and name[2:3].isupper():
                symbols.add(name)
    lines = ["/* Generated by verify/oracle_server.py: a driver that has no device. */"]
    for name in sorted(symbols):
        if name in ("cuGetErrorString", "cuGetErrorName"):
            lines.append(f"int {name}(int e, const char **s) {{ if (s) *s = \"no CUDA device (simulated node)\"; return 0; }}")
        else:
            lines.append(f"int {name}() {{ return 100; }}  /* CUDA_ERROR_NO_DEVICE */")
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, "libcuda_stub.c")
    with open(source, "w", encoding="ascii") as handle:
        handle.write("\n".join(lines) + "\n")
    partial = target + f".{os.getpid()}"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-Wl,-soname,libcuda.so.1", "-o", partial, source], check=True)
    os.replace(partial, target)
    return target


def simulate(profile: str) -> dict[str, Any]:
    """Make torch (and the node's tools) report the profile's machine. Must run before anything
    imports sglang: SGLang reads most platform facts once, at import time."""
    spec = PROFILES[profile]
    if not spec:
        return {}
    import torch

    amd = spec["vendor"] == "amd"
    props = SimulatedDeviceProperties(spec)
    total = spec["memory_mib"] << 20

    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: DEVICES_PER_NODE
    cuda.current_device = lambda: 0
    cuda.get_device_capability = lambda device=None: tuple(spec["capability"])
    cuda.get_device_name = lambda device=None: spec["name"]
    cuda.get_device_properties = lambda device=None: props
    cuda.mem_get_info = lambda device=None: (total, total)
    cuda.get_arch_list = lambda: (["gfx942"] if amd else ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"])
    # What torch answers: bf16 from Ampere (compute capability 8) on; a Turing T4 has none.
    cuda.is_bf16_supported = lambda *a, **k: amd or spec["capability"] >= (8, 0)
    if amd:
        torch.version.cuda = None
        torch.version.hip = spec["hip"]
    os.environ["PATH"] = _fake_tools(spec) + os.pathsep + os.environ.get("PATH", "")
    if not amd:
        _fake_pynvml(spec)
        import ctypes

        ctypes.CDLL(_driver_stub(), mode=ctypes.RTLD_GLOBAL)
    # On the AMD profile nothing stands in for the ROCm builds of sgl_kernel and aiter (PyPI has
    # neither): SGLang imports them while importing its quantization registry, before any guard,
    # so every MI300X case is `unreplayable` (verify/README.md says so).
    return {"profile": profile, "devices": DEVICES_PER_NODE, "name": spec["name"],
            "capability": list(spec["capability"]), "memory_mib": spec["memory_mib"]}

SITE: str = ""  # site-packages of the imported sglang; frames are reported relative to it
PROFILE: str = "cpu"  # the simulated machine (--profile)


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
    reason = unreplayable_reason(exc, record)
    if reason:
        record["status"] = "unreplayable"
        record["unreplayable_reason"] = reason
    return record


# Messages of failures that only the simulation causes: the GPU itself is missing (the driver
# stand-in answers "no device"), or torch was asked to initialise CUDA.
CUDA_RUNTIME_WORDS = ("CUDA_ERROR", "cudaError", "no CUDA device", "Found no NVIDIA driver", "NVIDIA driver",
                      "CUDA driver", "no CUDA GPUs are available", "CUDA error", "Torch not compiled with CUDA",
                      "libcuda", "cuInit", "NVML", "nvidia-smi", "HIP error", "hipError")


def unreplayable_reason(exc: BaseException, record: dict[str, Any]) -> str | None:
    """Why a case's result says nothing about SGLang's guards on the simulated machine, or None.

    Only under a GPU profile: an ImportError raised by an import statement (a CUDA/ROCm-only
    package that is not installed, or that cannot load without the GPU), or a CUDA runtime failure
    outside SGLang's raise/assert statements. A guard that raises ImportError on purpose stays a
    guard."""
    if PROFILE == "cpu" or record.get("status") == "error" or record.get("status") == "argparse":
        return None
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    for item in chain:
        if isinstance(item, ImportError):
            name = getattr(item, "name", None)
            return f"import failed: {type(item).__name__}: {str(item).strip().splitlines()[0][:200] if str(item).strip() else name}"
    text = " ".join(f"{type(item).__name__}: {item}" for item in chain)
    for word in CUDA_RUNTIME_WORDS:
        if word in text:
            return f"GPU runtime needed ({word}): {text[:200]}"
    return None


def run_case(argv: list[str], report) -> dict[str, Any]:
    """Inside the child: the three stages of a launch, as `sglang serve` runs them."""
    from sglang.srt.server_args import prepare_server_args

    stage = "parse"
    try:
        report(stage)
        server_args = prepare_server_args(list(argv))
        stage = "resolve"
        report(stage)
        if hasattr(server_args, "resolve_once"):  # before 0.5.19 __post_init__ resolves
            server_args.resolve_once()
        stage = "check"
        report(stage)
        server_args.check_server_args()
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: everything is a result
        sys.stdout.flush()
        sys.stderr.flush()
        return describe_exception(exc, stage, read_output())
    resolved = {}
    try:  # SGLang's read view of what resolution decided (0.5.19+ keeps it as declarations)
        from sglang.srt.server_args import resolving_view

        view = resolving_view(server_args)
    except ImportError:
        view = server_args
    for name in RESOLVED_FIELDS:
        value = getattr(view, name, None)
        if value is None or isinstance(value, (bool, int, float, str)):
            resolved[name] = value
        else:
            resolved[name] = repr(value)[:200]
    return {"status": "ok", "stage": "check", "resolved": resolved}


# A few fields of an accepted launch as the real resolution left them (what the platform decided).
RESOLVED_FIELDS = ("device", "attention_backend", "prefill_attention_backend", "decode_attention_backend",
                   "kv_cache_dtype", "mem_fraction_static", "chunked_prefill_size", "cuda_graph_max_bs_decode",
                   "max_running_requests", "tp_size", "dp_size", "ep_size", "moe_runner_backend", "moe_a2a_backend",
                   "page_size", "disable_cuda_graph", "quantization", "sampling_backend", "grammar_backend")


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

        os.environ.update(case.get("env") or {})  # NAME=VALUE typed before the launcher
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
    it added; importing them here, before forking, makes every later child start with them. The
    folders are warmed up one after the other, each child forked after the previous one's modules
    were imported, so that a folder costs only what it adds. Only imports are repeated, never a
    resolution, so no case-dependent state reaches the parent.
    """
    import importlib

    started = time.monotonic()
    seen_paths: set[str] = set()
    imported = failed = 0
    for case in cases:
        argv = case["argv"]
        path = argv[argv.index("--model-path") + 1] if "--model-path" in argv[:-1] else None
        if path is None or path in seen_paths:
            continue
        seen_paths.add(path)
        # The plain launch of the folder, on this profile (a GPU profile derives the device).
        plain = (["--device", "cpu"] if "--device" in argv else []) + ["--model-path", path]
        result = run_one({"id": "warm-up", "argv": plain, "report_modules": True}, timeout)
        for name in result.get("modules", []):
            if name in sys.modules:
                continue
            try:
                importlib.import_module(name)
                imported += 1
            except BaseException:  # a module that only imports in a certain order: the child will
                failed += 1
    print(f"oracle: preloaded {imported} modules ({failed} failed) for {len(seen_paths)} model folders "
          f"in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)


def read_cases(path: str | None) -> Iterator[dict[str, Any]]:
    handle = open(path, encoding="utf-8") if path and path != "-" else sys.stdin
    for line in handle:
        line = line.strip()
        if line:
            case = json.loads(line)
            yield {"id": case["id"], "argv": list(case["argv"]), "env": dict(case.get("env") or {})}


def main(argv: list[str] | None = None) -> int:
    global SITE, PROFILE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="?", help="JSON-lines file of cases (default stdin)")
    parser.add_argument("-o", "--output", help="JSON-lines results (default stdout)")
    parser.add_argument("--jobs", type=int, default=1, help="children at a time")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--no-preload", action="store_true", help="skip the warm-up imports (slower, for comparison)")
    parser.add_argument("--profile", default="cpu", choices=sorted(PROFILES),
                        help="the machine to simulate (default cpu: this machine, no simulation)")
    args = parser.parse_args(argv)

    # Results go to a private copy of stdout; fd 1 itself then points at stderr, so that anything
    # an imported module prints cannot corrupt the JSON lines.
    if args.output:
        out = open(args.output, "w", encoding="utf-8")
    else:
        out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)
    started = time.monotonic()
    PROFILE = args.profile
    simulated = simulate(args.profile)
    if simulated:
        print(f"oracle: simulating {json.dumps(simulated)}", file=sys.stderr, flush=True)
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
