"""Differences between two rule sets and flag catalogs, as typed changes that explain themselves.

`find_changes(old, new)` yields the changes of `changes`: rules are paired by id first, then by
best match among the rest, so a reworded message or a guard moved by a refactor reads as changed or
moved, not as removed plus added. Conditions are compared as formulas (`logic.solver.implies`), not
as text. The changes are reported as a JSON document, text or Markdown.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ...analysis.rules import function_key, normalized_message
from ...core.formula import Spellings, at_values, fields_read, render
from ...core.model import Flag, Formula, Or, Rule, RuleKind
from ...core.serialize import SCHEMA_VERSION
from ...logic.releases import shipped_flag_history
from ...logic.solver import implies
from .changes import (
    KIND_ALIASES,
    KIND_ORDER,
    KINDS,
    TITLES,
    AdjustmentAdded,
    AdjustmentConditionChanged,
    AdjustmentMoved,
    AdjustmentNarrowed,
    AdjustmentRemoved,
    AdjustmentValueChanged,
    AdjustmentWidened,
    Added,
    CaughtEarlier,
    RelaxedByNewFlags,
    Change,
    ConditionChanged,
    ExceptionChanged,
    FlagAdded,
    FlagChange,
    FlagChoicesChanged,
    FlagDefaultChanged,
    FlagRemoved,
    MessageChanged,
    Moved,
    Relaxed,
    Removed,
    RuleChange,
    Tightened,
    canonical,
)
from ...core.cache import code_fingerprint, compact_path, read_pickled
from .sides import Snapshot

DIFF_SCHEMA_ID = "https://github.com/sglang-constraints/schemas/diff.schema.json"


# Matching thresholds (difflib ratios), strongest evidence first.


# Matching thresholds (difflib ratios), strongest evidence first.
_SAME_FUNCTION_MESSAGE = 0.6  # same function, message reworded
_SAME_MESSAGE_CONDITION = 0.5  # same message that says little ("{reason}"): the condition must be alike
_SIMILAR_MESSAGE = 0.85  # reworded and moved: needs a very close message and a shared field
_REWRITTEN_MESSAGE = 0.6  # last resort: a shared field and a message still more alike than not


# ---- matching --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pair:
    old: Rule
    new: Rule
    matched_by: str


def match_rules(old: Sequence[Rule], new: Sequence[Rule]) -> tuple[list[Pair], list[Rule], list[Rule]]:
    """Pairs of the same rule on both sides, then the unpaired old (removed) and new (added) rules."""
    new_by_id = {r.id: r for r in new}
    pairs = [Pair(r, new_by_id[r.id], "id") for r in old if r.id in new_by_id]
    paired_ids = {p.old.id for p in pairs}
    rest_old = [r for r in old if r.id not in paired_ids]
    rest_new = [r for r in new if r.id not in paired_ids]
    # Guards pair only with guards and adjustments with adjustments of the same field.
    for guards in (True, False):
        side_old = [r for r in rest_old if (r.kind is not RuleKind.ADJUSTMENT) == guards]
        side_new = [r for r in rest_new if (r.kind is not RuleKind.ADJUSTMENT) == guards]
        pairs += _best_pairs(side_old, side_new)
    return (pairs, *_unpaired(old, new, pairs))


def _unpaired(old: Sequence[Rule], new: Sequence[Rule], pairs: Sequence[Pair]) -> tuple[list[Rule], list[Rule]]:
    paired_old = {id(p.old) for p in pairs}
    paired_new = {id(p.new) for p in pairs}
    return [r for r in old if id(r) not in paired_old], [r for r in new if id(r) not in paired_new]


def _best_pairs(old: list[Rule], new: list[Rule]) -> list[Pair]:
    """Greedy best match: strongest evidence first, then highest similarity, then source order."""
    candidates: dict[tuple[int, int], tuple[int, float, str]] = {}

    def offer(i: int, j: int, tier: int, score: float, how: str) -> None:
        a, b = old[i], new[j]
        if a.kind is RuleKind.ADJUSTMENT and a.target != b.target:
            return
        if (i, j) not in candidates or (tier, score) > candidates[(i, j)][:2]:
            candidates[(i, j)] = (tier, score, how)

    by_function: dict[str, list[int]] = defaultdict(list)
    by_message: dict[str, list[int]] = defaultdict(list)
    for j, b in enumerate(new):
        by_function[function_key(b.function)].append(j)
        by_message[normalized_message(b.message)].append(j)
    for i, a in enumerate(old):
        message = normalized_message(a.message)
        for j in by_function.get(function_key(a.function), ()):
            score = _ratio(message, normalized_message(new[j].message))
            if score >= _SAME_FUNCTION_MESSAGE:
                offer(i, j, 2, score, "function+message")
        # An identical message is evidence enough, unless it says nothing ("{reason}"): then the
        # condition must be alike too. Among several, the closest condition wins.
        telling = len(re.sub(r"\W|\{\}", "", message)) >= 8
        for j in by_message.get(message, ()):
            score = _ratio(render(a.condition), render(new[j].condition))
            if telling or score >= _SAME_MESSAGE_CONDITION:
                offer(i, j, 2, score, "message+condition")
    _similar_messages(old, new, offer)
    ranked = sorted(candidates.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    used_old: set[int] = set()
    used_new: set[int] = set()
    pairs = []
    for (i, j), (_, _, how) in ranked:
        if i not in used_old and j not in used_new:
            used_old.add(i)
            used_new.add(j)
            pairs.append(Pair(old[i], new[j], how))
    return pairs


def _similar_messages(old: list[Rule], new: list[Rule], offer) -> None:
    """Reworded and moved at once: a close message and a field read in common."""
    old_fields = [set(fields_read(a.condition)) for a in old]
    old_messages = [normalized_message(a.message) for a in old]
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    for j, b in enumerate(new):
        fields = set(fields_read(b.condition))
        matcher.set_seq2(normalized_message(b.message))  # the expensive side, prepared once
        for i, message in enumerate(old_messages):
            if not (fields & old_fields[i] or not fields and not old_fields[i]):
                continue
            matcher.set_seq1(message)
            if (matcher.real_quick_ratio() >= _REWRITTEN_MESSAGE and matcher.quick_ratio() >= _REWRITTEN_MESSAGE
                    and (score := matcher.ratio()) >= _REWRITTEN_MESSAGE):
                offer(i, j, 1 if score >= _SIMILAR_MESSAGE else 0, score, "similar-message")


@lru_cache(maxsize=65536)
def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


# ---- changes between two snapshots ----------------------------------------------------------------


def field_domains(*catalogs: Iterable[Flag]) -> dict[str, tuple[object, ...]]:
    """Values each field can take on the command line, where the catalogs say (choices, booleans).

    A field is restricted only if every catalog that has it restricts it; defaults count as values.
    """
    domains: dict[str, list[object]] = {}
    open_fields: set[str] = set()
    for catalog in catalogs:
        for flag in catalog:
            if flag.choices is not None:
                values = list(flag.choices)
            elif flag.action in ("store_true", "store_false"):
                values = [False, True]
            else:
                open_fields.add(flag.name)
                continue
            if flag.default_is_literal:
                values.append(flag.default_value)
            known = domains.setdefault(flag.name, [])
            known += [v for v in values if not any(type(v) is type(k) and v == k for k in known)]
    return {name: tuple(values) for name, values in sorted(domains.items()) if name not in open_fields}


@dataclass(slots=True)
class Memo:
    """What diffing two snapshots decided, kept (see `memo_path`) so the same two need neither the
    matching nor the solver again: the pairs as positions in the rule lists, and each pair's verdict."""

    pairs: list[tuple[int, int, str]] | None = None
    verdicts: dict[tuple[str, str], str | None] = field(default_factory=dict)  # by the two rule ids

    def matched(self, old: Sequence[Rule], new: Sequence[Rule]) -> tuple[list[Pair], list[Rule], list[Rule]]:
        """`match_rules(old, new)`, read back when this memo has it."""
        if self.pairs is None:
            pairs, removed, added = match_rules(old, new)
            where_old = {id(r): i for i, r in enumerate(old)}
            where_new = {id(r): j for j, r in enumerate(new)}
            self.pairs = [(where_old[id(p.old)], where_new[id(p.new)], p.matched_by) for p in pairs]
            return pairs, removed, added
        pairs = [Pair(old[i], new[j], how) for i, j, how in self.pairs]
        return pairs, *_unpaired(old, new, pairs)


def find_changes(old: Snapshot, new: Snapshot, compare: str = "trigger", memo: Memo | None = None) -> Iterator[Change]:
    """Every change from `old` to `new`, in a stable order: by kind, then by place.

    `memo`, when given, is read before matching and deciding conditions and gets what was decided:
    the same two snapshots then need no matching and no solver the second time."""
    if compare not in ("trigger", "condition"):
        raise ValueError(f"compare must be 'trigger' or 'condition', not {compare!r}")
    changes: list[Change] = []
    spellings = (Spellings.of(old.flags), Spellings.of(new.flags))
    memo = Memo() if memo is None else memo
    pairs, removed, added = memo.matched(old.rules, new.rules)
    for rule in removed:
        gone = AdjustmentRemoved if rule.kind is RuleKind.ADJUSTMENT else Removed
        changes.append(gone(rule, None, "", spellings=spellings))
    for rule in added:
        came = AdjustmentAdded if rule.kind is RuleKind.ADJUSTMENT else Added
        changes.append(came(None, rule, "", spellings=spellings))
    domains = field_domains(old.flags, new.flags)
    earlier = _EarlierGuards(new.rules, {r.id for r in added}, _new_only_defaults(old.flags, new.flags))
    for pair in pairs:
        changes.extend(_pair_changes(pair, compare, domains, spellings, memo.verdicts, earlier))
    changes.extend(_flag_changes(old.flags, new.flags, str(new.source.get("release") or "")))
    yield from sorted(changes, key=_change_order)


def _change_order(change: Change) -> tuple:
    if isinstance(change, FlagChange):
        return (KIND_ORDER[change.kind], change.flag.name, "", 0)
    rule = change.rule
    return (KIND_ORDER[change.kind], rule.location.file, rule.location.line, rule.id)


class _EarlierGuards:
    """The guards of the new side that run before a given one and read a flag it reads: a launch a
    guard's new trigger leaves out may stop at one of them first, and stays rejected."""

    LIMIT = 12  # the nearest ones before the guard: a disjunction the solver decides quickly

    def __init__(self, rules: Sequence[Rule], added: set[str], new_only: Mapping[str, object]) -> None:
        self.guards = sorted((r for r in rules if r.kind is not RuleKind.ADJUSTMENT and r.order is not None),
                             key=lambda r: r.order or 0)
        self.added = added
        self.new_only = new_only  # fields only the new release has, at their defaults (an old launch's values)

    def before(self, rule: Rule, reading: set[str]) -> list[Rule]:
        found = [g for g in self.guards if (g.order or 0) < (rule.order or 0)
                 and not reading.isdisjoint(set(fields_read(g.effective)) - {"model_path"})]
        return found[-self.LIMIT:]


def _pair_changes(pair: Pair, compare: str, domains: Mapping[str, Sequence[object]],
                  spellings: tuple[Spellings, Spellings],
                  verdicts: MutableMapping[tuple[str, str], str | None],
                  earlier: _EarlierGuards | None = None) -> Iterator[RuleChange]:
    a, b, how = pair.old, pair.new, pair.matched_by
    adjustment = a.kind is RuleKind.ADJUSTMENT
    if a.location.file != b.location.file or a.function != b.function:
        yield (AdjustmentMoved if adjustment else Moved)(a, b, how, spellings=spellings)
    if adjustment:
        if " ".join((a.value or "").split()) != " ".join((b.value or "").split()):
            yield AdjustmentValueChanged(a, b, how, spellings=spellings)
    else:
        if normalized_message(a.message) != normalized_message(b.message):
            yield MessageChanged(a, b, how, spellings=spellings)
        if a.exception != b.exception or a.kind != b.kind:
            yield ExceptionChanged(a, b, how, spellings=spellings)
    if (a.id, b.id) not in verdicts:
        verdicts[a.id, b.id] = compare_conditions(a, b, compare, domains)
    verdict = verdicts[a.id, b.id]
    if verdict == "relaxed" and not adjustment and compare == "trigger" and earlier is not None:
        # Relaxed only when fewer launches are rejected: one that a guard running first now stops
        # (often a guard new in this release) is rejected all the same.
        key = (a.id, b.id + "|earlier")
        if key not in verdicts:
            verdicts[key] = _caught_by(a, b, earlier, domains)
        if verdicts[key] is not None:
            yield CaughtEarlier(a, b, how, verdicts[key] or "", compare, spellings=spellings)
            return
        # A launch that avoids it only through a flag the old release did not have was no launch of
        # the old release: for those it took, the new fields hold their defaults.
        key = (a.id, b.id + "|new-flags")
        if key not in verdicts:
            now = canonical(b.effective)
            narrowed = at_values(now, earlier.new_only)
            verdicts[key] = "yes" if narrowed is not now and implies(canonical(a.effective), narrowed, domains) else None
        if verdicts[key] is not None:
            names = sorted(set(fields_read(b.effective)) & set(earlier.new_only))
            yield RelaxedByNewFlags(a, b, how, "avoided only with " + ", ".join(spellings[1].text(n) for n in names),
                                    compare, spellings=spellings)
            return
    if verdict is not None:
        kinds = {
            "tightened": AdjustmentWidened if adjustment else Tightened,
            "relaxed": AdjustmentNarrowed if adjustment else Relaxed,
            "changed": AdjustmentConditionChanged if adjustment else ConditionChanged,
        }
        local = canonical(a.condition) != canonical(b.condition)
        note = "" if compare == "condition" else (
            "local condition changed" if local else
            "local condition unchanged: earlier checks or the call path changed")
        yield kinds[verdict](a, b, how, note, compare, spellings=spellings)


def _new_only_defaults(old: Iterable[Flag], new: Iterable[Flag]) -> dict[str, object]:
    """The fields only the new catalog has, with a literal default: their value in every launch the
    old release accepted (the old parser knew no option for them)."""
    known = {f.name for f in old}
    return {f.name: f.default_value for f in new if f.name not in known and f.default_is_literal}


def _caught_by(a: Rule, b: Rule, earlier: _EarlierGuards, domains: Mapping[str, Sequence[object]]) -> str | None:
    """When every launch the old guard rejected is rejected by the new one or by a guard that runs
    before it, which of those (the added ones named first); else None."""
    guards = earlier.before(b, set(fields_read(a.effective)) - {"model_path"})
    if not guards or not implies(canonical(a.effective), canonical(Or((b.effective, *(g.effective for g in guards)))),
                                 domains):
        return None
    named = sorted(guards, key=lambda g: (g.id not in earlier.added, -(g.order or 0)))[:3]
    places = ", ".join(f"{g.location.file}:{g.location.line}" + (" (new)" if g.id in earlier.added else "")
                       for g in named)
    return f"the launches it no longer reaches stop first at {places}" + (" or another" if len(guards) > 3 else "")


def memo_path(old_key: str, new_key: str, compare: str, folder: Path | None = None) -> Path:
    """Where the memo of diffing the extractions `old_key` and `new_key` is kept, as this code decides
    it (the solver is part of its fingerprint)."""
    return compact_path("diff", old_key, new_key, compare, code_fingerprint("products.history.diff"), folder=folder)


def known_memo(path: Path) -> Memo:
    """The memo kept at `path`, else an empty one."""
    found = read_pickled(path)
    return found if isinstance(found, Memo) else Memo()


def compare_conditions(a: Rule, b: Rule, compare: str = "trigger",
                       domains: Mapping[str, Sequence[object]] | None = None) -> str | None:
    """None when equivalent; "tightened" when b holds in more cases (more launches rejected by a
    guard), "relaxed" when in fewer, "changed" when neither contains the other."""
    fa: Formula = canonical(a.effective if compare == "trigger" else a.condition)
    fb: Formula = canonical(b.effective if compare == "trigger" else b.condition)
    if fa == fb:
        return None
    forward, backward = implies(fa, fb, domains), implies(fb, fa, domains)
    if forward and backward:
        return None
    if forward:
        return "tightened"
    if backward:
        return "relaxed"
    return "changed"


def _flag_changes(old: Iterable[Flag], new: Iterable[Flag], release: str = "") -> Iterator[FlagChange]:
    """`release`: the new side's release, whose place in the shipped flag history says since when a
    removed flag is gone, which releases accepted it and what sets its field now."""
    before = {f.name: f for f in old}
    after = {f.name: f for f in new}
    history = shipped_flag_history() if release else None
    for name in sorted(before.keys() - after.keys()):
        flag = before[name]
        story = next((found for option in flag.flags if history is not None
                      and (found := history.story(option, release))), None)
        yield FlagRemoved(flag, None, story or ("" if flag.flags else "a field no option set"))
    for name in sorted(after.keys() - before.keys()):
        yield FlagAdded(None, after[name])
    for name in sorted(before.keys() & after.keys()):
        a, b = before[name], after[name]
        if " ".join(str(a.default).split()) != " ".join(str(b.default).split()):
            yield FlagDefaultChanged(a, b)
        if a.choices != b.choices:
            yield FlagChoicesChanged(a, b)


# ---- documents and reports -------------------------------------------------------------------------


def counts(changes: Iterable[Change | Mapping]) -> dict[str, int]:
    found = defaultdict(int)
    for change in changes:
        found[change["kind"] if isinstance(change, Mapping) else change.kind] += 1
    return {kind: found.get(kind, 0) for kind in KINDS}


def diff_document(old: Snapshot, new: Snapshot, changes: Sequence[Change], compare: str = "trigger") -> dict:
    from ..extraction.output import GENERATOR  # output imports the extractor; only documents need it

    return {
        "schema_version": SCHEMA_VERSION,
        "schema": DIFF_SCHEMA_ID,
        "generator": GENERATOR,
        "old": {"label": old.label, "source": dict(old.source), "rules": len(old.rules), "flags": len(old.flags)},
        "new": {"label": new.label, "source": dict(new.source), "rules": len(new.rules), "flags": len(new.flags)},
        "compare": compare,
        "summary": counts(changes),
        "changes": [c.as_dict() for c in changes],
    }


def render_text(old: Snapshot, new: Snapshot, changes: Sequence[Change]) -> str:
    lines = [f"{old.label} -> {new.label}: " + _summary_line(changes)]
    for kind, group in _grouped(changes):
        lines += ["", f"{kind} ({len(group)}): {TITLES[kind]}"]
        lines += [f"  {c.explain('text')}" for c in group]
    return "\n".join(lines) + "\n"


def render_markdown(old: Snapshot, new: Snapshot, changes: Sequence[Change]) -> str:
    lines = [f"# Constraint changes: {old.label} → {new.label}", "", _summary_line(changes)]
    for kind, group in _grouped(changes):
        lines += ["", f"## {TITLES[kind]} ({len(group)})", ""]
        lines += [f"- {c.explain('markdown')}" for c in group]
    return "\n".join(lines) + "\n"


def _summary_line(changes: Sequence[Change]) -> str:
    found = {k: n for k, n in counts(changes).items() if n}
    return ", ".join(f"{n} {k}" for k, n in found.items()) if found else "no changes"


_FLAGS_FIRST = ("flag-removed", "flag-choices-changed", "flag-default-changed", "flag-added")


def _grouped(changes: Sequence[Change]) -> list[tuple[str, list[Change]]]:
    """Changes by kind; the flags' first: a removed or renamed option breaks a launch before any guard."""
    groups: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        groups[change.kind].append(change)
    ordered = [*_FLAGS_FIRST, *(k for k in KINDS if k not in _FLAGS_FIRST)]
    return [(kind, groups[kind]) for kind in ordered if groups.get(kind)]


def parse_kinds(text: str) -> frozenset[str]:
    """`added,tightened` (or `all`) to a set of kinds; ValueError names an unknown one."""
    chosen = set()
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item == "all":
            chosen |= set(KINDS)
            continue
        kind = KIND_ALIASES.get(item, item)
        if kind not in KINDS:
            raise ValueError(f"unknown change kind {item!r}; choose from all, {', '.join(KINDS)}")
        chosen.add(kind)
    return frozenset(chosen)
