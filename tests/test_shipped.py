"""Rule sets shipped in the package: what a fresh extraction makes, and read without a download."""

from __future__ import annotations

import json

import pytest

from extractor.cli import main
from extractor.products.reuse.shipped import shipped_documents, shipped_releases

SEED = ["--model-path", "m", "--disaggregation-decode-enable-offload-kvcache"]


def test_the_newest_releases_are_shipped() -> None:
    shipped = shipped_releases()
    assert len(shipped) >= 2 and "0.5.23" in shipped
    rules, flags = shipped_documents(shipped[0])
    assert rules["source"]["release"] == shipped[0] and rules["rules"] and flags["flags"]
    assert shipped_documents("0.0.1") is None


def test_a_packed_document_expands_to_itself_with_each_repeated_subtree_once() -> None:
    """Shipped documents are written as a table of their distinct subtrees: read back, the same
    document, a repeated subtree one object (the records are then made once per subtree)."""
    from extractor.products.reuse.shipped import _expanded, _packed

    shared = {"type": "and", "args": [{"type": "atom", "kind": "field", "name": "tp_size"}, {"type": "const", "value": True}]}
    document = {"rules": [{"id": "a", "trigger": shared, "order": 1}, {"id": "b", "trigger": json.loads(json.dumps(shared)),
                "order": [1, 1.0, True, None, "1"]}], "empty": {}, "list": [[], [[]]], "@": {"@": 3}}
    packed = _packed(document)
    assert len(packed["table"]) < len(json.dumps(document))  # a table, each distinct subtree once
    assert sum(1 for node in packed["table"] if node == {"type": "const", "value": True}) == 1
    back = _expanded(json.loads(json.dumps(packed)))
    assert back == document and json.dumps(back, sort_keys=True) == json.dumps(document, sort_keys=True)
    assert back["rules"][0]["trigger"] is back["rules"][1]["trigger"]
    assert _expanded(document) is document  # a document shipped unpacked is read as it is


@pytest.mark.network
@pytest.mark.parametrize("version", shipped_releases())
def test_a_shipped_release_is_what_a_fresh_extraction_makes(version: str) -> None:
    """Byte for byte as JSON; when the extractor's output changes, `make shipped-releases` writes them anew."""
    from extractor.products.reuse.cached import extract_documents
    from extractor.sources.trees import release_tree

    rules, flags, _ = extract_documents(release_tree(version))
    fresh = tuple(json.loads(json.dumps(d, sort_keys=True)) for d in (rules, flags))
    assert shipped_documents(version) == fresh, "the shipped documents are stale: run make shipped-releases"


def test_the_first_check_of_a_shipped_release_downloads_and_extracts_nothing(tmp_path, monkeypatch, capsys) -> None:
    def no_download(*args, **kwargs):
        raise AssertionError("a shipped release was fetched")

    monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE", str(tmp_path))
    monkeypatch.setattr("extractor.sources.trees.release_tree", no_download)
    for _ in range(2):  # the first run builds the index from the shipped documents, the second reads it
        assert main(["check", "--release", "0.5.23", "--", *SEED]) == 1
        assert "only supported for decode side" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["extractions"]  # an index, no source


def test_rewritten_shipped_files_are_not_read_through_an_older_note(tmp_path, monkeypatch, capsys) -> None:
    """`make shipped-releases` rewrites a release's files without changing the code: the note of the
    index an earlier check made of the old files is not taken for the new ones."""
    import shutil

    from extractor.products.reuse import shipped

    folder = tmp_path / "releases"
    folder.mkdir()
    for suffix in (".rules.json.xz", ".flags.json.xz"):
        shutil.copy(shipped._folder() / f"0.5.23{suffix}", folder)
    monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(shipped, "_folder", lambda: folder)
    assert main(["check", "--release", "0.5.23", "--", *SEED]) == 1
    assert "only supported for decode side" in capsys.readouterr().out
    rules, flags = shipped.shipped_documents("0.5.23")
    seed = next(r for r in rules["rules"] if r["message"].endswith("only supported for decode side."))
    seed["message"] = "Rewritten: only for decode servers."
    shipped.write_shipped(folder, "0.5.23", rules, flags)
    assert main(["check", "--release", "0.5.23", "--", *SEED]) == 1
    assert "Rewritten: only for decode servers." in capsys.readouterr().out
