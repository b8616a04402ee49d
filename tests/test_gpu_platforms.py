"""Launches as on a GPU machine: `--device` left out and derived from what torch reports, helpers read
over a platform profile, raises a caller catches, writes that read what was declared before them.

The made-up package imitates the shapes of SGLang 0.5.23 (names and messages are ours): `get_device()`
in utils/common.py decides the device from torch's answers when `--device` is left out (else the
current platform's `get_device`, which the base platform of a host without accelerators does not
implement: the try around it raises "No accelerator"), then the
device index is stripped (`cfg.device.split(":")[0]`, reading the value just declared); a support
probe wraps a parser that raises in `try ... except ValueError: return False`; a post-process pass
returns a local named like a flag whose value the walk cannot follow. Each case is a launch command,
a platform profile, and the first error the fixture raises on it, worked out by reading it as Python
runs it on that machine.
"""

from __future__ import annotations


import pytest

from extractor.analysis.helpers import helper_library
from extractor.logic.facts import Facts
from extractor.logic.platforms import find_platform
from extractor.logic.helpers import Helpers
from extractor.products.check.linter import check
from tests.packages import OVERRIDES, package_ruleset

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    device: Optional[str] = None
    attention_backend: Optional[str] = None
    decode_attention_backend: Optional[str] = None
    cp_strategy: Optional[str] = None
    enable_prefill_cp: bool = False
    strict_cp: bool = False
    bind_cp: bool = False
    moe_runner_backend: str = "auto"
    quantization: Optional[str] = None
    page_size: int = 1
    sampling_backend: str = "auto"
    kv_cache_dtype: str = "auto"
    sparse_prefill_backend: Optional[str] = None
    sparse_decode_backend: Optional[str] = None

    def __post_init__(self):
        """Resolution runs in resolve_once."""

    def resolve_once(self):
        from sglang.srt.arg_groups.pipeline import run_resolution_pipeline

        run_resolution_pipeline(self)

    def _default_attention_backend(self):
        from sglang.srt.runtime_context import get_platform

        if get_platform().is_sm100:
            return "trtllm_mha"
        if get_platform().is_sm90:
            return "fa3"
        return "triton"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--device", type=str, default=ServerArgs.device)
        parser.add_argument("--attention-backend", type=str, default=ServerArgs.attention_backend)
        parser.add_argument("--decode-attention-backend", type=str, default=ServerArgs.decode_attention_backend)
        parser.add_argument("--cp-strategy", type=str, default=ServerArgs.cp_strategy)
        parser.add_argument("--enable-prefill-cp", action="store_true")
        parser.add_argument("--strict-cp", action="store_true")
        parser.add_argument("--bind-cp", action="store_true")
        parser.add_argument("--moe-runner-backend", type=str, default=ServerArgs.moe_runner_backend)
        parser.add_argument("--quantization", type=str, default=ServerArgs.quantization)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
        parser.add_argument("--sampling-backend", type=str, default=ServerArgs.sampling_backend)
        parser.add_argument("--kv-cache-dtype", type=str, default=ServerArgs.kv_cache_dtype)
        parser.add_argument("--sparse-prefill-backend", type=str, default=ServerArgs.sparse_prefill_backend)
        parser.add_argument("--sparse-decode-backend", type=str, default=ServerArgs.sparse_decode_backend)
''',
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/overrides.py": OVERRIDES,
    "sglang/srt/arg_groups/pipeline.py": '''
from sglang.srt.arg_groups.attention_hook import handle_attention
from sglang.srt.arg_groups.cp_hook import handle_cp
from sglang.srt.arg_groups.moe_hook import handle_moe
from sglang.srt.arg_groups.sampling_hook import handle_sampling
from sglang.srt.arg_groups.serving_hook import handle_missing_default_values
from sglang.srt.layers.quantization import check_quantization


def run_resolution_pipeline(server_args):
    handle_missing_default_values(server_args)
    handle_attention(server_args)
    handle_cp(server_args)
    handle_moe(server_args)
    handle_sampling(server_args)
    check_quantization(server_args)
''',
    "sglang/srt/arg_groups/serving_hook.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view
from sglang.srt.utils.common import get_device, get_device_memory_capacity, parse_connector_type


def handle_missing_default_values(server_args):
    cfg = resolving_view(server_args)
    if parse_connector_type(cfg.model_path) == "instance":
        return
    if cfg.page_size == 2048 and get_device_memory_capacity() < 90 * 1024:
        raise ValueError("Pages of 2048 need 90 GiB of device memory.")
    if cfg.device is None:
        declare_resolution(server_args, "defaults", device=get_device())
    declare_resolution(server_args, "defaults", device=cfg.device.split(":")[0])
    assert 4096 % cfg.page_size == 0, "The page size must divide 4096."
''',
    "sglang/srt/arg_groups/attention_hook.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view
from sglang.srt.runtime_context import get_platform
from sglang.srt.utils.common import is_blackwell_supported, is_sm90_supported


def handle_attention(server_args):
    cfg = resolving_view(server_args)
    if cfg.attention_backend == "fa3" and not is_sm90_supported():
        raise ValueError("FA3 needs a Hopper GPU.")
    if cfg.attention_backend == "trtllm_mla" and not get_platform().is_sm100:
        raise ValueError("TRTLLM MLA needs a Blackwell GPU.")
    if cfg.attention_backend == "trtllm_mha" and not is_blackwell_supported():
        raise ValueError("TRTLLM MHA needs SM100 or SM120.")
    if cfg.attention_backend == "ascend" and cfg.device != "npu":
        raise ValueError("The ascend backend runs on NPUs only.")
    if cfg.attention_backend is None:
        declare_resolution(server_args, "attention", attention_backend=server_args._default_attention_backend())
    if cfg.attention_backend == "fa3" and cfg.page_size != 1:
        raise ValueError("FA3 takes page size 1.")
    if (cfg.attention_backend == "wave" or cfg.decode_attention_backend == "wave") and not get_platform().is_hip:
        raise ValueError("The wave backend runs on ROCm only.")
    if cfg.kv_cache_dtype == "fp8_e4m3":
        # As 0.5.23's DSA split: a dict of what is declared, each backend read from it or the flag.
        declared = {}
        if cfg.sparse_prefill_backend is None:
            declared["sparse_prefill_backend"] = "flashmla_kv"
        _check_sparse_fp8(declared.get("sparse_prefill_backend", cfg.sparse_prefill_backend),
                          declared.get("sparse_decode_backend", cfg.sparse_decode_backend))


def _check_sparse_fp8(prefill_backend, decode_backend):
    chosen = {prefill_backend, decode_backend}
    if "tilelang" not in chosen:
        return
    import torch

    major, minor = torch.cuda.get_device_capability()
    if (major, minor) < (8, 9):
        raise ValueError("TileLang FP8 KV needs SM89 or newer.")
''',
    "sglang/srt/arg_groups/cp_hook.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view
from sglang.srt.layers.cp import Strategy, bind_strategy, supports_cp_graphs


def handle_cp(server_args):
    cfg = resolving_view(server_args)
    if supports_cp_graphs(server_args):
        declare_resolution(server_args, "cp", attention_backend="fa3")
    if cfg.strict_cp:
        try:
            Strategy.from_string(cfg.cp_strategy)
        except ValueError as error:
            raise ValueError(f"--strict-cp: {error}")
    if cfg.bind_cp:
        bind_strategy(cfg.cp_strategy)
''',
    "sglang/srt/layers/__init__.py": "",
    "sglang/srt/layers/cp.py": '''
from enum import IntEnum

from sglang.srt.arg_groups.overrides import resolving_view


class Strategy(IntEnum):
    ZIGZAG = 0
    INTERLEAVE = 1

    @classmethod
    def from_string(cls, value):
        if value == "zigzag":
            return cls.ZIGZAG
        if value == "interleave":
            return cls.INTERLEAVE
        raise ValueError("Unsupported CP strategy.")


# As 0.5.23's `init_cp_strategy`: the member the Enum's own parser maps the flag's string to.
def bind_strategy(cp_strategy):
    kind = Strategy.from_string(cp_strategy)
    if kind == Strategy.ZIGZAG:
        return "zigzag strategy"
    elif kind == Strategy.INTERLEAVE:
        return "interleave strategy"
    else:
        raise ValueError("No CP strategy binds this kind.")


def supports_cp_graphs(server_args):
    cfg = resolving_view(server_args)
    if not cfg.enable_prefill_cp:
        return False
    try:
        Strategy.from_string(cfg.cp_strategy)
    except ValueError:
        return False
    return True
''',
    # A registry filled at import time under platform tests, read whole by a guard (0.5.23's
    # QUANTIZATION_METHODS and ModelConfig._verify_quantization).
    "sglang/srt/layers/quantization.py": '''
from typing import Dict, Type

from sglang.srt.arg_groups.overrides import resolving_view
from sglang.srt.utils.common import is_cpu, is_cuda, is_npu


class Fp8Config:
    pass


class Fp4Config:
    pass


class GptqConfig:
    pass


BASE_METHODS: Dict[str, Type] = {"fp8": Fp8Config, "fp4": Fp4Config}

if is_cpu() or is_cuda():
    BASE_METHODS.update({"mxfp4": Fp4Config})
if is_npu():
    BASE_METHODS.update({"gptq": GptqConfig})
elif is_cpu():
    BASE_METHODS["gptq"] = GptqConfig

METHODS = {**BASE_METHODS}


def check_quantization(server_args):
    cfg = resolving_view(server_args)
    supported = [*METHODS]
    if cfg.quantization is not None and cfg.quantization not in supported:
        raise ValueError(f"Unknown quantization method: {cfg.quantization}.")
''',
    "sglang/srt/arg_groups/moe_hook.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view, run_post_process_pass

RUNNER_ALIASES = {"cutlass_fp8": "triton"}


def _runner_from_quantization(view) -> dict:
    moe_runner_backend = view.moe_runner_backend
    while view.quantization == "fp8" and moe_runner_backend in RUNNER_ALIASES:
        moe_runner_backend = RUNNER_ALIASES[moe_runner_backend]
    if moe_runner_backend != view.moe_runner_backend:
        return {"moe_runner_backend": moe_runner_backend}
    return {}


def handle_moe(server_args):
    run_post_process_pass(server_args, _runner_from_quantization)
    cfg = resolving_view(server_args)
    if cfg.moe_runner_backend == "cutlass_fp8":
        assert cfg.quantization is None, "The cutlass_fp8 runner takes no quantization."
    if cfg.quantization == "fp4":
        for key, value in (("page_size", 64), ("moe_runner_backend", "cutlass_fp4")):
            declare_resolution(server_args, "moe", **{key: value})
    if cfg.page_size == 64 and cfg.moe_runner_backend == "cutlass_fp4" and cfg.enable_prefill_cp:
        raise ValueError("Prefill CP takes no FP4 MoE.")
''',
    # A pass whose local takes seven values over three blocks of branches (0.5.23's
    # `_moe_runner_backend_quant_constraints`), returned when it differs from the field.
    "sglang/srt/arg_groups/sampling_hook.py": '''
from sglang.srt.arg_groups.overrides import resolving_view, run_post_process_pass


def _sampler_by_setup(view) -> dict:
    backend = view.sampling_backend
    if view.quantization == "fp4":
        wide = view.page_size == 64
        if backend == "auto":
            backend = "wide" if wide else "trtllm"
        elif backend not in ["trtllm", "routed"] and not (backend == "wide" and wide):
            raise ValueError("FP4 sampling runs on trtllm or routed.")
    if view.quantization == "fp8":
        allowed = ["trtllm", "flashinfer"]
        if view.device == "npu":
            allowed.append("ascend")
        if view.page_size == 64:
            default = "megamoe"
        else:
            default = "triton" if view.device == "npu" else "flashinfer"
        if backend == "auto":
            backend = default
        elif backend not in allowed:
            backend = default
    if backend == "auto" and view.quantization == "int4":
        backend = "cutlass"
    if backend != view.sampling_backend:
        return {"sampling_backend": backend}
    return {}


def handle_sampling(server_args):
    run_post_process_pass(server_args, _sampler_by_setup)
    cfg = resolving_view(server_args)
    if cfg.sampling_backend == "cutlass" and cfg.page_size != 1:
        raise ValueError("The cutlass sampler takes page size 1.")
    if cfg.sampling_backend.startswith("lora") and not cfg.enable_prefill_cp:
        raise ValueError("LoRA samplers need prefill CP.")
''',
    "sglang/srt/runtime_context.py": '''
def get_platform():
    return _PLATFORM


def get_device():
    return _CONTEXT.device


_PLATFORM = object()
_CONTEXT = object()
''',
    "sglang/srt/kernel_plugins/__init__.py": "",
    "sglang/srt/kernel_plugins/binding.py": '''
from sglang.srt.runtime_context import get_device


def watchdog_timeout():
    return get_device().watchdog_timeout
''',
    "sglang/srt/utils/__init__.py": "",
    "sglang/srt/utils/common.py": '''
import os
from functools import lru_cache, partial
from importlib.util import find_spec

import torch

from sglang.srt.platforms import current_platform


def parse_connector_type(url):
    scheme, _, rest = url.partition("://")
    return scheme if rest else ""


@lru_cache(maxsize=1)
def is_cpu() -> bool:
    if os.getenv("SGLANG_USE_CPU_ENGINE", "0") != "1":
        return False
    return True


def is_npu() -> bool:
    if not hasattr(torch, "npu"):
        return False
    return torch.npu.is_available()


def is_cuda() -> bool:
    return hasattr(torch, "cuda") and torch.cuda.is_available()


def get_device_memory_capacity():
    return torch.cuda.mem_get_info()[1] / (1 << 20)


# As 0.5.18: a predicate made of a helper with its arguments bound, behind a cache.
def _check_cuda_device_version(device_capability_majors, cuda_version):
    if not is_cuda():
        return False
    return (
        torch.cuda.get_device_capability()[0] in device_capability_majors
        and tuple(map(int, torch.version.cuda.split(".")[:2])) >= cuda_version
    )


is_blackwell_supported = lru_cache(maxsize=1)(
    partial(_check_cuda_device_version, device_capability_majors=[10, 12], cuda_version=(12, 8))
)
is_sm90_supported = lru_cache(maxsize=1)(
    partial(_check_cuda_device_version, device_capability_majors=[9], cuda_version=(12, 3))
)


@lru_cache(maxsize=1)
def is_habana_available() -> bool:
    return find_spec("habana_frameworks") is not None


@lru_cache(maxsize=8)
def get_device(device_id=None) -> str:
    """The accelerator torch reports."""
    if is_cpu():
        return "cpu"
    if hasattr(torch, "cuda") and torch.cuda.is_available():
        if device_id is None:
            return "cuda"
        return "cuda:{}".format(device_id)
    if is_npu():
        return "npu"
    if is_habana_available():
        try:
            import habana_frameworks.torch.hpu  # noqa: F401
        except ImportError:
            raise ImportError("Habana frameworks detected, but failed to import them.")
        return "hpu"
    # As 0.5.18 on: the platform's own method, else an error (the base platform raises NotImplementedError).
    try:
        return current_platform.get_device(device_id)
    except Exception:
        raise RuntimeError("No accelerator is available.")
''',
    "sglang/srt/platforms/__init__.py": '''
def _resolve_platform():
    return object()


current_platform = _resolve_platform()
''',
}

BLACKWELL = "TRTLLM MLA needs a Blackwell GPU."
FA3_HOPPER = "FA3 needs a Hopper GPU."
BIG_PAGES = "Pages of 2048 need 90 GiB of device memory."
TRTLLM_MHA = "TRTLLM MHA needs SM100 or SM120."
ASCEND = "The ascend backend runs on NPUs only."
NO_ACCELERATOR = "No accelerator is available."
STRICT_CP = "--strict-cp: {error}"
CUTLASS = "The cutlass_fp8 runner takes no quantization."
UNSUPPORTED_CP = "Unsupported CP strategy."
FA3_PAGE = "FA3 takes page size 1."
FP4_CP = "Prefill CP takes no FP4 MoE."
PAGE_DIVIDES = "The page size must divide 4096."
CUTLASS_PAGE = "The cutlass sampler takes page size 1."
LORA_SAMPLER = "LoRA samplers need prefill CP."
TILELANG_SM89 = "TileLang FP8 KV needs SM89 or newer."
UNKNOWN_QUANTIZATION = "Unknown quantization method: {cfg.quantization}."

# (launch command, platform profile or None, the first error the fixture raises there, or None)
CASES = [
    pytest.param([], "H100", None, id="plain launch on a GPU"),
    pytest.param(["--attention-backend", "trtllm_mla"], "H100", BLACKWELL, id="device derived, platform guard"),
    pytest.param(["--attention-backend", "trtllm_mla"], "B200", None, id="the same on Blackwell"),
    # A predicate bound by `functools.partial` behind `lru_cache`, read over torch's answers (0.5.18).
    pytest.param(["--attention-backend", "trtllm_mha"], "H100", TRTLLM_MHA, id="partial helper, Hopper"),
    pytest.param(["--attention-backend", "trtllm_mha"], "B200", None, id="partial helper, Blackwell"),
    pytest.param(["--attention-backend", "trtllm_mha"], "cuda-sm120", None, id="partial helper, SM120"),
    # What SGLang's own predicates answer on each GPU: `is_sm90_supported()` is Hopper's alone (major 9),
    # false on Blackwell; a B300 (SM103) is an SM100 part; an A10G (SM86) and a T4 (SM75) are older.
    pytest.param(["--attention-backend", "fa3"], "H100", None, id="a Hopper predicate on Hopper"),
    pytest.param(["--attention-backend", "fa3"], "B200", FA3_HOPPER, id="a Hopper predicate on Blackwell"),
    pytest.param(["--attention-backend", "fa3"], "RTX5090", FA3_HOPPER, id="a Hopper predicate on SM120"),
    pytest.param(["--attention-backend", "fa3"], "B300", FA3_HOPPER, id="a Hopper predicate on SM103"),
    pytest.param(["--attention-backend", "trtllm_mla"], "B300", None, id="SM103 is an SM100 part"),
    pytest.param(["--attention-backend", "trtllm_mha"], "GB300", None, id="partial helper, SM103"),
    pytest.param(["--attention-backend", "trtllm_mla"], "A10G", BLACKWELL, id="platform guard on SM86"),
    pytest.param(["--kv-cache-dtype", "fp8_e4m3", "--sparse-decode-backend", "tilelang"], "A10G", TILELANG_SM89,
                 id="capability compared on SM86"),
    pytest.param(["--kv-cache-dtype", "fp8_e4m3", "--sparse-decode-backend", "tilelang"], "T4", TILELANG_SM89,
                 id="capability compared on SM75"),
    # Each GPU of a profile with its own memory, which SGLang sizes by: an H200 is an sm90 part of 140 GiB.
    pytest.param(["--page-size", "2048"], "H100", BIG_PAGES, id="memory of an H100"),
    pytest.param(["--page-size", "2048"], "H200", FA3_PAGE, id="memory of an H200"),
    pytest.param(["--page-size", "2048"], "GH200", FA3_PAGE, id="memory of a GH200"),
    pytest.param(["--page-size", "2048"], "cuda-sm120", BIG_PAGES, id="memory of the SM120 profile"),
    pytest.param(["--page-size", "2048", "--attention-backend", "triton"], "RTXPRO6000", None,
                 id="memory of an RTX PRO 6000"),
    pytest.param(["--attention-backend", "ascend"], "H100", ASCEND, id="derived device read by a later guard"),
    pytest.param(["--attention-backend", "ascend"], "ascend", None, id="derived npu"),
    pytest.param(["--attention-backend", "ascend", "--device", "npu:1"], "H100", None, id="typed device, index stripped"),
    pytest.param([], "cpu", NO_ACCELERATOR, id="no accelerator and no device"),
    pytest.param(["--device", "cpu"], "cpu", None, id="typed cpu device"),
    pytest.param([], "cpu-engine", None, id="the CPU engine's device"),
    # The default backend is a method of ServerArgs the hook calls on its argument, read over the profile.
    pytest.param(["--page-size", "16"], "H100", FA3_PAGE, id="default backend from a method, Hopper"),
    pytest.param(["--page-size", "16"], "B200", None, id="default backend from a method, Blackwell"),
    pytest.param(["--page-size", "16", "--attention-backend", "triton"], "H100", None, id="backend typed"),
    # Declarations passed as `**{key: value}` in a loop over literal pairs.
    pytest.param(["--quantization", "fp4", "--enable-prefill-cp"], "H100", FP4_CP, id="declared by a dict display"),
    pytest.param(["--quantization", "fp4"], "H100", None, id="declared, the guard's other test false"),
    # A raise the caller catches (`except ValueError: return False`) is no launch error.
    pytest.param(["--enable-prefill-cp", "--cp-strategy", "ring"], "H100", None, id="caught by the caller"),
    pytest.param(["--strict-cp", "--cp-strategy", "ring"], "H100", UNSUPPORTED_CP, id="raised again: the callee's raise"),
    pytest.param(["--strict-cp", "--cp-strategy", "zigzag"], "H100", None, id="caught raise that does not fire"),
    # An Enum parsed by a `from_string` of its own: `"zigzag"` is the member ZIGZAG, not its name.
    pytest.param(["--bind-cp", "--cp-strategy", "zigzag"], "H100", None, id="member parsed from its own string"),
    pytest.param(["--bind-cp", "--cp-strategy", "interleave"], "H100", None, id="the other member's string"),
    pytest.param(["--bind-cp", "--cp-strategy", "ZIGZAG"], "H100", UNSUPPORTED_CP, id="the member's name is no string it parses"),
    # A local with seven values over three blocks: each value with when, not one unknown.
    pytest.param(["--sampling-backend", "lora_x"], "H100", LORA_SAMPLER, id="returned unchanged"),
    pytest.param(["--sampling-backend", "lora_x", "--quantization", "fp8"], "H100", None, id="rewritten first"),
    pytest.param(["--quantization", "int4", "--page-size", "16", "--attention-backend", "triton"], "H100", CUTLASS_PAGE,
                 id="the third block's value"),
    pytest.param(["--quantization", "fp8", "--page-size", "64", "--attention-backend", "triton"], "H100", None,
                 id="the second block's value"),
    # A membership test of a display of two backends, each read from a dict of declarations, and a
    # tuple of the capability's two numbers compared with a tuple literal.
    pytest.param(["--kv-cache-dtype", "fp8_e4m3", "--sparse-decode-backend", "tilelang"], "A100", TILELANG_SM89,
                 id="a display's member, a tuple compared"),
    pytest.param(["--kv-cache-dtype", "fp8_e4m3", "--sparse-decode-backend", "tilelang"], "H100", None,
                 id="a tuple compared, false on SM90"),
    pytest.param(["--kv-cache-dtype", "fp8_e4m3", "--sparse-decode-backend", "trtllm"], "A100", None,
                 id="no member is tilelang"),
    pytest.param(["--kv-cache-dtype", "fp8_e4m3", "--sparse-prefill-backend", "tilelang"], "A100", TILELANG_SM89,
                 id="the member the flag gives, the declared one left out"),
    # Python fails evaluating the check itself: the launch stops there all the same.
    pytest.param(["--page-size", "0"], "H100", PAGE_DIVIDES, id="modulo by zero"),
    pytest.param(["--page-size", "3", "--attention-backend", "triton"], "H100", PAGE_DIVIDES, id="the check as written"),
    # What the registry holds depends on the machine: its import-time statements run over the profile.
    pytest.param(["--quantization", "mxfp4"], "H100", None, id="registered on CUDA"),
    pytest.param(["--quantization", "gptq"], "H100", UNKNOWN_QUANTIZATION, id="not registered on CUDA"),
    pytest.param(["--quantization", "mxfp4"], "ascend", UNKNOWN_QUANTIZATION, id="not registered on an NPU"),
    pytest.param(["--quantization", "gptq"], "ascend", None, id="registered on an NPU"),
    pytest.param(["--quantization", "mxfp4", "--device", "cpu"], "cpu", UNKNOWN_QUANTIZATION,
                 id="CPU without the CPU engine"),
    pytest.param(["--quantization", "gptq", "--device", "cpu"], "cpu-engine", None,
                 id="CPU engine: registered by a subscript assignment"),
]


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("gpu"), PACKAGE)


@pytest.mark.parametrize("argv, platform, first", CASES)
def test_first_error_on_the_machine(ruleset, argv, platform, first) -> None:
    report = check(ruleset, ["--model-path", "m", *argv], platform=find_platform(platform))
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, [(f.rule.message, f.certainty, f.unknown) for f in report.findings]


def test_a_check_python_fails_to_evaluate_says_so(ruleset) -> None:
    from extractor.products.check.report import report_json, report_text

    report = check(ruleset, ["--model-path", "m", "--page-size", "0"], platform=find_platform("H100"))
    first = report.definite[0]
    assert first.rule.message == PAGE_DIVIDES and first.fails_with == "ZeroDivisionError"
    assert "SGLang fails evaluating this check itself: ZeroDivisionError" in report_text(report, lambda rule: [])
    assert report_json(report, lambda rule: [])["errors"][0]["fails_with"] == "ZeroDivisionError"
    plain = check(ruleset, ["--model-path", "m", "--page-size", "3"], platform=find_platform("H100"))
    assert plain.definite[0].rule.message == PAGE_DIVIDES and plain.definite[0].fails_with is None


def test_a_registry_made_at_import_is_kept_as_its_statements(ruleset) -> None:
    library = Helpers(ruleset.helpers)
    assert library.names["METHODS"] == "sglang.srt.layers.quantization:METHODS"
    made = library.definition("sglang.srt.layers.quantization:BASE_METHODS")
    assert made is not None and made.made_at_import
    assert dict(made.names)["Fp8Config"] == "class:sglang.srt.layers.quantization.Fp8Config"
    without = check(ruleset, ["--model-path", "m", "--quantization", "gptq", "--device", "cpu"])
    assert UNKNOWN_QUANTIZATION not in {f.rule.message for f in without.definite}  # no profile: unknown


def test_without_a_profile_the_machine_is_unknown(ruleset) -> None:
    """Without `--platform`, torch's answers are unknown: the derived device, and what reads it, too."""
    report = check(ruleset, ["--model-path", "m", "--attention-backend", "ascend"])
    assert not report.definite
    assert ASCEND in {f.rule.message for f in report.findings}


@pytest.mark.parametrize("model_path, connector", [
    pytest.param("instance://host:1234/m", True, id="a connector url"),
    pytest.param("/models/m", False, id="a local path"),
])
def test_a_regular_expression_of_the_source_is_read_over_the_launch(model_path, connector) -> None:
    """0.5.18 tells a connector url by `re.match(r"(.+)://(.*)", model_path)`: a pattern of SGLang's own
    source, matched over the launch's value; a group of no match stays unknown (Python never reads it)."""
    from extractor.logic.expressions import Unknown

    facts = Facts()
    matched = 're.match(r"(.+)://(.*)", model_path__v2)'
    assert facts.value(f"{matched} is not None", {"model_path__v2": model_path}) is connector
    if connector:
        assert facts.value(f'{matched}.group(1) == "instance"', {"model_path__v2": model_path}) is True
        with pytest.raises(Unknown):  # a group the pattern does not have: Python's IndexError, unknown here
            facts.value(f"{matched}.group(3)", {"model_path__v2": model_path})
    else:
        with pytest.raises(Unknown):
            facts.value(f'{matched}.group(1) == "instance"', {"model_path__v2": model_path})


def test_helpers_are_kept_with_what_they_read(ruleset) -> None:
    library = Helpers(ruleset.helpers)
    assert library.names["get_device"] == "sglang.srt.utils.common:get_device"
    definition = library.definition("sglang.srt.utils.common:get_device")
    assert definition is not None and definition.is_function
    assert dict(definition.names)["torch"] == "import:torch"
    assert dict(definition.names)["is_npu"] == "sglang.srt.utils.common:is_npu"
    assert all("get_device" not in key for key in library.names.values() if "runtime_context" in key)


def test_an_index_keeps_helpers_as_source_not_as_parsed_trees(ruleset) -> None:
    """A rule set's index pickles its helpers: the trees parsed while it was built are left out (read
    back, they cost more than parsing the few a launch calls), and each is parsed again on first use."""
    import pickle

    library = Helpers(ruleset.helpers)
    first = library.definition("sglang.srt.utils.common:get_device")
    assert first is not None and library._parsed
    read_back = pickle.loads(pickle.dumps(library))
    assert read_back._parsed == {}
    again = read_back.definition("sglang.srt.utils.common:get_device")
    assert again is not None and again.is_function and dict(again.names) == dict(first.names)


def test_a_name_bound_to_two_functions_is_left_out() -> None:
    """Where the terms that call `get_device` were read in modules binding it to different functions,
    neither is taken: the term stays unknown rather than read through the wrong body."""
    def denotes(dotted: str, name: str) -> str | None:
        return {"a": "a:get_device", "b": "b:get_device"}.get(dotted)

    class Module:
        def __init__(self, dotted):
            self.dotted = dotted

    library = helper_library({"get_device": {"a", "b"}}, denotes, lambda dotted: None)
    assert library.names == () and library.helpers == ()


def test_the_device_is_derived_from_torchs_answers(ruleset) -> None:
    from extractor.logic.expressions import parsed_expression as _parse
    from extractor.logic.facts import _Evaluator

    def device(platform: str, env: dict[str, str] | None = None) -> object:
        facts = Facts(find_platform(platform), None, None, Helpers(ruleset.helpers), env or {})
        return _Evaluator(facts, {}).eval(_parse("get_device()").body)

    assert device("H100") == "cuda"
    assert device("MI300X") == "cuda"  # ROCm's torch answers through torch.cuda
    assert device("ascend") == "npu"


def test_a_local_named_like_a_flag_is_not_the_flag(ruleset) -> None:
    """The pass returns its local `moe_runner_backend`, which the walk cannot follow through the loop:
    the written value is unknown, not the flag of that name as typed (the assert then cannot be known)."""
    report = check(ruleset, ["--model-path", "m", "--moe-runner-backend", "cutlass_fp8", "--quantization", "fp8"],
                   platform=find_platform("H100"))
    assert CUTLASS not in {f.rule.message for f in report.definite}
    plain = check(ruleset, ["--model-path", "m", "--moe-runner-backend", "cutlass_fp8", "--quantization", "int4"],
                  platform=find_platform("H100"))
    assert CUTLASS in {f.rule.message for f in plain.findings}


def test_a_raise_the_caller_swallows_is_no_rule_of_the_launch(ruleset) -> None:
    (rule,) = [r for r in ruleset.rules if r.message == UNSUPPORTED_CP]
    assert rule.reachable  # through `--strict-cp`'s handler, which raises again
    assert not any("supports_cp_graphs" in step for step in rule.call_path)


@pytest.mark.parametrize("source, kept", [
    pytest.param("M = {'a': 1}\nif t():\n    M.update({'b': 2})\nelse:\n    M['c'] = 3\nN = {**M}\n",
                 "M = {'a': 1}\nif t():\n    M.update({'b': 2})\nelse:\n    M['c'] = 3", id="if blocks kept"),
    pytest.param("M = {'a': 1}\nfor k in ks():\n    M[k] = 1\n", None, id="a loop: not read"),
    pytest.param("M = {'a': 1}\nM.pop('a')\n", None, id="a removal: not read"),
    pytest.param("M = {'a': 1}\ntry:\n    M.update(x())\nexcept ImportError:\n    pass\n", None, id="a try: not read"),
])
def test_what_a_registry_made_at_import_keeps(source: str, kept: str | None) -> None:
    import ast

    from extractor.analysis.helpers import _made_at_import

    made = _made_at_import(ast.parse(source).body, "M")
    assert (None if made is None else ast.unparse(ast.Module(made, []))) == kept


def test_a_fix_removes_only_what_the_command_passes(ruleset) -> None:
    """The way out of an error on `--attention-backend` or `--decode-attention-backend` is offered as
    what the user can do on this command: remove the one they typed, not the one they did not."""
    from extractor.products.check.fixes import working_fixes
    from extractor.products.check.words import by_function
    from extractor.products.check.words import Flags

    argv = ["--model-path", "m", "--attention-backend", "wave"]
    facts = Facts(find_platform("H100"), helpers=ruleset.library)
    report = check(ruleset, argv, platform=find_platform("H100"))
    rule = next(f.rule for f in report.definite)
    assert rule.message == "The wave backend runs on ROCm only."
    fixes = working_fixes(ruleset, rule, argv, Flags(ruleset.flags), by_function(ruleset.rules), facts=facts)
    assert fixes == ["remove --attention-backend"]  # not `--decode-attention-backend`, which it lacks
    assert not check(ruleset, ["--model-path", "m"], platform=find_platform("H100")).definite


def test_on_a_host_without_accelerators_the_fix_passes_the_machines_device(ruleset) -> None:
    """SGLang cannot derive `--device` on a host with no accelerator (the base platform's `get_device`
    raises): the fix passes the device the profile names, not every value the flag takes."""
    from extractor.products.check.fixes import working_fixes
    from extractor.products.check.words import Flags, by_function

    argv = ["--model-path", "m"]
    cpu = find_platform("cpu")
    rule = check(ruleset, argv, platform=cpu).definite[0].rule
    assert rule.message == NO_ACCELERATOR
    facts = Facts(cpu, helpers=ruleset.library)
    assert working_fixes(ruleset, rule, argv, Flags(ruleset.flags), by_function(ruleset.rules), facts=facts) \
        == ["pass --device cpu"]
    assert not check(ruleset, [*argv, "--device", "cpu"], platform=cpu).definite


def test_the_cpu_engine_chosen_by_the_launch_derives_the_cpu_device(ruleset) -> None:
    """On the `cpu` profile, `is_cpu()` is SGLang's own helper read over the launch's environment: a
    launch that sets SGLANG_USE_CPU_ENGINE=1 gets the device `cpu` (no "No accelerator"), one that
    does not gets the error."""
    cpu = find_platform("cpu")
    assert "is_cpu" not in cpu.facts
    assert not check(ruleset, ["SGLANG_USE_CPU_ENGINE=1", "--model-path", "m"], platform=cpu).definite
    assert check(ruleset, ["SGLANG_USE_CPU_ENGINE=0", "--model-path", "m"], platform=cpu).definite[0].rule.message \
        == NO_ACCELERATOR


LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
         "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32}


def test_typical_launches_stop_first_at_a_platform_guard_with_a_fix_there(ruleset) -> None:
    """A guard that reads the platform has no flag-only witness; on common setups it gets launches
    that stop first at it, each with a fix `check` accepts there, and none where it cannot fire."""
    from extractor.logic.model_config import ModelFacts
    from extractor.products.check.words import by_function
    from extractor.products.site.pages import page
    from extractor.products.check.typical import Setup
    from extractor.products.extraction.typical_launches import typical_launches
    from extractor.products.extraction.witness import eligible
    from extractor.products.check.words import Flags

    chosen = [Setup("8 × H100, a Llama", "H100", "org/llama", (), LLAMA),
              Setup("8 × B200, a Llama", "B200", "org/llama", ("--page-size", "1"), LLAMA)]
    found = typical_launches(ruleset, Flags(ruleset.flags), by_function(ruleset.rules), chosen)
    blackwell = next(r for r in ruleset.rules if r.message == BLACKWELL)
    assert not eligible(blackwell)  # it reads the platform: no flag-only witness
    [launch] = found[blackwell.id]  # on the Hopper node only: a B200 is Blackwell
    assert launch.setup == "8 × H100, a Llama"
    assert launch.before == ("--model-path", "org/llama", "--attention-backend", "trtllm_mla")
    assert launch.after is not None and "--attention-backend" in (launch.fix or "")
    by_title = {s.title: s for s in chosen}
    assert len(found) >= 3
    for rule_id, launches in found.items():
        for typical in launches:
            setup = by_title[typical.setup]
            assert typical.before[:2] == setup.launch[:2]  # the setup's model, first
            on = {"platform": find_platform(setup.platform), "model": ModelFacts(setup.config, setup.model)}
            assert check(ruleset, list(typical.before), **on).definite[0].rule.id == rule_id
            if typical.after is not None:
                assert rule_id not in {f.rule.id for f in check(ruleset, list(typical.after), **on).definite}
    text = page(blackwell, Flags(ruleset.flags), {"label": "9.9.9"}, typical=found[blackwell.id])
    assert ("## Typical launches that hit it" in text and "**8 × H100, a Llama**" in text
            and "python -m sglang.launch_server --model-path org/llama --attention-backend trtllm_mla" in text)


def test_each_gpu_a_profile_names_has_the_name_and_memory_torch_reports_there() -> None:
    h200, h100 = find_platform("H200"), find_platform("h100")
    assert h200.name == h100.name == "cuda-sm90" and h200.facts["is_sm90"] is True
    assert (h200.facts["get_device_memory_capacity"], h100.facts["get_device_memory_capacity"]) == (143771, 81559)
    assert h200.world.answers["torch.cuda.get_device_name()"] == "NVIDIA H200"
    assert find_platform("cuda-sm90").facts == h100.facts  # the profile is sized as its first GPU
    grace = find_platform("GB200")
    assert grace.facts["is_host_cpu_arm64"] is True and grace.world.answers["platform.machine()"] == "aarch64"
    assert find_platform("B200").facts["is_host_cpu_arm64"] is False


def test_the_shipped_setups_name_known_gpus_and_whole_configs() -> None:
    from extractor.products.check.typical import setups

    shipped = setups()
    assert len(shipped) >= 3 and len({s.title for s in shipped}) == len(shipped)
    for setup in shipped:
        assert find_platform(setup.platform).facts["is_cuda"] is True
        assert setup.config["architectures"] and setup.config["num_hidden_layers"] > 0
