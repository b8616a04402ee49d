"""Documents are checked on write by compiled validators (fastjsonschema, draft 7); jsonschema, which
implements the schemas' own draft 2020-12, is the reference they must agree with."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from extractor.core.serialize import dumps
from extractor.products.extraction.extraction import extract
from extractor.products.extraction.output import SCHEMA_DIR, InvalidDocument, extract_documents, load_schema, validate
from extractor.sources.trees import path_tree

from .conftest import FIXTURES

SCHEMAS = sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json"))

# Keywords whose meaning is the same in draft 7 and 2020-12 (`$defs` only holds subschemas reached by
# JSON pointer). `items` with an array, `prefixItems`, `$dynamicRef`, `unevaluated*`, `dependent*` and
# `$ref` beside other keywords differ between the drafts: a schema using them needs another validator.
SHARED_KEYWORDS = {
    "$schema", "$id", "$ref", "$defs", "title", "description", "type", "enum", "const", "properties",
    "required", "additionalProperties", "items", "minItems", "maxItems", "minimum", "maximum", "pattern",
    "minLength", "maxLength", "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "format",
}


def _schema_objects(node: object, is_schema: bool = True):
    """Every subschema, skipping the maps whose keys are names (properties, $defs)."""
    if isinstance(node, dict):
        if is_schema:
            yield node
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for sub in value.values():
                    yield from _schema_objects(sub)
            elif key in ("enum", "const", "required", "title", "description", "pattern"):
                continue
            else:
                yield from _schema_objects(value)
    elif isinstance(node, list):
        for item in node:
            yield from _schema_objects(item)


@pytest.mark.parametrize("name", SCHEMAS)
def test_schemas_use_only_keywords_that_mean_the_same_in_draft_7(name: str) -> None:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    for sub in _schema_objects(schema):
        assert set(sub) <= SHARED_KEYWORDS, (name, set(sub) - SHARED_KEYWORDS)
        assert not ("$ref" in sub and len(sub) > 1), (name, sub)  # draft 7 ignores $ref's siblings
        assert not isinstance(sub.get("items"), list), name


def _documents() -> dict[str, tuple[dict, str]]:
    ex = extract(path_tree(FIXTURES / "graph_neighbourhoods"))
    documents = extract_documents(ex)
    # Through JSON and back: shared subformulas become separate copies, as a reader sees them.
    return {n: (json.loads(dumps(d)), s) for n, (d, s) in documents.items() if s is not None}


def _mutations(document: object, path: tuple = ()):
    """(path, replacement) pairs that may or may not break the document: types, enums, extra keys."""
    if isinstance(document, dict):
        yield path + ("extra-key",), None
        for key, value in sorted(document.items()):
            yield path + (key,), _wrong(value)
            yield from _mutations(value, path + (key,))
    elif isinstance(document, list) and document:
        yield path + (0,), _wrong(document[0])
        yield from _mutations(document[0], path + (0,))


def _wrong(value: object) -> object:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int):
        return -1
    if isinstance(value, str):
        return value + "?" if value.startswith("--") or len(value) == 16 else 7
    if isinstance(value, list):
        return []
    return None


def _apply(document: dict, path: tuple, value: object) -> dict:
    changed = copy.deepcopy(document)
    node: object = changed
    for key in path[:-1]:
        node = node[key]  # type: ignore[index]
    last = path[-1]
    if last == "extra-key":
        node["unexpected"] = 1  # type: ignore[index]
    else:
        node[last] = value  # type: ignore[index]
    return changed


def test_compiled_validators_agree_with_jsonschema() -> None:
    rejected = accepted = 0
    for name, (document, schema_name) in _documents().items():
        reference = jsonschema.validators.validator_for(load_schema(schema_name))(load_schema(schema_name))
        assert not list(reference.iter_errors(document)), name
        validate(document, schema_name)
        for path, value in list(_mutations(document))[:400]:
            changed = _apply(document, path, value)
            expected_valid = not list(reference.iter_errors(changed))
            try:
                validate(changed, schema_name)
                valid = True
            except InvalidDocument as error:
                valid = False
                assert str(error).startswith(f"{schema_name}: ")
            assert valid == expected_valid, (name, path, value)
            rejected += not valid
            accepted += valid
    assert rejected > 100 and accepted > 10  # both verdicts were exercised


def test_a_broken_formula_deep_in_a_trigger_is_rejected() -> None:
    document, schema = _documents()["rules.json"]
    rule = next(r for r in document["rules"] if r.get("trigger", {}).get("type") in ("and", "or"))
    node = rule["trigger"]
    while node["type"] in ("and", "or", "not"):
        node = node["args"][-1] if "args" in node else node["arg"]
    node["op" if node["type"] == "compare" else "kind"] = "sometimes"
    with pytest.raises(InvalidDocument):
        validate(document, schema)


def test_every_schema_is_a_valid_2020_12_schema() -> None:
    for name in SCHEMAS:
        schema = load_schema(name)  # check_schema against its own metaschema, raises if not
        assert schema["$schema"].endswith("2020-12/schema")


def test_a_written_document_has_one_record_per_line(tmp_path: Path) -> None:
    document, _ = _documents()["rules.json"]
    text = dumps(document)
    lines = text.splitlines()
    records = [line for line in lines if line.startswith("    {")]
    assert len(records) == sum(len(document[key]) for key in ("rules", "warnings", "files", "errors"))
    assert json.loads(text) == document
    assert text == dumps(json.loads(text))  # the same data gives the same bytes


def test_records_are_written_by_orjson_and_what_it_refuses_by_json_in_the_same_style() -> None:
    from extractor.core.serialize import dump_bytes

    document = {"b": [{"z": 1, "a": "— ü"}, {"big": 2**70, "x": [1.5, None, True]}], "a": {"k": [1, 2]}}
    data = dump_bytes(document)
    assert data.decode() == dumps(document)
    assert data == ('{\n  "a": {\n    "k": [\n      1,\n      2\n    ]\n  },\n  "b": [\n'
                    '    {"a":"— ü","z":1},\n    {"big":1180591620717411303424,"x":[1.5,null,true]}\n  ]\n}\n').encode()
    assert json.loads(data) == document
    assert dump_bytes([{"x": 1}]) == b'[{"x":1}]\n'


def test_a_validator_is_generated_once_per_schema_and_kept(tmp_path: Path, monkeypatch) -> None:
    from extractor.core import cache
    from extractor.products.extraction import output

    monkeypatch.setenv("SGLANG_CONSTRAINTS_EXTRACTION_CACHE", str(tmp_path))
    made = []

    def generate(schema, **kwargs):
        made.append(schema)
        return real(schema, **kwargs)

    real = output.fastjsonschema.compile_to_code
    monkeypatch.setattr(output.fastjsonschema, "compile_to_code", generate)
    schema = {"type": "object", "required": ["a"]}
    first, again = output._compiled(dict(schema)), output._compiled(dict(schema))
    assert len(made) == 1 and len(list((tmp_path / "code").glob("*.marshal"))) == 1
    first({"a": 1})
    with pytest.raises(output.fastjsonschema.JsonSchemaValueException):
        again({})
    output._compiled({"type": "object", "required": ["b"]})
    assert len(made) == 2  # another schema, another validator
    assert cache.compiled_code("k", "<f>", lambda: "x = 1").co_filename == "<f>"


@pytest.mark.parametrize("schema", sorted(__import__("extractor.products.extraction.output", fromlist=["RECORD_LISTS"]).RECORD_LISTS))
def test_record_lists_checked_once_are_plain_arrays_of_items(schema: str) -> None:
    """A record found valid is not checked again (`checked_pieces`): sound only while the schema checks
    each record of those lists alone, an array with nothing but `items`."""
    from extractor.products.extraction.output import RECORD_LISTS

    properties = load_schema(schema)["properties"]
    for key in RECORD_LISTS[schema]:
        assert set(properties[key]) - {"description"} == {"type", "items"} and properties[key]["type"] == "array"


def test_a_record_checked_before_is_not_checked_again_and_the_bytes_are_the_same() -> None:
    from extractor.core.serialize import dump_bytes
    from extractor.products.extraction.output import checked_pieces

    document, _ = _documents()["rules.json"]
    pieces, seen = checked_pieces(document, "rules.schema.json")
    text = b"".join(pieces)
    assert text == dump_bytes(document) and len(seen) == len(set(seen)) > 0
    broken = copy.deepcopy(document)
    broken["rules"][0]["kind"] = "no such kind"
    with pytest.raises(InvalidDocument):
        checked_pieces(broken, "rules.schema.json", seen)  # its bytes changed: checked
    again, _ = checked_pieces(document, "rules.schema.json", seen)
    assert b"".join(again) == text
    # Digests are per schema: the same bytes found valid under another schema are checked.
    _, flags_seen = checked_pieces(*_documents()["flags.json"])
    assert not flags_seen & seen
