"""Environment variables as SGLang reads them: an `envs.NAME` declaration, its parser and its default."""

from __future__ import annotations

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
