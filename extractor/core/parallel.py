"""Independent pieces of one stage shared with forked helper processes: the same results, sooner on
several cores.

Fork, not spawn: a helper starts with everything this process built (the ruleset, the program, the
caches), so nothing is sent to it; only what it made comes back, pickled through a pipe (so a task
whose result is large is better made here, beside the helpers: `aside`). The pieces
are taken in chunks (neighbours share caches) from a queue every process reads, so a process that is
done early takes more; the results come back in the pieces' order whoever made them, so the output
never depends on how many processes there were or how fast each was. A helper that fails, or cannot
be started, costs time, never results: what it did not deliver is made here. A process with threads
is never forked (a lock another thread holds would stay held in the child forever), nor one without
`os.fork`.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

_T = TypeVar("_T")
_A = TypeVar("_A")

_RECORD = struct.Struct("<I")  # a chunk's number in the queue: reads this small from a pipe are whole
_QUEUE_CAPACITY = 1024  # chunks at most (4 KiB of records: a page, the smallest pipe buffer there is)


def default_jobs() -> int:
    """Processes a stage may use when the caller does not say: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


@dataclass(frozen=True, slots=True)
class Shared(Generic[_T, _A]):
    """What `shared_map` made: the pieces in order, and what `aside` gave."""

    items: list[_T]
    aside: _A | None


def shared_map(make: Callable[[int], _T], count: int, jobs: int, chunk: int,
               finish: Callable[[], object] | None = None, absorb: Callable[[object], None] | None = None,
               aside: Callable[[], _A] | None = None) -> Shared[_T, _A]:
    """`[make(i) for i in range(count)]`, with up to `jobs` processes (this one and forked helpers)
    taking the indexes `chunk` at a time.

    `aside`: one more task, independent of the pieces, made here while the helpers start on them
    (its result stays in this process: nothing of it is sent). `finish`, run in each helper after
    its last piece, gives what else it learnt (entries of a memo); `absorb` takes it here, helper
    by helper."""
    chunk = max(chunk, -(-count // _QUEUE_CAPACITY))
    chunks = -(-count // chunk)
    helpers = min(jobs - 1, chunks - (aside is None))
    queue_out = _queue(chunks) if helpers >= 1 and can_fork() else None
    if queue_out is None:
        found = aside() if aside is not None else None
        return Shared([make(i) for i in range(count)], found)
    started = []
    try:
        for _ in range(helpers):
            started.append(_start(lambda: _taken(make, count, chunk, queue_out), finish))
        found = aside() if aside is not None else None
        made: dict[int, _T] = dict(_taken(make, count, chunk, queue_out))
    except BaseException:
        for helper in started:
            _stop(helper)
        raise
    finally:
        os.close(queue_out)
    for helper in started:
        delivered = _collect(helper)
        if delivered is not None:
            pieces, learnt = delivered
            made.update(pieces)
            if absorb is not None:
                absorb(learnt)
    for i in range(count):  # what a failed helper had taken
        if i not in made:
            made[i] = make(i)
    return Shared([made[i] for i in range(count)], found)


def _queue(chunks: int) -> int | None:
    """The read end of a pipe holding each chunk's number, closed for writing (its readers see its
    end once it is empty); None when no such pipe can be made (no descriptor left, or a pipe that
    cannot hold them all: it is filled before anyone reads)."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        os.set_blocking(write, False)
        records = b"".join(_RECORD.pack(n) for n in range(chunks))
        if os.write(write, records) == len(records):
            return read
    except OSError:  # BlockingIOError: the pipe is smaller than this queue
        pass
    finally:
        os.close(write)
    os.close(read)
    return None


def _taken(make: Callable[[int], _T], count: int, chunk: int, queue: int) -> list[tuple[int, _T]]:
    """The pieces of every chunk this process takes from the queue, until it is empty."""
    made = []
    while True:
        record = os.read(queue, _RECORD.size)
        if len(record) != _RECORD.size:
            return made
        start = _RECORD.unpack(record)[0] * chunk
        made.extend((i, make(i)) for i in range(start, min(start + chunk, count)))


def _start(take: Callable[[], list], finish: Callable[[], object] | None) -> tuple[int, int] | None:
    """Fork a helper that runs `take`, then `finish`, and writes what they gave to a pipe: (its pid,
    the pipe's read end); None when no process could be started."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid:
        os.close(write)
        return pid, read
    # The helper. It leaves by `os._exit`: no buffered output, exit hook or `finally` of the stack it
    # was forked from runs a second time.
    code = 1
    try:
        os.close(read)
        pieces = take()
        data = pickle.dumps((pieces, finish() if finish is not None else None), pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write, "wb") as out:
            out.write(data)
        code = 0
    except BaseException:  # noqa: BLE001 - whatever went wrong, the parent makes the pieces itself
        pass
    os._exit(code)


def _collect(helper: tuple[int, int] | None) -> tuple[list, object] | None:
    """What a helper made, once it has exited; None when it failed."""
    if helper is None:
        return None
    pid, read = helper
    with os.fdopen(read, "rb") as pipe:  # read before waiting: a helper blocks on a full pipe
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - cut short: made here instead
        return None


def _stop(helper: tuple[int, int] | None) -> None:
    if helper is not None:
        pid, read = helper
        os.close(read)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
