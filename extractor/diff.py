"""Differences between two rule sets and flag catalogs, as typed changes that explain themselves.

One small class per kind of change, each with `as_dict()` (JSON) and `explain(style)` (text or
Markdown). `find_changes(old, new)` yields them: rules are paired by id first, then by best match
among the rest, so a reworded message or a guard moved by a refactor reads as changed or moved,
not as removed plus added. Conditions are compared as formulas (`logic.implies`), not as text.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

from packaging.version import InvalidVersion, Version

from .core.formula import CONVENTION, Spellings, fields_read, render, render_flags
from .sources.layout import find_layout
from .logic.solver import implies
from .core.model import And, Atom, Flag, Formula, Not, Or, Rule, RuleKind, Term, TermKind
from .analysis.rules import _function_key, normalized_message
from .core.errors import EXIT_FINDINGS, EXIT_OK, DocumentError, SourceError, UsageError
from .core.serialize import SCHEMA_VERSION, dumps, read_rule_documents, records_of
from .sources.trees import SourceTree, cache_root, git_tree, path_tree, release_tree

DIFF_SCHEMA_ID = "https://github.com/sglang-constraints/schemas/diff.schema.json"
STYLES = ("text", "markdown")
_EXCERPT = 240  # characters of a condition shown in text and Markdown (JSON has them whole)

# Matching thresholds (difflib ratios), strongest evidence first.
_SAME_FUNCTION_MESSAGE = 0.6  # same function, message reworded
_SAME_MESSAGE_CONDITION = 0.5  # same message that says little ("{reason}"): the condition must be alike
_SIMILAR_MESSAGE = 0.85  # reworded and moved: needs a very close message and a shared field
_REWRITTEN_MESSAGE = 0.6  # last resort: a shared field and a message still more alike than not


# ---- the two sides ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The rules and flags of one source, as read from its documents."""

    label: str
    source: Mapping[str, object]
    rules: tuple[Rule, ...]
    flags: tuple[Flag, ...] = ()

    @classmethod
    def from_documents(cls, rules_document: Mapping, flags_document: Mapping | None = None,
                       where: str = "rules.json") -> Snapshot:
        source = rules_document.get("source", {})
        source = dict(source) if isinstance(source, Mapping) else {}
        rules, flags = records_of({"rules": rules_document.get("rules", ())}, dict(flags_document or {}), where)
        return cls(label=str(source.get("label", "?")), source=source, rules=rules, flags=flags)


# ---- changes -----------------------------------------------------------------------------------------


def _where(rule: Rule) -> str:
    return f"{rule.location.file}:{rule.location.line}"


def _excerpt(text: str, limit: int = _EXCERPT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quote(text: str) -> str:
    return json.dumps(_excerpt(" ".join(text.split()), 160), ensure_ascii=False)


def _side(rule: Rule, spellings: Spellings) -> dict:
    data = {
        "id": rule.id,
        "kind": rule.kind.value,
        "file": rule.location.file,
        "line": rule.location.line,
        "function": rule.function,
        "message": rule.message,
        "exception": rule.exception,
        "condition": render(rule.condition),
        "trigger": render_flags(rule.effective, spellings),
    }
    if rule.kind is RuleKind.ADJUSTMENT:
        data["target"] = rule.target
        data["value"] = rule.value
    return data


def _flag_side(flag: Flag) -> dict:
    return {
        "name": flag.name,
        "flag": flag.flags[0] if flag.flags else flag.name,  # a field the command line cannot set: bare
        "file": flag.file,
        "line": flag.line,
        "default": flag.default,
        "choices": None if flag.choices is None else [_plain(c) for c in flag.choices],
    }


def _plain(value: object) -> object:
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class RuleChange:
    """A change of one guard or adjustment; subclasses name the kind and say what changed."""

    kind: ClassVar[str] = ""
    title: ClassVar[str] = ""
    old: Rule | None
    new: Rule | None
    matched_by: str = "id"  # id, function+message, message+condition, similar-message; "" if unpaired
    details: str = ""
    compare: str = "trigger"  # which conditions were compared: whole-program triggers or in-function
    spellings: tuple[Spellings, Spellings] = (CONVENTION, CONVENTION)  # each side's catalog spells its flags

    @property
    def rule(self) -> Rule:
        found = self.new or self.old
        assert found is not None
        return found

    def as_dict(self) -> dict:
        data = {
            "kind": self.kind,
            "subject": "rule",
            "id": self.rule.id,
            "rule_kind": self.rule.kind.value,
            "message": self.rule.message,
            "matched_by": self.matched_by,
            "old": None if self.old is None else _side(self.old, self.spellings[0]),
            "new": None if self.new is None else _side(self.new, self.spellings[1]),
        }
        if self.details:
            data["details"] = self.details
        return data

    def explain(self, style: str = "text") -> str:
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; choose from {', '.join(STYLES)}")
        head = self._where(style)
        body = self._what(style)
        return f"{head}: {body}" if body else head

    def _where(self, style: str) -> str:
        code = (lambda s: f"`{s}`") if style == "markdown" else (lambda s: s)
        if self.old is not None and self.new is not None:
            return f"{code(_where(self.old))} -> {code(_where(self.new))}"
        return code(_where(self.rule))

    def _what(self, style: str) -> str:
        return _quote(self.rule.message)


class Added(RuleChange):
    kind, title = "added", "Guards added"

    def _what(self, style: str) -> str:
        # The in-function condition reads better than the trigger, which repeats every earlier check.
        condition = render_flags(self.rule.condition, self.spellings[1])
        return f"{_quote(self.rule.message)} if {_code(_excerpt(condition), style)}"


class Removed(RuleChange):
    kind, title = "removed", "Guards removed"


class Moved(RuleChange):
    kind, title = "moved", "Guards moved"

    def _what(self, style: str) -> str:
        assert self.old is not None and self.new is not None
        where = f" ({self.old.function} -> {self.new.function})" if self.old.function != self.new.function else ""
        return f"{_quote(self.rule.message)}{where}"


class MessageChanged(RuleChange):
    kind, title = "message-changed", "Messages changed"

    def _what(self, style: str) -> str:
        assert self.old is not None and self.new is not None
        return f"{_quote(self.old.message)} -> {_quote(self.new.message)}"


class ExceptionChanged(RuleChange):
    kind, title = "exception-changed", "Exception types changed"

    def _what(self, style: str) -> str:
        assert self.old is not None and self.new is not None
        return (f"{_quote(self.rule.message)}: {self.old.exception or self.old.kind.value} -> "
                f"{self.new.exception or self.new.kind.value}")


class _ConditionChange(RuleChange):
    """Shows the parts of the compared condition that only one side has ("-" old, "+" new)."""

    _SHOWN = 4  # parts per side; the JSON output has the whole conditions

    def _what(self, style: str) -> str:
        assert self.old is not None and self.new is not None
        sides = (self.old, self.new)
        was, now = (canonical(r.condition if self.compare == "condition" else r.effective) for r in sides)
        gone = [c for c in _conjuncts(was) if c not in _conjuncts(now)]
        came = [c for c in _conjuncts(now) if c not in _conjuncts(was)]
        lines = []
        signs = ("-", "+") if style == "text" else ("before:", "now:")
        for sign, parts, spellings in zip(signs, (gone, came), self.spellings):
            lines += [f"{sign} {_code(_excerpt(render_flags(p, spellings)), style)}" for p in parts[: self._SHOWN]]
            if len(parts) > self._SHOWN:
                lines.append(f"{sign} … {len(parts) - self._SHOWN} more")
        note = f" ({self.details})" if self.details else ""
        indent = "\n      " if style == "text" else "\n  - "
        return _quote(self.rule.message) + note + "".join(indent + line for line in lines)


def _conjuncts(f: Formula) -> tuple[Formula, ...]:
    return f.args if isinstance(f, And) else (f,)


class Tightened(_ConditionChange):
    kind, title = "tightened", "Conditions tightened (more launches rejected)"


class Relaxed(_ConditionChange):
    kind, title = "relaxed", "Conditions relaxed (fewer launches rejected)"


class ConditionChanged(_ConditionChange):
    kind, title = "condition-changed", "Conditions changed (neither stricter nor looser)"


class AdjustmentAdded(Added):
    kind, title = "adjustment-added", "Adjustments added"


class AdjustmentRemoved(Removed):
    kind, title = "adjustment-removed", "Adjustments removed"


class AdjustmentMoved(Moved):
    kind, title = "adjustment-moved", "Adjustments moved"


class AdjustmentValueChanged(RuleChange):
    kind, title = "adjustment-value-changed", "Adjusted values changed"

    def _what(self, style: str) -> str:
        assert self.old is not None and self.new is not None
        return (f"{_code(self.rule.target or '', style)}: {_code(self.old.value or '', style)} -> "
                f"{_code(self.new.value or '', style)}")


class AdjustmentWidened(_ConditionChange):
    kind, title = "adjustment-widened", "Adjustments applied in more launches"


class AdjustmentNarrowed(_ConditionChange):
    kind, title = "adjustment-narrowed", "Adjustments applied in fewer launches"


class AdjustmentConditionChanged(_ConditionChange):
    kind, title = "adjustment-condition-changed", "Adjustment conditions changed"


@dataclass(frozen=True, slots=True)
class FlagChange:
    """A change of one command-line flag."""

    kind: ClassVar[str] = ""
    title: ClassVar[str] = ""
    old: Flag | None
    new: Flag | None

    @property
    def flag(self) -> Flag:
        found = self.new or self.old
        assert found is not None
        return found

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "subject": "flag",
            "id": self.flag.name,
            "old": None if self.old is None else _flag_side(self.old),
            "new": None if self.new is None else _flag_side(self.new),
        }

    def explain(self, style: str = "text") -> str:
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; choose from {', '.join(STYLES)}")
        name = _code(_flag_side(self.flag)["flag"], style)
        if self.old is not None and self.new is not None:
            where = f"{self.old.file}:{self.old.line} -> {self.new.file}:{self.new.line}"
        else:
            where = f"{self.flag.file}:{self.flag.line}"
        where = f"`{where}`" if style == "markdown" else where
        what = self._what(style)
        return f"{name} {where}" + (f": {what}" if what else "")

    def _what(self, style: str) -> str:
        return ""


class FlagAdded(FlagChange):
    kind, title = "flag-added", "Flags added"

    def _what(self, style: str) -> str:
        return f"default {_code(str(self.flag.default), style)}"


class FlagRemoved(FlagChange):
    kind, title = "flag-removed", "Flags removed"


class FlagDefaultChanged(FlagChange):
    kind, title = "flag-default-changed", "Flag defaults changed"

    def _what(self, style: str) -> str:
        assert self.old is not None and self.new is not None
        return f"{_code(str(self.old.default), style)} -> {_code(str(self.new.default), style)}"


class FlagChoicesChanged(FlagChange):
    kind, title = "flag-choices-changed", "Flag choices changed"

    def _what(self, style: str) -> str:
        assert self.old is not None and self.new is not None
        old, new = list(self.old.choices or ()), list(self.new.choices or ())
        gone = [c for c in old if c not in new]
        came = [c for c in new if c not in old]
        parts = ([f"added {_code(', '.join(map(repr, came)), style)}"] if came else []) + \
                ([f"removed {_code(', '.join(map(repr, gone)), style)}"] if gone else [])
        return "; ".join(parts) or "reordered"


Change = RuleChange | FlagChange
CHANGE_CLASSES: tuple[type, ...] = (
    Added, Removed, Moved, MessageChanged, ExceptionChanged, Tightened, Relaxed, ConditionChanged,
    AdjustmentAdded, AdjustmentRemoved, AdjustmentMoved, AdjustmentValueChanged, AdjustmentWidened,
    AdjustmentNarrowed, AdjustmentConditionChanged,
    FlagAdded, FlagRemoved, FlagDefaultChanged, FlagChoicesChanged,
)
KINDS: tuple[str, ...] = tuple(cls.kind for cls in CHANGE_CLASSES)
TITLES = {cls.kind: cls.title for cls in CHANGE_CLASSES}
_KIND_ORDER = {kind: i for i, kind in enumerate(KINDS)}
KIND_ALIASES = {"condition-tightened": "tightened", "condition-relaxed": "relaxed"}


def _code(text: str, style: str) -> str:
    return f"`{text}`" if style == "markdown" and text else text


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
    paired_old = {id(p.old) for p in pairs}
    paired_new = {id(p.new) for p in pairs}
    return (pairs, [r for r in old if id(r) not in paired_old], [r for r in new if id(r) not in paired_new])


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
        by_function[_function_key(b.function)].append(j)
        by_message[normalized_message(b.message)].append(j)
    for i, a in enumerate(old):
        message = normalized_message(a.message)
        for j in by_function.get(_function_key(a.function), ()):
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


def find_changes(old: Snapshot, new: Snapshot, compare: str = "trigger") -> Iterator[Change]:
    """Every change from `old` to `new`, in a stable order: by kind, then by place."""
    if compare not in ("trigger", "condition"):
        raise ValueError(f"compare must be 'trigger' or 'condition', not {compare!r}")
    changes: list[Change] = []
    spellings = (Spellings.of(old.flags), Spellings.of(new.flags))
    pairs, removed, added = match_rules(old.rules, new.rules)
    for rule in removed:
        gone = AdjustmentRemoved if rule.kind is RuleKind.ADJUSTMENT else Removed
        changes.append(gone(rule, None, "", spellings=spellings))
    for rule in added:
        came = AdjustmentAdded if rule.kind is RuleKind.ADJUSTMENT else Added
        changes.append(came(None, rule, "", spellings=spellings))
    domains = field_domains(old.flags, new.flags)
    for pair in pairs:
        changes.extend(_pair_changes(pair, compare, domains, spellings))
    changes.extend(_flag_changes(old.flags, new.flags))
    yield from sorted(changes, key=_change_order)


def _change_order(change: Change) -> tuple:
    if isinstance(change, FlagChange):
        return (_KIND_ORDER[change.kind], change.flag.name, "", 0)
    rule = change.rule
    return (_KIND_ORDER[change.kind], rule.location.file, rule.location.line, rule.id)


def _pair_changes(pair: Pair, compare: str, domains: Mapping[str, Sequence[object]],
                  spellings: tuple[Spellings, Spellings]) -> Iterator[RuleChange]:
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
    verdict = compare_conditions(a, b, compare, domains)
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


# Spellings of one platform or model fact that differ between releases (0.5.19 moved from
# `is_cuda()` and `self.get_model_config()` to `get_platform().is_cuda` and `model_config_of(...)`).
_SPELLINGS = (
    (re.compile(r"\b(?:get_platform\(\)|current_platform)\.(is_\w+)\b(?:\(\))?"), r"\1()"),
    (re.compile(r"\b_(is_\w+\(\))"), r"\1"),
    (re.compile(r"\b(is_sm\d+)_supported\(\)"), r"\1()"),
    (re.compile(r"\b(?:(?:self|view|cfg|server_args)\.get_model_config\(\)|model_config_of\(\s*\w+\s*\))"),
     "model_config"),
)


def canonical(f: Formula) -> Formula:
    """The formula with platform and model terms in one spelling, for comparing releases."""
    return _canonical(f)


@lru_cache(maxsize=65536)
def _canonical(f: Formula) -> Formula:
    if isinstance(f, Not):
        return Not(_canonical(f.arg))
    if isinstance(f, (And, Or)):
        return type(f)(tuple(_canonical(a) for a in f.args))
    if isinstance(f, Atom):
        other = _canonical_term(f.other) if isinstance(f.other, Term) else f.other
        return Atom(_canonical_term(f.term), f.op, other)
    return f


def _canonical_term(term: Term) -> Term:
    if term.kind not in (TermKind.PLATFORM, TermKind.MODEL, TermKind.OPAQUE):
        return term
    name, text = term.name, term.text
    for pattern, replacement in _SPELLINGS:
        name, text = pattern.sub(replacement, name), pattern.sub(replacement, text)
    return replace(term, name=name, text=text)


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


def _flag_changes(old: Iterable[Flag], new: Iterable[Flag]) -> Iterator[FlagChange]:
    before = {f.name: f for f in old}
    after = {f.name: f for f in new}
    for name in sorted(before.keys() - after.keys()):
        yield FlagRemoved(before[name], None)
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
    from .products.output import GENERATOR  # output imports the extractor; only documents need it

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


def _grouped(changes: Sequence[Change]) -> list[tuple[str, list[Change]]]:
    groups: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        groups[change.kind].append(change)
    return [(kind, groups[kind]) for kind in KINDS if groups.get(kind)]


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


# ---- loading a side: documents, or a source extracted once and cached by content ---------------------


# `from .x import a`, `from ..core.model import (a, b)`, `from . import x`: relative imports, lazy ones too.
_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_PACKAGE = Path(__file__).resolve().parent  # the extractor package


@lru_cache(maxsize=None)
def code_fingerprint(*roots: str) -> str:
    """A digest of the package modules `roots` (dotted, inside the package) import, directly or not
    (lazy imports included).

    A cached result made by other code is not reused, while edits to unrelated modules keep the
    cache warm. The command layer (`cli`, `commands/`) is left out: no lower layer imports it.
    """
    seen: set[Path] = set()
    todo = [_PACKAGE.joinpath(*root.split(".")).with_suffix(".py") for root in roots]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file() or _command_layer(path):
            continue
        seen.add(path)
        for dots, module, names in _IMPORT.findall(path.read_text(encoding="utf-8")):
            base = path.parent
            for _ in range(len(dots) - 1):
                base = base.parent
            target = base.joinpath(*module.split(".")) if module else base
            if module and target.with_suffix(".py").is_file():
                todo.append(target.with_suffix(".py"))
            elif target.is_dir():  # a package: its __init__ and the submodules named
                words = re.findall(r"\w+", re.sub(r"#[^\n]*", "", names))
                todo += [target / "__init__.py", *(target / f"{word}.py" for word in words)]
    hasher = hashlib.sha256()
    for path in sorted(seen):
        name = path.relative_to(_PACKAGE).as_posix()
        hasher.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()


def _command_layer(path: Path) -> bool:
    return path.parent == _PACKAGE and path.name in ("cli.py", "__main__.py") or _PACKAGE / "commands" in path.parents


def cache_key(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False) -> str:
    """A digest of what an extraction depends on: the read files' bytes, the options and the code."""
    layout = find_layout(tree.paths(), list(include) if include else None)
    code = code_fingerprint("products.extraction", "products.output")
    parts = [tree.digest(layout.files), code, json.dumps(sorted(include or [])), str(keep_going)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def extraction_cache() -> Path:
    """The folder of cached extractions: $SGLANG_CONSTRAINTS_EXTRACTION_CACHE, else one in the user cache."""
    return Path(os.environ.get("SGLANG_CONSTRAINTS_EXTRACTION_CACHE") or cache_root() / "extractions")


def cached_documents(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False,
                     folder: Path | None = None) -> tuple[dict, dict, str] | None:
    """The documents of an earlier extraction of the same inputs, or None."""
    key = cache_key(tree, include, keep_going)
    found = load_cached(key, folder)
    if found is None:
        return None
    # The same bytes can come from another source (a release and its git tag): say which one.
    source = tree.info.as_dict()
    return {**found[0], "source": source}, {**found[1], "source": source}, key


def load_cached(key: str, folder: Path | None = None) -> tuple[dict, dict] | None:
    """The rules and flags documents cached under `key` (their source is the first one seen), or None."""
    rules_path, flags_path = cache_paths(key, folder)
    try:
        found = (json.loads(rules_path.read_text(encoding="utf-8")),
                 json.loads(flags_path.read_text(encoding="utf-8")))
        for path in (rules_path, flags_path):
            os.utime(path)  # used now: the last to go when the cache is pruned
    except (OSError, ValueError):
        return None
    return found


CACHE_LIMIT_MB = 2048  # default size of the extraction cache; $SGLANG_CONSTRAINTS_CACHE_LIMIT_MB overrides


def prune_cache(folder: Path | None = None, limit_mb: float | None = None) -> int:
    """Delete the least recently used files of the extraction cache until it fits its size limit.

    Every release, git revision and extractor version adds an entry of 5-20 MB that nothing else
    removes. Returns the number of files deleted; a file another process removed first is skipped.
    """
    folder = folder or extraction_cache()
    if limit_mb is None:
        try:
            limit_mb = float(os.environ.get("SGLANG_CONSTRAINTS_CACHE_LIMIT_MB", CACHE_LIMIT_MB))
        except ValueError:
            limit_mb = CACHE_LIMIT_MB
    entries = []
    for path in folder.glob("*.json"):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((stat.st_mtime, path.name, stat.st_size, path))
    total = sum(size for _, _, size, _ in entries)
    deleted = 0
    for _, _, size, path in sorted(entries):  # oldest use first
        if total <= limit_mb * 1024 * 1024:
            break
        path.unlink(missing_ok=True)
        total -= size
        deleted += 1
    return deleted


def extract_documents(tree: SourceTree, include: Sequence[str] | None = None, keep_going: bool = False,
                      use_cache: bool = True, folder: Path | None = None, prune: bool = True) -> tuple[dict, dict, str]:
    """The rules.json and flags.json documents of a source, from the cache when its inputs were seen.

    A new entry prunes the cache to its size limit, unless `prune` is off (`history` prunes once at
    the end, so no worker deletes what another is about to read back)."""
    from .products.extraction import extract  # heavy (libcst); only needed on a cache miss
    from .products.output import flags_document, rules_document, validate, write_atomic

    found = cached_documents(tree, include, keep_going, folder) if use_cache else None
    if found is not None:
        return found
    key = cache_key(tree, include, keep_going)
    ex = extract(tree, include=list(include) if include else None, keep_going=keep_going)
    rules, flags = rules_document(ex), flags_document(ex)
    validate(rules, "rules.schema.json")
    validate(flags, "flags.schema.json")
    if use_cache:
        rules_path, flags_path = cache_paths(key, folder)
        # Flags first: the rules file appears last and marks the entry complete.
        write_atomic(flags_path, dumps(flags))
        write_atomic(rules_path, dumps(rules))
        if prune:
            prune_cache(folder)
    return rules, flags, key


def cache_paths(key: str, folder: Path | None = None) -> tuple[Path, Path]:
    folder = folder or extraction_cache()
    return folder / f"{key}.json", folder / f"{key}.flags.json"


@dataclass(frozen=True, slots=True)
class Spec:
    """One side as given on the command line, resolved to a kind: documents, path, git or release."""

    kind: str
    value: str
    repo: str | None = None
    index_url: str | None = None


def resolve_spec(text: str, git: str | None = None, index_url: str | None = None) -> Spec:
    """A release (`0.5.18`), a git rev (with `git`), a local path, or a rules.json (or its folder)."""
    path = Path(text)
    if path.is_file() and path.suffix == ".json":
        return Spec("documents", str(path))
    if path.is_dir() and (path / "rules.json").is_file() and not (path / "sglang").exists():
        return Spec("documents", str(path / "rules.json"))
    if path.exists():
        return Spec("path", str(path))
    if git:
        try:
            git_tree(git, text)
            return Spec("git", text, repo=git)
        except SourceError:
            if not _is_version(text):
                raise
    if _is_version(text):
        return Spec("release", text, index_url=index_url)
    hint = "" if git else " (for a git revision, give --git REPO)"
    raise SourceError(f"{text}: not a release, a path or a rules.json{hint}")


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return text[:1].isdigit()


def open_spec(spec: Spec) -> SourceTree:
    if spec.kind == "release":
        return release_tree(spec.value, index_url=spec.index_url)
    if spec.kind == "git":
        return git_tree(spec.repo or ".", spec.value)
    if spec.kind == "path":
        return path_tree(spec.value)
    raise ValueError(f"{spec.kind}: not a source tree")


def load_documents(spec: Spec, include: Sequence[str] | None = None, keep_going: bool = False,
                   use_cache: bool = True) -> tuple[dict, dict | None, str | None]:
    """The documents of one side, and the cache key when they were extracted (None for given files)."""
    if spec.kind == "documents":
        try:
            rules, flags = read_rule_documents(spec.value)
        except DocumentError as error:
            raise SourceError(str(error)) from None
        return rules, flags, None
    rules, flags, key = extract_documents(open_spec(spec), include, keep_going, use_cache)
    return rules, flags, key


def load_snapshot(spec: Spec, include: Sequence[str] | None = None, use_cache: bool = True) -> Snapshot:
    rules, flags, _ = load_documents(spec, include, use_cache=use_cache)
    try:
        return Snapshot.from_documents(rules, flags, where=spec.value)
    except DocumentError as error:
        raise SourceError(str(error)) from None


# ---- the command -----------------------------------------------------------------------------------


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "diff", help="changes of rules and flags between two sources",
        description="Compare the rules and flags of two sources. Exit 0: no change of the --fail-on kinds; "
                    "1: changes found; 2: usage or input error.")
    add_arguments(parser)
    parser.set_defaults(func=run_diff)


def add_arguments(parser) -> None:
    parser.add_argument("old", help="release (0.5.18), git rev (with --git), local path, or rules.json")
    parser.add_argument("new", help="the same kinds of source, compared with OLD")
    parser.add_argument("--git", metavar="REPO", help="a local SGLang clone for revisions")
    parser.add_argument("--index-url", help="package index (default: $PIP_INDEX_URL or PyPI)")
    parser.add_argument("--include", action="append", metavar="GLOB", help="read these files instead of the layout's")
    parser.add_argument("--format", choices=("text", "json", "md"), default="text")
    parser.add_argument("--fail-on", default="all", metavar="KINDS",
                        help=f"comma list of change kinds that make the exit code 1 (default: all): {', '.join(KINDS)}")
    parser.add_argument("--compare", choices=("trigger", "condition"), default="trigger",
                        help="compare whole-program triggers (default) or in-function conditions")
    parser.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    parser.add_argument("--no-cache", action="store_true", help="extract again even if the inputs were seen")


def run_diff(args) -> int:
    """The `diff` command: 0 no change of the selected kinds, 1 changes found (2 is raised as errors)."""
    from .products.output import validate, write_atomic

    try:
        selected = parse_kinds(args.fail_on)
    except ValueError as error:
        raise UsageError(str(error)) from None
    specs = [resolve_spec(text, args.git, args.index_url) for text in (args.old, args.new)]
    old, new = (load_snapshot(spec, args.include, use_cache=not args.no_cache) for spec in specs)
    changes = list(find_changes(old, new, args.compare))
    if args.format == "json":
        document = diff_document(old, new, changes, args.compare)
        validate(document, "diff.schema.json")
        text = dumps(document)
    elif args.format == "md":
        text = render_markdown(old, new, changes)
    else:
        text = render_text(old, new, changes)
    if args.output:
        write_atomic(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return EXIT_FINDINGS if any(c.kind in selected for c in changes) else EXIT_OK
