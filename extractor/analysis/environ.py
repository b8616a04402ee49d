"""The `envs.NAME = EnvBool(False)`-style declarations of SGLang's environ.py, read statically."""

from __future__ import annotations

import ast
import re

from ..logic.environment import EnvVar

_ENV_KINDS = {"Bool": "bool", "Int": "int", "Float": "float", "Str": "str", "Tuple": "tuple", "JSON": "json"}


def env_defaults(tree) -> dict[str, EnvVar]:
    """`NAME = EnvBool(False)`-style declarations of sglang/srt/environ.py, read statically."""
    path = "sglang/srt/environ.py"
    if not tree.has(path):
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
