"""Tests for extractor.graph: related rules, the graph, its exports and the `graph` command."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import networkx as nx
import pytest

from extractor.cli import main
from extractor.core.formula import conj, neg, render
from extractor.core.model import Atom, Lit, Location, Rule, RuleKind, Snippet, Term, TermKind
from extractor.products.extraction import exports as E
from extractor.products.extraction import graph as G
from extractor.products.extraction import relations as R
from extractor.products.extraction.extraction import Extraction, extract
from extractor.products.extraction.output import validate
from extractor.sources.trees import path_tree, release_tree

from .conftest import FIXTURES

CASE = FIXTURES / "graph_neighbourhoods"


@pytest.fixture(scope="module")
def fixture_extraction() -> Extraction:
    return extract(path_tree(CASE))


@pytest.fixture(scope="module")
def fixture_graph(fixture_extraction: Extraction) -> nx.MultiDiGraph:
    return G.build_graph(fixture_extraction.rules, fixture_extraction.flags, fixture_extraction.relations)


def by_message(ex: Extraction) -> dict[str, Rule]:
    return {r.message: r for r in ex.rules}


def related_of(ex: Extraction, message: str) -> list[tuple[str, str]]:
    return [(r.message, r.kind) for r in by_message(ex)[message].related]


# ---- building blocks -------------------------------------------------------------------------------


def field(name: str) -> Term:
    return Term(TermKind.FIELD, name, name, (name,))


def guard(line: int, condition, enclosing=(), function="check", kind=RuleKind.RAISE, message=None) -> Rule:
    return Rule(
        id=f"{line:016x}", kind=kind, exception="ValueError", message=message or f"guard at {line}",
        message_static=True, location=Location("sglang/srt/server_args.py", line, line),
        function=function, snippet=Snippet(line, line, ""), condition=condition, enclosing=tuple(enclosing),
    )


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param((10,), (10,), True, id="same-innermost-if"),
        pytest.param((10, 11), (10, 15), True, id="own-ifs-in-one-block"),
        pytest.param((10,), (10, 15), True, id="direct-and-nested-in-one-block"),
        pytest.param((10,), (20,), False, id="two-top-level-guards"),
        pytest.param((), (), False, id="no-enclosing-if"),
        pytest.param((10, 20, 30), (10, 40), False, id="cousins"),
        pytest.param((10, 20, 30), (10, 20, 35), True, id="deep-siblings"),
    ],
)
def test_siblings_share_a_block(a: tuple[int, ...], b: tuple[int, ...], expected: bool) -> None:
    assert R._siblings(a, b) is expected
    assert R._siblings(b, a) is expected


def test_own_conditions_drop_the_negations_of_earlier_guards() -> None:
    mode_not_decode = Atom(field("mode"), "!=", Lit("decode"))
    backup_host = Atom(field("backup"), "==", Lit("host"))
    offload = Atom(field("offload"))
    first = guard(10, conj(backup_host, mode_not_decode), enclosing=(10,))
    # What the walker builds for a later guard: the earlier guard did not fire, then its own tests.
    second = guard(20, conj(neg(conj(backup_host, mode_not_decode)), offload, mode_not_decode), enclosing=(19, 20))
    third = guard(30, conj(neg(backup_host), offload, neg(mode_not_decode)), enclosing=(19, 30))
    own = R.own_conditions([first, second, third])
    assert [render(p) for p in own[first.id]] == ['backup == "host"', 'mode != "decode"']
    assert [render(p) for p in own[second.id]] == ["offload", 'mode != "decode"']
    # `backup != "host"` and `mode == "decode"` negate earlier guards' own tests: inherited.
    assert [render(p) for p in own[third.id]] == ["offload"]


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        pytest.param(conj(Atom(field("a")), Atom(field("b"))), ("a", "b"), id="two-switches"),
        pytest.param(conj(Atom(field("a")), Atom(field("mode"), "==", Lit("x"))), ("a", "mode"), id="switch-and-value"),
        pytest.param(conj(Atom(field("a")), Atom(field("b"), "is not", Lit(None))), ("a", "b"), id="switch-and-set"),
        pytest.param(conj(Atom(field("a")), Atom(field("mode"), "!=", Lit("x"))), (), id="requirement-not-pair"),
        pytest.param(conj(Atom(field("a")), neg(Atom(field("b")))), (), id="negated-switch"),
        pytest.param(conj(Atom(field("a")), Atom(field("a"), ">", Lit(2))), (), id="one-field"),
        pytest.param(Atom(field("a")), (), id="single-test"),
        pytest.param(conj(Atom(field("a")), Atom(field("b"), "==", Lit(0))), (), id="value-zero-is-off"),
    ],
)
def test_forbidden_pair(condition, expected: tuple[str, ...]) -> None:
    rule = guard(10, condition)
    assert R.forbidden_pair(rule, R.own_conditions([rule])[rule.id]) == expected


def test_adjustments_forbid_nothing() -> None:
    rule = guard(10, conj(Atom(field("a")), Atom(field("b"))), kind=RuleKind.ADJUSTMENT)
    assert R.forbidden_pair(rule, R.own_conditions([rule])[rule.id]) == ()


# ---- known neighbourhoods (tests/fixtures/graph_neighbourhoods) --------------------------------------


def test_siblings_of_one_guard_block(fixture_extraction: Extraction) -> None:
    assert related_of(fixture_extraction, "Offload is only supported for decode side.") == [
        ("Offload and host backup are mutually exclusive.", "siblings"),
        ("Offload needs a storage backend.", "siblings"),
        # not in the block, but tests the same `mode != "decode"` right before it
        ("Host backup is only supported on a decode server.", "shares-flags"),
    ]
    assert related_of(fixture_extraction, "Offload needs a storage backend.") == [
        ("Offload and host backup are mutually exclusive.", "siblings"),
        ("Offload is only supported for decode side.", "siblings"),
        ("Host backup is only supported on a decode server.", "same-function"),
    ]


def test_two_guards_sharing_a_rare_flag(fixture_extraction: Extraction) -> None:
    # `rare_knob` is read by these two guards only, in two functions: nothing else relates them.
    knob_guards = ["rare-knob above 3 needs tp-size 1.", "fp8 quantization needs a non-negative rare-knob."]
    assert ("fp8 quantization needs a non-negative rare-knob.", "shares-flags") in related_of(fixture_extraction, knob_guards[0])
    assert ("rare-knob above 3 needs tp-size 1.", "shares-flags") in related_of(fixture_extraction, knob_guards[1])
    assert related_of(fixture_extraction, "tp-size must be at most 8.") == [("rare-knob above 3 needs tp-size 1.", "consecutive")]
    # and the quantization default written before the guard reads it
    assert related_of(fixture_extraction, knob_guards[1])[0] == ('Sets --quant to "auto"', "adjusts")


def test_mutually_exclusive_pair(fixture_extraction: Extraction) -> None:
    rules = by_message(fixture_extraction)
    pair = rules["cache-a and cache-b are mutually exclusive."]
    assert fixture_extraction.relations.forbidden[pair.id] == ("cache_a", "cache_b")
    assert related_of(fixture_extraction, pair.message) == [("cache-b needs the layer_first layout.", "mutual-exclusion")]
    assert related_of(fixture_extraction, "cache-b needs the layer_first layout.") == [(pair.message, "mutual-exclusion")]
    exclusive = rules["Offload and host backup are mutually exclusive."]
    assert fixture_extraction.relations.forbidden[exclusive.id] == ("backup", "offload")
    # the guard forbidding offload with host backup relates to the guard that tests host backup by the
    # flag they share; its trigger does not carry that earlier guard's negation (the run order does)
    assert (exclusive.message, "shares-flags") in related_of(fixture_extraction, "Host backup is only supported on a decode server.")


def test_related_are_ranked_and_bounded(fixture_extraction: Extraction) -> None:
    for rule in fixture_extraction.rules:
        keys = [(-r.score, r.id) for r in rule.related]
        assert keys == sorted(keys)
        assert len(rule.related) <= G.MAX_RELATED
        assert rule.id not in {r.id for r in rule.related}
        for other in rule.related:  # a relation is symmetric: the same score seen from both ends
            back = {r.id: r.score for r in by_message(fixture_extraction)[other.message].related}
            assert back.get(rule.id, other.score) == other.score


def test_related_keep_only_the_top_ten() -> None:
    # Twelve guards of one block: each relates to eleven, keeps ten, the lowest ids first on ties.
    rules = [guard(100 + i, Atom(field(f"f{i}")), enclosing=(99, 100 + i)) for i in range(12)]
    related = R.with_related(rules)
    assert [r.id for r in related[0].related] == [r.id for r in rules[1:11]]
    assert {r.kind for r in related[0].related} == {"siblings"}


def test_graph_nodes_and_edges(fixture_extraction: Extraction, fixture_graph: nx.MultiDiGraph) -> None:
    rules = by_message(fixture_extraction)
    seed = G.rule_node(rules["Offload is only supported for decode side."].id)
    reads = {(t, d["op"], d["operand"], d["test"]) for _, t, d in fixture_graph.out_edges(seed, data=True) if d["kind"] == "reads"}
    # its own tests only: `backup != "host"` in its condition is the earlier guard's negation
    assert reads == {("flag:mode", "!=", '"decode"', '--mode != "decode"'), ("flag:offload", "truthy", "", "--offload")}
    adjustment = G.rule_node(rules['Sets --quant to "auto"'].id)
    assert fixture_graph.has_edge(adjustment, "flag:quant", key="writes")
    # one `related` edge per pair, named by its strongest relation, weighted by the pair's score;
    # with `adjusts` among its relations it points from the adjustment to the rule it affects
    fp8 = rules["fp8 quantization needs a non-negative rare-knob."]
    edge = fixture_graph.get_edge_data(adjustment, G.rule_node(fp8.id), key="related")
    assert edge["kind"] == "adjusts" and set(G.relation_weights(edge)) == {"adjusts", "shares-flags"}
    assert edge["weight"] == fp8.related[0].score == pytest.approx(sum(G.relation_weights(edge).values()), abs=1e-3)
    block = sorted(G.rule_node(rules[m].id) for m in ("Offload is only supported for decode side.",
                                                       "Offload and host backup are mutually exclusive."))
    edge = fixture_graph.get_edge_data(*block, key="related")
    assert edge["kind"] == "siblings"
    assert set(G.relation_weights(edge)) == {"siblings", "mutual-exclusion", "shares-flags", "same-function"}
    assert edge["shared"] == "--offload"  # what both triggers read: the earlier raise is not negated in the later one
    knob = sorted(G.rule_node(rules[m].id) for m in ("rare-knob above 3 needs tp-size 1.", fp8.message))
    edge = fixture_graph.get_edge_data(*knob, key="related")
    assert (edge["kind"], edge["shared"], set(G.relation_weights(edge))) == ("shares-flags", "--rare-knob", {"shares-flags"})
    assert 0 < edge["weight"] == G.relation_weights(edge)["shares-flags"] < 1
    assert fixture_graph.has_edge("flag:cache_a", "flag:cache_b", key=f"excludes {rules['cache-a and cache-b are mutually exclusive.'].id}")
    assert {d["kind"] for n, d in fixture_graph.nodes(data=True)} == {"rule", "flag"}
    assert fixture_graph.nodes["flag:tp_size"]["label"] == "--tp-size"
    # every flag of the catalog is a node, read or not
    assert {f"flag:{f.name}" for f in fixture_extraction.flags} <= set(fixture_graph)


def test_term_kinds_become_their_own_nodes() -> None:
    env = Term(TermKind.ENV, "SGLANG_STRICT", "envs.SGLANG_STRICT.get()")
    platform = Term(TermKind.PLATFORM, "is_hip()", "is_hip()")
    model = Term(TermKind.MODEL, "hf_config.architectures", "hf_config.architectures")
    opaque = Term(TermKind.OPAQUE, "len(x)", "len(x)", ("x",))
    rule = guard(10, conj(Atom(env), Atom(platform), Atom(model, "contains", Lit("X")), Atom(opaque, ">", Lit(2))))
    graph = G.build_graph([rule], [])
    kinds = {n: d["kind"] for n, d in graph.nodes(data=True)}
    assert kinds == {G.rule_node(rule.id): "rule", "env:SGLANG_STRICT": "env", "platform:is_hip()": "platform",
                     "model:hf_config.architectures": "model", "flag:x": "flag"}
    assert graph.nodes["flag:x"]["in_catalog"] is False


def test_figures(fixture_graph: nx.MultiDiGraph) -> None:
    figures = G.figures(fixture_graph)
    assert figures["nodes"] == {"flag": 11, "rule": 10}
    assert figures["rules_by_kind"] == {"adjustment": 1, "raise": 9}
    assert figures["edges"]["excludes"] == 2 and figures["edges"]["writes"] == 1
    assert sum(figures["edges"].values()) == fixture_graph.number_of_edges()
    # offload: the three checks of its block; then ties of two, by name (quant: written once, tested once)
    assert figures["most_connected_flags"][:3] == [{"flag": "--offload", "rules": 3}, {"flag": "--backup", "rules": 2},
                                                   {"flag": "--cache-b", "rules": 2}]
    co = figures["co_occurrence"]
    # offload/backup/mode/backend test each other; tp_size, rare_knob and quant; cache_a, cache_b, layout
    assert sorted(co["small"]) == [["--backend", "--backup", "--mode", "--offload"], ["--cache-a", "--cache-b", "--layout"],
                                   ["--quant", "--rare-knob", "--tp-size"]]
    assert co["components"] == 3 and co["singletons"] == 0


# ---- exports ----------------------------------------------------------------------------------------


def edge_set(graph: nx.MultiDiGraph) -> dict:
    return {(s, t, k): d for s, t, k, d in graph.edges(keys=True, data=True)}


def test_node_link_json_round_trip(fixture_graph: nx.MultiDiGraph) -> None:
    document = E.node_link(fixture_graph, {"source": "fixture"})
    validate(document, "graph.schema.json")
    again = nx.node_link_graph(json.loads(json.dumps(document)), edges=E.LINKS_KEY)
    assert isinstance(again, nx.MultiDiGraph)
    assert dict(again.nodes(data=True)) == dict(fixture_graph.nodes(data=True))
    assert edge_set(again) == edge_set(fixture_graph)
    assert again.graph == {"source": "fixture"}
    assert [n["id"] for n in document["nodes"]] == sorted(n["id"] for n in document["nodes"])
    links = [(e["source"], e["target"], e["key"]) for e in document["links"]]
    assert links == sorted(links)


def test_graphml_round_trip(fixture_graph: nx.MultiDiGraph) -> None:
    text = E.graphml_text(fixture_graph)
    again = nx.read_graphml(io.BytesIO(text.encode("utf-8")))
    assert isinstance(again, nx.MultiDiGraph)
    assert dict(again.nodes(data=True)) == dict(fixture_graph.nodes(data=True))  # types too: bool, int, str
    # GraphML edge ids are unique (`source|target|key`); the multigraph key travels as the `key` attribute.
    rebuilt = {(s, t, d.pop("key")): d for s, t, _, d in again.edges(keys=True, data=True)}
    assert rebuilt == edge_set(fixture_graph)
    ids = [i for _, _, i in again.edges(keys=True)]
    assert len(ids) == len(set(ids))


def test_graphml_refuses_mixed_attribute_types() -> None:
    graph = nx.MultiDiGraph()
    graph.add_node("a", value=1)
    graph.add_node("b", value="one")
    with pytest.raises(TypeError, match="value"):
        E.graphml_text(graph)


def test_dot_is_deterministic_and_complete(fixture_extraction: Extraction, fixture_graph: nx.MultiDiGraph) -> None:
    text = E.dot_text(fixture_graph)
    assert text == E.dot_text(G.build_graph(fixture_extraction.rules, fixture_extraction.flags))
    assert text.startswith('digraph "constraints" {') and text.endswith("}\n")
    assert text.count("{") == text.count("}")
    for node in fixture_graph:
        assert f'"{node}" [label=' in text
    # one drawn edge per related pair, however many relations it has
    related = {frozenset((s, t)) for s, t, d in fixture_graph.edges(data=True) if d["kind"] in G.RELATED_KINDS}
    drawn = [line for line in text.splitlines() if "penwidth=" in line]
    assert len(drawn) == len(related)
    assert 'label="siblings"' in text and 'label="!= \\"decode\\""' in text


def test_exports_are_stable_bytes(fixture_extraction: Extraction) -> None:
    first = E.graph_documents(G.build_graph(fixture_extraction.rules, fixture_extraction.flags), {"source": "x"})
    again = extract(path_tree(CASE))
    second = E.graph_documents(G.build_graph(again.rules[::-1], again.flags[::-1]), {"source": "x"})
    for name in first:
        assert json.dumps(first[name][0], sort_keys=True) == json.dumps(second[name][0], sort_keys=True), name


def test_exports_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    # Sets of flags and tests are iterated while scoring; the bytes must not follow the hash seed.
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "extractor", "extract", str(CASE), "-o", str(out)], env=env, check=True,
                       capture_output=True)
        folder = out / CASE.name
        outputs.append({name: (folder / name).read_bytes() for name in ("graph.json", "graph.graphml", "graph.dot")}
                       | {"related": json.dumps([r["related"] for r in json.loads((folder / "rules.json").read_text())["rules"]])})
    assert outputs[0] == outputs[1]


def test_no_rules_no_graph_edges() -> None:
    graph = G.build_graph([], [])
    assert graph.number_of_nodes() == 0
    assert G.figures(graph)["co_occurrence"] == {"flags": 0, "pairs": 0, "components": 0, "sizes": [], "singletons": 0, "small": []}
    assert R.with_related([]) == []


def test_affected_by_outside_the_rule_set_is_ignored() -> None:
    rule = replace(guard(10, Atom(field("a"))), affected_by=("ffffffffffffffff",))
    assert R.with_related([rule])[0].related == ()
    assert G.build_graph([rule], []).number_of_edges() == 1  # its read of `a`


# ---- the command line ----------------------------------------------------------------------------


# `--flag --offload` is argparse's business: a value that looks like an option needs `--flag=--offload`.
@pytest.mark.parametrize("form", [["--flag", "offload"], ["--flag=--offload"], ["--flag=offload"], ["--flag", "OFFLOAD"]])
def test_graph_flag_forms(form: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(CASE), *form]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--offload (flag offload; type bool")
    assert "tested by 3 rules:" in out
    assert "Offload needs a storage backend.  [set]" in out
    assert "forbidden together with:\n  --backup" in out


def test_graph_flag_alias_and_underscores(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(CASE), "--flag", "tensor-parallel-size"]) == 0
    assert capsys.readouterr().out.startswith("--tp-size (flag tp_size")
    assert main(["graph", str(CASE), "--flag", "rare_knob"]) == 0
    out = capsys.readouterr().out
    assert "rare-knob above 3 needs tp-size 1.  [> 3]" in out and "non-negative rare-knob.  [< 0]" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--flag", "no-such-flag"], "unknown flag --no-such-flag"),
        (["--flag", "offlaod"], "did you mean --offload?"),
        (["--rule", "0123456789abcdef"], "unknown rule '0123456789abcdef'"),
    ],
)
def test_graph_unknown_flag_or_rule(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(CASE), *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_graph_rule_and_formats(fixture_extraction: Extraction, capsys: pytest.CaptureFixture[str]) -> None:
    seed = by_message(fixture_extraction)["Offload is only supported for decode side."]
    assert main(["graph", str(CASE), "--rule", seed.id[:8]]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"raise {seed.id} ")
    assert '  tests --mode != "decode"' in out
    listed = [line.split("  ")[-2] for line in out.splitlines() if line.startswith("  ") and line[2:3].isdigit()]
    assert listed == [r.message for r in seed.related]

    assert main(["graph", str(CASE), "--rule", seed.id, "--format", "json"]) == 0
    sub = nx.node_link_graph(json.loads(capsys.readouterr().out), edges=E.LINKS_KEY)
    assert set(sub) == {G.rule_node(seed.id), *(G.rule_node(r.id) for r in seed.related), "flag:mode", "flag:offload"}

    assert main(["graph", str(CASE), "--flag", "cache-b", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "flag:cache_b" {') and '"flag:cache_a" -> "flag:cache_b"' in dot


def test_graph_figures_without_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(CASE)]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"] == {"flag": 11, "rule": 10}


def test_extract_writes_the_graph_and_graph_reads_it_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(CASE), "-o", str(tmp_path)]) == 0
    folder = next(tmp_path.iterdir())
    assert sorted(p.name for p in folder.iterdir()) == ["flags.json", "graph.dot", "graph.graphml", "graph.json", "rules.json"]
    rules = json.loads((folder / "rules.json").read_text(encoding="utf-8"))
    validate(rules, "rules.schema.json")
    assert rules["graph"]["nodes"] == {"flag": 11, "rule": 10}
    document = json.loads((folder / "graph.json").read_text(encoding="utf-8"))
    validate(document, "graph.schema.json")
    assert document["graph"] == {"source": folder.name}
    assert nx.read_graphml(folder / "graph.graphml").number_of_edges() == len(document["links"])
    capsys.readouterr()
    for source in (folder / "rules.json", folder):
        assert main(["graph", str(source), "--flag", "offload"]) == 0
        assert "tested by 3 rules:" in capsys.readouterr().out
    # without flags.json beside it the flags read by rules are still there, the unread ones are not
    (folder / "flags.json").unlink()
    assert main(["graph", str(folder / "rules.json"), "--flag", "offload"]) == 0
    assert "not in the flag catalog" in capsys.readouterr().out


def test_graph_of_a_broken_rules_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rules.json").write_text("{not json", encoding="utf-8")
    assert main(["graph", str(tmp_path / "rules.json"), "--flag", "x"]) == 2
    err = capsys.readouterr().err
    assert "rules.json: cannot read rules: " in err and len(err.strip().splitlines()) == 1



# One field the catalog renames (`ep_join_mode` is --elastic-ep-join-mode) and one the command line
# cannot set; the two guards reading both come after two that do not, so the pair shares rare flags.
SPELLED = """
from typing import Annotated as A, Optional


class ServerArgs:
    ep_join_mode: A[Optional[str], Arg(cli_name="--elastic-ep-join-mode", help="How to join.")] = None
    workers: A[int, Arg(no_cli=True, help="Worker threads.")] = 1
    page_size: A[int, Arg(help="Tokens per page.")] = 1

    def __post_init__(self):
        if self.page_size > 64:
            raise ValueError("At most 64 tokens per page.")
        if self.page_size < 1:
            raise ValueError("At least one token per page.")
        if self.ep_join_mode is not None and self.workers < 1:
            raise ValueError("Joining needs a worker.")
        if self.ep_join_mode == "scale" and self.workers > 8:
            raise ValueError("Scaling supports at most eight workers.")
"""


def test_graph_spells_flags_as_the_catalog_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text(SPELLED, encoding="utf-8")
    ex = extract(path_tree(tmp_path))
    graph = G.build_graph(ex.rules, ex.flags, ex.relations)
    assert graph.nodes["flag:ep_join_mode"]["label"] == "--elastic-ep-join-mode"
    assert graph.nodes["flag:workers"]["label"] == "workers"  # no flag: the bare field name
    rules = by_message(ex)
    join, scale = (G.rule_node(rules[m].id) for m in ("Joining needs a worker.", "Scaling supports at most eight workers."))
    assert {d["test"] for _, _, d in graph.out_edges(join, data=True) if d["kind"] == "reads"} == {
        "--elastic-ep-join-mode is not None", "workers < 1"}
    shared = graph.get_edge_data(*sorted((join, scale)), key="related")["shared"]
    assert set(shared.split(",")) == {"--elastic-ep-join-mode", "workers"}
    # the catalog's spelling and the `--field-name` convention both find the node
    for text in ("--elastic-ep-join-mode", "elastic-ep-join-mode", "--ep-join-mode", "ep_join_mode"):
        assert G.find_flag(graph, ex.flags, text) == "flag:ep_join_mode"
    for text in ("workers", "--workers"):
        assert G.find_flag(graph, ex.flags, text) == "flag:workers"
    for text, hint in (("--ep-join-mod", "--elastic-ep-join-mode"), ("--worker", "workers")):
        with pytest.raises(G.GraphQueryError, match=f"did you mean {hint}\\?"):
            G.find_flag(graph, ex.flags, text)
    assert main(["graph", str(tmp_path), "--flag", "workers"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("workers (flag workers;") and "Joining needs a worker.  [< 1]" in out

# ---- the real release --------------------------------------------------------------------------------

SEED = "The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side."


@pytest.fixture(scope="session")
def release_extraction() -> Extraction:
    return extract(release_tree("0.5.23"))


@pytest.mark.network
def test_seed_guard_related_on_0_5_23(release_extraction: Extraction) -> None:
    (seed,) = [r for r in release_extraction.rules if r.message == SEED]
    related = [r.message for r in seed.related]
    assert "The argument disaggregation-decode-enable-offload-kvcache is only supported when hicache-storage-backend is provided." in related
    assert any(m.startswith("The arguments disaggregation-decode-enable-offload-kvcache and "
                            "disaggregation-decode-retraction-backup=host_pool are mutually exclusive") for m in related)
    assert "--disaggregation-decode-retraction-backup=host_pool is only supported on a PD decode server." in related
    assert {r.kind for r in seed.related[:2]} == {"siblings"}


@pytest.mark.network
def test_graph_answers_for_every_catalog_flag_of_0_5_23(release_extraction: Extraction) -> None:
    ex = release_extraction
    graph = G.build_graph(ex.rules, ex.flags, ex.relations)
    for flag in ex.flags:
        node = G.find_flag(graph, ex.flags, flag.flags[0] if flag.flags else flag.name)
        assert node == f"flag:{flag.name}"
        assert G.describe(graph, node).startswith(graph.nodes[node]["label"])
    validate(E.node_link(graph, {"source": "0.5.23"}), "graph.schema.json")
    figures = G.figures(graph)
    assert figures["nodes"]["rule"] == len(ex.rules)
    assert figures["most_connected_flags"][0]["rules"] >= figures["most_connected_flags"][-1]["rules"]
    assert all(len(r.related) <= G.MAX_RELATED for r in ex.rules)
