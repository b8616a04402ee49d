"""The graph's export files: node-link JSON, GraphML and Graphviz DOT, written directly with stable bytes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .graph import GraphData, graph_parts
from .relations import RELATED_KINDS

if TYPE_CHECKING:
    import networkx as nx

LINKS_KEY = "links"  # node-link JSON keeps networkx's historical key for edges


def node_link(graph: GraphData | nx.MultiDiGraph, attributes: dict | None = None) -> dict:
    """networkx node-link JSON (edges under "links"), nodes and links sorted; read it back with
    `networkx.node_link_graph(data, edges="links")`."""
    nodes, edges = graph_parts(graph)
    return {
        "directed": True,
        "multigraph": True,
        "graph": dict(sorted((attributes or {}).items())),
        "nodes": [{"id": n, **data} for n, data in nodes],
        LINKS_KEY: [{"source": s, "target": t, "key": k, **data} for s, t, k, data in edges],
    }


GRAPHML_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}


def graphml_text(graph: GraphData | nx.MultiDiGraph) -> str:
    """GraphML for Gephi and yEd, written directly (networkx's writer takes seconds on a release).

    Edge ids are `source|target|key`, unique in the file as Gephi needs; the multigraph key is also
    kept as the edge attribute `key`. Attribute types come from the values (GraphML scalars only).
    """
    from xml.sax.saxutils import quoteattr  # it imports urllib.request (30 ms): only where GraphML is written

    nodes, plain = graph_parts(graph)
    edges = [(s, t, k, {"key": k, **d}) for s, t, k, d in plain]
    node_keys = _graphml_keys(data for _, data in nodes)
    edge_keys = _graphml_keys(data for _, _, _, data in edges)
    lines = [
        "<?xml version='1.0' encoding='utf-8'?>",
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">',
    ]
    for where, keys in (("node", node_keys), ("edge", edge_keys)):
        for name, kind in keys.items():
            lines.append(f'  <key id={quoteattr(where[0] + "_" + name)} for="{where}" attr.name={quoteattr(name)} attr.type="{kind}" />')
    lines.append('  <graph edgedefault="directed">')
    text = _GraphmlText()
    for node, data in nodes:
        lines.append(f"    <node id={text.attr(node)}>{text.data('n', data)}</node>")
    for source, target, key, data in edges:
        lines.append(f"    <edge id={quoteattr(f'{source}|{target}|{key}')} source={text.attr(source)} target={text.attr(target)}>"
                     f"{text.data('e', data)}</edge>")
    lines += ["  </graph>", "</graphml>"]
    return "\n".join(lines) + "\n"


def _graphml_keys(records: Iterable[dict]) -> dict[str, str]:
    found: dict[str, str] = {}
    for data in records:
        for name, value in data.items():
            kind = GRAPHML_TYPES[type(value)]
            if found.setdefault(name, kind) != kind:
                raise TypeError(f"graph attribute {name!r} has values of two types ({found[name]}, {kind})")
    return dict(sorted(found.items()))


class _GraphmlText:
    """XML text of ids and values, memoized: a release repeats the same node ids and values thousands of times."""

    def __init__(self) -> None:
        from xml.sax.saxutils import escape, quoteattr

        self.escape, self.quoteattr = escape, quoteattr
        self.attrs: dict[str, str] = {}
        self.values: dict[tuple[type, object], str] = {}
        self.orders: dict[tuple[str, ...], tuple[str, ...]] = {}

    def attr(self, text: str) -> str:
        found = self.attrs.get(text)
        if found is None:
            found = self.attrs[text] = self.quoteattr(text)
        return found

    def data(self, prefix: str, data: dict) -> str:
        names = tuple(data)
        order = self.orders.get(names)
        if order is None:
            order = self.orders[names] = tuple(sorted(names))
        parts = []
        for name in order:
            value = data[name]
            found = self.values.get((type(value), value))
            if found is None:
                found = ("true" if value else "false") if isinstance(value, bool) else self.escape(str(value))
                self.values[(type(value), value)] = found
            parts.append(f'<data key="{prefix}_{name}">{found}</data>')
        return "".join(parts)


DOT_NODE_STYLE = {
    "raise": 'shape=box, style="rounded,filled", fillcolor="#fde2e1"',
    "assert": 'shape=box, style="rounded,filled", fillcolor="#fff1cc"',
    "adjustment": 'shape=box, style="rounded,filled,dashed", fillcolor="#e3f0ff"',
    "flag": 'shape=ellipse, style=filled, fillcolor="#e6f4e6"',
    "env": 'shape=hexagon, style=filled, fillcolor="#f0e6f7"',
    "platform": 'shape=diamond, style=filled, fillcolor="#eeeeee"',
    "model": 'shape=note, style=filled, fillcolor="#f7efe6"',
}
DOT_EDGE_STYLE = {
    "reads": 'color="#555555"',
    "writes": 'color="#1f5fbf", style=bold',
    "excludes": 'color="#c0392b", style=bold, dir=none',
    "siblings": 'color="#8e44ad", dir=none',
    "mutual-exclusion": 'color="#c0392b", dir=none, style=dashed',
    "shares-flags": 'color="#16a085", dir=none, style=dashed',
    "consecutive": 'color="#999999", dir=none, style=dotted',
    "adjusts": 'color="#1f5fbf", style=dashed',
    "same-function": 'color="#cccccc", dir=none, style=dotted',
}
DOT_LABEL_WIDTH = 40


def dot_text(graph: GraphData | nx.MultiDiGraph, name: str = "constraints") -> str:
    """Graphviz DOT, written by hand so no pydot/pygraphviz is needed; sorted, so stable bytes.

    Rules of one function sit in one cluster, so the checks of a block are drawn together; a related
    edge is styled by its strongest relation and drawn as thick as its score.
    """
    nodes, edges = graph_parts(graph)
    lines = [f"digraph {_dot_id(name)} {{",
             '  graph [rankdir=LR, fontname="Helvetica", fontsize=10, nodesep=0.15, ranksep=0.6];',
             '  node [fontname="Helvetica", fontsize=9, margin="0.06,0.03"];',
             '  edge [fontname="Helvetica", fontsize=8, arrowsize=0.6];']
    clusters: dict[tuple[str, str], list[tuple[str, dict]]] = defaultdict(list)
    for node, data in nodes:
        if data["kind"] == "rule":
            clusters[(data["file"], data["function"])].append((node, data))
    clustered = set()
    for index, ((file, function), members) in enumerate(sorted(clusters.items())):
        if len(members) > 1:
            title = f"{file.rsplit('/', 1)[-1]}::{function}"
            lines.append(f'  subgraph "cluster_{index}" {{ label={_dot_id(title)}; style="rounded,dashed"; color="#999999";')
            lines.extend(f"    {_dot_node(n, data)}" for n, data in members)
            lines.append("  }")
            clustered.update(n for n, _ in members)
    lines.extend(f"  {_dot_node(n, data)}" for n, data in nodes if n not in clustered)
    for source, target, _, data in edges:
        kind = data["kind"]
        if kind in RELATED_KINDS:
            extra = f", label={_dot_id(kind)}, penwidth={1 + min(data['weight'], 3):.1f}, tooltip={_dot_id(data['relations'])}"
        elif kind == "reads":
            test = f"{data['op']} {data['operand']}"
            extra = f", label={_dot_id(_wrap(test, 32))}" if data["op"] != "truthy" else ""
        elif kind == "writes":
            extra = f", label={_dot_id(_wrap('= ' + data['value'], 32))}"
        else:
            extra = ""
        lines.append(f"  {_dot_id(source)} -> {_dot_id(target)} [{DOT_EDGE_STYLE[kind]}{extra}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_node(node: str, data: dict) -> str:
    style = DOT_NODE_STYLE[data["rule_kind"] if data["kind"] == "rule" else data["kind"]]
    label = _wrap(data["label"]) if data["kind"] == "rule" else data["label"]
    return f"{_dot_id(node)} [label={_dot_id(label)}, {style}];"


def _wrap(text: str, width: int = DOT_LABEL_WIDTH, indent: str = "") -> str:
    words, lines, current = text.split(), [], ""
    for word in words:
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    lines.append(current)
    return "\n".join(indent + line for line in lines)


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def graph_documents(graph: GraphData | nx.MultiDiGraph, attributes: dict) -> dict[str, tuple[dict, str | None]]:
    """The three export files, in the shape `output.write_documents` takes (graph.json is validated)."""
    return {
        "graph.json": (node_link(graph, attributes), "graph.schema.json"),
        "graph.graphml": ({"text": graphml_text(graph)}, None),
        "graph.dot": ({"text": dot_text(graph)}, None),
    }
