"""The fingerprint of the code that makes a cached result (`core.cache.code_fingerprint`): what it read
of each module is kept in the cache with the module's stamp, taken back only while that stamp holds."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import pytest

from extractor.core import cache

ROOTS = ("products.reuse.rulesets", "products.check.linter")


@pytest.fixture
def package(tmp_path, monkeypatch) -> Path:
    """A copy of the extractor package as the one fingerprinted, and a cache of its own."""
    copy = tmp_path / "extractor"
    shutil.copytree(cache._PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    monkeypatch.setattr(cache, "_PACKAGE", copy)
    monkeypatch.setenv("SGLANG_CONSTRAINTS_EXTRACTION_CACHE", str(tmp_path / "cache"))
    _new_process()
    yield copy
    _new_process()


def _new_process() -> None:
    """What a new process starts from: nothing remembered in memory."""
    cache.code_fingerprint.cache_clear()
    cache._fingerprint_memo.cache_clear()


def _fresh(roots=ROOTS) -> str:
    """The fingerprint made from every module's file, nothing kept taken."""
    return cache._fingerprint(roots)[0]


def _reading(monkeypatch) -> list[str]:
    """The modules read from here on, by their path in the package."""
    read: list[str] = []
    module_read = cache._module_read

    def recorded(path, stamp):
        read.append(path.relative_to(cache._PACKAGE).as_posix())
        return module_read(path, stamp)
    monkeypatch.setattr(cache, "_module_read", recorded)
    return read


def test_a_kept_fingerprint_is_taken_back_without_reading_a_module(package, monkeypatch) -> None:
    first = cache.code_fingerprint(*ROOTS)
    assert first == _fresh()
    assert (Path(os.environ["SGLANG_CONSTRAINTS_EXTRACTION_CACHE"]) / "code" / "fingerprints.pickle").is_file()
    _new_process()
    read = _reading(monkeypatch)
    assert cache.code_fingerprint(*ROOTS) == first
    assert read == []


def test_other_roots_read_only_the_modules_no_fingerprint_read_before(package, monkeypatch) -> None:
    """The first `check` after an `extract`: the answers' fingerprint reads only the modules the
    index's fingerprint did not, and is what reading them all gives."""
    cache.code_fingerprint(*ROOTS)
    _new_process()
    read = _reading(monkeypatch)
    wider = (*ROOTS, "products.check.fixes")
    found = cache.code_fingerprint(*wider)
    assert "products/check/fixes.py" in read
    assert "products/check/linter.py" not in read and "core/model.py" not in read
    monkeypatch.undo()
    assert found == _fresh(wider) != _fresh()


def test_an_edit_of_a_module_read_gives_the_new_fingerprint(package) -> None:
    before = cache.code_fingerprint(*ROOTS)
    module = package / "logic" / "evaluation.py"  # imported by the linter, not named in ROOTS
    module.write_text(module.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    _new_process()
    after = cache.code_fingerprint(*ROOTS)
    assert after != before and after == _fresh()


def test_an_edit_that_keeps_the_size_is_seen_by_its_time(package) -> None:
    before = cache.code_fingerprint(*ROOTS)
    module = package / "logic" / "reads.py"
    text = module.read_text(encoding="utf-8")
    module.write_text(text.replace('"""', "'''", 1).replace('"""', "'''", 1), encoding="utf-8")
    stat = module.stat()
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert module.stat().st_size == len(text.encode())
    _new_process()
    assert cache.code_fingerprint(*ROOTS) != before


def test_an_edit_read_first_for_other_roots_still_changes_the_fingerprint(package) -> None:
    """An edited module another fingerprint reads again first (the index's, before the answers') has
    a new record by then: the answers' fingerprint is made again all the same, not taken back."""
    wider = (*ROOTS, "products.check.fixes")
    before = cache.code_fingerprint(*wider)
    cache.code_fingerprint(*ROOTS)
    module = package / "logic" / "launch.py"  # read by both
    module.write_text(module.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    _new_process()
    cache.code_fingerprint(*ROOTS)
    _new_process()
    after = cache.code_fingerprint(*wider)
    assert after != before and after == _fresh(wider)


def test_an_unrelated_edit_keeps_the_fingerprint_and_roots_are_kept_apart(package) -> None:
    before = cache.code_fingerprint(*ROOTS)
    other = cache.code_fingerprint("products.history.diff")
    assert other != before
    module = package / "products" / "site" / "pages.py"  # neither the linter nor the rule sets import it
    module.write_text(module.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    _new_process()
    assert cache.code_fingerprint(*ROOTS) == before
    assert cache.code_fingerprint("products.history.diff") == other


@pytest.mark.parametrize("content", [
    b"not a pickle",
    # an earlier memo's shape (fingerprints by roots alone), and one whose entries hold paths alone
    pickle.dumps({("x", *ROOTS): ("digest", (("a.py", (1, 2)),))}),
    pickle.dumps(({}, {("x", *ROOTS): ("digest", ("a.py",))})),
], ids=["no pickle", "by roots", "paths alone"])
def test_an_unreadable_memo_is_made_again(package, content) -> None:
    expected = cache.code_fingerprint(*ROOTS)
    memo = Path(os.environ["SGLANG_CONSTRAINTS_EXTRACTION_CACHE"]) / "code" / "fingerprints.pickle"
    memo.write_bytes(content)
    _new_process()
    assert cache.code_fingerprint(*ROOTS) == expected
    _new_process()
    assert cache._fingerprint_memo(memo).digest(ROOTS) == expected  # written anew
