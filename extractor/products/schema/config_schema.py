"""The JSON Schema (draft 2020-12) of the YAML file a release reads with `--config`, from its rules.

SGLang's config merger (`server_args_config_parser.py`) turns each key into `--KEY` as written and
each value into words (`true` on a store_true flag: the bare flag; a list: several values; a mapping:
its JSON text; anything else: `str(value)`), then argparse parses those words before the command
line's own. So a key is an option string without its dashes (`tp-size`, `tensor-parallel-size`; not
`tp_size`: argparse knows no `--tp_size`), and a value is valid when its words convert as argparse
converts them. Flags whose action takes no value and is not store_true (`BooleanOptionalAction`,
deprecated switches) are refused by the merger itself.

Cross-field rules: a guard whose trigger reads only flags that keep their typed value, compared with
constants, becomes an `if`/`then` that holds exactly where the trigger surely does for the file as the
whole launch (keys left out take their defaults; `model-path`, required, is taken as a real model
given on the command line). Every schema here only ever under-approximates a trigger, so the schema
never refuses a file SGLang accepts; the other guards are listed under `x-sglang-rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ...core.formula import apply_transforms, compare, fields_read
from ...core.model import And, Atom, Const, Flag, Formula, Lit, Not, Or, Rule, RuleKind, Term, TermKind
from ...logic.messages import known_message
from ...logic.expressions import UNKNOWN
from ...logic.launch import Catalog, Option, config_key_refusal, takes_list, value_type

DRAFT = "https://json-schema.org/draft/2020-12/schema"
NEVER: dict = {"not": {}}  # no value
ALWAYS: dict = {}  # every value

# What a text must look like for Python's int(), float() and SGLang's human_readable_int to take it
# (ECMA-262 patterns, no flags: a schema's regular expressions are the editor's, not Python's).
INT_TEXT = r"^\s*[-+]?\d+(_\d+)*\s*$"
FLOAT_TEXT = (r"^\s*[-+]?((\d[\d_]*\.?[\d_]*|\.\d[\d_]*)([eE][-+]?\d[\d_]*)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?"
              r"|[nN][aA][nN])\s*$")
HUMAN_INT_TEXT = r"^\s*(\d+(_\d+)*|\d+(\.\d+)?(k|M|G|T)|\d+(Ki|Mi|Gi|Ti))\s*$"

# A required flag the file may leave to the command line, and the value it is taken to hold there:
# the launch serves a real checkpoint (SGLang's own `none`/`dummy` model paths are for tests).
GIVEN_ON_THE_COMMAND_LINE = {"model_path": "org/model"}

_ALWAYS_REFUSED = ("--help", "-h")  # argparse prints its help and exits: no launch


@dataclass(frozen=True)
class Key:
    """One key a config file may hold: the option it names and how the merger passes its value."""

    name: str  # the option string without its leading dashes
    option: Option
    takes_value: bool  # "--KEY VALUE"; False: a switch, passed bare when the value is true
    refused: str | None = None  # the merger's (or argparse's) words when it refuses the key
    # an underscore spelling (`tp_size`): refused by argparse, yet read by the cross-field checks as
    # the flag, so that a file's next errors show with the first
    misspelt: bool = False


# ---- keys and the values each takes -----------------------------------------------------------------


def config_keys(catalog: Catalog) -> dict[str, Key]:
    """Every key the merger passes on (and those it refuses, with why), by name."""
    keys: dict[str, Key] = {}
    for text, option in sorted(catalog.options.items()):
        if not text.startswith("--") or text in _ALWAYS_REFUSED:
            continue
        name = text[2:]
        refused = config_key_refusal(name, catalog)
        keys[name] = Key(name, option, option.store, f"{refused}: pass {text} on the command line" if refused else None)
    return keys


def abbreviations(catalog: Catalog, keys: Mapping[str, Key]) -> dict[str, str]:
    """For each key that takes a value, a pattern of its abbreviations: argparse takes a unique prefix
    of an option string for the option (`tp-si` for `tp-size`), and the merger passes a key as `--KEY`
    (it refuses full spellings only: `lora-pa` passes where `lora-paths` is refused). A switch's
    abbreviation is passed with its value as a word, which argparse refuses."""
    options = sorted(o for o in catalog.options if o.startswith("--")) + ["--config", "--help"]
    found: dict[str, str] = {}
    for name, key in keys.items():
        if not key.takes_value:
            continue
        text = "--" + name
        shortest = next((n for n in range(3, len(text))
                         if sum(o.startswith(text[:n]) for o in options) == 1), None)
        if shortest is None:
            continue
        head, rest = _escaped(text[2:shortest]), [_escaped(c) for c in text[shortest:-1]]
        tail = "".join(f"({c}" for c in rest) + ")?" * len(rest)
        found[name] = f"^{head}{tail}$"
    return found


def _escaped(text: str) -> str:
    return "".join("\\" + c if c in "^$\\.*+?()[]{}|/" else c for c in text)


def _scalar(flag: Flag) -> dict:
    """The values `str(value)` of which argparse takes for one word of this flag."""
    kind = value_type(flag)
    if flag.choices is not None:
        return {"enum": _choice_values(flag.choices, kind)}
    # A typed value, or a text that converts: `pattern` applies to strings only.
    if kind == "int":
        return {"type": ["integer", "string"], "pattern": INT_TEXT}
    if kind == "human_readable_int":
        return {"type": ["integer", "string"], "pattern": HUMAN_INT_TEXT}
    if kind == "float":
        return {"type": ["number", "string"], "pattern": FLOAT_TEXT}
    if kind == "json" and (flag.type or "").rsplit(".", 1)[-1] in ("loads", "json_list_type"):
        # `str(value)` must be JSON: a mapping is written as JSON, `true` as "true"; None ("None") is not
        return {"type": ["object", "array", "string", "number", "boolean"], "contentMediaType": "application/json"}
    # str, a custom parser, a JSON-typed field read as text: any word, as `str()` writes it
    return {"type": ["string", "number", "boolean", "null", "object"]}


def _choice_values(choices: Iterable[object], kind: str) -> list:
    """The YAML values whose word is one of the choices: `str(True).lower()` is "true", `str(2)` "2"."""
    found: list = []

    def add(value: object) -> None:
        if not any(value == v and type(value) is type(v) for v in found):
            found.append(value)

    for choice in choices:
        if choice is None:
            continue  # argparse compares the word "None" with None: never chosen from a file
        if kind in ("int", "float") and isinstance(choice, (int, float)) and not isinstance(choice, bool):
            add(choice)
            add(str(choice))
            continue
        text = str(choice)
        add(text)
        if re.fullmatch(r"-?[1-9]\d*|0", text):
            add(int(text))
        if text in ("true", "false"):
            add(text == "true")
        if text == "None":
            add(None)
    return found


def refusal(words: str) -> dict:
    """No value, with the reason in the validator's own message ("... should not be valid under
    {'description': ...}")."""
    return {"not": {"description": words}}


def value_schema(key: Key, passed: bool = False) -> dict:
    """What the key's value may be, as the merger turns it into words and argparse converts them
    (`passed`: as if the merger passed the key on, which it does for an abbreviation)."""
    if key.refused and not passed:
        return refusal(key.refused)
    flag = key.option.flag
    if not key.takes_value:
        # true: the bare switch; false and an empty list: left out
        return {"type": ["boolean", "array"], "maxItems": 0}
    one = _scalar(flag)
    nargs = flag.nargs if flag.nargs not in ("None", "?") else None
    if nargs is not None:
        if str(nargs).isdigit():
            count = int(nargs)
            return {"if": {"type": "array"}, "then": {"items": one, "anyOf": [
                {"maxItems": 0}, {"minItems": count, "maxItems": count}]}, "else": one}
        return {"if": {"type": "array"}, "then": {"items": one}, "else": one}  # an empty list is left out
    # one word: a list of at most one item passes that item (an empty one is left out)
    return {"if": {"type": "array"}, "then": {"items": one, "maxItems": 1}, "else": one}


def _description(flag: Flag) -> str:
    return " ".join((flag.help or "").split()) or flag.name


def _default(flag: Flag, key: Key) -> tuple[bool, object]:
    if not key.takes_value:
        return True, False
    if flag.default_is_literal and isinstance(flag.default_value, (str, int, float, bool, type(None))):
        return True, flag.default_value
    if flag.default_is_literal and isinstance(flag.default_value, tuple):
        return True, list(flag.default_value)
    return False, None


def property_schema(key: Key, catalog: Catalog) -> dict:
    flag = key.option.flag
    schema: dict = {"description": _description(flag)}
    if key.refused:
        schema["description"] = f"{key.refused}. {schema['description']}"
        if key.name.replace("-", "_") == flag.name:
            schema.update(refusal(key.refused))
        else:
            # a spelling other than the field's own (`no-X`): before 0.5.23 the merger refused the
            # field's name only and passed this one on, so an empty list was left out
            schema.update({"if": {"const": []}, "else": refusal(key.refused)})
        return schema
    alias = next((a for a in flag.aliases if a.flag == f"--{key.name}"), None)
    if alias is not None and alias.deprecated:
        schema["deprecated"] = True
        schema["description"] = f"Deprecated spelling of {catalog.primary(flag.name)[2:]}. {schema['description']}"
    elif flag.deprecated:
        schema["deprecated"] = True
    known, default = _default(flag, key)
    if known:
        schema["default"] = default
    schema.update(value_schema(key))
    return schema


# ---- cross-field rules -----------------------------------------------------------------------------


class _Unsupported(Exception):
    """A trigger part JSON Schema cannot say exactly: the rule goes to `x-sglang-rules`."""


def _any(items: list[dict]) -> dict:
    items = [i for i in items if i != NEVER]
    if any(i == ALWAYS for i in items):
        return ALWAYS
    return NEVER if not items else items[0] if len(items) == 1 else {"anyOf": items}


def _all(items: list[dict]) -> dict:
    items = [i for i in items if i != ALWAYS]
    if any(i == NEVER for i in items):
        return NEVER
    return ALWAYS if not items else items[0] if len(items) == 1 else {"allOf": items}


def _not(item: dict) -> dict:
    return NEVER if item == ALWAYS else ALWAYS if item == NEVER else {"not": item}


class _Field:
    """What a config file sets a field to: left out (its default), one spelling of it, or several
    (order-dependent: never sure)."""

    def __init__(self, name: str, keys: list[Key], catalog: Catalog, shortened: Mapping[str, str]) -> None:
        self.name, self.keys = name, [k for k in keys if not k.refused]  # a refused key fails the file anyway
        # a file may set the field by an abbreviation too (of a refused spelling as well): where none
        # is present, no key of the file matches one
        found = [shortened[k.name] for k in keys if k.name in shortened]
        self.no_abbreviation = {"propertyNames": {"not": {"pattern": "|".join(found)}}} if found else ALWAYS
        flag = catalog.flags[name]
        self.flag = flag
        if name in GIVEN_ON_THE_COMMAND_LINE:
            self.default = GIVEN_ON_THE_COMMAND_LINE[name]
        elif not self.keys and flag.flags:
            # an option the file cannot set (a BooleanOptionalAction...): only the command line
            # does, so the file alone does not decide it
            self.default = UNKNOWN
        else:
            self.default = catalog.default(flag)

    @staticmethod
    def present(key: Key) -> dict:
        if not key.takes_value:
            return {"required": [key.name], "properties": {key.name: {"const": True}}}
        # an empty list is left out by the merger
        return {"required": [key.name], "properties": {key.name: {"not": {"type": "array", "maxItems": 0}}}}

    def only(self, key: Key) -> dict:
        return _all([self.present(key), *(_not(self.present(k)) for k in self.keys if k is not key),
                     self.no_abbreviation])

    def sure(self, atom: Atom, want: bool) -> dict:
        """The files on which the atom surely has the truth `want`."""
        cases: list[dict] = []
        if self.default is not UNKNOWN and _truth(atom, self.default) is want:
            cases.append(_all([*(_not(self.present(k)) for k in self.keys), self.no_abbreviation]))
        for key in self.keys:
            option = key.option
            if not key.takes_value or option.stores_const:
                if option.const is not UNKNOWN and _truth(atom, option.const) is want:
                    cases.append(self.only(key))
                continue
            values = _values(self.flag, atom, want)
            if values != NEVER:
                cases.append(_all([self.only(key), {"properties": {key.name: values}}]))
        return _any(cases)


def _truth(atom: Atom, value: object) -> bool | None:
    try:
        left = apply_transforms(value, atom.term.transforms)
        return bool(compare(left, atom.op, atom.other.value if isinstance(atom.other, Lit) else None))
    except (TypeError, ValueError, AttributeError):
        return None


def _plain_kind(flag: Flag) -> str | None:
    """The flag's value type when argparse converts with a plain int, float or str (not a custom parser)."""
    text = re.sub(r"\s+", "", flag.type or "str")
    while (m := re.fullmatch(r"(?:typing\.)?Optional\[(.*)\]", text)) is not None:
        text = m.group(1)
    if text.startswith("Literal[") or text in ("str", "int", "float"):
        kind = value_type(flag)
        return kind if kind in ("str", "int", "float") else None
    return None


def _case_free(text: str) -> str:
    """An anchored pattern matching `text` in any letter case (what `.lower() == text` accepts)."""
    out = []
    for ch in text:
        if ch.isalpha() and ch.lower() != ch.upper():
            out.append(f"[{ch.lower()}{ch.upper()}]")
        else:
            out.append(_escaped(ch))
    return "^" + "".join(out) + "$"


def _values(flag: Flag, atom: Atom, want: bool) -> dict:
    """The typed values at one key of `flag` on which the atom surely has the truth `want` (values of
    other JSON types, whose word argparse may still take, are left out: never sure)."""
    kind = _plain_kind(flag)
    if kind is None or takes_list(flag):
        raise _Unsupported(flag.name)
    json_type = {"str": "string", "int": "integer", "float": "number"}[kind]
    other = atom.other.value if isinstance(atom.other, Lit) else None
    if isinstance(atom.other, Term):
        raise _Unsupported(atom.term.text)
    transforms = atom.term.transforms
    if transforms and (transforms != ("lower",) or kind != "str"):
        raise _Unsupported(atom.term.text)
    op = atom.op
    if op in ("is", "is not") and other is None or op in ("==", "!=") and other is None:
        # a value from the file is never None
        holds = op in ("is not", "!=")
        return {"type": json_type} if holds is want else NEVER
    if isinstance(other, bool) or (isinstance(other, tuple) and any(isinstance(v, bool) for v in other)):
        raise _Unsupported(atom.term.text)  # 1 == True in Python: not said with JSON types
    if op in ("is", "is not"):
        op = "==" if op == "is" else "!="

    def matches(value: object) -> dict | None:
        """The values equal (after the transform) to one constant; None when none of this type can be."""
        if kind == "str":
            if not isinstance(value, str):
                return None
            if transforms:
                return {"pattern": _case_free(value)} if value == value.lower() else None
            return {"const": value}
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"const": value}
        return None

    if op == "truthy":
        true = {"minLength": 1} if kind == "str" else {"not": {"const": 0}}
        false = {"maxLength": 0} if kind == "str" else {"const": 0}
    elif op in ("==", "!="):
        found = matches(other)
        true, false = (found, {"not": found}) if found is not None else (NEVER, ALWAYS)
        if op == "!=":
            true, false = false, true
    elif op in ("in", "not in") and isinstance(other, tuple):
        options = [m for m in (matches(v) for v in other if v is not None) if m is not None]
        found = _any(options)
        true, false = found, _not(found)
        if op == "not in":
            true, false = false, true
    elif op in ("<", "<=", ">", ">=") and kind != "str" and isinstance(other, (int, float)):
        word = {"<": "exclusiveMaximum", "<=": "maximum", ">": "exclusiveMinimum", ">=": "minimum"}
        opposite = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
        true, false = {word[op]: other}, {word[opposite[op]]: other}
    else:
        raise _Unsupported(atom.term.text)
    chosen = true if want else false
    if chosen == NEVER:
        return NEVER
    return {"type": json_type, **chosen}


def _sure(f: Formula, want: bool, fields: Callable[[str], _Field]) -> dict:
    """The files on which the formula surely has the truth `want`, for the file as the whole launch."""
    if isinstance(f, Const):
        return ALWAYS if f.value is want else NEVER
    if isinstance(f, Not):
        return _sure(f.arg, not want, fields)
    if isinstance(f, (And, Or)):
        parts = [_sure(a, want, fields) for a in f.args]
        return _all(parts) if isinstance(f, And) is want else _any(parts)
    if isinstance(f, Atom):
        if f.term.kind is not TermKind.FIELD or isinstance(f.other, Term):
            raise _Unsupported(f.term.text)
        return fields(f.term.name).sure(f, want)
    raise _Unsupported(type(f).__name__)


def rule_schema(rule: Rule, keys_of: Mapping[str, list[Key]], catalog: Catalog,
                shortened: Mapping[str, str]) -> dict | None:
    """The `if` part of a guard: the files its trigger surely holds on; None when JSON Schema cannot
    say it (a platform, model or derived value, a comparison of two flags, a custom parser)."""
    if rule.trigger is None:
        return None
    made: dict[str, _Field] = {}

    def fields(name: str) -> _Field:
        if name not in made:
            if name not in catalog.flags:
                raise _Unsupported(name)  # not a server argument: its value is not the file's
            made[name] = _Field(name, keys_of.get(name, []), catalog, shortened)
        return made[name]

    try:
        found = _sure(rule.trigger, True, fields)
    except _Unsupported:
        return None
    return None if found == NEVER else found


def _required_groups(schema: dict) -> list[frozenset[str]]:
    """Groups of keys of which every object valid under the schema holds one (a flag's spellings)."""
    groups = [frozenset({key}) for key in schema.get("required", ())]
    for part in schema.get("allOf", ()):
        groups += _required_groups(part)
    if "anyOf" in schema:
        chosen = [_required_groups(part) for part in schema["anyOf"]]
        if all(chosen):
            groups.append(frozenset().union(*(min(c, key=len) for c in chosen)))
    return groups


def _named_at(message: str, key: str) -> int:
    """Where the message names the key (as `--key`, `key` or the field's name); past its end if not."""
    spots = [message.find(text) for text in (key, key.replace("-", "_")) if text in message]
    return min(spots) if spots else len(message) + 1


def _rule_keys(rule: Rule, keys_of: Mapping[str, list[Key]]) -> list[str]:
    names = fields_read(rule.effective)
    return sorted({k.name for n in names for k in keys_of.get(n, ()) if not k.refused and not k.misspelt})


# ---- the document ----------------------------------------------------------------------------------


def config_schema(ruleset, page: Callable[[Rule], str | None] = lambda rule: None) -> dict:
    """The JSON Schema of the config file of one rule set's release (`products.linter.RuleSet`);
    `page(rule)`: the URL of the rule's page, if any."""
    catalog = ruleset.catalog
    label = ruleset.label
    keys = config_keys(catalog)
    usable = {name: key for name, key in keys.items() if not key.refused}
    keys_of: dict[str, list[Key]] = {}
    for key in keys.values():
        keys_of.setdefault(key.option.flag.name, []).append(key)
    properties: dict[str, dict] = {}
    for name, key in sorted(keys.items()):
        properties[name] = property_schema(key, catalog)
    for name, key in sorted(usable.items()):
        spelt = name.replace("-", "_")
        if spelt != name and spelt not in keys:
            words = f"Not a key: SGLang passes a key as --KEY, and argparse knows no --{spelt}; write {name}"
            # what the merger leaves out before argparse sees it: an empty list, and false where the
            # spelling names a switch
            left_out = [[], False] if not key.takes_value else [[]]
            properties[spelt] = {"description": words + ".", "if": {"enum": left_out}, "else": refusal(words)}
            keys_of[key.option.flag.name].append(Key(spelt, key.option, key.takes_value, misspelt=True))
    shortened = abbreviations(catalog, keys)
    # An abbreviation takes what its key takes (a JSON pointer escapes "/" as "~1").
    patterns = {pattern: {"description": f"An abbreviation of {name} (argparse takes a unique prefix of an option).",
                          **({"$ref": "#/properties/" + name.replace("~", "~0").replace("/", "~1")}
                             if not keys[name].refused else value_schema(keys[name], passed=True))}
                for name, pattern in sorted(shortened.items())}
    checks: list[dict] = []
    others: list[dict] = []
    for rule in sorted(ruleset.rules, key=lambda r: (r.order or 0, r.id)):
        if rule.kind is RuleKind.ADJUSTMENT or not rule.reachable:
            continue
        message = known_message(rule)
        where = f"{rule.location.file}:{rule.location.line}"
        record: dict = {"id": rule.id, "message": message, "keys": _rule_keys(rule, keys_of), "where": where}
        url = page(rule)
        if url:
            record["page"] = url
        found = rule_schema(rule, keys_of, catalog, shortened)
        if found is None:
            others.append(record)
            continue
        # The failure quotes SGLang's words, at a key every file the rule refuses holds (the one its
        # message names first), else at the file.
        failure = {"not": {"description": message}}
        held = sorted(_required_groups(found), key=lambda g: (min(_named_at(message, k) for k in g), len(g), sorted(g)))
        checks.append({
            "description": f"SGLang: {message} ({where})",
            "x-sglang-rule": record,
            "if": found,
            "then": {"properties": {k: failure for k in sorted(held[0])}} if held else failure,
        })
    refused = sorted(name for name, key in keys.items() if key.refused)
    return {
        "$schema": DRAFT,
        "$id": f"urn:sglang-constraints:sglang-{label}:config-file",
        "title": f"SGLang {label} server config file (--config)",
        "description": (
            f"The YAML file `python -m sglang.launch_server --config FILE` reads in SGLang {label}: one key per "
            "option, spelt as on the command line without its dashes (tp-size, not tp_size); switches as "
            "true/false; lists for options that take several values. Keys SGLang's config merger refuses: "
            + (", ".join(refused) if refused else "none")
            + ". Cross-field checks hold for the file as the whole launch (keys left out take their defaults); "
            "options given on the command line beside --config win over the file's."),
        "type": "object",
        "properties": properties,
        "patternProperties": patterns,
        # Any other key is refused, but for an empty list, which the merger leaves out.
        "additionalProperties": {"if": {"const": []}, "else": refusal(
            f"Not a key of SGLang {label}: no option --KEY (an option's name without its dashes, e.g. tp-size)")},
        "allOf": checks,
        "x-sglang-rules": others,
        "x-sglang-release": label,
    }
