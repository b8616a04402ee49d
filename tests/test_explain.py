"""Explaining a pasted error line: message templates as patterns, placeholder values, ranking, no match."""

from __future__ import annotations

import pytest

from extractor.cli import main
from extractor.core.model import FALSE, Location, Rule, RuleKind, Snippet
from extractor.products.site.explain import candidates, explain_text, match, template
from extractor.products.extraction.extraction import extract
from extractor.products.extraction.output import flags_document, rules_document, write_documents
from extractor.sources.trees import path_tree

from .conftest import FIXTURES

SOURCE = FIXTURES / "render_basic" / "src"


def rule(message: str, static: bool = False, rule_id: str = "r1", line: int = 1, exception: str = "ValueError") -> Rule:
    return Rule(rule_id, RuleKind.RAISE, exception, message, static, Location("f.py", line, line), "f",
                Snippet(line, line, "raise"), FALSE)


@pytest.fixture(scope="module")
def rules_file(tmp_path_factory):
    ex = extract(path_tree(SOURCE))
    folder = tmp_path_factory.mktemp("rules")
    write_documents(folder, {"rules.json": (rules_document(ex), "rules.schema.json"),
                             "flags.json": (flags_document(ex), "flags.schema.json")})
    return folder / "rules.json"


@pytest.mark.parametrize(
    "message, placeholders, literal",
    [
        ("--dcp-size {dcp_size} must divide --tp-size {tp_size}.", ("dcp_size", "tp_size"),
         "--dcp-size  must divide --tp-size ."),
        ("allowed: {ALLOWED[phase]} got {type(x).__name__}", ("ALLOWED[phase]", "type(x).__name__"), "allowed:  got "),
        ("nested {f({'a': 1})} end", ("f({'a': 1})",), "nested  end"),
        ("width {x:{w}} and a lone } brace", ("x:{w}",), "width  and a lone } brace"),
        ("{a}{b}", ("a", "b"), ""),
        # No `}` closes the second `{`: the rest is text, not a placeholder that would match anything.
        ("--tp {tp} left {open", ("tp",), "--tp  left {open"),
    ],
)
def test_template(message, placeholders, literal) -> None:
    tpl = template(rule(message))
    assert tpl.placeholders == placeholders and tpl.literal == literal


def test_static_message_keeps_braces() -> None:
    assert template(rule("use {} here", static=True)).placeholders == ()


@pytest.mark.parametrize(
    "text",
    [
        "--dcp-size 3 must divide --tp-size 2.",
        "ValueError: --dcp-size 3 must divide --tp-size 2.",
        "[2026-01-01 10:00:00 TP0] Scheduler hit an exception: Traceback ...\nValueError: --dcp-size 3 must divide\n"
        "   --tp-size 2.\n[2026-01-01 10:00:01] Shutting down",
    ],
)
def test_match_fills_placeholders(text) -> None:
    found = match(text, rule("--dcp-size {dcp_size} must divide --tp-size {tp_size}."))
    assert found is not None
    score, exact, values = found
    assert exact and values == {"dcp_size": "3", "tp_size": "2"}


def test_no_match_and_trivial_templates() -> None:
    assert match("something else entirely", rule("--dcp-size {dcp_size} must divide --tp-size {tp_size}.")) is None
    assert match("anything", rule("", static=True)) is None  # a bare re-raise matches nothing
    assert match("anything", rule("{message}")) is None


def test_partial_fragment() -> None:
    found = match("only supported for decode side", rule("The argument x is only supported for decode side.", True))
    assert found is not None and found[1] is False


def test_ranking_lists_every_candidate() -> None:
    general = rule("{name} must be positive", rule_id="a", line=1)
    specific = rule("--tp-size {value} must be positive", rule_id="b", line=2)
    found = candidates("ValueError: --tp-size -1 must be positive", [("1.0", [general, specific])])
    assert [c.rule.id for c in found] == ["b", "a"]  # more fixed text first
    assert found[0].values == {"value": "-1"}


def test_releases_listed_ties_named_and_all_shown_in_full() -> None:
    one = rule("The mode {m} is bad.", rule_id="x", line=1)
    other = rule("The mode {m} is bad.", rule_id="y", line=9)
    found = candidates("The mode z is bad.", [("2.0", [one]), ("1.0", [one, other])])
    assert found[0].releases == ["2.0", "1.0"] and found[0].label == "2.0"
    text, code = explain_text("The mode z is bad.", [("2.0", [one]), ("1.0", [one, other])], lambda c: f"PAGE {c.rule.id}")
    assert code == 0 and "2 rules match" in text and "PAGE x" in text and "PAGE y" not in text
    assert "this message exists in: 2.0, 1.0" in text and "showing the first" in text
    text, code = explain_text("The mode z is bad.", [("2.0", [one]), ("1.0", [one, other])], lambda c: f"PAGE {c.rule.id}",
                              full=True)
    assert "PAGE x" in text and "PAGE y" in text  # every tie's page
    assert "Not in 2.0, the newest release searched: removed or reworded after 1.0." in text  # y's summary


def test_nothing_matches() -> None:
    text, code = explain_text("all good", [("1.0", [rule("The mode {m} is bad.")])], lambda c: "")
    assert code == 1 and text.startswith("No rule's message matches")


def test_cli(rules_file, capsys) -> None:
    code = main(["explain", "--rules", str(rules_file), "ValueError: page_size 128 is larger than 64."])
    out = capsys.readouterr().out
    assert code == 0
    assert "{self.page_size} = 128" in out and "\nWhat it means\n" in out
    assert "## " not in out and "`" not in out  # a terminal's text, not Markdown
    message = out.split("\nError message\n", 1)[1].split("\n\n", 1)[0]
    assert "128" in message and "{" not in message  # the pasted values in the page's message
    assert main(["explain", "--rules", str(rules_file), "the server started fine"]) == 1
    assert "No rule's message matches" in capsys.readouterr().out


def test_cli_on_an_empty_cache_searches_the_shipped_releases(tmp_path, monkeypatch, capsys) -> None:
    """A fresh machine: `explain` searches the releases shipped with the tool, downloading nothing."""
    from extractor.products.reuse.shipped import shipped_releases

    monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE", str(tmp_path))
    assert main(["explain", "ValueError: --dcp-size 3 must divide --tp-size 2."]) == 0
    out = capsys.readouterr().out
    assert f"this message exists in: {shipped_releases()[0]}" in out and "{dcp_size} = 3" in out
    assert not (tmp_path / "trees").exists() and not (tmp_path / "archives").exists()
    monkeypatch.setattr("extractor.products.reuse.shipped.shipped_releases", lambda: [])
    assert main(["explain", "some error"]) == 2
    assert "no release shipped or in the cache" in capsys.readouterr().err


@pytest.mark.network
def test_real_release(capsys) -> None:
    text = ("[2026-08-28 10:00:00] ValueError: The argument disaggregation-decode-enable-offload-kvcache is only "
            "supported for decode side.")
    assert main(["explain", "--release", "0.5.23", text]) == 0
    out = capsys.readouterr().out
    assert "this message exists in: 0.5.23" in out and "Pass --disaggregation-mode decode" in out


@pytest.mark.network
def test_explain_of_the_seed_is_its_page_checked_and_fits_a_screen(capsys) -> None:
    """The seed's explain shows the solutions its page shows, checked on the example, the example fix
    that keeps the flag (a decode server with its storage backend), in a screen's lines."""
    from extractor.products.check.fixes import example_fix
    from extractor.products.check.words import by_function
    from extractor.products.site.pages import page
    from extractor.products.reuse.rulesets import release_rules
    from extractor.products.check.words import Flags

    seed = "The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side."
    assert main(["explain", "--release", "0.5.23", "--site-url", "https://errors.example/", f"ValueError: {seed}"]) == 0
    out = capsys.readouterr().out
    ruleset = release_rules("0.5.23")
    rule = next(r for r in ruleset.rules if r.message == seed)
    fixes = example_fix(ruleset, rule, Flags(ruleset.flags), by_function(ruleset.rules))
    assert len(fixes) >= 2 and any(f.keeps for f in fixes)
    markdown = page(rule, Flags(ruleset.flags), ruleset.source, ruleset.by_id, fixes=fixes)
    assert "Each one checked on the example command below" in markdown and "Each one checked" in out
    for i, fix in enumerate(fixes, 1):  # the page's solutions, in its order, as plain text
        assert f"  {i}. {fix.text[:1].upper()}{fix.text[1:40]}" in out
    kept = next(f for f in fixes if f.keeps)
    assert "--disaggregation-mode decode" in kept.text and " ".join(kept.argv) in out.replace("\n", " ")
    assert f"Page: https://errors.example/errors/{rule.id}.html" in out
    lines = out.splitlines()
    assert len(lines) <= 40 and max(map(len, lines)) <= 200, (len(lines), out)  # commands may run past 100
    assert "`" not in out and "\\_" not in out and "## " not in out


@pytest.mark.network
def test_a_real_message_less_assert_traceback_finds_its_rule(capsys) -> None:
    traceback = ('Traceback (most recent call last):\n'
                 '  File "/opt/venv/lib/python3.12/site-packages/sglang/launch_server.py", line 30, in <module>\n'
                 '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/arg_groups/parallel_hook.py", line 326, '
                 'in handle_parallelism\n'
                 '    assert cfg.tp_size % cfg.attn_dp_size == 0\n'
                 'AssertionError\n')
    assert main(["explain", "--release", "0.5.23", traceback]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Raised at rule ") and "sglang/srt/arg_groups/parallel_hook.py:326" in out.splitlines()[0]
    assert "\nWhat it means\n" in out


def test_a_traceback_names_its_rule_by_the_innermost_sglang_frame() -> None:
    """A message-less assert matches no message; the traceback's innermost SGLang frame names it, in
    the release where that place is the rule's."""
    bare = Rule("a1", RuleKind.ASSERT, "AssertionError", "", True, Location("sglang/srt/arg_groups/parallel_hook.py",
                                                                             326, 327), "f", Snippet(326, 327, "assert"), FALSE)
    other = rule("--dcp-size {dcp_size} must divide --tp-size {tp_size}.", rule_id="r2", line=40)
    traceback = ('Traceback (most recent call last):\n'
                 '  File "/usr/lib/python3/site-packages/sglang/srt/server_args.py", line 900, in resolve_once\n'
                 '    run_resolution_pipeline(self)\n'
                 '  File "/usr/lib/python3/site-packages/sglang/srt/arg_groups/parallel_hook.py", line 327, in check\n'
                 '    assert cfg.tp_size % cfg.pp_size == 0\n'
                 'AssertionError\n')
    found = candidates(traceback, [("0.5.23", [other, bare]), ("0.5.22", [other])])
    assert [c.rule.id for c in found] == ["a1"] and found[0].releases == ["0.5.23"]
    answer, code = explain_text(traceback, [("0.5.23", [other, bare])], lambda c: "PAGE")
    assert code == 0 and answer.startswith("Raised at rule a1 at sglang/srt/arg_groups/parallel_hook.py:326")


def test_a_text_explained_before_is_answered_without_reading_a_rule_set(rules_file, capsys, monkeypatch) -> None:
    """The answer kept for the same text on the same rule sets, code and options (`reuse.answers`);
    another option (the whole page) is another answer."""
    from extractor.commands import explain as command

    argv = ["explain", "--rules", str(rules_file), "ValueError: page_size 128 is larger than 64."]
    first = main(argv), capsys.readouterr().out
    nothing = main([*argv[:3], "the server started fine"]), capsys.readouterr().out

    def not_read(*args):
        raise AssertionError("a rule set was read")

    monkeypatch.setattr(command, "_rule_sets", not_read)
    assert (main(argv), capsys.readouterr().out) == first
    assert (main([*argv[:3], "the server started fine"]), capsys.readouterr().out) == nothing == (1, nothing[1])
    assert main([*argv[:3], "--full", argv[3]]) != 0  # the CLI says what went wrong: an internal error
    assert "a rule set was read" in capsys.readouterr().err


def test_a_guard_s_fixes_on_its_example_are_kept_beside_the_index(rules_file, capsys, monkeypatch) -> None:
    """What `explain` shows under Solutions depends on the rule set and the code, not on the text
    pasted: the first explain works the guard's fixes out on its example and keeps them beside the
    index; the next, even `--fresh`, reads them (the example is not evaluated again) and shows the same."""
    from extractor.products.check import fixes

    argv = ["explain", "--rules", str(rules_file), "--fresh", "ValueError: NGRAM needs at least two draft tokens."]
    first = main(argv), capsys.readouterr().out
    assert first[0] == 0 and "Each one checked" in first[1]

    def worked_out_again(*args, **kwargs):
        raise AssertionError("the example's fixes were worked out again")

    monkeypatch.setattr(fixes, "example_fix", worked_out_again)
    assert (main(argv), capsys.readouterr().out) == first
    # Another text naming the same guard (a traceback's last line) reads them too.
    assert main([*argv[:4], "Traceback (most recent call last):\nValueError: NGRAM needs at least two draft tokens."]) == 0
    assert "Each one checked" in capsys.readouterr().out


def test_the_first_line_of_a_message_of_several_paragraphs_matches_it() -> None:
    """A log shows a long message's first line, and a reader pastes that: transformers' message for a
    model type it does not know goes on for three more paragraphs. A head of the message up to one of
    its own line breaks matches, partly, with its values; a cut inside a line matches nothing."""
    long = rule("The checkpoint has model type `{model_type}` but Transformers does not recognize it.\n\n"
                "You can update Transformers with `pip install --upgrade transformers`. If this does not work, "
                "install it from source.")
    pasted = "ValueError: The checkpoint has model type `gemma4` but Transformers does not recognize it."
    assert match(pasted, long) == (len("The checkpoint has model type `` but Transformers does not recognize it."),
                                   False, {"model_type": "gemma4"})
    assert match("The checkpoint has model type `gemma4` but Transformers", long) is None
    whole = pasted + "\n\nYou can update Transformers with `pip install --upgrade transformers`. If this does " \
                     "not work, install it from source."
    assert match(whole, long)[1:] == (True, {"model_type": "gemma4"})


def test_a_message_that_starts_with_a_placeholder_takes_nothing_the_log_shows_before_it() -> None:
    """json's `{msg}: line {lineno} column {colno} (char {pos})`: the exception's name and the log
    lines before are no part of `{msg}`."""
    json_error = rule("{msg}: line {lineno} column {colno} (char {pos})", exception="json.JSONDecodeError")
    pasted = "[2026-12-01 10:00:01] Traceback ...\njson.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    assert match(pasted, json_error)[2] == {"msg": "Expecting value", "lineno": "1", "colno": "1", "pos": "0"}
