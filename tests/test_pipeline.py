"""Triggers over what the user types: writes of earlier handlers composed in execution order.

Two made-up packages imitate the two layouts of SGLang: `self.x = ...` handlers called from
`__post_init__` (<= 0.5.18), and `declare_resolution` steps run by `run_hook` from
`resolve_once` -> `run_resolution_pipeline`, read back through `resolving_view` (0.5.19+). Each
case is a launch command with the first error SGLang would raise on it (found by reading the
fixture the way Python runs it), and `check` must report exactly that error first.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from extractor.core.model import RuleKind
from extractor.logic.evaluation import Context
from extractor.logic.launch import parse_command
from extractor.products.check.linter import check
from extractor.products.reuse.rulesets import ruleset_of
from extractor.products.extraction.extraction import extract
from extractor.sources.trees import path_tree

DATACLASS_LAYOUT = {
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
    page_size: Optional[int] = None
    attention_backend: Optional[str] = None
    speculative_algorithm: Optional[str] = None
    dp_size: int = 1
    attn_dp_size: int = 1
    enable_dp_attention: bool = False
    pp_size: int = 1
    disable_overlap_schedule: bool = False
    min_free_slots_delay: int = 0
    language_only: bool = False
    language_model_only: bool = False

    def __post_init__(self):
        self._handle_language_model_only()
        self._handle_defaults()
        self._handle_speculative()
        self._handle_dp_attention()
        self._handle_pp()
        self._check_attention(self.page_size)

    def _handle_language_model_only(self):
        if self.language_model_only and self.language_only:
            raise ValueError("--language-model-only and --language-only are exclusive.")

    def _handle_defaults(self):
        if self.device is None:
            self.device = "cuda"
        if self.page_size is None:
            if self.attention_backend == "fa3":
                self.page_size = 128
            else:
                self.page_size = 1

    def _handle_speculative(self):
        if self.speculative_algorithm is not None:
            self.speculative_algorithm = self.speculative_algorithm.upper()
        if self.speculative_algorithm == "NEXTN":
            self.speculative_algorithm = "EAGLE"

    def _handle_dp_attention(self):
        if self.enable_dp_attention:
            self.attn_dp_size = self.dp_size
            self.dp_size = 1
        if self.attn_dp_size > 4:
            raise ValueError("attention DP is limited to 4 groups.")

    def _handle_pp(self):
        if self.pp_size > 1:
            self.disable_overlap_schedule = True

    def _check_attention(self, page_size):
        if self.language_only:
            raise ValueError("--language-only needs an encoder server.")
        if self.speculative_algorithm == "EAGLE" and page_size > 1:
            raise ValueError("EAGLE needs page size 1.")
        if self.device == "cpu" and self.attention_backend == "fa3":
            raise ValueError("fa3 is not available on cpu.")

    def check_server_args(self):
        if self.disable_overlap_schedule and self.min_free_slots_delay > 0:
            raise ValueError("--min-free-slots-delay needs the overlap schedule.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--device", type=str, default=ServerArgs.device)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
        parser.add_argument("--attention-backend", type=str, default=ServerArgs.attention_backend,
                            choices=["fa3", "flashinfer", "triton"])
        parser.add_argument("--speculative-algorithm", type=str, default=ServerArgs.speculative_algorithm)
        parser.add_argument("--dp-size", type=int, default=ServerArgs.dp_size)
        parser.add_argument("--attn-dp-size", type=int, default=ServerArgs.attn_dp_size)
        parser.add_argument("--enable-dp-attention", action="store_true")
        parser.add_argument("--pp-size", type=int, default=ServerArgs.pp_size)
        parser.add_argument("--disable-overlap-schedule", action="store_true")
        parser.add_argument("--min-free-slots-delay", type=int, default=ServerArgs.min_free_slots_delay)
        parser.add_argument("--language-only", action="store_true")
        parser.add_argument("--language-model-only", action="store_true")
''',
}

SPLIT_LAYOUT = {
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
    page_size: Optional[int] = None
    attention_backend: Optional[str] = None
    prefill_attention_backend: Optional[str] = None
    speculative_algorithm: Optional[str] = None
    dp_size: int = 1
    attn_dp_size: int = 1
    enable_dp_attention: bool = False
    pp_size: int = 1
    disable_overlap_schedule: bool = False
    min_free_slots_delay: int = 0
    language_only: bool = False
    language_model_only: bool = False

    def __post_init__(self):
        """Resolution runs in resolve_once."""

    def resolve_once(self):
        from sglang.srt.arg_groups.pipeline import run_resolution_pipeline

        run_resolution_pipeline(self)

    def check_server_args(self):
        from sglang.srt.arg_groups.validation_hook import check_server_args

        check_server_args(self)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--device", type=str, default=ServerArgs.device)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
        parser.add_argument("--attention-backend", type=str, default=ServerArgs.attention_backend,
                            choices=["fa3", "flashinfer", "triton", "cutedsl", "tokenspeed"])
        parser.add_argument("--prefill-attention-backend", type=str, default=None,
                            choices=["fa3", "flashinfer", "triton", "cutedsl", "tokenspeed"])
        parser.add_argument("--speculative-algorithm", type=str, default=ServerArgs.speculative_algorithm)
        parser.add_argument("--dp-size", type=int, default=ServerArgs.dp_size)
        parser.add_argument("--attn-dp-size", type=int, default=ServerArgs.attn_dp_size)
        parser.add_argument("--enable-dp-attention", action="store_true")
        parser.add_argument("--pp-size", type=int, default=ServerArgs.pp_size)
        parser.add_argument("--disable-overlap-schedule", action="store_true")
        parser.add_argument("--min-free-slots-delay", type=int, default=ServerArgs.min_free_slots_delay)
        parser.add_argument("--language-only", action="store_true")
        parser.add_argument("--language-model-only", action="store_true")
''',
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/overrides.py": '''
POST_PROCESS_PASSES = []


def register_post_process(fn):
    POST_PROCESS_PASSES.append(fn)
    return fn


class ResolvingConfig:
    def __init__(self, server_args):
        object.__setattr__(self, "_server_args", server_args)

    def __getattr__(self, name):
        server_args = object.__getattribute__(self, "_server_args")
        for _source, declared in reversed(getattr(server_args, "_resolved_overrides", None) or ()):
            if name in declared:
                return declared[name]
        return getattr(server_args, name)


def resolving_view(server_args):
    return ResolvingConfig(server_args)


def declare_resolution(server_args, source, **fields):
    stash = getattr(server_args, "_resolved_overrides", None)
    if stash is None:
        stash = []
        server_args._resolved_overrides = stash
    stash.append((source, dict(fields)))


def run_post_process_pass(server_args, fn):
    declared = fn(resolving_view(server_args))
    if declared:
        declare_resolution(server_args, fn.__qualname__, **declared)


@register_post_process
def _pipeline_parallel_overlap_disable(view):
    if view.pp_size > 1:
        return {"disable_overlap_schedule": True}
    return {}
''',
    "sglang/srt/arg_groups/resolution_hooks.py": '''
def run_hook(step, server_args):
    step(server_args)
''',
    "sglang/srt/arg_groups/hooks.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view


def handle_language_model_only(server_args):
    cfg = resolving_view(server_args)
    if cfg.language_model_only and cfg.language_only:
        raise ValueError("--language-model-only and --language-only are exclusive.")


def handle_deprecated_backends(server_args):
    # A dict built up key by key in a loop, read back, then declared.
    aliases = {"tokenspeed": "cutedsl"}
    renamed = {}
    for attr in ("attention_backend", "prefill_attention_backend"):
        old = getattr(server_args, attr, None)
        if old in aliases:
            renamed[attr] = aliases[old]
    if renamed.get("prefill_attention_backend") == "cutedsl":
        renamed["prefill_attention_backend"] = "triton"  # cutedsl is decode-only
    if renamed:
        declare_resolution(server_args, "deprecated", **renamed)


def backends_of(cfg):
    prefill = cfg.prefill_attention_backend if cfg.prefill_attention_backend else cfg.attention_backend
    return prefill, cfg.attention_backend


def check_backends(server_args):
    backends = set(backends_of(resolving_view(server_args)))
    backends.discard(None)
    assert backends <= {"fa3", "flashinfer", "triton"}, "the resolved attention backends are not supported"


def handle_defaults(server_args):
    cfg = resolving_view(server_args)
    if cfg.device is None:
        declare_resolution(server_args, "defaults", device="cuda")
    if cfg.page_size is None:
        if cfg.attention_backend == "fa3":
            declare_resolution(server_args, "defaults", page_size=128)
        else:
            declare_resolution(server_args, "defaults", page_size=1)


def handle_speculative(server_args):
    cfg = resolving_view(server_args)
    if cfg.speculative_algorithm is not None:
        declare_resolution(server_args, "spec", speculative_algorithm=cfg.speculative_algorithm.upper())
    if cfg.speculative_algorithm == "NEXTN":
        declare_resolution(server_args, "spec", speculative_algorithm="EAGLE")


def handle_dp_attention(server_args):
    cfg = resolving_view(server_args)
    if cfg.enable_dp_attention:
        declare_resolution(server_args, "dp", attn_dp_size=cfg.dp_size, dp_size=1)
    if cfg.attn_dp_size > 4:
        raise ValueError("attention DP is limited to 4 groups.")


def check_attention(server_args, page_size):
    cfg = resolving_view(server_args)
    if cfg.language_only:
        raise ValueError("--language-only needs an encoder server.")
    if cfg.speculative_algorithm == "EAGLE" and page_size > 1:
        raise ValueError("EAGLE needs page size 1.")
    if cfg.device == "cpu" and cfg.attention_backend == "fa3":
        raise ValueError("fa3 is not available on cpu.")
''',
    "sglang/srt/arg_groups/pipeline.py": '''
from sglang.srt.arg_groups.hooks import check_attention, check_backends, handle_defaults, handle_deprecated_backends
from sglang.srt.arg_groups.hooks import handle_dp_attention, handle_language_model_only, handle_speculative
from sglang.srt.arg_groups.overrides import _pipeline_parallel_overlap_disable, resolving_view, run_post_process_pass
from sglang.srt.arg_groups.resolution_hooks import run_hook


def run_resolution_pipeline(server_args):
    cfg = resolving_view(server_args)
    run_hook(handle_language_model_only, server_args)
    if cfg.model_path.lower() in ["none", "dummy"]:
        return
    run_hook(handle_deprecated_backends, server_args)
    run_hook(handle_defaults, server_args)
    run_hook(handle_speculative, server_args)
    run_hook(handle_dp_attention, server_args)
    run_post_process_pass(server_args, _pipeline_parallel_overlap_disable)
    check_attention(server_args, cfg.page_size)
    check_backends(server_args)
''',
    "sglang/srt/arg_groups/validation_hook.py": '''
from sglang.srt.arg_groups.overrides import resolving_view


def check_server_args(server_args):
    cfg = resolving_view(server_args)
    if cfg.disable_overlap_schedule and cfg.min_free_slots_delay > 0:
        raise ValueError("--min-free-slots-delay needs the overlap schedule.")
''',
}

EXCLUSIVE = "--language-model-only and --language-only are exclusive."
LANGUAGE_ONLY = "--language-only needs an encoder server."
EAGLE_PAGE = "EAGLE needs page size 1."
FA3_CPU = "fa3 is not available on cpu."
DP_GROUPS = "attention DP is limited to 4 groups."
OVERLAP = "--min-free-slots-delay needs the overlap schedule."

# (launch command, the first error SGLang raises on it, or None), each worked out by hand from the fixture.
CASES = [
    pytest.param([], None, id="defaults"),
    # An earlier handler fills a default that a later guard reads.
    pytest.param(["--speculative-algorithm", "EAGLE", "--attention-backend", "fa3"], EAGLE_PAGE,
                 id="default filled from another flag"),
    pytest.param(["--speculative-algorithm", "EAGLE"], None, id="default that passes"),
    pytest.param(["--speculative-algorithm", "EAGLE", "--page-size", "16"], EAGLE_PAGE, id="typed value read"),
    # An alias normalised before the guard: lower case upper-cased, NEXTN mapped to EAGLE.
    pytest.param(["--speculative-algorithm", "nextn", "--page-size", "16"], EAGLE_PAGE, id="alias normalised"),
    pytest.param(["--speculative-algorithm", "eagle", "--page-size", "16"], EAGLE_PAGE, id="case normalised"),
    # The device is filled in before the guard reads it.
    pytest.param(["--attention-backend", "fa3"], None, id="device default is not cpu"),
    pytest.param(["--attention-backend", "fa3", "--device", "cpu"], FA3_CPU, id="typed device"),
    # A flag switches another: --enable-dp-attention moves dp_size into attn_dp_size.
    pytest.param(["--dp-size", "8", "--enable-dp-attention"], DP_GROUPS, id="deprecated spelling moved"),
    pytest.param(["--dp-size", "8"], None, id="dp size alone"),
    # check_server_args runs after resolution: pp_size > 1 switched the overlap schedule off.
    pytest.param(["--pp-size", "2", "--min-free-slots-delay", "5"], OVERLAP, id="check after the pipeline"),
    pytest.param(["--min-free-slots-delay", "5"], None, id="overlap on"),
    # A raise in a helper called earlier stops the launch first.
    pytest.param(["--language-only", "--language-model-only"], EXCLUSIVE, id="earlier helper raises first"),
    pytest.param(["--language-only"], LANGUAGE_ONLY, id="later guard when the helper passes"),
    # Both guards hold: the one that runs first is the first error.
    pytest.param(["--language-only", "--speculative-algorithm", "EAGLE", "--page-size", "4"], LANGUAGE_ONLY,
                 id="first of two"),
]


BACKENDS = "the resolved attention backends are not supported"

# Split layout only: a deprecated spelling renamed through a dict built up in a loop, read by a
# helper returning a tuple, compared as a set after `discard(None)`.
BACKEND_CASES = [
    pytest.param(["--attention-backend", "tokenspeed"], BACKENDS, id="alias renamed to an unsupported backend"),
    pytest.param(["--prefill-attention-backend", "tokenspeed"], None, id="renamed, then renamed again"),
    pytest.param(["--prefill-attention-backend", "cutedsl"], BACKENDS, id="typed unsupported backend"),
    pytest.param(["--attention-backend", "fa3", "--prefill-attention-backend", "triton"], None, id="both supported"),
    pytest.param(["--attention-backend", "fa3", "--prefill-attention-backend", "tokenspeed"], None,
                 id="renamed prefill beside a supported base"),
]


def _ruleset(folder: Path, files: dict[str, str]):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    tree = path_tree(folder)
    return ruleset_of(extract(tree), tree)


@pytest.fixture(scope="module", params=["dataclass", "split"])
def layout(request, tmp_path_factory):
    files = DATACLASS_LAYOUT if request.param == "dataclass" else SPLIT_LAYOUT
    return _ruleset(tmp_path_factory.mktemp(request.param), files)


@pytest.mark.parametrize("argv, first", CASES)
def test_first_error_is_what_sglang_raises(layout, argv, first) -> None:
    report = check(layout, ["--model-path", "m", *argv])
    assert not report.argument_errors
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, definite
    assert not [f for f in report.findings if f.certainty == "possible"], "every fact here is a flag"


@pytest.mark.parametrize("argv, first", CASES)
def test_triggers_are_predicates_on_what_the_user_types(layout, argv, first) -> None:
    """Each trigger, evaluated on the typed values and defaults (and the resolution table its
    `field__vK` terms name, itself over typed values), says whether its guard fires."""
    command = parse_command(["--model-path", "m", *argv], layout.catalog)
    values = {**layout.defaults, **command.given}
    guards = [r for r in layout.rules if r.reachable and r.kind is not RuleKind.ADJUSTMENT]
    context = Context(values, writes=layout.writes)
    truths = {r.message: context.truth(r.trigger) for r in guards}
    assert None not in truths.values(), [m for m, t in truths.items() if t is None]
    holding = sorted((r for r in guards if truths[r.message]), key=lambda r: r.order)
    assert (holding[0].message if holding else None) == first


@pytest.mark.parametrize("argv, first", BACKEND_CASES)
def test_dict_entries_helpers_and_set_comparisons_follow_the_resolution(tmp_path_factory, argv, first) -> None:
    ruleset = _split_ruleset(tmp_path_factory)
    report = check(ruleset, ["--model-path", "m", *argv])
    assert not report.argument_errors
    definite = [f.rule.message for f in report.definite]
    assert (definite[0] if definite else None) == first, definite
    assert not [f.rule.message for f in report.findings if f.certainty == "possible"]


_SPLIT: list = []


def _split_ruleset(tmp_path_factory):
    if not _SPLIT:
        _SPLIT.append(_ruleset(tmp_path_factory.mktemp("split-backends"), SPLIT_LAYOUT))
    return _SPLIT[0]


def test_order_follows_the_launch(layout) -> None:
    """Guards are numbered as the launch runs them: a helper called first comes first, checks come last."""
    order = {r.message: r.order for r in layout.rules if r.kind is not RuleKind.ADJUSTMENT}
    assert order[EXCLUSIVE] < order[DP_GROUPS] < order[LANGUAGE_ONLY] < order[EAGLE_PAGE] < order[FA3_CPU] < order[OVERLAP]


def test_an_opaque_term_over_a_resolved_field_reads_the_resolution_table() -> None:
    # `backend.startswith("lora")` after five writes of backend: too long to spell out inline, so
    # the trigger names `backend__v1`; check evaluates it from the table, it is no undecided atom.
    from extractor.core.formula import pinned_name
    from extractor.core.model import TRUE, Atom, Lit, Term, TermKind, Write
    from extractor.logic.evaluation import Context

    switch = Atom(Term(TermKind.FIELD, "lora", "lora", ("lora",)))
    write = Write("backend", 1, 1, "r", switch, ((TRUE, Lit("lora_triton")),))
    text = f'{pinned_name("backend", 1)}.startswith("lora")'
    atom = Atom(Term(TermKind.OPAQUE, text, text, ("backend",)))
    for values, expected in (({"backend": "auto", "lora": True}, True), ({"backend": "auto", "lora": False}, False),
                             ({"backend": "lora_x", "lora": False}, True)):
        assert Context(values, writes={"backend": (write,)}).truth(atom) is expected, values
    assert Context({"backend": "auto"}, writes={"backend": (write,)}).truth(atom) is None  # `lora` unknown


def _replaced_by_tokens(text: str, name: str, replacement: str) -> str:
    """What `run._replace_name` gives, spelled with `tokenize` (as it was written before)."""
    import io
    import tokenize

    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    out, last_end, previous = [], (1, 0), ""
    for index, token in enumerate(tokens):
        if token.start > last_end and token.start[0] == last_end[0]:
            out.append(" " * (token.start[1] - last_end[1]))
        following = tokens[index + 1].string if index + 1 < len(tokens) else ""
        swap = token.type == tokenize.NAME and token.string == name and previous != "." and following != "="
        out.append(replacement if swap else token.string)
        last_end = token.end
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER):
            previous = token.string
    return "".join(out).strip()


@pytest.mark.parametrize("text", [
    "tp_size * 2 > pp_size",
    "self.tp_size + tp_size",
    "f(tp_size=tp_size) == tp_size",
    "tp_size==1 and tp_size<=2 and tp_size != 3",
    '"tp_size" in x or tp_size in ("tp_size", \'tp_size\')',
    'f"{tp_size}" + tp_size_2 + my_tp_size',
    "(tp_size := 4) or tp_size . real",
    "'''tp_size''' + tp_size  # tp_size",
    'x.get("a\\"tp_size") if tp_size else None',
])
def test_replace_name_reads_like_the_tokenizer(text: str) -> None:
    from extractor.analysis.run_values import replace_name as _replace_name

    assert _replace_name(text, "tp_size", "(8)") == _replaced_by_tokens(text, "tp_size", "(8)")


def _spelled_layout(tests: int, case: bool) -> dict[str, str]:
    """`mode` switched to "eager" under `tests` flag tests (in an `if`, or the case of a conditional
    value whose other case is a flag), then a guard on the mode."""
    names = [f"f{i}" for i in range(tests)]
    fields = "\n".join(f"    {n}: int = 0" for n in names)
    flags = "\n".join(f'        parser.add_argument("--{n}", type=int, default=0)' for n in names)
    when = " and ".join(f"self.{n} == {i}" for i, n in enumerate(names))
    handler = f'        self.mode = "eager" if {when} else self.fallback' if case else \
        f'        if {when}:\n            self.mode = "eager"'
    return {
        "sglang/__init__.py": "",
        "sglang/srt/__init__.py": "",
        "sglang/srt/server_args.py": f'''
import argparse
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    mode: str = "auto"
    fallback: str = "auto"
{fields}

    def __post_init__(self):
        self._handle_mode()
        self._check_mode()

    def _handle_mode(self):
{handler}

    def _check_mode(self):
        if self.mode == "eager":
            raise ValueError("eager mode is not supported.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--mode", type=str, default=ServerArgs.mode)
        parser.add_argument("--fallback", type=str, default=ServerArgs.fallback)
{flags}
''',
    }


@pytest.mark.parametrize("tests, case, spelled", [(3, False, True), (25, False, False), (3, True, True), (25, True, False)])
def test_a_read_is_spelled_out_unless_a_write_it_reads_has_a_condition_past_the_limit(tmp_path, tests, case, spelled) -> None:
    """`run.MAX_INLINE_SIZE` bounds each condition of a write a spelled-out read holds, and each case
    of its value: past it, the trigger reads `resolved(mode)` from the resolution table. Both say
    when the guard fires."""
    from extractor.analysis.run import MAX_INLINE_SIZE
    from extractor.core.formula import terms
    from extractor.core.model import TermKind

    assert (tests > MAX_INLINE_SIZE) is not spelled
    ruleset = _ruleset(tmp_path, _spelled_layout(tests, case))
    guard = next(r for r in ruleset.rules if r.message == "eager mode is not supported.")
    kinds = {t.kind for t in terms(guard.trigger)}
    assert (TermKind.RESOLVED not in kinds) is spelled, guard.trigger
    every = [arg for i in range(tests) for arg in (f"--f{i}", str(i))]
    typed = ["--fallback", "eager"] if case else ["--mode", "eager"]
    for argv, fires in ((every, True), (every[:-1] + ["7"], False), (typed, True), ([], False)):
        report = check(ruleset, ["--model-path", "m", *argv])
        assert [f.rule.message for f in report.definite] == (["eager mode is not supported."] if fires else []), argv
