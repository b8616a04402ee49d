"""`flag-history`: which releases accept each launch option, from every release's catalog."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.errors import EXIT_OK, EXIT_PARTIAL, SourceError, UsageError

DEFAULT_OUTPUT = "extractor/data/flag_history.json"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "flag-history", help="which releases accept each launch option",
        description="Read the argparse declarations of every release of a range (no rules: seconds per release) "
                    "and write which releases accept each option; `check` uses the shipped copy to tell a removed, "
                    "renamed or newer flag from a typo.")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--releases", metavar="A..B|A,B,...", help="a range of releases on the index, or a list")
    which.add_argument("--all", action="store_true", help="every release on the index")
    parser.add_argument("--index-url", help="package index (default: $PIP_INDEX_URL or PyPI)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (default: 2)")
    parser.add_argument("-o", "--output", default=DEFAULT_OUTPUT, help=f"the JSON file (default: {DEFAULT_OUTPUT})")
    parser.set_defaults(func=cmd_flag_history)


def _options_of(version: str, index_url: str | None) -> tuple[str, dict | None, str]:
    from ..products.extraction.flag_history import release_options
    from ..sources.trees import release_tree

    try:
        return version, release_options(release_tree(version, index_url=index_url)), ""
    except Exception as error:  # a release whose files or catalog cannot be read: skipped, and said so
        return version, None, f"{type(error).__name__}: {error}".splitlines()[0][:200]


def cmd_flag_history(args) -> int:
    # Imported when the command runs: the catalog needs libcst, which the other commands' start should not pay for.
    from ..products.extraction.flag_history import flag_history_document
    from ..products.history.history import release_specs
    from ..products.extraction.output import require_writable, write_documents
    from ..sources.trees import release_dates

    require_writable(Path(args.output), "--output", folder=False)

    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    versions = [spec.value for spec in release_specs(args.releases, all_releases=args.all, index_url=args.index_url)]
    found, skipped = [], []
    import concurrent.futures  # only when the history is built (every command's start pays for a top-level import)

    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for version, options, why in pool.map(_options_of, versions, [args.index_url] * len(versions)):
            if options:
                found.append((version, options))
            else:
                skipped.append((version, why or "no launch options found"))
                print(f"warning: {version}: {why or 'no launch options found'}", file=sys.stderr)
    if not found:
        raise SourceError("no release could be read")
    document = flag_history_document(found, skipped, release_dates(index_url=args.index_url))
    output = Path(args.output)
    write_documents(output.parent, {output.name: (document, "flag-history.schema.json")})
    print(f"{len(found)} releases ({found[0][0]}..{found[-1][0]}), {len(document['flags'])} options, "
          f"{len(skipped)} skipped -> {output}")
    return EXIT_PARTIAL if skipped else EXIT_OK
