"""The constraint graph: rules and the facts they read, related-rule edges, figures and neighbourhoods.

Nodes are rules and the flags, env vars, platform and model facts they read; edges are their
tests, writes, forbidden pairs and weighted related-rule edges.

networkx is used here and nowhere else, and only where a graph object is asked for: `extract`
works on plain sorted dicts (`GraphData`). The graph is a MultiDiGraph because two nodes are often
joined by several edges that must stay apart: a rule tests one flag twice (`!= "host_pool"` and
`== "decode"`), an adjustment tests the flag it writes. Every edge has a string key
(`reads != "decode"`, `writes`, `related`, ...) so exports and re-reads agree. Two related rules
share one `related` edge carrying all their relations.
"""

from __future__ import annotations

import difflib
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.errors import GraphQueryError
from ...core.formula import Spellings, flag_name, literal_source, neg, render_flags
from ...core.model import And, Atom, Flag, Formula, Lit, Not, Or, Rule, RuleKind, Term, TermKind
from .relations import KIND_ORDER, MAX_RELATED, RELATED_KINDS, SCORE_DIGITS, Relations, relations

if TYPE_CHECKING:  # networkx is imported where a graph is built: `extract` alone only needs `related`
    import networkx as nx

TERM_NODE_KINDS = {TermKind.FIELD: "flag", TermKind.ENV: "env", TermKind.PLATFORM: "platform", TermKind.MODEL: "model"}
SMALL_COMPONENT = 5  # co-occurrence components up to this size are listed with their members


# --- the graph ----------------------------------------------------------------------------------


def rule_node(rule_id: str) -> str:
    return f"rule:{rule_id}"


def term_node(term: Term) -> str | None:
    kind = TERM_NODE_KINDS.get(term.kind)
    return None if kind is None else f"{kind}:{term.name}"


@dataclass(frozen=True, slots=True)
class GraphData:
    """The graph as plain dicts, nodes and edges in sorted order: what `extract` summarizes and
    exports without importing networkx. `build_graph` turns it into a networkx graph."""

    nodes: dict[str, dict]
    edges: dict[tuple[str, str, str], dict]  # (source, target, key) -> attributes


def graph_data(rules: Sequence[Rule], flags: Sequence[Flag], relations_: Relations | None = None) -> GraphData:
    """Nodes: rules, flags (the whole catalog and any field a rule tests), env vars, platform and
    model facts. Edges: rule -> term `reads` (the rule's own tests), adjustment -> flag `writes`,
    flag -> flag `excludes` (a guard forbids the pair), and one `related` edge per pair of rules that
    some rule ranks in its `related` list, named by its strongest relation and weighted by its score."""
    found = relations_ if relations_ is not None else relations(rules)
    nodes: dict[str, dict] = {}
    edges: dict[tuple[str, str, str], dict] = {}
    catalog = {f.name: f for f in flags}
    spellings = Spellings.of(flags)  # flags as the catalog spells them (`ep_join_mode` is --elastic-ep-join-mode)
    for flag in flags:
        nodes[f"flag:{flag.name}"] = _flag_attributes(flag.name, flag, spellings)
    adjusted: dict[tuple[str, str], tuple[str, str]] = {}  # pair -> (adjustment, rule it affects)
    for rule in rules:
        nodes[rule_node(rule.id)] = _rule_attributes(rule)
        for literal in _literals(found.own.get(rule.id, ())):
            for term in _terms(literal):
                node = term_node(term)
                if node is None:
                    continue
                if node not in nodes:
                    nodes[node] = (
                        _flag_attributes(term.name, catalog.get(term.name), spellings) if term.kind is TermKind.FIELD
                        else {"kind": TERM_NODE_KINDS[term.kind], "label": term.name, "name": term.name})
                op, operand = _test(literal, term)
                key = f"reads {op} {operand}".rstrip()
                edges[(rule_node(rule.id), node, key)] = {
                    "kind": "reads", "op": op, "operand": operand, "test": render_flags(literal, spellings),
                }
        if rule.kind is RuleKind.ADJUSTMENT and rule.target:
            node = f"flag:{rule.target}"
            nodes.setdefault(node, _flag_attributes(rule.target, catalog.get(rule.target), spellings))
            edges[(rule_node(rule.id), node, "writes")] = {"kind": "writes", "value": rule.value or ""}
        names = found.forbidden.get(rule.id, ())
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                edges[(f"flag:{a}", f"flag:{b}", f"excludes {rule.id}")] = {"kind": "excludes", "rule": rule.id}
        for adjustment in rule.affected_by:
            adjusted[(adjustment, rule.id) if adjustment < rule.id else (rule.id, adjustment)] = (adjustment, rule.id)
    for pair, weights in found.pairs.items():
        # The adjustment points at the rule it affects; other relations are symmetric, stored low -> high.
        source, target = adjusted[pair] if "adjusts" in weights and pair in adjusted else pair
        ranked = sorted(weights, key=lambda k: (-weights[k], KIND_ORDER.index(k)))
        attributes: dict = {
            "kind": ranked[0],
            "weight": round(math.fsum(weights.values()), SCORE_DIGITS),
            "relations": " ".join(f"{k}={weights[k]:.{SCORE_DIGITS}f}" for k in ranked),
        }
        if found.shared.get(pair):
            attributes["shared"] = ",".join(spellings.text(f) for f in found.shared[pair])
        edges[(rule_node(source), rule_node(target), "related")] = attributes
    return GraphData(dict(sorted(nodes.items())), dict(sorted(edges.items(), key=lambda item: item[0])))


def build_graph(rules: Sequence[Rule], flags: Sequence[Flag], relations_: Relations | None = None) -> nx.MultiDiGraph:
    """The graph of `graph_data` as a networkx MultiDiGraph (see the module docstring for why multi)."""
    return to_networkx(graph_data(rules, flags, relations_))


def to_networkx(data: GraphData) -> nx.MultiDiGraph:
    import networkx as nx

    graph = nx.MultiDiGraph()
    graph.add_nodes_from(data.nodes.items())
    for (source, target, key), attributes in data.edges.items():
        graph.add_edge(source, target, key=key, **attributes)  # add_edges_from costs twice as much per edge
    return graph


def graph_parts(graph: GraphData | nx.MultiDiGraph) -> tuple[list[tuple[str, dict]], list[tuple[str, str, str, dict]]]:
    """Nodes and edges in sorted order, from plain data or from a networkx graph (a neighbourhood)."""
    if isinstance(graph, GraphData):
        return list(graph.nodes.items()), [(s, t, k, d) for (s, t, k), d in graph.edges.items()]
    return sorted(graph.nodes(data=True)), sorted(graph.edges(keys=True, data=True), key=lambda e: e[:3])


def relation_weights(edge: dict) -> dict[str, float]:
    """The relations behind a `related` edge, from its `relations` attribute (`siblings=1.0000 ...`)."""
    return {kind: float(weight) for kind, _, weight in (item.partition("=") for item in edge["relations"].split())}


def _rule_attributes(rule: Rule) -> dict:
    # GraphML wants scalars: strings, numbers, booleans; no None, no lists.
    return {
        "kind": "rule",
        "rule_kind": rule.kind.value,
        "label": rule.message,
        "file": rule.location.file,
        "line": rule.location.line,
        "function": rule.function,
        "reachable": rule.reachable,
    }


def _flag_attributes(name: str, flag: Flag | None, spellings: Spellings) -> dict:
    # A field the command line cannot set (no_cli) is labelled with its bare name.
    attributes: dict = {"kind": "flag", "label": spellings.text(name), "name": name, "in_catalog": flag is not None}
    if flag is not None:
        attributes["type"] = flag.type or ""
        attributes["default"] = flag.default or ""
    return attributes


def _literals(parts: Iterable[Formula]) -> Iterator[Formula]:
    """Every atom of a rule's own tests with the sign it has there (`not x`, `x != 1`), once."""

    def walk(node: Formula, positive: bool) -> Iterator[Formula]:
        if isinstance(node, Atom):
            yield node if positive else neg(node)
        elif isinstance(node, Not):
            yield from walk(node.arg, not positive)
        elif isinstance(node, (And, Or)):
            for arg in node.args:
                yield from walk(arg, positive)

    seen = set()
    for part in parts:
        for literal in walk(part, True):
            if literal not in seen:
                seen.add(literal)
                yield literal


def _terms(literal: Formula) -> tuple[Term, ...]:
    atom = literal.arg if isinstance(literal, Not) else literal
    assert isinstance(atom, Atom)
    found = [atom.term] + ([atom.other] if isinstance(atom.other, Term) else [])
    # An opaque term that reads fields (`len(x) > 2`, a helper call) is a read of those flags.
    result: list[Term] = []
    for term in found:
        if term.kind is TermKind.OPAQUE:
            result.extend(Term(TermKind.FIELD, name, name, (name,)) for name in term.fields)
        else:
            result.append(term)
    return tuple(result)


def _test(literal: Formula, term: Term) -> tuple[str, str]:
    """The operator and the other side of a test, seen from `term` (e.g. `!=`, `"decode"`)."""
    if isinstance(literal, Not):
        return "not", ""
    assert isinstance(literal, Atom)
    if literal.op == "truthy":
        return "truthy", ""
    if isinstance(literal.other, Term):
        other = literal.other if literal.term == term or term.name not in literal.other.fields else literal.term
        return literal.op, other.text
    return literal.op, literal_source(literal.other.value) if isinstance(literal.other, Lit) else ""


# --- figures ------------------------------------------------------------------------------------


def figures(graph: GraphData | nx.MultiDiGraph, top: int = 10) -> dict:
    """Counts of nodes and edges by kind, the most connected flags, and the components of the flag
    co-occurrence graph (two flags joined when one rule tests both)."""
    nodes, edges = graph_parts(graph)
    labels = {n: data["label"] for n, data in nodes}
    readers: dict[str, set[str]] = defaultdict(set)
    tested: dict[str, set[str]] = defaultdict(set)
    for source, target, _, data in edges:
        if data["kind"] in ("reads", "writes") and target.startswith("flag:"):
            readers[target].add(source)
            tested[source].add(target)
    connected = sorted(readers, key=lambda n: (-len(readers[n]), n))[:top]
    components = _components(tested.values())
    return {
        "nodes": dict(sorted(Counter(data["kind"] for _, data in nodes).items())),
        "rules_by_kind": dict(sorted(Counter(data["rule_kind"] for _, data in nodes if data["kind"] == "rule").items())),
        "edges": dict(sorted(Counter(data["kind"] for _, _, _, data in edges).items())),
        "most_connected_flags": [{"flag": labels[n], "rules": len(readers[n])} for n in connected],
        "co_occurrence": {
            "flags": sum(len(c) for c in components),
            "pairs": len({(a, b) for group in tested.values() for a in group for b in group if a < b}),
            "components": len(components),
            "sizes": [len(c) for c in components if len(c) > 1],
            "singletons": sum(len(c) == 1 for c in components),
            "small": [[labels[n] for n in c] for c in components if 1 < len(c) <= SMALL_COMPONENT],
        },
    }


def _components(groups: Iterable[set[str]]) -> list[list[str]]:
    """Connected components of the graph joining every two members of a group (union-find), largest first."""
    parent: dict[str, str] = {}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for group in groups:
        members = sorted(group)
        for n in members:
            parent.setdefault(n, n)
        for n in members[1:]:
            a, b = root(members[0]), root(n)
            if a != b:
                parent[max(a, b)] = min(a, b)
    found: dict[str, list[str]] = defaultdict(list)
    for n in sorted(parent):
        found[root(n)].append(n)
    return sorted(found.values(), key=lambda c: (-len(c), c))


# --- neighbourhoods, for the `graph` command ----------------------------------------------------


def find_flag(graph: nx.MultiDiGraph, flags: Sequence[Flag], text: str) -> str:
    """The flag node for `disaggregation-mode`, `--disaggregation-mode`, `disaggregation_mode` or an alias;
    a field the catalog spells otherwise (`--elastic-ep-join-mode`) is found by the `--field-name` convention too."""
    bare = text.strip().lstrip("-").lower()  # option strings are lower case; a shouted name is still meant
    aliases = {option.lstrip("-").lower(): f.name for f in flags for option in f.flags}
    name = aliases.get(bare, bare.replace("-", "_"))
    node = f"flag:{name}"
    if node in graph:
        return node
    # Close to either spelling of a known flag; the hint names it as the catalog does (its label).
    labels = {n: data["label"] for n, data in graph.nodes(data=True) if data["kind"] == "flag"}
    known = {flag_name(n[5:]): label for n, label in labels.items()} | {label: label for label in labels.values()}
    close = difflib.get_close_matches(flag_name(name), sorted(known), n=1)
    hint = f" (did you mean {known[close[0]]}?)" if close else ""
    raise GraphQueryError(f"unknown flag {flag_name(name)}: not in the catalog and read by no rule{hint}")


def find_rule(graph: nx.MultiDiGraph, text: str) -> str:
    node = rule_node(text.strip())
    if node in graph:
        return node
    matches = sorted(n for n in graph if n.startswith("rule:") and n.startswith(node) and len(text.strip()) >= 4)
    if len(matches) == 1:
        return matches[0]
    raise GraphQueryError(f"unknown rule {text!r}: no rule has this id" + (" prefix alone" if matches else ""))


def _flag_users(graph: nx.MultiDiGraph, flag: str) -> tuple[dict[str, list[str]], list[str]]:
    """The rules testing a flag (rule -> its tests of it) and the adjustments writing it, by place."""
    tests: dict[str, set[str]] = defaultdict(set)
    writers = []
    for source, _, data in graph.in_edges(flag, data=True):
        if data["kind"] == "writes":
            writers.append(source)
        elif data["kind"] == "reads":
            tests[source].add("set" if data["op"] == "truthy" else f"{data['op']} {data['operand']}".strip())
    order = lambda n: (graph.nodes[n]["file"], graph.nodes[n]["line"], n)  # noqa: E731
    return {n: sorted(tests[n]) for n in sorted(tests, key=order)}, sorted(writers, key=order)


def _ranked_neighbours(graph: nx.MultiDiGraph, rule: str) -> list[tuple[float, str, dict[str, float]]]:
    """The rules related to one rule, with the weight of each relation, best first (as in `related`)."""
    ranked = []
    for source, target, data in (*graph.out_edges(rule, data=True), *graph.in_edges(rule, data=True)):
        if data["kind"] in RELATED_KINDS:
            ranked.append((data["weight"], target if source == rule else source, relation_weights(data)))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    return ranked


def neighbourhood(graph: nx.MultiDiGraph, center: str) -> nx.MultiDiGraph:
    """Around a flag: the rules that test or write it, what else they test, the flags it is forbidden
    with, and the related edges among those rules. Around a rule: what it tests or writes, and its
    top related rules with the edges among them."""
    if center.startswith("rule:"):
        rules = {center, *(other for _, other, _ in _ranked_neighbours(graph, center)[:MAX_RELATED])}
        readers = {center}
    else:
        tests, writers = _flag_users(graph, center)
        rules = readers = set(tests) | set(writers)
    keep = []
    for source, target, key, data in graph.edges(keys=True, data=True):
        if data["kind"] in ("reads", "writes"):
            wanted = source in readers
        elif data["kind"] == "excludes":
            wanted = center in (source, target)
        else:
            wanted = source in rules and target in rules
        if wanted:
            keep.append((source, target, key))
    sub = graph.edge_subgraph(keep).copy()
    if center not in sub:
        sub.add_node(center, **graph.nodes[center])
    return sub


def describe(graph: nx.MultiDiGraph, center: str) -> str:
    """The neighbourhood as text for people."""
    data = graph.nodes[center]
    if data["kind"] == "rule":
        return _describe_rule(graph, center)
    facts = [f"{data['kind']} {data['name']}"] + [f"{k} {data[k]}" for k in ("type", "default") if data.get(k)]
    lines = [f"{data['label']} ({'; '.join(facts)})"]
    if data["kind"] == "flag" and not data["in_catalog"]:
        lines.append("  not in the flag catalog: a field the rules read but no flag declares")
    tests, writers = _flag_users(graph, center)
    lines.append(f"tested by {len(tests)} rules" + (":" if tests else ""))
    lines.extend(f"  {_rule_line(graph, rule)}  [{', '.join(t)}]" for rule, t in tests.items())
    lines.append(f"written by {len(writers)} adjustments" + (":" if writers else ""))
    lines.extend(f"  {_rule_line(graph, w)}" for w in writers)
    excluded = sorted({(t, d["rule"]) for _, t, d in graph.out_edges(center, data=True) if d["kind"] == "excludes"}
                      | {(s, d["rule"]) for s, _, d in graph.in_edges(center, data=True) if d["kind"] == "excludes"})
    if excluded:
        lines.append("forbidden together with:")
        lines.extend(f"  {graph.nodes[f]['label']}  (rule {r})" for f, r in excluded)
    together = Counter(t for rule in tests for _, t, d in graph.out_edges(rule, data=True)
                       if d["kind"] == "reads" and t != center)
    if together:
        lines.append("tested together with (rules):")
        lines.extend(f"  {n:>3}  {graph.nodes[f]['label']}" for f, n in sorted(together.items(), key=lambda x: (-x[1], x[0]))[:15])
    return "\n".join(lines) + "\n"


def _describe_rule(graph: nx.MultiDiGraph, center: str) -> str:
    lines = [_rule_line(graph, center), f"  in {graph.nodes[center]['function']}"]
    for _, target, data in sorted(graph.out_edges(center, data=True), key=lambda e: (e[1], e[2].get("test", ""))):
        if data["kind"] == "reads":
            lines.append(f"  tests {data['test']}")
        elif data["kind"] == "writes":
            lines.append(f"  writes {graph.nodes[target]['label']} = {data['value']}")
    ranked = _ranked_neighbours(graph, center)[:MAX_RELATED]
    lines.append(f"related rules ({len(ranked)}):")
    for score, other, kinds in ranked:
        names = ", ".join(sorted(kinds, key=lambda k: (-kinds[k], KIND_ORDER.index(k))))
        lines.append(f"  {score:.2f} {_rule_line(graph, other)}  [{names}]")
    return "\n".join(lines) + "\n"


def _rule_line(graph: nx.MultiDiGraph, node: str) -> str:
    data = graph.nodes[node]
    return f"{data['rule_kind']} {node[5:]} {data['file']}:{data['line']}  {data['label']}"
