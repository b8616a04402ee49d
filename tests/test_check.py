"""The launch-command linter: argparse-like parsing, three-valued evaluation of triggers, witnesses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from extractor.analysis.environ import env_defaults
from extractor.cli import main
from extractor.core.model import Term, TermKind
from extractor.logic.expressions import UNKNOWN, Unknown, computable, safe_eval
from extractor.logic.launch import parse_command
from extractor.logic.launch_words import split_command
from extractor.products.extraction.extraction import extract
from extractor.products.check.linter import check
from extractor.products.check.report import report_json, report_text
from extractor.products.extraction.output import flags_document, rules_document, write_documents
from extractor.products.reuse.rulesets import release_rules, ruleset_of
from extractor.products.extraction.witness import eligible, verify, witnesses
from extractor.sources.trees import path_tree

from .conftest import FIXTURES

SOURCE = FIXTURES / "render_basic" / "src"
OFFLOAD = "Offloading the KV cache is only supported for decode side."
BACKEND = "Offloading the KV cache needs a storage backend."
ROCM = "Offloading the KV cache is not supported on ROCm."
WORLD = "tp_size * dp_size must be at most 8, got {self.tp_size * self.dp_size}."
OVERLAP = "Overlap scheduling does not support pipeline parallelism; pass --no-enable-overlap."
STRICT = "dp-size > 1 is not allowed when SGLANG_STRICT is set."
PAGE = "page_size {self.page_size} is larger than 64."
GRAPHS = "At most four CUDA graph batch sizes are supported."


@pytest.fixture(scope="module")
def ruleset():
    tree = path_tree(SOURCE)
    return ruleset_of(extract(tree), tree)


@pytest.fixture(scope="module")
def rules_file(tmp_path_factory, ruleset):
    """rules.json and flags.json of the fixture, as `extract` writes them."""
    tree = path_tree(SOURCE)
    ex = extract(tree)
    folder = tmp_path_factory.mktemp("rules")
    write_documents(folder, {"rules.json": (rules_document(ex), "rules.schema.json"),
                             "flags.json": (flags_document(ex), "flags.schema.json")})
    return folder / "rules.json"


def outcome(ruleset, argv, **kwargs) -> dict[str, str]:
    report = check(ruleset, argv, **kwargs)
    assert not report.argument_errors, report.argument_errors
    return {f.rule.message: f.certainty for f in report.findings}


# ---- parsing like argparse --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, field, value",
    [
        pytest.param(["--tp-size", "4"], "tp_size", 4, id="space form"),
        pytest.param(["--tp-size=4"], "tp_size", 4, id="equals form"),
        pytest.param(["--tensor-parallel-size", "2"], "tp_size", 2, id="alias"),
        pytest.param(["--model=x"], "model_path", "x", id="alias with equals"),
        pytest.param(["--offload-kvcache"], "offload_kvcache", True, id="store_true"),
        pytest.param(["--no-enable-overlap"], "enable_overlap", False, id="--no- form"),
        pytest.param(["--no-enable-overlap", "--enable-overlap"], "enable_overlap", True, id="last one wins"),
        pytest.param(["--cuda-graph-bs", "1", "2", "4"], "cuda_graph_bs", [1, 2, 4], id="nargs list"),
        pytest.param(["--draft-tok", "3"], "draft_tokens", 3, id="unique prefix"),
        pytest.param(["--disaggregation-mode", "decode"], "disaggregation_mode", "decode", id="choice"),
        pytest.param(["--page-size", "-1"], "page_size", -1, id="negative number is a value"),
    ],
)
def test_parse_values(ruleset, argv, field, value) -> None:
    command = parse_command(["--model-path", "m", *argv], ruleset.catalog)
    assert command.errors == []
    assert command.given[field] == value


@pytest.mark.parametrize(
    "argv, message",
    [
        pytest.param(["--tp-sise", "2"], "unrecognized arguments: --tp-sise (did you mean --tp-size?)", id="unknown flag"),
        pytest.param(["--disaggregation-mode", "both"],
                     "argument --disaggregation-mode: invalid choice: 'both' (choose from 'null', 'prefill', 'decode')",
                     id="bad choice"),
        pytest.param(["--disaggregation-mode", "decod"],
                     "argument --disaggregation-mode: invalid choice: 'decod' (choose from 'null', 'prefill', 'decode')"
                     " (did you mean 'decode'?)", id="misspelt choice"),
        pytest.param(["--disaggregation-mode", "Decode"],
                     "argument --disaggregation-mode: invalid choice: 'Decode' (choose from 'null', 'prefill', 'decode')"
                     " (did you mean 'decode'?)", id="choice in another case"),
        pytest.param(["--tp-size", "two"], "argument --tp-size: invalid int value: 'two'", id="bad int"),
        pytest.param(["--tp-size"], "argument --tp-size: expected one argument", id="missing value"),
        pytest.param(["--cuda-graph-bs"], "argument --cuda-graph-bs: expected at least one argument", id="empty list"),
        pytest.param(["--offload-kvcache=yes"], "argument --offload-kvcache: ignored explicit argument 'yes'",
                     id="store_true with a value"),
        pytest.param(["--d", "1"], "ambiguous option: --d could match", id="ambiguous prefix"),
        pytest.param(["stray"], "unrecognized arguments: stray", id="positional"),
    ],
)
def test_parse_errors(ruleset, argv, message) -> None:
    errors = parse_command(["--model-path", "m", *argv], ruleset.catalog).errors
    assert any(e.message.startswith(message) for e in errors), errors


def test_words_argparse_does_not_know_come_after_what_stops_it_while_reading(ruleset) -> None:
    """argparse stops at an invalid choice, a bad value or an ambiguous prefix as it reads it, and reports
    the words it does not know only at the end, after a missing required option: in that order, whatever
    the order of the words (the first error is the one the launch prints)."""
    errors = parse_command(["--tp-sise", "2", "stray", "--disaggregation-mode", "both", "--d", "1"],
                           ruleset.catalog).errors
    assert [e.message.split(":")[0] for e in errors] == [
        "argument --disaggregation-mode", "ambiguous option", "the following arguments are required",
        "unrecognized arguments"]


def test_required_flag_missing(ruleset) -> None:
    errors = parse_command(["--tp-size", "2"], ruleset.catalog).errors
    assert [e.message for e in errors] == ["the following arguments are required: --model-path/--model"]


@pytest.mark.parametrize(
    "argv, tokens, env",
    [
        pytest.param(["python -m sglang.launch_server --model-path m --tp 2"], ["--model-path", "m", "--tp", "2"], {},
                     id="pasted as one string"),
        pytest.param(["SGLANG_STRICT=1 python3 -u -m sglang.launch_server \\\n  --model-path m"], ["--model-path", "m"],
                     {"SGLANG_STRICT": "1"}, id="env prefix, python options, continuation"),
        pytest.param(["sglang", "serve", "--model-path", "m"], ["--model-path", "m"], {}, id="sglang serve"),
        pytest.param(["--model-path", "m"], ["--model-path", "m"], {}, id="bare arguments"),
        # An empty word of an exec-form list (YAML `args:`, `check -- ...`) is an argument as argparse
        # reads it: a value (`--served-model-name ""` is accepted), or an unrecognized one.
        pytest.param(["--model-path", "m", "--served-model-name", ""], ["--model-path", "m", "--served-model-name", ""], {},
                     id="an empty value"),
    ],
)
def test_split_command(argv, tokens, env) -> None:
    assert split_command(argv) == (tokens, env)


def test_defaults_typed_from_the_catalog(ruleset) -> None:
    defaults = ruleset.defaults
    assert defaults["disaggregation_mode"] == "null" and defaults["enable_overlap"] is True
    assert defaults["page_size"] is None and defaults["model_path"] is UNKNOWN  # required, no default


# ---- evaluation -------------------------------------------------------------------------------------


def first_errors(ruleset, argv, **kwargs) -> list[str]:
    """The definite errors in the order the launch meets them: the first is where it stops."""
    return [f.rule.message for f in check(ruleset, argv, **kwargs).definite]


def test_definite(ruleset) -> None:
    found = outcome(ruleset, ["--model-path", "m", "--disaggregation-mode", "prefill", "--offload-kvcache"])
    assert found[OFFLOAD] == "definite"
    # The launch stops at the first; once it is fixed, the missing storage backend is next.
    assert first_errors(ruleset, ["--model-path", "m", "--disaggregation-mode", "prefill", "--offload-kvcache"]) == [
        OFFLOAD, BACKEND]


def test_possible_on_an_unknown_platform(ruleset) -> None:
    argv = ["--model-path", "m", "--disaggregation-mode", "decode", "--offload-kvcache", "--storage-backend", "file"]
    found = outcome(ruleset, argv)
    assert found[ROCM] == "possible" and OFFLOAD not in found and BACKEND not in found
    assert ROCM not in outcome(ruleset, argv, assume={"get_platform().is_hip": False})
    # On ROCm the platform adjustment sets page_size = 128 first, so the page-size guard fires first.
    on_rocm = first_errors(ruleset, [*argv, "--page-size", "16"], assume={"get_platform().is_hip": True})
    assert on_rocm == [PAGE, ROCM]


def test_clear(ruleset) -> None:
    found = outcome(ruleset, ["--model-path", "m"], assume={"get_platform().is_hip": False})
    assert found == {}


def test_dummy_model_skips_everything(ruleset) -> None:
    assert outcome(ruleset, ["--model-path", "DUMMY", "--offload-kvcache"]) == {}


def test_expression_over_flags_is_computed(ruleset) -> None:
    assert outcome(ruleset, ["--model-path", "m", "--tp-size", "4", "--dp-size", "4"])[WORLD] == "definite"
    assert WORLD not in outcome(ruleset, ["--model-path", "m", "--tp-size", "4", "--dp-size", "2"])


def test_boolean_optional_and_store_true_forms(ruleset) -> None:
    assert outcome(ruleset, ["--model-path", "m", "--pp-size", "2"])[OVERLAP] == "definite"
    assert OVERLAP not in outcome(ruleset, ["--model-path", "m", "--pp-size", "2", "--no-enable-overlap"])


def test_env_vars_unset_by_default_and_given(ruleset, monkeypatch) -> None:
    argv = ["--model-path", "m", "--dp-size", "2"]
    assert STRICT not in outcome(ruleset, argv)  # unset: environ.py's default False
    assert outcome(ruleset, argv, env={"SGLANG_STRICT": "true"})[STRICT] == "definite"
    assert outcome(ruleset, ["SGLANG_STRICT=1", *argv])[STRICT] == "definite"
    monkeypatch.setenv("SGLANG_STRICT", "yes")
    assert STRICT not in outcome(ruleset, argv)  # the shell is not read without use_env
    assert outcome(ruleset, argv, use_env=True)[STRICT] == "definite"


def test_env_defaults_follow_the_rules_file(rules_file, tmp_path) -> None:
    from extractor.products.reuse.rulesets import load_rules

    argv = ["--model-path", "m", "--dp-size", "2"]
    assert STRICT not in outcome(load_rules(rules_file), argv)  # the source folder is here: environ.py read
    moved = tmp_path / "rules.json"
    document = json.loads(rules_file.read_text(encoding="utf-8"))
    document["source"] = {"kind": "path", "label": "gone", "path": str(tmp_path / "gone")}
    moved.write_text(json.dumps(document), encoding="utf-8")
    (tmp_path / "flags.json").write_text(rules_file.with_name("flags.json").read_text(encoding="utf-8"), encoding="utf-8")
    assert STRICT not in outcome(load_rules(moved), argv)  # the rules file carries the env defaults itself
    del document["environment"]  # a document written before the environment section, source gone
    moved.write_text(json.dumps(document), encoding="utf-8")
    assert outcome(load_rules(moved), argv)[STRICT] == "possible"  # no environ.py: the env var is unknown


def test_adjustment_that_may_fire_makes_a_guard_possible(ruleset) -> None:
    argv = ["--model-path", "m", "--page-size", "16"]
    report = check(ruleset, argv)
    finding = next(f for f in report.findings if f.rule.message == PAGE)
    assert finding.certainty == "possible" and finding.changed_by  # the platform may set page_size = 128
    assert PAGE not in outcome(ruleset, argv, assume={"get_platform().is_hip": False})
    # 65 is too large whatever the adjustment writes (65 or 128): still definite.
    assert outcome(ruleset, ["--model-path", "m", "--page-size", "65"])[PAGE] == "definite"


def test_adjustment_that_surely_fires_decides_the_value(ruleset) -> None:
    # page_size is None by default; the default adjustment sets 16, so `page_size > 64` is false.
    assert PAGE not in outcome(ruleset, ["--model-path", "m"], assume={"get_platform().is_hip": False})


def test_findings_sorted_definite_first(ruleset) -> None:
    report = check(ruleset, ["--model-path", "m", "--page-size", "16", "--pp-size", "2"])
    certainties = [f.certainty for f in report.findings]
    assert certainties == sorted(certainties, key=lambda c: c != "definite") and "possible" in certainties


@pytest.mark.parametrize(
    "text, values, expected",
    [
        ("tp_size * dp_size", {"tp_size": 2, "dp_size": 3}, 6),
        ("(cfg or {}).get(\"k\", 0)", {"cfg": None}, 0),
        ("x.upper() if x is not None else None", {"x": "eagle"}, "EAGLE"),
        ("isinstance(x, (list, dict))", {"x": [1]}, True),
        ("int(a) + 1", {"a": "4"}, 5),
    ],
)
def test_safe_eval(text, values, expected) -> None:
    assert safe_eval(text, values) == expected


@pytest.mark.parametrize("text", ["open('x')", "__import__('os')", "x.__class__", "'a' * 10**9", "2 ** 10000", "unknown"])
def test_safe_eval_refuses(text) -> None:
    with pytest.raises(Unknown):
        safe_eval(text, {"x": 1})


def test_computable() -> None:
    assert computable(Term(TermKind.OPAQUE, "tp_size * dp_size", "tp_size * dp_size", ("tp_size", "dp_size")))
    assert not computable(Term(TermKind.OPAQUE, "f(model_path)", "f(model_path)", ("model_path",)))


def test_env_defaults_read_statically() -> None:
    envs = env_defaults(path_tree(SOURCE))
    assert envs["SGLANG_STRICT"].kind == "bool" and envs["SGLANG_STRICT"].default is False
    assert envs["SGLANG_MAX_DP"].default == 4


# ---- the command --------------------------------------------------------------------------------------


def test_cli_json(rules_file, capsys) -> None:
    code = main(["check", "--rules", str(rules_file), "--format", "json", "--",
                 "--model-path", "m", "--disaggregation-mode=prefill", "--offload-kvcache"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    first = document["errors"][0]
    assert set(first) >= {"id", "message", "certainty", "location", "fix"}
    assert (first["message"], first["certainty"]) == (OFFLOAD, "definite")
    # Checked on this command line: decode mode alone would leave "needs a storage backend", which
    # reads the same flag, so the fix that keeps --offload-kvcache adds the backend too.
    assert first["fix"] == ["remove --offload-kvcache", "pass --disaggregation-mode decode and --storage-backend "
                            "VALUE (--storage-backend VALUE clears server_args.py:46)"]
    second = document["errors"][1]
    assert second["fix"] == ["remove --offload-kvcache", "pass --storage-backend VALUE and --disaggregation-mode decode"
                             " (--disaggregation-mode decode clears server_args.py:44)"]


def test_docs_pages_list_the_fixes_checked_on_their_example(ruleset) -> None:
    """A page's Solutions are the ways out that work on its example command line, completed as
    `check` completes them; a rule without an example says its solutions are unchecked."""
    from extractor.products.check.fixes import example_fixes
    from extractor.products.check.words import by_function
    from extractor.products.site.pages import page
    from extractor.products.check.words import Flags

    flags, groups = Flags(ruleset.flags), by_function(ruleset.rules)
    checked = example_fixes(ruleset, flags, groups)
    rule = next(r for r in ruleset.rules if r.message == OFFLOAD)
    assert rule.example is not None and rule.id in checked
    for fix in (f.text for f in checked[rule.id]):  # the example with the fix applied leaves no definite error
        before = list(rule.example.before)
        if fix.startswith("remove"):
            edited = [a for a in before if a != "--offload-kvcache"]
        else:
            edited = [a for a in before if not a.startswith("--disaggregation-mode")]
            edited = [a for i, a in enumerate(edited) if not (i and edited[i - 1] == "--disaggregation-mode")]
            edited += ["--disaggregation-mode", "decode"] + (["--storage-backend", "s3"] if "storage" in fix else [])
        assert not check(ruleset, edited).definite, (fix, edited)
    text = page(rule, flags, ruleset.source, ruleset.by_id, fixes=checked[rule.id])
    solutions = text.split("## Solutions", 1)[1].split("##", 1)[0]
    assert "Each one checked on the example command below" in solutions
    assert "`--offload-kvcache`" in solutions
    unchecked = page(rule, flags, ruleset.source, ruleset.by_id)
    assert "not checked on a command line" in unchecked.split("## Solutions", 1)[1].split("##", 1)[0]


def test_a_fix_that_sets_off_another_error_is_completed_or_dropped(ruleset) -> None:
    from extractor.products.check.fixes import working_fixes
    from extractor.products.check.words import by_function
    from extractor.products.check.words import Flags

    argv = ["--model-path", "m", "--disaggregation-mode", "prefill", "--offload-kvcache", "--storage-backend", "s3"]
    rule = next(r for r in ruleset.rules if r.message == OFFLOAD)
    fixes = working_fixes(ruleset, rule, argv, Flags(ruleset.flags), by_function(ruleset.rules))
    assert fixes == ["remove --offload-kvcache", "pass --disaggregation-mode decode"]  # the backend is there already
    for fix in fixes:  # each one, applied, leaves no definite error
        edited = [*argv[:2], *(["--disaggregation-mode", "decode", "--offload-kvcache", "--storage-backend", "s3"]
                              if "decode" in fix else ["--disaggregation-mode", "prefill", "--storage-backend", "s3"])]
        assert not check(ruleset, edited).definite, fix


def test_cli_exit_codes(rules_file, capsys) -> None:
    assert main(["check", "--rules", str(rules_file), "--", "--model-path", "m"]) == 0
    assert main(["check", "--rules", str(rules_file), "--", "--model-path", "m", "--bogus"]) == 1
    assert "unrecognized arguments: --bogus" in capsys.readouterr().out
    assert main(["check", "--rules", str(rules_file)]) == 2  # no launch arguments
    assert main(["check", "--rules", str(rules_file), "--env", "oops", "--", "--model-path", "m"]) == 2
    assert main(["check", "--rules", str(rules_file), "--assume", "x=maybe", "--", "--model-path", "m"]) == 2
    assert main(["check", "--", "--model-path", "m"]) == 2  # neither --rules nor --release
    assert main(["check", "--rules", str(rules_file), "--local", "/no/such/folder", "--", "--model-path", "m"]) == 2
    assert main(["check", "--rules", str(rules_file), "--local", "--", "--model-path", "m"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_cli_pasted_command(rules_file, capsys) -> None:
    line = "python -m sglang.launch_server --model-path m --disaggregation-mode prefill --offload-kvcache"
    assert main(["check", "--rules", str(rules_file), "--", line]) == 1
    out = capsys.readouterr().out
    assert "error[definite] sglang/srt/server_args.py" in out and OFFLOAD in out


def test_cli_text_is_quiet_about_what_it_cannot_decide(rules_file, capsys) -> None:
    argv = ["check", "--rules", str(rules_file), "--", "--model-path", "m"]
    assert main(argv) == 0
    quiet = capsys.readouterr().out
    assert "warning[possible]" not in quiet  # one line per kind of missing fact instead
    assert "1 more depend on the GPU or platform: pass --platform NAME" in quiet
    assert main([*argv[:3], "--show-possible", *argv[3:]]) == 0
    listed = capsys.readouterr().out
    assert "warning[possible] sglang/srt/server_args.py:48:" in listed
    assert "undecided (needs platform): get_platform().is_hip" in listed
    # a platform that decides it: nothing left to say about it
    assert main([*argv[:3], "--platform", "cuda-sm90", *argv[3:]]) == 0
    assert "platform" not in capsys.readouterr().out.split("src:")[0]


def test_cli_broken_pipe_is_not_an_error(rules_file, capsys, monkeypatch) -> None:
    import extractor.products.check.report as report  # the check command imports it when it runs

    def closed(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(report, "report_text", closed)
    assert main(["check", "--rules", str(rules_file), "--", "--model-path", "m"]) == 0
    assert "internal error" not in capsys.readouterr().err


# ---- witnesses ------------------------------------------------------------------------------------------


def test_witnesses_pass_their_own_check(ruleset) -> None:
    outcomes = witnesses(ruleset)
    by_id = {r.id: r for r in ruleset.rules}
    made = [o for o in outcomes if o.example]
    assert len(made) >= 6
    for o in made:
        before_ok, after_ok = verify(ruleset, by_id[o.rule_id], o.example)
        assert before_ok and after_ok, (by_id[o.rule_id].message, o.example)


def test_witness_is_minimal_and_fixed(ruleset) -> None:
    rule = next(r for r in ruleset.rules if r.message == OFFLOAD)
    example = next(o.example for o in witnesses(ruleset) if o.rule_id == rule.id)
    # Only what the trigger needs: the required model path and the flag itself (mode is "null" by default).
    assert sorted(example.before) == sorted(["--model-path", "org/model", "--offload-kvcache"])
    assert "--offload-kvcache" not in example.after or "decode" in example.after


def test_witness_uses_env_and_no_form(ruleset) -> None:
    found = {ruleset_rule.message: o.example for o in witnesses(ruleset) for ruleset_rule in ruleset.rules
             if ruleset_rule.id == o.rule_id and o.example}
    # Any non-empty value makes `os.environ.get("SGLANG_STRICT")` true; the witness sets one.
    strict = [a for a in found[STRICT].before if a.startswith("SGLANG_STRICT=")]
    assert len(strict) == 1 and strict[0].split("=", 1)[1] not in ("", "0", "false")
    assert "--no-enable-overlap" in found[OVERLAP].after
    assert found[GRAPHS].before.count("--cuda-graph-bs") == 1 and len(found[GRAPHS].before) >= 7


def test_extraction_stores_witnesses() -> None:
    ex = extract(path_tree(SOURCE))
    with_examples = [r for r in ex.rules if r.example]
    assert with_examples and all(eligible(r) for r in with_examples)
    document = rules_document(ex)
    assert any("example" in r and r["example"]["before"] for r in document["rules"])


# ---- real release ------------------------------------------------------------------------------------------

REAL_OFFLOAD = "The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side."


@pytest.fixture(scope="module")
def real():
    return release_rules("0.5.23")


@pytest.mark.network
def test_real_offload_is_definite(real) -> None:
    report = check(real, ["--model-path", "m", "--disaggregation-mode", "prefill",
                          "--disaggregation-decode-enable-offload-kvcache"])
    assert not report.argument_errors
    assert {f.rule.message: f.certainty for f in report.findings}[REAL_OFFLOAD] == "definite"
    decode = check(real, ["--model-path", "m", "--disaggregation-mode", "decode",
                          "--disaggregation-decode-enable-offload-kvcache"])
    assert REAL_OFFLOAD not in {f.rule.message for f in decode.findings}


@pytest.mark.network
def test_real_cli_acceptance(capsys) -> None:
    code = main(["check", "--release", "0.5.23", "--format", "json", "--", "--model-path", "m",
                 "--disaggregation-mode", "prefill", "--disaggregation-decode-enable-offload-kvcache"])
    errors = json.loads(capsys.readouterr().out)["errors"]
    assert code == 1
    assert any(e["message"] == REAL_OFFLOAD and e["certainty"] == "definite" for e in errors)


@pytest.mark.network
def test_real_witnesses_all_pass(real) -> None:
    by_id = {r.id: r for r in real.rules}
    made = [r for r in real.rules if r.example]
    eligible_count = sum(eligible(r) for r in real.rules)
    assert made and len(made) <= eligible_count
    failures = [r.message for r in made if verify(real, r, r.example) != (True, True)]
    assert failures == []
    assert by_id  # every witness is stored on a rule of this release


@pytest.mark.parametrize("pasted, args, env", [
    ("docker run --gpus all -e HF_TOKEN=x -p 30000:30000 lmsysorg/sglang:latest "
     "python3 -m sglang.launch_server --model-path m --tp 2 2>&1 | tee log",
     ["--model-path", "m", "--tp", "2"], {"HF_TOKEN": "x"}),
    ("CUDA_VISIBLE_DEVICES=0,1 nohup python -m sglang.launch_server \\\n  --model-path m \\  # the model\n"
     "  # a whole comment line\n  --port $PORT > out.log &",
     ["--model-path", "m", "--port", "$PORT"], {"CUDA_VISIBLE_DEVICES": "0,1"}),
    ("sglang serve --model-path m --tp 2", ["--model-path", "m", "--tp", "2"], {}),
    ("env SGLANG_X=1 python -m sglang.launch_server --model-path 'a b' ; echo done # bye",
     ["--model-path", "a b"], {"SGLANG_X": "1"}),
    ("exec python3 /sgl/python/sglang/launch_server.py --model-path m && sleep 1", ["--model-path", "m"], {}),
])
def test_pasted_commands_split_like_a_shell(pasted, args, env) -> None:
    assert split_command([pasted]) == (args, env)


def test_a_placeholder_is_unknown_not_a_bad_value(ruleset) -> None:
    report = check(ruleset, ["python -m sglang.launch_server --model-path m --tp-size $TP"])
    assert not report.argument_errors  # `$TP` is no bad int
    assert report.placeholders == ["--tp-size $TP"]


@pytest.mark.parametrize("pasted", [
    'python -m sglang.launch_server "${ARGS[@]}"',
    "python -m sglang.launch_server $SERVER_ARGS --tp-size 2",
    "python -m sglang.launch_server --model-path m $EXTRA_ARGS --tp-size 2",
    'exec python3 -m sglang.launch_server "$@" --tp-size 2',  # a wrapper script passes its own arguments on
])
def test_a_placeholder_where_options_go_may_set_any_option_the_line_leaves_out(ruleset, pasted) -> None:
    """A script's `$SERVER_ARGS` or `"${ARGS[@]}"` where options go is any words, options too (the
    model path, often): no option is unrecognized or missing for it, what the line leaves out is
    unknown, and what it types itself stays as typed."""
    report = check(ruleset, [pasted])
    assert not report.argument_errors
    assert not report.definite
    assert len(report.placeholders) == 1 and report.placeholders[0].startswith(("$", "${"))
    # as the launch's words too (`split_command` first, as the fixes take them)
    command = parse_command(split_command([pasted])[0], ruleset.catalog)
    assert not command.errors and command.placeholders == report.placeholders
    tp_size = command.given["tp_size"]
    assert (tp_size == 2 if "--tp-size 2" in pasted else tp_size is UNKNOWN)
    assert command.given["disaggregation_mode"] is UNKNOWN
    assert "where options go" in report_text(report, lambda rule: [])


def test_cli_checks_the_launch_commands_of_files(rules_file, capsys) -> None:
    folder = FIXTURES / "launch_files"
    assert main(["check", "--rules", str(rules_file), "--format", "json", "--file", str(folder)]) == 1
    document = json.loads(capsys.readouterr().out)
    by_place = {(Path(c["file"]).name, c["line"]): c for c in document["commands"]}
    # workflow.yml, a mapping that names no model, is no SGLang config file: nothing of it is read
    assert set(by_place) == {("Dockerfile", 4), ("Dockerfile.shell", 2), ("compose.yml", 4), ("deployment.yaml", 11),
                             ("deployment.yaml", 28), ("serve.sh", 6), ("serve.sh", 13), ("sky.yaml", 5),
                             ("serve-config.yaml", 1)}
    failing = {place for place, c in by_place.items() if any(e["certainty"] == "definite" for e in c["errors"])}
    # the prefill + offload command, in each of its forms: shell, exec form, k8s args, compose string, and
    # SGLang's --config file
    assert failing == {("Dockerfile", 4), ("compose.yml", 4), ("deployment.yaml", 11), ("serve.sh", 6),
                       ("serve-config.yaml", 1)}
    assert all(not c["argument_errors"] for c in by_place.values())
    assert by_place[("serve.sh", 6)]["placeholders"] == ["--tp-size $TP"]
    assert main(["check", "--rules", str(rules_file), "--file", str(folder / "sky.yaml")]) == 0
    assert capsys.readouterr().out.startswith(f"{(folder / 'sky.yaml').as_posix()}:5: python -m sglang.launch_server")
    assert main(["check", "--rules", str(rules_file), "--file", str(folder / "missing.sh")]) == 2


def test_sglang_config_files_are_checked_as_the_launch_that_reads_them(rules_file, tmp_path, capsys) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text("model-path: m\ndisaggregation-mode: prefill\noffload-kvcache: true\n", encoding="utf-8")
    assert main(["check", "--rules", str(rules_file), "--file", str(config)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{config.as_posix()}:1: --config {config.as_posix()}\n")
    assert OFFLOAD in out
    # SGLang's merger makes `--model_path` of this key: argparse stops at the missing --model-path (as the
    # real SGLang does), and refuses the key too: said, not skipped
    config.write_text("model_path: m\n", encoding="utf-8")
    assert main(["check", "--rules", str(rules_file), "--file", str(config)]) == 1
    errors = [line.strip() for line in capsys.readouterr().out.splitlines() if "error[argument]" in line]
    assert errors[0] == "error[argument] the following arguments are required: --model-path/--model"
    assert any("unrecognized arguments: --model_path" in line for line in errors[1:])
    # other YAML is not read as one: a mapping naming no model, two documents, a list
    for text in ("name: ci\non: push\n", "model-path: m\n---\nmodel-path: n\n", "- model-path: m\n"):
        config.write_text(text, encoding="utf-8")
        assert main(["check", "--rules", str(rules_file), "--file", str(config)]) == 0
        assert capsys.readouterr().out.startswith("no launch command found in")


def test_a_scripts_own_variables_are_filled_in_as_its_shell_fills_them() -> None:
    from extractor.logic.launch_files import launch_commands

    script = """#!/bin/bash
MODEL=Qwen/Qwen3-8B
export MODE="prefill"
NAME='a b'
TP=${TP:-2}
if [ -n "$DEBUG" ]; then
  MODE=decode
fi
python -m sglang.launch_server --model-path $MODEL --disaggregation-mode "$MODE" --tp $TP --name ${NAME} '$MODEL'
MODEL=other
python -m sglang.launch_server --model-path "${MODEL}" --served-model-name "$NAME"
"""
    first, second = launch_commands(script, "shell")
    # indented (it may not run): MODE unknown; TP from the environment: unknown; single quotes: as written
    assert split_command(list(first.argv))[0] == ["--model-path", "Qwen/Qwen3-8B", "--disaggregation-mode", "$MODE",
                                                  "--tp", "$TP", "--name", "a b", "$MODEL"]
    assert first.line == 9
    assert split_command(list(second.argv))[0] == ["--model-path", "other", "--served-model-name", "a b"]


def test_a_containers_env_is_filled_in_as_kubernetes_and_its_shell_fill_it() -> None:
    from extractor.logic.launch_files import launch_commands

    manifest = """spec:
  containers:
    - name: sglang
      env:
        - {name: MODEL_ID, value: Qwen/Qwen3-8B}
        - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
      command: ["python3", "-m", "sglang.launch_server"]
      args: ["--model-path", "$(MODEL_ID)", "--host", "$(POD_IP)", "--served-model-name", "$$(MODEL_ID)"]
    - name: by-shell
      env: [{name: MODEL_ID, value: m}]
      command: ["sh", "-c", "cd /srv && python3 -m sglang.launch_server --model-path $MODEL_ID --tp 2 > log"]
"""
    exec_form, shell_form = launch_commands(manifest, "yaml")
    # valueFrom is known only at run time; `$$(...)` is Kubernetes' escape of `$(...)`; an entry of a
    # literal value is in the launch's environment (an `envs.X` SGLang reads)
    assert split_command(list(exec_form.argv)) == (
        ["--model-path", "Qwen/Qwen3-8B", "--host", "$(POD_IP)", "--served-model-name", "$(MODEL_ID)"],
        {"MODEL_ID": "Qwen/Qwen3-8B"})
    assert split_command(list(shell_form.argv)) == (["--model-path", "m", "--tp", "2"], {"MODEL_ID": "m"})


def test_a_dockerfile_entrypoint_runs_with_its_stages_cmd_and_env() -> None:
    """Docker runs an exec-form ENTRYPOINT with the stage's last exec-form CMD as its arguments, in the
    environment the stage's ENV instructions set (both forms of ENV; a value naming another variable
    is unknown); a new FROM starts again."""
    from extractor.logic.launch_files import launch_commands

    dockerfile = """FROM builder AS build
ENV SGLANG_OLD=1
FROM lmsysorg/sglang:latest
ENV SGLANG_X=1 HF_HOME="/my models"
ENV SGLANG_Y 2
ENV PATH=$PATH:/opt/bin
ENTRYPOINT ["python3", "-m", "sglang.launch_server"]
CMD ["--model-path", "m", "--tp", "4"]
CMD ["--model-path", "m", "--tp", "2"]
"""
    (found,) = launch_commands(dockerfile, "dockerfile")
    assert found.line == 7 and split_command(list(found.argv)) == (
        ["--model-path", "m", "--tp", "2"], {"SGLANG_X": "1", "HF_HOME": "/my models", "SGLANG_Y": "2"})


def test_a_compose_service_runs_its_entrypoint_with_its_command_and_environment() -> None:
    """SGLang's own docker/compose.yaml shape: the launcher in `entrypoint`, its options in `command` (a
    plain scalar over several lines), `environment` a mapping; also both as lists, `environment` a
    list, and a value Compose fills in from elsewhere (`${TOKEN}`) left unknown."""
    from extractor.logic.launch_files import launch_commands

    compose = """services:
  sglang:
    image: lmsysorg/sglang:latest
    environment:
      HF_TOKEN: <secret>
      SGLANG_X: "1"
    entrypoint: python3 -m sglang.launch_server
    command:
      --model-path meta-llama/Meta-Llama-3.1-8B-Instruct
      --host 0.0.0.0
      --served-model-name 'a b'
  exec-form:
    environment: [SGLANG_Y=2, "TOKEN=${TOKEN}", UNSET]
    entrypoint: ["python3", "-m", "sglang.launch_server"]
    command: ["--model-path", "m", "--tp", "2"]
  command-string:
    environment: {SGLANG_Z: "3"}
    command: python3 -m sglang.launch_server --model-path m
"""
    scalar, listed, string = launch_commands(compose, "yaml")
    assert scalar.line == 7 and split_command(list(scalar.argv)) == (
        ["--model-path", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--host", "0.0.0.0", "--served-model-name", "a b"],
        {"HF_TOKEN": "<secret>", "SGLANG_X": "1"})
    assert split_command(list(listed.argv)) == (["--model-path", "m", "--tp", "2"], {"SGLANG_Y": "2"})
    assert string.line == 18 and split_command(list(string.argv)) == (["--model-path", "m"], {"SGLANG_Z": "3"})


HELM_ARGS = """spec:
  containers:
    - name: {{ .Release.Name }}-sglang
      command: ["python3", "-m", "sglang.launch_server"]
      args:
        - --model-path
        - {{ .Values.model | default "m" }}
        - --disaggregation-mode
        - prefill
        - --offload-kvcache
        - --tp-size
        - "{{ .Values.tp }}"
"""


def test_a_helm_template_of_values_is_read_with_each_value_a_placeholder(rules_file, tmp_path, capsys) -> None:
    chart = tmp_path / "templates"
    chart.mkdir()
    (chart / "deployment.yaml").write_text(HELM_ARGS, encoding="utf-8")
    (chart / "_helpers.tpl").write_text('{{- define "x" -}}python -m sglang.launch_server{{- end }}\n', encoding="utf-8")
    # The model path unknown, so is SGLang's dummy-model short cut: what the flags written out set off
    # is possible, waiting on that value alone (exit 0)
    assert main(["check", "--rules", str(rules_file), "--format", "json", "--file", str(tmp_path)]) == 0
    document = json.loads(capsys.readouterr().out)
    (command,) = document["commands"]
    assert command["line"] == 4 and "unread" not in document
    assert command["placeholders"] == ["--model-path $(.Values.model | default 'm')", "--tp-size $(.Values.tp)"]
    first = command["errors"][0]
    assert (first["message"], first["certainty"], first["unknown"]) == \
        (OFFLOAD, "possible", ['--model-path.lower() not in ["none", "dummy"]'])


def test_a_template_that_decides_its_lines_is_said_to_be_unread(rules_file, tmp_path, capsys) -> None:
    template = tmp_path / "deployment.yaml"
    template.write_text(HELM_ARGS.replace("        - --offload-kvcache\n",
                                          "        {{- if .Values.offload }}\n        - --offload-kvcache\n        {{- end }}\n"),
                        encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("command: python -m sglang.launch_server --tp 2\n  - x: [\n", encoding="utf-8")
    (tmp_path / "other.yaml").write_text("a: {{ if }}\n", encoding="utf-8")  # names no launcher: not said
    assert main(["check", "--rules", str(rules_file), "--file", str(tmp_path)]) == 0  # nothing checked, nothing failed
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"no launch command found in {tmp_path}"
    assert out[1].startswith(f"{(tmp_path / 'broken.yaml').as_posix()}: not read: not YAML: ")
    assert out[2] == f"{template.as_posix()}: not read: a template whose {{{{ }}}} directives decide its lines " \
                     "(conditions, loops, includes): check what it renders (`helm template CHART > rendered.yaml`)"
    assert len(out) == 3
    assert main(["check", "--rules", str(rules_file), "--format", "github", "--file", str(template)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("::warning file=")


def test_a_scripts_config_file_beside_it_is_read_from_there(rules_file, tmp_path, capsys, monkeypatch) -> None:
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / "serve.yaml").write_text("model-path: m\ndisaggregation-mode: prefill\n", encoding="utf-8")
    (deploy / "run.sh").write_text('cd "$(dirname "$0")"\nSGLANG_X=1 sglang serve --config serve.yaml --offload-kvcache\n',
                                   encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # CI at the repository's root: serve.yaml is not found from here
    assert main(["check", "--rules", str(rules_file), "--file", "deploy/run.sh"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("deploy/run.sh:2: SGLANG_X=1 --config deploy/serve.yaml --offload-kvcache\n")
    assert OFFLOAD in out and "Config file not found" not in out
    # Found from here, or found nowhere: the line as written; not on this machine, its options are
    # unknown here (SGLang's own error only where the launch runs: --local)
    (deploy / "serve.yaml").rename(tmp_path / "gone.yaml")
    assert main(["check", "--rules", str(rules_file), "--file", "deploy/run.sh"]) == 0
    assert "note: --config serve.yaml is not on this machine" in capsys.readouterr().out
    assert main(["check", "--rules", str(rules_file), "--local", str(tmp_path), "--file", "deploy/run.sh"]) == 1
    assert "Config file not found: serve.yaml" in capsys.readouterr().out


def test_a_launch_line_met_in_several_files_is_checked_once_and_reported_for_each(rules_file, tmp_path, capsys,
                                                                                  monkeypatch) -> None:
    import extractor.products.check.linter as linter

    line = "python -m sglang.launch_server --model-path m --disaggregation-mode prefill --offload-kvcache\n"
    for name in ("dev.sh", "prod.sh"):
        (tmp_path / name).write_text(line, encoding="utf-8")
    (tmp_path / "other.sh").write_text("python -m sglang.launch_server --model-path m --tp 2\n", encoding="utf-8")
    calls = []
    real = linter.check
    monkeypatch.setattr(linter, "check", lambda ruleset, argv, **kw: calls.append(tuple(argv)) or real(ruleset, argv, **kw))
    assert main(["check", "--rules", str(rules_file), "--format", "json", "--file", str(tmp_path)]) == 1
    by_file = {Path(c["file"]).name: c for c in json.loads(capsys.readouterr().out)["commands"]}
    assert len(calls) == 2 and len(set(calls)) == 2  # the repeated line once, the other once
    dev, prod = by_file["dev.sh"], by_file["prod.sh"]
    assert {k: v for k, v in dev.items() if k != "file"} == {k: v for k, v in prod.items() if k != "file"}
    assert dev["errors"][0]["message"] == OFFLOAD
    assert not [e for e in by_file["other.sh"]["errors"] if e["certainty"] == "definite"]


def test_cli_github_annotations_point_at_the_command(rules_file, capsys) -> None:
    folder = FIXTURES / "launch_files"
    assert main(["check", "--rules", str(rules_file), "--format", "github", "--file", str(folder / "compose.yml")]) == 1
    lines = capsys.readouterr().out.splitlines()
    where = f"file={(folder / 'compose.yml').as_posix().replace(':', '%3A')},line=4,"
    assert lines and all(line.startswith(f"::error {where}title=sglang-constraints") for line in lines)
    assert any(OFFLOAD in line for line in lines)


def test_config_file_is_merged_before_parsing(ruleset, tmp_path) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text("model-path: m\ndisaggregation-mode: prefill\noffload-kvcache: true\n", encoding="utf-8")
    assert outcome(ruleset, ["--config", str(config)])[OFFLOAD] == "definite"
    # the command line wins over the file, as in SGLang (config arguments go first)
    assert OFFLOAD not in outcome(ruleset, ["--config", str(config), "--disaggregation-mode", "decode"])
    assert check(ruleset, ["--config", "serve.json", "--model-path", "m"]).argument_errors[0].message == (
        "Config file must be YAML format, got: .json")


def test_a_config_file_not_on_this_machine_leaves_what_it_may_set_unknown(ruleset, tmp_path) -> None:
    from extractor.logic.launch_host import LaunchHost
    from extractor.products.check.report import report_text

    gone = str(tmp_path / "gone.yaml")
    # Where the launch runs (--local), a missing file is SGLang's own error.
    here = check(ruleset, ["--config", gone, "--model-path", "m", "--offload-kvcache"], host=LaunchHost(tmp_path))
    assert [e.message for e in here.argument_errors] == [f"Config file not found: {gone}"]
    # Elsewhere (CI over a deployment whose file is mounted where it runs), the file may set any option
    # the line leaves out, the model path and the disaggregation mode included: no error is sure.
    elsewhere = check(ruleset, ["--config", gone, "--offload-kvcache"])
    assert elsewhere.argument_errors == [] and elsewhere.unread_config == gone
    assert {f.rule.message: f.certainty for f in elsewhere.findings}[OFFLOAD] == "possible"
    assert f"note: --config {gone} is not on this machine" in report_text(elsewhere, lambda rule: [])
    assert report_json(elsewhere, lambda rule: [])["unread_config"] == gone
    # What the line gives itself is read as it is: the command line wins over the file.
    assert OFFLOAD not in outcome(ruleset, ["--config", gone, "--offload-kvcache", "--disaggregation-mode", "decode"])
    # SGLang's other words on a --config are its errors wherever the launch runs.
    assert [e.message for e in check(ruleset, ["--model-path", "m", "--config"]).argument_errors] == [
        "No config file specified after --config flag!"]


def test_config_file_keys_as_sglang_merges_them(ruleset, tmp_path) -> None:
    """SGLang passes `--KEY` as written: an empty list and a false switch are left out (also under an
    underscore spelling, which names a switch), `tp_size: 2` is --tp_size, which argparse does not
    know, and a BooleanOptionalAction key is refused by the merger itself."""
    config = tmp_path / "serve.yaml"

    def errors(text: str) -> list[str]:
        config.write_text(text, encoding="utf-8")
        return [e.message for e in check(ruleset, ["--config", str(config), "--model-path", "m"]).argument_errors]

    assert errors("cuda-graph-bs: []\noffload_kvcache: false\ntp-size: [2]\n") == []
    assert errors("tp_size: 2\n") == ["unrecognized arguments: --tp_size (did you mean --tp-size?)"]
    assert errors("enable-overlap: false\n") == [
        "Unsupported config option 'enable_overlap' with action 'BooleanOptionalAction'"]


def test_no_fix_asks_to_change_the_model(ruleset) -> None:
    from extractor.products.check.words import by_function
    from extractor.products.check.words import Flags, fixes_for

    flags, groups = Flags(ruleset.flags), by_function(ruleset.rules)
    fixes = [fix for rule in ruleset.rules if rule.kind.value != "adjustment"
             for fix in fixes_for(rule, flags, groups[(rule.location.file, rule.function)])]
    assert fixes and not [fix for fix in fixes if "--model-path" in fix]


@pytest.mark.network
def test_real_fix_never_swaps_the_model(real) -> None:
    from extractor.products.check.words import by_function
    from extractor.products.check.words import Flags, fixes_for

    rule = next(r for r in real.rules if r.message.startswith("--moe-runner-backend {backend} requires --enable-lora"))
    groups = by_function(real.rules)
    fixes = fixes_for(rule, Flags(real.flags), groups[(rule.location.file, rule.function)])
    assert fixes and not [fix for fix in fixes if "--model-path" in fix]  # was "... and --model-path none"


def test_sarif_log_of_launch_files(rules_file, tmp_path, capsys) -> None:
    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/sh\npython -m sglang.launch_server --model-path m --disaggregation-mode prefill \\\n"
                      "    --offload-kvcache --tp-sise 2\n", encoding="utf-8")
    clean = tmp_path / "ok.sh"
    clean.write_text("python -m sglang.launch_server --model-path m\n", encoding="utf-8")
    assert main(["check", "--rules", str(rules_file), "--format", "sarif", "--file", str(script), str(clean)]) == 1
    log = json.loads(capsys.readouterr().out)
    from sarif_pydantic import Sarif  # models of the published SARIF 2.1.0 schema

    Sarif.model_validate(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    results = run["results"]
    assert [r["level"] for r in results] == ["error"] * len(results)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {str(script)}
    assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results} == {2}
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert set(rules) == {r["ruleId"] for r in results} and "argument-error" in rules
    offload = next(r for r in results if r["message"]["text"].startswith(OFFLOAD))
    assert "Fix: remove --offload-kvcache" in offload["message"]["text"]
    assert rules[offload["ruleId"]]["properties"]["sglangLocation"].startswith("sglang/srt/server_args.py:")


def test_pre_commit_hook_runs_as_declared(rules_file, tmp_path, capsys) -> None:
    """pre-commit runs `entry`, then `args`, then the staged file names: that command line must work."""
    import shlex

    import yaml

    (hook,) = yaml.safe_load((Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["language"] == "python" and hook["pass_filenames"] is True
    entry = shlex.split(hook["entry"])
    assert entry[0] == "sglang-constraints"  # the console script of pyproject.toml
    args = [*hook["args"]]
    args[args.index("--release"):args.index("--release") + 2] = ["--rules", str(rules_file)]  # no download here
    bad = tmp_path / "serve.sh"
    bad.write_text("python -m sglang.launch_server --model-path m --disaggregation-mode prefill --offload-kvcache\n",
                   encoding="utf-8")
    good = tmp_path / "good.sh"
    good.write_text("python -m sglang.launch_server --model-path m\n", encoding="utf-8")
    assert main([*entry[1:], *args, str(good)]) == 0
    assert main([*entry[1:], *args, str(good), str(bad)]) == 1
    assert f"{bad}:1:" in capsys.readouterr().out


@pytest.mark.network
def test_pre_commit_runs_the_hook_on_a_throwaway_repository(tmp_path) -> None:
    """The real pre-commit installs this repository's hook (its committed HEAD, dependencies from PyPI)
    into a throwaway repository's hooks and runs it over the staged launch scripts."""
    import subprocess
    import sys

    root = Path(__file__).parents[1]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    repo = tmp_path / "deploy"
    repo.mkdir()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {root}\n  rev: {head}\n  hooks:\n  - id: sglang-constraints-check\n", encoding="utf-8")
    (repo / "serve.sh").write_text("python -m sglang.launch_server --model-path m --disaggregation-mode prefill "
                                   "--disaggregation-decode-enable-offload-kvcache\n", encoding="utf-8")
    (repo / "ok.sh").write_text("python -m sglang.launch_server --model-path m\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.email=ci@example.invalid", "-c", "user.name=ci"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}

    def run(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "sglang-constraints-check", "--files", *files],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=900)

    failing = run("serve.sh", "ok.sh")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "serve.sh:1:" in failing.stdout and "only supported for decode side" in failing.stdout
    passing = run("ok.sh")  # the hook's environment is installed once, then reused
    assert passing.returncode == 0, passing.stdout + passing.stderr


def test_messages_show_the_launch_s_values_where_it_decides_them(ruleset) -> None:
    """`{self.page_size}` reads one field: filled with what it holds where the guard runs, when the
    launch decides it; a placeholder over an expression, or a field with two possible values, stays."""
    decided = check(ruleset, ["--model-path", "m", "--page-size", "65"], assume={"get_platform().is_hip": False})
    (page,) = [f for f in decided.definite if f.rule.message == PAGE]
    assert page.text == "page_size 65 is larger than 64."
    document = report_json(decided, lambda rule: [])
    (entry,) = [e for e in document["errors"] if e["id"] == page.rule.id]
    assert (entry["message"], entry["template"]) == ("page_size 65 is larger than 64.", PAGE)
    # The platform may make it 128 first (an adjustment on ROCm): two values, the template stays.
    undecided = check(ruleset, ["--model-path", "m", "--page-size", "65"])
    assert [f.text for f in undecided.findings if f.rule.message == PAGE] == [PAGE]
    world = check(ruleset, ["--model-path", "m", "--tp-size", "4", "--dp-size", "4"])
    assert [f.text for f in world.definite if f.rule.message == WORLD] == [WORLD]


PLACEHOLDER_PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
from typing import Optional

SUPPORTED = ("flashinfer", "fa3")


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    attention_backend: Optional[str] = None
    transport: str = "tcp"
    page_size: int = 1

    def __post_init__(self):
        self._check_transport()
        self._check_backend()
        self._check_features()

    def _check_transport(self):
        sysfs_path = "/sys/class/infiniband"
        mode = self.transport
        if mode == "ib":
            raise ValueError(f"InfiniBand sysfs path not found: {sysfs_path}.")
        if mode == "rdma":
            raise ValueError(f"transport {mode} is not supported.")

    def _check_backend(self):
        backend = self.attention_backend
        allowed = ("flashinfer", "fa3")
        if self.page_size > 1 and backend not in allowed:
            raise ValueError(f"page_size > 1 needs one of {allowed}; got {backend} ({backend!r}).")

    def _check_features(self):
        owner = "this server"
        unsupported = (
            (self.transport == "ipc", "does not support --transport ipc"),
            (self.page_size > 64, "does not support pages over 64"),
        )
        for is_unsupported, reason in unsupported:
            if is_unsupported:
                raise ValueError(f"{owner} {reason}.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--attention-backend", type=str, default=ServerArgs.attention_backend)
        parser.add_argument("--transport", type=str, default=ServerArgs.transport)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
''',
}


def test_placeholders_of_locals_show_what_they_hold(tmp_path: Path) -> None:
    """A local bound to a literal or read from a flag fills its placeholder as SGLang prints it (a
    tuple as a tuple, `!r` as the value's repr)."""
    from tests.packages import package_ruleset

    ruleset = package_ruleset(tmp_path, PLACEHOLDER_PACKAGE)
    transport = check(ruleset, ["--transport", "ib"])
    assert [f.text for f in transport.definite] == ["InfiniBand sysfs path not found: /sys/class/infiniband."]
    assert [f.text for f in check(ruleset, ["--transport", "rdma"]).definite] == ["transport rdma is not supported."]
    backend = check(ruleset, ["--page-size", "16", "--attention-backend", "triton"])
    assert [f.text for f in backend.definite] == [
        "page_size > 1 needs one of ('flashinfer', 'fa3'); got triton ('triton')."]
    template = next(r.message for r in ruleset.rules if r.message.startswith("page_size > 1"))
    assert template == "page_size > 1 needs one of {allowed}; got {backend} ({backend!r})."  # as the source writes it


def test_a_placeholder_of_an_unrolled_loop_shows_the_item_that_raises(tmp_path: Path) -> None:
    """`for is_unsupported, reason in unsupported: if is_unsupported: raise ValueError(f"... {reason}.")`
    is one guard over every item; `{reason}` holds the first raising item's own text, as Python
    raises it (0.5.23's LoRA with speculative decoding names `--speculative-adaptive` for that flag,
    the ragged verify mode for its own); `{owner}`, the same for every item, is one value."""
    from extractor.core.model import Choices
    from tests.packages import package_ruleset

    ruleset = package_ruleset(tmp_path, PLACEHOLDER_PACKAGE)
    [rule] = [r for r in ruleset.rules if r.message == "{owner} {reason}."]
    values = dict(rule.placeholders)
    assert isinstance(values["reason"], Choices) and len(values["reason"].cases) == 2
    assert values["owner"].value == "this server"
    for argv, said in ((["--transport", "ipc"], "this server does not support --transport ipc."),
                       (["--page-size", "128", "--attention-backend", "fa3"], "this server does not support pages over 64."),
                       # both items hold: the loop raises at the first
                       (["--transport", "ipc", "--page-size", "128", "--attention-backend", "fa3"],
                        "this server does not support --transport ipc.")):
        assert [f.text for f in check(ruleset, argv).definite] == [said], argv


def test_a_page_shows_what_a_literal_placeholder_holds(tmp_path: Path) -> None:
    """What holds for every launch is on the page too; what the launch decides stays a placeholder."""
    from extractor.products.site.pages import page
    from extractor.products.check.words import Flags
    from tests.packages import package_ruleset

    ruleset = package_ruleset(tmp_path, PLACEHOLDER_PACKAGE)
    rules = {r.message: r for r in ruleset.rules}
    sysfs = page(rules["InfiniBand sysfs path not found: {sysfs_path}."], Flags(ruleset.flags), {}, {})
    assert "InfiniBand sysfs path not found: /sys/class/infiniband." in sysfs and "filled in at run time" not in sysfs
    mode = page(rules["transport {mode} is not supported."], Flags(ruleset.flags), {}, {})
    assert "transport {mode} is not supported." in mode and "filled in at run time" in mode


def test_a_fix_that_removes_a_flag_takes_its_negative_value_with_it(ruleset) -> None:
    """`--page-size -1` is one flag and its value, as argparse reads it: removing the flag leaves no
    stray `-1` (make verify met 12 page examples whose fixed command argparse rejected)."""
    from extractor.products.check.words import Edit, apply_way

    argv = ["--model-path", "m", "--page-size", "-1", "--tp-size", "2"]
    assert apply_way(argv, (Edit("remove", "--page-size"),), ruleset.catalog) == ["--model-path", "m", "--tp-size", "2"]
    assert apply_way(argv, (Edit("pass", "--page-size", "16"),), ruleset.catalog) == \
        ["--model-path", "m", "--tp-size", "2", "--page-size", "16"]


@pytest.mark.network
def test_a_message_less_assert_over_a_derived_size_gets_a_fix_that_clears_it(real) -> None:
    """`assert cfg.tp_size % cfg.attn_dp_size == 0` reads the size SGLang derives from `--dp` under
    `--enable-dp-attention`: nothing read off the condition edits a flag the command has; the search
    over the command's own flags finds the nearest sizes, each checked (the launch then passes)."""
    from extractor.logic.platforms import find_platform
    from extractor.products.check.fixes import checked_fixes
    from extractor.products.check.words import by_function
    from extractor.products.check.words import Flags

    argv = ["--model-path", "org/model", "--tp", "8", "--enable-dp-attention", "--dp", "3"]
    platform = find_platform("H100")
    report = check(real, argv, platform=platform)
    rule = report.definite[0].rule
    assert rule.location.file.endswith("parallel_hook.py") and rule.message.startswith("AssertionError without")
    fixes = checked_fixes(real, rule, argv, Flags(real.flags), by_function(real.rules))
    assert [f.text for f in fixes][:2] == ["pass --dp-size 4", "pass --dp-size 2"]  # the nearest first
    for fix in fixes:
        assert fix.keeps and not check(real, list(fix.argv), platform=platform).definite, fix


ENVIRONMENT_PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
import os


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    page_size: int = 1

    def __post_init__(self):
        if os.environ.get("SGLANG_LEGACY_KERNELS") == "1":
            raise ValueError("SGLANG_LEGACY_KERNELS is no longer supported.")
        if os.environ.get("SGLANG_FAST") == "1" and self.page_size > 1:
            raise ValueError("SGLANG_FAST takes page size 1.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
''',
}


def test_an_error_no_flag_avoids_says_what_decides_it(tmp_path: Path, capsys) -> None:
    """Proven only when the trigger holds with every flag the user sets unknown: then `check` says so
    and names what decides it (here the environment); an error a flag clears gets its fix instead."""
    from extractor.products.check.fixes import beyond_flags
    from tests.packages import write_package

    tree = path_tree(write_package(tmp_path / "package", ENVIRONMENT_PACKAGE))
    extraction = extract(tree)
    ruleset = ruleset_of(extraction, tree)
    legacy = check(ruleset, ["--page-size", "16"], env={"SGLANG_LEGACY_KERNELS": "1"})
    rule = legacy.definite[0].rule
    found = beyond_flags(ruleset, rule, ["--page-size", "16"], env={"SGLANG_LEGACY_KERNELS": "1"})
    assert found is not None and found.deciders == ("environment variable SGLANG_LEGACY_KERNELS",)
    fast = check(ruleset, ["--page-size", "16"], env={"SGLANG_FAST": "1"})
    assert beyond_flags(ruleset, fast.definite[0].rule, ["--page-size", "16"], env={"SGLANG_FAST": "1"}) is None

    folder = tmp_path / "rules"
    write_documents(folder, {"rules.json": (rules_document(extraction), "rules.schema.json"),
                             "flags.json": (flags_document(extraction), "flags.schema.json")})
    assert main(["check", "--rules", str(folder / "rules.json"), "--env", "SGLANG_LEGACY_KERNELS=1", "--",
                 "--page-size", "16"]) == 1
    out = capsys.readouterr().out
    assert "no change of flags avoids it here; it depends on environment variable SGLANG_LEGACY_KERNELS" in out
    assert main(["check", "--rules", str(folder / "rules.json"), "--format", "json", "--env", "SGLANG_FAST=1", "--",
                 "--page-size", "16"]) == 1
    error = json.loads(capsys.readouterr().out)["errors"][0]
    assert error["fix"] and "beyond_flags" not in error


# deepseek-ai/DeepSeek-V3's config.json, the fields SGLang's checks read (a fact of the checkpoint).
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840, "moe_intermediate_size": 2048,
    "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128, "num_nextn_predict_layers": 1,
    "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "rope_theta": 10000,
    "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                     "original_max_position_embeddings": 4096, "type": "yarn"},
    "topk_group": 4, "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "v_head_dim": 128, "vocab_size": 129280,
    "first_k_dense_replace": 3, "moe_layer_freq": 1, "norm_topk_prob": True, "routed_scaling_factor": 2.5,
    "scoring_func": "sigmoid", "tie_word_embeddings": False, "rms_norm_eps": 1e-06, "hidden_act": "silu",
}


@pytest.mark.network
def test_a_fix_leaving_an_error_the_command_had_is_still_a_fix(tmp_path, capsys) -> None:
    """On a B200, DeepSeek-V3 with --context-length 1000000 and EAGLE top-k 4 stops at the context
    length (the model derives 163840) and would next stop at the speculative backend check: setting
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 clears the first and sets off nothing the command did
    not have; the second keeps its own fix. The message shows the launch's values."""
    model = tmp_path / "deepseek-v3"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(DEEPSEEK_V3), encoding="utf-8")
    argv = ["check", "--release", "0.5.23", "--platform", "B200", "--", "--model-path", str(model),
            "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2", "--speculative-eagle-topk", "4",
            "--speculative-num-draft-tokens", "4", "--context-length", "1000000"]
    assert main(argv) == 1
    lines = capsys.readouterr().out.splitlines()
    first = lines.index(next(line for line in lines if "model_config.py:1314" in line))
    assert "context_length (1000000) is greater than the derived context_length (163840)." in lines[first]
    assert lines[first + 1:first + 3] == ["  the launch stops here", "  fix: set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"]
    assert any("speculative_hook.py" in line for line in lines[first + 3:])


# openai/gpt-oss-20b's config.json, the fields SGLang's checks read: an MXFP4 checkpoint.
GPT_OSS_20B = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "head_dim": 64, "hidden_size": 2880,
    "intermediate_size": 2880, "layer_types": ["sliding_attention", "full_attention"] * 12,
    "max_position_embeddings": 131072, "num_attention_heads": 64, "num_experts_per_tok": 4,
    "experts_per_token": 4, "num_hidden_layers": 24, "num_key_value_heads": 8, "num_local_experts": 32,
    "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]},
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
                     "rope_type": "yarn", "truncate": False},
    "rope_theta": 150000, "sliding_window": 128, "tie_word_embeddings": False, "vocab_size": 201088,
    "rms_norm_eps": 1e-05, "hidden_act": "silu", "attention_bias": True, "swiglu_limit": 7.0,
}


@pytest.mark.network
def test_a_fix_may_take_away_what_its_edit_conflicts_with(tmp_path, capsys) -> None:
    """gpt-oss on a CPU needs SGLang's online requantization (`--quantization quark_mxfp4`), which the
    flashinfer_trtllm MoE runner the command asks for does not take: the fix passes the one and
    removes the other, and says why."""
    model = tmp_path / "gpt-oss-20b"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(GPT_OSS_20B), encoding="utf-8")
    assert main(["check", "--release", "0.5.23", "--platform", "cpu", "--", "--device", "cpu", "--model-path", str(model),
                 "--tp", "2", "--moe-runner-backend", "flashinfer_trtllm"]) == 1
    out = capsys.readouterr().out
    assert ("  fix: pass --quantization quark_mxfp4 and remove --moe-runner-backend (removing --moe-runner-backend "
            "clears moe_hook.py:124)") in out.splitlines()


# ---- a Hub id the Hugging Face cache holds ----------------------------------------------------------------


def _hub_snapshot(hub: Path, model_id: str, config: dict, ref: str = "main", commit: str = "a" * 40) -> Path:
    """A download of `model_id` laid out as huggingface_hub keeps it: refs/<ref> names the commit whose
    snapshot folder holds config.json."""
    repo = hub / ("models--" + model_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / ref).write_text(commit, encoding="utf-8")
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True, exist_ok=True)
    (snapshot / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return snapshot / "config.json"


@pytest.mark.network
def test_a_hub_id_the_hugging_face_cache_holds_is_checked_with_its_config(tmp_path, capsys, monkeypatch) -> None:
    """A launch naming a Hub id reads its config.json from the Hugging Face cache, as SGLang on this
    machine would: the answer is `--model-config` of that file's, with a note saying where it came from;
    another revision reads its own snapshot; a ModelScope launch, or an id the cache lacks, reads none."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("SGLANG_USE_MODELSCOPE", raising=False)
    launch = ["--tp", "8", "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2"]
    base = ["check", "--release", "0.5.23", "--platform", "H100"]

    def run(*argv: str) -> tuple[int, list[str]]:
        code = main([*base, *argv])
        return code, capsys.readouterr().out.splitlines()

    nothing = run("--", "--model-path", "org/deepseek", *launch)
    config = _hub_snapshot(tmp_path / "hub", "org/deepseek", DEEPSEEK_V3)
    given = run("--model-config", str(config), "--", "--model-path", "org/deepseek", *launch)
    assert given != nothing  # the model's facts decide part of this launch
    code, lines = run("--", "--model-path", "org/deepseek", *launch)
    note = f"note: the model's config.json from the Hugging Face cache: {config}"
    assert lines[-2] == note and (code, lines[:-2] + lines[-1:]) == given
    assert run("--", "--model-path", "org/other", *launch) == nothing  # no download of it here
    assert run("--env", "SGLANG_USE_MODELSCOPE=1", "--", "--model-path", "org/deepseek", *launch)[1][-2] != note

    llama = _hub_snapshot(tmp_path / "hub", "org/deepseek", {"architectures": ["LlamaForCausalLM"],
                                                               "model_type": "llama"}, ref="v2", commit="b" * 40)
    code, lines = run("--", "--model-path", "org/deepseek", "--revision", "v2", *launch)
    assert lines[-2] == f"note: the model's config.json from the Hugging Face cache: {llama}"
    assert run("--", "--model-path", "org/deepseek", "--revision", "c" * 40, *launch)[1][-2] != lines[-2]

    assert main([*base, "--format", "json", "--", "--model-path", "org/deepseek", *launch]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["model_config"] == str(config)


def test_a_line_naming_a_hub_id_the_cache_holds_is_evaluated_every_time(tmp_path, monkeypatch) -> None:
    """The cache's config.json may change between two checks: such a line's answer is never kept."""
    from extractor.products.reuse.answers import reads_only_its_words

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    argv = ["--model-path", "org/model", "--tp", "2"]
    assert reads_only_its_words(argv)
    _hub_snapshot(tmp_path / "hf" / "hub", "org/model", {"architectures": ["LlamaForCausalLM"]})
    assert not reads_only_its_words(argv) and not reads_only_its_words(["--model-path=org/model"])
    assert reads_only_its_words(argv, {"HF_HUB_CACHE": str(tmp_path / "elsewhere")})


CONSTANT_CALLS_PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses

AUDITED = frozenset({"triton", "fa3", "flashinfer"})
ORDERED = ["b_backend", "a_backend"]
REGISTRY = {}


def register(name):
    def wrap(fn):
        REGISTRY[name] = fn
        return fn
    return wrap


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    attention_backend: str = "triton"
    sampling_backend: str = "pytorch"
    grammar_backend: str = "a_backend"
    hook: str = "a"

    def __post_init__(self):
        allowed = {"pytorch", "flashinfer"}
        modalities = {"image", "video", "audio"}
        if self.attention_backend not in AUDITED:
            raise ValueError(f"attention backend must be one of {sorted(AUDITED)}; {len(AUDITED)} audited.")
        if self.sampling_backend not in allowed:
            raise ValueError(f"sampling backend: one of {', '.join(sorted(allowed))}, not {list(modalities)}.")
        if self.grammar_backend not in ORDERED:
            raise ValueError(f"grammar backend in {list(ORDERED)} or {tuple(ORDERED)}: {'/'.join(ORDERED)}.")
        if self.hook == "x":
            raise ValueError(f"hook must be one of {sorted(REGISTRY)}.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--attention-backend", type=str, default=ServerArgs.attention_backend)
        parser.add_argument("--sampling-backend", type=str, default=ServerArgs.sampling_backend)
        parser.add_argument("--grammar-backend", type=str, default=ServerArgs.grammar_backend)
        parser.add_argument("--hook", type=str, default=ServerArgs.hook)
''',
}


def test_a_placeholder_calling_a_constant_shows_what_python_prints(tmp_path: Path) -> None:
    """`{sorted(AUDITED)}`, `{len(AUDITED)}`, `{', '.join(sorted(allowed))}` of a constant print one text,
    on the launch and on the page (0.5.23's `--enable-layernorm-sp` names its architectures so); a
    set listed unsorted (`{list(modalities)}`, in another order each run) and a registry filled in
    place (`{sorted(REGISTRY)}`) stay as written."""
    from extractor.products.check.words import Flags
    from extractor.products.site.pages import page
    from tests.packages import package_ruleset

    ruleset = package_ruleset(tmp_path, CONSTANT_CALLS_PACKAGE)
    said = {argv[0]: [f.text for f in check(ruleset, argv).definite]
            for argv in (["--attention-backend", "x"], ["--sampling-backend", "x"], ["--grammar-backend", "x"],
                         ["--hook", "x"])}
    assert said == {
        "--attention-backend": ["attention backend must be one of ['fa3', 'flashinfer', 'triton']; 3 audited."],
        "--sampling-backend": ["sampling backend: one of flashinfer, pytorch, not {list(modalities)}."],
        "--grammar-backend": ["grammar backend in ['b_backend', 'a_backend'] or ('b_backend', 'a_backend'): "
                              "b_backend/a_backend."],
        "--hook": ["hook must be one of {sorted(REGISTRY)}."],
    }
    rule = next(r for r in ruleset.rules if r.message.startswith("attention backend"))
    assert "attention backend must be one of ['fa3', 'flashinfer', 'triton']; 3 audited." in \
        page(rule, Flags(ruleset.flags), {}, {})
