"""Launch-command linter: parse launch arguments with the flag catalog, evaluate every rule's trigger.

The command line is parsed the way SGLang's argparse parser would (unknown flags, bad choices and
types, `=` and space forms, aliases, abbreviations, store_true and `--no-` forms, nargs lists);
flags left out take their defaults. Each reachable rule's trigger is evaluated in three-valued
(Kleene) logic: field atoms from the command line and defaults; environment variables as unset
unless given (`--env`, `--use-env`, or `NAME=VALUE` before the command), reading `envs.X.get()`
defaults from the source's environ.py when it is at hand; platform, model and other opaque atoms
unknown unless assumed. Adjustments that run earlier and may fire make the fields they write
uncertain, so a guard they can change is at most `possible`.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import itertools
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path

from .core.formula import CONVENTION, Spellings, apply_transforms, atoms, evaluate, flag_name, render, render_flags
from .core.model import Alias, And, Atom, Const, Flag, Formula, Not, Or, Rule, RuleKind, Term, TermKind
from .core.errors import EXIT_FINDINGS, EXIT_OK, SourceError, UsageError
from .core.serialize import dumps, read_rule_documents, records_of

UNKNOWN = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()
_MAX_COMBINATIONS = 64  # value combinations tried when adjustments may rewrite several fields
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class Unknown(Exception):
    """A value the command line does not decide."""


# ---- rule sets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleSet:
    """The records of one extraction: rules, flag catalog, where they came from, env-var defaults."""

    rules: tuple[Rule, ...]
    flags: tuple[Flag, ...]
    source: Mapping[str, object]
    envs: Mapping[str, EnvVar] | None = None  # None: environ.py was not at hand

    @property
    def label(self) -> str:
        return str(self.source.get("label", "rules"))

    @cached_property
    def catalog(self) -> Catalog:
        return Catalog(self.flags)

    @cached_property
    def defaults(self) -> dict[str, object]:
        return self.catalog.defaults()

    @cached_property
    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}


def load_rules(path: str | Path) -> RuleSet:
    """rules.json with flags.json from the same folder; env defaults from the source when it is at hand."""
    rules, flags = read_rule_documents(path)
    if flags is None:
        rules_path = Path(path) / "rules.json" if Path(path).is_dir() else Path(path)
        raise FileNotFoundError(f"{rules_path.with_name('flags.json')}: no flag catalog beside {rules_path.name}")
    source = rules.get("source")
    envs = _local_envs(source) if isinstance(source, dict) else None
    return ruleset_from_documents(rules, flags, envs, where=str(path))


def ruleset_from_documents(rules: Mapping, flags: Mapping, envs: Mapping[str, EnvVar] | None = None,
                           where: str = "rules.json") -> RuleSet:
    records, flag_records = records_of(dict(rules), dict(flags), where)
    source = rules.get("source", {})
    return RuleSet(rules=records, flags=flag_records, source=source if isinstance(source, Mapping) else {}, envs=envs)


def ruleset_of(ex, tree=None) -> RuleSet:
    """The rule set of a fresh extraction; env-var defaults read from `tree` when given."""
    return RuleSet(ex.rules, ex.flags, ex.info.as_dict(), env_defaults(tree) if tree is not None else None)


def release_rules(version: str, index_url: str | None = None) -> RuleSet:
    """The rule set of a release, through the extraction cache (`diff.extract_documents`)."""
    from .diff import extract_documents
    from .sources.trees import release_tree

    tree = release_tree(version, index_url=index_url)
    rules, flags, _ = extract_documents(tree)
    return ruleset_from_documents(rules, flags, env_defaults(tree))


def _local_envs(source: Mapping) -> dict[str, EnvVar] | None:
    """environ.py of the source a rules.json came from, if it is here already (never downloaded)."""
    from .sources.trees import cached_releases, git_tree, path_tree, release_tree

    try:
        if source.get("kind") == "release" and source.get("release") in cached_releases():
            return env_defaults(release_tree(str(source["release"])))
        if source.get("kind") == "path" and source.get("path") and Path(str(source["path"])).exists():
            return env_defaults(path_tree(str(source["path"])))
        if source.get("kind") == "git" and source.get("repo") and Path(str(source["repo"])).exists():
            return env_defaults(git_tree(str(source["repo"]), str(source["commit"])))
    except (SourceError, OSError):
        pass
    return None


# ---- environment variables -----------------------------------------------------------------------


@dataclass(frozen=True)
class EnvVar:
    """An `envs.NAME` declaration of environ.py: its parser and default when it is a literal."""

    kind: str  # bool, int, float, str, tuple, json
    default: object = None
    default_known: bool = True
    alias: str | None = None  # deprecated name read when NAME is unset


_ENV_KINDS = {"Bool": "bool", "Int": "int", "Float": "float", "Str": "str", "Tuple": "tuple", "JSON": "json"}


def env_defaults(tree) -> dict[str, EnvVar]:
    """`NAME = EnvBool(False)`-style declarations of sglang/srt/environ.py, read statically."""
    path = "sglang/srt/environ.py"
    if path not in set(tree.paths()):
        return {}
    try:
        module = ast.parse(tree.read_text(path))
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, EnvVar] = {}
    for node in ast.walk(module):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        call = node.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        match = re.fullmatch(r"Env(Bool|Int|Float|Str|Tuple|JSON)(?:WithAlias)?", call.func.id)
        if not match:
            continue
        default, known = None, True
        if call.args:
            try:
                default = ast.literal_eval(call.args[0])
            except ValueError:
                known = False  # a callable default such as _default_hip: decided at run time
        alias = next((k.value.value for k in call.keywords if k.arg == "deprecated_name"
                      and isinstance(k.value, ast.Constant)), None)
        if isinstance(default, (tuple, list)):
            default = list(default)
        found[node.targets[0].id] = EnvVar(_ENV_KINDS[match.group(1)], default, known, alias)
    return found


def _parse_env(var: EnvVar, text: str) -> object:
    if var.kind == "bool":
        lowered = text.lower()
        if lowered in ("true", "1", "yes", "y"):
            return True
        if lowered in ("false", "0", "no", "n"):
            return False
        return _env_default(var)  # SGLang warns and falls back to the default
    try:
        if var.kind == "int":
            return int(text)
        if var.kind == "float":
            return float(text)
    except ValueError:
        return _env_default(var)
    if var.kind == "tuple":
        return tuple(s.strip() for s in text.split(",") if s.strip())
    if var.kind == "json":
        raise Unknown(text)
    return text


def _env_default(var: EnvVar) -> object:
    if not var.default_known:
        raise Unknown("default")
    return tuple(var.default) if isinstance(var.default, list) else var.default


# ---- the flag catalog as argparse sees it ------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One option string: the flag it sets and how (`store` takes values; otherwise the constant)."""

    flag: Flag
    store: bool
    const: object = None
    stores_const: bool = False  # takes its values, then sets `const` (an alias such as `--monokernel-backend amd`)


@dataclass(frozen=True)
class ArgError:
    """A problem argparse would reject the command line for."""

    flag: str | None
    message: str


class Catalog:
    """Option strings, value types and defaults of every flag."""

    def __init__(self, flags: Iterable[Flag]) -> None:
        self.flags = {f.name: f for f in flags}
        self.spellings = Spellings.of(self.flags.values())
        self.options: dict[str, Option] = {}
        for flag in sorted(self.flags.values(), key=lambda f: f.name):
            action = (flag.action or "").rsplit(".", 1)[-1]
            aliases = {a.flag: a for a in flag.aliases}
            for name in flag.flags:
                if name in aliases:
                    self.options.setdefault(name, _alias_option(flag, aliases[name]))
                elif action == "BooleanOptionalAction":
                    self.options.setdefault(name, Option(flag, False, True))
                    if name.startswith("--"):
                        self.options.setdefault("--no-" + name[2:], Option(flag, False, False))
                elif action in ("store_true", "DeprecatedStoreTrueAction") or (action == "" and value_type(flag) == "bool"):
                    self.options.setdefault(name, Option(flag, False, True))
                elif action == "store_false":
                    self.options.setdefault(name, Option(flag, False, False))
                elif action == "DeprecatedAction":  # takes no value and leaves the field as it is
                    self.options.setdefault(name, Option(flag, False, self.default(flag)))
                else:
                    self.options.setdefault(name, Option(flag, True))

    def primary(self, field_name: str) -> str:
        flag = self.flags.get(field_name)
        return flag.flags[0] if flag and flag.flags else flag_name(field_name)

    def default(self, flag: Flag) -> object:
        if flag.default_is_literal:
            return _typed(flag.default_value, flag)
        if flag.default is None:
            return UNKNOWN if "annotated-field" in flag.origins or "dataclass-field" in flag.origins else None
        try:
            return _typed(safe_eval(flag.default, {}), flag)
        except Unknown:
            return UNKNOWN

    def defaults(self) -> dict[str, object]:
        return {name: self.default(flag) for name, flag in self.flags.items()}

    def required(self) -> list[Flag]:
        # A field without a default cannot be left out: SGLang makes it a required option.
        return [f for f in self.flags.values() if f.default is None and f.flags and f.action is None
                and ("annotated-field" in f.origins or "dataclass-field" in f.origins)]

    def resolve(self, text: str) -> tuple[Option | None, str | None]:
        """The option a long option string (or unique prefix, as argparse allows) names, or an error."""
        if text in self.options:
            return self.options[text], None
        matches = sorted(name for name in self.options if name.startswith(text))
        if len(matches) == 1:
            return self.options[matches[0]], None
        if matches:
            return None, f"ambiguous option: {text} could match {', '.join(matches[:6])}"
        hint = difflib.get_close_matches(text, list(self.options), n=1)
        return None, f"unrecognized arguments: {text}" + (f" (did you mean {hint[0]}?)" if hint else "")


def _alias_option(flag: Flag, alias: Alias) -> Option:
    """How an alias spelling parses: alone it stores its constant; with values, its own nargs and choices."""
    const = alias.const_value if alias.const_is_literal else UNKNOWN
    if not alias.takes_value:
        return Option(flag, False, const)
    return Option(replace(flag, nargs=alias.nargs, choices=alias.choices), True, const, alias.const is not None)


def value_type(flag: Flag) -> str:
    """The element type argparse converts with: bool, int, float, str or json."""
    text = re.sub(r"\s+", "", flag.type or "")
    while True:
        m = re.fullmatch(r"(?:typing\.)?(?:Optional|List|list|Set|set|Tuple|tuple|Sequence)\[(.*)\]", text)
        if m:
            text = m.group(1).split(",")[0] if not text.startswith(("Optional", "typing.Optional")) else m.group(1)
            continue
        m = re.fullmatch(r"(?:typing\.)?Union\[(.*),None\]", text)
        if m:
            text = m.group(1)
            continue
        break
    if text.startswith("Literal[") and flag.choices:
        first = next((c for c in flag.choices if c is not None), "")
        return "int" if isinstance(first, int) and not isinstance(first, bool) else "float" if isinstance(first, float) else "str"
    if text in ("bool", "int", "float", "str"):
        return text
    if re.match(r"(?:typing\.)?(?:Dict|dict)\b", text) or "json" in text:
        return "json"
    return "str"


def takes_list(flag: Flag) -> bool:
    nargs = flag.nargs if flag.nargs not in (None, "None", "?") else None
    return nargs is not None or bool(re.search(r"\b(List|list|Set|set|Tuple|tuple)\[", flag.type or ""))


def _typed(value: object, flag: Flag) -> object:
    # JSON keeps 1.0 as 1; a float flag's default is still a float.
    if value_type(flag) == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _convert(flag: Flag, option: str, text: str) -> tuple[object, str | None]:
    kind = value_type(flag)
    try:
        value: object = {"int": int, "float": float}.get(kind, str)(text)
    except ValueError:
        return UNKNOWN, f"argument {option}: invalid {kind} value: {text!r}"
    if kind == "json":
        try:
            value = json.loads(text)
        except ValueError:
            value = text
    if flag.choices is not None and value not in flag.choices:
        choices = ", ".join(repr(c) for c in flag.choices)
        return UNKNOWN, f"argument {option}: invalid choice: {value!r} (choose from {choices})"
    return value, None


# ---- the command line ------------------------------------------------------------------------------


@dataclass
class CommandLine:
    """What a launch command sets: field values given, env assignments in front, and errors."""

    given: dict[str, object] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    errors: list[ArgError] = field(default_factory=list)


def split_command(argv: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Launch arguments from a pasted command: program, `-m module` and `NAME=VALUE` prefixes dropped."""
    tokens = list(argv)
    if len(tokens) == 1 and (" " in tokens[0] or "\n" in tokens[0]):
        tokens = shlex.split(tokens[0].replace("\\\n", " "))
    tokens = [t for t in tokens if t.strip()]
    env: dict[str, str] = {}
    i = 0
    while i < len(tokens) and (tokens[i] == "env" or ENV_ASSIGNMENT.match(tokens[i])):
        if tokens[i] != "env":
            name, _, value = tokens[i].partition("=")
            env[name] = value
        i += 1
    if i < len(tokens) and not tokens[i].startswith("-"):
        python = re.fullmatch(r"(?:.*/)?python[\d.]*", tokens[i]) is not None
        i += 1
        while i < len(tokens):
            token = tokens[i]
            if token == "-m" and i + 1 < len(tokens):
                i += 2
                continue
            if python and re.fullmatch(r"-[a-zA-Z]+", token) and token not in ("-m",):
                i += 2 if token in ("-X", "-W") else 1
                continue
            if not token.startswith("-"):
                i += 1  # a subcommand such as `sglang serve`
                continue
            break
    return tokens[i:], env


def parse_command(argv: Sequence[str], catalog: Catalog) -> CommandLine:
    """Parse launch arguments like argparse: values by field, argparse's errors, env assignments."""
    tokens, env = split_command(argv)
    result = CommandLine(env=env)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            if tokens[i:]:
                result.errors.append(ArgError(None, f"unrecognized arguments: {' '.join(tokens[i:])}"))
            break
        if not token.startswith("-") or _NUMBER.match(token):
            result.errors.append(ArgError(None, f"unrecognized arguments: {token}"))
            continue
        name, eq, inline = token.partition("=")
        option, error = catalog.resolve(name)
        if option is None:
            result.errors.append(ArgError(name, error or f"unrecognized arguments: {name}"))
            if not eq:
                while i < len(tokens) and not _is_option(tokens[i]):
                    i += 1  # its values would only repeat the complaint
            continue
        flag = option.flag
        if not option.store:
            if eq:
                result.errors.append(ArgError(name, f"argument {name}: ignored explicit argument {inline!r}"))
            result.given[flag.name] = option.const
            continue
        values = [inline] if eq else []
        nargs = flag.nargs if flag.nargs not in ("None",) else None
        if not eq:
            limit = 1 if nargs in (None, "?") else int(nargs) if str(nargs).isdigit() else len(tokens)
            while i < len(tokens) and len(values) < limit and not _is_option(tokens[i]):
                values.append(tokens[i])
                i += 1
        problem = _count_problem(name, nargs, len(values), takes_list(flag))
        if problem:
            result.errors.append(ArgError(name, problem))
            result.given[flag.name] = UNKNOWN
            continue
        converted = []
        for text in values:
            value, problem = _convert(flag, name, text)
            if problem:
                result.errors.append(ArgError(name, problem))
            converted.append(value)
        if option.stores_const:
            result.given[flag.name] = UNKNOWN if UNKNOWN in converted else option.const
        elif nargs == "?" and not values:
            result.given[flag.name] = None  # argparse's const, None unless the source says otherwise
        elif takes_list(flag) and nargs not in (None, "?"):
            result.given[flag.name] = UNKNOWN if UNKNOWN in converted else converted
        else:
            result.given[flag.name] = converted[0]
    for flag in catalog.required():
        if flag.name not in result.given:
            result.errors.append(ArgError(flag.flags[0], f"the following arguments are required: {'/'.join(flag.flags)}"))
    return result


def _is_option(token: str) -> bool:
    return token.startswith("-") and not _NUMBER.match(token) and token != "-"


def _count_problem(option: str, nargs: str | None, count: int, is_list: bool) -> str | None:
    if nargs is None or (nargs not in ("?", "*", "+") and not str(nargs).isdigit()):
        return None if count == 1 else f"argument {option}: expected one argument"
    if nargs == "+" and count == 0:
        return f"argument {option}: expected at least one argument"
    if str(nargs).isdigit() and count != int(nargs):
        return f"argument {option}: expected {nargs} arguments"
    return None


# ---- values of terms ---------------------------------------------------------------------------------


@dataclass
class Context:
    """What is known when evaluating: field values, the environment, assumed atoms."""

    values: dict[str, object]
    env: Mapping[str, str] = field(default_factory=dict)
    envs: Mapping[str, EnvVar] | None = None
    assume: Mapping[str, bool] = field(default_factory=dict)  # normalized atom or term text -> truth
    spellings: Spellings = CONVENTION  # how the catalog spells each field's flag

    def value_of(self, term: Term) -> object:
        """A term's value, or LookupError when the command line does not decide it."""
        try:
            if term.kind is TermKind.FIELD:
                value = self.values.get(term.name, UNKNOWN)
                if value is UNKNOWN:
                    raise Unknown(term.name)
                return apply_transforms(value, term.transforms)
            key = _normal(term.text)
            if key in self.assume:
                return self.assume[key]
            if term.kind in (TermKind.PLATFORM, TermKind.MODEL):
                raise Unknown(term.text)
            return safe_eval(term.text, self.values, self._env_value)
        except LookupError:
            raise
        except Exception as error:  # Unknown, or the expression fails on these values
            raise LookupError(term.text) from error

    def _env_value(self, name: str, how: str) -> object:
        var = (self.envs or {}).get(name)
        text = self.env.get(name)
        if text is None and var is not None and var.alias:
            text = self.env.get(var.alias)
        if how == "is_set":
            return text is not None
        if how == "environ":  # os.environ.get / os.getenv: the raw string
            return text
        if var is None:
            raise Unknown(name)  # not declared in environ.py (or it was not at hand): no parser, no default
        return _env_default(var) if text is None else _parse_env(var, text)


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


# ---- a tiny evaluator for condition source text ------------------------------------------------------

_SAFE_CALLS: dict[str, Callable] = {
    "int": int, "float": float, "str": str, "len": len, "bool": bool, "abs": abs, "max": max, "min": min,
    "tuple": tuple, "list": list, "set": set, "sorted": sorted, "any": any, "all": all, "round": round,
}
_SAFE_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "dict": dict, "tuple": tuple, "set": set}
_SAFE_METHODS = frozenset({
    "lower", "upper", "strip", "lstrip", "rstrip", "casefold", "startswith", "endswith", "split", "replace",
    "get", "keys", "values", "items", "count", "index", "isdigit",
})
_BINOPS: dict[type, Callable] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
    ast.Pow: lambda a, b: a ** b if abs(b) <= 64 else _too_big(), ast.LShift: lambda a, b: a << b if b <= 64 else _too_big(),
    ast.RShift: lambda a, b: a >> b,
}
_CMPOPS: dict[type, Callable] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b, ast.Is: lambda a, b: a is b or a == b is None,
    ast.IsNot: lambda a, b: not (a is b or a == b is None),
}


def _too_big():
    raise Unknown("too large")


def safe_eval(text: str, values: Mapping[str, object], env: Callable[[str, str], object] | None = None) -> object:
    """Evaluate condition source over field values without running any code of the source.

    Only literals, arithmetic, comparisons, boolean operators, conditional expressions, a few
    builtins and string/dict methods are interpreted; env reads go through `env(name, how)`.
    Anything else (calls into SGLang, attributes of objects, unknown names) raises Unknown.
    """
    tree = _expression(text)
    if tree is None:
        raise Unknown(text)
    return _eval(tree.body, values, env)


@lru_cache(maxsize=8192)
def _expression(text: str) -> ast.Expression | None:
    """The parsed expression (never changed by `_eval`), once per text: witnesses evaluate the same
    terms tens of thousands of times."""
    try:
        return ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@lru_cache(maxsize=8192)
def computable(term: Term) -> bool:
    """Whether `safe_eval` can compute an opaque term from field values alone (no env, no calls out)."""
    if not term.fields:
        return False
    tree = _expression(term.text)
    if tree is None:
        return False
    fields = set(term.fields)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in fields and node.id not in _SAFE_CALLS \
                and node.id not in _SAFE_TYPES and node.id != "isinstance":
            return False
        if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) or isinstance(node.func, ast.Attribute) and node.func.attr in _SAFE_METHODS):
            return False
        if isinstance(node, ast.Attribute) and node.attr not in _SAFE_METHODS:
            return False
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.comprehension, ast.Starred, ast.JoinedStr)):
            return False
    return True


def _eval(node: ast.AST, values: Mapping[str, object], env) -> object:
    ev = lambda n: _eval(n, values, env)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        value = values.get(node.id, UNKNOWN)
        if value is UNKNOWN:
            raise Unknown(node.id)
        return value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [ev(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else list(items) if isinstance(node, ast.List) else set(items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise Unknown("dict unpacking")
        return {ev(k): ev(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.BoolOp):
        result = None
        for operand in node.values:
            result = ev(operand)
            if isinstance(node.op, ast.And) and not result or isinstance(node.op, ast.Or) and result:
                return result
        return result
    if isinstance(node, ast.UnaryOp):
        operand = ev(node.operand)
        return {ast.Not: lambda v: not v, ast.USub: lambda v: -v, ast.UAdd: lambda v: +v,
                ast.Invert: lambda v: ~v}[type(node.op)](operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = ev(node.left), ev(node.right)
        if isinstance(node.op, ast.Mult) and isinstance(left, (str, list, tuple)) | isinstance(right, (str, list, tuple)):
            sequence, times = (left, right) if isinstance(left, (str, list, tuple)) else (right, left)
            if not isinstance(times, int) or len(sequence) * times > 10_000:
                _too_big()
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        left = ev(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = ev(comparator)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return ev(node.body) if ev(node.test) else ev(node.orelse)
    if isinstance(node, ast.Subscript):
        container = ev(node.value)
        if isinstance(node.slice, ast.Slice):
            parts = [None if p is None else ev(p) for p in (node.slice.lower, node.slice.upper, node.slice.step)]
            return container[slice(*parts)]
        return container[ev(node.slice)]
    if isinstance(node, ast.Call) and not node.keywords:
        return _call(node, ev, env)
    raise Unknown(type(node).__name__)  # not interpreted here


def _call(node: ast.Call, ev, env) -> object:
    func = node.func
    if isinstance(func, ast.Name) and func.id == "isinstance" and len(node.args) == 2:
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        if all(isinstance(k, ast.Name) and k.id in _SAFE_TYPES for k in kinds):
            return isinstance(ev(node.args[0]), tuple(_SAFE_TYPES[k.id] for k in kinds))  # type: ignore[union-attr]
        raise Unknown("isinstance")
    if isinstance(func, ast.Name) and func.id in _SAFE_CALLS:
        return _SAFE_CALLS[func.id](*[ev(a) for a in node.args])
    if isinstance(func, ast.Attribute):
        env_read = _env_read(node)
        if env_read is not None:
            if env is None:
                raise Unknown("environment")
            name, how, default = env_read
            value = env(name, how)
            return default if how == "environ" and value is None else value
        if func.attr in _SAFE_METHODS:
            receiver = ev(func.value)
            if isinstance(receiver, (str, dict, list, tuple)):
                return getattr(receiver, func.attr)(*[ev(a) for a in node.args])
    raise Unknown("call")


def _env_read(node: ast.Call) -> tuple[str, str, object] | None:
    """`envs.NAME.get()`, `envs.NAME.is_set()`, `os.environ.get("NAME"[, d])`, `os.getenv("NAME"[, d])`."""
    func = node.func
    assert isinstance(func, ast.Attribute)
    inner = func.value
    if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id == "envs" and not node.args:
        if func.attr in ("get", "is_set"):
            return inner.attr, func.attr, None
    dotted = ast.unparse(func)
    if dotted in ("os.environ.get", "os.getenv") and node.args and isinstance(node.args[0], ast.Constant):
        default = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else None
        return str(node.args[0].value), "environ", default
    return None


# ---- evaluating rules ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A rule the command line triggers for sure (`definite`) or may trigger (`possible`)."""

    rule: Rule
    certainty: str
    unknown: tuple[str, ...] = ()  # conditions the command line does not decide
    changed_by: tuple[str, ...] = ()  # adjustments that may rewrite a field the rule reads


class Evaluator:
    """Three-valued truth of rule triggers for one command line, adjustments taken into account."""

    def __init__(self, rules: Sequence[Rule] | Mapping[str, Rule], context: Context) -> None:
        self.context = context
        self.rules = rules if isinstance(rules, Mapping) else {r.id: r for r in rules}
        self._firing: dict[str, bool | None] = {}

    def fires(self, adjustment_id: str) -> bool | None:
        """Whether an adjustment runs (on the command-line values; its own writes come after)."""
        if adjustment_id not in self._firing:
            rule = self.rules.get(adjustment_id)
            self._firing[adjustment_id] = None if rule is None else (
                evaluate(rule.effective, self.context.value_of) if rule.reachable else False)
        return self._firing[adjustment_id]

    def truth(self, rule: Rule) -> tuple[bool | None, tuple[str, ...]]:
        """The trigger's truth, and the adjustments that made it uncertain."""
        formula = rule.effective
        writers = [self.rules[a] for a in rule.affected_by if a in self.rules and self.fires(a) is not False]
        if not writers:
            return evaluate(formula, self.context.value_of), ()
        plain = evaluate(formula, self.context.value_of)
        formula = _freeze(formula, rule, writers, self.context)
        choices: dict[str, list[object]] = {}
        for target in sorted({w.target for w in writers if w.target}):
            options: list[object] = []
            by = [w for w in writers if w.target == target]
            if not any(self.fires(w.id) for w in by):
                options.append(self.context.values.get(target, UNKNOWN))
            for w in by:
                options.append(self._new_value(w.value))
            choices[target] = _unique(options)
        names = sorted(choices)
        combos = list(itertools.islice(itertools.product(*(choices[n] for n in names)), _MAX_COMBINATIONS + 1))
        if len(combos) > _MAX_COMBINATIONS:
            combos = [tuple(UNKNOWN for _ in names)]
        results = set()
        for combo in combos:
            values = dict(self.context.values)
            values.update(zip(names, combo))
            results.add(evaluate(formula, replace(self.context, values=values).value_of))
        truth = results.pop() if len(results) == 1 else None
        changed = tuple(w.id for w in writers) if truth != plain else ()
        return truth, changed

    def unknown_atoms(self, rule: Rule) -> tuple[str, ...]:
        """Undecided atoms that would decide the trigger either way (what the user could pin down)."""
        found: list[str] = []
        formula = rule.effective
        for atom in dict.fromkeys(atoms(formula)):
            if evaluate(atom, self.context.value_of) is not None:
                continue
            if_true = evaluate(_replace_atom(formula, atom, Const(True)), self.context.value_of)
            if_false = evaluate(_replace_atom(formula, atom, Const(False)), self.context.value_of)
            if if_true != if_false:
                text = render_flags(atom, self.context.spellings)
                if text not in found:
                    found.append(text)
        return tuple(found)

    def _new_value(self, text: str | None) -> object:
        """An adjustment's new value when it is a literal or computable from the flags (`x.upper()`)."""
        if text is None:
            return UNKNOWN
        try:
            return safe_eval(text, self.context.values, self.context._env_value)
        except Exception:  # Unknown, or the expression fails on these values
            return UNKNOWN


def _replace_atom(f: Formula, atom: Atom, by: Formula) -> Formula:
    if f == atom:
        return by
    if isinstance(f, Not):
        return Not(_replace_atom(f.arg, atom, by))
    if isinstance(f, (And, Or)):
        return type(f)(tuple(_replace_atom(a, atom, by) for a in f.args))
    return f


def _unique(options: list[object]) -> list[object]:
    result: list[object] = []
    for option in options:
        if option is UNKNOWN:
            return [UNKNOWN]
        if not any(type(option) is type(o) and option == o for o in result):
            result.append(option)
    return result


def top_conjuncts(f: Formula) -> tuple[Formula, ...]:
    return f.args if isinstance(f, And) else (f,)


def _freeze(formula: Formula, rule: Rule, writers: Sequence[Rule], context: Context) -> Formula:
    """Fix the atoms read before the adjustments ran to their command-line truth.

    A top-level conjunct that the guard shares with an adjustment's own trigger belongs to the path
    both inherit (the dispatcher's `model_path` check, say): it was read before the adjustment ran.
    A conjunct of the guard's own function condition is read after, so it is left alone.
    """
    own = set(top_conjuncts(rule.condition))
    shared = set()
    for writer in writers:
        mine = set(top_conjuncts(writer.effective))
        for part in top_conjuncts(formula):
            if part in mine and part not in own and writer.target in {n for t in _terms(part) for n in t.fields}:
                shared.add(part)
    if not shared:
        return formula
    parts = []
    for part in top_conjuncts(formula):
        if part in shared:
            truth = evaluate(part, context.value_of)
            parts.append(part if truth is None else Const(truth))
        else:
            parts.append(part)
    return And(tuple(parts)) if len(parts) > 1 else parts[0]


def _terms(f: Formula) -> Iterable[Term]:
    for atom in atoms(f):
        yield atom.term
        if isinstance(atom.other, Term):
            yield atom.other


def substitute_assumptions(f: Formula, assume: Mapping[str, bool],
                           spellings: Spellings = CONVENTION) -> tuple[Formula, set[str]]:
    """Replace atoms whose text (Python or flag form) was assumed by their truth; also report which matched."""
    used: set[str] = set()
    if not assume:
        return f, used

    def walk(g: Formula) -> Formula:
        if isinstance(g, Atom):
            for text in (render(g), render_flags(g), render_flags(g, spellings)):
                key = _normal(text)
                if key in assume:
                    used.add(key)
                    return Const(assume[key])
            return g
        if isinstance(g, Not):
            return Not(walk(g.arg))
        if isinstance(g, (And, Or)):
            return type(g)(tuple(walk(a) for a in g.args))
        return g

    return walk(f), used


# ---- checking a command line -----------------------------------------------------------------------------


@dataclass
class Report:
    findings: list[Finding]
    argument_errors: list[ArgError]
    adjustments: list[Rule]
    unused_assumptions: list[str]
    checked: int
    label: str

    @property
    def definite(self) -> list[Finding]:
        return [f for f in self.findings if f.certainty == "definite"]


def check(
    ruleset: RuleSet,
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    use_env: bool = False,
    assume: Mapping[str, bool] | None = None,
    only: Iterable[str] | None = None,
) -> Report:
    """Findings for a launch command: argparse errors, then every reachable guard that may fire."""
    command = parse_command(argv, ruleset.catalog)
    assumed = {_normal(k): v for k, v in (assume or {}).items()}
    context = _context(ruleset, command, env, use_env, assumed)
    rules = list(ruleset.rules)
    used: set[str] = set()
    if assumed:
        substituted = []
        for rule in rules:
            trigger, hit = substitute_assumptions(rule.effective, assumed, ruleset.catalog.spellings)
            used |= hit
            substituted.append(replace(rule, trigger=trigger) if hit else rule)
        rules = substituted
    evaluator = Evaluator(rules if assumed else ruleset.by_id, context)
    wanted = set(only) if only is not None else None
    if wanted is not None:  # a few rules (witnesses ask for one): no pass over all of them
        rules = [evaluator.rules[i] for i in sorted(wanted) if i in evaluator.rules]
    findings = []
    checked = 0
    for rule in rules:
        if not rule.reachable or rule.kind is RuleKind.ADJUSTMENT:
            continue
        checked += 1
        truth, changed = evaluator.truth(rule)
        if truth is False:
            continue
        certainty = "definite" if truth else "possible"
        unknown = () if truth else evaluator.unknown_atoms(rule)
        findings.append(Finding(rule, certainty, unknown, changed))
    findings.sort(key=lambda f: (f.certainty != "definite", f.rule.location.file, f.rule.location.line, f.rule.id))
    adjustments = [] if wanted is not None else [
        r for r in rules if r.kind is RuleKind.ADJUSTMENT and r.reachable and evaluator.fires(r.id)]
    return Report(findings, command.errors, adjustments, sorted(set(assumed) - used), checked, ruleset.label)


def definitely_triggers(ruleset: RuleSet, argv: Sequence[str], ids: Iterable[str]) -> bool:
    """Whether the command line sets off one of these guards for sure: `check` that stops at the first."""
    evaluator = Evaluator(ruleset.by_id, _context(ruleset, parse_command(argv, ruleset.catalog)))
    rules = (ruleset.by_id[i] for i in ids if i in ruleset.by_id)
    return any(evaluator.truth(r)[0] is True for r in rules if r.reachable and r.kind is not RuleKind.ADJUSTMENT)


def _context(ruleset: RuleSet, command: CommandLine, env: Mapping[str, str] | None = None, use_env: bool = False,
             assumed: Mapping[str, bool] | None = None) -> Context:
    values = dict(ruleset.defaults)
    values.update(command.given)
    environment = dict(os.environ) if use_env else {}
    environment.update(command.env)
    environment.update(env or {})
    return Context(values, environment, ruleset.envs, dict(assumed or {}), ruleset.catalog.spellings)


def report_json(report: Report, fixes: Callable[[Rule], list[str]]) -> dict:
    return {
        "source": report.label,
        "argument_errors": [{"flag": e.flag, "message": e.message} for e in report.argument_errors],
        "errors": [
            {
                "id": f.rule.id,
                "message": f.rule.message,
                "certainty": f.certainty,
                "location": {"file": f.rule.location.file, "line": f.rule.location.line},
                "fix": fixes(f.rule),
                "unknown": list(f.unknown),
                "changed_by": list(f.changed_by),
            }
            for f in report.findings
        ],
        "adjustments": [
            {"id": r.id, "message": r.message, "location": {"file": r.location.file, "line": r.location.line}}
            for r in report.adjustments
        ],
        "unused_assumptions": report.unused_assumptions,
        "summary": {
            "checked": report.checked,
            "definite": len(report.definite),
            "possible": len(report.findings) - len(report.definite),
            "argument_errors": len(report.argument_errors),
        },
    }


def report_text(report: Report, fixes: Callable[[Rule], list[str]], show_possible: bool = True) -> str:
    lines = []
    for error in report.argument_errors:
        lines.append(f"error[argument] {error.message}")
    for finding in report.findings:
        if finding.certainty == "possible" and not show_possible:
            continue
        rule = finding.rule
        lines.append(f"{'error' if finding.certainty == 'definite' else 'warning'}[{finding.certainty}] "
                     f"{rule.location.file}:{rule.location.line}: {rule.message}")
        fix = fixes(rule)
        if fix:
            lines.append("  fix: " + "; or ".join(fix))
        if finding.unknown:
            shown = ", ".join(finding.unknown[:3]) + (" ..." if len(finding.unknown) > 3 else "")
            lines.append(f"  undecided: {shown}")
        if finding.changed_by:
            lines.append(f"  may be changed by adjustments: {', '.join(finding.changed_by[:3])}")
    for text in report.unused_assumptions:
        lines.append(f"note: --assume {text!r} matched no condition")
    possible = len(report.findings) - len(report.definite)
    lines.append(f"{report.label}: {len(report.definite)} definite, {possible} possible, "
                 f"{len(report.argument_errors)} argument error(s); {report.checked} guards checked")
    return "\n".join(lines)


# ---- command -------------------------------------------------------------------------------------------


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "check", help="check a launch command against the rules",
        description="Report the errors a launch command will (definite) or may (possible) hit. "
                    "Give the launch arguments after `--`, or a whole pasted command as one string.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--rules", help="rules.json (flags.json beside it)")
    where.add_argument("--release", help="an SGLang release (extracted once, cached)")
    parser.add_argument("--index-url", help="package index for --release")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="an environment variable")
    parser.add_argument("--use-env", action="store_true", help="read environment variables from this shell")
    parser.add_argument("--assume", action="append", default=[], metavar="'ATOM=true|false'",
                        help="decide a platform, model or opaque condition, e.g. 'get_platform().is_npu=false'")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--definite-only", action="store_true", help="text output: leave out possible errors")
    parser.add_argument("launch", nargs="*", help="launch arguments (after --)")
    parser.set_defaults(func=cmd_check)


def _pairs(items: Sequence[str], what: str, parse: Callable[[str], object]) -> dict[str, object]:
    found = {}
    for item in items:
        key, eq, value = item.rpartition("=")
        if not eq or not key.strip():
            raise UsageError(f"{what} {item!r}: expected TEXT=VALUE")
        found[key.strip()] = parse(value.strip())
    return found


def _truth_value(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise UsageError(f"--assume: {text!r} is not true or false")


def open_rules(args: argparse.Namespace) -> RuleSet:
    if getattr(args, "rules", None):
        return load_rules(args.rules)
    return release_rules(args.release, getattr(args, "index_url", None))


def cmd_check(args: argparse.Namespace) -> int:
    from .render import Flags, by_function, fixes_for

    launch = list(args.launch)
    if launch[:1] == ["--"]:
        launch = launch[1:]
    if not launch:
        raise UsageError("give the launch arguments after --, e.g. check --release 0.5.23 -- --model-path m")
    if any(not ENV_ASSIGNMENT.match(item) for item in args.env):
        raise UsageError("--env expects NAME=VALUE")
    env = dict(item.split("=", 1) for item in args.env)
    assume = _pairs(args.assume, "--assume", _truth_value)
    ruleset = open_rules(args)
    report = check(ruleset, launch, env=env, use_env=args.use_env, assume=assume)  # type: ignore[arg-type]
    flags, groups = Flags(ruleset.flags), by_function(ruleset.rules)
    fixes = lambda rule: fixes_for(rule, flags, groups[(rule.location.file, rule.function)])  # noqa: E731
    if args.format == "json":
        sys.stdout.write(dumps(report_json(report, fixes)))
    else:
        print(report_text(report, fixes, show_possible=not args.definite_only))
    return EXIT_FINDINGS if report.definite or report.argument_errors else EXIT_OK
