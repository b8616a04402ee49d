"""`extract`: rules.json, flags.json and the graph files of one source into OUTPUT/<label>/."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import EXIT_OK, EXIT_PARTIAL
from .source import add_source_arguments, jobs_of, run_extract


def add_parser(commands) -> None:
    parser = commands.add_parser("extract", help="extract rules.json and flags.json from one source")
    add_source_arguments(parser)
    parser.add_argument("-o", "--output", default="out", help="output root; files go to OUTPUT/<label>/")
    parser.add_argument("--keep-going", action="store_true", help="skip files that fail to parse (exit 3)")
    parser.add_argument("--no-cache", action="store_true",
                        help="walk every function again: reuse nothing an earlier extraction kept, keep nothing")
    parser.set_defaults(func=cmd_extract)


def cmd_extract(args: argparse.Namespace) -> int:
    from ..core.progress import Status
    from ..products.extraction.extraction import no_collections
    from ..products.extraction.output import encoded_documents, output_dir, require_writable, whole_folder, write_encoded

    require_writable(Path(args.output), "--output")
    with Status("extracting") as line:  # the stages on a terminal's status line
        ex = run_extract(args)
        folder = output_dir(Path(args.output), ex.info.label)
        line.step("writing and validating the documents")
        with no_collections():  # the parsed trees are still alive: a full collection would scan them all
            texts, counts = encoded_documents(ex, jobs_of(args))  # rules.json, flags.json, graph.json, .graphml, .dot
            with whole_folder(folder, owned=True) as made:  # rules.json and flags.json of one run, never mixed
                write_encoded(made, texts)
        if args.release and not args.no_cache and not args.include and not ex.problems:
            line.step("indexing the rules for check")
            _index_release(args)
    print(
        f"{ex.info.label}: {counts['rules']} rules ({counts['by_kind']['raise']} raise, {counts['by_kind']['assert']} assert, "
        f"{counts['by_kind']['adjustment']} adjustment; {counts['reachable']} reachable), {counts['flags']} flags, "
        f"{counts['unresolved_fields']} unresolved fields -> {folder}"
    )
    reused, walked = ex.reused
    if reused:  # what the nearest cached extraction spared (see README "Performance")
        print(f"{ex.info.label}: {reused} of {reused + walked} function walks reused from the cache"
              f"{', and the launch-order run over them' if ex.run_reused else ''}")
    for problem in ex.problems:
        print(f"error: {problem.file}:{problem.line}:{problem.column}: {problem.message}", file=sys.stderr)
    return EXIT_PARTIAL if ex.problems else EXIT_OK


def _index_release(args: argparse.Namespace) -> None:
    """The release's index for `check` and `explain`, made now from the documents just cached: their
    first use reads it instead of building it (best effort: without it, that first use builds it)."""
    from ..core.errors import DocumentError, SourceError
    from ..products.reuse.rulesets import release_rules

    try:
        release_rules(args.release, args.index_url)
    except (DocumentError, SourceError, OSError):
        pass
