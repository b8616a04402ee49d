"""A rule's message with what the launch shows in it: its placeholders filled with the values the
launch holds where the guard runs (`filled_message`), or with what holds for every launch (`known_message`,
what pages and titles show)."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping

from ..core.formula import OneOf, every_atom, fields_read, readable_text, terms
from ..core.model import (Choices, ConfigLoader, Formula, Lit, PlaceholderValue, PlaceValues, Rule, Term, TermKind,
                          placeholder_operands)
from .evaluation import Context
from .expressions import UNKNOWN, Unknown
from .fact_values import plain_value
from .facts import run_site


def filled_message(rule: Rule, context: Context, written: Mapping[str, object] | None = None,
                   place: int | None = None) -> str:
    """The rule's message with its placeholders filled with what the launch shows there, where it
    is decided (one value): a placeholder reading one server argument with the value the field holds
    where the guard runs (`written`: what the adjustments that run first leave in the fields they
    write, `UNKNOWN` where undecided, `IN_TABLE` where the run's table says it); a local's or a
    constant's with what the extraction found it holds (`Rule.placeholders`:
    one of a few by the first way there that the launch takes, or by `place`, the place of the run
    where the launch meets the guard, when it is known); a check `check` runs with the method's own
    values where it stopped. Others as written."""
    if "{" not in rule.message:
        return rule.message
    said = _raised_message(rule, context)
    filled = _as_said(known_message(rule), said) if said is not None else None
    if filled is not None:  # what a library call the trigger names said (json's, transformers' message)
        return filled
    helpers = context.facts.helpers if context.facts is not None else None
    loader = helpers.config_loader if helpers is not None else None
    if said is not None and loader is not None and known_message(rule) == loader.unknown_type_message:
        return said  # transformers' load, which the rule says in its words for an unknown model type, said another

    sites = _run_sites(rule.trigger)
    if sites:
        for atom in every_atom(rule.trigger):  # run here (not taken from another launch's evaluation)
            if run_site(atom.term.text) is not None:
                try:
                    context.value_of(atom.term)
                except LookupError:
                    pass
        stops = context.facts.stops if context.facts is not None else {}
        held = next((stops[site] for site in sites if site in stops), None)
        return _HELD_PLACEHOLDER.sub(lambda m: _shown(m, held.get(m.group(1), _NOT_SHOWN)), known_message(rule)) \
            if held else known_message(rule)

    def field_value(name: str) -> object:
        found = (written or {}).get(name, IN_TABLE)
        if found is not IN_TABLE:
            return found if found is not UNKNOWN and plain_value(found) else _NOT_SHOWN
        before = sum(1 for w in context.writes.get(name, ()) if rule.order is not None and w.order < rule.order)
        try:
            values = context.resolved(name, before)
        except (LookupError, Unknown):
            return _NOT_SHOWN
        # None only of a field the guard's own test reads: every write before it is then in the run's
        # table or among the adjustments `written` reads. Of another, a write the table lacks may set
        # it first (`make verify` met a None where SGLang printed 10: 0.5.23's
        # `{cfg.speculative_eagle_topk}` at speculative_hook.py:1361).
        if len(values) != 1 or values[0] is UNKNOWN or not plain_value(values[0]) \
                or values[0] is None and name not in _condition_fields(rule.condition):
            return _NOT_SHOWN
        return values[0]

    # A field the function assigned before it raises is its own placeholder (`Rule.placeholders`, by
    # the expression's text): what the field held before is not what the message shows.
    assigned = {name for name, _ in rule.placeholders if "." in name}
    message = _FIELD_PLACEHOLDER.sub(
        lambda m: m.group(0) if m.group(0)[1:-1].split("!")[0] in assigned else _shown(m, field_value(m.group(1))),
        known_message(rule))
    message = _LENGTH_PLACEHOLDER.sub(lambda m: _shown(m, _length(field_value(m.group(1)))), message)
    for name, value in rule.placeholders:
        chosen = value if isinstance(value, (Lit, Term)) else _chosen(value, context, place)
        if isinstance(chosen, Term):
            shown = field_value(chosen.name) if chosen.kind is TermKind.FIELD else _fact_value(chosen, context)
        elif isinstance(chosen, Lit) and chosen is not value:  # a plain literal is in `known_message` already
            shown = chosen.value
        else:
            continue
        message = _placeholder(name).sub(lambda m: _shown(m, shown), message)  # noqa: B023 - used at once
    if "{" in message:
        message = _read_in_trigger(rule, message, context, field_value)
    return message


def _chosen(value: PlaceholderValue, context: Context, place: int | None) -> Lit | Term | None:
    """The value a placeholder of several holds on the launch: the one at `place` (`PlaceValues`), the
    first whose condition holds (`Choices`); None while the launch does not decide it."""
    if isinstance(value, PlaceValues):
        value = dict(value.values).get(place) if place is not None else None  # type: ignore[assignment]
    if isinstance(value, Choices):
        for when, case in value.cases:
            truth = context.truth(when)
            if truth is not False:
                return case if truth else None
        return None
    return value  # type: ignore[return-value]


@functools.lru_cache(maxsize=4096)  # bounded: a process that reads many releases lets old formulas go
def _run_sites(trigger: Formula | None) -> tuple:
    """The methods a trigger runs over the launch (`raised_in(...)` terms), where each stops."""
    return tuple(site for atom in every_atom(trigger) if (site := run_site(atom.term.text)) is not None) \
        if trigger is not None else ()


@functools.lru_cache(maxsize=4096)
def _condition_fields(condition: Formula) -> frozenset[str]:
    """The fields a guard's own test reads."""
    return frozenset(fields_read(condition))


@functools.lru_cache(maxsize=4096)
def _trigger_fields(trigger: Formula) -> frozenset[str]:
    """The fields a trigger reads: what `_read_in_trigger` looks a bare placeholder up in first."""
    return frozenset(fields_read(trigger))


@functools.lru_cache(maxsize=4096)
def _trigger_terms(trigger: Formula) -> dict[str, Term]:
    """A trigger's platform, model and opaque terms by their text as people write it: what
    `_read_in_trigger` looks other placeholders up in."""
    return {readable_name(term.text): term for term in terms(trigger)
            if term.kind in (TermKind.MODEL, TermKind.PLATFORM, TermKind.OPAQUE)}


@functools.lru_cache(maxsize=4096)
def _loop_items(trigger: Formula) -> dict[str, Term]:
    """The loop targets of a trigger's `any(<test> for <target> in <iterable>)` terms (a guard in a loop
    over a value the launch gives), each with a term of the items whose test holds, in order."""
    found: dict[str, Term] = {}
    for term in terms(trigger):
        if term.kind is not TermKind.OPAQUE or not term.text.startswith("any("):
            continue
        try:
            call = ast.parse(term.text, mode="eval").body
        except SyntaxError:
            continue
        if isinstance(call, ast.Call) and len(call.args) == 1 and isinstance(call.args[0], ast.GeneratorExp) \
                and len(call.args[0].generators) == 1 and isinstance(call.args[0].generators[0].target, ast.Name):
            loop = call.args[0].generators[0]
            items = ast.ListComp(loop.target, [ast.comprehension(loop.target, loop.iter, [*loop.ifs, call.args[0].elt], 0)])
            text = ast.unparse(items)
            found.setdefault(loop.target.id, Term(TermKind.OPAQUE, text, text, term.fields))
    return found


# `{context_length}`, `{get_context_length(self.hf_text_config)}`: a placeholder as plain source text.
_SOURCE_PLACEHOLDER = re.compile(r"(?<!\{)\{([^{}!]+?)(![rs])?\}(?!\})")


def _read_in_trigger(rule: Rule, message: str, context: Context, field_value: Callable[[str], object]) -> str:
    """Placeholders left that the guard's own condition reads: a bare field name the trigger tests
    (a parameter that carries the flag, `{context_length}`), or a term of it written the same way
    (`{get_context_length(self.hf_text_config)}`, a fact of the model's config.json), with the
    launch's value. What the trigger does not read stays as written."""
    fields = _trigger_fields(rule.effective)

    def value(match: re.Match) -> str:
        text = match.group(1).strip()
        if text in fields:
            return _shown(match, field_value(text))
        item = _loop_items(rule.effective).get(text)
        if item is not None:  # `{modality}` of a guard in a loop: the first item whose test holds
            try:
                found = context.value_of(item)
            except LookupError:
                return match.group(0)
            return _shown(match, found[0]) if isinstance(found, list) and found and plain_value(found[0]) \
                else match.group(0)
        read = _trigger_terms(rule.effective)
        term = read.get(readable_name(text))
        # A call the message writes over its locals (`get_context_length(self.hf_text_config)`) is
        # in the trigger over the launch's values: the terms calling that function, if one value.
        call = re.match(r"([A-Za-z_][\w.]*)\(", text)
        candidates = [term] if term is not None else [t for key, t in read.items()
                                                      if call and key.startswith(call.group(0))]
        found = set()
        for candidate in candidates:
            try:
                got = context.value_of(candidate)
            except LookupError:
                return match.group(0)
            if not plain_value(got) or isinstance(got, OneOf):
                return match.group(0)
            found.add(got)
        return _shown(match, found.pop()) if len(found) == 1 else match.group(0)

    return _SOURCE_PLACEHOLDER.sub(value, message)


def _raised_message(rule: Rule, context: Context) -> str | None:
    """What the library call a trigger names said when it raised, where the launch decides one text:
    `raised(json.JSONDecodeError, json.loads(...))` of a guard of the library's own, or
    `str(raised_message(ValueError, AutoConfig.from_pretrained(...)))` of one that raises it again
    (`except ValueError as e: ... raise e`)."""
    said = set()
    for term in _said_terms(rule.effective):
        try:
            found = context.value_of(term)
        except LookupError:
            continue
        if isinstance(found, str):
            said.add(found)
    return said.pop() if len(said) == 1 else None


@functools.lru_cache(maxsize=4096)  # every message filled asks it of its trigger: the terms found once
def _said_terms(trigger: Formula) -> tuple[Term, ...]:
    """The terms of what a trigger's library calls said: `str(raised_message(...))`, as the trigger
    reads it or as a `raised(...)` of the same call would say it."""
    found = []
    for key, term in _trigger_terms(trigger).items():
        if key.startswith("raised("):
            text = f"str(raised_message({term.text[len('raised('):]})"
            found.append(Term(TermKind.OPAQUE, text, text, term.fields))
        elif key.startswith("str(raised_message("):
            found.append(term)
    return tuple(found)


def _as_said(message: str, said: str) -> str | None:
    """The message's placeholders filled from the text the error said, the message read as its
    pattern (`{e}` is all of it; `{msg}: line {lineno} ...` the parts between its words); None when
    the text is not this message."""
    pieces = re.split(r"(\{\w+\})", message)
    pattern = "".join(f"(?P<{p[1:-1]}>.*?)" if re.fullmatch(r"\{\w+\}", p) else re.escape(p) for p in pieces)
    try:
        found = re.fullmatch(pattern, said, re.DOTALL)
    except re.error:  # a placeholder twice
        return None
    return "".join(found.group(p[1:-1]) if re.fullmatch(r"\{\w+\}", p) else p for p in pieces) if found else None


@functools.lru_cache(maxsize=16384)  # the same terms' texts, over and over
def readable_name(text: str) -> str:
    """Source text as people write it: the walk's `self__hf_text_config` is `self.hf_text_config`."""
    return re.sub(r"\s+", "", re.sub(r"\bself__", "self.", text))


def other_words(loader: ConfigLoader | None) -> dict[str, tuple[tuple[str, str], ...]]:
    """What else an error may say, by the message its rules have: the load of a checkpoint's
    config.json, whose rules say transformers' words for a model type it does not know, says others
    for a config.json without one, and for a folder's own code the launch does not trust; each as
    (where it says it, its words)."""
    if loader is None:
        return {}
    others = tuple((when, words) for when, words in (
        ("the checkpoint's config.json has no `model_type`", loader.untyped_message),
        ("the folder's config.json names code of its own (`auto_map`) and the launch does not pass `--trust-remote-code`",
         loader.custom_code_message)) if words is not None)
    return {loader.unknown_type_message: others} if others else {}


def known_message(rule: Rule, longest: int | None = None) -> str:
    """The message with the placeholders whose value holds for every launch filled (a local bound to
    a literal: `{ib_sysfs_path}` -> `/sys/class/infiniband`), and a local bound to an f-string
    written out as that f-string's own text (`{msg}` -> `Warning: {reason} context_length
    ({context_length}) is greater than ...`): what pages and titles show. `longest`: a literal longer
    than that stays a placeholder (a heading names a list of 90 hooks by its name, not its words)."""
    message = rule.message
    for name, value in rule.placeholders:
        if isinstance(value, Lit) and longest is not None and len(str(value.value)) > longest:
            continue
        if isinstance(value, Lit):
            message = _placeholder(name).sub(lambda m: _shown(m, value.value), message)  # noqa: B023 - used at once
        elif isinstance(value, Term) and (template := _template(value.text)) is not None:
            message = _placeholder(name).sub(lambda m: template.replace("\\", "\\\\"), message)  # noqa: B023
    return message


def placeholder_alternatives(rule: Rule) -> dict[str, tuple[str, ...]]:
    """The texts a placeholder of several literal values may show, by placeholder, in their order:
    what a page says `{arg_name}` stands for (`--prompt-tokens-buckets` or `--generation-tokens-buckets`)."""
    found = {}
    for name, value in rule.placeholders:
        if isinstance(value, (Choices, PlaceValues)):
            operands = placeholder_operands(value)
            if all(isinstance(o, Lit) for o in operands):
                found[name] = tuple(dict.fromkeys(str(o.value) for o in operands))  # type: ignore[union-attr]
    return found


def _template(text: str) -> str | None:
    """An f-string's (or a string's) source as a message template: its literal parts as they read, each
    replacement field as `{expression}` in people's names (`self.hf_text_config`, not the walk's);
    None when the text is no string."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            parts.append(part.value.replace("{", "{{").replace("}", "}}"))
        elif isinstance(part, ast.FormattedValue):
            conversion = {115: "!s", 114: "!r", 97: "!a"}.get(part.conversion, "")
            parts.append("{" + readable_text(ast.unparse(part.value)) + conversion + "}")
        else:
            return None
    return "".join(parts)


def _placeholder(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\{)\{" + re.escape(name) + r"(![rs])?\}(?!\})")


# `{cfg.attention_backend}`, `{self.tp_size!r}`: a placeholder of a message that reads one field.
_FIELD_PLACEHOLDER = re.compile(r"(?<!\{)\{(?:self|cfg|view|server_args|args|sa|sargs)\.([a-z_][a-z0-9_]*)(![rs])?\}(?!\})")
# `{len(cfg.lora_paths)}`: the length of one field's value.
_LENGTH_PLACEHOLDER = re.compile(
    r"(?<!\{)\{len\((?:self|cfg|view|server_args|args|sa|sargs)\.([a-z_][a-z0-9_]*)\)(![rs])?\}(?!\})")
# `{quant_method}`, `{self.quantization!r}`: a placeholder of a local or an attribute of the instance.
_HELD_PLACEHOLDER = re.compile(r"(?<!\{)\{((?:self\.)?[A-Za-z_]\w*)(![rs])?\}(?!\})")
_NOT_SHOWN = object()
IN_TABLE = object()  # `filled_message`'s `written`: the field as the run's table resolves it


def _length(value: object) -> object:
    """`len()` of a field's value, where it is a list, tuple or string."""
    return len(value) if isinstance(value, (list, tuple, str)) else _NOT_SHOWN


def _shown(match: re.Match, value: object) -> str:
    """A placeholder as Python's f-string shows the value (`!r`: its repr), or as written when unknown."""
    if value is _NOT_SHOWN:
        return match.group(0)
    return repr(value) if match.groups()[-1] == "!r" else str(value)  # the conversion is the last group


def _fact_value(term: Term, context: Context) -> object:
    """A term over no field (a constant, a platform query) as the launch's facts answer it."""
    if context.facts is None:
        return _NOT_SHOWN
    try:
        found = context.facts.value(term.text)
    except (Unknown, RecursionError):
        return _NOT_SHOWN
    return found if plain_value(found) else _NOT_SHOWN
