"""Docs pages: golden Markdown for a fixture, CommonMark structure, words and solutions from triggers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from extractor.cli import main
from extractor.core.model import And, Atom, Flag, Formula, Lit, Not, Or, Term, TermKind
from extractor.core.serialize import rule_json
from extractor.logic.messages import known_message
from extractor.products.extraction.extraction import extract
from extractor.products.site.pages import page, render_site, source_link
from extractor.products.check.words import Flags, by_function, solutions, way_text, words
from extractor.sources.trees import path_tree

from .conftest import FIXTURES

CASE = FIXTURES / "render_basic"
SOURCE = {"kind": "release", "label": "9.9.9", "release": "9.9.9"}


@pytest.fixture(scope="module")
def extraction():
    return extract(path_tree(CASE / "src"))


def _render(extraction, folder: Path) -> None:
    """The pages as `render` writes them: solutions checked on each rule's example."""
    from extractor.products.check.fixes import example_fixes
    from extractor.products.reuse.rulesets import ruleset_of

    tree = path_tree(CASE / "src")
    checked = example_fixes(ruleset_of(extraction, tree), Flags(extraction.flags), by_function(extraction.rules))
    render_site(extraction.rules, extraction.flags, SOURCE, folder, checked_fixes=checked)


@pytest.fixture(scope="module")
def site(tmp_path_factory, extraction) -> Path:
    folder = tmp_path_factory.mktemp("site")
    _render(extraction, folder)
    return folder


def test_pages_match_golden(site, regen_golden) -> None:
    expected = CASE / "expected"
    produced = sorted(p.name for p in site.glob("*.md"))
    if regen_golden:
        expected.mkdir(exist_ok=True)
        for old in expected.glob("*.md"):
            old.unlink()
        for name in produced:
            (expected / name).write_text((site / name).read_text(encoding="utf-8"), encoding="utf-8")
    assert produced == sorted(p.name for p in expected.glob("*.md"))
    for name in produced:
        assert (site / name).read_text(encoding="utf-8") == (expected / name).read_text(encoding="utf-8"), name


def test_deterministic(tmp_path, extraction, site) -> None:
    _render(extraction, tmp_path)
    for path in site.iterdir():
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def _tokens(text: str):
    return MarkdownIt("commonmark").parse(text)


def test_pages_are_commonmark_with_their_sections(site, extraction) -> None:
    for rule in extraction.rules:
        text = (site / f"{rule.id}.md").read_text(encoding="utf-8")
        tokens = _tokens(text)
        headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
        assert {"What it means", "Source", "When it happens", "Solutions"} <= set(headings), rule.id
        assert sum(t.type == "heading_open" and t.tag == "h1" for t in tokens) == 1
        fences = [t for t in tokens if t.type == "fence"]
        # The snippet and the message come out of the parser exactly as they went in: fences are closed.
        assert any(t.content.rstrip("\n") == rule.snippet.text.rstrip() for t in fences)
        assert any(t.content.rstrip("\n") == rule.message.rstrip() for t in fences)
        html = MarkdownIt("commonmark").render(text)
        assert f'href="{rule.id}.json"' in html


def test_links_resolve(site) -> None:
    for path in site.glob("*.md"):
        html = MarkdownIt("commonmark").render(path.read_text(encoding="utf-8"))
        for target in re.findall(r'href="([^"]+)"', html):
            if not target.startswith("http"):
                assert (site / target).is_file(), (path.name, target)


def test_json_beside_each_page(site, extraction) -> None:
    for rule in extraction.rules:
        assert json.loads((site / f"{rule.id}.json").read_text(encoding="utf-8")) == json.loads(json.dumps(rule_json(rule)))


def test_index_groups_by_flag_and_file(site, extraction) -> None:
    text = (site / "index.md").read_text(encoding="utf-8")
    tokens = _tokens(text)
    h3 = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h3"]
    assert "`sglang/srt/server_args.py` (11)" in h3
    assert "`--offload-kvcache` (3)" in h3  # its own rule, the storage backend one, the ROCm one
    assert len(extraction.rules) == 11


def test_page_in_words_and_fixes(site, extraction) -> None:
    rule = next(r for r in extraction.rules if r.message.startswith("Offloading the KV cache is only"))
    text = (site / f"{rule.id}.md").read_text(encoding="utf-8")
    assert "Rejected when `--offload-kvcache` is set and `--disaggregation-mode` is not `decode`." in text
    assert "- `--model-path` (ignoring case) is neither `none` nor `dummy`" in text
    # Checked on the example: decode mode alone would set off "needs a storage backend", so that
    # way out comes with the backend, and says which error the extra flag clears.
    assert "Each one checked on the example command below" in text
    assert "1. Remove `--offload-kvcache`." in text
    assert "2. Pass `--disaggregation-mode decode` and `--storage-backend VALUE` (`--storage-backend VALUE` clears" in text
    assert "https://github.com/sgl-project/sglang/blob/v9.9.9/python/sglang/srt/server_args.py#L" in text
    assert "python -m sglang.launch_server --model-path org/model --offload-kvcache" in text  # the witness


def test_page_names_conditions_outside_the_command_line(site, extraction) -> None:
    rule = next(r for r in extraction.rules if "ROCm" in r.message)
    text = (site / f"{rule.id}.md").read_text(encoding="utf-8")
    assert "Conditions outside the command line:" in text and "- platform: `get_platform().is_hip`" in text
    strict = next(r for r in extraction.rules if "SGLANG_STRICT" in r.message)
    assert "- environment: `envs.SGLANG_STRICT.get()`" in (site / f"{strict.id}.md").read_text(encoding="utf-8")


def test_page_quotes_sglang_s_comments_and_help_texts_and_says_what_it_is_pinned_to(extraction) -> None:
    """"In SGLang's own words": the comment blocks right above the guard and above the `if` around it
    (each once, with the line it stands above), then the help text of each flag the check tests; the
    footer names the commit and its day (or the tag) and links a prefilled report, or none."""
    from dataclasses import replace

    from extractor.core.model import Snippet
    from extractor.products.site.pages import comments_above

    rule = next(r for r in extraction.rules if r.message.startswith("Offloading the KV cache is only"))
    snippet = Snippet(10, 16, "\n".join([
        "    # Decode-side offload pushes retracted KV to host storage;",
        "    # prefill servers have no such path.",
        "    if cfg.offload_kvcache:",
        "        x = 1",
        "        # checked once per launch",
        "        if cfg.disaggregation_mode != 'decode':",
        "            raise ValueError('...')"]))
    moved = replace(rule, snippet=snippet, enclosing=(12, 15), location=replace(rule.location, line=16))
    assert comments_above(moved) == [(12, "Decode-side offload pushes retracted KV to host storage; prefill "
                                          "servers have no such path."), (15, "checked once per launch")]
    flags = Flags(extraction.flags)
    text = page(moved, flags, {"label": "g", "commit": "0132848349abcdef", "commit_date": "2026-08-28T10:00:00"},
                {r.id: r for r in extraction.rules})
    words = text.split("In SGLang's own words:")[1].split("##")[0]
    assert "- “Decode-side offload pushes retracted KV to host storage; prefill servers have no such path.” " \
           "(comment above `server_args.py:12`)" in words
    assert "- “checked once per launch” (comment above `server_args.py:15`)" in words
    assert "- `--offload-kvcache`: “Offload the KV cache.” (its help text)" in words
    footer = text.split("\n---\n")[-1]
    assert "from sglang g (commit `0132848349ab` of 2026-08-28)" in footer
    assert "[Report a problem with this page](https://github.com/sglang-constraints/sglang-constraints/issues/new?" in footer
    assert "Report a problem" not in page(moved, flags, {"label": "g"}, report_url=None)


def test_source_link_templates(extraction) -> None:
    rule = extraction.rules[0]
    assert source_link(rule, {"commit": "abc"}, "https://x/{commit}/{path}#L{line}") == \
        f"https://x/abc/{rule.location.file}#L{rule.location.line}"
    assert source_link(rule, {"kind": "path", "label": "here"}) is None  # nothing to pin to


# ---- words and solutions ----------------------------------------------------------------------------

FLAGS = Flags([
    Flag("mode", ("--mode",), "str", '"null"', "null", True, ("null", "prefill", "decode")),
    Flag("offload", ("--offload",), "bool", "False", False, True, None, "store_true"),
    Flag("overlap", ("--overlap",), "bool", "True", True, True, None, "argparse.BooleanOptionalAction"),
    Flag("tp_size", ("--tp-size", "--tp"), "int", "1", 1, True),
    Flag("backend", ("--backend",), "Optional[str]", "None", None, True),
])


def field(name: str, *transforms: str) -> Term:
    return Term(TermKind.FIELD, name, name, (name,), transforms)


MODE_NOT_DECODE = Atom(field("mode"), "!=", Lit("decode"))
ARCH = "model_config_of(server_args).hf_config.architectures[0]"
QUANT = 'getattr(hf_config, "quantization_config", None).get("quant_method")'
RAISED = "raised(Exception, current_platform.get_device(device_id))"
OFFLOAD = Atom(field("offload"))


@pytest.mark.parametrize(
    "formula, text",
    [
        (OFFLOAD, "`--offload` is set"),
        (Not(OFFLOAD), "`--offload` is not set"),
        (MODE_NOT_DECODE, "`--mode` is not `decode`"),
        (Atom(field("mode"), "in", Lit(("prefill", "decode"))), "`--mode` is one of `prefill`, `decode`"),
        (Atom(field("mode"), "not in", Lit(("prefill", "decode"))), "`--mode` is neither `prefill` nor `decode`"),
        (Atom(field("backend"), "is", Lit(None)), "`--backend` is not given"),
        (Atom(field("tp_size"), ">=", Lit(2)), "`--tp-size` is at least `2`"),
        (Atom(field("mode", "lower"), "==", Lit("decode")), "`--mode` (ignoring case) is `decode`"),
        (Not(And((OFFLOAD, MODE_NOT_DECODE))), "`--offload` is not set or `--mode` is `decode`"),
        (And((OFFLOAD, Or((MODE_NOT_DECODE, Atom(field("tp_size"), ">", Lit(1)))))),
         "`--offload` is set and either `--mode` is not `decode` or `--tp-size` is greater than `1`"),
        (Atom(Term(TermKind.ENV, "X", "envs.X.get()"),), "environment variable `X` is set"),
        (Atom(Term(TermKind.PLATFORM, "is_hip()", "is_hip()")), "`is_hip()` is true"),
        (Not(Atom(Term(TermKind.PLATFORM, RAISED, RAISED))), "`current_platform.get_device(device_id)` does not raise `Exception`"),
        (Atom(Term(TermKind.OPAQUE, "raised(Exception)", "raised(Exception)")), "`raised(Exception)` is true"),
        (Not(Atom(field("tp_size"), "<=", Lit(2))), "`--tp-size` is greater than `2`"),
        # An ordering of sets is no total order: `not (a <= b)` is "not a subset of", never "greater than"
        # (0.5.23's `--enable-unified-memory` with `--dcp-size`: `backends <= dcp_allowed`).
        (Not(Atom(Term(TermKind.OPAQUE, "set(backends)", "set(backends)"), "<=",
                  Term(TermKind.OPAQUE, '{"fa3", "triton"}', '{"fa3", "triton"}'))),
         '`set(backends)` is not a subset of `{"fa3", "triton"}`'),
        (Atom(Term(TermKind.OPAQUE, "{backend}", "{backend}"), "<", Lit(("fa3", "triton"))),
         '`{backend}` is a proper subset of `["fa3", "triton"]`'),
        # How a condition reads the checkpoint's config, as a reader knows it.
        (Atom(Term(TermKind.MODEL, ARCH, ARCH), "in", Lit(("LlamaForCausalLM", "Qwen3ForCausalLM"))),
         "the model's architecture is one of `LlamaForCausalLM`, `Qwen3ForCausalLM`"),
        (Atom(Term(TermKind.MODEL, QUANT, QUANT), "!=", Lit("fp8")),
         "`quant_method` of the model config's `quantization_config` is not `fp8`"),
        (Not(Atom(Term(TermKind.MODEL, "hf_config.architectures", "hf_config.architectures"))),
         "the model config's `architectures` is not given (or empty)"),
        (Atom(Term(TermKind.MODEL, "model_config_of(server_args).is_multimodal", "model_config_of(server_args).is_multimodal")),
         "`model_config_of(server_args).is_multimodal` is true"),
    ],
)
def test_words(formula, text) -> None:
    assert words(formula, FLAGS) == text


def _rule(trigger, **changes):
    from extractor.core.model import Location, Rule, RuleKind, Snippet

    snippet = Snippet(1, 3, "if cfg.offload and cfg.overlap:\n    if cfg.mode != 'decode' or cfg.tp_size > 1 or cfg.backend is None:\n        raise ValueError('x')")
    base = dict(id="r", kind=RuleKind.RAISE, exception="ValueError", message="x", message_static=True,
                location=Location("f.py", 3, 3), function="f", snippet=snippet, condition=trigger,
                enclosing=(1, 2), trigger=trigger, reachable=True)
    base.update(changes)
    return Rule(**base)


@pytest.mark.parametrize(
    "trigger, fixes",
    [
        (And((OFFLOAD, MODE_NOT_DECODE)), ["remove --offload", "pass --mode decode"]),
        (And((OFFLOAD, Or((MODE_NOT_DECODE, Atom(field("tp_size"), ">", Lit(1)))))),
         ["remove --offload", "pass --mode decode and remove --tp-size"]),
        (And((Atom(field("overlap")), Atom(field("tp_size"), ">", Lit(1)))), ["pass --no-overlap", "remove --tp-size"]),
        (And((OFFLOAD, Atom(field("backend"), "is", Lit(None)))), ["remove --offload", "pass --backend VALUE"]),
        # A field as the run resolved it: the flag's own edits (each checked on the command by `fixes`).
        (And((OFFLOAD, Atom(Term(TermKind.RESOLVED, "mode", "resolved(mode)", ("mode",), version=1), "==",
                            Lit("prefill")))), ["remove --offload", "remove --mode"]),
        # A value to choose: the first few that do, in the choices' order.
        (Atom(field("mode"), "not in", Lit(("null",))), ["remove --mode"]),  # the default does
        (Atom(field("mode"), "in", Lit(("null",))), ["pass --mode prefill", "pass --mode decode"]),
    ],
)
def test_solutions(trigger, fixes) -> None:
    assert [way_text(w) for w in solutions(_rule(trigger), FLAGS)] == fixes


def test_inherited_conditions_are_not_solutions() -> None:
    dummy = Atom(field("mode", "lower"), "not in", Lit(("none", "dummy")))
    rule = _rule(And((dummy, OFFLOAD, MODE_NOT_DECODE)), condition=And((OFFLOAD, MODE_NOT_DECODE)))
    assert [way_text(w) for w in solutions(rule, FLAGS)] == ["remove --offload", "pass --mode decode"]
    text = page(rule, FLAGS, {"label": "t"})
    assert "Rejected when `--offload` is set and `--mode` is not `decode`." in text
    assert "- `--mode` (ignoring case) is neither `none` nor `dummy`" in text


# ---- the command ----------------------------------------------------------------------------------------


def test_cli_render_from_rules_and_from_source(tmp_path, capsys) -> None:
    assert main(["extract", str(CASE / "src"), "-o", str(tmp_path / "out")]) == 0
    assert main(["render", str(tmp_path / "out" / "src" / "rules.json"), "-o", str(tmp_path / "a")]) == 0
    assert main(["render", str(CASE / "src"), "-o", str(tmp_path / "b")]) == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir()) and "index.md" in names
    assert len([n for n in names if n.endswith(".md")]) == 12
    assert main(["render", str(CASE / "src"), "-o", str(tmp_path / "c"), "--source-url", "{nope}"]) == 2


@pytest.mark.network
def test_real_release_pages_are_commonmark(tmp_path) -> None:
    from extractor.products.reuse.rulesets import release_rules

    real = release_rules("0.5.23")
    render_site(real.rules, real.flags, real.source, tmp_path)
    parser = MarkdownIt("commonmark")
    for rule in real.rules:
        tokens = parser.parse((tmp_path / f"{rule.id}.md").read_text(encoding="utf-8"))
        assert sum(t.type == "heading_open" and t.tag == "h1" for t in tokens) == 1, rule.id
        fences = [t.content.rstrip("\n") for t in tokens if t.type == "fence"]
        assert known_message(rule).rstrip() in fences and rule.snippet.text.rstrip() in fences, rule.id
    offload = next(r for r in real.rules if r.message.startswith("The argument disaggregation-decode-enable-offload"))
    text = (tmp_path / f"{offload.id}.md").read_text(encoding="utf-8")
    assert "is set and `--disaggregation-mode` is not `decode`" in text
    assert "blob/v0.5.23/python/sglang/srt/" in text
    assert f"]({offload.id}.md)" in (tmp_path / "index.md").read_text(encoding="utf-8")


def test_a_long_condition_reads_as_what_it_reads() -> None:
    """"What it means" stays a sentence: an own condition whose words run past the budget is said
    part by part, a long part by the flags and kinds of facts it reads, pointing at the whole."""
    from extractor.products.site.pages import meaning

    long_part = Or(tuple(Atom(field("tp_size"), "==", Lit(n)) for n in range(40))
                   + (Atom(Term(TermKind.PLATFORM, "is_hip()", "is_hip()")),))
    rule = _rule(And((OFFLOAD, long_part)))
    text = meaning(rule, FLAGS, [])
    assert text == ("Rejected when `--offload` is set and a longer condition over `--tp-size` and platform "
                    "conditions (see “When it happens”).")
    short = _rule(And((OFFLOAD, MODE_NOT_DECODE)))
    assert meaning(short, FLAGS, []) == "Rejected when `--offload` is set and `--mode` is not `decode`."


def test_a_message_built_in_a_local_f_string_shows_that_string() -> None:
    """`raise ValueError(f"{msg} To allow ...")` where `msg = f"Warning: {reason} ... ({derived})."`:
    the page shows the f-string's own text, its fields in people's names, not `{msg}`."""
    from extractor.logic.messages import known_message

    built = Term(TermKind.OPAQUE, "f", 'f"Warning: {reason} context_length ({context_length}) is greater than '
                 'the derived context_length ({get_context_length(self__hf_text_config)}). " f"This may fail."')
    rule = _rule(OFFLOAD, message="{msg} To allow overriding this maximum, set SGLANG_X=1", message_static=False,
                 placeholders=(("msg", built),))
    assert known_message(rule) == (
        "Warning: {reason} context_length ({context_length}) is greater than the derived context_length "
        "({get_context_length(self.hf_text_config)}). This may fail. To allow overriding this maximum, set SGLANG_X=1")
    # `explain` matches the written-out text: each field's value out of a pasted error.
    from extractor.products.site.explain import match

    found = match("ValueError: Warning: User-specified context_length (200000) is greater than the derived "
                  "context_length (131072). This may fail. To allow overriding this maximum, set SGLANG_X=1", rule)
    assert found is not None and found[1] and found[2] == {
        "reason": "User-specified", "context_length": "200000", "get_context_length(self.hf_text_config)": "131072"}
    plain = _rule(OFFLOAD, message="{msg} x", message_static=False,
                  placeholders=(("msg", Term(TermKind.OPAQUE, "m", "make_message(a)")),))
    assert known_message(plain) == "{msg} x"  # no string: as written


@pytest.mark.parametrize("source, doc", [
    ('def f():\n    """One line."""\n    raise ValueError("x")\n', "One line."),
    ("def f():\n    '''First paragraph\n    goes on.\n\n    Second.'''\n    return\n", "First paragraph goes on."),
    ('def f():\n    r"""Raw \\d text."""\n', "Raw \\d text."),
    ('def f():\n    x = "not a docstring"\n', None),
    ('def f():\n    "a" + "b"\n', None),
    ('def f():\n    """"""\n', None),
])
def test_the_docstring_a_function_body_opens_with(source, doc) -> None:
    from extractor.analysis.pyast import docstring_at, source_lines

    assert docstring_at(source_lines(source), 2) == doc


ADJUSTING_PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
from typing import Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    served_model_name: Optional[str] = None
    attention_backend: str = "triton"
    page_size: Optional[int] = None
    chunked_prefill_size: Optional[int] = None
    tp_size: int = 1
    dp_size: int = 1
    enable_gather: Optional[bool] = None

    def __post_init__(self):
        if self.served_model_name is None:
            self.served_model_name = self.model_path
        if self.page_size is None:
            local_page_size = 64 if self.attention_backend == "fa3" else 1
            self.page_size = local_page_size
        if self.chunked_prefill_size is None:
            self.chunked_prefill_size = 4 * 1024
        if self.enable_gather is None:
            self.enable_gather = self.tp_size > 1 and self.dp_size == 1

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--served-model-name", type=str, default=ServerArgs.served_model_name)
        parser.add_argument("--attention-backend", type=str, default=ServerArgs.attention_backend)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
        parser.add_argument("--chunked-prefill-size", type=int, default=ServerArgs.chunked_prefill_size)
        parser.add_argument("--tp-size", type=int, default=ServerArgs.tp_size)
        parser.add_argument("--dp-size", type=int, default=ServerArgs.dp_size)
        parser.add_argument("--enable-gather", action="store_true", default=None)
''',
}


def test_an_adjustment_page_says_what_it_writes_not_the_name_of_a_local(tmp_path) -> None:
    """`self.page_size = local_page_size` writes 64 or 1, `served_model_name = model_path` the value of
    `--model-path`, `4 * 1024` is 4096; a test written as the value stays as the source writes it
    (0.5.23's pages said `local_page_size`, `sm100_default_attn_backend`, `dwdp_size`)."""
    from extractor.core.model import RuleKind
    from extractor.products.site.pages import meaning
    from tests.packages import package_ruleset

    ruleset = package_ruleset(tmp_path, ADJUSTING_PACKAGE)
    flags = Flags(ruleset.flags)
    said = {rule.target: meaning(rule, flags, []) for rule in ruleset.rules if rule.kind is RuleKind.ADJUSTMENT}
    assert said["served_model_name"].startswith("SGLang sets `--served-model-name` to the value of `--model-path` when")
    assert said["page_size"].startswith("SGLang sets `--page-size` to `64` or `1` when")
    assert said["chunked_prefill_size"].startswith("SGLang sets `--chunked-prefill-size` to `4096` when")
    assert said["enable_gather"].startswith("SGLang sets `--enable-gather` to `tp_size > 1 and dp_size == 1` when")


def test_a_library_call_failure_on_each_call_path_reads_as_that_failure() -> None:
    """0.5.10's `get_config`: `try: AutoConfig.from_pretrained(model, ...) except ValueError as e: if
    "deepseek_v32" not in str(e): raise e`, reached with `model` as typed or as its folder. Each call
    path tests the same failure on another path, and no conjunct is shared: the page says that failure
    (it said "Rejected whenever it is reached"), and names a few of the many terms outside the
    command line, not every one."""
    from extractor.products.site.pages import meaning, page

    def path(given: str) -> Formula:
        call = f"AutoConfig.from_pretrained({given}, trust_remote_code=trust_remote_code)"
        failed = Atom(Term(TermKind.OPAQUE, f"raised(ValueError, {call})", f"raised(ValueError, {call})", ("model_path",)))
        said = Term(TermKind.OPAQUE, f"str(raised_message(ValueError, {call}))",
                    f"str(raised_message(ValueError, {call}))", ("model_path",))
        walk = [Atom(Term(TermKind.OPAQUE, f"Path({given}).is_{n}()", f"Path({given}).is_{n}()", ("model_path",)))
                for n in ("file", "dir", "mount", "symlink", "socket")]
        return And((*walk, failed, Not(Atom(said, "contains", Lit("deepseek_v32")))))

    rule = _rule(Or((path("model_path__v1"), path("Path(model_path__v1).parent"))), message_static=True,
                 condition=Not(Atom(Term(TermKind.OPAQUE, "str(e)", "str(e)"), "contains", Lit("deepseek_v32"))))
    assert meaning(rule, FLAGS, []) == (
        "Rejected when transformers does not load the checkpoint's config.json (no config class of the "
        "transformers this release pins has its `model_type`, it has none, or it names code of its own that the "
        "launch does not trust) and what transformers says does not include `deepseek_v32`.")
    text = page(rule, FLAGS, {"label": "9.9.9"})
    outside = next(line for line in text.splitlines() if line.startswith("- other: "))
    assert outside.endswith("and 6 more (see “When it happens”)") and outside.count("`") == 2 * 8  # of 14


def test_a_condition_too_long_to_read_says_how_long_and_where_it_is_whole() -> None:
    """0.5.23's `get_hf_text_config` asserts are reached through the config load of every model path:
    their triggers written out run to megabytes. Past 20,000 characters "When it happens" says how many
    tests over what, and where the whole condition is; a shorter one is written out as before."""
    from extractor.core.formula import render_flags
    from extractor.products.site.pages import page

    def section(text: str) -> str:
        return text.split("## When it happens\n\n", 1)[1].split("\n## ", 1)[0]

    ways = Or(tuple(And((Atom(field("tp_size"), "==", Lit(n)),
                         Atom(Term(TermKind.OPAQUE, f"load_{n:04}(model_path__v1).some_long_attribute_name",
                                   f"load_{n:04}(model_path__v1).some_long_attribute_name", ("model_path",)))))
                    for n in range(400)))
    long = _rule(And((OFFLOAD, ways)))
    assert len(render_flags(long.effective, FLAGS.spellings)) > 20_000
    said = section(page(long, FLAGS, {"label": "9.9.9"}))
    assert said.startswith("The whole condition is too long to read here: 801 tests (801 distinct) over "
                           "`--offload`, `--tp-size` and other conditions, ")
    assert f"It is the `trigger` of rule `{long.id}` in the release's rules.json" in said and "```" not in said
    short = _rule(And((OFFLOAD, MODE_NOT_DECODE)))
    assert section(page(short, FLAGS, {"label": "9.9.9"})).startswith(
        "```text\n" + render_flags(short.effective, FLAGS.spellings) + "\n```")
