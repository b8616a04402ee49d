"""Benchmark: the witness stage of one release cold, and with the memo of an earlier run over the same
rules or over the rules of a next commit (a reworded message, a changed guard, a guard added or removed).

Run with `.venv/bin/python bench/witness_memo.py [RELEASE]` (0.5.23 by default). CPU seconds of
`attach_witnesses` as `extraction._extract` calls it, median of BENCH_REPEATS runs (3), each with the
memo read back from its pickle; each warm result is compared with the cold one. Nothing is asserted.
"""

from __future__ import annotations

import os
import pickle
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractor.products.extraction.extraction import extract  # noqa: E402
from extractor.products.extraction.witness import attach_witnesses  # noqa: E402
from extractor.sources.trees import release_tree  # noqa: E402
from tests.witness_variants import Variant, stripped, variants  # noqa: E402

REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))


def main() -> int:
    release = sys.argv[1] if len(sys.argv) > 1 else "0.5.23"
    tree = release_tree(release)
    ex = extract(tree)
    rules, flags, resolution = stripped(ex.rules), ex.flags, ex.resolution

    def stage(variant: Variant, memo: bytes | None) -> tuple[float, list]:
        """Median CPU seconds of the stage, and its rules (the last run's)."""
        times, found = [], []
        for _ in range(REPEATS):
            kept = pickle.loads(memo) if memo is not None else None
            start = time.process_time()
            found = attach_witnesses(variant.rules, flags, tree, variant.resolution, kept)
            times.append(time.process_time() - start)
        return statistics.median(times), found

    base = Variant("same rules", rules, resolution)
    cold, expected = stage(base, None)
    memo: dict = {}
    start = time.process_time()
    attach_witnesses(rules, flags, tree, resolution, memo)
    filling = time.process_time() - start
    blob = pickle.dumps(memo, protocol=pickle.HIGHEST_PROTOCOL)
    verdicts = sum(len(v) for v in memo["witness.verdicts"].values())
    print(f"{release}: {len(rules)} rules, {sum(1 for r in expected if r.example)} witnesses")
    print(f"memo: {len(blob):,} bytes pickled ({verdicts:,} verdicts over {len(memo['witness.verdicts'])} command lines)")
    print(f"{'rules':<22} {'cold s':>8} {'memo s':>8} {'ratio':>6}  same")
    print(f"{'(filling a memo)':<22} {cold:8.2f} {filling:8.2f} {filling / cold:6.2f}  -")
    for variant in [base, *variants(rules, resolution, {r.id: r.example for r in ex.rules})]:
        variant_cold, wanted = (cold, expected) if variant is base else stage(variant, None)
        warm, found = stage(variant, blob)
        print(f"{variant.name:<22} {variant_cold:8.2f} {warm:8.2f} {warm / variant_cold:6.2f}  {found == wanted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
