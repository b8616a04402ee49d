"""Typed changes between two rule sets and flag catalogs, each explaining itself in JSON, text or Markdown.

One small class per kind of change, with `as_dict()` (JSON) and `explain(style)` (text or Markdown).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar

from ...core.formula import CONVENTION, Spellings, render, render_flags
from ...core.model import And, Atom, Const, Flag, Formula, Not, Or, Rule, RuleKind, Term, TermKind
from .kinds import KINDS

STYLES = ("text", "markdown")
_EXCERPT = 240  # characters of a condition shown in text and Markdown (JSON has them whole)


# ---- changes -----------------------------------------------------------------------------------------


def _where(rule: Rule) -> str:
    return f"{rule.location.file}:{rule.location.line}"


def _excerpt(text: str, limit: int = _EXCERPT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quote(text: str, whole: bool = False) -> str:
    """A message in quotes: whole where what it says is the change, else its first 160 characters."""
    text = " ".join(text.split())
    return json.dumps(text if whole else _excerpt(text, 160), ensure_ascii=False)


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
        # When it fires for a launch (the trigger, in flags), not the test its function writes; a guard
        # no launch reaches says so rather than count as a new way to be rejected.
        if isinstance(self.rule.effective, Const) and not self.rule.effective.value:
            return f"{_quote(self.rule.message, whole=True)} (dead: no launch reaches it, its trigger is never true)"
        trigger = render_flags(self.rule.effective, self.spellings[1])
        return f"{_quote(self.rule.message, whole=True)} when {_code(_excerpt(trigger), style)}"


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
        return f"{_quote(self.old.message, whole=True)} -> {_quote(self.new.message, whole=True)}"


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


class CaughtEarlier(_ConditionChange):
    kind, title = "caught-earlier", "Still rejected, by a guard that now stops the launch first"


class RelaxedByNewFlags(_ConditionChange):
    kind, title = "relaxed-by-new-flags", "Relaxed only with flags new in this release (every launch the old release took is judged as before)"


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
    details: str = ""  # a removed flag: since when, which releases accepted it, what replaces it

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
            **({"details": self.details} if self.details else {}),
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

    def _what(self, style: str) -> str:
        return self.details


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
    Added, Removed, Moved, MessageChanged, ExceptionChanged, Tightened, Relaxed, CaughtEarlier, RelaxedByNewFlags, ConditionChanged,
    AdjustmentAdded, AdjustmentRemoved, AdjustmentMoved, AdjustmentValueChanged, AdjustmentWidened,
    AdjustmentNarrowed, AdjustmentConditionChanged,
    FlagAdded, FlagRemoved, FlagDefaultChanged, FlagChoicesChanged,
)
TITLES = {cls.kind: cls.title for cls in CHANGE_CLASSES}
KIND_ORDER = {kind: i for i, kind in enumerate(KINDS)}
KIND_ALIASES = {"condition-tightened": "tightened", "condition-relaxed": "relaxed"}


def _code(text: str, style: str) -> str:
    return f"`{text}`" if style == "markdown" and text else text


# ---- platform and model facts in one spelling ---------------------------------------------------------


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
