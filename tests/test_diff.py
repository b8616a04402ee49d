"""Tests for extractor.diff: matching, classification, reports, exit codes, a git history and real releases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from extractor import cli
from extractor.core.serialize import dumps
from extractor.core.model import And, Atom, Const, Flag, Formula, Lit, Location, Not, Or, Rule, RuleKind, Snippet, Term, TermKind
from extractor.logic.solver import implies_exact
from extractor.products.history import diff
from extractor.products.history import sides
from extractor.core.cache import read_pickled
from extractor.products.history.diff import compare_conditions, find_changes, match_rules, parse_kinds
from extractor.products.extraction.output import load_schema, validate
from extractor.products.history.sides import Snapshot

# ---- synthetic rules -----------------------------------------------------------------------------


def term(name: str) -> Term:
    return Term(TermKind.FIELD, name, name, (name,))


def cmp(name: str, op: str, value: object) -> Atom:
    return Atom(term(name), op, Lit(value))


def rule(message: str, condition: Formula, *, file: str = "sglang/srt/server_args.py", line: int = 10,
         function: str = "ServerArgs._handle_x", kind: RuleKind = RuleKind.RAISE, exception: str | None = "ValueError",
         rule_id: str | None = None, target: str | None = None, value: str | None = None) -> Rule:
    return Rule(
        id=rule_id or f"{abs(hash((message, file, function))) % 16**16:016x}",
        kind=kind, exception=exception, message=message, message_static=True,
        location=Location(file, line, line), function=function, snippet=Snippet(line, line, ""),
        condition=condition, trigger=condition, reachable=True, target=target, value=value,
    )


def flag(name: str, default: str | None = None, choices: tuple | None = None, action: str | None = None) -> Flag:
    return Flag(name, ("--" + name.replace("_", "-"),), default=default, choices=choices, action=action,
                default_value=None if default in (None, "None") else default.strip('"'),
                default_is_literal=default is not None, file="sglang/srt/server_args.py", line=1)


def snapshot(label: str, rules: list[Rule], flags: list[Flag] = ()) -> Snapshot:
    return Snapshot(label, {"kind": "rules", "label": label}, tuple(rules), tuple(flags))


MODE = ("null", "prefill", "decode")

# (old condition, new condition, domains, expected): tightened = more launches rejected.
CLASSIFICATIONS = [
    pytest.param(cmp("x", ">", 2), cmp("x", ">", 1), None, "tightened", id="lower-bound-lowered"),
    pytest.param(cmp("x", ">", 1), cmp("x", ">", 2), None, "relaxed", id="lower-bound-raised"),
    pytest.param(cmp("x", ">", 1), cmp("x", ">=", 2), None, "relaxed", id="gt1-vs-ge2-is-not-the-same"),
    pytest.param(cmp("x", ">", 1), cmp("x", ">=", 2), {"x": (1, 2, 3)}, None, id="gt1-vs-ge2-over-ints"),
    # The text changes completely, the condition does not: no change once the choices are known.
    pytest.param(cmp("mode", "!=", "decode"), cmp("mode", "==", "prefill"), {"mode": ("prefill", "decode")}, None,
                 id="ne-vs-eq-two-choices"),
    pytest.param(cmp("mode", "!=", "decode"), cmp("mode", "==", "prefill"), {"mode": MODE}, "relaxed",
                 id="ne-vs-eq-three-choices"),
    pytest.param(cmp("mode", "==", "decode"), cmp("mode", "==", "prefill"), None, "changed", id="disjoint"),
    pytest.param(And((Atom(term("a")), Atom(term("b")))), And((Atom(term("b")), Atom(term("a")))), None, None,
                 id="reordered-and"),
    pytest.param(Not(cmp("x", ">", 2)), cmp("x", "<=", 2), None, None, id="negation-spelled-out"),
    pytest.param(Atom(term("a")), And((Atom(term("a")), Atom(term("b")))), None, "relaxed", id="extra-and-in-if"),
    pytest.param(Atom(term("a")), Or((Atom(term("a")), Atom(term("b")))), None, "tightened", id="extra-or-in-if"),
    # An assert's trigger is its negated test: an extra `and` in the assert rejects more launches.
    pytest.param(Not(cmp("x", ">", 0)), Not(And((cmp("x", ">", 0), cmp("x", "<", 9)))), None, "tightened",
                 id="extra-and-in-assert"),
]


@pytest.mark.parametrize(("old", "new", "domains", "expected"), CLASSIFICATIONS)
def test_classification(old: Formula, new: Formula, domains, expected: str | None) -> None:
    assert compare_conditions(rule("m", old), rule("m", new), "trigger", domains) == expected


def test_platform_spellings_compare_equal() -> None:
    old = Atom(Term(TermKind.PLATFORM, "is_cuda()", "is_cuda()"))
    new = Atom(Term(TermKind.PLATFORM, "get_platform().is_cuda", "get_platform().is_cuda"))
    assert compare_conditions(rule("m", And((old, Atom(term("a"))))), rule("m", And((new, Atom(term("a")))))) is None


def kinds(changes) -> Counter:
    return Counter(c.kind for c in changes)


def test_matching_pairs_reworded_and_moved_guards() -> None:
    old = [
        rule("Decode supports at most four ranks.", cmp("tp_size", ">", 4), rule_id="a" * 16),
        rule("Data parallelism needs the null mode.", cmp("dp_size", ">", 1), rule_id="b" * 16,
             function="ServerArgs._handle_parallel", line=20),
        rule("Gone for good.", Atom(term("old_flag")), rule_id="c" * 16, line=30),
    ]
    new = [
        # Same function, reworded: the id changed with the message.
        rule("Decode instances support at most 4 ranks.", cmp("tp_size", ">", 4), rule_id="d" * 16),
        # Same id (same message), new file and function.
        rule("Data parallelism needs the null mode.", cmp("dp_size", ">", 1), rule_id="b" * 16,
             file="sglang/srt/arg_groups/parallel.py", function="handle_parallel", line=5),
        rule("Brand new.", Atom(term("new_flag")), rule_id="e" * 16, line=40),
    ]
    pairs, removed, added = match_rules(old, new)
    assert sorted((p.old.id[0], p.new.id[0], p.matched_by) for p in pairs) == [
        ("a", "d", "function+message"), ("b", "b", "id")]
    assert [r.id[0] for r in removed] == ["c"] and [r.id[0] for r in added] == ["e"]
    changes = list(find_changes(snapshot("A", old), snapshot("B", new)))
    assert kinds(changes) == Counter({"added": 1, "removed": 1, "moved": 1, "message-changed": 1})


def test_matching_same_message_elsewhere_and_similar_message() -> None:
    old = [rule("Needs --storage with --offload.", Atom(term("offload")), rule_id="1" * 16, function="A.f"),
           rule("Pipeline parallelism needs at least two layers per stage!", cmp("pp_size", ">", 1),
                rule_id="2" * 16, function="A.g")]
    new = [rule("Needs --storage with --offload.", And((Atom(term("offload")), cmp("storage", "is", None))),
                rule_id="3" * 16, function="other_module.check"),
           rule("Pipeline parallelism needs at least 2 layers per stage.", cmp("pp_size", ">", 1),
                rule_id="4" * 16, function="other_module.pp")]
    pairs, removed, added = match_rules(old, new)
    assert not removed and not added
    assert sorted(p.matched_by for p in pairs) == ["message+condition", "similar-message"]


def test_adjustments_pair_only_on_the_same_field() -> None:
    old = [rule("Sets --page-size to 16", Atom(term("cuda")), kind=RuleKind.ADJUSTMENT, exception=None,
                target="page_size", value="16", rule_id="1" * 16)]
    new = [rule("Sets --page-size to 32", Atom(term("cuda")), kind=RuleKind.ADJUSTMENT, exception=None,
                target="page_size", value="32", rule_id="2" * 16),
           rule("Sets --chunk-size to 16", Atom(term("cuda")), kind=RuleKind.ADJUSTMENT, exception=None,
                target="chunk_size", value="16", rule_id="3" * 16)]
    changes = list(find_changes(snapshot("A", old), snapshot("B", new)))
    assert kinds(changes) == Counter({"adjustment-value-changed": 1, "adjustment-added": 1})
    widened = list(find_changes(snapshot("A", old), snapshot("B", [
        rule("Sets --page-size to 16", Or((Atom(term("cuda")), Atom(term("hip")))), kind=RuleKind.ADJUSTMENT,
             exception=None, target="page_size", value="16", rule_id="1" * 16)])))
    assert kinds(widened) == Counter({"adjustment-widened": 1})


def test_flag_changes() -> None:
    old = [flag("mode", '"null"', MODE), flag("tp_size", "1"), flag("gone", "None")]
    new = [flag("mode", '"null"', ("null", "prefill")), flag("tp_size", "2"), flag("fresh", "None")]
    changes = list(find_changes(snapshot("A", [], old), snapshot("B", [], new)))
    assert kinds(changes) == Counter({"flag-added": 1, "flag-removed": 1, "flag-default-changed": 1,
                                      "flag-choices-changed": 1})
    text = {c.kind: c.explain("text") for c in changes}
    assert "removed 'decode'" in text["flag-choices-changed"] and "1 -> 2" in text["flag-default-changed"]


def test_choices_decide_equivalence_in_a_diff() -> None:
    offload = Atom(term("offload"))
    old = [rule("Only prefill may offload.", And((offload, cmp("mode", "!=", "decode"))), rule_id="1" * 16)]
    new = [rule("Only prefill may offload.", And((offload, cmp("mode", "==", "prefill"))), rule_id="1" * 16)]
    two = [flag("mode", '"prefill"', ("prefill", "decode"))]
    assert not list(find_changes(snapshot("A", old, two), snapshot("B", new, two)))
    three = [flag("mode", '"null"', MODE)]
    assert kinds(find_changes(snapshot("A", old, three), snapshot("B", new, three))) == Counter({"relaxed": 1})


def test_explain_and_documents() -> None:
    old = [rule("Data parallelism needs the null mode.", cmp("dp_size", ">", 1), rule_id="b" * 16, line=20)]
    new = [rule("Data parallelism needs the null mode.", cmp("dp_size", ">", 2), rule_id="b" * 16,
                file="sglang/srt/arg_groups/parallel.py", function="handle_parallel", line=5)]
    a, b = snapshot("A", old), snapshot("B", new)
    changes = list(find_changes(a, b))
    assert [c.kind for c in changes] == ["moved", "relaxed"]
    for change in changes:
        line = change.explain("text")
        assert "sglang/srt/server_args.py:20 -> sglang/srt/arg_groups/parallel.py:5" in line
        assert "`sglang/srt/server_args.py:20` -> `sglang/srt/arg_groups/parallel.py:5`" in change.explain("markdown")
    assert "- --dp-size > 1" in changes[1].explain("text") and "+ --dp-size > 2" in changes[1].explain("text")
    with pytest.raises(ValueError):
        changes[0].explain("html")
    document = diff.diff_document(a, b, changes)
    validate(document, "diff.schema.json")
    assert document["summary"]["moved"] == 1 and document["changes"][0]["old"]["line"] == 20
    text = diff.render_text(a, b, changes)
    assert text.splitlines()[0] == "A -> B: 1 moved, 1 relaxed"
    markdown = diff.render_markdown(a, b, changes)
    assert "## Guards moved (1)" in markdown and "## Conditions relaxed (fewer launches rejected) (1)" in markdown
    assert diff.render_text(a, b, []).splitlines()[0] == "A -> B: no changes"


def test_schema_lists_every_kind() -> None:
    schema = load_schema("diff.schema.json")
    assert tuple(schema["$defs"]["summary"]["required"]) == diff.KINDS
    history = load_schema("history.schema.json")
    assert tuple(history["$defs"]["change"]["properties"]["kind"]["enum"]) == diff.KINDS


def test_parse_kinds() -> None:
    assert parse_kinds("added, condition-tightened") == {"added", "tightened"}
    assert parse_kinds("all") == set(diff.KINDS)
    with pytest.raises(ValueError, match="unknown change kind 'bogus'"):
        parse_kinds("added,bogus")


# ---- a git history of synthetic validation code --------------------------------------------------------

SERVER_ARGS = '''"""Made-up server arguments for the diff tests."""

import argparse
import dataclasses
from typing import Optional

from sglang.srt.arg_groups.checks import check_storage
{import_parallel}

@dataclasses.dataclass
class ServerArgs:
    model_path: str
    mode: str = "null"
    tp_size: int = 1
    dp_size: int = 1
    page_size: Optional[int] = None
    storage: Optional[str] = None
    offload: bool = False

    def __post_init__(self):
        self._handle_mode()
        {call_parallel}
        self._handle_page()
        check_storage(self)
        {call_extra}

    def _handle_mode(self):
        if self.mode == "decode" and self.tp_size > 4:
            raise ValueError("{mode_message}")
{parallel_method}
    def _handle_page(self):
        assert self.page_size is None or {page_test}, "page-size must be positive"
{extra_method}
    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--mode", type=str, default=ServerArgs.mode, choices=["null", "prefill", "decode"])
        parser.add_argument("--tp-size", type=int, default=ServerArgs.tp_size)
        parser.add_argument("--dp-size", type=int, default=ServerArgs.dp_size)
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
        parser.add_argument("--storage", type=str, default=ServerArgs.storage)
        parser.add_argument("--offload", action="store_true")
'''

PARALLEL_METHOD = '''
    def _handle_parallel(self):
        if self.dp_size > 1 and self.mode != "null":
            raise ValueError("Data parallelism cannot be combined with disaggregation.")
'''

PARALLEL_MODULE = '''"""Parallelism checks."""


def handle_parallel(server_args):
    if server_args.dp_size > 1 and server_args.mode != "null":
        raise ValueError("Data parallelism cannot be combined with disaggregation.")
'''

EXTRA_METHOD = '''
    def _handle_extra(self):
        if self.tp_size * self.dp_size > 8:
            raise ValueError("At most eight ranks in total.")
'''

CHECKS_MODULE = '''"""Storage checks."""


def check_storage(server_args):
    if {storage_test}:
        raise ValueError("Offloading needs a storage backend.")
'''


def git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def write_state(repo: Path, *, added=False, reworded=False, moved=False, tightened=False, relaxed=False) -> None:
    package = repo / "python" / "sglang"
    (package / "srt" / "arg_groups").mkdir(parents=True, exist_ok=True)
    for folder in (package, package / "srt", package / "srt" / "arg_groups"):
        (folder / "__init__.py").write_text("")
    (package / "srt" / "server_args.py").write_text(SERVER_ARGS.format(
        import_parallel="from sglang.srt.arg_groups.parallel import handle_parallel\n" if moved else "",
        call_parallel="handle_parallel(self)" if moved else "self._handle_parallel()",
        call_extra="self._handle_extra()" if added else "",
        mode_message=("Decode instances support at most 4 tensor-parallel ranks." if reworded
                      else "Decode mode supports at most four tensor-parallel ranks."),
        parallel_method="" if moved else PARALLEL_METHOD,
        page_test="self.page_size > 0 and self.page_size <= 256" if tightened else "self.page_size > 0",
        extra_method=EXTRA_METHOD if added else "",
    ))
    (package / "srt" / "arg_groups" / "checks.py").write_text(CHECKS_MODULE.format(
        storage_test="server_args.offload and server_args.storage is None" if relaxed else "server_args.offload"))
    parallel = package / "srt" / "arg_groups" / "parallel.py"
    if moved:
        parallel.write_text(PARALLEL_MODULE)
    elif parallel.exists():
        parallel.unlink()


STEPS = [  # (commit message, state after it); one README-only commit that touches no read file
    ("base", {}),
    ("add a guard", {"added": True}),
    ("docs", None),
    ("reword a guard", {"added": True, "reworded": True}),
    ("move a guard", {"added": True, "reworded": True, "moved": True}),
    ("tighten a guard", {"added": True, "reworded": True, "moved": True, "tightened": True}),
    ("relax a guard", {"added": True, "reworded": True, "moved": True, "tightened": True, "relaxed": True}),
]


@pytest.fixture(scope="module")
def history_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A throwaway SGLang-shaped repository with one commit per kind of change; returns it and its commits."""
    repo = tmp_path_factory.mktemp("sglang-repo")
    git(repo, "init", "-q")
    commits = []
    for message, state in STEPS:
        if state is None:
            (repo / "README.md").write_text(f"{message}\n")
        else:
            write_state(repo, **state)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", message)
        commits.append(git(repo, "rev-parse", "HEAD"))
    return repo, commits


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, request) -> None:
    # Extractions of the fixture repo stay out of the user cache; real releases keep using it.
    if "network" not in request.keywords:
        monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def run_cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_git_history_diff(history_repo, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    repo, commits = history_repo
    out = tmp_path / "out"
    for rev in (commits[0], commits[-1]):
        code, _, err = run_cli(capsys, "extract", "--git", str(repo), "--rev", rev, "-o", str(out))
        assert code == 0, err
    old_rules, new_rules = (out / rev[:12] / "rules.json" for rev in (commits[0], commits[-1]))
    assert (old_rules.parent / "flags.json").is_file()

    code, text, err = run_cli(capsys, "diff", str(old_rules), str(new_rules), "--format", "json")
    assert code == 1, err
    document = json.loads(text)
    validate(document, "diff.schema.json")
    found = {(c["kind"], c["message"]) for c in document["changes"]}
    assert found == {
        ("added", "At most eight ranks in total."),
        ("message-changed", "Decode instances support at most 4 tensor-parallel ranks."),
        ("moved", "Data parallelism cannot be combined with disaggregation."),
        ("tightened", "page-size must be positive"),
        ("relaxed", "Offloading needs a storage backend."),
    }
    moved = next(c for c in document["changes"] if c["kind"] == "moved")
    assert moved["old"]["file"] == "sglang/srt/server_args.py"
    assert moved["new"]["file"] == "sglang/srt/arg_groups/parallel.py"
    assert (moved["old"]["function"], moved["new"]["function"]) == ("ServerArgs._handle_parallel", "handle_parallel")
    reworded = next(c for c in document["changes"] if c["kind"] == "message-changed")
    assert reworded["matched_by"] == "function+message" and reworded["old"]["id"] != reworded["new"]["id"]

    # The same comparison straight from the repository, without extracting first.
    code, text, _ = run_cli(capsys, "diff", "--git", str(repo), commits[0], commits[-1], "--format", "json")
    assert code == 1
    assert json.loads(text)["changes"] == document["changes"]

    code, text, _ = run_cli(capsys, "diff", "--git", str(repo), commits[0], commits[-1])
    for header in ("added (1)", "moved (1)", "message-changed (1)", "tightened (1)", "relaxed (1)"):
        assert header in text
    assert "sglang/srt/server_args.py:" in text and "-> sglang/srt/arg_groups/parallel.py:" in text
    code, markdown, _ = run_cli(capsys, "diff", "--git", str(repo), commits[0], commits[-1], "--format", "md")
    assert markdown.startswith("# Constraint changes:") and "## Guards moved (1)" in markdown


def test_exit_codes(history_repo, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    repo, commits = history_repo
    first, last = commits[0], commits[-1]
    assert run_cli(capsys, "diff", "--git", str(repo), first, first)[0] == 0
    assert run_cli(capsys, "diff", "--git", str(repo), first, last)[0] == 1
    assert run_cli(capsys, "diff", "--git", str(repo), first, last, "--fail-on", "removed,flag-removed")[0] == 0
    assert run_cli(capsys, "diff", "--git", str(repo), first, last, "--fail-on", "condition-tightened")[0] == 1
    code, _, err = run_cli(capsys, "diff", "--git", str(repo), first, last, "--fail-on", "bogus")
    assert code == 2 and "unknown change kind" in err
    code, _, err = run_cli(capsys, "diff", "--git", str(repo), first, "no-such-rev")
    assert code == 2 and "no-such-rev" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "diff", str(tmp_path / "missing.json"), first)
    assert code == 2 and "give --git" in err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    code, _, err = run_cli(capsys, "diff", str(broken), str(broken))
    assert code == 2 and "cannot read rules" in err
    report = tmp_path / "report.md"
    assert run_cli(capsys, "diff", "--git", str(repo), first, last, "--format", "md", "-o", str(report))[0] == 1
    assert report.read_text().startswith("# Constraint changes:")


def test_condition_mode_compares_local_conditions() -> None:
    local = cmp("tp_size", ">", 4)
    old = rule("At most four ranks.", local, rule_id="1" * 16)
    # An earlier guard now runs first: the trigger narrows, the guard's own test does not change.
    new = replace(old, trigger=And((local, Not(Atom(term("offload"))))))
    by_trigger = list(find_changes(snapshot("A", [old]), snapshot("B", [new])))
    assert [(c.kind, c.details) for c in by_trigger] == [
        ("relaxed", "local condition unchanged: earlier checks or the call path changed")]
    assert not list(find_changes(snapshot("A", [old]), snapshot("B", [new]), compare="condition"))
    with pytest.raises(ValueError):
        list(find_changes(snapshot("A", [old]), snapshot("B", [new]), compare="text"))



# One field the catalog renames (its flag is not `--ep-join-mode`), one the command line cannot set.
SPELLED = """
from typing import Annotated as A, Optional


class ServerArgs:
    ep_join_mode: A[Optional[str], Arg({cli_name}help="How to join.")] = None
    page_size: A[int, Arg(help="Tokens per page.")] = 1
{workers}
    def __post_init__(self):
        if self.ep_join_mode {join_test} and self.page_size > 1:
            raise ValueError("Joining needs one-token pages.")
{workers_guard}"""
WORKERS = """    workers: A[int, Arg(no_cli=True, help="Worker threads.")] = 1
"""
WORKERS_GUARD = """        if self.workers < 1:
            raise ValueError("At least one worker.")
"""


def test_each_side_spells_flags_as_its_catalog_does(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    # The old side has the plain flag; the new one renames it, adds a guard on a field without a flag
    # and tests the renamed flag more widely (tightened).
    for folder, cli_name, join_test, workers in ((old, "", '== "scale"', False),
                                                 (new, 'cli_name="--elastic-ep-join-mode", ', "is not None", True)):
        folder.mkdir()
        (folder / "m.py").write_text(SPELLED.format(cli_name=cli_name, join_test=join_test,
                                                    workers=WORKERS if workers else "",
                                                    workers_guard=WORKERS_GUARD if workers else ""), encoding="utf-8")
    code, text, err = run_cli(capsys, "diff", str(old), str(new), "--format", "json")
    assert code == 1, err
    document = json.loads(text)
    validate(document, "diff.schema.json")
    changes = {c["kind"]: c for c in document["changes"]}
    assert set(changes) == {"added", "tightened", "flag-added"}
    tightened = changes["tightened"]
    assert tightened["old"]["trigger"] == '--ep-join-mode == "scale" and --page-size > 1'
    assert tightened["new"]["trigger"] == "--elastic-ep-join-mode is not None and --page-size > 1"
    assert changes["added"]["new"]["trigger"] == "workers < 1"  # after the raise above it, not under its negation
    assert changes["flag-added"]["new"]["flag"] == "workers"

    code, text, _ = run_cli(capsys, "diff", str(old), str(new))
    lines = [line.strip() for line in text.splitlines()]
    assert '- --ep-join-mode == "scale"' in lines and "+ --elastic-ep-join-mode is not None" in lines
    assert 'm.py:14: "At least one worker." when workers < 1' in lines  # its trigger
    assert any(line.startswith("workers m.py:") for line in lines)
    assert "--workers" not in text

# ---- real releases ---------------------------------------------------------------------------------------


@pytest.mark.network
def test_refactor_release_reads_as_moves(capsys: pytest.CaptureFixture) -> None:
    """0.5.19 moved most guards from server_args.py to arg_groups/: they must come out as moved."""
    old = sides.load_snapshot(sides.resolve_spec("0.5.18"))
    new = sides.load_snapshot(sides.resolve_spec("0.5.19"))
    changes = list(find_changes(old, new))
    counts = diff.counts(changes)
    guards_in_server_args = {r.id for r in old.rules
                             if r.kind is not RuleKind.ADJUSTMENT and r.location.file.endswith("server_args.py")}
    moved_out = [c for c in changes if c.kind == "moved" and c.old.id in guards_in_server_args
                 and "/arg_groups/" in c.new.location.file]
    assert len(moved_out) >= 0.8 * len(guards_in_server_args)
    old_guards = sum(r.kind is not RuleKind.ADJUSTMENT for r in old.rules)
    assert counts["removed"] <= 0.02 * old_guards
    # Every removed guard really has no counterpart with its message in the new release (but json's own,
    # one message for every call of it: 0.5.19 parses `--modelexpress-config` in one place, not two).
    new_messages = {diff.normalized_message(r.message) for r in new.rules}
    assert all(diff.normalized_message(c.old.message) not in new_messages for c in changes
               if c.kind == "removed" and c.old.exception != "json.JSONDecodeError")
    # Every matched trigger pair was decided exactly, not by the budget fallback.
    domains = diff.field_domains(old.flags, new.flags)
    pairs, _, _ = match_rules(old.rules, new.rules)
    undecided = [p for p in pairs
                 if implies_exact(diff.canonical(p.old.effective), diff.canonical(p.new.effective), domains) is None]
    assert not undecided
    code, text, _ = run_cli(capsys, "diff", "0.5.18", "0.5.19", "--format", "json")
    assert code == 1 and json.loads(text)["summary"] == counts


@pytest.mark.network
def test_compact_path_reports_the_same_bytes(capsys: pytest.CaptureFixture) -> None:
    """`diff` of two cached releases reads their pickled snapshots and memo; the report is the one the
    full documents give, byte for byte, in every format."""
    specs = [sides.resolve_spec(v) for v in ("0.5.18", "0.5.19")]
    full = []
    for spec in specs:
        rules, flags, key = sides.load_documents(spec)
        full.append((Snapshot.from_documents(rules, flags), key))
    (old, old_key), (new, new_key) = full
    changes = list(find_changes(old, new))
    document = diff.diff_document(old, new, changes)
    validate(document, "diff.schema.json")
    expected = {"json": dumps(document), "text": diff.render_text(old, new, changes),
                "md": diff.render_markdown(old, new, changes)}
    for _ in range(2):  # the first run may write the compact forms, the second reads them
        for form, text in expected.items():
            code, out, _ = run_cli(capsys, "diff", "0.5.18", "0.5.19", "--format", form)
            assert code == 1 and out == text
    assert all(sides.snapshot_path(key).is_file() for key in (old_key, new_key))
    memo = diff.known_memo(diff.memo_path(old_key, new_key, "trigger"))
    # One verdict per pair, and for a relaxed guard whether an earlier guard or a new flag explains it.
    assert memo.pairs and len([k for k in memo.verdicts if "|" not in k[1]]) == len(memo.pairs)
    # Read back, the snapshots are the documents' records (their source is the side's own).
    for spec, (snapshot, _) in zip(specs, full):
        assert sides.load_side(spec)[0] == snapshot


def test_pickled_formulas_hash_as_fresh_ones(tmp_path: Path) -> None:
    """A formula pickled by another process (another string hash seed) is found in sets of fresh ones."""
    path = tmp_path / "f.pickle"
    script = ("from pathlib import Path; from extractor.core.cache import write_pickled; "
              "from tests.test_diff import cmp; from extractor.core.model import Not; "
              f"write_pickled(Path({str(path)!r}), [Not(cmp('mode', '==', 'decode'))])")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).parent.parent,
                   env={**os.environ, "PYTHONHASHSEED": "123"})
    found = read_pickled(path)
    assert found == [Not(cmp("mode", "==", "decode"))]
    assert found[0] in {Not(cmp("mode", "==", "decode"))}


def _ordered(message: str, condition: Formula, order: int, rule_id: str, line: int) -> Rule:
    return replace(rule(message, condition, rule_id=rule_id, line=line), order=order)


def test_relaxed_only_when_fewer_launches_the_old_release_took_are_rejected() -> None:
    """A guard that lets more launches through is "relaxed" only if some launch the old release
    accepted gets through: not when a guard that now runs first stops those launches, nor when only a
    flag the old release did not have avoids it (0.5.22 to 0.5.23: 72 of 91 "relaxed" were such)."""
    big = cmp("page_size", ">", 1)
    old_rules = [_ordered("Big pages need fa3.", And((big, cmp("backend", "!=", "fa3"))), 2, "b" * 16, 20)]
    # New: an earlier guard catches triton with big pages; the old guard no longer tests those.
    earlier = _ordered("Triton takes one-token pages.", And((big, cmp("backend", "==", "triton"))), 1, "a" * 16, 10)
    narrowed = _ordered("Big pages need fa3.", And((big, cmp("backend", "!=", "fa3"), cmp("backend", "!=", "triton"))),
                        2, "b" * 16, 20)
    flags = [flag("page_size", "1"), flag("backend", '"fa3"', ("fa3", "triton", "flashinfer"))]
    caught = list(find_changes(snapshot("A", old_rules, flags), snapshot("B", [earlier, narrowed], flags)))
    assert kinds(caught) == Counter({"added": 1, "caught-earlier": 1})
    note = next(c for c in caught if c.kind == "caught-earlier").details
    assert note == "the launches it no longer reaches stop first at sglang/srt/server_args.py:10 (new)"

    # New: the guard spares launches that pass a flag of the new release only.
    spared = _ordered("Big pages need fa3.", And((big, cmp("backend", "!=", "fa3"), Not(Atom(term("fast_pages"))))),
                      2, "b" * 16, 20)
    new_flags = [*flags, replace(flag("fast_pages", "False", action="store_true"), default_value=False)]
    by_new = list(find_changes(snapshot("A", old_rules, flags), snapshot("B", [spared], new_flags)))
    assert kinds(by_new) == Counter({"relaxed-by-new-flags": 1, "flag-added": 1})
    assert next(c for c in by_new if c.kind == "relaxed-by-new-flags").details == "avoided only with --fast-pages"

    # Truly relaxed: flashinfer with big pages is no longer rejected, by anything.
    loose = _ordered("Big pages need fa3.", And((big, cmp("backend", "==", "triton"))), 2, "b" * 16, 20)
    assert kinds(find_changes(snapshot("A", old_rules, flags), snapshot("B", [loose], flags))) == Counter({"relaxed": 1})


def test_a_report_reads_flags_first_and_says_what_an_added_guard_does() -> None:
    """Removed flags lead with their story from the shipped flag history; an added guard shows its
    trigger, a dead one says so; a changed message is shown whole on both sides."""
    long = "A message long enough to be cut when quoted in a list: " + "x" * 150
    old_rules = [rule(long + " (old)", cmp("tp_size", ">", 1), rule_id="c" * 16)]
    new_rules = [rule(long + " (new)", cmp("tp_size", ">", 1), rule_id="c" * 16),
                 rule("Never raised.", Const(False), rule_id="d" * 16, line=30),
                 rule("Two pages at least.", cmp("page_size", "<", 2), rule_id="e" * 16, line=40)]
    old_flags = [flag("tp_size", "1"), flag("page_size", "1"), flag("cuda_graph_max_bs", "None")]
    new_flags = [flag("tp_size", "1"), flag("page_size", "1")]
    old = snapshot("0.5.19", old_rules, old_flags)
    new = Snapshot("0.5.23", {"kind": "release", "label": "0.5.23", "release": "0.5.23"}, tuple(new_rules),
                   tuple(new_flags))
    changes = list(find_changes(old, new))
    text = diff.render_text(old, new, changes)
    sections = [line.split(" (")[0] for line in text.splitlines() if line and not line.startswith((" ", "0.5"))]
    assert sections[0] == "flag-removed"
    removed = next(c for c in changes if c.kind == "flag-removed")
    assert removed.details.startswith("--cuda-graph-max-bs was removed in 0.5.20 (accepted 0.3.5..0.5.19")
    assert removed.details in text and removed.as_dict()["details"] == removed.details
    assert '"Never raised." (dead: no launch reaches it, its trigger is never true)' in text
    assert '"Two pages at least." when --page-size < 2' in text
    assert f'"{long} (old)" -> "{long} (new)"' in text
    validate(diff.diff_document(old, new, changes), "diff.schema.json")


@pytest.mark.network
def test_the_diff_of_two_real_releases_reads_right(capsys: pytest.CaptureFixture) -> None:
    """0.5.22 to 0.5.23: the one removed flag first with its history; no guard is "relaxed" because
    only --enable-return-aux-hidden-states (new in 0.5.23) spares launches; added guards by trigger."""
    code, text, err = run_cli(capsys, "diff", "0.5.22", "0.5.23")
    assert code == 1, err
    lines = text.splitlines()
    assert lines[2] == "flag-removed (1): Flags removed"
    assert lines[3].strip().endswith("--speculative-skip-dp-mlp-sync was removed in 0.5.23 (accepted 0.5.11..0.5.22)")
    sections = {line.split(" (")[0]: line for line in lines if line and not line.startswith((" ", "0.5"))}
    assert "relaxed-by-new-flags" in sections
    relaxed = text.split("\nrelaxed (", 1)[1].split("\n\n", 1)[0]
    assert "--enable-return-aux-hidden-states" not in relaxed.split("\n", 1)[0]
    spared = text.split("\nrelaxed-by-new-flags (", 1)[1].split("\n\n", 1)[0]
    assert "(avoided only with --enable-return-aux-hidden-states)" in spared
    added = text.split("\nadded (", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert added and all('" when ' in line or "(dead:" in line for line in added)


def test_the_kinds_the_command_line_lists_are_those_of_the_change_classes() -> None:
    """`diff --help` lists the kinds from `history.kinds` (no comparison loaded); each change class
    declares its own: the two name the same kinds in the same order."""
    from extractor.products.history.changes import CHANGE_CLASSES
    from extractor.products.history.kinds import KINDS

    assert tuple(cls.kind for cls in CHANGE_CLASSES) == KINDS
