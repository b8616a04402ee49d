"""A message placeholder whose value depends on the way to the guard is filled as SGLang prints it.

The made-up package imitates three shapes of SGLang 0.5.23 (names and messages are ours): a
validation helper its step calls twice, once per flag, with the flag's name as an argument (the
token-bucket rules); a warning text built in a local f-string whose own placeholder is a local
chosen by a conditional expression over an object's attribute (the model config's context length);
and a message that shows the length of a list flag.
"""

from __future__ import annotations

import json

import jsonschema

from extractor.core.model import Choices, Lit, PlaceValues
from extractor.core.serialize import rule_from_json, rule_json
from extractor.products.check.linter import check
from tests.packages import OVERRIDES, package_ruleset

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
from typing import List, Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    first_buckets: Optional[List[str]] = None
    second_buckets: Optional[List[str]] = None
    window: Optional[int] = None
    adapters: Optional[List[str]] = None
    max_adapters: int = 2
    eager: bool = False
    draft_breadth: Optional[int] = None
    draft_topk: Optional[int] = None
    page_size: int = 1
    ngram: bool = False
    ngram_breadth: int = 1
    backend: Optional[str] = None
    named: Optional[List[str]] = None
    deterministic: bool = False
    mode_size: int = 1

    def __post_init__(self):
        """Resolution runs in resolve_once."""

    def resolve_once(self):
        from sglang.srt.arg_groups.pipeline import run_resolution_pipeline

        run_resolution_pipeline(self)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--first-buckets", type=str, nargs="+", default=None)
        parser.add_argument("--second-buckets", type=str, nargs="+", default=None)
        parser.add_argument("--window", type=int, default=ServerArgs.window)
        parser.add_argument("--adapters", type=str, nargs="*", default=None)
        parser.add_argument("--max-adapters", type=int, default=ServerArgs.max_adapters)
        parser.add_argument("--eager", action="store_true")
        parser.add_argument("--draft-breadth", type=int, default=ServerArgs.draft_breadth)
        parser.add_argument("--draft-topk", type=int, default=ServerArgs.draft_topk)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
        parser.add_argument("--ngram", action="store_true")
        parser.add_argument("--ngram-breadth", type=int, default=ServerArgs.ngram_breadth)
        parser.add_argument("--backend", type=str, default=ServerArgs.backend)
        parser.add_argument("--named", type=str, nargs="*", default=None)
        parser.add_argument("--deterministic", action="store_true")
        parser.add_argument("--mode-size", type=int, default=ServerArgs.mode_size)
''',
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/overrides.py": OVERRIDES,
    "sglang/srt/arg_groups/pipeline.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolving_view
from sglang.srt.arg_groups.windows import Limits


def handle_draft(server_args):
    cfg = resolving_view(server_args)
    if cfg.draft_breadth is not None:
        declare_resolution(server_args, "handle_draft", draft_topk=cfg.draft_breadth)


def handle_named(server_args):
    if isinstance(server_args.named, list):
        named = server_args.named
        server_args.named = []
        for item in named:
            server_args.named.append(item.split("=")[0])
        assert len(server_args.named) <= server_args.max_adapters, (
            f"Too many named adapters: {len(server_args.named)}"
        )


def handle_backend(server_args):
    from sglang.srt.arg_groups.choices import DETERMINISTIC_BACKENDS

    cfg = resolving_view(server_args)
    if cfg.deterministic and cfg.backend not in DETERMINISTIC_BACKENDS:
        raise ValueError(f"Deterministic runs take {DETERMINISTIC_BACKENDS}, not '{cfg.backend}'.")


def handle_ngram(server_args):
    cfg = resolving_view(server_args)
    if cfg.ngram:
        declare_resolution(server_args, "handle_ngram", draft_topk=cfg.ngram_breadth)
        if cfg.draft_topk > 1 and cfg.page_size > 1:
            raise ValueError(f"ngram draft_topk({cfg.draft_topk}) > 1 needs page_size 1, not {cfg.page_size}.")


def handle_topk(server_args):
    cfg = resolving_view(server_args)
    if cfg.draft_topk is not None and cfg.draft_topk > 1 and cfg.page_size > 1:
        raise ValueError(f"draft_topk({cfg.draft_topk}) > 1 with page_size({cfg.page_size}) > 1 is unstable.")


def run_resolution_pipeline(server_args):
    handle_buckets(server_args)
    handle_window(server_args)
    handle_adapters(server_args)
    handle_mode(server_args)
    handle_draft(server_args)
    handle_topk(server_args)
    handle_ngram(server_args)
    handle_backend(server_args)
    handle_named(server_args)


def handle_buckets(server_args):
    cfg = resolving_view(server_args)
    if cfg.first_buckets is not None:
        validate_rule("--first-buckets", cfg.first_buckets)
    if cfg.second_buckets is not None:
        validate_rule("--second-buckets", cfg.second_buckets)


def validate_rule(arg_name, rule):
    if rule[0] not in ("fixed", "custom"):
        raise ValueError(f"{arg_name} takes fixed or custom rules.")


def handle_window(server_args):
    cfg = resolving_view(server_args)
    Limits(cfg.window)


def handle_mode(server_args):
    cfg = resolving_view(server_args)
    kind = "eager" if cfg.eager else "graph"
    if cfg.mode_size > 8:
        raise ValueError(f"{kind} mode takes at most 8, got {cfg.mode_size}.")


def handle_adapters(server_args):
    cfg = resolving_view(server_args)
    if cfg.adapters is not None and len(cfg.adapters) > cfg.max_adapters:
        raise ValueError(f"Too many adapters: max_adapters={cfg.max_adapters}, adapters={len(cfg.adapters)}")
''',
    "sglang/srt/arg_groups/choices.py": '''
DETERMINISTIC_BACKENDS = [
    "fa3",
    "triton",
]
''',
    "sglang/srt/arg_groups/windows.py": '''
class Limits:
    def __init__(self, window, is_draft=False):
        self.is_draft = is_draft
        self._check(window)

    def _check(self, window):
        is_draft = self.is_draft
        if window is not None and window > 4096:
            who = "The draft's" if is_draft else "The requested"
            msg = f"{who} window ({window}) is over 4096."
            raise ValueError(f"{msg} Pass a smaller one.")
''',
}


def test_a_helper_two_callers_call_names_the_argument_of_the_call_that_raises(tmp_path) -> None:
    ruleset = package_ruleset(tmp_path, PACKAGE)
    [rule] = [r for r in ruleset.rules if r.message == "{arg_name} takes fixed or custom rules."]
    [(name, value)] = rule.placeholders
    assert name == "arg_name" and isinstance(value, PlaceValues)
    assert [inner for _, inner in value.values] == [Lit("--first-buckets"), Lit("--second-buckets")]
    assert [order for order, _ in value.values] == [order for order, _ in rule.places]
    for argv, said in ((["--first-buckets", "tse"], "--first-buckets takes fixed or custom rules."),
                       (["--second-buckets", "tse"], "--second-buckets takes fixed or custom rules."),
                       (["--first-buckets", "tse", "--second-buckets", "tse"], "--first-buckets takes fixed or custom rules."),
                       (["--first-buckets", "fixed", "--second-buckets", "tse"], "--second-buckets takes fixed or custom rules.")):
        assert [f.text for f in check(ruleset, ["--model-path", "m", *argv]).definite] == [said], argv


def test_a_local_chosen_by_a_flag_shows_the_launch_s_choice(tmp_path) -> None:
    ruleset = package_ruleset(tmp_path, PACKAGE)
    [rule] = [r for r in ruleset.rules if r.message == "{kind} mode takes at most 8, got {cfg.mode_size}."]
    [(name, value)] = rule.placeholders
    assert name == "kind" and isinstance(value, Choices)
    assert [case for _, case in value.cases] == [Lit("eager"), Lit("graph")]
    for argv, said in ((["--mode-size", "9"], "graph mode takes at most 8, got 9."),
                       (["--eager", "--mode-size", "9"], "eager mode takes at most 8, got 9.")):
        assert [f.text for f in check(ruleset, ["--model-path", "m", *argv]).definite] == [said], argv


def test_a_local_message_shows_its_own_placeholders(tmp_path) -> None:
    """`msg = f"{who} window ..."` raised as `f"{msg} Pass a smaller one."`: `who` is chosen by the
    object's attribute, which the constructor's default sets (no draft here)."""
    ruleset = package_ruleset(tmp_path, PACKAGE)
    [rule] = [r for r in ruleset.rules if r.message == "{msg} Pass a smaller one."]
    assert dict(rule.placeholders)["who"] == Lit("The requested")
    [finding] = check(ruleset, ["--model-path", "m", "--window", "8192"]).definite
    assert finding.text == "The requested window (8192) is over 4096. Pass a smaller one."


def test_a_placeholder_of_a_list_flag_length(tmp_path) -> None:
    ruleset = package_ruleset(tmp_path, PACKAGE)
    [finding] = check(ruleset, ["--model-path", "m", "--adapters", "a", "b", "c"]).definite
    assert finding.text == "Too many adapters: max_adapters=2, adapters=3"


def test_chosen_placeholders_round_trip_through_rules_json(tmp_path) -> None:
    """`by_place` and `cases` are written, validated by the rules schema and read back equal."""
    from extractor.products.extraction.output import load_schema

    schema = load_schema("rules.schema.json")
    item = schema["$defs"]["rule"]["properties"]["placeholders"]
    ruleset = package_ruleset(tmp_path, PACKAGE)
    rule = next(r for r in ruleset.rules if any(isinstance(v, PlaceValues) for _, v in r.placeholders))
    written = json.loads(json.dumps(rule_json(rule)))
    jsonschema.validate(written["placeholders"], {**item, "$defs": schema["$defs"]})
    assert rule_from_json(written).placeholders == rule.placeholders
    choices = Choices(((rule.places[0][1], Lit("a")), (rule.places[1][1], Lit("b"))))
    chosen = rule.__class__(**{**{f: getattr(rule, f) for f in rule.__dataclass_fields__},
                               "placeholders": (("x", choices),)})
    again = json.loads(json.dumps(rule_json(chosen)))
    jsonschema.validate(again["placeholders"], {**item, "$defs": schema["$defs"]})
    assert rule_from_json(again).placeholders == (("x", choices),)


def test_a_page_says_what_a_placeholder_of_several_literals_stands_for(tmp_path) -> None:
    from extractor.products.check.words import Flags
    from extractor.products.site.pages import page

    ruleset = package_ruleset(tmp_path, PACKAGE)
    [rule] = [r for r in ruleset.rules if r.message == "{arg_name} takes fixed or custom rules."]
    text = page(rule, Flags(ruleset.flags), {}, {})
    assert "- `{arg_name}` is one of: `--first-buckets`, `--second-buckets`" in text


def test_a_field_the_run_s_table_rewrites_first_shows_the_value_written(tmp_path) -> None:
    """`{cfg.draft_topk}` after a step declared it from `--draft-breadth`: the run's table says what
    the field holds where the guard raises (the breadth), not the flag's own value."""
    ruleset = package_ruleset(tmp_path, PACKAGE)
    [finding] = check(ruleset, ["--model-path", "m", "--draft-breadth", "10", "--page-size", "16"]).definite
    assert finding.text == "draft_topk(10) > 1 with page_size(16) > 1 is unstable."


def test_a_field_the_function_assigned_before_it_raises_shows_what_it_assigned(tmp_path) -> None:
    """`declare_resolution(..., draft_topk=cfg.ngram_breadth)` then `{cfg.draft_topk}` in the same
    function: the breadth, not the `--draft-topk` the launch passed (0.5.23's NGRAM page-size check)."""
    ruleset = package_ruleset(tmp_path, PACKAGE)
    [rule] = [r for r in ruleset.rules if r.message.startswith("ngram draft_topk(")]
    assert "cfg.draft_topk" in dict(rule.placeholders)
    report = check(ruleset, ["--model-path", "m", "--ngram", "--ngram-breadth", "10", "--draft-topk", "1", "--page-size", "16"])
    assert [f.text for f in report.definite] == ["ngram draft_topk(10) > 1 needs page_size 1, not 16."]


def test_a_module_constant_prints_as_its_display_and_an_unset_flag_as_none(tmp_path) -> None:
    """A list constant another module defines prints as a list (its Lit alone would print as a
    tuple); a flag the guard's own test reads, left unset, prints as None (0.5.23's "Invalid
    quantization 'None'")."""
    ruleset = package_ruleset(tmp_path, PACKAGE)
    [finding] = check(ruleset, ["--model-path", "m", "--deterministic"]).definite
    assert finding.text == "Deterministic runs take ['fa3', 'triton'], not 'None'."


def test_a_list_an_adjustment_refills_in_place_is_not_shown(tmp_path) -> None:
    """`server_args.named = []` then `.append(...)` per item: the adjustment writes an empty list, the
    appends are no writes; its length is not that of what was written (0.5.10's `lora_paths=0` for
    four paths), so the placeholder stays."""
    ruleset = package_ruleset(tmp_path, PACKAGE)
    [finding] = check(ruleset, ["--model-path", "m", "--named", "a=1", "b=2", "c=3"]).definite
    assert finding.text == "Too many named adapters: {len(server_args.named)}"
