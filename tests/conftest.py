"""Shared test options: `--regen-golden` rewrites golden files instead of comparing with them."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", help="rewrite the golden JSON beside each fixture")


@pytest.fixture(autouse=True)
def answers_of_this_test(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `check` answers is kept per test (`products.reuse.answers`): a line answered from another
    test's run would not run the code this test patches or counts."""
    from extractor.products.reuse import answers

    folder = tmp_path_factory.mktemp("answers")
    monkeypatch.setattr(answers, "answers_folder", lambda: folder)


@pytest.fixture
def regen_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--regen-golden"))


_REAL: dict[str, object] = {}


@pytest.fixture(scope="session")
def real_extraction():
    """`real_extraction("0.5.23")`: one extraction per release per test session, shared by all modules."""
    from extractor.products.extraction.extraction import extract
    from extractor.sources.trees import release_tree

    def get(version: str):
        if version not in _REAL:
            _REAL[version] = extract(release_tree(version))
        return _REAL[version]

    return get
