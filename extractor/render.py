"""Docs pages from the records alone: one CommonMark page per rule, its JSON beside it, and an index.

Everything a page says is derived from the rule and the flag catalog: the meaning in words from
the trigger (the rule's own condition first, then the path conditions it inherits), the ways to
falsify it in flags as solutions, the witness command lines as the example fix. Pages are
deterministic: the same records give the same bytes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .check import ENV_ASSIGNMENT, computable
from .core.errors import EXIT_OK, UsageError
from .core.formula import Spellings, atoms, compare, apply_transforms, literal_source, neg, render_flags
from .core.model import NEGATED_OP, And, Atom, Const, Flag, Formula, Lit, Not, Or, Rule, RuleKind, Term, TermKind
from .core.serialize import rule_json

DEFAULT_SOURCE_URL = "https://github.com/sgl-project/sglang/blob/{commit}/python/{path}#L{line}"
LAUNCH = ("python", "-m", "sglang.launch_server")
_MAX_WAYS = 6
_TITLE_LENGTH = 90
_MAX_WORDS = 300
_KIND_WORDS = {"env": "environment", "platform": "platform", "model": "model", "opaque": "other"}  # an inherited condition longer than this in words is summarized
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#&|~])")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMON_WORDS = frozenset({"self", "cfg", "server_args", "get", "None", "True", "False", "and", "or", "not", "in",
                           "is", "if", "else", "envs", "os", "environ", "len", "int", "str", "float", "bool"})


# ---- flags as the command line sees them --------------------------------------------------------------


class Flags:
    """The flag catalog by field name, for words and fixes (aliases, store_true, defaults, choices)."""

    def __init__(self, flags: Iterable[Flag]) -> None:
        self.by_field = {f.name: f for f in flags}
        self.spellings = Spellings.of(self.by_field.values())

    def option(self, field_name: str) -> str:
        flag = self.by_field.get(field_name)
        return flag.flags[0] if flag and flag.flags else "--" + field_name.replace("_", "-")

    def is_switch(self, field_name: str) -> bool:
        flag = self.by_field.get(field_name)
        if flag is None:
            return False
        action = (flag.action or "").rsplit(".", 1)[-1]
        return action in ("store_true", "DeprecatedStoreTrueAction", "BooleanOptionalAction", "store_false") or (
            flag.action is None and re.sub(r"\s", "", flag.type or "") in ("bool", "Optional[bool]"))

    def negatable(self, field_name: str) -> bool:
        flag = self.by_field.get(field_name)
        return bool(flag and (flag.action or "").endswith("BooleanOptionalAction"))

    def default(self, field_name: str) -> tuple[bool, object]:
        flag = self.by_field.get(field_name)
        if flag is None or not flag.default_is_literal:
            return False, None
        return True, flag.default_value

    def choices(self, field_name: str) -> tuple:
        flag = self.by_field.get(field_name)
        return tuple(flag.choices or ()) if flag else ()

    def settable(self, field_name: str) -> bool:
        flag = self.by_field.get(field_name)
        return bool(flag and flag.flags)


# ---- conditions in words -----------------------------------------------------------------------------------


def code(text: str) -> str:
    """An inline code span that survives backticks in the text."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def escape(text: str) -> str:
    """Plain text safe in CommonMark inline context (on one line)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _value_text(value: object) -> str:
    if isinstance(value, str) and value and not re.search(r"\s", value):
        return value
    return literal_source(value)


def term_words(term: Term, flags: Flags) -> str:
    if term.kind is TermKind.FIELD:
        words = code(flags.option(term.name))
        if "len" in term.transforms:
            words = f"the length of {words}"
        if any(t in ("lower", "upper", "casefold") for t in term.transforms):
            words += " (ignoring case)"
        return words
    if term.kind is TermKind.ENV:
        match = re.fullmatch(r"envs\.(\w+)\.get\(\)", term.text)
        if match or re.fullmatch(r"os\.(?:environ\.get|getenv)\(['\"]\w+['\"]\)", term.text):
            return f"environment variable {code(term.name)}"
        return code(term.text)
    return code(term.text)


def atom_words(atom: Atom, flags: Flags, positive: bool = True) -> str:
    term = atom.term
    subject = term_words(term, flags)
    op = atom.op if positive or atom.op == "truthy" else NEGATED_OP[atom.op]
    if atom.op == "truthy":
        return subject + " " + _truthy_words(atom, flags, positive)
    if isinstance(atom.other, Term):
        other = term_words(atom.other, flags)
    else:
        value = atom.other.value if atom.other is not None else None
        if op in ("is", "==") and value is None:
            return subject + (" is not given" if term.kind is TermKind.FIELD else " is None")
        if op in ("is not", "!=") and value is None:
            return subject + (" is given" if term.kind is TermKind.FIELD else " is not None")
        if isinstance(value, bool) and op in ("is", "==", "is not", "!="):
            truth = value if op in ("is", "==") else not value
            return subject + " " + _truthy_words(atom, flags, truth)
        if op in ("in", "not in") and isinstance(value, tuple):
            items = [code(_value_text(v)) for v in value]
            if op == "in":
                return subject + " is " + (items[0] if len(items) == 1 else "one of " + ", ".join(items))
            if len(items) == 2:
                return f"{subject} is neither {items[0]} nor {items[1]}"
            return subject + " is " + ("not " + items[0] if len(items) == 1 else "none of " + ", ".join(items))
        other = code(_value_text(value))
    words = {
        "==": "is", "!=": "is not", "is": "is", "is not": "is not", "<": "is less than", "<=": "is at most",
        ">": "is greater than", ">=": "is at least", "in": "is in", "not in": "is not in",
        "contains": "includes", "not contains": "does not include",
    }[op]
    return f"{subject} {words} {other}"


def _truthy_words(atom: Atom, flags: Flags, positive: bool) -> str:
    term = atom.term
    if term.kind is TermKind.FIELD and not term.transforms:
        if flags.is_switch(term.name):
            return "is set" if positive else "is not set"
        flag = flags.by_field.get(term.name)
        if flag is not None and re.search(r"\b(int|float)\b", flag.type or ""):
            return "is not 0" if positive else "is 0"
        return "is given" if positive else "is not given (or empty)"
    if term.kind is TermKind.ENV:
        return "is set" if positive else "is not set"
    return "is true" if positive else "is false"


def words(f: Formula, flags: Flags, positive: bool = True, nested: bool = False) -> str:
    """A formula in words: negations pushed down to the atoms, nested and/or flattened."""
    return _words(_nnf(f, positive), flags, nested)


def _nnf(f: Formula, positive: bool = True) -> Formula:
    """Negation normal form: `Not` only around atoms, same connectives merged."""
    if isinstance(f, Not):
        return _nnf(f.arg, not positive)
    if isinstance(f, Const):
        return Const(f.value == positive)
    if isinstance(f, Atom):
        return f if positive else neg(f)
    kind = And if isinstance(f, And) == positive else Or
    parts: list[Formula] = []
    for arg in f.args:
        part = _nnf(arg, positive)
        parts.extend(part.args if isinstance(part, kind) else (part,))
    return kind(tuple(parts))


def _words(f: Formula, flags: Flags, nested: bool) -> str:
    if isinstance(f, Const):
        return "always" if f.value else "never"
    if isinstance(f, Atom):
        return atom_words(f, flags)
    if isinstance(f, Not):
        return atom_words(f.arg, flags, False)  # type: ignore[arg-type]
    parts = [_words(a, flags, True) for a in f.args]
    if isinstance(f, And):
        text = _join(parts, "and")
        return text if not nested else f"both {text}" if len(parts) == 2 else f"all of {text}"
    text = _join(parts, "or")
    return f"either {text}" if nested else text


def _join(parts: Sequence[str], word: str) -> str:
    if len(parts) <= 2:
        return f" {word} ".join(parts)
    return ", ".join(parts[:-1]) + f", {word} " + parts[-1]


# ---- the rule's own condition and what it inherits ------------------------------------------------------------


def conjuncts(f: Formula) -> tuple[Formula, ...]:
    return f.args if isinstance(f, And) else () if f == Const(True) else (f,)


def split_condition(rule: Rule, siblings: Iterable[Rule] = ()) -> tuple[list[Formula], list[Formula]]:
    """The trigger's conjuncts tested by the rule's own `if`s (or assert), and those it inherits.

    The trigger is the in-function condition conjoined after each call path's condition, so the
    own conjuncts are among the last ones: those whose names appear in the enclosing `if` lines (or
    the assert). A conjunct that negates an earlier sibling guard's condition is inherited (it says
    "that earlier check passed"), not a thing to change. A trigger with several call paths (an
    `or`) keeps the own conjuncts all paths share and one "either ... or ..." for the rest.
    """
    paths = rule.effective.args if isinstance(rule.effective, Or) else (rule.effective,)
    region = _own_lines(rule)
    earlier: set[Formula] = set()  # "that earlier guard did not fire", in negation normal form
    for other in siblings:
        if other.id != rule.id and other.function == rule.function and other.location.file == rule.location.file \
                and other.location.line < rule.location.line and other.kind is not RuleKind.ADJUSTMENT:
            theirs = conjuncts(other.condition)
            earlier.update(_nnf(And(theirs[i:]) if len(theirs) - i > 1 else theirs[i], False)
                           for i in range(len(theirs)))
    local = len(conjuncts(rule.condition))
    splits = []
    for path in paths:
        parts = list(conjuncts(path))
        tail = parts[-local:] if local else []
        own = [p for p in tail if _mentions(p, region) and _nnf(p) not in earlier] or tail[-1:] or parts[-1:]
        splits.append((own, [p for p in parts if p not in own]))
    if len(splits) == 1:
        return splits[0]
    own = [p for p in splits[0][0] if all(p in s[0] for s in splits)]
    if not own:
        return [], [rule.effective]
    rests = [[p for p in conjuncts(path) if p not in own] for path in paths]
    common = [p for p in rests[0] if all(p in r for r in rests)]
    either = Or(tuple(And(tuple(r)) if len(r) > 1 else r[0] for r in ([p for p in r if p not in common] for r in rests) if r))
    return own, common + ([either] if either.args else [])


def _own_lines(rule: Rule) -> set[str]:
    lines = rule.snippet.text.split("\n")
    chosen: list[str] = []
    for line_no in rule.enclosing:
        i = line_no - rule.snippet.start_line
        while 0 <= i < len(lines):
            chosen.append(lines[i])
            if lines[i].rstrip().endswith(":"):
                break
            i += 1
    if rule.kind is RuleKind.ASSERT:
        start = rule.location.line - rule.snippet.start_line
        chosen += lines[max(start, 0): rule.location.end_line - rule.snippet.start_line + 1]
    return set(_IDENTIFIER.findall("\n".join(chosen)))


def _mentions(part: Formula, names: set[str]) -> bool:
    for term in _terms(part):
        candidates = set(term.fields) | ({term.name} if term.kind in (TermKind.FIELD, TermKind.ENV) else set())
        if term.kind not in (TermKind.FIELD, TermKind.ENV):
            candidates |= set(_IDENTIFIER.findall(term.text)) - _COMMON_WORDS
        if candidates & names:
            return True
    return False


def _terms(f: Formula) -> Iterable[Term]:
    for atom in atoms(f):
        yield atom.term
        if isinstance(atom.other, Term):
            yield atom.other


def outside_terms(rule: Rule) -> dict[str, list[str]]:
    """Conditions the command line does not set, by kind: env, platform, model, opaque.

    An opaque expression over flags that `check` can compute (`tp_size * dp_size`) is not outside.
    """
    found: dict[str, list[str]] = defaultdict(list)
    for term in _terms(rule.effective):
        if term.kind is TermKind.FIELD or term.kind is TermKind.OPAQUE and computable(term):
            continue
        if term.text not in found[term.kind.value]:
            found[term.kind.value].append(term.text)
    return {k: sorted(v) for k, v in sorted(found.items()) if v}


# ---- solutions: ways to falsify the trigger, in flags -----------------------------------------------------------


@dataclass(frozen=True, order=True)
class Edit:
    """One change to a command line: pass a flag (with a value), remove it, or set an env var."""

    action: str  # pass, remove, env
    name: str  # the option string, or env var name
    value: str | None = None

    def text(self) -> str:
        if self.action == "remove":
            return f"remove {self.name}"
        if self.action == "env":
            return f"set {self.name}={self.value}" if self.value is not None else f"unset {self.name}"
        return f"pass {self.name}" + (f" {self.value}" if self.value is not None else "")

    def markdown(self) -> str:
        if self.action == "remove":
            return f"remove {code(self.name)}"
        if self.action == "env":
            return f"set {code(f'{self.name}={self.value}')}" if self.value is not None else f"unset {code(self.name)}"
        return "pass " + code(self.name + (f" {shlex.quote(self.value)}" if self.value is not None else ""))


Way = tuple[Edit, ...]


def solutions(rule: Rule, flags: Flags, siblings: Iterable[Rule] = ()) -> list[Way]:
    """Each way to make the rule's own condition false, as command-line edits (first found per conjunct)."""
    own, _ = split_condition(rule, siblings)
    ways: list[Way] = []
    for part in own:
        for way in _ways(part, flags, False):
            if way not in ways:
                ways.append(way)
    return ways[:_MAX_WAYS]


def fixes_for(rule: Rule, flags: Flags, siblings: Iterable[Rule] = ()) -> list[str]:
    """Solutions as plain text (for `check`)."""
    return [way_text(way) for way in solutions(rule, flags, siblings)]


def way_text(way: Way, markdown: bool = False) -> str:
    """`remove --a and --b and pass --c 1`: edits of one kind grouped, in order."""
    groups: list[tuple[str, list[str]]] = []
    for edit in way:
        verb, _, rest = (edit.markdown() if markdown else edit.text()).partition(" ")
        if groups and groups[-1][0] == verb:
            groups[-1][1].append(rest)
        else:
            groups.append((verb, [rest]))
    return " and ".join(f"{verb} {_join(items, 'and')}" for verb, items in groups)


def _ways(f: Formula, flags: Flags, truth: bool) -> list[Way]:
    """Ways to make `f` evaluate to `truth`."""
    if isinstance(f, Const):
        return [()] if f.value == truth else []
    if isinstance(f, Not):
        return _ways(f.arg, flags, not truth)
    if isinstance(f, Atom):
        edit = _atom_edit(f, flags, truth)
        return [edit] if edit is not None else []
    either = isinstance(f, And) != truth  # making one argument decide it is enough
    options = [_ways(a, flags, truth) for a in f.args]
    if either:
        return [w for option in options for w in option][:_MAX_WAYS]
    if not all(options):
        return []
    combined: list[Edit] = []
    for option in options:
        combined.extend(e for e in option[0] if e not in combined)
    if len({e.name for e in combined}) != len(combined):
        return []  # two different values for one flag
    return [tuple(combined)]


def _atom_edit(atom: Atom, flags: Flags, truth: bool) -> Way | None:
    term = atom.term
    if isinstance(atom.other, Term):
        return None
    if term.kind is TermKind.ENV:
        return _env_edit(atom, truth)
    if term.kind is not TermKind.FIELD or not flags.settable(term.name):
        return None
    for value, edit in _candidates(atom, flags):
        try:
            holds = compare(apply_transforms(value, term.transforms), atom.op,
                            atom.other.value if atom.other is not None else None)
        except (TypeError, ValueError, AttributeError):
            continue
        if holds == truth:
            return edit
    return None


def _candidates(atom: Atom, flags: Flags) -> list[tuple[object, Way]]:
    name = atom.term.name
    option = flags.option(name)
    has_default, default = flags.default(name)
    found: list[tuple[object, Way]] = []
    if flags.is_switch(name):
        if has_default:
            found.append((default, (Edit("remove", option),)))
        found.append((True, (Edit("pass", option),)))
        if flags.negatable(name) and option.startswith("--"):
            found.append((False, (Edit("pass", "--no-" + option[2:]),)))
        elif not has_default or default is not False:
            found.append((False, (Edit("remove", option),)))
        return found
    if has_default:
        found.append((default, (Edit("remove", option),)))
    literal = atom.other.value if isinstance(atom.other, Lit) else None
    values: list[object] = list(literal) if isinstance(literal, tuple) else [literal] if literal is not None else []
    values += [c for c in flags.choices(name) if c not in values]
    if isinstance(literal, (int, float)) and not isinstance(literal, bool):
        values += [literal + 1, literal - 1]
    if atom.op in ("is", "is not", "==", "!=", "truthy") and not values:
        values.append("VALUE")
    for value in values:
        if value is None:
            continue
        text = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
        found.append((value, (Edit("pass", option, text),)))
    return found


def _env_edit(atom: Atom, truth: bool) -> Way | None:
    name = atom.term.name
    value = atom.other.value if isinstance(atom.other, Lit) else None
    if atom.op == "truthy":
        return (Edit("env", name, "1"),) if truth else (Edit("env", name, None),)
    if atom.op in ("==", "is") and value is not None and truth or atom.op in ("!=", "is not") and value is not None and not truth:
        return (Edit("env", name, str(value)),)
    return None


# ---- pages ------------------------------------------------------------------------------------------------


def source_link(rule: Rule, source: Mapping[str, object], template: str = DEFAULT_SOURCE_URL) -> str | None:
    """A link to the line, pinned to the commit (git) or the release tag; None for an unpinned folder."""
    commit = source.get("commit") or (f"v{source['release']}" if source.get("release") else None)
    if not commit:
        return None
    return template.format(commit=commit, path=rule.location.file, line=rule.location.line,
                           end_line=rule.location.end_line)


def title(rule: Rule) -> str:
    text = " ".join(rule.message.split())
    return text if len(text) <= _TITLE_LENGTH else text[: _TITLE_LENGTH - 1].rstrip() + "…"


def fence(text: str, info: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    marks = "`" * (longest + 1)
    return f"{marks}{info}\n{text.rstrip()}\n{marks}"


def command_line(args: Sequence[str]) -> str:
    """The launch command for witness arguments; leading `NAME=VALUE` env assignments go in front."""
    env = list(itertools.takewhile(lambda a: ENV_ASSIGNMENT.match(a) is not None, args))
    return shlex.join([*env, *LAUNCH, *args[len(env):]])


def page(rule: Rule, flags: Flags, source: Mapping[str, object], rules: Mapping[str, Rule] | None = None,
         source_url: str = DEFAULT_SOURCE_URL) -> str:
    """The Markdown page of one rule."""
    rules = rules or {}
    siblings = [r for r in rules.values() if r.function == rule.function and r.location.file == rule.location.file]
    label = str(source.get("label", ""))
    kind = rule.kind.value
    out: list[str] = [f"# {escape(title(rule))}", ""]
    facts = [code(rule.exception) if rule.exception else None, kind, code(rule.id), f"sglang {escape(label)}" if label else None]
    out += [" · ".join(f for f in facts if f), ""]
    out += ["## Error message" if kind != "adjustment" else "## What SGLang does", "", fence(rule.message, "text"), ""]
    if not rule.message_static:
        out += ["Parts in `{...}` are filled in at run time.", ""]

    own, inherited = split_condition(rule, siblings)
    out += ["## What it means", ""]
    lead = "Rejected" if kind != "adjustment" else f"SGLang sets {code(flags.option(rule.target or ''))} to {code(rule.value or '')}"
    own_words = words(And(tuple(own)) if len(own) > 1 else own[0], flags) if own else "always"
    out += [f"{lead} when {own_words}." if own else f"{lead} whenever it is reached.", ""]
    if inherited:
        out += ["It is checked only when all of these hold:" if kind != "adjustment" else "This happens only when all of these hold:", ""]
        out += [f"- {_bullet(part, flags)}" for part in inherited]
        out.append("")
    outside = outside_terms(rule)
    if outside:
        out += ["Conditions outside the command line:", ""]
        out += [f"- {_KIND_WORDS[k]}: " + ", ".join(code(t) for t in texts) for k, texts in outside.items()]
        out.append("")
    if not rule.reachable:
        out += ["Not reached from the server-argument entry points: the condition is the function's own.", ""]

    out += ["## Source", ""]
    where = f"{rule.location.file}:{rule.location.line}"
    link = source_link(rule, source, source_url)
    shown = f"[{code(where)}]({link})" if link else code(where)
    out += [f"Thrown at {shown} in {code(rule.function)}." if kind != "adjustment" else f"Set at {shown} in {code(rule.function)}.", ""]
    if rule.call_path:
        out += ["Reached through " + " → ".join(code(step.split("::")[-1]) for step in rule.call_path) + ".", ""]
    out += [fence(rule.snippet.text, "python"), ""]

    out += ["## When it happens", "", fence(render_flags(rule.effective, flags.spellings), "text"), ""]
    if rule.affected_by:
        links = ", ".join(_rule_link(rules.get(a), a) for a in rule.affected_by)
        out += [f"Adjustments that run earlier may change what it reads: {links}.", ""]

    ways = solutions(rule, flags, siblings)
    out += ["## Solutions", ""]
    if ways:
        out += [f"{i}. " + _capital(way_text(way, markdown=True)) + "." for i, way in enumerate(ways, 1)]
    else:
        out.append("No change of flags alone avoids it; see the conditions outside the command line above.")
    out.append("")

    if rule.example is not None:
        before, after = (command_line(rule.example.before), command_line(rule.example.after))
        out += ["## Example fix", "", fence(f"# before: {'rejected' if kind != 'adjustment' else 'adjusted'}\n{before}\n"
                                              f"# after\n{after}", "sh"), ""]

    if rule.related:
        out += ["## Related errors", ""]
        out += [f"- {_rule_link(rules.get(r.id), r.id, r.message)} ({escape(r.kind)})" for r in rule.related]
        out.append("")

    out += ["---", "", f"Generated by sglang-constraints from sglang {escape(label)}; do not edit. "
                       f"Data as JSON: [{rule.id}.json]({rule.id}.json)."]
    return "\n".join(out) + "\n"


def _bullet(part: Formula, flags: Flags) -> str:
    """One inherited condition in words, or a summary of what it reads when the words run too long."""
    text = words(part, flags)
    if len(text) <= _MAX_WORDS:
        return text
    names = sorted({flags.option(n) for t in _terms(part) for n in t.fields if t.kind is TermKind.FIELD})
    kinds = sorted({_KIND_WORDS[t.kind.value] for t in _terms(part) if t.kind is not TermKind.FIELD})
    reads = ", ".join(code(n) for n in names[:8]) + (" …" if len(names) > 8 else "")
    also = ((" and " if names else "") + _join(kinds, "and") + " conditions") if kinds else ""
    return f"a longer condition over {reads}{also} (see “When it happens”)"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _rule_link(rule: Rule | None, rule_id: str, message: str | None = None) -> str:
    text = title(rule) if rule is not None else (message or rule_id)
    return f"[{escape(text)}]({rule_id}.md)"


def index(rules: Sequence[Rule], flags: Flags, source: Mapping[str, object]) -> str:
    """index.md: the rules grouped by the flags of their own condition and by file, with counts."""
    label = str(source.get("label", ""))
    kinds = defaultdict(int)
    for rule in rules:
        kinds[rule.kind.value] += 1
    by_flag: dict[str, list[Rule]] = defaultdict(list)
    by_file: dict[str, list[Rule]] = defaultdict(list)
    groups = by_function(rules)
    for rule in rules:
        by_file[rule.location.file].append(rule)
        own, _ = split_condition(rule, groups[(rule.location.file, rule.function)])
        names = sorted({flags.option(n) for part in own for t in _terms(part) for n in t.fields if flags.settable(n)})
        for name in names or ["(no flag)"]:
            by_flag[name].append(rule)
    out = [f"# SGLang {escape(label)} server-argument rules", "",
           f"{len(rules)} rules: " + ", ".join(f"{kinds[k.value]} {k.value}" for k in RuleKind)
           + f"; {sum(r.reachable for r in rules)} reachable from the entry points.", "",
           "Generated by sglang-constraints; do not edit.", "", "## By flag", ""]
    for name in sorted(by_flag, key=lambda n: (n == "(no flag)", n)):
        out += [f"### {code(name) if name.startswith('-') else escape(name)} ({len(by_flag[name])})", ""]
        out += [f"- {_rule_link(r, r.id)} — {code(f'{r.location.file}:{r.location.line}')}" for r in _ordered(by_flag[name])]
        out.append("")
    out += ["## By file", ""]
    for path in sorted(by_file):
        out += [f"### {code(path)} ({len(by_file[path])})", ""]
        out += [f"- {_rule_link(r, r.id)} — line {r.location.line}" for r in _ordered(by_file[path])]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def by_function(rules: Iterable[Rule]) -> dict[tuple[str, str], list[Rule]]:
    groups: dict[tuple[str, str], list[Rule]] = defaultdict(list)
    for rule in rules:
        groups[(rule.location.file, rule.function)].append(rule)
    return groups


def _ordered(rules: Iterable[Rule]) -> list[Rule]:
    return sorted(rules, key=lambda r: (r.location.file, r.location.line, r.id))


def render_site(rules: Sequence[Rule], flag_list: Sequence[Flag], source: Mapping[str, object], folder: Path,
                source_url: str = DEFAULT_SOURCE_URL) -> list[Path]:
    """Write `<id>.md`, `<id>.json` and `index.md` into `folder`; returns the files written."""
    flags = Flags(flag_list)
    by_id = {r.id: r for r in rules}
    files: dict[str, str] = {"index.md": index(rules, flags, source)}
    for rule in rules:
        files[f"{rule.id}.md"] = page(rule, flags, source, by_id, source_url)
        # Compact, sorted: byte-stable, and the C encoder is 20 times faster than indenting.
        files[f"{rule.id}.json"] = json.dumps(rule_json(rule), sort_keys=True, ensure_ascii=False,
                                              separators=(",", ":")) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(files):
        _replace(folder / name, files[name])
        written.append(folder / name)
    return written


def _replace(path: Path, text: str) -> None:
    """Each page whole or not at all (temp file + rename); no fsync per page, it is a rebuildable folder."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    os.replace(tmp, path)


# ---- command --------------------------------------------------------------------------------------------


def add_parser(commands) -> None:
    from .cli import add_source_arguments

    parser = commands.add_parser("render", help="write one Markdown page per rule and an index",
                                 description="Docs pages from a source (like extract) or a rules.json.")
    add_source_arguments(parser)
    parser.add_argument("-o", "--output", default="docs", help="folder for the pages")
    parser.add_argument("--source-url", default=DEFAULT_SOURCE_URL,
                        help="link template with {commit}, {path}, {line} (default: GitHub, pinned)")
    parser.add_argument("--keep-going", action="store_true", help="skip files that fail to parse")
    parser.set_defaults(func=cmd_render)


def cmd_render(args: argparse.Namespace) -> int:
    from .check import load_rules
    from .cli import run_extract

    if args.path and args.path.endswith(".json") and not (args.release or args.git):
        ruleset = load_rules(args.path)
        rules, flag_list, source = ruleset.rules, ruleset.flags, ruleset.source
    else:
        ex = run_extract(args)
        rules, flag_list, source = ex.rules, ex.flags, ex.info.as_dict()
    try:
        args.source_url.format(commit="c", path="p", line=1, end_line=1)
    except (KeyError, IndexError, ValueError) as error:
        raise UsageError(f"--source-url: bad template ({error})") from None
    written = render_site(rules, flag_list, source, Path(args.output), args.source_url)
    print(f"{len(rules)} pages and index.md -> {args.output} ({len(written)} files)")
    return EXIT_OK
