"""Environment variables as SGLang reads them: an `envs.NAME` declaration, its parser and its default."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ..core.model import EnvVar
from .expressions import Unknown




def parse_env(var: EnvVar, text: str) -> object:
    if var.kind == "bool":
        lowered = text.lower()
        if lowered in ("true", "1", "yes", "y"):
            return True
        if lowered in ("false", "0", "no", "n"):
            return False
        return env_default(var)  # SGLang warns and falls back to the default
    try:
        if var.kind == "int":
            return int(text)
        if var.kind == "float":
            return float(text)
    except ValueError:
        return env_default(var)
    if var.kind == "tuple":
        return tuple(s.strip() for s in text.split(",") if s.strip())
    if var.kind == "json":
        raise Unknown(text)
    return text


def env_default(var: EnvVar) -> object:
    if not var.default_known:
        raise Unknown("default")
    return tuple(var.default) if isinstance(var.default, list) else var.default


def declared_env(func: ast.Attribute, env: Mapping[str, str], envs: Mapping[str, EnvVar] | None) -> object:
    """`envs.NAME.get()` / `.is_set()`: the launch's value (`env`) parsed as environ.py declares it
    (`envs`), its default when unset; None when the call is no such read."""
    owner = func.value
    if func.attr not in ("get", "is_set") or not isinstance(owner, ast.Attribute) \
            or not isinstance(owner.value, ast.Name) or owner.value.id != "envs":
        return None
    name = owner.attr
    var = (envs or {}).get(name)
    text = env.get(name)
    if text is None and var is not None and var.alias:
        text = env.get(var.alias)
    if func.attr == "is_set":
        return text is not None
    if var is None:
        raise Unknown(name)  # no declaration at hand: no parser, no default
    return env_default(var) if text is None else parse_env(var, text)
