"""Terms of a value transformed on its way to a test (`cfg.mode.lower()`, `int(cfg.tp)`), and objects a
class call makes (`DSparkDraftConfig(...)`, never None)."""

from __future__ import annotations

import re

import libcst as cst

from ..core.model import Lit, Term, TermKind
from .scope import dotted_name

_STRING_METHODS = frozenset({"lower", "upper", "strip", "casefold"})
_BUILTIN_TRANSFORMS = frozenset({"int", "float", "str", "len", "bool", "abs"})


def transform_of(node: cst.BaseExpression) -> tuple[str | None, cst.BaseExpression | None]:
    """`x.upper()` -> ("upper", x), `int(x)` -> ("int", x); else (None, None)."""
    if type(node) is cst.Call and not node.args and type(node.func) is cst.Attribute:
        if node.func.attr.value in _STRING_METHODS:
            return node.func.attr.value, node.func.value
    if type(node) is cst.Call and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star:
        func = dotted_name(node.func)
        if func in _BUILTIN_TRANSFORMS:
            return func, node.args[0].value
    return None, None


def transformed_value(value: Term | Lit, transform: str) -> Term | Lit | None:
    """A literal transformed, or a field's term with the transform; None when neither can be."""
    if isinstance(value, Lit):
        from ..core.formula import apply_transforms

        try:
            return Lit(apply_transforms(value.value, (transform,)))
        except (TypeError, ValueError, AttributeError):
            return None
    return transformed_term(value, transform)


def transformed_term(inner: Term | Lit, transform: str) -> Term | None:
    """A field's or variable's term with the transform applied to its value (`mode.lower()`), else None."""
    if isinstance(inner, Term) and inner.kind in (TermKind.FIELD, TermKind.ENV):
        text = f"{transform}({inner.text})" if transform in _BUILTIN_TRANSFORMS else f"{inner.text}.{transform}()"
        return Term(inner.kind, inner.name, text, inner.fields, inner.transforms + (transform,), inner.after)
    return None


_CONSTRUCTED = re.compile(r"(?:[a-z_][\w]*\.)*[A-Z]\w*[a-z]\w*\(")  # `DSparkDraftConfig(`, `pathlib.Path(`


def constructed(term: Term | Lit) -> bool:
    """An object made by calling a class (CamelCase by convention): never None."""
    if not isinstance(term, Term) or term.kind is not TermKind.OPAQUE:
        return False
    found = _CONSTRUCTED.match(term.text)
    if found is None:
        return False
    depth = 0
    for index in range(found.end() - 1, len(term.text)):
        depth += {"(": 1, ")": -1}.get(term.text[index], 0)
        if depth == 0:
            return index == len(term.text) - 1  # the call is the whole term
    return False
