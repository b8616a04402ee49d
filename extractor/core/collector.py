"""How often Python's cyclic garbage collector runs while the tool extracts: less than by default."""

from __future__ import annotations

import atexit
import gc

# libcst allocates millions of small objects that all stay alive until the end of an extraction; with
# the default thresholds the collector rescans that growing heap again and again (mypy tunes it too).
FEWER_COLLECTIONS = (100_000, 50, 100)


def collect_less_until_exit() -> None:
    """The thresholds of `products.extraction.fewer_collections`, for the rest of a short-lived process
    (a command, a pool worker).

    When an extraction restores the default thresholds, they set off a full collection at once over a
    heap that is still alive (a second or more on a release), and the interpreter makes another as it
    exits. Such a process needs neither: its heap lives until the end, and the end frees it all."""
    gc.set_threshold(*FEWER_COLLECTIONS)
    atexit.register(gc.freeze)  # run first at exit (registered last): nothing left for its collection to scan
