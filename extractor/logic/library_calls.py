"""What a library call a guard's test names raises over the launch's values: `raised(E, <call>)`, the
call raised what a handler of E catches, and `raised_message(E, <call>)`, what it said. The walk spells
two such calls (`analysis.statements`): transformers' `AutoConfig.from_pretrained(path,
trust_remote_code=...)` on the checkpoint's config.json, and `json.loads(text)` on a flag's text."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping

from ..core.model import ConfigLoader
from .expressions import Unknown
from .helpers import catches
from .model_config import config_load_error


def is_library_call(call: ast.expr) -> bool:
    """`AutoConfig.from_pretrained(path, ...)` or `json.loads(text)`, as the walk spells them."""
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
        and (call.func.value.id, call.func.attr) in (("AutoConfig", "from_pretrained"), ("json", "loads")) \
        and len(call.args) == 1


def library_raise(name: str, caught: ast.expr, call: ast.Call, evaluate: Callable[[ast.expr], object],
                  folder_config: Callable[[str], Mapping[str, object] | None], loader: ConfigLoader | None) -> object:
    """`raised(...)` (a bool) or `raised_message(...)` (the text) of a library call; Unknown where the
    launch does not decide it: a config not in a local folder, a text that is no str, a handler that
    does not catch what the call raises."""
    argument = evaluate(call.args[0])
    if call.func.attr == "loads":  # type: ignore[attr-defined]
        if not isinstance(argument, str) or not catches(caught, "JSONDecodeError") and not catches(caught, "ValueError"):
            raise Unknown("json.loads")
        try:
            json.loads(argument)
            said = None
        except ValueError as decode_error:
            said = str(decode_error)
        return _raised_or_said(name, said is not None, said, "json.loads")
    config = folder_config(argument) if isinstance(argument, str) and loader is not None else None
    if config is None or not catches(caught, "ValueError"):
        raise Unknown("config load")
    trust = next((evaluate(k.value) for k in call.keywords if k.arg == "trust_remote_code"), False)
    found = config_load_error(config, trust, loader, argument)  # type: ignore[arg-type]
    return _raised_or_said(name, found is not None, found[1] if found is not None else None, "config load")


def _raised_or_said(name: str, failed: bool, said: str | None, call: str) -> object:
    """`raised(...)`: whether the call failed; `raised_message(...)`: what it said, Unknown when it
    did not fail or said what this code does not know."""
    if name == "raised":
        return failed
    if said is None:
        raise Unknown(f"{call} message")
    return said
