"""A rule for people: its condition in words (own tests, inherited ones) and its solutions in flags.

Derived from the rule and the flag catalog alone: the trigger split into the rule's own tests and
the conditions it inherits, phrased with the catalog's flags, and the command-line edits that avoid it.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...core.formula import (CONVENTION, Spellings, apply_transforms, compare, compares_sets, literal_source, neg,
                             readable_text, terms)
from ...core.model import NEGATED_OP, And, Atom, Const, Flag, Formula, Lit, Not, Or, Rule, RuleKind, Term, TermKind
from ...logic.expressions import computable
from ...logic.facts import run_site

_MAX_WAYS = 6
PLACEHOLDER = "VALUE"  # the value of a fix's flag when any value does (`pass --ssl-keyfile VALUE`)
_WAYS_PER_PART = 4  # ways of each part of a conjunction tried in combinations
_MAX_COMBINATIONS = 256
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


def _value_text(value: object) -> str:
    if isinstance(value, str) and value and not re.search(r"\s", value):
        return value
    return literal_source(value)


def term_words(term: Term, flags: Flags) -> str:
    if term.kind in (TermKind.FIELD, TermKind.RESOLVED):
        words = code(flags.option(term.name))
        if term.kind is TermKind.RESOLVED:  # what SGLang settled on, not only what was typed
            words = f"the resolved {words}"
        if "len" in term.transforms:
            words = f"the length of {words}"
        if any(t in ("lower", "upper", "casefold") for t in term.transforms):
            words += " (ignoring case)"
        return words
    if term.kind is TermKind.ENV:
        match = re.fullmatch(r"envs\.(\w+)\.get\(\)", term.text)
        if match or re.fullmatch(r"os\.(?:environ\.get|getenv)\(['\"]\w+['\"]\)", term.text):
            return f"environment variable {code(term.name)}"
        return code(readable_text(term.text, flags.spellings))
    if term.kind is TermKind.MODEL:
        found = model_words(term.text)
        if found is not None:
            return found
    return code(readable_text(term.text, flags.spellings))


# How a condition reads the checkpoint's config (`model_config_of(server_args).hf_config`, the `hf_config`
# of a helper), and what that says to a reader: the model's architecture, an entry of its config.
_CONFIG = r"(?:model_config_of\(\w+\)\.)?hf_config"
_ARCHITECTURE = re.compile(rf"{_CONFIG}\.architectures\[0\]|\({_CONFIG}\.architectures or \[None\]\)\[0\]"
                           r"|model_architecture")
_CONFIG_ENTRY = re.compile(rf"(?:{_CONFIG}\.(?!get\b)(\w+)|getattr\({_CONFIG}, \"(\w+)\", [^(),]*\)|{_CONFIG}\.get\(\"(\w+)\"\))"
                           r"(?:\.get\(\"(\w+)\"\))?")


def model_words(text: str) -> str | None:
    """A model term in words (the model's architecture, an entry of the model config), or None
    for one read otherwise (a helper of SGLang's over the config, a property of its ModelConfig)."""
    if _ARCHITECTURE.fullmatch(text):
        return "the model's architecture"
    found = _CONFIG_ENTRY.fullmatch(text)
    if found is None:
        return None
    entry, key = found.group(1) or found.group(2) or found.group(3), found.group(4)
    return f"the model config's {code(entry)}" if key is None else f"{code(key)} of the model config's {code(entry)}"


def atom_words(atom: Atom, flags: Flags, positive: bool = True) -> str:
    term = atom.term
    run = run_site(term.text) if atom.op == "truthy" else None
    if run is not None:  # `raised_in("<module>:<Class>.<method>", n, ...)`: a check read by running it
        method = code(run[0].rpartition(":")[2])
        return (f"{method}, run over this launch's flags and the checkpoint's config, stops here" if positive
                else f"{method}, run over this launch's flags and the checkpoint's config, does not stop here")
    failure = _LIBRARY_FAILURE.fullmatch(term.text) if atom.op == "truthy" else None
    if failure is not None and failure.group(2) == "json.loads":  # the text a flag gives is no JSON
        given = failure.group(3).split("__v")[0]
        text = code(flags.option(given) if given in term.fields else readable_text(failure.group(3), flags.spellings))
        return f"{text} {'is not' if positive else 'is'} JSON text (`json.loads` {'raises' if positive else 'takes it'})"
    if failure is not None:  # `AutoConfig.from_pretrained(path, ...)` of a config.json whose model type it does not know
        return ("transformers does not load the checkpoint's config.json (no config class of the transformers this "
                "release pins has its `model_type`, it has none, or it names code of its own that the launch does not "
                "trust)" if positive else "transformers loads the checkpoint's config.json")
    said = _LIBRARY_SAID.fullmatch(term.text)
    if said is not None and atom.op in ("contains", "not contains") and isinstance(atom.other, Lit):
        # `"deepseek_v32" not in str(e)` of the error a library call raised: what it says.
        speaker = "json" if said.group(1) == "json.loads" else "transformers"
        includes = (atom.op == "contains") == positive
        return f"what {speaker} says {'includes' if includes else 'does not include'} {code(_value_text(atom.other.value))}"
    raised = _RAISED_CALL.fullmatch(term.text) if atom.op == "truthy" else None
    if raised is not None:  # `raised(Exception, current_platform.get_device(device_id))`: a try body of one call
        return f"{code(raised.group(2))} {'raises' if positive else 'does not raise'} {code(raised.group(1))}"
    subject = term_words(term, flags)
    if compares_sets(atom):  # `backends <= {"fa3", "triton"}`: not "at most"; its negation no ordering
        other = term_words(atom.other, flags) if isinstance(atom.other, Term) else code(_value_text(atom.other.value))
        return f"{subject} {'is' if positive else 'is not'} {_SET_WORDS[atom.op]} {other}"  # type: ignore[union-attr]
    op = atom.op if positive or atom.op == "truthy" else NEGATED_OP[atom.op]
    if atom.op == "truthy":
        return subject + " " + _truthy_words(atom, flags, positive)
    if isinstance(atom.other, Term):
        other = term_words(atom.other, flags)
    else:
        value = atom.other.value if atom.other is not None else None
        if value is None and term.kind is TermKind.RESOLVED and op in ("is", "==", "is not", "!="):
            option = code(flags.option(term.name))
            return (f"{option} is still unset after SGLang's defaults" if op in ("is", "==")
                    else f"{option} is set (typed, or by SGLang's defaults)")
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


_SET_WORDS = {"<=": "a subset of", "<": "a proper subset of", ">=": "a superset of", ">": "a proper superset of"}
_RAISED_CALL = re.compile(r"raised\(([\w.]+), ([\w.]+\(.*\))\)")
# A library call the launch's values decide (`logic.library_calls`): the error, the call, its first argument.
_LIBRARY_FAILURE = re.compile(r"raised\(([\w.]+), (json\.loads|AutoConfig\.from_pretrained)\((.*?)(?:, trust_remote_code=\w+)?\)\)")
_LIBRARY_SAID = re.compile(r"str\(raised_message\([\w.]+, (json\.loads|AutoConfig\.from_pretrained)\(.*\)\)\)")


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
    if term.kind is TermKind.MODEL and _CONFIG_ENTRY.fullmatch(term.text):  # a list or a dict there, as often
        return "is given" if positive else "is not given (or empty)"
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
        text = join_words(parts, "and")
        return text if not nested else f"both {text}" if len(parts) == 2 else f"all of {text}"
    text = join_words(parts, "or")
    return f"either {text}" if nested else text


def join_words(parts: Sequence[str], word: str) -> str:
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
    # A condition that is itself an `or` (a test over a local that holds one value per path) is
    # one test of the rule's own, not several call paths.
    paths = rule.effective.args if isinstance(rule.effective, Or) and not isinstance(rule.condition, Or) \
        else (rule.effective,)
    region = own_lines(rule)
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
        # A library call's failure is the guard's own test: the call is the line that raises.
        own = [p for p in tail if (_mentions(p, region) or library_test(p) is not None) and _nnf(p) not in earlier] \
            or tail[-1:] or parts[-1:]
        splits.append((own, [p for p in parts if p not in own]))
    if len(splits) == 1:
        return splits[0]
    own = [p for p in splits[0][0] if all(any(_same_test(p, q) for q in s[0]) for s in splits)]
    if not own:
        return [], [rule.effective]
    rests = [[p for p in conjuncts(path) if not any(_same_test(p, o) for o in own)] for path in paths]
    common = [p for p in rests[0] if all(p in r for r in rests)]
    either = Or(tuple(And(tuple(r)) if len(r) > 1 else r[0] for r in ([p for p in r if p not in common] for r in rests) if r))
    return own, common + ([either] if either.args else [])


def _same_test(a: Formula, b: Formula) -> bool:
    """The same own test on two call paths: equal, or the same method run to the same raise (the
    values it is run over differ by path: `quantization__v1`, `quantization__v9`)."""
    if a == b:
        return True
    sites = [run_site(f.term.text) if isinstance(f, Atom) and f.op == "truthy" else None for f in (a, b)]
    if sites[0] is not None and sites[0] == sites[1]:
        return True
    calls = [library_test(f) for f in (a, b)]
    return calls[0] is not None and calls[0] == calls[1]


# A test of what a library call did (`logic.library_calls`), or of what it said: the same on every
# call path whatever the path it is given (a model path as is, its folder, an object store's copy).
_LIBRARY_TEST = re.compile(r"(?:str\()?(raised(?:_message)?)\(([\w.]+), (json\.loads|AutoConfig\.from_pretrained)\(")


def library_tests(f: Formula) -> list[Formula]:
    """The tests of what a library call did or said in a formula, negations pushed to them, each test
    once whatever the path its call is given (`_library_test`), in order."""
    found: dict[tuple, Formula] = {}
    stack = [_nnf(f)]
    while stack:
        part = stack.pop()
        if isinstance(part, (And, Or)):
            stack.extend(reversed(part.args))
        elif (key := library_test(part)) is not None:
            found.setdefault(key, part)
    return list(found.values())


def library_test(f: Formula) -> tuple | None:
    """What a library-call test tests, its call's argument aside: (op, operand, raised or
    raised_message, the exception, the call); None for any other test."""
    atom = f.arg if isinstance(f, Not) else f
    if not isinstance(atom, Atom):
        return None
    found = _LIBRARY_TEST.match(atom.term.text)
    return (isinstance(f, Not), atom.op, atom.other, *found.groups()) if found else None


def own_lines(rule: Rule) -> set[str]:
    """The names on the lines of the rule's enclosing `if`s (or its assert): what it tests itself."""
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
    for term in terms(part):
        candidates = set(term.fields) | ({term.name} if term.kind in (TermKind.FIELD, TermKind.ENV) else set())
        if term.kind not in (TermKind.FIELD, TermKind.ENV):
            candidates |= set(_IDENTIFIER.findall(term.text)) - _COMMON_WORDS
        if candidates & names:
            return True
    return False


def outside_terms(rule: Rule, spellings: Spellings = CONVENTION) -> dict[str, list[str]]:
    """Conditions the command line does not set, by kind: env, platform, model, opaque; as people
    read them (`readable_text`).

    An opaque expression over flags that `check` can compute (`tp_size * dp_size`) is not outside.
    """
    found: dict[str, list[str]] = defaultdict(list)
    for term in terms(rule.effective):
        if term.kind in (TermKind.FIELD, TermKind.RESOLVED) or term.kind is TermKind.OPAQUE and computable(term):
            continue  # the launch's own values: typed, or as the run resolved them from what was typed
        failure = _LIBRARY_FAILURE.fullmatch(term.text)
        if failure is not None and failure.group(2) == "json.loads" \
                and computable(Term(TermKind.OPAQUE, failure.group(3), failure.group(3), term.fields)):
            continue  # json.loads of a flag's text: the launch's own value decides it
        if run_site(term.text) is not None:
            continue  # a method `check` runs over the launch: the words of the rule's own test say it
        text = readable_text(term.text, spellings)
        if text not in found[term.kind.value]:
            found[term.kind.value].append(text)
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


def apply_way(argv: Sequence[str], way: Way, catalog, placeholders: bool = False) -> list[str] | None:
    """The command line with a way's edits made; None when an edit has no real value (a placeholder),
    unless `placeholders`: then `VALUE` stands as the value (any text a free-form flag takes)."""
    result = list(argv)
    for edit in way:
        if edit.action == "env":
            result = [t for t in result if not t.startswith(edit.name + "=")]
            if edit.value is not None:
                result.insert(0, f"{edit.name}={edit.value}")
            continue
        if edit.value == PLACEHOLDER and not placeholders:
            return None  # a placeholder is no command line
        result = _without(result, edit.name, catalog)
        if edit.action == "pass":
            result += [edit.name] + ([edit.value] if edit.value is not None else [])
    return result


_NEGATIVE_NUMBER = re.compile(r"^-(\d|\.\d)")


def _without(argv: list[str], option: str, catalog) -> list[str]:
    """The command line with every occurrence of the flag `option` names (any alias, `--no-`) dropped."""
    target = catalog.option(option)
    if target is None:
        return argv
    result: list[str] = []
    skipping = False
    for token in argv:
        # `-1` is a value, as argparse reads it (no option of SGLang's looks like a negative number).
        if token.startswith("-") and not _NEGATIVE_NUMBER.match(token):
            found = catalog.option(token.split("=", 1)[0])
            skipping = found is not None and found.flag.name == target.flag.name
            if skipping:
                skipping = found.store and "=" not in token
                continue
        elif skipping:
            continue
        result.append(token)
    return result


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
    return " and ".join(f"{verb} {join_words(items, 'and')}" for verb, items in groups)


def _ways(f: Formula, flags: Flags, truth: bool) -> list[Way]:
    """Ways to make `f` evaluate to `truth`."""
    if isinstance(f, Const):
        return [()] if f.value == truth else []
    if isinstance(f, Not):
        return _ways(f.arg, flags, not truth)
    if isinstance(f, Atom):
        return _atom_edits(f, flags, truth)
    either = isinstance(f, And) != truth  # making one argument decide it is enough
    options = [_ways(a, flags, truth) for a in f.args]
    if either:
        return [w for option in options for w in option][:_MAX_WAYS]
    if not all(options):
        return []
    # Every argument must go its way: one way of each, the first combinations that agree (not two
    # values for one flag: `--backend VALUE` for one part and `remove --backend` for another).
    found: list[Way] = []
    for choice in itertools.islice(itertools.product(*(o[:_WAYS_PER_PART] for o in options)), _MAX_COMBINATIONS):
        combined: list[Edit] = []
        for way in choice:
            combined.extend(e for e in way if e not in combined)
        if len({e.name for e in combined}) == len(combined) and tuple(combined) not in found:
            found.append(tuple(combined))
            if len(found) == _MAX_WAYS:
                break
    return found


_VALUES_PER_ATOM = 3  # values of one flag offered for one test (`--attention-backend` among six)


def _atom_edits(atom: Atom, flags: Flags, truth: bool) -> list[Way]:
    """Edits that make the atom `truth`: removing the flag (SGLang's own choice then) when that does,
    else the first few values that do, in the order the source or the choices list them; each is
    checked on the command before it is offered (`fixes`), so one that fails there drops out."""
    term = atom.term
    if isinstance(atom.other, Term):
        return []
    if term.kind is TermKind.ENV:
        edit = _env_edit(atom, truth)
        return [edit] if edit is not None else []
    # A field as the run resolved it (`resolved(--attention-backend)`) is what the user typed when
    # they typed it: the same edits, each checked again before it is offered (`fixes`).
    if term.kind not in (TermKind.FIELD, TermKind.RESOLVED) or not flags.settable(term.name) \
            or term.name in NOT_A_FIX:
        return []
    found: list[Way] = []
    for value, edit in _candidates(atom, flags):
        try:
            holds = compare(apply_transforms(value, term.transforms), atom.op,
                            atom.other.value if atom.other is not None else None)
        except (TypeError, ValueError, AttributeError):
            continue
        if holds == truth:
            if edit[0].action == "remove" or atom.op in ("is", "is not"):
                return found or [edit]  # the default does, or any value: nothing to choose between
            found.append(edit)
            if len(found) == _VALUES_PER_ATOM:
                break
    return found


# Fields no one changes to get past an error: the model itself (`--model-path none` skips most
# checks, and serves nothing).
NOT_A_FIX = frozenset({"model_path"})


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
        values.append(PLACEHOLDER)
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


def by_function(rules: Iterable[Rule]) -> dict[tuple[str, str], list[Rule]]:
    """The rules of each function, by (file, function): the siblings `solutions` reads a guard's ways with."""
    groups: dict[tuple[str, str], list[Rule]] = defaultdict(list)
    for rule in rules:
        groups[(rule.location.file, rule.function)].append(rule)
    return groups
