"""`schema`: the JSON Schema of a release's --config file, and the typed module of its fields.

What a schema says is held against `check --config` (the same merge and argparse model, and the
rules' triggers): a file the schema refuses for a rule is one `check` finds a definite error in, and
a file whose keys and values `check` parses without an argument error is one the schema's key and
value parts accept. The real SGLang's merger and argparse are compared in `verify/config_schema.py`.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from extractor.cli import main
from extractor.logic.launch import parse_command
from extractor.products.schema.config_schema import config_schema
from extractor.products.extraction.extraction import extract
from extractor.products.check.linter import check
from extractor.products.reuse.rulesets import release_rules, ruleset_of
from extractor.products.schema.typed_module import typed_module
from extractor.sources.trees import path_tree

from .conftest import FIXTURES

SOURCE = FIXTURES / "render_basic" / "src"
OFFLOAD = "Offloading the KV cache is only supported for decode side."
NGRAM = "NGRAM needs at least two draft tokens."
SEED = "The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side."
# Values of every YAML kind, as people type them.
VALUES = [1, 0, -3, 2.5, "7", "0.25", "1e-3", "128k", "true", "", "text", True, False, None, [], [1], ["a"], [1, 2],
          {"a": 1}]


@pytest.fixture(scope="module")
def ruleset():
    tree = path_tree(SOURCE)
    return ruleset_of(extract(tree), tree)


@pytest.fixture(scope="module")
def schema(ruleset):
    return config_schema(ruleset)


def errors(schema: dict, data: dict) -> list[jsonschema.ValidationError]:
    return sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))


def rule_errors(schema: dict, data: dict) -> list[str]:
    """The ids of the rules whose if/then refuse the file."""
    found = []
    for error in errors(schema, data):
        path = list(error.schema_path)
        if path[:1] == ["allOf"]:
            found.append(schema["allOf"][path[1]]["x-sglang-rule"]["id"])
    return found


def keys_only(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k != "allOf"}


def definite(ruleset, data: dict, folder: Path) -> bool:
    """Whether `check --config` finds a definite (or argument) error in the file, the model on the
    command line."""
    path = folder / "launch.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    report = check(ruleset, ["--model-path", "org/model", "--config", str(path)])
    return bool(report.definite or report.argument_errors)


def parses(ruleset, data: dict, folder: Path) -> bool:
    path = folder / "launch.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return not parse_command(["--model-path", "org/model", "--config", str(path)], ruleset.catalog).errors


# ---- keys and values --------------------------------------------------------------------------------


def test_schema_is_draft_2020_12_and_names_the_release(schema) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "urn:sglang-constraints:sglang-src:config-file" and "SGLang src " in schema["title"]


def test_keys_are_option_names_as_the_merger_passes_them(schema) -> None:
    properties = schema["properties"]
    assert {"tp-size", "tensor-parallel-size", "offload-kvcache", "disaggregation-mode"} <= set(properties)
    assert properties["tp-size"]["default"] == 1 and properties["tp-size"]["description"] == "TP."
    assert properties["disaggregation-mode"]["else"]["enum"] == ["null", "prefill", "decode"]
    # `tp_size` becomes --tp_size, which argparse does not know: refused, naming the key to write
    (error,) = errors(schema, {"tp_size": 2})
    assert list(error.path) == ["tp_size"] and "write tp-size" in error.message
    # a BooleanOptionalAction is refused by the merger itself, in its words
    (error,) = errors(schema, {"enable-overlap": False})
    assert "Unsupported config option 'enable_overlap' with action 'BooleanOptionalAction'" in error.message
    assert errors(schema, {"no-enable-overlap": True})
    (error,) = errors(schema, {"no-such-option": 1})
    assert list(error.path) == ["no-such-option"] and "Not a key" in error.message


@pytest.mark.parametrize("data", [
    {"tp-size": 2}, {"tp-size": "2"}, {"tensor-parallel-size": 4}, {"disaggregation-mode": "decode"},
    {"offload-kvcache": True}, {"offload-kvcache": False}, {"cuda-graph-bs": [1, 2, 4]}, {"cuda-graph-bs": 8},
    {"cuda-graph-bs": []}, {"storage-backend": "file"}, {"storage-backend": 3}, {"tp-si": 2},
    {"speculative-algorithm": "EAGLE"}, {"tp_size": []}, {"offload_kvcache": False},
])
def test_values_argparse_takes_validate(schema, ruleset, data, tmp_path) -> None:
    assert parses(ruleset, data, tmp_path)
    assert not errors(keys_only(schema), data)


@pytest.mark.parametrize(("data", "key"), [
    ({"tp-size": "two"}, "tp-size"), ({"tp-size": True}, "tp-size"), ({"tp-size": None}, "tp-size"),
    ({"disaggregation-mode": "both"}, "disaggregation-mode"), ({"offload-kvcache": "yes"}, "offload-kvcache"),
    ({"cuda-graph-bs": ["a"]}, "cuda-graph-bs"), ({"tp-size": [1, 2]}, "tp-size"), ({"tp-si": "x"}, "tp-si"),
])
def test_values_argparse_refuses_point_at_their_key(schema, ruleset, data, key, tmp_path) -> None:
    assert not parses(ruleset, data, tmp_path)
    assert [list(e.path)[:1] for e in errors(keys_only(schema), data)] == [[key]]


def test_every_key_and_value_check_parses_is_valid(schema, ruleset, tmp_path) -> None:
    """Against check's argparse model: one-key files of every key and every kind of value."""
    keys = keys_only(schema)
    validator = jsonschema.Draft202012Validator(keys)
    stricter = []
    for key in sorted(schema["properties"]) + ["tp-si", "cuda-g", "no-such-option"]:
        for value in VALUES:
            data = {key: value}
            if parses(ruleset, data, tmp_path) and not validator.is_valid(data):
                stricter.append(data)
    assert not stricter


# ---- cross-field rules ------------------------------------------------------------------------------


def test_rules_of_typed_flags_become_if_then_with_sglang_words(schema, ruleset) -> None:
    messages = {c["x-sglang-rule"]["message"] for c in schema["allOf"]}
    assert {OFFLOAD, NGRAM} <= messages
    others = {r["message"] for r in schema["x-sglang-rules"]}
    assert "Offloading the KV cache is not supported on ROCm." in others  # a platform decides it
    error, backend = errors(schema, {"disaggregation-mode": "prefill", "offload-kvcache": True})
    assert OFFLOAD in error.message and error.schema == {"not": {"description": OFFLOAD}}
    assert list(error.path) == ["offload-kvcache"]
    assert "needs a storage backend" in backend.message  # the next guard, once that is fixed
    assert not errors(schema, {"disaggregation-mode": "decode", "offload-kvcache": True, "storage-backend": "file"})
    # at a key every file the rule refuses holds
    (error,) = errors(schema, {"speculative-algorithm": "NGRAM", "draft-tokens": 1})
    assert list(error.path) == ["draft-tokens"]
    assert error.message == f"1 should not be valid under {{'description': '{NGRAM}'}}"


def test_a_flag_only_the_command_line_sets_leaves_its_rules_open(schema, ruleset, tmp_path) -> None:
    # --no-enable-overlap goes on the command line (the file may not hold it): pp-size 2 in the file
    # is refused by SGLang only if the command line leaves overlap on
    assert not errors(schema, {"pp-size": 2})


def test_several_spellings_or_an_abbreviation_of_a_field_are_never_sure(schema) -> None:
    # which one wins depends on the file's order: the schema does not guess
    assert not rule_errors(schema, {"speculative-algorithm": "NGRAM", "draft-tokens": 1, "draft-tok": 5})
    assert rule_errors(schema, {"speculative-algorithm": "NGRAM", "draft-tokens": 1})


def test_schema_refuses_only_what_check_finds_definite(schema, ruleset, tmp_path) -> None:
    """Random files over the keys the rules read and the constants they compare with."""
    pool = {"disaggregation-mode": ["null", "prefill", "decode", "x"], "offload-kvcache": [True, False],
            "storage-backend": ["file", 3], "speculative-algorithm": ["NGRAM", "EAGLE"], "draft-tokens": [0, 1, 2, 5, "1"],
            "tp-size": [1, 4, 8, 16], "dp-size": [1, 2], "pp-size": [1, 2], "page-size": [16, 128],
            "tensor-parallel-size": [2], "draft-tok": [1]}
    rng = random.Random(35)
    refused = 0
    for _ in range(300):
        data = {k: rng.choice(v) for k, v in pool.items() if rng.random() < 0.4}
        if rule_errors(schema, data):
            refused += 1
            assert definite(ruleset, data, tmp_path), data
    assert refused > 20


# ---- the command, the typed module ------------------------------------------------------------------


def test_command_writes_the_schema_and_refuses_a_release_without_config(tmp_path, capsys) -> None:
    rules = tmp_path / "rules"
    from extractor.products.extraction.output import flags_document, rules_document, write_documents

    ex = extract(path_tree(SOURCE))
    write_documents(rules, {"rules.json": (rules_document(ex), "rules.schema.json"),
                            "flags.json": (flags_document(ex), "flags.schema.json")})
    assert main(["schema", "--rules", str(rules / "rules.json")]) == 2  # the fixture has no --config
    assert "reads no config file" in capsys.readouterr().err
    assert main(["schema", "--rules", str(rules / "rules.json"), "--page-url", "{nope}"]) == 2


def test_typed_module_of_the_fixture(ruleset) -> None:
    text = typed_module(ruleset)
    compile(text, "fields.py", "exec")
    lines = set(text.splitlines())
    assert {"    tp_size: int", "    offload_kvcache: bool", "    cuda_graph_bs: Optional[List[int]]",
            "    disaggregation_mode: Literal['null', 'prefill', 'decode']"} <= lines
    assert "    #: TP. (--tp-size, --tensor-parallel-size)" in lines


# ---- real releases -----------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["0.5.18", "0.5.23"])
def real(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"schema-{request.param}")
    path = folder / "config.schema.json"
    assert main(["schema", "--release", request.param, "-o", str(path)]) == 0
    return request.param, release_rules(request.param), json.loads(path.read_text(encoding="utf-8")), path


@pytest.mark.network
def test_real_schema_keys_and_values_agree_with_check(real, tmp_path) -> None:
    version, ruleset, schema, _ = real
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(keys_only(schema))
    rng = random.Random(version)
    keys = sorted(schema["properties"])
    stricter, looser = [], 0
    for key in rng.sample(keys, 150) + ["tp", "tp-si", "no-such-option"]:
        for value in VALUES:
            data = {key: value}
            ours, theirs = validator.is_valid(data), parses(ruleset, data, tmp_path)
            if theirs and not ours:
                stricter.append(data)
            looser += ours and not theirs
    assert not stricter
    assert looser < 150  # choices SGLang fills in at run time, custom parsers: accepted here


@pytest.mark.network
def test_real_rules_refuse_their_examples_and_only_definite_files(real, tmp_path) -> None:
    version, ruleset, schema, _ = real
    rules = {r.id: r for r in ruleset.rules}
    assert len(schema["allOf"]) > 50 and schema["x-sglang-rules"]
    options = ruleset.catalog.options
    refused = 0
    for item in schema["allOf"]:
        rule = rules[item["x-sglang-rule"]["id"]]
        if rule.example is None:
            continue
        data = _as_config(rule.example.before, options)
        if rule.id not in rule_errors(schema, data):
            continue  # its example needs a key the file cannot hold
        refused += 1
        assert definite(ruleset, data, tmp_path), (rule.id, data)
    assert refused >= 0.8 * sum(rules[i["x-sglang-rule"]["id"]].example is not None for i in schema["allOf"])


@pytest.mark.network
def test_real_schema_refuses_only_files_check_finds_definite(real, tmp_path) -> None:
    """Random files mixing the rules' own example settings: whatever the schema's rules refuse,
    `check --config` finds a definite error in."""
    version, ruleset, schema, _ = real
    rules = {r.id: r for r in ruleset.rules}
    settings: dict[str, list] = {}
    for item in schema["allOf"]:
        example = rules[item["x-sglang-rule"]["id"]].example
        for key, value in (_as_config(example.before, ruleset.catalog.options) if example else {}).items():
            if value not in settings.setdefault(key, []):
                settings[key].append(value)
    keys = sorted(settings)
    rng = random.Random(f"{version}-files")
    refused = 0
    for _ in range(150):
        data = {key: rng.choice(settings[key]) for key in rng.sample(keys, rng.randint(1, 4))}
        if rule_errors(schema, data):
            refused += 1
            assert definite(ruleset, data, tmp_path), data
    assert refused > 30


def _as_config(argv, options) -> dict:
    """A launch's flags as a config file's keys, values typed as YAML reads them."""
    data, words = {}, list(argv)
    while words:
        word = words.pop(0)
        values = []
        while words and not words[0].startswith("--"):
            values.append(words.pop(0))
        if word in ("--model-path", "--device"):
            continue
        typed = [yaml.safe_load(v) if v else v for v in values]
        option = options.get(word)
        nargs = option.flag.nargs if option is not None else None
        data[word[2:]] = True if not values else typed if nargs in ("+", "*") else typed[0]
    return data


@pytest.mark.network
def test_real_seed_in_a_config_file(real) -> None:
    version, _, schema, _ = real
    dashed = {"disaggregation-mode": "prefill", "disaggregation-decode-enable-offload-kvcache": True}
    assert any(SEED in e.message for e in errors(schema, dashed))
    # as the issue wrote it: SGLang passes `--disaggregation_mode`, which argparse does not know;
    # the checks behind the keys read them as the flags, so the next error shows at once
    underscored = {"disaggregation_mode": "prefill", "disaggregation_decode_enable_offload_kvcache": True}
    found = errors(schema, underscored)
    assert {tuple(e.path) for e in found} == {(k,) for k in underscored}
    assert {k for e in found if "write disaggregation-" in e.message for k in e.path} == set(underscored)
    assert any(SEED in e.message and list(e.path) == ["disaggregation_decode_enable_offload_kvcache"] for e in found)


@pytest.mark.network
def test_real_schema_through_check_jsonschema(real, tmp_path) -> None:
    version, _, _, path = real
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert tool, "check-jsonschema is a test dependency"
    good = tmp_path / "good.yaml"
    good.write_text("model-path: Qwen/Qwen3-8B\ntp-size: 2\nmem-fraction-static: 0.85\nenable-metrics: true\n"
                    "disaggregation-mode: decode\n", encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tp-size: two\ndisaggregation-mode: prefill\ndisaggregation-decode-enable-offload-kvcache: true\n",
                   encoding="utf-8")
    done = subprocess.run([tool, "--schemafile", str(path), str(good)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run([tool, "--schemafile", str(path), str(bad)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "$['tp-size']: 'two'" in done.stdout
    assert f"$['disaggregation-decode-enable-offload-kvcache']: True should not be valid under {{'description': '{SEED}'}}" in done.stdout


@pytest.mark.network
def test_real_typed_module_type_checks(tmp_path) -> None:
    assert main(["schema", "--release", "0.5.23", "--format", "typeddict", "-o",
                 str(tmp_path / "sglang_fields.py")]) == 0
    (tmp_path / "good.py").write_text(
        "from sglang_fields import ServerArgsFields\n"
        "fields: ServerArgsFields = {'model_path': 'Qwen/Qwen3-8B', 'tp_size': 2, 'mem_fraction_static': 0.8,\n"
        "                            'attention_backend': 'fa3', 'enable_metrics': True}\n", encoding="utf-8")
    (tmp_path / "bad.py").write_text(
        "from sglang_fields import ServerArgsFields\n"
        "fields: ServerArgsFields = {'tp_size': '2', 'attention_backend': 'fa9'}\n", encoding="utf-8")
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy")]
    done = subprocess.run([*mypy, "good.py", "sglang_fields.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    done = subprocess.run([*mypy, "bad.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout.count("[typeddict-item]") == 2
