"""Related rules: each rule's own tests, forbidden pairs, weighted relations and the `related` lists.

A guard's own tests leave out the negations of earlier guards; the relations are siblings, mutual
exclusion, shared flags, consecutive guards, adjusts and same function, each with its weight.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass, replace

from ...core.formula import atoms, fields_read, neg, render
from ...core.model import NEGATED_OP, And, Atom, Const, Formula, Lit, Not, Or, Related, Rule, RuleKind, Term, TermKind

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


def relations(rules: Sequence[Rule], memo: MutableMapping | None = None) -> Relations:
    """Every related pair of rules with the weight of each relation between them.

    With `memo` (a dict an earlier call filled, kept by the caller), the weights are reused when every
    rule reads the same to them as then: its kind, place, conditions, trigger, target and the rules
    that adjust it, by position; not its id or message (a reworded message changes both). So is what
    the ranking reads of them (`_Ranking`); the ranking itself, which breaks ties by id, is made anew
    from that. (Keeping the ranked lists too would save as little as it costs to keep them.)"""
    if memo is None:
        return _ranked(*_weights(rules))
    position = {r.id: i for i, r in enumerate(rules)}
    ids = tuple(r.id for r in rules)
    if len(position) != len(ids):  # ids are unique in an extraction; a rule set that repeats one is ranked by id
        return _ranked(*_weights(rules))
    view = _relation_view(rules, position)
    kept = memo.get("relations")
    if kept is None or kept[0] != view:
        weights, shared, rarity, own, forbidden = _weights(rules)
        ranking = _ranking(ids, position, weights, shared, rarity)
        kept = memo["relations"] = (view, ranking, {position[i]: parts for i, parts in own.items()},
                                    {position[i]: names for i, names in forbidden.items()})
    return _ranked_by(*kept[1:], ids)


@dataclass(frozen=True, slots=True)
class _Ranking:
    """What the ranking reads of the kept weights, by position, none of it an id: each rule's
    candidates in tiers of one score, best first, as many tiers as fill its top list (ties at the last
    place are broken by id: the whole tier); and for each pair in a tier, its weights, the kind that
    names it and the rarest features it shares (None when it shares none)."""

    tiers: tuple[tuple[tuple[float, tuple[int, ...]], ...], ...]
    pairs: dict[tuple[int, int], tuple[dict[str, float], str, tuple[str, ...] | None]]


def _ranking(ids: tuple[str, ...], position: dict[str, int], weights: dict[tuple[str, str], dict[str, float]],
             shared: dict[tuple[str, str], frozenset[object]], rarity: dict[str, float]) -> _Ranking:
    """What ranking reads of every pair's weights, by position: enough to rank again under any ids
    (a rule's pairs scoring at least its tenth best score, ties at that score all kept), a fraction
    of the pairs."""
    scored: dict[int, dict[float, list[int]]] = defaultdict(lambda: defaultdict(list))
    for (a, b), kinds in weights.items():
        score = round(math.fsum(kinds.values()), SCORE_DIGITS)
        scored[position[a]][score].append(position[b])
        scored[position[b]][score].append(position[a])
    order = _rarity_order(rarity)
    tiers = []
    pairs: dict[tuple[int, int], tuple[dict[str, float], str, tuple[str, ...] | None]] = {}
    for p in range(len(ids)):
        chosen: list[tuple[float, tuple[int, ...]]] = []
        filled = 0
        for score in sorted(scored.get(p, {}), reverse=True):
            if filled >= MAX_RELATED:
                break
            members = tuple(sorted(scored[p][score]))
            chosen.append((score, members))
            filled += len(members)
            for q in members:
                pair = (p, q) if p < q else (q, p)
                if pair not in pairs:
                    key = _pair(ids[p], ids[q])
                    named = _named(shared[key], order) if key in shared else None
                    pairs[pair] = (weights[key], _kind(weights[key]), named)
        tiers.append(tuple(chosen))
    return _Ranking(tuple(tiers), pairs)


def _ranked_by(ranking: _Ranking, own: dict[int, tuple[Formula, ...]], forbidden: dict[int, tuple[str, ...]],
               ids: tuple[str, ...]) -> Relations:
    """`_ranked` of the kept weights under these ids (the same result: ties broken by id)."""
    top = {}
    drawn: dict[tuple[str, str], tuple[int, int]] = {}
    for p, tiers in enumerate(ranking.tiers):
        if not tiers:
            continue
        ranked: list[tuple[str, float, str]] = []
        for score, members in tiers:
            for q in sorted(members, key=ids.__getitem__) if len(members) > 1 else members:
                pair = (p, q) if p < q else (q, p)
                ranked.append((ids[q], score, ranking.pairs[pair][1]))
                drawn[_pair(ids[p], ids[q])] = pair
                if len(ranked) == MAX_RELATED:
                    break
            if len(ranked) == MAX_RELATED:
                break
        top[ids[p]] = tuple(ranked)
    kept = {}
    named = {}
    for pair in sorted(drawn):
        weights, _, shares = ranking.pairs[drawn[pair]]
        kept[pair] = weights
        if shares is not None:
            named[pair] = shares
    return Relations(kept, top, named, {ids[i]: parts for i, parts in own.items()},
                     {ids[i]: names for i, names in forbidden.items()})


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def _relation_view(rules: Sequence[Rule], position: dict[str, int]) -> tuple:
    """What the weights read of each rule, ids given as positions; and, among rules of one function on
    one line, the order of their ids (it orders them where nothing else does)."""
    same_line: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    for rule in rules:
        same_line[(rule.location.file, rule.function, rule.location.line)].append(rule.id)
    rank = {rule_id: index for members in same_line.values() for index, rule_id in enumerate(sorted(members))}
    return tuple(
        (r.kind, r.location.file, r.location.line, r.function, r.enclosing, r.condition, r.trigger, r.target,
         tuple(sorted(position[a] for a in r.affected_by if a in position)),
         tuple(sorted(a for a in r.affected_by if a not in position)), rank[r.id])
        for r in rules
    )


def _weights(rules: Sequence[Rule]) -> tuple[dict, dict, dict, dict, dict]:
    """The weights of every related pair, the features shared-flags pairs share, each feature's
    rarity, each rule's own tests and the flags it forbids together."""
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
    return pairs.weights, shared, rarity, own, forbidden


def _ranked(weights: dict[tuple[str, str], dict[str, float]], shared: dict[tuple[str, str], frozenset[object]],
            rarity: dict[str, float], own: dict[str, tuple[Formula, ...]], forbidden: dict[str, tuple[str, ...]],
            ) -> Relations:
    """Each rule's top related rules, by score then id, and what the exports show of the pairs ranked."""
    scored: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for (a, b), kinds in weights.items():
        score = round(math.fsum(kinds.values()), SCORE_DIGITS)
        scored[a].append((-score, b))
        scored[b].append((-score, a))
    top = {}
    kinds: dict[tuple[str, str], str] = {}  # each pair is ranked from both ends: its kind found once
    for rule_id, candidates in scored.items():
        candidates.sort()  # score descending, then id: deterministic (a C sort beats a heap this small)
        ranked = []
        for score, other in candidates[:MAX_RELATED]:
            pair = _pair(rule_id, other)
            kind = kinds.get(pair)
            if kind is None:
                kind = kinds[pair] = _kind(weights[pair])
            ranked.append((other, -score, kind))
        top[rule_id] = tuple(ranked)
    # Keep only the pairs some rule ranks: the Extraction holds this while the documents are built,
    # and tens of thousands of live dicts and sets make every garbage collection of that phase slower.
    drawn = sorted(kinds)
    kept = {pair: weights[pair] for pair in drawn}
    order = _rarity_order(rarity)
    named = {pair: _named(shared[pair], order) for pair in drawn if pair in shared}
    return Relations(kept, top, named, own, forbidden)


def _rarity_order(rarity: dict[str, float]) -> dict[str, int]:
    """Shared flags named rarest first, then by name: one ranking of them all, read by a C key."""
    return {f: i for i, f in enumerate(sorted((f for f in rarity if isinstance(f, str)), key=lambda f: (-rarity[f], f)))}


def _named(shared: frozenset[object], order: dict[str, int]) -> tuple[str, ...]:
    """The rarest fields a pair shares, as many as an edge names."""
    return tuple(sorted((f for f in shared if f in order), key=order.__getitem__)[:SHARED_SHOWN])  # type: ignore[misc]


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
