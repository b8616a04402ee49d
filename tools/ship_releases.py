"""Write the rule sets shipped in the package (extractor/data/releases) for the releases named.

    python tools/ship_releases.py 0.5.22 0.5.23      # `make shipped-releases`

Each release is extracted as `extract --release` extracts it (through the extraction cache), and its
documents are written compressed. Releases shipped before and not named are removed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from extractor.products.reuse.cached import extract_documents
from extractor.products.reuse.shipped import shipped_releases, write_shipped
from extractor.sources.trees import release_tree

FOLDER = Path(__file__).resolve().parent.parent / "extractor" / "data" / "releases"


def main(versions: list[str]) -> int:
    if not versions:
        print("usage: ship_releases.py VERSION [VERSION ...]", file=sys.stderr)
        return 2
    FOLDER.mkdir(parents=True, exist_ok=True)
    for version in versions:
        rules, flags, _ = extract_documents(release_tree(version))
        for path in write_shipped(FOLDER, version, rules, flags):
            print(f"{path.relative_to(FOLDER.parent.parent.parent)}: {path.stat().st_size:,} bytes")
    for old in set(shipped_releases()) - set(versions):
        for path in FOLDER.glob(f"{old}.*.json.xz"):
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
