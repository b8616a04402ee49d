"""Fault injection: commands killed with SIGKILL at seeded random moments, and run side by side.

Each kind of output (extract's OUTPUT/<label>/, a render folder, history's folder, a site's MkDocs
docs/ and its built public/) holds a previous complete output when a run that makes a new one is killed (`kill -9` to its
process group: no handler runs). After the kill the folder is the previous output or the new one,
never a mix or a part (a run killed between the swap's two renames leaves the previous folder as
`.NAME.old`, which the next run puts back); the next run succeeds and gives the new output byte for
byte, from a cache the killed runs shared (nothing torn in it is read). Four commands at once on one
fresh cache give what one alone gives. docs/failure-modes.md says the same.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import FIXTURES
from .test_diff import history_repo  # noqa: F401  (the git fixture, shared)

SEED = 20261204
ROOT = Path(__file__).resolve().parent.parent


def visible(folder: Path) -> dict[str, bytes]:
    """The files a reader of the folder sees (hidden ones aside: temporary files, the swap's marker)."""
    if not folder.is_dir():
        return {}
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)}


def command(cache: Path, *argv: str) -> subprocess.Popen:
    env = {**os.environ, "SGLANG_CONSTRAINTS_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "extractor", *argv], cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def complete(cache: Path, *argv: str) -> float:
    """Run to the end (exit 0); its wall time."""
    started = time.monotonic()
    process = command(cache, *argv)
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err.decode()
    return time.monotonic() - started


def killed(cache: Path, delay: float, *argv: str) -> None:
    process = command(cache, *argv)
    time.sleep(delay)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # it finished first
    process.communicate(timeout=60)


def restore(target: Path, previous: Path) -> None:
    """The previous complete output in place again, leftovers of killed runs around it kept."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.rmtree(target.parent / f".{target.name}.old", ignore_errors=True)
    shutil.copytree(previous, target)


def kill_runs(rng: random.Random, runs: int, cache: Path, target: Path, argv_new: list[str],
              previous: dict[str, bytes], new: dict[str, bytes], saved: Path, seconds: float) -> list[str]:
    """`runs` runs of `argv_new` over the previous output, each killed at a random moment of its
    usual time; after each, the state seen, then a complete run. Returns the states seen."""
    assert previous != new
    seen = []
    for _ in range(runs):
        restore(target, saved)
        killed(cache, rng.uniform(0.0, seconds * 1.1), *argv_new)
        state = visible(target)
        old = target.parent / f".{target.name}.old"
        if state == previous:
            seen.append("previous")
        elif state == new:
            seen.append("new")
        else:
            # Killed between the two renames of the swap: no folder yet, the previous one beside it.
            assert not target.exists() and visible(old) == previous, sorted(set(state) ^ set(previous))[:5]
            seen.append("between")
        complete(cache, *argv_new)
        assert visible(target) == new
        assert not old.exists()
    return seen


def changed_copy(source: Path, folder: Path) -> Path:
    """The fixture source with one guard's message reworded: another extraction, the same label."""
    copy = folder / "src"
    shutil.copytree(source, copy)
    args = copy / "sglang" / "srt" / "server_args.py"
    args.write_text(args.read_text(encoding="utf-8").replace("is larger than 64.", "is above 64."), encoding="utf-8")
    return copy


@pytest.fixture
def sources(tmp_path: Path) -> tuple[Path, Path]:
    first = tmp_path / "a" / "src"
    shutil.copytree(FIXTURES / "render_basic" / "src", first)
    return first, changed_copy(FIXTURES / "render_basic" / "src", tmp_path / "b")


@pytest.mark.parametrize("kind, runs", [("extract", 12), ("render", 10)])
def test_a_killed_run_leaves_the_previous_output_or_the_new_one(tmp_path: Path, sources, kind: str, runs: int) -> None:
    rng = random.Random(f"{SEED}-{kind}")
    cache = tmp_path / "cache"
    first, second = sources
    out = tmp_path / "out"
    target = out / "src" if kind == "extract" else out
    complete(cache, kind, str(first), "-o", str(out))
    previous, saved = visible(target), tmp_path / "saved"
    shutil.copytree(target, saved)
    seconds = complete(cache, kind, str(second), "-o", str(tmp_path / "fresh"))
    new = visible(tmp_path / "fresh" / "src" if kind == "extract" else tmp_path / "fresh")
    seen = kill_runs(rng, runs, cache, target, [kind, str(second), "-o", str(out)], previous, new, saved, seconds)
    assert "previous" in seen  # the kills did land before the swap


def test_a_killed_history_or_site_leaves_the_previous_output_or_the_new_one(tmp_path: Path,
                                                                                   history_repo) -> None:  # noqa: F811
    pytest.importorskip("mkdocs")
    repo, commits = history_repo
    rng = random.Random(f"{SEED}-history-site")
    cache = tmp_path / "cache"
    before, after = f"{commits[0]}..{commits[3]}", f"{commits[0]}..{commits[-1]}"
    # (command, the folder checked inside its output, runs, options): the MkDocs project's docs/ and
    # the built site's public/.
    for kind, inside, runs, extra in (("history", "", 8, []), ("site", "docs", 5, []),
                                      ("site", "public", 5, ["--build"])):
        out = tmp_path / f"{kind}-{inside}"
        target = out / inside if inside else out
        complete(cache, kind, "--git", str(repo), "--revs", before, "-o", str(out), *extra)
        previous, saved = visible(target), tmp_path / f"saved-{kind}-{inside}"
        shutil.copytree(target, saved)
        fresh = tmp_path / f"fresh-{kind}-{inside}"
        seconds = complete(cache, kind, "--git", str(repo), "--revs", after, "-o", str(fresh), *extra)
        new = visible(fresh / inside if inside else fresh)
        kill_runs(rng, runs, cache, target, [kind, "--git", str(repo), "--revs", after, "-o", str(out), *extra],
                  previous, new, saved, seconds)


def test_four_commands_at_once_on_one_fresh_cache(tmp_path: Path, sources) -> None:
    """Extractions, a render and a check of one source side by side on an empty cache: each gives what
    a run alone gives, and the cache they filled serves a later run the same bytes."""
    _, second = sources
    cache = tmp_path / "cache"
    alone = tmp_path / "alone"
    complete(tmp_path / "other-cache", "extract", str(second), "-o", str(alone))
    runs = [command(cache, "extract", str(second), "-o", str(tmp_path / f"out{i}")) for i in range(3)]
    runs.append(command(cache, "render", str(second), "-o", str(tmp_path / "pages")))
    for process in runs:
        _, err = process.communicate(timeout=600)
        assert process.returncode == 0, err.decode()
    expected = visible(alone / "src")
    for i in range(3):
        assert visible(tmp_path / f"out{i}" / "src") == expected
    complete(cache, "extract", str(second), "-o", str(tmp_path / "later"))
    assert visible(tmp_path / "later" / "src") == expected
