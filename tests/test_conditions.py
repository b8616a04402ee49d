"""Tables of small guard functions and the condition, terms, message and id extracted for each guard."""

from __future__ import annotations

import ast
import itertools
import textwrap
from pathlib import Path

import pytest

from extractor.core.formula import render, terms
from extractor.core.model import Const, Rule, RuleKind, TermKind
from extractor.products.extraction.extraction import extract
from extractor.sources.trees import path_tree


def guards(folder: Path, files: dict[str, str]) -> list[Rule]:
    """Write the snippets into `folder` and extract them the way the CLI does; raises and asserts only."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return [r for r in extract(path_tree(folder)).rules if r.kind is not RuleKind.ADJUSTMENT]


def conditions(folder: Path, src: str) -> dict[str, str]:
    found = {}
    for rule in guards(folder, {"guards.py": src}):
        text = render(rule.condition)
        ast.parse(text, mode="eval")  # condition_source is always Python
        found[rule.message] = text
    return found


CONDITIONS = [
    pytest.param(
        """
        def check(server_args):
            chosen = {server_args.prefill_backend, server_args.decode_backend}
            if "tilelang" in chosen:
                raise ValueError("tilelang")
            if server_args.mode not in (server_args.default_mode, "x"):
                raise ValueError("mode")
            if server_args.mode in ("a", "b"):
                raise ValueError("literals")
        """,
        {
            "tilelang": 'prefill_backend == "tilelang" or decode_backend == "tilelang"',
            "mode": 'not (mode == default_mode or mode == "x")',
            "literals": 'mode in ["a", "b"]',  # a display of literals stays one test
        },
        id="a-display-of-operands-tested-member-by-member",
    ),
    pytest.param(
        """
        def check(server_args):
            if server_args.mode == "a":
                if server_args.tp_size > 1:
                    raise ValueError("a with tp")
            elif server_args.mode == "b":
                raise ValueError("b")
            else:
                if server_args.pp_size:
                    raise ValueError("other with pp")
        """,
        {
            "a with tp": 'mode == "a" and tp_size > 1',
            "b": 'mode != "a" and mode == "b"',
            "other with pp": 'mode != "a" and mode != "b" and pp_size',
        },
        id="nested-if-elif-else",
    ),
    pytest.param(
        """
        def check(server_args):
            if server_args.model_path.lower() in ["none", "dummy"]:
                return
            if server_args.a:
                raise ValueError("first")
            if server_args.b:
                raise ValueError("second")
        """,
        {
            "first": 'model_path.lower() not in ["none", "dummy"] and a',
            # an earlier raise ends the launch: a later guard's condition need not say it did not fire
            "second": 'model_path.lower() not in ["none", "dummy"] and b',
        },
        id="early-return-and-raise",
    ),
    pytest.param(
        """
        def check(server_args):
            for item in server_args.items:
                if item == "skip":
                    continue
                if item == "stop":
                    break
                if item == "bad":
                    raise ValueError("bad item")
            while server_args.retries > 0:
                raise ValueError("retrying")
        """,
        {
            "bad item": 'item in items and item != "skip" and item != "stop" and item == "bad"',
            "retrying": "retries > 0",
        },
        id="loop-continue-break",
    ),
    pytest.param(
        """
        class ServerArgs:
            def _handle_x(self):
                if self.mode == "a":
                    if self.tp_size > 1:
                        raise ValueError("a and tp")
                elif self.mode == "b":
                    return
                else:
                    raise ValueError("neither")
                raise ValueError("after the chain")
        """,
        {
            "a and tp": 'mode == "a" and tp_size > 1',
            "neither": 'mode != "a" and mode != "b"',
            "after the chain": 'not (mode != "a" and mode == "b")',  # only the `return` leaves
        },
        id="exits-in-every-branch",
    ),
    pytest.param(
        """
        def check(server_args):
            if not (server_args.a and server_args.b or not server_args.c):
                raise ValueError("and-or-not")
        """,
        {"and-or-not": "not (a and b or not c)"},
        id="and-or-not",
    ),
    pytest.param(
        """
        def check(args):
            if 1 < args.z <= 3:
                raise ValueError("chained")
            if 2 == args.w or 0 > args.v:
                raise ValueError("literal on the left")
        """,
        {
            "chained": "z > 1 and z <= 3",
            "literal on the left": "w == 2 or v < 0",
        },
        id="comparisons",
    ),
    pytest.param(
        """
        def check(args):
            if args.y in ("p", "q") and "x" not in args.names:
                raise ValueError("membership")
            if args.x is None or args.u is not None:
                raise ValueError("identity")
        """,
        {
            "membership": 'y in ["p", "q"] and "x" not in names',
            "identity": 'x is None or u is not None',
        },
        id="in-and-is-none",
    ),
    pytest.param(
        """
        def check(server_args):
            cfg = resolving_view(server_args)
            x = cfg.a
            method = cfg.algorithm.upper()
            window = int(cfg.window)
            if x > 1 and method == "EAGLE" and window > 4:
                raise ValueError("substituted")
        """,
        {"substituted": 'a > 1 and algorithm.upper() == "EAGLE" and int(window) > 4'},
        id="local-substitution",
    ),
    pytest.param(
        """
        def check(server_args):
            cfg = resolving_view(server_args)
            if cfg.mode == "decode":
                limit = 8
            else:
                limit = cfg.max_limit
            if cfg.n > limit:
                raise ValueError("over the limit")
        """,
        {"over the limit": 'mode == "decode" and n > 8 or mode != "decode" and n > max_limit'},
        id="local-per-branch",
    ),
    pytest.param(
        """
        def check(server_args):
            size = server_args.page_size or 1
            backend = server_args.a if server_args.a is not None else server_args.b
            if size > 1 and backend == "x":
                raise ValueError("defaults")
        """,
        {"defaults": 'page_size and page_size > 1 and (a is not None and a == "x" or a is None and b == "x")'},
        id="local-or-default-and-conditional",
    ),
    pytest.param(
        """
        def check(server_args):
            cfg = resolving_view(server_args)
            if (x := cfg.a) is not None:
                if x > 1:
                    raise ValueError("walrus")
        """,
        {"walrus": "a is not None and a > 1"},
        id="assignment-expression",
    ),
    pytest.param(
        """
        def check(server_args):
            cfg = resolving_view(server_args)
            problems = []
            if cfg.a:
                problems.append("a")
            if cfg.b:
                problems.append("b")
            if problems:
                raise ValueError("problems: " + ", ".join(problems))
        """,
        {'problems: {", ".join(problems)}': "b or a"},
        id="problems-append",
    ),
    pytest.param(
        """
        def check(server_args):
            cfg = resolving_view(server_args)
            problems = []
            if cfg.a:
                problems.append("a")
                problems.extend(more_of(cfg))
            if problems:
                raise ValueError("problems: " + ", ".join(problems))
        """,
        {'problems: {", ".join(problems)}': "a"},
        id="problems-extended-after-append",
    ),
    pytest.param(
        """
        def check(server_args):
            if server_args.mode in (
                "a",  # a comment inside the test
                "b",
            ) and probe(server_args.x,  # another
                        1):
                raise ValueError("commented")
        """,
        {"commented": 'mode in ["a", "b"] and probe(x, 1)'},
        id="comments-inside-a-test",
    ),
    pytest.param(
        """
        def check(server_args):
            backend = server_args.a or server_args.b
            if backend.upper() == "X":
                raise ValueError("opaque operand")
        """,
        {"opaque operand": 'a and a.upper() == "X" or not a and b.upper() == "X"'},
        id="transform-of-a-path-dependent-operand-per-case",
    ),
    pytest.param(
        """
        def check(server_args):
            if (server_args.tp_size, server_args.pp_size) < (1, 1):
                raise ValueError("tuple")
            if set(server_args.backends) <= {"a", "b"} and server_args.mode in ["x", "y"]:
                raise ValueError("set")
        """,
        {
            "tuple": "(tp_size, pp_size) < (1, 1)",
            "set": 'set(backends) <= {"a", "b"} and mode in ["x", "y"]',
        },
        id="container-literals-keep-their-type",
    ),
    pytest.param(
        """
        def check(server_args):
            if (server_args.tp_size, server_args.pp_size) != (1, 1):
                raise ValueError("not both one")
            if (server_args.mode, server_args.dp_size) == ("x", 2):
                raise ValueError("x on two")
        """,
        {
            "not both one": "not (tp_size == 1 and pp_size == 1)",
            "x on two": 'mode == "x" and dp_size == 2',
        },
        id="tuple-equality-item-by-item",
    ),
    pytest.param(
        """
        def check(server_args, cfg=None):
            cfg = cfg or resolving_view(server_args)
            unsupported = (("--two-batch-overlap", cfg.enable_tbo), ("--pp", cfg.pp_size > 1))
            for feature, enabled in unsupported:
                if enabled:
                    raise ValueError(f"{feature} is not supported")
            for name in ("attention_backend", "decode_backend"):
                if getattr(cfg, name) == "dsv4":
                    return
            raise ValueError("after the loops")
        """,
        {
            "{feature} is not supported": "enable_tbo or pp_size > 1",
            "after the loops": 'not (attention_backend == "dsv4" or decode_backend == "dsv4")',
        },
        id="loops-over-literal-tuples-unrolled",
    ),
    pytest.param(
        """
        def backends_of(cfg):
            prefill = cfg.prefill_backend if cfg.prefill_backend is not None else cfg.attention_backend
            decode = cfg.decode_backend
            return prefill, decode


        def check(server_args):
            prefill, decode = backends_of(server_args)
            if prefill == "dsa" and decode != "dsa":
                raise ValueError("mixed")
        """,
        {
            "mixed": '(prefill_backend is not None and prefill_backend == "dsa" or prefill_backend is None'
                     ' and attention_backend == "dsa") and decode_backend != "dsa"',
        },
        id="tuple-unpacked-from-a-helper",
    ),
    pytest.param(
        """
        def pick(server_args, arch):
            cfg = resolving_view(server_args)
            if cfg.algorithm == "STANDALONE":
                return (3, 1, 4)
            if arch in ["LlamaForCausalLM"]:
                return (5, 4, 8)
            return 3, 1, 4


        def check(server_args):
            steps, topk, draft = pick(server_args, server_args.arch)
            if topk > 1 and server_args.page_size > 1:
                raise ValueError("topk over one with pages")
        """,
        {"topk over one with pages": 'algorithm != "STANDALONE" and arch in ["LlamaForCausalLM"] and page_size > 1'},
        id="tuple-unpacked-from-a-helper-with-several-returns",
    ),
    pytest.param(
        """
        import dataclasses


        @dataclasses.dataclass
        class ServerArgs:
            speculative_algorithm: str = None
            speculative_num_steps: int = None
            speculative_eagle_topk: int = None
            page_size: int = 1

            def get_model_config(self):
                if not hasattr(self, "model_config"):
                    self.model_config = ModelConfig.from_server_args(self)
                return self.model_config

            def _handle_speculative(self):
                if self.speculative_num_steps is None:
                    (self.speculative_num_steps, self.speculative_eagle_topk) = pick(self)
                if self.speculative_eagle_topk > 1 and self.page_size > 1:
                    raise ValueError("topk over one with pages")


        def pick(self: ServerArgs):
            arch = self.get_model_config().hf_config.architectures[0]
            if self.speculative_algorithm == "STANDALONE":
                return (3, 1)
            if arch in ["LlamaForCausalLM"]:
                return (5, 4)
            return (3, 1)
        """,
        {  # as 0.5.10's auto_choose_speculative_params(self): the model config it reads is a cache it fills
            "topk over one with pages": 'speculative_num_steps is None and speculative_algorithm != "STANDALONE" and '
                                        'self.get_model_config().hf_config.architectures[0] in ["LlamaForCausalLM"] '
                                        'and page_size > 1 or speculative_num_steps is not None and '
                                        'speculative_eagle_topk > 1 and page_size > 1'},
        id="fields-unpacked-from-a-helper-that-fills-a-cache",
    ),
    pytest.param(
        """
        def check(server_args):
            cfg = resolving_view(server_args)
            parsed = []
            for path in cfg.lora_paths:
                if not isinstance(path, str):
                    raise ValueError("not a string")
                ref = make_ref(path)
                parsed.append(ref)
            if len(parsed) > cfg.max_loaded_loras:
                raise ValueError("more paths than loaded")
            kept = []
            for path in cfg.lora_paths:
                if path.startswith("skip"):
                    continue
                kept.append(path)
            if len(kept) > cfg.max_loaded_loras:
                raise ValueError("more kept than loaded")
        """,
        {  # as 0.5.23's check_lora_server_args: one LoRARef appended per path; a `continue` may skip one
            "not a string": "any(not isinstance(path, str) for path in lora_paths)",  # fires for some path
            "more paths than loaded": "len(lora_paths) > max_loaded_loras",
            "more kept than loaded": "len(kept) > max_loaded_loras",
        },
        id="a-list-a-loop-fills-one-item-per-item",
    ),
    pytest.param(
        """
        class ServerArgs:
            def _late_resolution(self, source, **fields):
                from sglang.srt.arg_groups.overrides import declare_late_resolution

                declare_late_resolution(self, source, **fields)

            def check_lora_server_args(self):
                if self.lora_paths and self.enable_lora is None:
                    self._late_resolution("check_lora_server_args", enable_lora=True)
                if self.enable_lora and len(self.lora_paths) > self.max_loaded_loras:
                    raise ValueError("more paths than loaded")
        """,
        {  # as 0.5.18: the method passes its keywords on to declare_late_resolution
            "more paths than loaded": "lora_paths and enable_lora is None and len(lora_paths) > max_loaded_loras or not"
                                      " (lora_paths and enable_lora is None) and enable_lora and len(lora_paths) >"
                                      " max_loaded_loras",
        },
        id="a-method-declaring-a-resolution",
    ),
    pytest.param(
        """
        def backends_of(cfg):
            prefill = cfg.prefill_backend if cfg.prefill_backend else cfg.attention_backend
            decode = cfg.decode_backend if cfg.decode_backend else cfg.attention_backend
            return prefill, decode


        class ServerArgs:
            def _backends(self):
                return backends_of(resolved_view(self))

            def _handle(self):
                if self._backends()[0] == "mha" and self.page_size > 1:
                    raise ValueError("indexed")
                prefill, decode = self._backends()
                if decode == "mla":
                    raise ValueError("unpacked")
        """,
        {  # as 0.5.18's `self._resolved_attention_backends()`: a method returning what a helper returns
            "indexed": '(((prefill_backend if prefill_backend else attention_backend), (decode_backend if decode_backend'
                       ' else attention_backend)))[0] == "mha" and page_size > 1',
            "unpacked": 'decode_backend and decode_backend == "mla" or not decode_backend and attention_backend == "mla"',
        },
        id="method-of-the-arguments-returning-a-helper",
    ),
    pytest.param(
        """
        class ServerArgs:
            @property
            def chunk_size(self):
                if not hasattr(self, "_chunk_size"):
                    if self.page_size % 64 != 0:
                        raise ValueError("filled on first use")
                    self._chunk_size = self.page_size
                return self._chunk_size

            def _handle(self):
                if hasattr(self, "chunk_size") and self.page_size > 4096:
                    raise ValueError("a property is there")
        """,
        {  # a cache the run fills on first use is unset at launch; a property of the arguments is not one
            "filled on first use": "page_size % 64 != 0",
            "a property is there": 'hasattr(self, "chunk_size") and page_size > 4096',
        },
        id="hasattr-of-a-cache-filled-on-first-use",
    ),
    pytest.param(
        """
        class ServerArgs:
            def _handle_lora(self):
                if isinstance(self.lora_paths, list):
                    lora_paths = self.lora_paths
                    self.lora_paths = []
                    for lora_path in lora_paths:
                        self.lora_paths.append(lora_path)
                assert self.lora_paths or self.max_lora_rank, "paths or a rank"
        """,
        {  # as 0.5.10: the field emptied, then filled again in place by a loop over what it held
            "paths or a rank": "not (isinstance(lora_paths, list) and lora_paths or isinstance(lora_paths, list) and"
                               " not lora_paths and max_lora_rank or not isinstance(lora_paths, list) and"
                               " (lora_paths or max_lora_rank))",
        },
        id="field-refilled-in-place-by-a-loop",
    ),
    pytest.param(
        """
        def check(server_args):
            renamed = {}
            for attr in ("attention_backend", "decode_backend"):
                if getattr(server_args, attr) == "old":
                    renamed[attr] = "new"
            if renamed.get("attention_backend") == "new":
                raise ValueError("renamed")
        """,
        {"renamed": 'attention_backend == "old"'},
        id="dict-filled-in-a-loop-reads-the-entry-each-item-set",
    ),
    pytest.param(
        """
        import platform


        def is_host_cpu_arm64():
            return platform.machine().lower() in ("aarch64", "arm64")


        def backends_of(cfg):
            return cfg.prefill_backend if cfg.prefill_backend else cfg.attention_backend, cfg.attention_backend


        def check(server_args):
            if is_host_cpu_arm64() and server_args.page_size > 1:
                raise ValueError("arm pages")
            if not set(backends_of(server_args)) <= {"fa3", "triton"}:
                raise ValueError("backends")
        """,
        {  # a platform predicate keeps its name (profiles answer it); a value helper shows what it reads
            "arm pages": "is_host_cpu_arm64() and page_size > 1",
            "backends": 'not (set((prefill_backend if prefill_backend else attention_backend, attention_backend))'
                        ' <= {"fa3", "triton"})',
        },
        id="platform-predicate-kept-value-helper-inlined",
    ),
    pytest.param(
        """
        def check(server_args):
            overrides = {}
            if server_args.a:
                overrides["backend"] = "fa3"
            limits = {"fa4": 128, "fa3": 64}
            backend = overrides.get("backend", server_args.backend)
            if backend == "fa4" and server_args.page_size > limits.get("fa4"):
                raise ValueError("fa4 pages")
        """,
        {  # the branch that filled the dict reads "fa3" (never "fa4"); the empty one reads the default
            "fa4 pages": 'not a and backend == "fa4" and page_size > 128',
        },
        id="get-on-a-dict-display",
    ),
    pytest.param(
        """
        def check(server_args):
            match server_args.mode:
                case "a" | "b":
                    raise ValueError("ab")
                case None:
                    raise ValueError("none")
                case _ if server_args.c > 1:
                    raise ValueError("guarded")
        """,
        {
            "ab": 'mode == "a" or mode == "b"',
            "none": 'not (mode == "a" or mode == "b") and mode is None',
            "guarded": 'not (mode == "a" or mode == "b" or mode is None) and c > 1',
        },
        id="match-cases-in-order",
    ),
    pytest.param(
        """
        def check(server_args):
            try:
                server_args.j.check()
            except KeyError:
                raise
            except (TypeError, IndexError) as e:
                raise ValueError("wrapped") from e
            return
            raise ValueError("dead code")
        """,
        {"wrapped": "raised(TypeError, IndexError)", "dead code": "False"},  # a bare `raise`: no guard of its own
        id="re-raise-and-dead-code",
    ),
    pytest.param(
        """
        def check(server_args, device_id=None):
            try:
                return current_platform.get_device(device_id)
            except Exception:
                raise RuntimeError("one platform call")
            try:
                device = current_platform.get_device(device_id)
                current_platform.set_device(device)
            except Exception:
                raise RuntimeError("two statements")
            try:
                return current_platform.get_device(server_args.rank + 1)
            except Exception:
                raise RuntimeError("an argument that computes")
            try:
                return other.get_device(device_id)
            except Exception:
                raise RuntimeError("not the platform")
        """,
        {"one platform call": "raised(Exception, current_platform.get_device(device_id))",
         "two statements": "raised(Exception)", "an argument that computes": "raised(Exception)",
         "not the platform": "raised(Exception)"},
        id="a-try-body-of-one-platform-call",
    ),
]


@pytest.mark.parametrize(("src", "expected"), CONDITIONS)
def test_condition(tmp_path: Path, src: str, expected: dict[str, str]) -> None:
    assert conditions(tmp_path, src) == expected


RECEIVERS = [
    pytest.param("class ServerArgs:\n    def _handle(self):\n        if self.tp_size > 1:\n            raise ValueError('m')\n",
                 id="self-in-server-args"),
    pytest.param("def f(server_args):\n    if server_args.tp_size > 1:\n        raise ValueError('m')\n", id="server_args"),
    pytest.param("def f(server_args):\n    cfg = resolving_view(server_args)\n    if cfg.tp_size > 1:\n"
                 "        raise ValueError('m')\n", id="resolving-view"),
    pytest.param("def f(args):\n    if args.tp_size > 1:\n        raise ValueError('m')\n", id="args"),
    pytest.param("def f(sa: ServerArgs):\n    if getattr(sa, 'tp_size') > 1:\n        raise ValueError('m')\n",
                 id="getattr-annotated"),
    pytest.param("class ServerArgs:\n    def _handle(self):\n        view = self._resolved()\n        if view.tp_size > 1:\n"
                 "            raise ValueError('m')\n", id="resolved-method"),
]


@pytest.mark.parametrize("src", RECEIVERS)
def test_receiver(tmp_path: Path, src: str) -> None:
    (rule,) = guards(tmp_path, {"guards.py": src})
    assert render(rule.condition) == "tp_size > 1"
    assert [(t.kind, t.name) for t in terms(rule.condition)] == [(TermKind.FIELD, "tp_size")]


def test_class_constants_and_properties_are_not_fields(tmp_path: Path) -> None:
    src = """
class ServerArgs:
    LIMITS = ("a", "b")

    @property
    def url(self):
        return self.host + "/x"

    def __post_init__(self):
        if self.mode in self.LIMITS and self.url and self.size > 20 * 1024:
            raise ValueError("m")
"""
    (rule,) = guards(tmp_path, {"guards.py": src})
    # The class constant reads as its value (the evaluator can test it); the property stays a name.
    assert render(rule.condition) == 'mode in ["a", "b"] and self.url and size > 20480'
    assert sorted(t.name for t in terms(rule.condition) if t.kind is TermKind.FIELD) == ["mode", "size"]


def test_environment_membership_reads_as_set_or_unset(tmp_path: Path) -> None:
    src = 'def f(server_args):\n    if "SGLANG_Y" in os.environ:\n        raise ValueError("m")\n'
    (rule,) = guards(tmp_path, {"guards.py": src})
    assert render(rule.condition) == 'os.environ.get("SGLANG_Y") is not None'


def test_non_receiver_is_not_a_field(tmp_path: Path) -> None:
    src = "def f(server_args, other):\n    if other.tp_size > 1:\n        raise ValueError('m')\n"
    (rule,) = guards(tmp_path, {"guards.py": src})
    assert [t.kind for t in terms(rule.condition)] == [TermKind.OPAQUE]


TERMS = [
    pytest.param("envs.SGLANG_X.get()", TermKind.ENV, "SGLANG_X", id="envs"),
    pytest.param('os.environ.get("X") == "1"', TermKind.ENV, "X", id="os-environ-get"),
    pytest.param('get_bool_env_var("X")', TermKind.ENV, "X", id="get-bool-env-var"),
    pytest.param('"SGLANG_Y" not in os.environ', TermKind.ENV, "SGLANG_Y", id="in-os-environ"),
    pytest.param("is_cuda()", TermKind.PLATFORM, "is_cuda()", id="is-cuda"),
    pytest.param("get_platform().is_sm100", TermKind.PLATFORM, "get_platform().is_sm100", id="get-platform"),
    pytest.param("current_platform.is_hip()", TermKind.PLATFORM, "current_platform.is_hip()", id="current-platform"),
    pytest.param('"Llama" in model_config_of(server_args).hf_config.architectures', TermKind.MODEL,
                 "model_config_of(server_args).hf_config.architectures", id="model-config"),
    pytest.param("os.path.exists(server_args.model_path)", TermKind.OPAQUE, "os.path.exists(model_path)", id="opaque"),
]


@pytest.mark.parametrize(("test", "kind", "name"), TERMS)
def test_term_kind(tmp_path: Path, test: str, kind: TermKind, name: str) -> None:
    (rule,) = guards(tmp_path, {"guards.py": f"def f(server_args):\n    if {test}:\n        raise ValueError('m')\n"})
    (term,) = terms(rule.condition)
    assert (term.kind, term.name) == (kind, name)


MESSAGES = [
    pytest.param('raise ValueError("implicit " "concatenation")', "ValueError", "implicit concatenation", True,
                 id="implicit-concatenation"),
    pytest.param('raise ValueError(f"got {cfg.b!r} for --b, want {server_args.c + 1}")', "ValueError",
                 "got {cfg.b!r} for --b, want {server_args.c + 1}", False, id="f-string"),
    pytest.param('raise ValueError("plus " + str(cfg.c))', "ValueError", "plus {str(cfg.c)}", False, id="concatenation"),
    pytest.param('raise ValueError("percent %s" % cfg.d)', "ValueError", "percent %s", False, id="percent-format"),
    pytest.param('message = "from a local"\n    raise ValueError(message)', "ValueError", "from a local", True,
                 id="local-message"),
    pytest.param('message = "base."\n    message += " more"\n    raise ValueError(message)', "ValueError",
                 "base. more", True, id="local-message-grown"),
    pytest.param('message = "base."\n    if cfg.x:\n        message += " more"\n    raise ValueError(message)',
                 "ValueError", "base.{message}", False, id="local-message-grown-on-one-path"),
    pytest.param('raise RuntimeError("chained") from None', "RuntimeError", "chained", True, id="raise-from"),
    pytest.param("raise NotImplementedError", "NotImplementedError", "", True, id="no-arguments"),
    pytest.param('assert cfg.g, "assert message"', "AssertionError", "assert message", True, id="assert"),
    pytest.param('assert cfg.i, f"assert {cfg.i}"', "AssertionError", "assert {cfg.i}", False, id="assert-f-string"),
]


@pytest.mark.parametrize(("statement", "exception", "message", "static"), MESSAGES)
def test_message(tmp_path: Path, statement: str, exception: str | None, message: str, static: bool) -> None:
    src = f"def f(server_args):\n    cfg = resolving_view(server_args)\n    {statement}\n"
    (rule,) = guards(tmp_path, {"guards.py": src})
    assert (rule.exception, rule.message, rule.message_static) == (exception, message, static)
    assert rule.kind is (RuleKind.ASSERT if exception == "AssertionError" else RuleKind.RAISE)


def test_a_bare_raise_is_no_rule(tmp_path: Path) -> None:
    """`except KeyError: raise` passes on an error raised in the `try` (by a callee or a library): the
    handler's `raise` is no guard of its own."""
    src = "def f(server_args):\n    cfg = resolving_view(server_args)\n    try:\n        pass\n    except KeyError:\n        raise\n"
    assert guards(tmp_path, {"guards.py": src}) == []


def test_assert_without_message_is_a_rule_and_later_guards_do_not_negate_it(tmp_path: Path) -> None:
    # The launch stops at the first failed assert, message or not; the guard after it is
    # reached only when the assert held, and that is the run order's business, not its trigger's.
    src = """
    def f(server_args):
        assert server_args.a
        if server_args.b:
            raise ValueError("after the assert")
    """
    found = conditions(tmp_path, src)
    assert found["AssertionError without a message: assert server_args.a"] == "not a"
    assert found["after the assert"] == "b"


def test_every_guard_of_every_function_is_found(tmp_path: Path) -> None:
    src = """
    if TYPE_CHECKING:
        def f(server_args):
            raise ValueError("first f")
    else:
        def f(server_args):
            raise ValueError("second f")

    class ServerArgs:
        @property
        def x(self):
            raise ValueError("getter")

        @x.setter
        def x(self, value):
            raise ValueError("setter")

    def outer(server_args):
        if server_args.a:
            def inner():
                raise ValueError("inner")
        with open("x"):
            for _ in range(3):
                async def deep():
                    raise ValueError("deep")
    """
    found = {(r.message, r.function) for r in guards(tmp_path, {"guards.py": src})}
    assert found == {
        ("first f", "f"), ("second f", "f"), ("getter", "ServerArgs.x"), ("setter", "ServerArgs.x"),
        ("inner", "outer.inner"), ("deep", "outer.deep"),
    }


# --- ids ----------------------------------------------------------------------------------------

METHOD = '''
class ServerArgs:
    def _handle_cache(self):
        if self.enable_offload and self.mode != "decode":
            raise ValueError("offload is only supported for decode side.")
'''
MOVED = '''
def handle_cache(server_args):
    cfg = resolving_view(server_args)

    # moved out of ServerArgs, a few lines lower
    if cfg.enable_offload and cfg.mode != "decode":
        raise ValueError(
            "offload is only supported for decode side."
        )
'''
DUPLICATES = '''
def check(server_args):
{extra}    if server_args.a:
        raise ValueError("unsupported")
    if server_args.b:
        raise ValueError("unsupported")
    if server_args.b:
        raise ValueError("unsupported")
'''


def ids(folder: Path, files: dict[str, str]) -> list[str]:
    return [r.id for r in sorted(guards(folder, files), key=lambda r: r.location.line) if r.message != "other"]


IDS_KEPT = [
    pytest.param({"a.py": METHOD}, {"a.py": "\n\n\n# lines moved\n" + METHOD}, id="lines-move"),
    pytest.param({"server_args.py": METHOD}, {"hooks/cache_hook.py": MOVED}, id="method-to-function-in-other-file"),
    pytest.param({"a.py": DUPLICATES.format(extra="")},
                 {"a.py": DUPLICATES.format(extra='    if server_args.z:\n        raise ValueError("other")\n')},
                 id="duplicates-after-an-added-guard"),
]


@pytest.mark.parametrize(("before", "after"), IDS_KEPT)
def test_id_is_kept(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> None:
    old = ids(tmp_path / "before", before)
    new = ids(tmp_path / "after", after)
    assert old == new
    assert len(set(old)) == len(old)  # duplicated messages still get distinct ids


def test_ids_differ_by_message(tmp_path: Path) -> None:
    changed = METHOD.replace("decode side.", "decode side only.")
    assert ids(tmp_path / "a", {"a.py": METHOD}) != ids(tmp_path / "b", {"a.py": changed})


# ---- rendering bugs of the triggers issue: each expectation failed on the old output ----------------


def test_negated_set_comparison_stays_negated(tmp_path: Path) -> None:
    # `<=` of sets is "subset of": `not (a <= b)` is not `a > b` (proper superset)
    src = """
    def f(server_args):
        if not (set(server_args.names) <= {"a", "b"}):
            raise ValueError("subset")
        if not (server_args.tp_size <= 3):
            raise ValueError("number")
    """
    found = conditions(tmp_path, src)
    assert found["subset"] == 'not (set(names) <= {"a", "b"})'
    assert found["number"] == "tp_size > 3"  # numbers are totally ordered: the flip is right


def test_identity_with_a_str_enum_member_is_equality(tmp_path: Path) -> None:
    src = """
    from enum import Enum

    class Mode(str, Enum):
        STATIC = "static"
        COMPACT = "compact"

    def f(server_args):
        if server_args.mode is not Mode.STATIC:
            raise ValueError("not static")
        if server_args.other is Mode.COMPACT:
            raise ValueError("compact")
    """
    found = conditions(tmp_path, src)
    assert found["not static"] == 'mode != "static"'
    assert found["compact"] == 'other == "compact"'


def test_a_list_filled_in_a_loop_is_not_empty(tmp_path: Path) -> None:
    # 0.5.10's LoRA check: the list starts empty and a loop appends the adapters; reading it as still
    # empty made `len(paths) > max_loaded_loras` never fire.
    src = """
    def f(server_args):
        paths = []
        for p in server_args.lora_paths:
            paths.append(p)
        if len(paths) > server_args.max_loaded_loras:
            raise ValueError("too many")
    """
    rule = next(r for r in guards(tmp_path, {"guards.py": src}) if r.message == "too many")
    assert rule.condition != Const(False)
    assert "max_loaded_loras" in {n for t in terms(rule.condition) for n in t.fields}


def test_a_string_local_inside_an_f_string_keeps_it_python(tmp_path: Path) -> None:
    # substituting `"index.json"` into `f"{path}/{name}"` would end the f-string early (0.5.23 model_hook)
    src = """
    import os
    def f(server_args):
        name = "index.json"
        if not os.path.exists(f"{server_args.model_path}/{name}"):
            raise ValueError("missing")
    """
    assert conditions(tmp_path, src)["missing"] == 'not os.path.exists(f"{model_path}/{name}")'


def test_a_constant_imported_from_an_unread_module_is_its_value(tmp_path: Path) -> None:
    # The guard imports a set built from another set, in its body, from a module outside the read set.
    (rule,) = guards(tmp_path, {
        "sglang/__init__.py": "",
        "sglang/srt/__init__.py": "",
        "sglang/srt/layers/__init__.py": "",
        "sglang/srt/layers/sp.py": 'MUSE = frozenset({"Muse"})\nSUPPORTED = MUSE | frozenset({"Qwen3ForCausalLM"})\n',
        "sglang/srt/server_args.py": """
            class ServerArgs:
                def __post_init__(self):
                    from sglang.srt.layers.sp import SUPPORTED

                    if self.enable_sp and self.architecture not in SUPPORTED:
                        raise ValueError("sp: unsupported architecture")
            """,
    })
    assert render(rule.condition) == 'enable_sp and architecture not in ["Muse", "Qwen3ForCausalLM"]'


def test_an_env_var_the_function_sets_reads_as_set(tmp_path: Path) -> None:
    # `if not envs.X.is_set(): envs.X.set("python")`, then `envs.X.get() != "python"` can hold only
    # where the launch environment set it to something else.
    found = conditions(tmp_path, """
        def check(server_args):
            if not envs.SGLANG_TREE_BACKEND.is_set():
                envs.SGLANG_TREE_BACKEND.set("python")
            backend = envs.SGLANG_TREE_BACKEND.get()
            if server_args.enable_sharding and backend != "python":
                raise ValueError("sharding needs the python tree")
            if server_args.enable_sharding and not envs.SGLANG_TREE_BACKEND.is_set():
                raise ValueError("never: it was set")
        """)
    assert found == {
        "sharding needs the python tree":
            'enable_sharding and envs.SGLANG_TREE_BACKEND.is_set() and envs.SGLANG_TREE_BACKEND.get() != "python"',
        "never: it was set": "False",
    }


def test_a_value_compared_with_itself_and_a_new_object_tested_for_none(tmp_path: Path) -> None:
    src = """
class ServerArgs:
    def __post_init__(self):
        size = self.page_size
        if size != self.page_size:
            raise ValueError("never: the local kept the field")
        if DraftConfig(layers=self.layers) is None:
            raise ValueError("never: a class makes an object")
        if make_config(self.layers) is None:
            raise ValueError("a helper may return None")
"""
    rules = {r.message: render(r.condition) for r in guards(tmp_path, {"guards.py": src})}
    assert rules["never: the local kept the field"] == "False"
    assert rules["never: a class makes an object"] == "False"
    assert rules["a helper may return None"] != "False"


def test_ifs_in_a_row_over_one_value_keep_each_option_on_its_own_condition(tmp_path: Path) -> None:
    """`if backend is None: backend = <default by platform>`, then `if backend == "x": backend = "y"`
    again and again (0.5.10's `_handle_attention_backend_compatibility`): the value is merged option by
    option, so a guard over a value no default gives reads no platform fact, and every guard is the
    function's own logic (checked on every combination of its inputs)."""
    src = """
    class ServerArgs:
        def _handle_attention_backend(self):
            if self.attention_backend is None:
                if is_sm90_supported():
                    self.attention_backend = "fa3"
                elif is_sm100_supported():
                    self.attention_backend = "trtllm_mha"
                else:
                    self.attention_backend = "triton"
            if self.attention_backend == "torch_native":
                self.page_size = 1
            if self.attention_backend == "fa3":
                if self.page_size > 1:
                    self.attention_backend = "flashinfer"
            if self.attention_backend == "trtllm_mha":
                if self.speculative_eagle_topk > 1:
                    self.attention_backend = "triton"
            if self.attention_backend == "dual_chunk_flash_attn":
                raise ValueError("dual chunk")
            if self.attention_backend == "triton":
                raise ValueError("triton")
    """

    def backend_at_the_end(backend, page_size, topk, sm90, sm100):
        if backend is None:
            backend = "fa3" if sm90 else "trtllm_mha" if sm100 else "triton"
        if backend == "torch_native":
            page_size = 1
        if backend == "fa3" and page_size > 1:
            backend = "flashinfer"
        if backend == "trtllm_mha" and topk > 1:
            backend = "triton"
        return backend

    found = conditions(tmp_path, src)
    assert "is_sm" not in found["dual chunk"]
    for backend in (None, "fa3", "trtllm_mha", "triton", "torch_native", "flashinfer", "dual_chunk_flash_attn"):
        for page_size, topk, sm90, sm100 in itertools.product((1, 64), (1, 4), (False, True), (False, True)):
            names = {"attention_backend": backend, "page_size": page_size, "speculative_eagle_topk": topk,
                     "is_sm90_supported": lambda: sm90, "is_sm100_supported": lambda: sm100}
            end = backend_at_the_end(backend, page_size, topk, sm90, sm100)
            assert eval(found["dual chunk"], {}, names) == (end == "dual_chunk_flash_attn")
            assert eval(found["triton"], {}, dict(names)) == (end == "triton" and end != "dual_chunk_flash_attn")
