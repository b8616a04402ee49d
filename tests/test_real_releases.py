"""Real SGLang releases from PyPI: every guard found, a known guard's condition and id, valid and stable output."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from extractor.core.formula import atoms, fields_read, render
from extractor.core.model import And, Atom, Const, Formula, Lit, Not, Or, RuleKind, Term, TermKind
from extractor.products.extraction.extraction import Extraction, extract
from extractor.products.extraction.output import flags_document, rules_document, validate
from extractor.sources.layout import find_layout
from extractor.sources.trees import SourceTree, release_tree

pytestmark = pytest.mark.network

RELEASES = ("0.5.18", "0.5.23")
OFFLOAD = "The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side."


@pytest.fixture(scope="session")
def releases() -> dict[str, tuple[SourceTree, Extraction]]:
    """One extraction per release for the whole session (0.5.23 takes seconds)."""
    found = {}
    for version in RELEASES:
        tree = release_tree(version)
        found[version] = (tree, extract(tree))
    return found


# --- (a) every raise and messaged assert, found independently with `ast` --------------------------


def _exception_name(node: ast.Raise) -> str | None:
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return ast.unparse(exc) if exc is not None else None


def ast_guards(tree: SourceTree) -> list[tuple[str, str, int, str | None]]:
    """(kind, file, line, exception) of each raise and assert inside a function of the read files."""
    found = []

    def walk(node: ast.AST, path: str, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Raise) and child.exc is not None:
                # (A bare `raise` passes on what its handler caught, raised elsewhere: no guard of its own.)
                found.append(("raise", path, child.lineno, _exception_name(child)))
            elif in_function and isinstance(child, ast.Assert):  # a bare `assert x` fails a launch too
                found.append(("assert", path, child.lineno, "AssertionError"))
            walk(child, path, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    for path in find_layout(tree.paths()).files:
        walk(ast.parse(tree.read_text(path)), path, False)
    return found


@pytest.mark.parametrize("version", RELEASES)
def test_every_guard_is_found(releases, version: str) -> None:
    tree, ex = releases[version]
    expected = ast_guards(tree)
    read = set(find_layout(tree.paths()).files)
    guards = [r for r in ex.rules if r.kind is not RuleKind.ADJUSTMENT and r.location.file in read]
    # Guards of functions the run enters outside the read files come with their files recorded.
    followed = {r.location.file for r in ex.rules} - read
    assert followed <= {f.path for f in ex.files}

    def located(items, kind=None, exception=None):
        return Counter((f, line) for k, f, line, e in items if kind in (None, k) and exception in (None, e))

    # json's own error where SGLang parses a flag's text (`json.loads(cfg.x)`): a guard at the call, no raise of SGLang's.
    parsing = [r for r in guards if r.exception == "json.JSONDecodeError"]
    lines = {path: tree.read_text(path).splitlines() for path in {r.location.file for r in parsing}}
    assert parsing and all("json.loads(" in "".join(lines[r.location.file][r.location.line - 1:r.location.end_line])
                           for r in parsing)
    extracted = [(r.kind.value, r.location.file, r.location.line, r.exception) for r in guards if r not in parsing]
    value_errors = located(expected, "raise", "ValueError")
    assert value_errors == located(extracted, "raise", "ValueError")
    assert located(expected, "raise") == located(extracted, "raise")
    assert located(expected, "assert") == located(extracted, "assert")
    assert len(value_errors) > 100  # the walk really found the release's validation code


# --- (b) a known guard, in both layouts ----------------------------------------------------------


def test_offload_guard_condition_and_id(releases) -> None:
    decode_side = Atom(Term(TermKind.FIELD, "disaggregation_mode", "disaggregation_mode", ("disaggregation_mode",)),
                       "!=", Lit("decode"))
    ids = set()
    for version in RELEASES:
        _, ex = releases[version]
        (rule,) = [r for r in ex.rules if r.message == OFFLOAD]
        assert "disaggregation_decode_enable_offload_kvcache" in fields_read(rule.condition), version
        assert decode_side in set(atoms(rule.condition)), version
        assert rule.reachable, version
        ids.add(rule.id)
    assert len(ids) == 1  # moved from ServerArgs._handle_cache_compatibility to arg_groups: same id


# --- (c) schema-valid documents whose condition_source says what the tree says ----------------------


@pytest.mark.parametrize("version", RELEASES)
def test_documents_validate(releases, version: str) -> None:
    _, ex = releases[version]
    validate(rules_document(ex), "rules.schema.json")
    validate(flags_document(ex), "flags.schema.json")


def _same_shape(f: Formula, node: ast.expr) -> bool:
    """Does Python parse the rendered formula back into the formula's own and/or/not tree?"""
    if isinstance(f, Const):
        return isinstance(node, ast.Constant) and node.value is f.value
    if isinstance(f, Atom):
        return ast.dump(ast.parse(render(f), mode="eval").body) == ast.dump(node)
    if isinstance(f, Not):
        return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and _same_shape(f.arg, node.operand)
    args = _flat(f)
    op = ast.And if isinstance(f, And) else ast.Or
    return (isinstance(node, ast.BoolOp) and isinstance(node.op, op) and len(node.values) == len(args)
            and all(_same_shape(a, v) for a, v in zip(args, node.values)))


def _flat(f: And | Or) -> list[Formula]:
    return [x for a in f.args for x in (_flat(a) if type(a) is type(f) else [a])]


@pytest.mark.parametrize("version", RELEASES)
def test_condition_source_is_python_with_the_same_shape(releases, version: str) -> None:
    _, ex = releases[version]
    wrong = [
        (r.location, render(f)[:200])
        for r in ex.rules
        for f in (r.condition, r.effective)
        if not _same_shape(f, ast.parse(render(f), mode="eval").body)
    ]
    assert not wrong


# --- (d) the same bytes from separate processes with different hash seeds and --jobs -----------------


@pytest.mark.parametrize("version", RELEASES)
def test_output_is_byte_identical_across_processes(tmp_path: Path, version: str) -> None:
    release_tree(version)  # fetched once, before both runs read the cache
    runs = {}
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = tmp_path / seed
        runs[seed] = (out, subprocess.Popen(  # both at once: two cores, half the wait
            # One in a single process, one sharing its stages with a helper (`core.parallel`).
            [sys.executable, "-m", "extractor", "extract", "--release", version, "-o", str(out), "--jobs", seed],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        ))
    outputs = {}
    for seed, (out, process) in runs.items():
        stdout, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr.decode()
        outputs[seed] = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert "rules.json" in {Path(name).name for name in outputs["1"]}
    assert outputs["1"].keys() == outputs["2"].keys()
    for name in outputs["1"]:
        assert outputs["1"][name] == outputs["2"][name], name


# --- (e) pages for people: no name of the analysis's own making in what a page says ------------------

# The walk's names: a field at a point of the run (`model_path__v2`), an attribute as a local
# (`self__quantization`), a run term (`raised_in(...)`), a resolved field (`resolved(x)`).
_INTERNAL = re.compile(r"\b\w+__v\d+\b|\bself__\w+|\braised_in\(|\bresolved\(")
_QUOTED_SECTIONS = ("## Source",)  # SGLang's own code, quoted as it is


def _prose(text: str) -> str:
    """A page without the sections that quote SGLang's code."""
    kept, skipping = [], False
    for line in text.splitlines():
        if line.startswith("## "):
            skipping = line.startswith(_QUOTED_SECTIONS)
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


@pytest.mark.parametrize("version", RELEASES)
def test_pages_say_no_internal_name_and_show_known_placeholders_filled(releases, version: str) -> None:
    from extractor.logic.messages import known_message
    from extractor.products.site.pages import page
    from extractor.products.check.words import Flags

    _, ex = releases[version]
    flags = Flags(ex.flags)
    by_id = {r.id: r for r in ex.rules}
    named, left = [], []
    for rule in ex.rules:
        text = _prose(page(rule, flags, {"label": version, "release": version}, by_id))
        found = _INTERNAL.search(text)
        if found:
            named.append((rule.location.file, rule.location.line, found.group(0)))
        message = known_message(rule)
        # A placeholder holding one literal on every launch is known: the page prints its value.
        left += [(rule.location.line, name) for name, value in rule.placeholders
                 if isinstance(value, Lit) and re.search(r"\{" + re.escape(name) + r"(![rs])?\}", message)]
    assert not named, named[:10]
    assert not left, left[:10]
    assert any(isinstance(v, Lit) for rule in ex.rules for _, v in rule.placeholders)  # something to look at


# --- (f) every fix a page prints, applied: its error gone, no new one --------------------------------


def test_every_fix_the_pages_of_0_5_23_print_clears_its_error_and_sets_off_none() -> None:
    """Each solution a page lists as checked (on its example command line), applied and checked again
    with every guard, not only those the fix search looked at: the page's error is gone and no
    definite error appears that the example did not already have (0.5.23: 227 fixes of 143 pages)."""
    from extractor.products.check.fixes import example_fixes
    from extractor.products.check.linter import check
    from extractor.products.check.words import by_function
    from extractor.products.reuse.rulesets import release_rules
    from extractor.products.check.words import Flags

    ruleset = release_rules("0.5.23")
    checked = example_fixes(ruleset, Flags(ruleset.flags), by_function(ruleset.rules))
    applied, wrong = 0, []
    for rule_id, fixes in checked.items():
        example = ruleset.by_id[rule_id].example
        assert example is not None
        had = {f.rule.id for f in check(ruleset, list(example.before)).definite}
        for fix in fixes:
            after = {f.rule.id for f in check(ruleset, list(fix.argv)).definite}
            applied += 1
            if rule_id in after or not after <= had:
                wrong.append((rule_id, fix.text, sorted(after - had)))
    assert not wrong, wrong[:5]
    assert applied > 200


def test_the_typical_launches_of_0_5_23_stop_at_their_error_and_their_fixes_pass_every_check() -> None:
    """On the first two shipped setups (8 x H100 with Llama 3.1 8B and with DeepSeek-V3), each typical
    launch a page shows, checked with every guard under the setup's GPU and model: its first definite
    error is the page's, and the fixed launch has none."""
    from extractor.logic.model_config import ModelFacts
    from extractor.logic.platforms import find_platform
    from extractor.products.check.linter import check
    from extractor.products.check.words import by_function
    from extractor.products.reuse.rulesets import release_rules
    from extractor.products.check.typical import setups
    from extractor.products.extraction.typical_launches import typical_launches
    from extractor.products.check.words import Flags

    ruleset = release_rules("0.5.23")
    chosen = setups()[:2]
    found = typical_launches(ruleset, Flags(ruleset.flags), by_function(ruleset.rules), chosen)
    by_title = {s.title: s for s in chosen}
    shown, wrong = 0, []
    for rule_id, launches in found.items():
        for typical in launches:
            setup = by_title[typical.setup]
            on = {"platform": find_platform(setup.platform), "model": ModelFacts(setup.config, setup.model)}
            first = check(ruleset, list(typical.before), **on).definite[:1]
            left = check(ruleset, list(typical.after or ()), **on).definite
            shown += 1
            if [f.rule.id for f in first] != [rule_id] or left:
                wrong.append((rule_id, typical.setup, [f.rule.id for f in first], [f.rule.id for f in left]))
    assert not wrong, wrong[:5]
    assert shown > 120


# --- (g) check's fixes where the condition names no flag to change -----------------------------------

# config.json shapes of two public checkpoints (openai/gpt-oss-20b, Qwen/Qwen2.5-VL-7B-Instruct), cut
# to what the checks read.
GPT_OSS_20B = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
               "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "num_hidden_layers": 24,
               "max_position_embeddings": 131072, "vocab_size": 201088,
               "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}}
QWEN25_VL_7B = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
                "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28,
                "max_position_embeddings": 128000, "vocab_size": 152064, "vision_config": {"depth": 32}}


@pytest.mark.parametrize("config, variables, args, fixes", [
    # The run of `_verify_quantization` says which `--quantization` passes: an online requantization
    # of the MXFP4 checkpoint (the real SGLang 0.5.23 on a CPU accepts it).
    (GPT_OSS_20B, [], ["--tp", "1"], ["pass --quantization quark_mxfp4"]),
    # The deprecated variable selects the CUDA IPC transport; the flag overrides it.
    (QWEN25_VL_7B, ["SGLANG_USE_CUDA_IPC_TRANSPORT=1"], ["--tp-size", "8"],
     ["pass --mm-feature-transport cpu", "unset SGLANG_USE_CUDA_IPC_TRANSPORT"]),
])
def test_a_fix_where_the_condition_names_no_flag_is_searched_and_checked(tmp_path: Path, config, variables, args,
                                                                          fixes) -> None:
    """On a CPU, a definite error whose own condition tests the platform or a method run gets its
    fix from the search over what the rule reads (a flag left at its default, passed; a variable of
    the command, unset), each fixed command free of definite errors."""
    import json

    from extractor.logic.platforms import find_platform
    from extractor.logic.launch import parse_command
    from extractor.products.check.fixes import checked_fixes
    from extractor.products.check.linter import check, launch_facts
    from extractor.products.check.words import by_function
    from extractor.products.reuse.rulesets import release_rules
    from extractor.products.check.words import Flags

    ruleset = release_rules("0.5.23")
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    argv = [*variables, "--device", "cpu", "--model-path", str(tmp_path), *args]  # as launches on a CPU pass it
    cpu = find_platform("cpu")
    report = check(ruleset, argv, platform=cpu)
    assert report.definite, [(f.rule.message, f.unknown[:2]) for f in report.findings if f.certainty == "definite"]
    rule = report.definite[0].rule
    facts = launch_facts(parse_command(argv, ruleset.catalog), cpu, None, None, ruleset.library, {}, ruleset.envs)
    found = checked_fixes(ruleset, rule, argv, Flags(ruleset.flags), by_function(ruleset.rules), facts=facts)
    assert [f.text for f in found][:len(fixes)] == fixes
    for fix in found:
        assert not check(ruleset, list(fix.argv), platform=cpu).definite, fix.text
