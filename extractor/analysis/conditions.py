"""From libcst expressions to formulas over terms: fields, literals, env, platform, model and opaque atoms.

Comparisons are split over the values that path-dependent operands take, so they stay over fields.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import libcst as cst

from ..core.formula import REFLEXIVE_TRUTH, conj, disj, formula_size, literal_source, neg
from ..core.model import FALSE, SWAPPED_OP, TRUE, Atom, Const, Formula, Lit, Term, TermKind
from .normalize import classify, opaque, value_fields
from .paths import counted_items
from .transforms import constructed, transform_of, transformed_term, transformed_value
from .scope import (ENV_KEY, FIELD_KEY, MAX_CHOICES, Absent, Bound, Choice, Entries, Env, EnvOriginal, NonEmpty,
                    Original, Rewritten, Scope, Unknown, Value, bookkeeping_value, bound_string, choice_names,
                    dotted_name, env_call, field_of, is_alias, literal, local_text)

_MAX_EXPANDED_ATOMS = 256  # a test over path-dependent locals larger than this stays one opaque atom


# --- terms -------------------------------------------------------------------------------------


def to_term(node: cst.BaseExpression, scope: Scope, env: Env) -> Term | Lit:
    if type(node) is cst.NamedExpr:
        return to_term(node.value, scope, env)
    set_here = _env_set(node, env, "get")
    if set_here is not None and not isinstance(set_here, Choice):
        return _value_term("env", set_here, scope)  # `envs.X.get()` after this function set it
    kept = bookkeeping_value(node, scope, env)
    if kept is not None:
        return kept
    lit = literal(node, scope)
    if lit is not None and not (type(node) is cst.Name and node.value in env):
        return lit
    name = field_of(node, scope, env)
    if name is not None:
        assigned = env.get(FIELD_KEY + name) if env else None
        if assigned is not None and not isinstance(assigned, Original):
            return _value_term(name, assigned, scope)
        return Term(TermKind.FIELD, name, name, (name,))
    if type(node) is cst.Name and node.value in env:
        return _value_term(node.value, env[node.value], scope)
    enum_value = _enum_term(node, scope, env)
    if enum_value is not None:
        return enum_value
    looked_up = _dict_get(node, scope, env)
    if looked_up is not None:
        return looked_up
    if type(node) is cst.BinaryOperation and type(node.operator) in _ARITHMETIC:
        folded = _folded(node, scope, env)  # `20 * 1024`, `MAX_MB * 1024`
        if folded is not None:
            return folded
    if type(node) in (cst.Tuple, cst.List, cst.Set) and scope.enums and node.elements:
        # `(SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)`: a literal once each member is one.
        items = [to_term(e.value, scope, env) if type(e) is cst.Element else None for e in node.elements]
        if all(isinstance(item, Lit) for item in items):
            return Lit(tuple(item.value for item in items))  # type: ignore[union-attr]
    if type(node) is cst.Call and scope.inline is not None:
        inlined = scope.inline(node, env)
        if inlined is not None:
            return to_term(*inlined)
    transform, inner = transform_of(node)
    if inner is not None:  # `cfg.mode.lower()`, `int(cfg.tp)`: the field's value, transformed
        transformed = transformed_term(to_term(inner, scope, env), transform)  # type: ignore[arg-type]
        if transformed is not None:
            return transformed
    return opaque(node, scope, env)


_ARITHMETIC: dict[type, Callable[[float, float], float]] = {
    cst.Add: lambda a, b: a + b,
    cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b,
    cst.Divide: lambda a, b: a / b,
    cst.Modulo: lambda a, b: a % b,
}


def _dict_get(node: cst.BaseExpression, scope: Scope, env: Env) -> Term | Lit | None:
    """`d.get("k", default)` where `d` holds a dict display with literal keys: the entry, or the default."""
    if not (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "get"):
        return None
    if not 1 <= len(node.args) <= 2 or any(a.keyword or a.star for a in node.args):
        return None
    key = literal(node.args[0].value, scope)
    entry = _entry(node, scope, env)
    if entry is not None:
        return None if isinstance(entry, Choice) else _value_term("entry", entry, scope)
    target, target_scope, target_env = _resolved(node.func.value, scope, env)
    if key is None or not type(target) is cst.Dict:
        return None
    for element in target.elements:
        element_key = literal(element.key, target_scope) if type(element) is cst.DictElement else None
        if element_key is None:
            return None  # `**other` or a computed key: the entry cannot be told
        if element_key == key:
            return to_term(element.value, target_scope, target_env)  # type: ignore[union-attr]
    return to_term(node.args[1].value, scope, env) if len(node.args) == 2 else Lit(None)


def _entry(node: cst.BaseExpression, scope: Scope, env: Env) -> Value | None:
    """What `d.get("k"[, default])` reads where `d` is a dict local built up key by key (`Entries`):
    the entry's value (a choice where only some paths set it), the default where it is absent."""
    if not (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "get"
            and type(node.func.value) is cst.Name and isinstance(env.get(node.func.value.value), Entries)):
        return None
    if not 1 <= len(node.args) <= 2 or any(a.keyword or a.star for a in node.args):
        return None
    key = literal(node.args[0].value, scope)
    if key is None or not isinstance(key.value, str):
        return None
    entry = env[node.func.value.value].get(key.value)  # type: ignore[union-attr]
    default: Value = Bound(node.args[1].value, env) if len(node.args) == 2 else Bound(cst.Name("None"), {})

    def filled(value: Value) -> Value:
        if isinstance(value, Absent):
            return default
        if isinstance(value, Choice):
            return Choice(tuple((when, filled(option)) for when, option in value.options))
        return value

    return filled(entry)


def _env_set(node: cst.BaseExpression, env: Env, method: str) -> Value | None:
    """What `envs.NAME.get()` / `.is_set()` reads where the function `envs.NAME.set(...)` it earlier
    (on some paths: a choice with `EnvOriginal` elsewhere); None where it did not."""
    if not env:
        return None
    found = env_call(node)
    if found is None or found[1] != method:
        return None
    return env.get(ENV_KEY + found[0])


def _env_is_set(value: Value, node: cst.BaseExpression, scope: Scope) -> Formula:
    if isinstance(value, Choice):
        return disj(*(conj(when, _env_is_set(option, node, scope)) for when, option in value.options))
    if isinstance(value, EnvOriginal):
        return Atom(opaque(node, scope, {}))  # as the launch environment has it
    return TRUE


def _present(entry: Value) -> Formula:
    """When a dict local's entry is set."""
    if isinstance(entry, Absent):
        return FALSE
    if isinstance(entry, Choice):
        return disj(*(conj(when, _present(option)) for when, option in entry.options))
    return TRUE


def _folded(node: cst.BinaryOperation, scope: Scope, env: Env) -> Lit | None:
    """Arithmetic on two numbers known statically, computed."""
    left, right = to_term(node.left, scope, env), to_term(node.right, scope, env)
    numbers = [side.value for side in (left, right) if isinstance(side, Lit)]
    if len(numbers) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
        return None
    try:
        return Lit(_ARITHMETIC[type(node.operator)](*numbers))
    except ArithmeticError:
        return None


def _enum_term(node: cst.BaseExpression, scope: Scope, env: Env) -> Term | Lit | None:
    """`E.MEMBER` is the member's name (or value, for a `str` Enum); `E.from_string(x)`, `E(x)` and `E[x]` are `x`.

    Enums of algorithm names are parsed from a flag's string and compared by member, so comparing
    the flag with the member name is what the user types (`--speculative-algorithm UNO`); a `str`
    Enum member equals its value (`ConnectorType.INSTANCE == "instance"`).
    """
    if not scope.enums:
        return None
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value in scope.enums:
        if node.value.value not in env:
            member = getattr(scope.enums, "member", None)
            return Lit(member(node.value.value, node.attr.value) if member else node.attr.value)
    parsed = _enum_parsed(node, scope)
    return to_term(parsed, scope, env) if parsed is not None else None


def _enum_parsed(node: cst.BaseExpression, scope: Scope) -> cst.BaseExpression | None:
    """The string an Enum member is parsed from: `x` of `E.from_string(x)`, `E(x)` or `E[x]`."""
    if not scope.enums:
        return None
    if type(node) is cst.Call and len(node.args) == 1 and node.args[0].keyword is None:
        func = dotted_name(node.func) or ""
        owner = func.split(".")[0]
        if owner in scope.enums and (func == owner or func.count(".") == 1 and "from" in func.split(".")[1]):
            return node.args[0].value
    if type(node) is cst.Subscript and type(node.value) is cst.Name and node.value.value in scope.enums:
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if type(index) is cst.Index:
            return index.value
    return None


def _value_term(name: str, value: Value, scope: Scope) -> Term | Lit:
    if isinstance(value, Original):
        return Term(TermKind.FIELD, value.name, value.name, (value.name,))
    if isinstance(value, Rewritten):
        return Term(TermKind.FIELD, value.name, value.name, (value.name,), after=value.call)
    if isinstance(value, Bound):
        return to_term(value.node, value.scope or scope, value.env)
    if isinstance(value, Absent):
        return Lit(None)
    if isinstance(value, EnvOriginal):
        return classify(value.text, ())
    if isinstance(value, (Unknown, NonEmpty, Entries)):
        # The local's name stands for a value the walk did not follow (an expression kept as text would
        # read as part of the condition around it: `not a or b`).
        text = value.text if value.text.isidentifier() and value.text != name else local_text(name, scope)
        return classify(text, value.fields)
    return Term(TermKind.OPAQUE, name, name, value_fields(value, scope))


# --- formulas ----------------------------------------------------------------------------------


_COMPARE_OPS: dict[type, str] = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.Is: "is",
    cst.IsNot: "is not",
}


def to_formula(node: cst.BaseExpression, scope: Scope, env: Env) -> Formula:
    """The truth of an expression as a formula over atoms."""
    if env and any(type(v) is Choice for v in env.values()):
        choices = choice_names(node, env, scope)
        if choices:
            return _expand_choices(node, scope, env, choices)
    if type(node) is cst.BooleanOperation:
        left = to_formula(node.left, scope, env)
        right = to_formula(node.right, scope, env)
        return conj(left, right) if type(node.operator) is cst.And else disj(left, right)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
        return neg(to_formula(node.expression, scope, env))
    if type(node) is cst.Comparison:
        return _comparison(node, scope, env)
    if type(node) is cst.IfExp:
        test = to_formula(node.test, scope, env)
        return disj(conj(test, to_formula(node.body, scope, env)), conj(neg(test), to_formula(node.orelse, scope, env)))
    if type(node) is cst.NamedExpr:  # `if (x := cfg.a) is not None`: the walker binds x
        return to_formula(node.value, scope, env)
    set_here = _env_set(node, env, "is_set")
    if set_here is not None:  # `envs.X.is_set()` after this function set it (on some paths)
        return _env_is_set(set_here, node, scope)
    if type(node) is cst.Name and node.value in env:
        value = env[node.value]
        if isinstance(value, Bound):
            return to_formula(value.node, value.scope or scope, value.env)
        if isinstance(value, NonEmpty):
            return TRUE
        if isinstance(value, Entries):  # `if renamed:`: some entry was set
            return disj(*(_present(entry) for _, entry in value.entries))
    if type(node) is cst.Call and _none_receiver(node, env):
        # `algo.is_spark()` on the path where `algo = None`: the call is never made (it would fail),
        # so this error is not raised there.
        return FALSE
    if env and type(node) in (cst.Attribute, cst.Call):
        assigned = _assigned_field(node, scope, env)
        if isinstance(assigned, Bound):  # `self.enable_x = cfg.a > 1` ... `if self.enable_x:`
            return to_formula(assigned.node, assigned.scope or scope, assigned.env)
        if isinstance(assigned, NonEmpty):  # `self.lora_paths.append(ref)` ran: it holds items
            return TRUE
    if type(node) is cst.Call and scope.inline is not None:
        inlined = scope.inline(node, env)
        if inlined is not None:
            return to_formula(*inlined)
    if type(node) in (cst.Dict, cst.List, cst.Tuple, cst.Set):
        return Const(bool(node.elements))  # a display is truthy exactly when it has elements
    registered = _registered_instance(node, scope, env)
    if registered is not None:
        return registered
    term = to_term(node, scope, env)
    if isinstance(term, Lit):
        return Const(bool(term.value))
    if type(node) is cst.Call and term.kind is not TermKind.FIELD and term.kind is not TermKind.ENV:
        returned = _returned(node, scope, env)
        if returned is not None:  # a helper with several returns: true when what it returns is
            return disj(*(conj(when, to_formula(expr, s, e)) for when, expr, s, e in returned))
    return Atom(term)


def _registered_instance(node: cst.BaseExpression, scope: Scope, env: Env) -> Formula | None:
    """`isinstance(SpeculativeAlgorithm.from_string(x), CustomSpecAlgo)`: a name of one of the Enum's
    members (or None) parses to that member, never to an instance of another class; only another
    name may be a registered one (left opaque)."""
    if type(node) is not cst.Call or dotted_name(node.func) != "isinstance" or len(node.args) != 2:
        return None
    call, call_scope, call_env = _resolved(node.args[0].value, scope, env)  # `algo = E.from_string(cfg.x)`
    parsed = _enum_parsed(call, call_scope)
    kind = dotted_name(node.args[1].value)
    if parsed is None or kind is None or kind in scope.enums or type(call) is not cst.Call:
        return None
    owner = (dotted_name(call.func) or "").split(".")[0]  # type: ignore[attr-defined]
    members = getattr(call_scope.enums, "members", lambda name: ())(owner)
    if not members:
        return None
    registered = Atom(opaque(node, scope, env))
    found = []
    for when, value in operand_cases(parsed, call_scope, call_env, True):  # the flag as each path left it
        if isinstance(value, Lit):
            member = value.value is None or (isinstance(value.value, str) and value.value in members)
            found.append(conj(when, FALSE if member else registered))
        else:
            found.append(conj(when, neg(Atom(value, "in", Lit((None, *members)))), registered))
    return disj(*found)


def _none_receiver(node: cst.Call, env: Env) -> bool:
    """A method called on a local that holds None on this path."""
    func = node.func
    if not (type(func) is cst.Attribute and type(func.value) is cst.Name):
        return False
    value = env.get(func.value.value)
    return isinstance(value, Bound) and type(value.node) is cst.Name and value.node.value == "None"


def _returned(node: cst.Call, scope: Scope, env: Env):
    """The (when, expression, scope, locals) a small pure helper may return, or None."""
    return scope.inline_cases(node, env) if scope.inline_cases is not None else None


def _returned_items(node: cst.BaseExpression, scope: Scope, env: Env):
    """`helper(...)[i]`: the (when, i-th item, scope, locals) of each tuple a small pure helper returns."""
    if not (type(node) is cst.Subscript and type(node.value) is cst.Call and len(node.slice) == 1):
        return None
    index = node.slice[0].slice
    if not (type(index) is cst.Index and type(index.value) is cst.Integer):
        return None
    position = int(index.value.value)
    returned = _returned(node.value, scope, env)
    if returned is None:
        return None
    items = []
    for when, expr, s, e in returned:
        expr, s, e = _resolved(expr, s, e)
        if type(expr) not in (cst.Tuple, cst.List) or position >= len(expr.elements) \
                or any(type(element) is cst.StarredElement for element in expr.elements):
            return None
        items.append((when, expr.elements[position].value, s, e))
    return items


def _assigned_field(node: cst.BaseExpression, scope: Scope, env: Env) -> Value | None:
    """What the function assigned to the field this expression reads, if it reads one it assigned."""
    name = field_of(node, scope, env)
    return env.get(FIELD_KEY + name) if name is not None else None


def _resolved(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[cst.BaseExpression, Scope, Env]:
    """An expression with the locals and assigned fields it consists of replaced by what they hold."""
    while True:
        if type(node) is cst.Name and isinstance(env.get(node.value), Bound):
            value = env[node.value]
        elif type(node) in (cst.Attribute, cst.Call) and env and isinstance(_assigned_field(node, scope, env), Bound):
            value = _assigned_field(node, scope, env)
        elif type(node) is cst.NamedExpr:
            node = node.value
            continue
        elif type(node) is cst.Call and (read := _resolution_read(node, scope, env)) is not None:
            node = read
            continue
        else:
            return node, scope, env
        node, scope, env = value.node, value.scope or scope, value.env  # type: ignore[union-attr]


def _resolution_read(node: cst.Call, scope: Scope, env: Env) -> cst.BaseExpression | None:
    """`resolution_result(server_args, "name")` (0.5.23) as the expression it reads: the field as the run
    has resolved it so far, or, while that is None, the fallback its declaration gives (`Arg(fallback=0.8)`):
    `server_args.name if server_args.name is not None else 0.8`. None for any other call."""
    name = dotted_name(node.func)
    if name is None or name.rsplit(".", 1)[-1] != "resolution_result" or len(node.args) < 2 \
            or node.args[0].keyword is not None or not is_alias(node.args[0].value, scope, env):
        return None
    field = bound_string(node.args[1].value, env)
    if field is None or field.startswith("_") or field not in scope.fields:
        return None
    read = cst.Attribute(value=node.args[0].value, attr=cst.Name(field))
    fallback = scope.fallbacks.get(field)
    if fallback is None:
        return read
    return cst.IfExp(test=cst.Comparison(left=read, comparisons=[
        cst.ComparisonTarget(operator=cst.IsNot(), comparator=cst.Name("None"))]),
        body=read, orelse=cst.parse_expression(literal_source(fallback.value)))


def _truth_test(node: cst.Comparison, scope: Scope, env: Env) -> Formula | None:
    """`flag == False` / `flag is True` where the flag holds a comparison: the comparison's truth itself."""
    if len(node.comparisons) != 1:
        return None
    target = node.comparisons[0]
    op = _COMPARE_OPS[type(target.operator)]
    if op not in ("==", "!=", "is", "is not"):
        return None
    for this, other in ((node.left, target.comparator), (target.comparator, node.left)):
        if type(other) is cst.Name and other.value in ("True", "False") and other.value not in env:
            inner, inner_scope, inner_env = _resolved(this, scope, env)
            if inner is this or not bool_valued(inner, inner_scope, inner_env):
                return None
            truth = to_formula(inner, inner_scope, inner_env)
            wanted = (other.value == "True") == (op in ("==", "is"))
            return truth if wanted else neg(truth)
    return None


def bool_valued(node: cst.BaseExpression, scope: Scope, env: Env) -> bool:
    """Does the expression evaluate to True or False? Comparisons and `not` do; `a and b` does when both
    parts do; a field compared with True/False is taken for a boolean flag (store_true)."""
    node, scope, env = _resolved(node, scope, env)
    if type(node) is cst.Comparison or (type(node) is cst.UnaryOperation and type(node.operator) is cst.Not):
        return True
    if type(node) is cst.BooleanOperation:
        return bool_valued(node.left, scope, env) and bool_valued(node.right, scope, env)
    if type(node) is cst.Name and node.value in ("True", "False") and node.value not in env:
        return True
    return field_of(node, scope, env) is not None


def _comparison(node: cst.Comparison, scope: Scope, env: Env) -> Formula:
    truth = _truth_test(node, scope, env)
    if truth is not None:
        return truth
    pairs = _elementwise(node)
    if pairs is not None:
        # `(prefill, decode) != ("dsv4", "dsv4")`: equal exactly when every item is.
        equal = conj(*(
            _comparison(cst.Comparison(left, [cst.ComparisonTarget(cst.Equal(), right)]), scope, env)
            for left, right in pairs
        ))
        return equal if type(node.comparisons[0].operator) is cst.Equal else neg(equal)
    membership = _membership(node, scope, env)
    if membership is not None:
        return membership
    parts: list[Formula] = []
    left_node = node.left
    for target in node.comparisons:
        op = _COMPARE_OPS[type(target.operator)]
        left_cases = operand_cases(left_node, scope, env, False)
        right_cases = operand_cases(target.comparator, scope, env, op in ("in", "not in"))
        parts.append(disj(*(
            conj(when_left, when_right, _compare(left, op, right, node, scope, env))
            for when_left, left in left_cases
            for when_right, right in right_cases
        )))
        left_node = target.comparator
    return conj(*parts)


_MAX_MEMBERS = 8  # items of a display `in` tests one by one


def _membership(node: cst.Comparison, scope: Scope, env: Env) -> Formula | None:
    """`x in {a, b}` of a display whose items are not all literals (`chosen = {prefill, decode}` of two
    backends): `x == a or x == b`, each item over what it holds where the display was made; `not in`,
    neither. A display of literals is one `Lit` (`operand_cases`)."""
    if len(node.comparisons) != 1 or type(node.comparisons[0].operator) not in (cst.In, cst.NotIn):
        return None
    display, display_scope, display_env = _resolved(node.comparisons[0].comparator, scope, env)
    if type(display) not in (cst.Set, cst.Tuple, cst.List) or not 0 < len(display.elements) <= _MAX_MEMBERS:
        return None
    if not all(type(e) is cst.Element for e in display.elements) or \
            isinstance(to_term(display, display_scope, display_env), Lit):  # of literals, Enum members too
        return None
    left_cases = operand_cases(node.left, scope, env, False)
    equal = disj(*(
        conj(when_left, when_item, _compare(left, "==", item, node, scope, env))
        for element in display.elements
        for when_item, item in operand_cases(element.value, display_scope, display_env, False)
        for when_left, left in left_cases
    ))
    return equal if type(node.comparisons[0].operator) is cst.In else neg(equal)


def _elementwise(node: cst.Comparison) -> list[tuple[cst.BaseExpression, cst.BaseExpression]] | None:
    """The item pairs of `(a, b) == (x, y)` / `!=` between two tuple displays of one length, else None."""
    if len(node.comparisons) != 1 or not type(node.comparisons[0].operator) in (cst.Equal, cst.NotEqual):
        return None
    left, right = node.left, node.comparisons[0].comparator
    if not (type(left) is cst.Tuple and type(right) is cst.Tuple) or len(left.elements) != len(right.elements):
        return None
    if not all(type(e) is cst.Element for e in (*left.elements, *right.elements)):
        return None  # a starred item
    return [(a.value, b.value) for a, b in zip(left.elements, right.elements)]


_MAX_OPERAND_CASES = 24
_ENTRY = "_entry__"  # a name bound to a dict entry being read (no SGLang code uses it)


def operand_cases(
    node: cst.BaseExpression, scope: Scope, env: Env, container_ok: bool
) -> list[tuple[Formula, Term | Lit]]:
    """The values a compared operand takes, each with when it takes it.

    `backend = cfg.a or cfg.b; if backend == "x"` compares `a` when `a` is truthy and `b` otherwise;
    split so, the comparison stays over fields instead of one opaque `(a or b) == "x"`.

    A literal list, tuple or set is a `Lit` (which keeps no container type) only where the type
    cannot matter: the right side of `in` / `not in`, holding no nested containers. Elsewhere it
    stays source text, so `(tp, pp) != (1, 1)` and `set(x) <= {"a"}` do not print as lists.
    """
    start = node
    node, scope, env = _resolved(node, scope, env)
    entry = _entry(node, scope, env)
    if entry is None:
        entry = _env_set(node, env, "get")
    if entry is not None:  # `renamed.get("prefill_attention_backend")`: each value the entry holds
        return operand_cases(cst.Name(_ENTRY), scope, {**env, _ENTRY: entry}, container_ok)
    cases: list[tuple[Formula, Term | Lit]]
    choice = _choice_of(node, scope, env)
    if choice is not None:
        # A local or field that holds one value per path: the operand on each path.
        key, options = choice
        cases = [(conj(when, w), v) for when, option in options
                 for w, v in operand_cases(node, scope, {**env, key: option}, container_ok)]
        cases = [(w, v) for w, v in cases if w != FALSE]
        if len(cases) <= _MAX_OPERAND_CASES:
            return cases
        return [(TRUE, opaque(node, scope, env))]
    transform, inner = transform_of(node)
    resolved, _, resolved_env = _resolved(inner, scope, env) if inner is not None else (None, scope, env)
    counted = counted_items(resolved, resolved_env) if transform == "len" else None
    if counted is not None or inner is not None and resolved is not inner:
        # `mode.upper()` where the function assigned `mode = a if t else "x"`: the transform of each
        # value; `len(parsed)` of a list a loop filled one item per item of `cfg.paths`: `len(cfg.paths)`.
        inner_cases = operand_cases(counted.node, counted.scope or scope, counted.env, container_ok) if counted \
            else operand_cases(inner, scope, env, container_ok)
        transformed = [(w, transformed_value(v, transform)) for w, v in inner_cases]  # type: ignore[arg-type]
        if all(v is not None for _, v in transformed):
            return transformed  # type: ignore[return-value]
    if type(node) is cst.IfExp:
        test = to_formula(node.test, scope, env)
        cases = [(conj(test, w), v) for w, v in operand_cases(node.body, scope, env, container_ok)]
        cases += [(conj(neg(test), w), v) for w, v in operand_cases(node.orelse, scope, env, container_ok)]
    elif type(node) is cst.BooleanOperation:
        # `a or b` is a when a is truthy, else b; `a and b` is a when a is falsy, else b.
        first = to_formula(node.left, scope, env)
        keep_first = type(node.operator) is cst.Or
        cases = [
            (conj(w, _truth(v) if keep_first else neg(_truth(v))), v)
            for w, v in operand_cases(node.left, scope, env, container_ok)
        ]
        cases += [
            (conj(neg(first) if keep_first else first, w), v)
            for w, v in operand_cases(node.right, scope, env, container_ok)
        ]
    elif (parsed := _enum_parsed(node, scope)) is not None:
        # `SpeculativeAlgorithm.from_string(cfg.algo)` where the function rewrote `algo`: each value parsed.
        return operand_cases(parsed, scope, env, container_ok)
    elif (items := _returned_items(node, scope, env)) is not None:
        # `steps, topk, draft = _auto_choose_speculative_params(server_args, arch)`: the item of each
        # tuple the helper may return, with when it returns it.
        cases = [(conj(when, w), v) for when, item, s, e in items for w, v in operand_cases(item, s, e, container_ok)]
    elif is_boolean(node):
        # `not x`, `a > b`: True or False by its form, each with when.
        truth = to_formula(node, scope, env)
        cases = [(truth, Lit(True)), (neg(truth), Lit(False))]
    else:
        term = to_term(node, scope, env)
        if isinstance(term, Lit) and isinstance(term.value, tuple):
            if not container_ok or any(isinstance(v, tuple) for v in term.value):
                term = opaque(node, scope, env)
        returned = None
        if type(node) is cst.Call and isinstance(term, Term) and term.kind not in (TermKind.FIELD, TermKind.ENV):
            returned = _returned(node, scope, env)
        if returned is None:
            return [(TRUE, term)]
        # `_resolve_alias(cfg.algo, ...)`: each value the helper may return, with when it does.
        cases = [(conj(when, w), v) for when, expr, s, e in returned for w, v in operand_cases(expr, s, e, container_ok)]
    cases = [(w, v) for w, v in cases if w != FALSE]
    if len(cases) > _MAX_OPERAND_CASES:
        return [(TRUE, to_term(start, scope, env) if start is node else opaque(node, scope, env))]
    return cases


def _choice_of(node: cst.BaseExpression, scope: Scope, env: Env):
    """(env key, options) when the expression is a local, or a field the function assigned, whose value
    depends on the path; else None."""
    if type(node) is cst.Name:
        value = env.get(node.value)
        return (node.value, value.options) if isinstance(value, Choice) else None
    if env and type(node) in (cst.Attribute, cst.Call):
        name = field_of(node, scope, env)
        if name is not None:
            value = env.get(FIELD_KEY + name)
            return (FIELD_KEY + name, value.options) if isinstance(value, Choice) else None  # type: ignore[operator]
    if env:
        # An expression over such a field (`cfg.device.split(":")[0]` where the function declared
        # `device` on one branch): the expression on each path.
        names = [n for n in choice_names(node, env, scope) if n.startswith(FIELD_KEY)]
        if names:
            return names[0], env[names[0]].options  # type: ignore[union-attr]
    return None


def is_boolean(node: cst.BaseExpression) -> bool:
    """An expression whose value is True or False by its form: a comparison, `not`, `and`/`or` of those."""
    if type(node) is cst.Comparison or type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
        return True
    if type(node) is cst.BooleanOperation:
        return is_boolean(node.left) and is_boolean(node.right)
    return type(node) is cst.Name and node.value in ("True", "False")


def _truth(value: Term | Lit) -> Formula:
    return Const(bool(value.value)) if isinstance(value, Lit) else Atom(value)


def _compare(left: Term | Lit, op: str, right: Term | Lit, node: cst.Comparison, scope: Scope, env: Env) -> Formula:
    if op in ("is", "is not") and any(isinstance(side, Lit) and side.value is None for side in (left, right)) \
            and any(constructed(side) for side in (left, right)):
        return Const(op == "is not")  # `DSparkDraftConfig(...) is None` never holds
    if isinstance(left, Term) and left == right and op in REFLEXIVE_TRUTH and left.kind in (TermKind.FIELD, TermKind.ENV):
        return Const(REFLEXIVE_TRUTH[op])  # `page_size != view.page_size` on the path where the local kept it
    if op in ("is", "is not") and any(isinstance(side, Lit) and isinstance(side.value, str) for side in (left, right)):
        # `mode is not RaggedVerifyMode.STATIC`: members are singletons, so identity is equality of
        # what they stand for (`mode != "static"`), never "always true" as for a fresh string.
        op = "==" if op == "is" else "!="
    if isinstance(left, Lit) and isinstance(right, Lit):
        from ..core.formula import compare

        try:
            return Const(compare(left.value, op, right.value))
        except (TypeError, ValueError):
            return Atom(opaque(node, scope, env))
    if isinstance(left, Lit):
        if op in ("in", "not in") and isinstance(left.value, str) and isinstance(right, Term) and right.text == "os.environ":
            # `"X" in os.environ`: whether the variable is set.
            variable = Term(TermKind.ENV, left.value, f"os.environ.get({literal_source(left.value)})")
            return Atom(variable, "is not" if op == "in" else "is", Lit(None))
        return Atom(right, SWAPPED_OP[op], left)  # type: ignore[arg-type]
    return Atom(left, op, right)


def _expand_choices(node: cst.BaseExpression, scope: Scope, env: Env, names: list[str]) -> Formula:
    option_lists = [env[n].options for n in names]  # type: ignore[union-attr]
    total = 1
    for options in option_lists:
        total *= len(options)
    if total > MAX_CHOICES:
        return _without_choices(node, scope, env, names)
    branches: list[Formula] = []
    for combo in itertools.product(*option_lists):
        local = dict(env)
        guards = []
        for name, (cond, value) in zip(names, combo):
            local[name] = value
            guards.append(cond)
        branches.append(conj(*guards, to_formula(node, scope, local)))
    result = disj(*branches) if branches else FALSE
    if formula_size(result) > _MAX_EXPANDED_ATOMS:
        return _without_choices(node, scope, env, names)
    return result


def tested_choice(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[str, Choice, tuple[Formula, ...]] | None:
    """The one path-dependent value a test reads, with the test's truth under each of its options
    (`paths.merge_branches` merges that value option by option); None when it reads none or several."""
    names = choice_names(node, env, scope)
    if len(names) != 1:
        return None
    choice = env[names[0]]
    return names[0], choice, tuple(to_formula(node, scope, {**env, names[0]: value}) for _, value in choice.options)


def _without_choices(node: cst.BaseExpression, scope: Scope, env: Env, names: list[str]) -> Formula:
    """The test with the path-dependent values it reads taken as unknown: its shape kept
    (`quant_cfg is not None` stays a comparison over an unknown local, not one opaque atom)."""
    unknown = {n: Unknown(n[len(FIELD_KEY):] if n.startswith(FIELD_KEY) else n) for n in names}
    return to_formula(node, scope, {**env, **unknown})
