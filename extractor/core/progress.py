"""Notes on long first runs (a release downloaded, its rules extracted), on a terminal only.

A first `check` of a release takes about 20 s; silent, it looks hung. Piped or captured output
(CI logs, `--format json`, tests) stays as it was: the notes go to stderr, and only to a terminal.
"""

from __future__ import annotations

import sys


def progress(text: str) -> None:
    stream = sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        print(f"sglang-constraints: {text}", file=stream, flush=True)
