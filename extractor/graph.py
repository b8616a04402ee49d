"""The constraint graph: rules and the flags, env vars, platform and model facts they read, with
weighted related-rule edges; each rule's `related` list, graph figures, and JSON/GraphML/DOT exports.

networkx is used here and nowhere else, and only where a graph object is asked for: `extract`
works on plain sorted dicts (`GraphData`). The graph is a MultiDiGraph because two nodes are often
joined by several edges that must stay apart: a rule tests one flag twice (`!= "host_pool"` and
`== "decode"`), an adjustment tests the flag it writes. Every edge has a string key
(`reads != "decode"`, `writes`, `related`, ...) so exports and re-reads agree. Two related rules
share one `related` edge carrying all their relations.
"""

from __future__ import annotations

import argparse
import difflib
import heapq
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

from .core.errors import EXIT_INPUT, EXIT_OK, DocumentError, GraphQueryError
from .core.formula import Spellings, atoms, fields_read, flag_name, literal_source, neg, render, render_flags
from .core.model import NEGATED_OP, And, Atom, Const, Flag, Formula, Lit, Not, Or, Related, Rule, RuleKind, Term, TermKind
from .core.serialize import dumps, read_rule_documents, records_of

if TYPE_CHECKING:  # networkx is imported where a graph is built: `extract` alone only needs `related`
    import networkx as nx

MAX_RELATED = 10
# Weight of each structural relation; shares-flags adds a cosine similarity in [0, 1] on top.
KIND_WEIGHT = {
    "siblings": 1.0,  # same guard block: the checks a reader sees together
    "mutual-exclusion": 0.8,  # one rule forbids a pair of flags, the other tests one of them
    "consecutive": 0.5,  # neighbouring guards of one function, not in one block
    "adjusts": 0.3,  # an adjustment writes a field the rule reads
    "same-function": 0.2,
}
# When two kinds give the same weight, the earlier one names the relation.
KIND_ORDER = ("siblings", "mutual-exclusion", "shares-flags", "consecutive", "adjusts", "same-function")
RELATED_KINDS = frozenset(KIND_ORDER)
# A flag a rule only inherits from its call path (an early return, a caller's branch) says less
# about the rule than one its own `if` tests.
INHERITED_WEIGHT = 0.35
SHARED_SHOWN = 5  # rarest shared flags named on a shares-flags edge
SHARES_RANK_MIN = 0.05  # a cosine below this is noise
SHARES_CANDIDATE_MIN = 20  # a feature read by at most max(this, 5% of rules) proposes candidate pairs,
SHARES_CANDIDATE_MAX = 64  # and never one read by more than this: its pairs grow with the square
SCORE_DIGITS = 4
TERM_NODE_KINDS = {TermKind.FIELD: "flag", TermKind.ENV: "env", TermKind.PLATFORM: "platform", TermKind.MODEL: "model"}
SMALL_COMPONENT = 5  # co-occurrence components up to this size are listed with their members


# --- what each rule tests itself ----------------------------------------------------------------


def _conjuncts(f: Formula) -> tuple[Formula, ...]:
    return f.args if isinstance(f, And) else (f,)


def _is_literal(f: Formula) -> bool:
    return isinstance(f, Atom) or (isinstance(f, Not) and isinstance(f.arg, Atom))


def _unsigned(atom: Atom) -> tuple:
    """An atom up to negation: `x == 1` and `x != 1` give the same key."""
    return (atom.term, frozenset((atom.op, NEGATED_OP.get(atom.op, atom.op))), atom.other)


def own_conditions(rules: Sequence[Rule]) -> dict[str, tuple[Formula, ...]]:
    """Each rule's own tests: the conjuncts of its local condition that are not the negation of an
    earlier guard of the same function.

    A guard's path condition carries `not (earlier guard)` for every check above it (that guard did
    not fire); those conjuncts say nothing about what this guard is about. A conjunct counts as
    inherited when it is the negation of an earlier guard's own test, or a compound whose atoms all
    appear in earlier guards.
    """
    groups: dict[tuple[str, str], list[Rule]] = defaultdict(list)
    for rule in rules:
        groups[(rule.location.file, rule.function)].append(rule)
    own: dict[str, tuple[Formula, ...]] = {}
    for members in groups.values():
        members.sort(key=lambda r: (r.location.line, r.id))
        exit_literals: set[Formula] = set()
        exit_atoms: set[tuple] = set()
        for rule in members:
            mine = []
            for part in _conjuncts(rule.condition):
                if isinstance(part, Const):
                    continue
                if _is_literal(part):
                    inherited = neg(part) in exit_literals
                else:
                    keys = {_unsigned(a) for a in atoms(part)}
                    inherited = bool(keys) and keys <= exit_atoms
                if not inherited:
                    mine.append(part)
            own[rule.id] = tuple(mine)
            if rule.kind is not RuleKind.ADJUSTMENT:
                exit_literals.update(p for p in mine if _is_literal(p))
                exit_atoms.update(_unsigned(a) for a in atoms(rule.condition))
    return own


def _own_fields(parts: Iterable[Formula]) -> set[str]:
    return {name for part in parts for name in fields_read(part)}


def _enables(part: Formula) -> bool:
    """A test that holds when a flag is switched on or set to a value (`x`, `x == "a"`, `x is not None`)."""
    if not isinstance(part, Atom) or part.term.kind is not TermKind.FIELD or isinstance(part.other, Term):
        return False
    value = part.other.value if isinstance(part.other, Lit) else None
    if part.op == "truthy":
        return True
    if part.op in ("==", "in", ">", ">="):
        return value not in (None, False, 0, "")
    if part.op == "is not":
        return value is None
    if part.op == "is":
        return value not in (None, False)
    return False


def forbidden_pair(rule: Rule, own: tuple[Formula, ...]) -> tuple[str, ...]:
    """The fields a guard forbids together (`if a and b: raise`), or () when it is not such a guard."""
    if rule.kind is RuleKind.ADJUSTMENT or len(own) < 2 or not all(_enables(p) for p in own):
        return ()
    names = sorted({p.term.name for p in own})  # type: ignore[union-attr]
    return tuple(names) if len(names) >= 2 else ()


# --- related rules --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Relations:
    """How the rules relate: each rule's top related rules as `(other id, score, kind)`, best first,
    and `pairs[(a, b)][kind] = weight` (with `a < b`) for the pairs in those lists."""

    pairs: dict[tuple[str, str], dict[str, float]]  # only the pairs some rule ranks in its top list
    top: dict[str, tuple[tuple[str, float, str], ...]]
    shared: dict[tuple[str, str], tuple[str, ...]]  # the rarest fields a ranked shares-flags pair shares
    own: dict[str, tuple[Formula, ...]]
    forbidden: dict[str, tuple[str, ...]]


class _Pairs:
    """Accumulates weights per unordered pair of rule ids, keeping the largest per kind."""

    def __init__(self) -> None:
        self.weights: dict[tuple[str, str], dict[str, float]] = {}

    def add(self, a: str, b: str, kind: str, weight: float) -> None:
        if a == b or weight <= 0:
            return
        kinds = self.weights.setdefault((a, b) if a < b else (b, a), {})
        if weight > kinds.get(kind, 0.0):
            kinds[kind] = weight


def relations(rules: Sequence[Rule]) -> Relations:
    """Every related pair of rules with the weight of each relation between them."""
    own = own_conditions(rules)
    pairs = _Pairs()
    _structural(rules, pairs)
    forbidden = {r.id: forbidden_pair(r, own[r.id]) for r in rules}
    _mutual_exclusion(rules, own, forbidden, pairs)
    shared, rarity = _shares_flags(rules, own, pairs)  # before `adjusts`: those pairs need no similarity
    targets = {r.id: r.target for r in rules if r.kind is RuleKind.ADJUSTMENT}
    for rule in rules:
        mine = _own_fields(own[rule.id])
        for adjustment in (a for a in rule.affected_by if a in targets):  # a partial rule set may lack some
            # A write to a field the rule only inherits (an earlier guard's negation) matters less.
            damping = 1.0 if targets.get(adjustment) in mine else INHERITED_WEIGHT
            pairs.add(adjustment, rule.id, "adjusts", KIND_WEIGHT["adjusts"] * damping)
    scored: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for (a, b), weights in pairs.weights.items():
        score = round(math.fsum(weights.values()), SCORE_DIGITS)
        scored[a].append((-score, b))
        scored[b].append((-score, a))
    top = {}
    for rule_id, candidates in scored.items():
        ranked = heapq.nsmallest(MAX_RELATED, candidates)  # score descending, then id: deterministic
        top[rule_id] = tuple((other, -score, _kind(pairs.weights[(rule_id, other) if rule_id < other else (other, rule_id)]))
                             for score, other in ranked)
    # Keep only the pairs some rule ranks: the Extraction holds this while the documents are built,
    # and tens of thousands of live dicts and sets make every garbage collection of that phase slower.
    drawn = {(a, b) if a < b else (b, a) for a, ranked in top.items() for b, _, _ in ranked}
    kept = {pair: pairs.weights[pair] for pair in sorted(drawn)}
    named = {pair: tuple(sorted((f for f in shared[pair] if isinstance(f, str)), key=lambda f: (-rarity[f], f))[:SHARED_SHOWN])
             for pair in sorted(drawn) if pair in shared}
    return Relations(kept, top, named, own, forbidden)


def _kind(weights: dict[str, float]) -> str:
    """The relation that contributes most to a pair's score; ties go to the earlier kind of KIND_ORDER."""
    return min(weights, key=lambda k: (-weights[k], KIND_ORDER.index(k)))


def _structural(rules: Sequence[Rule], pairs: _Pairs) -> None:
    """Siblings, consecutive guards and same-function pairs, from locations and enclosing `if` lines."""
    groups: dict[tuple[str, str], list[Rule]] = defaultdict(list)
    for rule in rules:
        groups[(rule.location.file, rule.function)].append(rule)
    for members in groups.values():
        members.sort(key=lambda r: (r.location.line, r.id))
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                pairs.add(a.id, b.id, "same-function", KIND_WEIGHT["same-function"])
                if _siblings(a.enclosing, b.enclosing):
                    pairs.add(a.id, b.id, "siblings", KIND_WEIGHT["siblings"])
        guards = [r for r in members if r.kind is not RuleKind.ADJUSTMENT]
        for a, b in zip(guards, guards[1:]):
            if not _siblings(a.enclosing, b.enclosing):
                pairs.add(a.id, b.id, "consecutive", KIND_WEIGHT["consecutive"])


def _siblings(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """In one guard block: the same innermost `if`, or each in its own `if` inside one enclosing block.

    `enclosing` ends with the rule's own `if` when it has one, so the block both sit in is the
    common prefix; it must leave at most that own `if` out of either and must not be empty.
    """
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return common >= 1 and common >= max(len(a), len(b)) - 1


def _mutual_exclusion(rules: Sequence[Rule], own: dict[str, tuple[Formula, ...]], forbidden: dict[str, tuple[str, ...]],
                      pairs: _Pairs) -> None:
    """A guard forbidding flags together relates to every rule that itself tests one of them, the
    more strongly the rarer that flag (a pair with `--disaggregation-mode` says little about the
    hundreds of rules testing the mode)."""
    owners: dict[str, list[str]] = defaultdict(list)
    for rule in rules:
        for name in sorted(_own_fields(own[rule.id])):
            owners[name].append(rule.id)
    scale = math.log(max(len(rules), 2))
    for rule_id, names in forbidden.items():
        for name in names:
            rarity = math.log(len(rules) / len(owners[name])) / scale if owners[name] else 0.0
            for other in owners[name]:
                pairs.add(rule_id, other, "mutual-exclusion", KIND_WEIGHT["mutual-exclusion"] * rarity)


def _features(rule: Rule, own: tuple[Formula, ...]) -> dict[object, float]:
    """What a rule reads, for similarity: every field of its trigger (own ones in full, inherited
    ones damped) and its own exact tests (`mode != "decode"` is more than sharing `mode`)."""
    mine = _own_fields(own)
    effective = rule.trigger if rule.trigger is not None else rule.condition
    names = _fields(effective) | _fields(rule.condition)
    features: dict[object, float] = {name: 1.0 if name in mine else INHERITED_WEIGHT for name in names}
    for part in own:
        if _is_literal(part) and fields_read(part):
            features[("test", render(part))] = 1.0
    return features


def _fields(f: Formula) -> set[str]:
    """Fields a formula reads. Triggers are DAGs sharing most subformulas, so each node is visited
    once (by identity) instead of walking the tree they unfold to."""
    seen: set[int] = set()
    stack = [f]
    found: set[str] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Atom):
            found.update(node.term.fields)
            if isinstance(node.other, Term):
                found.update(node.other.fields)
        elif isinstance(node, Not):
            stack.append(node.arg)
        elif isinstance(node, (And, Or)):
            stack.extend(node.args)
    return found


def _shares_flags(rules: Sequence[Rule], own: dict[str, tuple[Formula, ...]],
                  pairs: _Pairs) -> tuple[dict[tuple[str, str], frozenset[object]], dict[str, float]]:
    """Cosine similarity of TF-IDF vectors over the fields and tests each rule reads.

    The IDF (log of rules / rules reading the feature) makes a field read by nearly every rule
    (`model_path` from the dispatcher's early return) count for almost nothing and a field read by
    two rules count a lot; the cosine keeps long triggers from matching everything. Candidates are
    the pairs that share a feature read by at most 5% of the rules (and 64): sharing only common flags is no
    reason to relate two rules, and leaving those pairs out keeps this far from quadratic.
    """
    total = len(rules)
    raw = {r.id: _features(r, own[r.id]) for r in rules}
    df = Counter(feature for features in raw.values() for feature in features)
    idf = {feature: math.log(total / count) for feature, count in df.items()}
    vectors: dict[str, dict[object, float]] = {}
    norms: dict[str, float] = {}
    for rule_id, features in raw.items():
        vector = {f: w * idf[f] for f, w in features.items() if idf[f] > 0}
        if vector:
            vectors[rule_id] = vector
            # Inherited features weigh in full in the norm but damped in the dot product: two rules
            # alike only in what they inherit (a guard whose own test is opaque, after a block of
            # checks) stay far apart, however alike their inherited flags.
            norms[rule_id] = math.sqrt(math.fsum(idf[f] ** 2 for f in vector))
    cap = min(max(SHARES_CANDIDATE_MIN, total // 20), SHARES_CANDIDATE_MAX)
    postings: dict[object, list[str]] = defaultdict(list)
    for rule_id in sorted(vectors):
        for feature in vectors[rule_id]:
            if df[feature] <= cap:
                postings[feature].append(rule_id)
    candidates: set[tuple[str, str]] = set()
    for members in postings.values():
        candidates.update((a, b) for i, a in enumerate(members) for b in members[i + 1 :])
    shared: dict[tuple[str, str], frozenset[object]] = {}
    keys = {rule_id: frozenset(vector) for rule_id, vector in vectors.items()}
    for a, b in candidates:
        common = keys[a] & keys[b]
        if not common:
            continue
        va, vb = vectors[a], vectors[b]
        # fsum is exact, so the set's (hash-seeded) order cannot change the last bit of a score
        cosine = math.fsum([va[f] * vb[f] for f in common]) / (norms[a] * norms[b])
        if cosine >= SHARES_RANK_MIN:
            pairs.add(a, b, "shares-flags", cosine)
            shared[(a, b) if a < b else (b, a)] = common  # fields and tests; the fields are named on edges
    return shared, {f: w for f, w in idf.items() if isinstance(f, str)}


def with_related(rules: Sequence[Rule], relations_: Relations | None = None) -> list[Rule]:
    """The rules with `related` filled: at most ten, by score (descending), then id."""
    found = relations_ if relations_ is not None else relations(rules)
    messages = {r.id: r.message for r in rules}
    return [
        replace(rule, related=tuple(Related(other, messages[other], kind, score) for other, score, kind in found.top.get(rule.id, ())))
        for rule in rules
    ]


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


def _parts(graph: GraphData | nx.MultiDiGraph) -> tuple[list[tuple[str, dict]], list[tuple[str, str, str, dict]]]:
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
    nodes, edges = _parts(graph)
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


# --- exports ------------------------------------------------------------------------------------

LINKS_KEY = "links"  # node-link JSON keeps networkx's historical key for edges


def node_link(graph: GraphData | nx.MultiDiGraph, attributes: dict | None = None) -> dict:
    """networkx node-link JSON (edges under "links"), nodes and links sorted; read it back with
    `networkx.node_link_graph(data, edges="links")`."""
    nodes, edges = _parts(graph)
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
    nodes, plain = _parts(graph)
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
        self.attrs: dict[str, str] = {}
        self.values: dict[tuple[type, object], str] = {}
        self.orders: dict[tuple[str, ...], tuple[str, ...]] = {}

    def attr(self, text: str) -> str:
        found = self.attrs.get(text)
        if found is None:
            found = self.attrs[text] = quoteattr(text)
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
                found = ("true" if value else "false") if isinstance(value, bool) else escape(str(value))
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
    nodes, edges = _parts(graph)
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


def load_rules_file(path: Path) -> tuple[list[Rule], list[Flag]]:
    """Rules from an existing rules.json (or a folder holding one) and flags from the flags.json beside it."""
    try:
        rules, flags = records_of(*read_rule_documents(path), where=str(path))
    except DocumentError as error:
        raise GraphQueryError(str(error)) from None
    return list(rules), list(flags)


def is_rules_file(path: str) -> bool:
    candidate = Path(path)
    return (candidate.is_file() and candidate.suffix == ".json") or (candidate.is_dir() and (candidate / "rules.json").is_file())


def query(rules: Sequence[Rule], flags: Sequence[Flag], flag: str | None, rule: str | None, fmt: str) -> str:
    """The `graph` command's answer: the neighbourhood of one flag or rule (or the whole graph) as text, DOT or JSON."""
    graph = build_graph(rules, flags)
    if flag is None and rule is None:
        if fmt == "dot":
            return dot_text(graph)
        if fmt == "json":
            return dumps(node_link(graph))
        return dumps(figures(graph))
    center = find_flag(graph, flags, flag) if flag is not None else find_rule(graph, rule or "")
    if fmt == "dot":
        return dot_text(neighbourhood(graph, center), name=center)
    if fmt == "json":
        return dumps(node_link(neighbourhood(graph, center), {"center": center}))
    return describe(graph, center)



# --- the `graph` command --------------------------------------------------------------------------


def add_parser(commands) -> None:
    from .cli import add_source_arguments

    parser = commands.add_parser(
        "graph", help="the constraint graph around one flag or rule",
        description="Print the rules, flags and related rules around one flag (--flag) or rule (--rule); "
                    "with neither, the graph figures. SOURCE is as for `extract`, or an existing rules.json "
                    "(flags.json beside it is read when present).")
    add_source_arguments(parser)
    parser.add_argument("--keep-going", action="store_true", help="skip files that fail to parse")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--flag", help="a flag, with or without dashes: disaggregation-mode, --flag=--tp-size")
    what.add_argument("--rule", metavar="ID", help="a rule id (or a unique prefix of at least 4 characters)")
    parser.add_argument("--format", choices=("text", "dot", "json"), default="text")
    parser.set_defaults(func=cmd_graph)


def cmd_graph(args: argparse.Namespace) -> int:
    from .cli import run_extract

    try:
        if args.path and not args.release and not args.git and is_rules_file(args.path):
            rules, flags = load_rules_file(Path(args.path))
        else:
            ex = run_extract(args)
            rules, flags = list(ex.rules), list(ex.flags)
        sys.stdout.write(query(rules, flags, args.flag, args.rule, args.format))
    except GraphQueryError as error:
        print(f"sglang-constraints: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK
