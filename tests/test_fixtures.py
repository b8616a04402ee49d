"""Golden tests: each fixture folder extracts to the rules and flags stored beside it."""

from __future__ import annotations

import json

import pytest

from extractor.core.serialize import dumps
from extractor.products.extraction.extraction import extract
from extractor.products.extraction.output import flags_document, rules_document, validate
from extractor.sources.trees import path_tree

from .conftest import FIXTURES

CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and (p / "sglang").is_dir())


def _stable(document: dict) -> dict:
    document = dict(document)
    document["source"] = {"kind": "path", "label": document["source"]["label"]}  # no machine-specific path
    return document


@pytest.mark.parametrize("case", CASES)
def test_fixture_matches_golden(case: str, regen_golden: bool) -> None:
    ex = extract(path_tree(FIXTURES / case))
    produced = {
        "rules.json": _stable(rules_document(ex)),
        "flags.json": _stable(flags_document(ex)),
    }
    validate(produced["rules.json"], "rules.schema.json")
    validate(produced["flags.json"], "flags.schema.json")
    for name, document in produced.items():
        golden = FIXTURES / case / f"expected.{name}"
        if regen_golden or not golden.exists():
            golden.write_text(dumps(document), encoding="utf-8")
        assert json.loads(golden.read_text(encoding="utf-8")) == json.loads(dumps(document)), f"{case}/{name} changed"
