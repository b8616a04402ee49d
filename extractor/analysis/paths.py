"""Locals and fields along the paths of a walk: values merged where branches join, loops unrolled
over literal items or read as opaque (their guards as a test of some item), dict locals built key by key.

The walker (`guards`) keeps, for each path, what every local and every field the function assigned
holds; here is how those environments combine: a value that differs by branch becomes a `Choice`
on the test, a dict local a choice per key, and a loop's body changes what it assigns.
"""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst

from ..core.formula import atoms, conj, disj, neg, render
from ..core.model import FALSE, TRUE, And, Atom, Choices, Formula, Term, TermKind
from .events import GuardEvent
from .lines import iter_statements
from .scope import (
    ENV_KEY,
    FIELD_KEY,
    Bound,
    Choice,
    Entries,
    Env,
    EnvOriginal,
    NonEmpty,
    OnePerItem,
    Original,
    Rewritten,
    Scope,
    Unknown,
    Value,
    bound_string,
    entries_of,
    iter_expression,
)

ADDING_METHODS = frozenset({"append", "add", "insert", "appendleft"})
GROWING_METHODS = frozenset({"extend", "update", "setdefault", "__setitem__"})


MAX_UNROLLED = 16


def literal_items(node: cst.For, env: Env) -> list[Env] | None:
    """The loop target's bindings for each item of a literal tuple or list iterated over, else None."""
    iterable: cst.BaseExpression = node.iter
    item_env: Env = env
    scope = None
    while type(iterable) is cst.Name and isinstance(item_env.get(iterable.value), Bound):
        bound = item_env[iterable.value]
        iterable, item_env, scope = bound.node, bound.env, bound.scope  # type: ignore[union-attr]
    if not type(iterable) in (cst.Tuple, cst.List) or not 0 < len(iterable.elements) <= MAX_UNROLLED:
        return None
    target = node.target
    items: list[Env] = []
    for element in iterable.elements:
        if not type(element) is cst.Element:
            return None  # `*rest`
        if type(target) is cst.Name:
            items.append({target.value: Bound(element.value, item_env, scope)})
        elif type(target) in (cst.Tuple, cst.List) and same_shape(target, element.value):  # type: ignore[arg-type]
            parts = element.value.elements  # type: ignore[attr-defined]
            items.append({t.value.value: Bound(p.value, item_env, scope) for t, p in zip(target.elements, parts)})  # type: ignore[attr-defined]
        else:
            return None
    return items


def fields_after_loop(before: Env, body: Env, context: Formula) -> Env:
    """The fields a loop body assigned or had rewritten, as they read after the loop.

    A field a call in the body may write reads as that call left it; one the body assigns holds the
    assigned value if the body ran (`context`), else what it held before.
    """
    changed = {k: v for k, v in body.items() if k.startswith(FIELD_KEY) and before.get(k) is not v}
    if not changed:
        return before
    after = dict(before)
    for key, value in changed.items():
        if isinstance(value, Rewritten) or context == TRUE:
            after[key] = value
        else:
            previous = before.get(key) or Original(key[len(FIELD_KEY):])
            after[key] = Choice(tuple(combine_options(path_options(context, value) + path_options(neg(context), previous))))
    return after


def within(event, ctx: Formula):
    """An event of a block walked relative to its entry, under the condition of reaching the block."""
    if isinstance(event, tuple):  # a staged dict entry: (key, text, condition, nest, line, end_line)
        return (event[0], event[1], conj(ctx, event[2]), *event[3:])
    return replace(event, condition=conj(ctx, event.condition))


def merged_events(events: list, key) -> list:
    """Events of one statement walked more than once (an unrolled loop), as one under either condition.
    A guard's message placeholder that differs between the walks holds, as Python raises it, the value
    of the first walk whose condition holds: `for is_unsupported, reason in unsupported: if
    is_unsupported: raise ValueError(f"... {reason}.")` raises the first unsupported item's reason
    (`Choices`, in walk order); one some walk does not know is left out."""
    groups: dict = {}
    for event in events:
        groups.setdefault(key(event), []).append(event)
    merged = []
    for group in groups.values():
        first = group[0]
        if len(group) == 1:
            merged.append(first)
            continue
        changes = {}
        if any(getattr(e, "placeholders", ()) != getattr(first, "placeholders", ()) for e in group):
            changes["placeholders"] = _walks_placeholders(group)
        condition = first.condition
        for event in group[1:]:
            condition = disj(condition, event.condition)
        merged.append(replace(first, condition=condition, **changes))
    return merged


_MAX_WALKS_CHOICES = 8  # walks of one statement whose placeholder values are kept apart


def _walks_placeholders(group: list) -> tuple:
    """The placeholders of a statement's walks: one value where all agree, else the first walk's
    whose condition holds (`Choices`)."""
    by_walk = [dict(e.placeholders) for e in group]
    found = []
    for name in by_walk[0]:
        values = [walk.get(name) for walk in by_walk]
        if any(value is None for value in values):
            continue
        if all(value == values[0] for value in values):
            found.append((name, values[0]))
            continue
        cases = [(conj(e.condition, when), case) for e, value in zip(group, values)
                 for when, case in (value.cases if isinstance(value, Choices) else ((TRUE, value),))]
        cases = [(when, case) for when, case in cases if when != FALSE]
        if 2 <= len(cases) <= _MAX_WALKS_CHOICES:
            found.append((name, Choices(tuple(cases))))
    return tuple(found)


def string_key(target: cst.Subscript, env: Env) -> str | None:
    """The key of `d["x"]`, or of `d[attr]` where `attr` is bound to a string literal (an unrolled loop)."""
    if len(target.slice) != 1 or not type(target.slice[0].slice) is cst.Index:
        return None
    return bound_string(target.slice[0].slice.value, env)


def same_shape(target: cst.Tuple | cst.List, value: cst.BaseExpression) -> bool:
    """`a, b = x, y`: a tuple of plain names unpacked from a tuple of as many plain items."""
    return (
        type(value) in (cst.Tuple, cst.List)
        and len(value.elements) == len(target.elements)
        and all(type(e) is cst.Element and type(e.value) is cst.Name for e in target.elements)
        and all(type(e) is cst.Element for e in value.elements)
    )


def assign_unknown(env: Env, target: cst.BaseExpression, scope: Scope) -> Env:
    if type(target) is cst.Name:
        return {**env, target.value: Unknown(target.value)}
    return env


# A test over one path-dependent value: its name, the value before the test, and the test's truth
# under each of that value's options (`conditions.tested_choice`).
TestedChoice = tuple[str, Choice, tuple[Formula, ...]]


def merge_branches(before: Env, then_env: Env, else_env: Env, test: Formula,
                   tested: TestedChoice | None = None) -> Env:
    """Locals after an if/else: a value that differs by branch becomes a choice on the test. The value
    the test reads itself (`tested`), where each branch either assigns it or leaves it as it was,
    becomes a choice per option it had: `if backend == "a": backend = "b"` maps each option on its
    own condition (those are disjoint), not on the test and its negation, which repeat every
    option's condition and grow with each such `if` in a row."""
    merged = dict(before)
    for name in then_env.keys() | else_env.keys():
        a, b = then_env.get(name), else_env.get(name)
        if a is b:
            if a is not None:
                merged[name] = a
            continue
        # A field one branch did not assign keeps the value the launch command gave it.
        unassigned = Original(name[len(FIELD_KEY):]) if name.startswith(FIELD_KEY) else (
            EnvOriginal(name[len(ENV_KEY):]) if name.startswith(ENV_KEY) else Unknown(name))
        entries = merged_entries(a, b, test)
        if entries is not None:
            merged[name] = entries
            continue
        options = combine_options(_per_option(tested, a or unassigned, b or unassigned) if tested and tested[0] == name
                                  else path_options(test, a or unassigned) + path_options(neg(test), b or unassigned))
        if len(options) == 1:
            merged[name] = options[0][1]
        elif len(options) > MAX_CHOICE_OPTIONS:
            # Too many paths to follow: the local (or field) becomes opaque.
            merged[name] = Unknown(unassigned.text, unassigned.fields)
        else:
            merged[name] = Choice(tuple(options))
    return merged


def _per_option(tested: TestedChoice, then_value: Value, else_value: Value) -> list[tuple[Formula, Value]]:
    """The tested value after the branches, option by option: where the test holds under an option's
    value, what the then-branch left, else what the else-branch left (the option itself where a branch
    did not assign it)."""
    _, choice, truths = tested
    found = []
    for index, ((condition, value), truth) in enumerate(zip(choice.options, truths)):
        for when, branch in ((conj(condition, truth), then_value), (conj(condition, neg(truth)), else_value)):
            if branch is choice:
                found.append((when, value))
            elif isinstance(branch, Choice):
                # A choice the branch made over this one (`if cond: backend = "x"` inside it): its
                # options that hold under another option of the tested value cannot be taken here.
                others = [c for i, (c, _) in enumerate(choice.options) if i != index]
                found += [(conj(when, c), v) for c, v in branch.options if not any(_implies(c, o) for o in others)]
            else:
                found.append((when, branch))
    return [(when, value) for when, value in found if when != FALSE]


def _implies(condition: Formula, other: Formula) -> bool:
    """Does `condition` hold only where `other` does, by its conjuncts (those of `other` among its own)?"""
    own = set(condition.args) if isinstance(condition, And) else {condition}
    return all(part in own for part in (other.args if isinstance(other, And) else (other,)))


# Values a local keeps apart, each with when, before it is taken as unknown: 0.5.23's MoE runner pass
# gives its local seven over three blocks of branches (six lost it, and 31 guards read it).
MAX_CHOICE_OPTIONS = 12


def merged_entries(a: Value | None, b: Value | None, test: Formula) -> Entries | None:
    """A dict local set key by key in either branch, as one dict whose entries depend on the test
    (a choice per key, not per combination of keys: four optional keys stay four choices)."""
    left, right = entries_of(a), entries_of(b)
    if left is None or right is None or not (isinstance(a, Entries) or isinstance(b, Entries)):
        return None
    keys = [k for k, _ in left.entries] + [k for k, _ in right.entries if all(k != j for j, _ in left.entries)]
    entries = []
    for key in keys:
        then_value, else_value = left.get(key), right.get(key)
        if then_value is else_value or then_value == else_value:
            entries.append((key, then_value))
            continue
        options = combine_options(path_options(test, then_value) + path_options(neg(test), else_value))
        if len(options) > MAX_CHOICE_OPTIONS:
            return None
        entries.append((key, options[0][1] if len(options) == 1 else Choice(tuple(options))))
    return Entries(left.text, tuple(entries), tuple(sorted(set(left.fields) | set(right.fields))))


def path_options(condition: Formula, value: Value) -> list[tuple[Formula, Value]]:
    """A value's (condition, value) pairs under `condition`: nested choices flattened."""
    if isinstance(value, Choice):
        pairs = [(conj(condition, c), v) for c, v in value.options]
    else:
        pairs = [(condition, value)]
    return [(c, v) for c, v in pairs if c != FALSE]


def combine_options(options: list[tuple[Formula, Value]]) -> list[tuple[Formula, Value]]:
    combined: list[tuple[Formula, Value]] = []
    for condition, value in options:
        for index, (other_condition, other) in enumerate(combined):
            same = same_value(other, value)
            if same is not None:
                combined[index] = (disj(other_condition, condition), same)
                break
        else:
            combined.append((condition, value))
    return combined


def same_value(a: Value, b: Value) -> Value | None:
    """One value for two paths that hold the same thing, so choices do not grow with every `if`."""
    if a is b or a == b:
        return a
    if isinstance(a, NonEmpty) and isinstance(b, NonEmpty):  # only its truth is ever read
        return NonEmpty(a.text, tuple(sorted(set(a.fields) | set(b.fields))))
    if isinstance(a, Bound) and isinstance(b, Bound) and _literal_token(a.node) is not None \
            and _literal_token(a.node) == _literal_token(b.node):
        return a  # `page_size = 64` on several paths: one value, 64
    return None


_LITERAL_NAMES = frozenset({"True", "False", "None"})


def _literal_token(node: cst.BaseExpression) -> tuple[type, str] | None:
    """A literal token's kind and text (`64`, `"auto"`, `None`), else None."""
    kind = type(node)
    if kind in (cst.Integer, cst.Float, cst.SimpleString) and not node.lpar:  # type: ignore[attr-defined]
        return kind, node.value  # type: ignore[attr-defined]
    if kind is cst.Name and node.value in _LITERAL_NAMES:  # type: ignore[attr-defined]
        return kind, node.value  # type: ignore[attr-defined]
    return None


def assigned_names(node: cst.For | cst.While) -> list[str]:
    """Locals a loop may change: assigned, unpacked, or grown by `append`-like calls."""
    names: list[str] = []
    if type(node) is cst.For:
        names_of(node.target, names)
    for stmt in iter_statements([node]):
        if type(stmt) is cst.Assign:
            for t in stmt.targets:
                names_of(t.target, names)
        elif type(stmt) in (cst.AugAssign, cst.AnnAssign):
            names_of(stmt.target, names)
        elif type(stmt) is cst.For:
            names_of(stmt.target, names)
        elif type(stmt) is cst.Expr and type(stmt.value) is cst.Call:
            func = stmt.value.func
            if type(func) is cst.Attribute and type(func.value) is cst.Name:
                if func.attr.value in ADDING_METHODS | GROWING_METHODS:
                    names.append(func.value.value)
    return sorted(set(names))


def names_of(target: cst.BaseExpression, names: list[str]) -> None:
    if type(target) is cst.Name:
        names.append(target.value)
    elif type(target) is cst.Subscript and type(target.value) is cst.Name:
        names.append(target.value.value)  # `renamed[attr] = ...` changes `renamed`
    elif type(target) in (cst.Tuple, cst.List):
        for element in target.elements:
            names_of(element.value, names)


def one_per_item_lists(node: cst.For, env: Env) -> dict[str, OnePerItem]:
    """The lists a `for` loop appends exactly one item to per item it iterates: a local bound to `[]`
    before the loop, appended to by the body's last statement and named nowhere else in it, with no
    `break`, `continue` or `else` (a raise or a return leaves the loop: what follows it saw every
    item appended)."""
    body = node.body.body if type(node.body) is cst.IndentedBlock else ()
    if node.orelse is not None or not body or not (type(body[-1]) is cst.SimpleStatementLine and len(body[-1].body) == 1):
        return {}
    last = body[-1].body[0]
    call = last.value if type(last) is cst.Expr else None
    if not (type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "append"
            and type(call.func.value) is cst.Name and len(call.args) == 1):
        return {}
    name = call.func.value.value
    before = env.get(name)
    if not (isinstance(before, Bound) and type(before.node) is cst.List and not before.node.elements):
        return {}
    for stmt in body[:-1]:
        for inner in iter_statements([stmt]):
            if type(inner) in (cst.Break, cst.Continue):
                return {}
        if _mentions(stmt, name):
            return {}
    if _mentions(node.iter, name) or _mentions(call.args[0].value, name):
        return {}
    return {name: OnePerItem(name, (), Bound(node.iter, env))}


def _mentions(node: cst.CSTNode, name: str) -> bool:
    """Does the syntax name the variable `name` (attribute names aside)?"""
    return any(type(n) is cst.Name and n.value == name for n in iter_expression(node))


def counted_items(node: cst.BaseExpression, env: Env) -> Bound | None:
    """What a list local counts the items of (`OnePerItem`), or None."""
    value = env.get(node.value) if type(node) is cst.Name else None
    return value.items if isinstance(value, OnePerItem) else None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _StopsEarly(cst.CSTVisitor):
    """A `break`, `return` or `yield` in a loop's body, outside functions it defines."""

    def __init__(self) -> None:
        self.found = False

    def visit_Break(self, node: cst.Break) -> None:
        self.found = True

    def visit_Return(self, node: cst.Return) -> None:
        self.found = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def quantified(guards: list[GuardEvent], node: cst.For, context: Atom) -> list[GuardEvent]:
    """The guards of a loop's body over items the walk does not know (`for modality in
    cfg.limit_mm_data_per_request.keys(): if modality not in allowed: raise ...`), each firing when
    its test holds for some item: the parts of its condition that read the loop's target become one
    term, `any(<test> for modality in limit_mm_data_per_request.keys())`, that `check` reads over the
    launch's value. Otherwise `modality` is a term of its own, and no launch decides the guard.

    Only where every item is tested: a body that may stop early (`break`, `return`) keeps its guards
    as they are, and so does a guard whose item test also reads a field or another value (the run
    resolves those in a trigger; inside a term's text they would read as typed)."""
    targets = [e.value for e in node.target.elements] if type(node.target) is cst.Tuple else [node.target]
    names = {t.value if type(t) is cst.Name else None for t in targets}
    if None in names or context.term.kind is not TermKind.OPAQUE:
        return guards
    visitor = _StopsEarly()
    node.body.visit(visitor)
    if visitor.found:
        return guards
    return [_quantified(guard, names, context) for guard in guards]


def _quantified(guard: GuardEvent, names: set[str], context: Atom) -> GuardEvent:
    condition = guard.condition
    if guard.run is not None or not isinstance(condition, And) or context not in condition.args:
        return guard
    item = [part for part in condition.args if part != context and _reads_any(part, names)]
    if not item or not all(_item_term(term, context.term) for atom in atoms(conj(*item))
                            for term in (atom.term, atom.other) if isinstance(term, Term)):
        return guard
    fields = tuple(sorted({*context.term.fields, *(f for atom in atoms(conj(*item)) for f in atom.term.fields)}))
    text = f"any({render(conj(*item))} for {context.term.text})"
    term = Term(TermKind.OPAQUE, text, text, fields)
    rest = [part for part in condition.args if part != context and part not in item]
    return replace(guard, condition=conj(*rest, Atom(term)))


def _reads_any(part: Formula, names: set[str]) -> bool:
    return any(word in names for atom in atoms(part)
               for term in (atom.term, atom.other) if isinstance(term, Term) for word in _NAME.findall(term.text))


def _item_term(term: Term, loop: Term) -> bool:
    """A term an item's test may read inside the loop's `any(...)`: of no field the loop does not read."""
    return term.kind is TermKind.OPAQUE and set(term.fields) <= set(loop.fields)
