"""A launch command parsed the way SGLang's argparse parser would, with the flag catalog.

Unknown flags, bad choices and types, `=` and space forms, aliases, abbreviations, store_true and
`--no-` forms, nargs lists; env assignments in front of the command are kept apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..core.formula import Spellings, flag_name
from ..core.model import Alias, Flag
from .expressions import UNKNOWN, Unknown, safe_eval
from .launch_words import split_command

_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


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


# Words too common in option names to say two options are about the same thing.
_COMMON_WORDS = frozenset({"enable", "disable", "max", "min", "size", "num", "mode", "backend", "path", "type",
                           "use", "no", "allow", "config", "file", "port", "host", "id", "ids", "dir", "level"})


def closest_option(text: str, options: list[str]) -> str | None:
    """The option a misspelt one most likely meant: a near spelling (`--reasoning_parser`), or else
    one that shares a distinctive word (`--enable-reasoning` -> `--reasoning-parser`, not `--enable-trace`)."""
    import difflib  # here: a command naming no unknown option or value starts without it

    spelled = text.replace("_", "-")
    if spelled in options:
        return spelled
    close = difflib.get_close_matches(spelled, options, n=1, cutoff=0.8)
    if close:
        return close[0]
    words = set(spelled.strip("-").split("-")) - _COMMON_WORDS
    sharing = [(len(words & set(o.strip("-").split("-"))), difflib.SequenceMatcher(None, spelled, o).ratio(), o)
               for o in options]
    best = max((s for s in sharing if s[0]), default=None, key=lambda s: (s[0], s[1]))  # the first of equals
    if best is not None:
        return best[2]
    loose = difflib.get_close_matches(spelled, options, n=1)
    return loose[0] if loose else None


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

    def option(self, text: str) -> Option | None:
        """The option `text` names, as `resolve` finds it, without wording an error: no misspelling
        hint is looked for (that compares the text with every option string)."""
        if text in self.options:
            return self.options[text]
        matches = [name for name in self.options if name.startswith(text)]
        return self.options[matches[0]] if len(matches) == 1 else None

    def resolve(self, text: str) -> tuple[Option | None, str | None]:
        """The option a long option string (or unique prefix, as argparse allows) names, or an error."""
        found = self.option(text)
        if found is not None:
            return found, None
        matches = sorted(name for name in self.options if name.startswith(text))
        if matches:
            return None, f"ambiguous option: {text} could match {', '.join(matches[:6])}"
        hint = closest_option(text, list(self.options))
        return None, f"unrecognized arguments: {text}" + (f" (did you mean {hint}?)" if hint else "")


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
    if text.rsplit(".", 1)[-1] == "human_readable_int":
        return "human_readable_int"
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


_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_SUFFIXED = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")


def human_readable_int(text: str) -> int:
    """SGLang's `human_readable_int` argparse type: an integer, with an SI (`128k`, `1.5M`) or IEC
    (`128Ki`) suffix; ValueError otherwise (argparse then says the value is invalid)."""
    text = text.strip()
    found = _SUFFIXED.fullmatch(text)
    if found is None:
        return int(text)
    number, suffix = found.groups()
    if suffix in _IEC:
        if "." in number:
            raise ValueError(number)
        return int(number) * _IEC[suffix]
    from decimal import Decimal  # exact `1.5G`; rare, and the module costs a launch parse a tenth

    return int(Decimal(number) * _SI[suffix])


def _convert(flag: Flag, option: str, text: str) -> tuple[object, str | None]:
    kind = value_type(flag)
    try:
        value: object = {"int": int, "float": float, "human_readable_int": human_readable_int}.get(kind, str)(text)
    except (ValueError, ArithmeticError):
        return UNKNOWN, f"argument {option}: invalid {kind} value: {text!r}"
    if kind == "json":
        parser = (flag.type or "").rsplit(".", 1)[-1]
        try:
            value = json.loads(text)
        except ValueError:
            # A JSON parser as argparse's `type` rejects the value as SGLang words it; a field
            # merely typed as a dict takes the text as it is.
            if parser == "loads":
                return UNKNOWN, f"argument {option}: invalid loads value: {text!r}"
            if parser == "json_list_type":
                return UNKNOWN, f"argument {option}: Invalid JSON list: {text}. Please provide a valid JSON list."
            value = text
    if flag.choices is not None and value not in flag.choices:
        choices = ", ".join(repr(c) for c in flag.choices)
        # argparse's words, then a hint of ours: `flashinferr` was meant to be `flashinfer`.
        named = [c for c in flag.choices if isinstance(c, str)]
        import difflib

        near = difflib.get_close_matches(value, named, n=1, cutoff=0.75) if isinstance(value, str) else []
        if not near and isinstance(value, str):
            near = [c for c in named if c.lower() == value.lower()]
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return UNKNOWN, f"argument {option}: invalid choice: {value!r} (choose from {choices}){hint}"
    return value, None


# ---- the command line ------------------------------------------------------------------------------


@dataclass
class CommandLine:
    """What a launch command sets: field values given, env assignments in front, and errors."""

    given: dict[str, object] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    errors: list[ArgError] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)  # `--port $PORT`: values the shell fills in
    # `--config FILE` that is not on this machine, the launch running elsewhere: any option the line
    # does not give may come from it, so each is unknown (SGLang's own error only where it runs).
    unread_config: str | None = None


# Values the shell fills in when the command runs: `--port $PORT`, `${MODEL:-m}`, `$(cat f)`, a script's
# `$1` and `"$@"`.
PLACEHOLDER = re.compile(r"\$(?:\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#])[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#]|\()|`")


def config_arguments(tokens: list[str], catalog: Catalog, read: Callable[[str], str]) -> tuple[list[str], str | None]:
    """SGLang's `--config FILE.yaml` merge, done before parsing: the file's keys as arguments first,
    then the command line without `--config FILE` (the command line wins). The problem, if any, as
    SGLang words it (a file `read` does not find: `CONFIG_NOT_FOUND`)."""
    at = [i for i, t in enumerate(tokens) if t == "--config"]
    if not at:
        return tokens, None
    # SGLang stops at these before argparse reads a word: the rest is read without `--config FILE`.
    if len(at) > 1:
        return [t for i, t in enumerate(tokens) if i not in at and i - 1 not in at], \
            "Multiple config files specified! Only one allowed."
    if at[0] == len(tokens) - 1:
        return tokens[:-1], "No config file specified after --config flag!"
    path = tokens[at[0] + 1]
    rest = tokens[:at[0]] + tokens[at[0] + 2:]
    if not path.lower().endswith((".yaml", ".yml")):
        return rest, f"Config file must be YAML format, got: {'.' + path.rsplit('.', 1)[-1] if '.' in path else ''}"
    import yaml  # only a command with --config needs it

    try:
        data = yaml.safe_load(read(path))
    except OSError:
        return rest, CONFIG_NOT_FOUND + path
    except yaml.YAMLError as error:
        return rest, f"Failed to read config file {path}: {str(error).splitlines()[0]}"
    data = {} if data is None else data
    if not isinstance(data, dict):
        return rest, "Config file must contain a dictionary at root level"
    merged: list[str] = []
    for key, value in data.items():
        refused = config_key_refusal(str(key), catalog)
        if refused:
            return rest, refused
        merged += config_words(str(key), value, catalog)
    return merged + rest, None


CONFIG_NOT_FOUND = "Config file not found: "  # then the path


# Actions SGLang's config merger refuses, as it names them (argparse's class names).
_ACTION_CLASS = {"store_false": "_StoreFalseAction", "count": "_CountAction", "store_const": "_StoreConstAction"}


def config_key_refusal(key: str, catalog: Catalog) -> str | None:
    """SGLang's words when its config merger refuses a key: a spelling of an option whose action
    takes no value and is not store_true (`BooleanOptionalAction`, deprecated switches), or takes
    several values through an action of its own (`LoRAPathAction`). None: passed on as `--KEY`."""
    option = catalog.options.get(f"--{key.replace('_', '-')}") or catalog.options.get(f"--{key}")
    if option is None:
        return None  # an unknown key or an abbreviation: argparse has its say
    flag = option.flag
    if any(a.flag == f"--{key}" for a in flag.aliases):
        return None  # how SGLang declares an alias is not known here: never refused
    action = (flag.action or "").rsplit(".", 1)[-1]
    if action in ("", "store", "store_true") or (option.store and flag.nargs in (None, "None")):
        return None
    name = key.replace("-", "_")
    return f"Unsupported config option '{name}' with action '{_ACTION_CLASS.get(action, action)}'"


def config_words(key: str, value: object, catalog: Catalog) -> list[str]:
    """The words SGLang's config merger makes of one key: `--KEY` as written; true on a switch alone
    (false: nothing); a list as several values (empty: nothing); a mapping as JSON; else `str(value)`."""
    option = f"--{key}"
    if isinstance(value, bool):
        switch = catalog.options.get(f"--{key.replace('_', '-')}") or catalog.options.get(option)
        if switch is not None and not switch.store:
            return [option] if value else []
        return [option, str(value).lower()]
    if isinstance(value, list):
        return [option, *(str(v) for v in value)] if value else []
    if isinstance(value, dict):
        return [option, json.dumps(value)]
    return [option, str(value)]


def _read_file(path: str) -> str:
    with open(path, encoding="utf-8") as stream:
        return stream.read()


def config_reader(files: Mapping[str, str]) -> Callable[[str], str]:
    """What reads a `--config` file: one of `files` (a deployment's, by the path the launch sees) by its
    text, else this machine's file."""
    return lambda path: files[path] if path in files else _read_file(path)


def parse_command(argv: Sequence[str], catalog: Catalog, read: Callable[[str], str] = _read_file,
                  config_here: bool = True) -> CommandLine:
    """Parse launch arguments like argparse: values by field, argparse's errors, env assignments.
    `read` gives a `--config` file's text (the file system by default); `config_here`: the launch runs
    where `read` looks, so a config file it does not find is SGLang's error, else it is only not on
    this machine (`CommandLine.unread_config`)."""
    tokens, env = split_command(argv)
    result = CommandLine(env=env)
    if "--config" in tokens:
        tokens, problem = config_arguments(tokens, catalog, read)
        if problem and not config_here and problem.startswith(CONFIG_NOT_FOUND):
            result.unread_config = problem[len(CONFIG_NOT_FOUND):]
        elif problem:
            result.errors.append(ArgError("--config", problem))
    i = 0
    unknown_words = False  # a placeholder where options go: what it stands for is not known here
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            if tokens[i:]:
                result.errors.append(ArgError(None, f"unrecognized arguments: {' '.join(tokens[i:])}"))
            break
        if not token.startswith("-") or _NUMBER.match(token):
            if PLACEHOLDER.search(token):  # `$EXTRA_ARGS`, `"${ARGS[@]}"`: the shell makes it any words, options too
                result.placeholders.append(token)
                unknown_words = True
            else:
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
        if flag.refused is not None:  # a removed flag: its action's `parser.error`
            result.errors.append(ArgError(name, flag.refused))
            continue
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
            if PLACEHOLDER.search(text):
                result.placeholders.append(f"{name} {text}")
                converted.append(UNKNOWN)  # the shell fills it in: its value is not known here
                continue
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
    if result.unread_config is not None or unknown_words:  # they may set any option the line leaves out
        result.given.update((name, UNKNOWN) for name in catalog.flags if name not in result.given)
    for flag in catalog.required():
        if flag.name not in result.given:
            result.errors.append(ArgError(flag.flags[0], f"the following arguments are required: {'/'.join(flag.flags)}"))
    # argparse stops at the first error it meets while it reads the arguments (an ambiguous option, an
    # invalid choice or value); the words it does not know it only reports once all are read, after
    # the required options too: so a launch shows them last.
    result.errors.sort(key=lambda error: error.message.startswith("unrecognized arguments"))
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
