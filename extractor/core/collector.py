"""How often Python's cyclic garbage collector runs while the tool extracts: less than by default."""

from __future__ import annotations

import atexit
import contextlib
import gc
from collections.abc import Iterator

# libcst allocates millions of small objects that all stay alive until the end of an extraction; with
# the default thresholds the collector rescans that growing heap again and again (mypy tunes it too).
FEWER_COLLECTIONS = (100_000, 50, 100)


def collect_less_until_exit() -> None:
    """Fewer, larger collections for the rest of a short-lived process (a command, a pool worker);
    none at all while it extracts (`products.extraction.no_collections`).

    When an extraction restores the default thresholds, they set off a full collection at once over a
    heap that is still alive (a second or more on a release), and the interpreter makes another as it
    exits. Such a process needs neither: its heap lives until the end, and the end frees it all."""
    gc.set_threshold(*FEWER_COLLECTIONS)
    atexit.register(gc.freeze)  # run first at exit (registered last): nothing left for its collection to scan


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Make objects that live as long as what holds them (a module's syntax tree, a bundle read from
    the cache) without the collector scanning them as young ones.

    No collection runs inside; at the end, every object the collector tracks moves to the oldest
    generation unscanned: `gc.freeze` moves them all to the permanent one and zeroes the youngest
    generation's count, `gc.unfreeze` moves them on to the oldest (objects an earlier `gc.freeze`
    left out of every collection go there too: with `FEWER_COLLECTIONS`, a run makes no full
    collection, the only kind that scans them). Left young, each batch of 100,000 would set off a
    collection that scans them all to find nothing (50 ms for one large module, 70 ms for a bundle).
    Garbage made inside is still freed by reference counting; only a cycle waits for a full collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()  # O(1): the generations' lists are spliced, not walked (`gc.get_freeze_count` walks)
        gc.unfreeze()
        if enabled:
            gc.enable()
