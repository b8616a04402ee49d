"""`history`: follow the rules across releases or commits into history.json and timeline.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import EXIT_OK, EXIT_PARTIAL, SourceError, UsageError
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the history machinery is imported when a command runs: the CLI starts faster
    from ..products.history.sides import Spec


# ---- the command --------------------------------------------------------------------------------------


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "history", help="follow the rules across releases or commits",
        description="Extract every source (in parallel, cached by content) and write history.json and "
                    "timeline.md: each rule's first and last source and its changes step by step.")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="every release on the index")
    add_range_arguments(parser, which)
    parser.add_argument("-o", "--output", default="out/history", help="folder for history.json and timeline.md")
    parser.add_argument("--no-cache", action="store_true", help="extract and diff again even if seen before")
    parser.set_defaults(func=cmd_history)


def add_range_arguments(parser: argparse.ArgumentParser, which: argparse._MutuallyExclusiveGroup) -> None:
    """The sources of a history (`--releases`, `--revs` with `--git`) and how they are extracted; `site`
    takes them too."""
    which.add_argument("--releases", metavar="A..B|A,B,...", help="a range of releases on the index, or a list")
    which.add_argument("--revs", metavar="A..B", help="commits of --git from A to B that touch the read files")
    parser.add_argument("--git", metavar="REPO", help="a local SGLang clone (with --revs)")
    parser.add_argument("--pre", action="store_true", help="include pre-releases in a range or --all")
    parser.add_argument("--index-url", help="package index (default: $PIP_INDEX_URL or PyPI)")
    parser.add_argument("--include", action="append", metavar="GLOB", help="read these files instead of the layout's")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--compare", choices=("trigger", "condition"), default="trigger")


def range_specs(args: argparse.Namespace, releases: str | None = None) -> list[Spec]:
    """The sources the range arguments name (`releases` stands for --releases when given)."""
    from ..products.history.history import git_specs, release_specs

    if args.revs and not args.git:
        raise UsageError("--revs needs --git REPO")
    if args.git and not args.revs:
        raise UsageError("--git goes with --revs A..B")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.revs:
        return git_specs(args.git, args.revs, args.include)
    return release_specs(releases or args.releases, all_releases=getattr(args, "all", False), pre=args.pre,
                         index_url=args.index_url)


def cmd_history(args) -> int:
    from ..products.history.diff import counts
    from ..products.history.history import history_document, run_history, timeline_markdown
    from ..products.extraction.output import require_writable, whole_folder, write_documents

    require_writable(Path(args.output), "--output")
    specs = range_specs(args)
    history = run_history(specs, include=args.include, jobs=args.jobs, use_cache=not args.no_cache,
                          compare=args.compare)
    document = history_document(history, args.compare)
    if not document["sources"]:
        raise SourceError("no source could be extracted: " + "; ".join(e["message"] for e in document["errors"]))
    folder = Path(args.output)
    with whole_folder(folder) as made:
        write_documents(made, {
            "history.json": (document, "history.schema.json"),
            "timeline.md": ({"text": timeline_markdown(document)}, None),
        })
    totals = {k: n for k, n in counts(c for _, _, s in history.steps for c in s["changes"]).items() if n}
    print(f"{len(document['sources'])} sources, {len(document['steps'])} steps, "
          f"{len(document['rules'])} rule lineages; "
          + (", ".join(f"{n} {k}" for k, n in totals.items()) or "no changes") + f" -> {folder}")
    for error in document["errors"]:
        print(f"warning: {error['label']}: {error['message']}", file=sys.stderr)
    return EXIT_PARTIAL if document["errors"] else EXIT_OK

