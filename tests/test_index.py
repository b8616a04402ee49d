"""The rule-set index: a load through it answers like a fresh parse; stale or broken indexes are not used."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from extractor.products.reuse import index as index_module
from extractor.products.check.linter import check
from extractor.products.reuse.rulesets import parse_rules, load_rules

from .test_check import rules_file, ruleset  # noqa: F401 - fixtures

ARGV = ["--model-path", "m", "--pp-size", "2", "--dp-size", "2"]


def answers(rs) -> list[tuple[str, str]]:
    return [(f.rule.id, f.certainty) for f in check(rs, ARGV).findings]


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SGLANG_CONSTRAINTS_EXTRACTION_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "index"


def test_an_indexed_load_answers_like_a_fresh_parse(rules_file: Path, cache: Path) -> None:  # noqa: F811
    fresh = answers(parse_rules(rules_file))
    assert fresh  # the command triggers something, so equal answers say something
    first = load_rules(rules_file)
    (stored,) = cache.glob("*.pickle")
    second = load_rules(rules_file)
    assert answers(first) == answers(second) == fresh
    assert second.rules == first.rules and second.resolution == first.resolution
    assert list(cache.glob("*.pickle")) == [stored]  # read back, not rebuilt


def test_a_broken_index_is_rebuilt(rules_file: Path, cache: Path) -> None:  # noqa: F811
    load_rules(rules_file)
    (stored,) = cache.glob("*.pickle")
    stored.write_bytes(b"not a pickle")
    assert answers(load_rules(rules_file)) == answers(parse_rules(rules_file))
    assert isinstance(pickle.loads(stored.read_bytes()), index_module.RuleSet)


def test_other_bytes_give_another_index(rules_file: Path, cache: Path, tmp_path: Path) -> None:  # noqa: F811
    load_rules(rules_file)
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "flags.json").write_bytes(rules_file.with_name("flags.json").read_bytes())
    text = rules_file.read_text(encoding="utf-8")
    (copy / "rules.json").write_text(text.replace('"label": "', '"label": "other-', 1), encoding="utf-8")
    assert load_rules(copy / "rules.json").label.startswith("other-")
    assert len(list(cache.glob("*.pickle"))) == 2


@pytest.mark.network
def test_extract_of_a_release_leaves_the_index_check_reads(tmp_path: Path, cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`extract --release` indexes the documents it cached: the next `check` of the release builds
    nothing (the release's files are shared with the other tests; the extractions and index are this
    test's own)."""
    from extractor.cli import main
    from extractor.products.reuse import rulesets

    assert main(["extract", "--release", "0.5.18", "-o", str(tmp_path / "out")]) == 0
    assert list(cache.glob("*.pickle"))

    def no_build(*args, **kwargs):
        raise AssertionError("the index was built again")

    monkeypatch.setattr(rulesets, "ruleset_from_documents", no_build)
    monkeypatch.setattr(rulesets, "_release_ruleset", no_build)
    assert main(["check", "--release", "0.5.18", "--", "--model-path", "m", "--tp", "3"]) in (0, 1)


def test_an_index_built_beside_an_equal_rule_set_keeps_its_own_atoms(rules_file: Path, cache: Path) -> None:  # noqa: F811
    """`explain` holds several releases' rule sets, equal formulas among them: the index of one built
    there refers to its own triggers' atoms (its bare launch's guards are found by object, as a command
    evaluated from it looks them up), not to equal atoms of another rule set."""
    from extractor.core.formula import every_atom

    other = parse_rules(rules_file)  # an equal rule set, other objects
    for rule in other.rules:
        if rule.effective is not None:
            every_atom(rule.effective)
    for loaded in (load_rules(rules_file), load_rules(rules_file)):  # built here, then read back
        own = {id(atom) for rule in loaded.rules if rule.effective is not None for atom in every_atom(rule.effective)}
        atoms = [atom for atom, _ in loaded.baseline.atom_masks]
        assert atoms and all(id(atom) in own for atom in atoms)
