"""Values and comparisons over what the run's store holds: a field read as the run resolved it
(`resolved(x)`, `x__vK` inside an opaque term's text), literals compared at once, transforms applied,
and names replaced in a term's source text."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from ..core.formula import apply_transforms, compare, literal_source, pinned_name
from ..core.model import SWAPPED_OP, Atom, Const, Formula, Lit, Term, TermKind
from .normalize import classify

Value = Lit | Term  # a written value, over launch values (a resolved field is a RESOLVED term)


@dataclass(frozen=True, slots=True)
class Template:
    """An opaque term over fields (`(cfg_json or {}).get("k")`), some of which the store wrote."""

    term: Term
    pins: tuple[tuple[str, int], ...]  # (field, version) of each written field it reads


def resolved_term(name: str, version: int, transforms: tuple[str, ...] = ()) -> Term:
    """The field after its first `version` writes of the run."""
    return Term(TermKind.RESOLVED, name, with_transforms(f"resolved({name})", transforms), (name,), transforms,
                version=version)


def is_pinned(value) -> bool:
    return isinstance(value, Term) and value.kind is TermKind.RESOLVED


def put(left, op: str, right, side: int, value):
    return (value, op, right) if side == 0 else (left, op, value)


def pinned_atom(template: Template, op: str, other, side: int) -> Formula:
    """A comparison over an opaque term whose written fields are read as the run resolved them: each
    such field named `field__vK` in its text (`core.formula.pinned_name`), which `check` evaluates
    from the resolution table; both sides so when the other is such a term too."""
    term = pinned_term(template)
    if isinstance(other, Template):
        other = pinned_term(other)
    if op == "truthy":
        return Atom(term)
    return atom_of(term, op, other) if side == 0 else atom_of(other, op, term)


def pinned_term(template: Template) -> Term:
    text = template.term.text
    for name, version in template.pins:
        text = replace_name(text, name, pinned_name(name, version))
    return Term(TermKind.OPAQUE, text, text, template.term.fields)


def undecided(term: Term, op: str, other) -> Formula:
    """A comparison over an opaque term whose fields were written: undecided by any launch command."""
    if op == "truthy":
        text = term.text
    elif op in ("contains", "not contains"):  # Python spells membership from the other side
        text = f"{text_of(other)} {'in' if op == 'contains' else 'not in'} {term.text}"
    else:
        text = f"{term.text} {op} {text_of(other)}"
    text = f"resolved({text})"
    return Atom(Term(TermKind.OPAQUE, text, text, term.fields))


def text_of(value) -> str:
    if isinstance(value, Lit):
        return literal_source(value.value)
    if isinstance(value, Term):
        return value.text
    if isinstance(value, Template):
        return value.term.text
    return ""


def atom_of(left, op: str, right) -> Formula:
    """The comparison of two launch values (terms or literals) as a formula."""
    if isinstance(left, Lit) and (right is None or isinstance(right, Lit)):
        try:
            if op == "truthy":
                return Const(bool(left.value))
            return Const(compare(left.value, op, right.value if right is not None else None))
        except (TypeError, ValueError, AttributeError):
            text = f"{literal_source(left.value)} {op} {text_of(right)}"
            return Atom(Term(TermKind.OPAQUE, text, text))  # Python raises here: no launch value decides it
    if isinstance(left, Lit):
        if op in SWAPPED_OP and isinstance(right, Term):
            return Atom(right, SWAPPED_OP[op], left)
        text = f"{literal_source(left.value)} {op} {text_of(right)}"
        return Atom(Term(TermKind.OPAQUE, text, text, right.fields if isinstance(right, Term) else ()))
    return Atom(left, op, right)


def transformed(value: Value, transforms: tuple[str, ...]) -> Value:
    """A value with a field term's transforms (`.lower()`, `int(...)`) applied."""
    if not transforms:
        return value
    if isinstance(value, Lit):
        try:
            return Lit(apply_transforms(value.value, transforms))
        except (TypeError, ValueError, AttributeError, OverflowError):
            text = with_transforms(literal_source(value.value), transforms)
            return Term(TermKind.OPAQUE, text, text)
    if value.kind in (TermKind.FIELD, TermKind.ENV, TermKind.RESOLVED):
        return replace(value, text=with_transforms(value.text, transforms), transforms=value.transforms + transforms)
    text = with_transforms(f"({value.text})", transforms)
    return classify(text, value.fields)


def with_transforms(text: str, transforms: tuple[str, ...]) -> str:
    for t in transforms:
        text = f"{t}({text})" if t in ("int", "float", "str", "len", "bool", "abs") else f"{text}.{t}()"
    return text


def substitute(term: Term, name: str, value: Lit | Term) -> Term:
    """An opaque term with the field `name` replaced by a value in its source text."""
    replacement = literal_source(value.value) if isinstance(value, Lit) else (
        value.text if value.text.isidentifier() else f"({value.text})")
    text = replace_name(term.text, name, replacement)
    fields = tuple(sorted(set(term.fields) - {name} | (set(value.fields) if isinstance(value, Term) else set())))
    return classify(text, fields)


# A string literal or comment (left as it is), or a name: how `replace_name` reads a term's text.
_STRING_OR_NAME = re.compile(
    r'(?P<skip>"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*'"
    r"|#[^\n]*)"
    r"|(?P<name>[^\W\d]\w*)")


@lru_cache(maxsize=16384)
def replace_name(text: str, name: str, replacement: str) -> str:
    """`text` with every variable `name` (not an attribute or keyword of that name, nor a word in a
    string or comment) replaced. A scan by one regular expression, not `tokenize` (ten times slower,
    and the run replaces about five names in each of thousands of texts)."""
    if name not in text:
        return text

    def swap(match: re.Match[str]) -> str:
        if match.group("name") != name:
            return match.group(0)
        before, after = text[: match.start()].rstrip(), text[match.end():].lstrip()
        if before.endswith(".") or (after.startswith("=") and not after.startswith("==")) or after[:1] in ("'", '"'):
            return match.group(0)  # `x.name`, `f(name=1)`, a string prefix (`f"..."`)
        return replacement

    return _STRING_OR_NAME.sub(swap, text)
