"""Whole-program triggers on small made-up packages: registries, returned override dicts, many call paths,
and the module index (constants, functions parsed from their own lines)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from extractor.analysis.modules import outline, summarize
from extractor.analysis.scope import code
from extractor.analysis.run import MAX_OCCURRENCES
from extractor.core.formula import render
from extractor.core.model import Rule, RuleKind
from extractor.products.extraction.extraction import extract
from extractor.sources.trees import path_tree

SERVER_ARGS = """
import dataclasses

from sglang.srt.arg_groups.overrides import collect_model_overrides


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    attention_backend: str = None
    page_size: int = 1
    dtype: str = "auto"

    def __post_init__(self):
        if self.model_path == "dummy":
            return
        collect_model_overrides(self, "arch")
"""

REGISTRY = """
_EXACT = {}
_BY_PREDICATE = []


def register_exact(architecture):
    def decorator(fn):
        _EXACT.setdefault(architecture, []).append(fn)
        return fn
    return decorator


def register_for(*architectures):
    def decorator(fn):
        for architecture in architectures:
            register_exact(architecture)(fn)
        return fn
    return decorator


def register_predicate(predicate):
    def decorator(fn):
        _BY_PREDICATE.append((predicate, fn))
        return fn
    return decorator


def _invoke(fn, server_args, hf_config):
    declared = fn(server_args, hf_config)
    if not isinstance(declared, dict):
        raise TypeError("provider must return a dict")
    return declared


def collect_model_overrides(server_args, architecture):
    if server_args.page_size > 64:
        return []
    hf_config = None
    found = []
    for fn in _EXACT.get(architecture, ()):
        found.append(_invoke(fn, server_args, hf_config))
    for predicate, fn in _BY_PREDICATE:
        if predicate(architecture):
            found.append(_invoke(fn, server_args, hf_config))
    return found


@register_for("GptOssForCausalLM")
def _gpt_oss_overrides(server_args, hf_config):
    overrides = {}
    if server_args.attention_backend is None:
        if server_args.page_size == 1:
            overrides["attention_backend"] = "triton"
        else:
            overrides["attention_backend"] = "fa3"
    if server_args.dtype == "float32":
        raise ValueError("float32 is not supported")
    overrides["page_size"] = 16
    return overrides
"""


def _extract(folder: Path, files: dict[str, str]) -> list[Rule]:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return list(extract(path_tree(folder)).rules)


def _package(tmp_path: Path, overrides: str = REGISTRY) -> list[Rule]:
    return _extract(tmp_path, {
        "sglang/__init__.py": "",
        "sglang/srt/__init__.py": "",
        "sglang/srt/server_args.py": SERVER_ARGS,
        "sglang/srt/arg_groups/__init__.py": "",
        "sglang/srt/arg_groups/overrides.py": overrides,
    })


def test_returned_override_dict_entries_are_adjustments_under_their_conditions(tmp_path: Path) -> None:
    rules = _package(tmp_path)
    writes = {(r.target, r.value): render(r.condition) for r in rules if r.kind is RuleKind.ADJUSTMENT}
    # Each entry is written when the function returns, under the tests it was staged in. The raise
    # between them needs no mention: it ends the launch, and it comes first in the run's order.
    assert writes[("attention_backend", '"triton"')] == 'attention_backend is None and page_size == 1'
    assert writes[("attention_backend", '"fa3"')] == 'attention_backend is None and page_size != 1'
    assert writes[("page_size", "16")] == "True"
    raised = next(r for r in rules if r.message == "float32 is not supported")
    written = next(r for r in rules if r.target == "page_size" and r.function == "_gpt_oss_overrides")
    assert raised.order < written.order


def test_registered_function_runs_where_its_registry_is_looped_over(tmp_path: Path) -> None:
    rules = _package(tmp_path)
    rule = next(r for r in rules if r.message == "float32 is not supported")
    assert rule.call_path == (
        "sglang/srt/server_args.py::ServerArgs.__post_init__",
        "sglang/srt/arg_groups/overrides.py::collect_model_overrides",
        "sglang/srt/arg_groups/overrides.py::_invoke",
        "sglang/srt/arg_groups/overrides.py::_gpt_oss_overrides",
    )
    # The caller's conditions come along; the loop over the predicate registry, which this decorator
    # does not fill, does not (it would add an undecidable `predicate(architecture)` disjunct).
    assert render(rule.trigger) == (
        'model_path != "dummy" and page_size <= 64 and model_architecture in ["GptOssForCausalLM"]'
        ' and dtype == "float32"'
    )


def test_registered_function_no_loop_runs_keeps_the_registry_path(tmp_path: Path) -> None:
    without_consumer = REGISTRY.replace("found.append(_invoke(fn, server_args, hf_config))", "pass")
    rules = _package(tmp_path, without_consumer)
    rule = next(r for r in rules if r.message == "float32 is not supported")
    assert rule.call_path[0] == "<registry register_for>"
    assert render(rule.trigger) == 'model_architecture in ["GptOssForCausalLM"] and dtype == "float32"'


def test_what_a_registrar_says_is_read_once_and_kept_by_its_text(tmp_path: Path, monkeypatch) -> None:
    """The containers a registrar fills and the registrars it calls are read from its text and kept
    by its digest: the next extraction finds the registries without parsing the registrars again."""
    rules = _package(tmp_path)
    first = extract(path_tree(tmp_path), keep=True)
    assert first.rules == tuple(rules)
    said = first.kept.later["registering"]
    assert set(said.values()) == {(frozenset(), ("register_exact",)), (frozenset({"_EXACT"}), ()),
                                  (frozenset({"_BY_PREDICATE"}), ())}

    def parsed(node):
        raise AssertionError("a registrar kept by its digest is not read again")

    monkeypatch.setattr("extractor.analysis.registry.registering_calls", parsed)
    again = extract(path_tree(tmp_path), store=first.kept)
    assert again.rules == first.rules and again.kept.later["registering"] == said
    # A registrar whose text changed is read again.
    registry = tmp_path / "sglang/srt/arg_groups/overrides.py"
    registry.write_text(registry.read_text().replace("register_exact(architecture)(fn)",
                                                     "register_exact(architecture)(fn)  # each one"))
    monkeypatch.undo()
    changed = extract(path_tree(tmp_path), store=first.kept)
    assert len(changed.kept.later["registering"]) == 3 and changed.kept.later["registering"] != said


def test_paths_beyond_the_cap_leave_an_undecided_atom(tmp_path: Path) -> None:
    callers = "\n".join(
        f"        if self.mode == {i}:\n            check(self)" for i in range(MAX_OCCURRENCES + 2)
    )
    rules = _extract(tmp_path, {"m.py": f"""
class ServerArgs:
    def __post_init__(self):
{callers}


def check(server_args):
    if server_args.tp_size > 8:
        raise ValueError("too many")
"""})
    trigger = render(next(r for r in rules if r.message == "too many").trigger)
    last = MAX_OCCURRENCES - 1
    assert "mode == 0 " in trigger and f"mode == {last} " in trigger and f"mode == {last + 1} " not in trigger
    assert "reached_by_other_calls('check')" in trigger


def test_a_name_bound_in_try_and_except_is_not_a_constant() -> None:
    module = summarize("m.py", textwrap.dedent("""
        import os
        try:
            HAS_AMX = os.cpu_count() > 4
        except Exception:
            HAS_AMX = False
        LIMIT = 8
        if os.name == "nt":
            MODE = "a"
        else:
            MODE = "b"
        TWICE = 1
        TWICE += 1
    """))
    assert {name: lit.value for name, lit in module.constants.items()} == {"LIMIT": 8}


def test_functions_are_parsed_from_their_own_lines_exactly() -> None:
    text = textwrap.dedent('''
        class ServerArgs:
            x: int = 0

            @property
            def label(self):
                return "x"

            def check(self):
                note = """
        a line at column zero inside a string
        """
                if self.x > 1 and note:
                    raise ValueError(f"x too large: {self.x} — ünïcode")

            def check(self):  # redefined: the first one keeps its guards under a key of its own
                def inner():
                    raise ValueError("inner")
                inner()
        if True: pass
    ''')
    module = summarize("m.py", text)
    assert list(module.functions) == ["ServerArgs.label", "ServerArgs.check@9", "ServerArgs.check", "ServerArgs.check.inner"]
    first = module.functions["ServerArgs.check@9"]
    assert (first.line, first.end_line, first.key) == (9, 14, "m:ServerArgs.check@9")
    message = first.node.body.body[1].body.body[0].body[0].exc.args[0].value  # type: ignore[attr-defined]
    assert code(message) == 'f"x too large: {self.x} — ünïcode"'
    inner = module.functions["ServerArgs.check.inner"]
    assert (inner.line, inner.class_name) == (17, None)
    lazy = outline("m.py", text)
    assert lazy.functions["ServerArgs.check.inner"].line == 17  # parsed with `ServerArgs.check` around it


def test_a_function_after_a_form_feed_is_read(tmp_path: Path) -> None:
    # A form feed opens the line (old page-break style): the function's own lines do not parse alone
    # under `if 1:`, so the module is parsed whole for it.
    rules = _extract(tmp_path, {"m.py": "class ServerArgs:\n    def __post_init__(self):\n        helper(self)\n\n"
                                        "\x0cdef helper(server_args):\n    if server_args.b:\n"
                                        "        raise ValueError('b set')\n"})
    rule = next(r for r in rules if r.kind is RuleKind.RAISE)
    assert (rule.message, rule.location.line, render(rule.trigger)) == ("b set", 7, "b")


def test_flag_defaults_are_the_value_without_parentheses_or_comments(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(textwrap.dedent("""
        from typing import Annotated as A, Optional


        class ServerArgs:
            backend: A[Optional[str], "The backend."] = (
                None  # auto-detect from the hardware
            )
            capacity: A[int, "Slots."] = (10 * 1000)


        def add_cli_args(parser):
            parser.add_argument("--ratio", type=float, default=(  0.5  ), help="A " "ratio.")
    """), encoding="utf-8")
    flags = {f.name: f for f in extract(path_tree(tmp_path)).flags}
    assert (flags["backend"].default, flags["backend"].default_value) == ("None", None)
    assert (flags["capacity"].default, flags["capacity"].default_is_literal) == ("10 * 1000", False)
    assert (flags["ratio"].default, flags["ratio"].default_value, flags["ratio"].help) == ("0.5", 0.5, "A ratio.")


def test_setattr_over_a_literal_tuple_of_names_writes_each_field(tmp_path: Path) -> None:
    rules = _extract(tmp_path, {"m.py": """
class ServerArgs:
    def __post_init__(self):
        for attr in ("attention_backend", "decode_attention_backend"):
            if getattr(self, attr, None) == "compressed":
                setattr(self, attr, "dsv4")
"""})
    writes = {(r.target, r.value): render(r.condition) for r in rules if r.kind is RuleKind.ADJUSTMENT}
    assert writes == {
        ("attention_backend", '"dsv4"'): 'attention_backend == "compressed"',
        ("decode_attention_backend", '"dsv4"'): 'decode_attention_backend == "compressed"',
    }


def test_enum_members_read_as_what_a_flag_holds(tmp_path: Path) -> None:
    rules = _extract(tmp_path, {
        "sglang/__init__.py": "",
        "sglang/srt/__init__.py": "",
        "sglang/srt/kinds.py": """
import enum


class ConnectorType(str, enum.Enum):
    INSTANCE = "instance"
    FS = "fs"


class Algo(enum.Enum):
    EAGLE = enum.auto()
    EAGLE3 = enum.auto()

    @classmethod
    def from_string(cls, name):
        return cls[name.upper()]
""",
        "sglang/srt/server_args.py": """
from sglang.srt.kinds import Algo, ConnectorType


class ServerArgs:
    def __post_init__(self):
        if self.connector == ConnectorType.INSTANCE:
            raise ValueError("instance connector")
        if Algo.from_string(self.algo) in (Algo.EAGLE, Algo.EAGLE3):
            raise ValueError("eagle")
""",
    })
    conditions = {r.message: render(r.condition) for r in rules}
    assert conditions["instance connector"] == 'connector == "instance"'  # a str Enum equals its value
    assert conditions["eagle"] == 'algo in ["EAGLE", "EAGLE3"]'  # parsed by name


def test_a_parameter_the_call_leaves_out_holds_its_default(tmp_path: Path) -> None:
    rules = _extract(tmp_path, {"m.py": """
class ServerArgs:
    def __post_init__(self):
        run_hook(handle_memory, self)


def run_hook(step, server_args):
    step(server_args)


def handle_memory(server_args, gpu_mem=None):
    if gpu_mem is None:
        gpu_mem = probe_capacity(server_args.device)
    if gpu_mem < server_args.reserved_mb:
        raise ValueError("not enough memory")
"""})
    rule = next(r for r in rules if r.message == "not enough memory")
    assert render(rule.condition) == (  # the function alone: gpu_mem may be anything
        "gpu_mem is None and probe_capacity(device) < reserved_mb or gpu_mem is not None and gpu_mem < reserved_mb"
    )
    assert render(rule.trigger) == "probe_capacity(device) < reserved_mb"


def test_what_a_function_s_facts_say_is_known_without_its_syntax() -> None:
    """A call that leaves no parameter out binds no default, and a function that is not straight-line
    assignments then one `return` inlines as nothing: both known from its facts, without parsing it
    (a function kept by an earlier extraction is parsed only when something reads its syntax)."""
    from dataclasses import replace

    from extractor.analysis.callgraph import _with_defaults

    module = summarize("m.py", textwrap.dedent("""
        def handle(server_args, gpu_mem=None, *, strict=False):
            if gpu_mem is None:
                return 1
            return 2


        def predicate(cfg):
            \"\"\"Doc.\"\"\"
            mode = cfg.mode
            return mode is not None
    """))

    def unparsed():
        raise AssertionError("its syntax was read")

    handle, predicate = (replace(module.functions[key], source=unparsed) for key in ("handle", "predicate"))
    env = {"gpu_mem": object(), "strict": object()}
    assert _with_defaults(handle, env, frozenset({"server_args"})) is env
    assert handle.straight is False and handle.straight_return is None
    assert predicate.straight is True
    left_out = module.functions["handle"]  # a call that leaves `strict` out binds it to its default
    assert set(_with_defaults(left_out, {"gpu_mem": object()}, frozenset())) == {"gpu_mem", "strict"}
    assigned, returned = module.functions["predicate"].straight_return
    assert [name for name, _ in assigned] == ["mode"] and code(returned) == "mode is not None"


def test_triggers_spell_flags_as_the_catalog_does(tmp_path: Path) -> None:
    from extractor.products.extraction.output import rules_document

    (tmp_path / "m.py").write_text(textwrap.dedent("""
        from typing import Annotated as A, Optional


        class ServerArgs:
            ep_join_mode: A[Optional[str], Arg(cli_name="--elastic-ep-join-mode", help="How to join.")] = None
            workers: A[int, Arg(no_cli=True, help="Worker threads.")] = 1

            def __post_init__(self):
                if self.ep_join_mode is not None and self.workers < 1 and self.page_size > 1:
                    raise ValueError("join needs workers")
    """), encoding="utf-8")
    (record,) = rules_document(extract(path_tree(tmp_path)))["rules"]
    assert record["trigger_cli"] == "--elastic-ep-join-mode is not None and workers < 1 and --page-size > 1"
    assert record["trigger_flags"] == ["--elastic-ep-join-mode", "--page-size"]  # workers has no flag
    atoms = record["trigger"]["args"]
    assert [a["left"].get("flag") for a in atoms] == ["--elastic-ep-join-mode", None, "--page-size"]


def test_adjustments_list_the_earlier_adjustments_they_read(tmp_path: Path) -> None:
    rules = _extract(tmp_path, {"m.py": """
class ServerArgs:
    def __post_init__(self):
        self._pick_backend()
        self._pick_page_size()

    def _pick_backend(self):
        if self.backend is None:
            self.backend = "fa3"

    def _pick_page_size(self):
        if self.backend == "fa3":
            self.page_size = 128
"""})
    by_target = {r.target: r for r in rules if r.kind is RuleKind.ADJUSTMENT}
    assert by_target["page_size"].affected_by == (by_target["backend"].id,)
    assert by_target["backend"].affected_by == ()


def test_yield_is_found_only_before_a_comment_on_its_own_line() -> None:
    """`_YIELDS` reads line by line (it once spanned lines, and cost time quadratic in a function's length)."""
    from extractor.analysis.modules import _YIELDS

    assert _YIELDS.search("def f():\n    x = 1\n    yield x\n")
    assert _YIELDS.search("def f():\n    return (yield)\n")
    assert not _YIELDS.search("def f():\n    # yield x\n    return 1\n")
    assert not _YIELDS.search("def f():\n    x = 1  # then yield it\n    return x\n")
    assert not _YIELDS.search("def f():\n    yielded = 1\n")
    long = "def f():\n" + "    x = 1\n" * 5000 + "    # yield\n"
    assert not _YIELDS.search(long)


def test_a_kept_outline_indexes_the_module_as_parsing_it_does() -> None:
    """A module indexed from an `Outline` kept before (by path and text) has the same functions,
    classes, constants, imports and skeleton, and parses its tree only when something reads it."""
    import ast

    from extractor.analysis.modules import outline_key

    text = textwrap.dedent('''
        import os
        from .registry import register_thing

        LIMIT = 8

        class Mode(str, Enum):
            A = "a"

        @register_thing("x")
        def handler(server_args, extra=1):
            def inner():
                return LIMIT
            return inner()

        def handler(server_args):  # shadows the one above
            raise ValueError("no")
    ''')
    fresh = outline("pkg/m.py", text)
    kept = {outline_key("pkg/m.py", text): fresh.outline()}
    again = outline("pkg/m.py", text, kept)
    assert again._syntax is None  # nothing parsed yet
    assert list(again.functions) == list(fresh.functions) == ["handler.inner", "handler@11", "handler"]
    assert [again.functions.registers(key) for key in again.functions] == [False, True, False]
    assert (again.classes, again.constants, again.imports) == (fresh.classes, fresh.constants, fresh.imports)
    assert again.skeleton == fresh.skeleton and again._syntax is None
    assert [again.functions.digest(key) for key in again.functions] == [fresh.functions.digest(key) for key in fresh.functions]
    assert again.outline() is kept[outline_key("pkg/m.py", text)]  # kept as it was read
    # Read, the tree is the one a parse gives, its nodes by the same keys.
    assert ast.dump(again.syntax) == ast.dump(fresh.syntax)
    assert again.function_node("handler@11").lineno == 11 and again.class_node("Mode").name == "Mode"
    assert again.functions["handler"].line == fresh.functions["handler"].line == 16
    # Another text or path is another module: not taken from the kept index.
    assert outline("pkg/m.py", text + "\nX = 1\n", kept).outline() is not kept[outline_key("pkg/m.py", text)]
    assert outline("pkg/n.py", text, kept)._syntax is not None


def test_a_kept_outline_reads_declarations_without_function_bodies() -> None:
    """Module constants, class fields and enum members of a module indexed from a kept `Outline` are
    read from the module parsed with bodiless functions: the same statements at the same places,
    with the whole tree left unparsed; a class inside a function comes from the whole tree."""
    import ast

    from extractor.analysis.modules import outline_key

    text = textwrap.dedent('''
        import enum
        LIMIT = 8
        NAMES = ["a"] + ["b"]

        @dataclasses.dataclass
        class Config:
            size: int = LIMIT  # a field
            mode: str = "auto"

            @property
            def double(self):
                return self.size * 2

            class Inner:
                KIND = "x"

        def helper(x,
                   y=1):
            class Local:
                VALUE = 1
            return x

        if LIMIT:
            def fallback(): pass
        NAMES.append("c")
    ''')
    fresh = outline("pkg/m.py", text)
    again = outline("pkg/m.py", text, {outline_key("pkg/m.py", text): fresh.outline()})

    def assignments(body) -> list[str]:
        return [ast.dump(s, include_attributes=True) for s in body if not isinstance(s, (ast.FunctionDef, ast.ClassDef))]

    for qualname in ("Config", "Config.Inner"):
        assert assignments(again.declared_class(qualname).body) == assignments(fresh.class_node(qualname).body)
    assert assignments(again.declarations.body) == assignments(fresh.syntax.body)
    declared = again.declared_class("Config")
    method = next(s for s in declared.body if isinstance(s, ast.FunctionDef))
    assert (method.name, method.lineno, [type(s) for s in method.body]) == ("double", 11, [ast.Pass])  # on its decorator's line
    assert again._syntax is None  # read without the whole tree
    assert again.declared_class("helper.Local").body[0].lineno == 21 and again._syntax is not None


PREDICATE_PROVIDER = '''


@register_predicate(
    lambda arch: "Step3" in arch
    or arch.endswith("MoeForCausalLM")
)
def _step3_overrides(server_args, hf_config):
    if server_args.dtype == "float16":
        raise ValueError("Step3 needs bfloat16")
    return {}
'''


def test_predicate_registered_provider_runs_under_its_predicate(tmp_path: Path) -> None:
    """`@register_predicate(lambda arch: ...)`: the provider runs where the loop over predicates calls it,
    under its own lambda's test of the architecture, not an undecidable `predicate(architecture)`."""
    rules = _package(tmp_path, REGISTRY + PREDICATE_PROVIDER)
    rule = next(r for r in rules if r.message == "Step3 needs bfloat16")
    assert rule.call_path[-1] == "sglang/srt/arg_groups/overrides.py::_step3_overrides"
    text = render(rule.trigger)
    assert "predicate(" not in text
    assert '"Step3" in model_architecture or model_architecture.endswith("MoeForCausalLM")' in text
    from extractor.logic.evaluation import Context
    from extractor.logic.facts import Facts
    from extractor.logic.model_config import ModelFacts

    for architecture, fires in (("Step3VLForConditionalGeneration", True), ("Qwen3MoeForCausalLM", True),
                                ("LlamaForCausalLM", False)):
        launch = Context({"model_path": "m", "dtype": "float16", "page_size": 1},
                         facts=Facts(model=ModelFacts.from_architecture(architecture)))
        assert launch.truth(rule.trigger) is fires, architecture
