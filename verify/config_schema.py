"""Compare a config-file schema (`sglang-constraints schema`) with the real SGLang's config merger and argparse.

Runs under the SGLang venv's interpreter (it imports SGLang's parser and the schema's validator):

    /tmp/sgreal/bin/python verify/config_schema.py SCHEMA.json [--cases out.jsonl]

For every key the schema names (and each key's underscore spelling), one-key files with values of
every YAML kind (numbers, texts that look like numbers, booleans, null, lists, mappings, each choice
and a wrong one) go through `ConfigArgumentMerger.merge_config_with_args` and `parser.parse_args`
(what `prepare_server_args` does before any guard), and through the schema's key and value parts
(its cross-field `allOf` left out: those run after parsing, see `make verify`). Prints the counts:
`schema refuses, SGLang accepts` must be 0; `schema accepts, SGLang refuses` is where the schema is
looser than argparse. Standard library, SGLang and jsonschema only; no project code is imported.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

VALUES = [1, 0, -3, 2.5, 2.0, "7", "0.25", "1e-3", "128k", "true", "", "text", "None", True, False, None,
          [], [1], ["a"], [1, 2], ["x", "y"], {"a": 1}]


def real_accepts(parser, merger_class, data: dict, folder: Path) -> tuple[bool, str]:
    import yaml

    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            argv = merger_class(parser).merge_config_with_args(["--model-path", "m", "--config", str(path)])
            parser.parse_args(argv)
    except SystemExit:
        return False, err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else "exit"
    except Exception as error:  # the merger's own ValueError
        return False, f"{type(error).__name__}: {error}"
    return True, ""


def main() -> int:
    options = argparse.ArgumentParser()
    options.add_argument("schema")
    options.add_argument("--cases", help="write every case (key, value, verdicts) as JSON lines")
    args = options.parse_args()
    import jsonschema
    from sglang.srt.server_args import ServerArgs
    try:
        from sglang.srt.utils.server_args_config_parser import ConfigArgumentMerger
    except ImportError:  # before 0.5.19
        from sglang.srt.server_args_config_parser import ConfigArgumentMerger

    schema = json.loads(Path(args.schema).read_text(encoding="utf-8"))
    schema = {k: v for k, v in schema.items() if k != "allOf"}  # keys and values only
    validator = jsonschema.Draft202012Validator(schema)
    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    keys = sorted(schema["properties"])
    # abbreviations (argparse takes a unique prefix), and keys no option has
    keys += sorted({k[: len(k) // 2 + 2] for k in keys[::7]} - set(keys)) + ["no-such-option", "model_pathx"]
    counts = {"agree": 0, "schema refuses, SGLang accepts": 0, "schema accepts, SGLang refuses": 0}
    looser: dict[str, int] = {}
    stricter: list[str] = []
    cases = []
    with tempfile.TemporaryDirectory() as folder:
        for key in keys:
            prop = schema["properties"].get(key, {})
            values = list(VALUES)
            for source in (prop.get("enum"), (prop.get("else") or {}).get("enum")):
                if source:
                    values += source[:3] + ["not-a-choice"]
            for value in values:
                data = {key: value}
                real, why = real_accepts(parser, ConfigArgumentMerger, data, Path(folder))
                ours = validator.is_valid(data)
                cases.append({"key": key, "value": value, "sglang": real, "schema": ours, "why": why})
                if real == ours:
                    counts["agree"] += 1
                elif real:
                    counts["schema refuses, SGLang accepts"] += 1
                    stricter.append(f"{key}: {value!r}")
                else:
                    counts["schema accepts, SGLang refuses"] += 1
                    looser[key] = looser.get(key, 0) + 1
    print(f"{len(keys)} keys, {len(cases)} one-key files: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for line in stricter[:40]:
        print(f"  STRICTER {line}")
    print("  looser on: " + ", ".join(f"{k} ({n})" for k, n in sorted(looser.items(), key=lambda kv: -kv[1])[:25]))
    if args.cases:
        Path(args.cases).write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return 1 if stricter else 0


if __name__ == "__main__":
    sys.exit(main())
