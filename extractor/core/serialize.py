"""JSON for the whole model, in one place: records to plain data and back, and byte-stable dumps."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from collections.abc import Iterable, Mapping
from typing import Any


from .errors import DocumentError
from .formula import CONVENTION, Spellings, fields_read, render, render_flags
from .model import (
    Alias,
    And,
    EnvVar,
    Atom,
    Choices,
    Const,
    Example,
    Flag,
    Helper,
    ConfigLoader,
    HelperLibrary,
    Formula,
    Lit,
    Location,
    Not,
    Or,
    PlaceholderValue,
    PlaceValues,
    Related,
    Rule,
    RuleKind,
    Snippet,
    SourceProblem,
    Term,
    TermKind,
    Write,
)

SCHEMA_VERSION = "1.6.0"  # 1.1.0: rules carry `order`, adjustments `assigns`; unmessaged asserts are rules; 1.2.0: `helpers`, `environment`; 1.3.0: guards carry `placeholders`, messages keep `!r` and format specs; 1.4.0: `doc`, the function's docstring; 1.5.0: `places` of a guard the run reaches at several; 1.6.0: a placeholder's `cases` and `by_place`
RULES_SCHEMA_ID = "https://github.com/sglang-constraints/schemas/rules.schema.json"
FLAGS_SCHEMA_ID = "https://github.com/sglang-constraints/schemas/flags.schema.json"


# A string holding an unpaired surrogate (a command-line argument's undecodable bytes, as Python
# reads them) is no UTF-8: written as its JSON escape (`\udcff`), which only a string can hold.
_UNPAIRED = "backslashreplace"


def _record(value: Any) -> bytes:
    """One line of JSON in UTF-8, keys sorted, no spaces: orjson, six times faster than `json`'s C
    encoder on the 20 MB of a release's rules. What orjson refuses (an integer beyond 64 bits, a key
    that is not a string) `json` writes in the same style; only a float may then be spelled apart."""
    import orjson  # a C extension dearer to import than `check` of one command needs (written output only)

    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8", _UNPAIRED)


def dump_bytes(document: Any) -> bytes:
    """Sorted keys, UTF-8, newline at the end: the same data gives the same bytes.

    A document's top level is indented; its lists of records (rules, flags, nodes, changes) hold one
    record per line. That reads and diffs well line by line, and it is ten times faster to write:
    record lists are nearly all of the bytes, and a compact line is written by a C encoder. The
    document is put together as UTF-8 bytes: one non-ASCII character (an em dash in a message) would
    make Python widen every character of a 20 MB `str`, then encode it back to write it.
    """
    return b"".join(dump_pieces(document, {}))


def record_lines(document: dict, keys: Iterable[str]) -> dict[str, list[bytes]]:
    """The lines `dump_bytes` writes for the records of the lists `keys` (a list absent or empty has none)."""
    return {key: [_record(item) for item in document[key]] for key in keys if _is_records(document.get(key))}




def _is_records(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def dump_pieces(document: Any, lines: Mapping[str, list[bytes]]) -> list[bytes]:
    """`dump_bytes` as pieces to write one after another (the record lists of `lines` as the lines
    given, `record_lines`): the same bytes, without one more copy of them all."""
    if not isinstance(document, dict):
        return [_record(document), b"\n"]
    if not document:
        return [b"{}\n"]
    # Every piece in one list, joined once or written one by one: the 20 MB of a release's rules are
    # not copied once per level of nesting (each copy is fresh memory the kernel maps page by page: a
    # tenth of a second of system time per document).
    parts: list[bytes] = []
    for key in sorted(document):
        parts += (b",\n  " if parts else b"{\n  ", _record(key), b": ")
        value = document[key]
        if _is_records(value):
            found = lines.get(key)
            records = found if found is not None else [_record(item) for item in value]
            parts.append(b"[\n    ")
            parts += _separated(records, b",\n    ")
            parts.append(b"\n  ]")
        else:
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
            parts.append(text.replace("\n", "\n  ").encode("utf-8", _UNPAIRED))
    parts.append(b"\n}\n")
    return parts


def _separated(items: list[bytes], separator: bytes) -> list[bytes]:
    """The items with the separator between each two, as pieces to join."""
    found = [separator] * (2 * len(items) - 1) if items else []
    found[::2] = items
    return found


def dumps(document: Any) -> str:
    """`dump_bytes` as text."""
    return dump_bytes(document).decode()


# --- formulas ----------------------------------------------------------------------------------


def _literal_json(value: object) -> object:
    if isinstance(value, tuple):
        return [_literal_json(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    return value


def _literal_from_json(value: object) -> object:
    if isinstance(value, list):
        return tuple(_literal_from_json(v) for v in value)
    return value


def term_json(term: Term, spellings: Spellings = CONVENTION) -> dict:
    # `text` and `fields` are left out where they repeat the name (a plain field atom).
    data: dict[str, Any] = {"type": "atom", "kind": term.kind.value, "name": term.name}
    if term.text != term.name:
        data["text"] = term.text
    if term.fields != (term.name,) or term.kind is not TermKind.FIELD:
        data["fields"] = list(term.fields)
    if term.transforms:
        data["transforms"] = list(term.transforms)
    if term.kind is TermKind.RESOLVED:
        data["version"] = term.version
    flag = spellings.flag(term.name) if term.kind in (TermKind.FIELD, TermKind.RESOLVED) else None
    if flag is not None:  # none for a field the command line cannot set
        data["flag"] = flag
    return data


def term_from_json(data: dict) -> Term:
    kind = TermKind(data["kind"])
    default_fields = (data["name"],) if kind is TermKind.FIELD else ()
    return Term(kind, data["name"], data.get("text", data["name"]), tuple(data.get("fields", default_fields)),
                tuple(data.get("transforms", ())), version=data.get("version", 0))


def formula_json(f: Formula, cache: dict | None = None, spellings: Spellings = CONVENTION) -> dict:
    """The formula as a JSON tree; with `cache` (one per `spellings`), equal subformulas share one dict."""
    if cache is None:
        cache = {}
    found = cache.get(f)
    if found is not None:
        return found
    if isinstance(f, Const):
        data: dict[str, Any] = {"type": "const", "value": f.value}
    elif isinstance(f, Not):
        data = {"type": "not", "arg": formula_json(f.arg, cache, spellings)}
    elif isinstance(f, (And, Or)):
        data = {"type": "and" if isinstance(f, And) else "or", "args": [formula_json(a, cache, spellings) for a in f.args]}
    elif f.op == "truthy":
        data = term_json(f.term, spellings)
    else:
        right = term_json(f.other, spellings) if isinstance(f.other, Term) else {"type": "literal", "value": _literal_json(f.other.value)}  # type: ignore[union-attr]
        data = {"type": "compare", "op": f.op, "left": term_json(f.term, spellings), "right": right}
    cache[f] = data
    return data


def formula_from_json(data: dict, intern: dict | None = None) -> Formula:
    """The formula of a JSON tree; with `intern` (one per document), equal subformulas become one object:
    a document writes shared subformulas out in full, and evaluating them is memoized by identity."""
    if intern is not None:
        # One JSON object met again (a shipped document writes a shared subtree once and uses it
        # wherever it stands): its formula, made once. The object is kept with it, so its id stays its.
        seen = intern.get(id(data))
        if seen is not None and seen[0] is data:
            return seen[1]
        made = _formula_from_json(data, intern)
        intern[id(data)] = (data, made)
        return made
    return _formula_from_json(data, intern)


def _formula_from_json(data: dict, intern: dict | None) -> Formula:
    kind = data["type"]
    if kind == "const":
        return Const(data["value"])
    if kind in ("not", "and", "or"):
        args = (formula_from_json(data["arg"], intern),) if kind == "not" else \
            tuple(formula_from_json(a, intern) for a in data["args"])
        if intern is not None:
            # A connective over parts already interned is found by their identities, before it is
            # made: a document repeats its shared subformulas in full, many times over.
            key = (kind, *map(id, args))
            found = intern.get(key)
            if found is not None:
                return found
        f: Formula = Not(args[0]) if kind == "not" else And(args) if kind == "and" else Or(args)
        if intern is None:
            return f
        f = intern[key] = intern.setdefault(f, f)
        return f
    if intern is None:
        if kind == "atom":
            return Atom(term_from_json(data))
        right = data["right"]
        other: Lit | Term = Lit(_literal_from_json(right["value"])) if right["type"] == "literal" else term_from_json(right)
        return Atom(term_from_json(data["left"]), data["op"], other)
    # An atom too is found by what it is made of (its terms interned by their fields) before it is made.
    if kind == "atom":
        term = _interned_term(data, intern)
        key: tuple = ("atom", id(term))
        found = intern.get(key)
        if found is None:
            atom = Atom(term)
            found = intern[key] = intern.setdefault(atom, atom)
        return found
    right = data["right"]
    left = _interned_term(data["left"], intern)
    other = _interned_lit(right, intern) if right["type"] == "literal" else _interned_term(right, intern)
    key = ("compare", data["op"], id(left), id(other))
    found = intern.get(key)
    if found is None:
        atom = Atom(left, data["op"], other)
        found = intern[key] = intern.setdefault(atom, atom)
    return found


def _interned_lit(data: dict, intern: dict) -> Lit:
    """One `Lit` per literal value of a document (by value and type: `Lit` equality), as terms are one
    per term: an index holds thousands of atoms against a few hundred literals."""
    lit = Lit(_literal_from_json(data["value"]))
    return intern.setdefault(("lit", lit), lit)


def _interned_term(data: dict, intern: dict) -> Term:
    key = ("term", data["kind"], data["name"], data.get("text"), tuple(data.get("fields", ())),
           tuple(data.get("transforms", ())), data.get("version", 0))
    found = intern.get(key)
    if found is None:
        found = intern[key] = term_from_json(data)
    return found


# --- rules -------------------------------------------------------------------------------------


def rule_json(rule: Rule, cache: dict | None = None, spellings: Spellings = CONVENTION) -> dict:
    """One rule record; flags are spelled as `spellings` (the catalog of the same source) says."""
    cache = {} if cache is None else cache
    data: dict[str, Any] = {
        "id": rule.id,
        "kind": rule.kind.value,
        "exception": rule.exception,
        "message": rule.message,
        "message_static": rule.message_static,
        "location": {"file": rule.location.file, "line": rule.location.line, "end_line": rule.location.end_line},
        "function": rule.function,
        "snippet": {"start_line": rule.snippet.start_line, "end_line": rule.snippet.end_line, "text": rule.snippet.text},
        "condition": formula_json(rule.condition, cache, spellings),
        "condition_source": render(rule.condition),
        "flags": spellings.flags(fields_read(rule.condition)),
        "enclosing": list(rule.enclosing),
        "reachable": rule.reachable,
        "call_path": list(rule.call_path),
        "affected_by": list(rule.affected_by),
        "related": [
            {"id": r.id, "message": r.message, "kind": r.kind, "score": r.score} for r in rule.related
        ],
    }
    if rule.trigger is not None:
        data["trigger"] = formula_json(rule.trigger, cache, spellings)
        data["trigger_source"] = render(rule.trigger)
        data["trigger_cli"] = render_flags(rule.trigger, spellings)
        data["trigger_flags"] = spellings.flags(fields_read(rule.trigger))
    if rule.order is not None:
        data["order"] = rule.order
    if rule.places:
        data["places"] = [{"order": order, "when": formula_json(when, cache, spellings)} for order, when in rule.places]
    if rule.kind is RuleKind.ADJUSTMENT:
        data["target"] = rule.target
        data["target_flag"] = spellings.text(rule.target or "")
        data["value"] = rule.value
        if rule.assigns:
            data["assigns"] = [{"when": formula_json(when, cache, spellings), "value": _operand_json(value, spellings)}
                               for when, value in rule.assigns]
    if rule.placeholders:
        data["placeholders"] = [{"name": name, **_placeholder_json(value, cache, spellings)}
                                for name, value in rule.placeholders]
    if rule.example is not None:
        data["example"] = {"before": list(rule.example.before), "after": list(rule.example.after)}
    if rule.doc:
        data["doc"] = rule.doc
    return data


def rule_from_json(data: dict, intern: dict | None = None) -> Rule:
    # Ids, messages and places recur across rules (a related error names another rule's id and message,
    # rules share files and functions): one string each, which a pickled rule set (`check`'s index)
    # then writes once and reads back once.
    text = sys.intern
    loc = data["location"]
    snip = data["snippet"]
    example = data.get("example")
    return Rule(
        id=text(data["id"]),
        kind=RuleKind(data["kind"]),
        exception=data.get("exception"),
        message=text(data["message"]),
        message_static=data["message_static"],
        location=Location(text(loc["file"]), loc["line"], loc["end_line"]),
        function=text(data["function"]),
        snippet=Snippet(snip["start_line"], snip["end_line"], snip["text"]),
        condition=formula_from_json(data["condition"], intern),
        enclosing=tuple(data.get("enclosing", ())),
        trigger=formula_from_json(data["trigger"], intern) if "trigger" in data else None,
        call_path=tuple(data.get("call_path", ())),
        reachable=data.get("reachable", False),
        target=data.get("target"),
        value=data.get("value"),
        affected_by=tuple(map(text, data.get("affected_by", ()))),
        related=tuple(Related(text(r["id"]), text(r["message"]), text(r["kind"]), r["score"])
                      for r in data.get("related", ())),
        example=Example(tuple(example["before"]), tuple(example["after"])) if example else None,
        order=data.get("order"),
        assigns=tuple((formula_from_json(a["when"], intern), _operand_from_json(a["value"], intern))
                      for a in data.get("assigns", ())),
        placeholders=tuple((p["name"], _placeholder_from_json(p, intern)) for p in data.get("placeholders", ())),
        doc=data.get("doc"),
        places=tuple((p["order"], formula_from_json(p["when"], intern)) for p in data.get("places", ())),
    )


def write_json(write: Write, cache: dict | None = None, spellings: Spellings = CONVENTION) -> dict:
    """One write of the run's `resolution` table."""
    cache = {} if cache is None else cache
    return {
        "field": write.field,
        "version": write.version,
        "order": write.order,
        "rule": write.rule,
        "when": formula_json(write.when, cache, spellings),
        "cases": [{"when": formula_json(when, cache, spellings), "value": _operand_json(value, spellings)}
                  for when, value in write.cases],
    }


def write_from_json(data: dict, intern: dict | None = None) -> Write:
    return Write(data["field"], data["version"], data["order"], data["rule"], formula_from_json(data["when"], intern),
                 tuple((formula_from_json(c["when"], intern), _operand_from_json(c["value"])) for c in data["cases"]))


def environment_json(declared: Mapping[str, EnvVar]) -> dict:
    """rules.json's `environment`: environ.py's `envs.NAME` declarations, by name."""
    return {name: {"kind": var.kind, "default": var.default, "default_known": var.default_known, "alias": var.alias}
            for name, var in sorted(declared.items())}


def environment_of(rules_document: dict, where: str = "rules.json") -> dict[str, EnvVar] | None:
    """The `environment` of a read rules.json; None for documents written before it existed."""
    data = rules_document.get("environment")
    if data is None:
        return None
    try:
        return {str(name): EnvVar(str(v["kind"]), v.get("default"), bool(v.get("default_known", True)), v.get("alias"))
                for name, v in data.items()}
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise DocumentError(f"{where}: malformed environment record ({error.__class__.__name__}: {error})") from None


def helpers_json(library: HelperLibrary) -> dict:
    """rules.json's `helpers`: the names terms call, and the definitions behind them."""
    found = {
        "names": dict(library.names),
        "definitions": [{"key": h.key, "source": h.source, "names": dict(h.names)} for h in library.helpers],
    }
    loader = library.config_loader
    if loader is not None:
        found["config_loader"] = {"transformers": loader.transformers, "model_types": list(loader.model_types),
                                  "unknown_type_message": loader.unknown_type_message}
        if loader.untyped_message is not None:
            found["config_loader"]["untyped_message"] = loader.untyped_message
        if loader.custom_code_message is not None:
            found["config_loader"]["custom_code_message"] = loader.custom_code_message
    return found


def helpers_of(rules_document: dict, where: str = "rules.json") -> HelperLibrary:
    """The `helpers` of a read rules.json (none for documents written before it existed)."""
    data = rules_document.get("helpers") or {}
    try:
        loader = data.get("config_loader")
        return HelperLibrary(
            tuple(sorted((str(k), str(v)) for k, v in data.get("names", {}).items())),
            tuple(Helper(str(h["key"]), str(h["source"]), tuple(sorted((str(k), str(v)) for k, v in h["names"].items())))
                  for h in data.get("definitions", ())),
            ConfigLoader(str(loader["transformers"]), tuple(str(t) for t in loader["model_types"]),
                         str(loader["unknown_type_message"]),
                         str(loader["untyped_message"]) if "untyped_message" in loader else None,
                         str(loader["custom_code_message"]) if "custom_code_message" in loader else None)
            if loader is not None else None)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise DocumentError(f"{where}: malformed helpers record ({error.__class__.__name__}: {error})") from None


def _operand_json(value: Lit | Term, spellings: Spellings) -> dict:
    if isinstance(value, Term):
        return term_json(value, spellings)
    return {"type": "literal", "value": _literal_json(value.value)}


def _placeholder_json(value: PlaceholderValue, cache: dict | None, spellings: Spellings) -> dict:
    """A placeholder's value: `value` (one), `cases` (the first whose `when` holds) or `by_place` (the
    value at each place of the run, by its order)."""
    if isinstance(value, PlaceValues):
        return {"by_place": [{"order": order, **_placeholder_json(inner, cache, spellings)}
                             for order, inner in value.values]}
    if isinstance(value, Choices):
        return {"cases": [{"when": formula_json(when, cache, spellings), "value": _operand_json(operand, spellings)}
                          for when, operand in value.cases]}
    return {"value": _operand_json(value, spellings)}


def _placeholder_from_json(data: dict, intern: dict | None) -> PlaceholderValue:
    if "by_place" in data:
        by_place = tuple((p["order"], _placeholder_from_json(p, intern)) for p in data["by_place"])
        return PlaceValues(by_place)  # type: ignore[arg-type]
    if "cases" in data:
        return Choices(tuple((formula_from_json(c["when"], intern), _operand_from_json(c["value"]))
                             for c in data["cases"]))
    return _operand_from_json(data["value"])


def _operand_from_json(data: dict, intern: dict | None = None) -> Lit | Term:
    if intern is not None:
        return _interned_lit(data, intern) if data["type"] == "literal" else _interned_term(data, intern)
    return Lit(_literal_from_json(data["value"])) if data["type"] == "literal" else term_from_json(data)


# --- flags -------------------------------------------------------------------------------------


def flag_json(flag: Flag) -> dict:
    data: dict[str, Any] = {
        "name": flag.name,
        "flags": list(flag.flags),
        "type": flag.type,
        "default": flag.default,
        "choices": None if flag.choices is None else [_literal_json(c) for c in flag.choices],
        "action": flag.action,
        "nargs": flag.nargs,
        "help": flag.help,
        "deprecated": flag.deprecated,
        "location": {"file": flag.file, "line": flag.line},
        "origins": list(flag.origins),
    }
    if flag.default_is_literal:
        data["default_value"] = _literal_json(flag.default_value)
    if flag.aliases:  # left out when empty: documents without aliases keep their bytes
        data["aliases"] = [alias_json(a) for a in flag.aliases]
    if flag.fallback is not None:  # likewise: only 0.5.23's resolved fields declare one
        data["fallback"] = _literal_json(flag.fallback.value)
    if flag.refused is not None:  # likewise: a removed flag of 0.5.18-0.5.19
        data["refused"] = flag.refused
    return data


def alias_json(alias: Alias) -> dict:
    data: dict[str, Any] = {
        "flag": alias.flag,
        "deprecated": alias.deprecated,
        "takes_value": alias.takes_value,
        "nargs": alias.nargs,
        "choices": None if alias.choices is None else [_literal_json(c) for c in alias.choices],
        "const": alias.const,
    }
    if alias.const_is_literal:
        data["const_value"] = _literal_json(alias.const_value)
    return data


def alias_from_json(data: dict) -> Alias:
    choices = data.get("choices")
    return Alias(
        flag=data["flag"],
        deprecated=data.get("deprecated", True),
        takes_value=data.get("takes_value", True),
        nargs=data.get("nargs"),
        choices=None if choices is None else tuple(_literal_from_json(c) for c in choices),  # type: ignore[misc]
        const=data.get("const"),
        const_value=_literal_from_json(data.get("const_value")),  # type: ignore[arg-type]
        const_is_literal="const_value" in data,
    )


def flag_from_json(data: dict) -> Flag:
    choices = data.get("choices")
    return Flag(
        name=data["name"],
        flags=tuple(data["flags"]),
        type=data.get("type"),
        default=data.get("default"),
        default_value=_literal_from_json(data.get("default_value")),  # type: ignore[arg-type]
        default_is_literal="default_value" in data,
        choices=None if choices is None else tuple(_literal_from_json(c) for c in choices),  # type: ignore[misc]
        action=data.get("action"),
        nargs=data.get("nargs"),
        help=data.get("help"),
        deprecated=data.get("deprecated", False),
        file=data["location"]["file"],
        line=data["location"]["line"],
        origins=tuple(data.get("origins", ())),
        aliases=tuple(alias_from_json(a) for a in data.get("aliases", ())),
        fallback=Lit(_literal_from_json(data["fallback"])) if "fallback" in data else None,  # type: ignore[arg-type]
        refused=data.get("refused"),
    )


def problem_json(problem: SourceProblem) -> dict:
    return {"file": problem.file, "line": problem.line, "column": problem.column, "message": problem.message}


# --- reading documents back ----------------------------------------------------------------------


def read_rule_documents(path: str | Path) -> tuple[dict, dict | None]:
    """rules.json (or the folder holding one) and the flags.json beside it when there is one.

    The one reader behind `check --rules`, `explain --rules`, `render`, `graph` and `diff` on files.
    """
    rules_path = Path(path)
    if rules_path.is_dir():
        rules_path = rules_path / "rules.json"
    rules = _read_json(rules_path, "rules")
    if not isinstance(rules, dict) or not isinstance(rules.get("rules"), list):
        raise DocumentError(f"{rules_path}: not a rules.json document")
    flags_path = rules_path.with_name("flags.json")
    if flags_path == rules_path or not flags_path.is_file():
        return rules, None
    flags = _read_json(flags_path, "flags")
    if not isinstance(flags, dict) or not isinstance(flags.get("flags"), list):
        raise DocumentError(f"{flags_path}: not a flags.json document")
    return rules, flags


def loads(data: str | bytes) -> Any:
    """A JSON document: orjson's reader, about twice as fast as `json`'s on a release's 35 MB of rules;
    what orjson refuses (an integer beyond 64 bits, a lone surrogate) `json` reads, or says why not."""
    import orjson

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def _read_json(path: Path, what: str) -> object:
    try:
        return loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:  # ValueError: not JSON, or not UTF-8
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise DocumentError(f"{path}: cannot read {what}: {reason}") from None


def records_of(rules_document: dict, flags_document: dict | None, where: str = "rules.json",
               intern: dict | None = None) -> tuple[tuple[Rule, ...], tuple[Flag, ...]]:
    """The model records of read documents (`where` names them in errors); a malformed record is a
    DocumentError, not a crash. `intern`: equal subformulas made one object (`formula_from_json`),
    shared with the resolution table's (`resolution_of`) when the caller passes both the same."""
    try:
        intern = {} if intern is None else intern
        rules = tuple(rule_from_json(r, intern) for r in rules_document["rules"])
        flags = tuple(flag_from_json(f) for f in (flags_document or {}).get("flags", ()))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise DocumentError(f"{where}: malformed record ({error.__class__.__name__}: {error})") from None
    return rules, flags


def resolution_of(rules_document: dict, where: str = "rules.json", intern: dict | None = None) -> tuple[Write, ...]:
    """The `resolution` table of a read rules.json (empty for documents written before it existed)."""
    try:
        intern = {} if intern is None else intern
        return tuple(write_from_json(w, intern) for w in rules_document.get("resolution", ()))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise DocumentError(f"{where}: malformed resolution record ({error.__class__.__name__}: {error})") from None
