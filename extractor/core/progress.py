"""What a long first run is doing (a release downloaded, its rules extracted), on a terminal only.

A first `check` of a release takes about 20 s; silent, it looks hung. `progress` prints a note that
stays; `Status` keeps one line at the bottom of the terminal naming the step in progress (the bytes
downloaded, the stage of the extraction, told with `step` from deep in the work), rewritten in
place and cleared when the work ends. Piped or captured output (CI logs, `--format json`, tests)
stays as it was: both write to stderr, and only to a terminal.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

PREFIX = "sglang-constraints: "


def _terminal(stream: TextIO | None = None) -> TextIO | None:
    stream = stream or sys.stderr
    return stream if getattr(stream, "isatty", lambda: False)() else None


def progress(text: str) -> None:
    """A note that stays on the terminal."""
    stream = _terminal()
    if stream is not None:
        print(PREFIX + text, file=stream, flush=True)


class Status:
    """One line naming what `what` is doing now: `with Status("sglang 0.5.23") as line:
    line.step("walking functions (2 of 4)")`. Rewritten at most ten times a second (a download
    reports every chunk); cleared when the block ends, so what follows starts on a clean line."""

    INTERVAL = 0.1

    def __init__(self, what: str, stream: TextIO | None = None) -> None:
        self.what = what
        self.stream = _terminal(stream)  # stderr when not given
        self.shown = 0.0
        self.width = 0

    def step(self, text: str, *, often: bool = False) -> None:
        """Show `text` as the current step; `often`: one of many quick updates (skipped when too soon)."""
        if self.stream is None:
            return
        now = time.monotonic()
        if often and now - self.shown < self.INTERVAL:
            return
        self.shown = now
        line = f"{PREFIX}{self.what}: {text}"
        self.stream.write("\r" + line + " " * max(0, self.width - len(line)))
        self.stream.flush()
        self.width = len(line)

    def open(self) -> Status:
        """The innermost line from now on (what `step` tells), until `close`."""
        _ACTIVE.append(self)
        return self

    def close(self) -> None:
        _ACTIVE.remove(self)
        if self.stream is not None and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()

    def __enter__(self) -> Status:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


# The open status lines, innermost last: a stage deep in the work (the extraction's, a download's
# bytes) is told to the line of whoever started the work, without handing the line down the calls.
_ACTIVE: list[Status] = []


def step(text: str, *, often: bool = False) -> None:
    """Tell the innermost open status line the step in progress; nothing when none is open."""
    if _ACTIVE:
        _ACTIVE[-1].step(text, often=often)
