"""What decides whether `AutoConfig.from_pretrained` loads a checkpoint's config.json, read from the
source of the transformers a release pins and of SGLang's own config classes (`ConfigLoader`).

transformers maps a config.json's `model_type` to a config class through `CONFIG_MAPPING_NAMES`
(in `configuration_auto.py`, or from 5.12 in `auto_mappings.py` and completed there), plus what is
registered at run time: SGLang registers its own config classes (`AutoConfig.register(name, cls)`
over `_CONFIG_REGISTRY`). Every `model_type = "..."` of SGLang's config modules, and of a module
that fills that registry or registers itself, is taken as registered: more than registered at worst,
so a model type taken as unknown is one neither knows.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace

from ..core.formula import terms_once
from ..core.model import ConfigLoader, Rule
from .statements import CONFIG_LOAD_MESSAGE

# Where transformers keeps the table, by the version's layout (the older file first), and where it
# says a checkpoint's own code is not trusted (`resolve_trust_remote_code`).
TRANSFORMERS_FILES = ("transformers/models/auto/configuration_auto.py", "transformers/models/auto/auto_mappings.py",
                      "transformers/dynamic_module_utils.py")
SGLANG_CONFIGS = "sglang/srt/configs/"
REGISTERS = ("_CONFIG_REGISTRY[", "AutoConfig.register(")  # what a module outside them that registers says
_TABLE = "CONFIG_MAPPING_NAMES"
_UNKNOWN_TYPE_WORDS = "does not recognize this architecture"
_UNTYPED_WORDS = "Should have a `model_type` key"
# The names the message of a config without a model type fills in: the path the load was given, and
# transformers' `CONFIG_NAME` (its documented file name).
_UNTYPED_HOLES = {"pretrained_model_name_or_path": "{path}", "CONFIG_NAME": "config.json"}
_TRUST = "resolve_trust_remote_code"
# The holes of its message for a local folder: the path the load was given, and its absolute form.
_CUSTOM_CODE_HOLES = {"model_name": "{path}", "os.path.abspath(model_name)": "{abspath}"}


def config_loader(version: str, transformers: Mapping[str, str], sglang_configs: Mapping[str, str]) -> ConfigLoader | None:
    """The loader of a release: `transformers` the texts of TRANSFORMERS_FILES the pinned version has,
    `sglang_configs` those of SGLang's config modules. None when transformers' table or its message
    for an unknown model type is not found (a layout this reading does not know)."""
    known: set[str] = set()
    message = untyped = custom = None
    for text in transformers.values():
        tree = _parsed(text)
        if tree is None:
            continue
        known |= _table_keys(tree)
        message = message or _unknown_type_message(tree)
        untyped = untyped or _untyped_message(tree)
        custom = custom or _custom_code_message(tree)
    if not known or message is None:
        return None
    for text in sglang_configs.values():
        tree = _parsed(text)
        if tree is not None:
            known |= _declared_model_types(tree)
    return ConfigLoader(version, tuple(sorted(known)), message, untyped, custom)


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _table_keys(tree: ast.Module) -> set[str]:
    """The model types a module's statements put in the table: `CONFIG_MAPPING_NAMES = OrderedDict([("bert",
    "BertConfig"), ...])`, `CONFIG_MAPPING_NAMES.update({...})`, `OrderedDict(**{"gpt-sw3": ...}, **CONFIG_MAPPING_NAMES)`."""
    found: set[str] = set()
    for statement in tree.body:
        value = None
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == _TABLE for t in statement.targets):
            value = statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.target.id == _TABLE:
            value = statement.value
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
                and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "update" \
                and isinstance(statement.value.func.value, ast.Name) and statement.value.func.value.id == _TABLE:
            value = statement.value
        for node in ast.walk(value) if value is not None else ():
            if isinstance(node, ast.Tuple) and len(node.elts) == 2 and all(_text(e) is not None for e in node.elts):
                found.add(_text(node.elts[0]))  # type: ignore[arg-type]
            elif isinstance(node, ast.Dict):
                found.update(key for k in node.keys if k is not None and (key := _text(k)) is not None)
    return found


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _unknown_type_message(tree: ast.Module) -> str | None:
    """The message of `raise ValueError(f"The checkpoint ... has model type `{config_dict['model_type']}` but
    Transformers does not recognize this architecture ...")`, its one placeholder as `{model_type}`."""
    for parts in _value_errors(tree):
        holes = [p for p in parts if isinstance(p, ast.FormattedValue)]
        if len(holes) != 1:
            continue
        text = "".join("{model_type}" if isinstance(p, ast.FormattedValue) else str(p.value) for p in parts)  # type: ignore[attr-defined]
        if _UNKNOWN_TYPE_WORDS in text:
            return text
    return None


def _untyped_message(tree: ast.Module) -> str | None:
    """The message of `raise ValueError(f"Unrecognized model in {pretrained_model_name_or_path}. Should
    have a `model_type` key in its {CONFIG_NAME}.")`, the path as `{path}`; None when it fills in
    anything else (a layout this reading does not know)."""
    for parts in _value_errors(tree):
        text = _spelled(ast.JoinedStr(parts), _UNTYPED_HOLES)
        if text is not None and _UNTYPED_WORDS in text:
            return text
    return None


def _custom_code_message(tree: ast.Module) -> str | None:
    """What `resolve_trust_remote_code(trust_remote_code, model_name, ...)` raises for a local folder
    whose config.json names its own code, the launch not trusting it: the `error_message` it composes
    where `os.path.isdir(model_name)`, then `raise ValueError(f"{error_message} ... {model_name} ...")`,
    with `{path}` and `{abspath}` for the path the load was given and its absolute form. None when the
    function composes it otherwise (a layout this reading does not know)."""
    function = next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == _TRUST), None)
    if function is None:
        return None
    local = next((_spelled(node.body[0].value, _CUSTOM_CODE_HOLES) for node in ast.walk(function)
                  if isinstance(node, ast.If) and ast.unparse(node.test) == "os.path.isdir(model_name)"
                  and len(node.body) == 1 and isinstance(node.body[0], ast.Assign)
                  and ast.unparse(node.body[0].targets[0]) == "error_message"), None)
    raised = [parts for parts in _value_errors(function) if parts and isinstance(parts[0], ast.FormattedValue)
              and ast.unparse(parts[0].value) == "error_message"]
    if local is None or not raised:
        return None
    rest = _spelled(ast.JoinedStr(raised[-1][1:]), _CUSTOM_CODE_HOLES)
    return None if rest is None else local + rest


def _spelled(message: ast.expr, holes: Mapping[str, str]) -> str | None:
    """A message's text with each value it formats written as `holes` names it; None when it formats
    anything else, converts or has a format spec."""
    parts = list(message.values) if isinstance(message, ast.JoinedStr) else [message]
    text = []
    for part in parts:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            text.append(part.value)
        elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None \
                and ast.unparse(part.value) in holes:
            text.append(holes[ast.unparse(part.value)])
        else:
            return None
    return "".join(text)


def _value_errors(tree: ast.AST) -> Iterator[list[ast.expr]]:
    """The parts of each `raise ValueError(<string>)` message: its constants and the values it formats
    (no conversion or format spec)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args
                and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "ValueError"):
            continue
        message = node.exc.args[0]
        parts = list(message.values) if isinstance(message, ast.JoinedStr) else [message]
        if all(isinstance(p, ast.Constant) and isinstance(p.value, str)
               or isinstance(p, ast.FormattedValue) and p.conversion == -1 and p.format_spec is None for p in parts):
            yield parts


def _declared_model_types(tree: ast.Module) -> set[str]:
    """`model_type = "kimi_vl"` in the body of a class: the name its config class registers under."""
    return {value for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for statement in node.body
            if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "model_type"
                                                         for t in statement.targets)
            and (value := _text(statement.value)) is not None}


def said_again(rule: Rule, loader: ConfigLoader) -> Rule:
    """A guard of the load's own (`CONFIG_LOAD_MESSAGE`), or one that raises its error again (`except
    ValueError as e: ... raise e`, its message `{e}`), says what transformers says of a model type it
    does not know: the message SGLang prints, what a page shows and `explain` finds (`check` fills it
    from what the launch's load says)."""
    if rule.message == CONFIG_LOAD_MESSAGE or re.fullmatch(r"\{\w+\}", rule.message) and any(
            term.text.startswith("str(raised_message(") for term in terms_once(rule.effective, set())):
        return replace(rule, message=loader.unknown_type_message)
    return rule
