"""Stages shared with forked helper processes (`core.parallel`): the same results as one process makes,
whatever the number of processes, whoever fails; and the stages that use it (witnesses, documents)."""

from __future__ import annotations

import os
import time
import threading

import pytest

from extractor import cli
from extractor.core import parallel
from extractor.core.errors import EXIT_INPUT
from extractor.core.parallel import shared_map
from extractor.products.extraction import witness
from extractor.products.extraction.extraction import extract
from extractor.products.extraction.output import encoded, encoded_documents, extract_documents
from extractor.sources.trees import path_tree

from .conftest import FIXTURES

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="helpers are forked")


def square_and_pid(i: int) -> tuple[int, int]:
    return i * i, os.getpid()


@pytest.mark.parametrize("jobs", [1, 2, 3])
@pytest.mark.parametrize("chunk", [1, 4, 50])
def test_the_pieces_come_back_in_order_whoever_made_them(jobs: int, chunk: int) -> None:
    made = shared_map(square_and_pid, 40, jobs, chunk)
    assert [value for value, _ in made.items] == [i * i for i in range(40)]
    makers = {pid for _, pid in made.items}
    if jobs == 1 or chunk == 50:  # one process, or one chunk: nothing to share
        assert makers == {os.getpid()}


def test_helpers_take_pieces_on_two_cores() -> None:
    def slow(i: int) -> int:
        total = 0
        for n in range(20_000):  # long enough that the helper is running before the queue is empty
            total += n * i
        return os.getpid()

    makers = shared_map(slow, 64, 2, 2).items
    assert len(set(makers)) == 2 and os.getpid() in makers


def test_aside_is_made_here_while_the_helpers_work() -> None:
    here = os.getpid()
    made = shared_map(square_and_pid, 20, 2, 2, aside=lambda: ("aside", os.getpid()))
    assert made.aside == ("aside", here)
    assert [v for v, _ in made.items] == [i * i for i in range(20)]
    # Without helpers, the aside is still made, and returned the same way.
    assert shared_map(square_and_pid, 3, 1, 2, aside=lambda: 7).aside == 7


def test_a_failing_helper_costs_time_not_results() -> None:
    parent = os.getpid()

    def fails_elsewhere(i: int) -> int:
        if os.getpid() != parent:
            raise RuntimeError("helper breaks")
        return i + 1

    assert shared_map(fails_elsewhere, 30, 2, 1).items == [i + 1 for i in range(30)]

    def exits_elsewhere(i: int) -> int:
        if os.getpid() != parent:
            os._exit(3)  # dies without a word
        return -i

    assert shared_map(exits_elsewhere, 30, 2, 1).items == [-i for i in range(30)]


def test_an_error_here_stops_the_helpers_and_propagates(monkeypatch, tmp_path) -> None:
    parent = os.getpid()
    taken_here = tmp_path / "taken-here"
    helpers: list[int] = []
    start = parallel._start

    def recorded(*args):
        helper = start(*args)
        if helper is not None:
            helpers.append(helper[0])
        return helper

    monkeypatch.setattr(parallel, "_start", recorded)

    def fails_here(i: int) -> int:
        if os.getpid() == parent:
            taken_here.touch()
            raise ValueError("bad piece")
        # The helper holds its first piece until this process has one: it cannot take them all first.
        for _ in range(1000):
            if taken_here.exists():
                break
            time.sleep(0.01)
        return i

    with pytest.raises(ValueError, match="bad piece"):
        shared_map(fails_here, 10, 2, 1)
    assert helpers
    for pid in helpers:  # no helper left behind, not even a zombie: each was waited for
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_what_helpers_learn_is_absorbed() -> None:
    learnt: dict[int, int] = {}

    def make(i: int) -> int:
        learnt[i] = i * 10
        return i

    absorbed: dict[int, int] = {}
    made = shared_map(make, 24, 2, 3, finish=lambda: dict(learnt), absorb=absorbed.update)
    assert made.items == list(range(24))
    # What the helper made is only in its own `learnt`: it comes back through `finish`.
    assert {**learnt, **absorbed} == {i: i * 10 for i in range(24)}


def test_a_process_with_threads_is_not_forked() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not parallel.can_fork()
        assert {pid for _, pid in shared_map(square_and_pid, 40, 4, 1).items} == {os.getpid()}
    finally:
        stop.set()
        thread.join()


# ---- the stages that share their work ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def basic():
    tree = path_tree(FIXTURES / "render_basic" / "src")
    return tree, extract(tree)


def test_witnesses_are_the_same_with_helpers(basic, monkeypatch) -> None:
    tree, ex = basic
    monkeypatch.setattr(witness, "_CHUNK", 1)  # the fixture's few guards in many chunks
    guards = [r for r in ex.rules if r.kind.value != "adjustment"]
    assert len(guards) >= 4
    one = witness.attach_witnesses(ex.rules, ex.flags, tree, ex.resolution)
    two = witness.attach_witnesses(ex.rules, ex.flags, tree, ex.resolution, jobs=2)
    assert two == one and any(r.example for r in one)
    # With a memo: the same rules, and the verdicts the helper made are kept too.
    memo_one: dict = {}
    memo_two: dict = {}
    assert witness.attach_witnesses(ex.rules, ex.flags, tree, ex.resolution, memo_one) == one
    assert witness.attach_witnesses(ex.rules, ex.flags, tree, ex.resolution, memo_two, jobs=2) == one
    assert memo_two == memo_one


def test_extraction_is_the_same_with_helpers(basic, monkeypatch) -> None:
    tree, ex = basic
    monkeypatch.setattr(witness, "_CHUNK", 1)
    assert extract_documents(extract(tree, jobs=2)) == extract_documents(ex)


def test_encoded_documents_are_what_write_documents_writes(basic) -> None:
    _, ex = basic
    documents = extract_documents(ex)
    expected = {name: encoded(name, document, schema) for name, (document, schema) in documents.items()}
    for jobs in (1, 2):
        texts, summary = encoded_documents(ex, jobs)
        assert texts == expected
        assert summary == documents["rules.json"][0]["summary"]


def test_jobs_below_one_is_a_usage_error(tmp_path, capsys, monkeypatch) -> None:
    code = cli.main(["extract", str(FIXTURES / "render_basic" / "src"), "-o", str(tmp_path), "-j", "0", "--no-cache"])
    assert code == EXIT_INPUT
    assert "--jobs must be at least 1" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())

    def no_fetch(*args, **kwargs):
        raise AssertionError("a release was opened before --jobs was checked")

    monkeypatch.setattr("extractor.sources.trees.release_tree", no_fetch)
    assert cli.main(["extract", "--release", "0.5.23", "-o", str(tmp_path), "--jobs", "-1"]) == EXIT_INPUT
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_no_helper_when_earlier_verdicts_cover_the_guards(basic, monkeypatch) -> None:
    """The next commit of an extracted source: its verdicts are looked up, not made; forking a
    helper for them would cost more than it saves."""
    tree, ex = basic
    monkeypatch.setattr(witness, "_CHUNK", 1)
    asked: list[int] = []
    real = witness.shared_map

    def spy(make, count, jobs, chunk, **kwargs):
        asked.append(jobs)
        return real(make, count, jobs, chunk, **kwargs)

    monkeypatch.setattr(witness, "shared_map", spy)
    memo: dict = {}
    first = witness.attach_witnesses(ex.rules, ex.flags, tree, ex.resolution, memo, jobs=2)
    assert asked == [2]  # nothing known yet: shared
    guards = [r for r in ex.rules if r.kind.value != "adjustment"]
    fewer = [r for r in ex.rules if r is not guards[0]]  # another source: one guard less, the rest known
    again = witness.attach_witnesses(fewer, ex.flags, tree, ex.resolution, memo, jobs=2)
    assert asked == [2, 1]
    assert again == witness.attach_witnesses(fewer, ex.flags, tree, ex.resolution)  # as from nothing
    assert first == witness.attach_witnesses(ex.rules, ex.flags, tree, ex.resolution)
