"""The source an extracting command names (PATH, --release, --git --rev, --include), opened or extracted."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..core.errors import UsageError

if TYPE_CHECKING:  # extract pulls in libcst: imported when a command extracts (history, diff, check on
    from ..products.extraction.extraction import Extraction  # a rules.json or a warm cache never do)
    from ..sources.trees import SourceTree  # the sources, when a command opens one


def add_source_arguments(parser: argparse.ArgumentParser, positional: bool = True) -> None:
    if positional:
        parser.add_argument("path", nargs="?", help="a local SGLang checkout, unpacked package, folder or file")
    parser.add_argument("--release", help="an SGLang release on PyPI, e.g. 0.5.23")
    parser.add_argument("--git", metavar="REPO", help="a local SGLang git clone (with --rev)")
    parser.add_argument("--rev", help="a commit, tag or branch of --git")
    parser.add_argument("--index-url", help="package index (default: $PIP_INDEX_URL or PyPI)")
    parser.add_argument("--include", action="append", metavar="GLOB", help="read these files instead of the layout's")
    parser.add_argument("-j", "--jobs", type=int, default=None,
                        help="processes the extraction may use (default: every core; the result is the same)")


def jobs_of(args: argparse.Namespace) -> int:
    """The processes an extraction may use: `--jobs`, else every core."""
    from ..core.parallel import default_jobs

    jobs = getattr(args, "jobs", None)
    if jobs is None:
        return default_jobs()
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    return jobs


def open_source(args: argparse.Namespace) -> SourceTree:
    from ..sources.trees import git_tree, path_tree, release_tree

    chosen = [name for name in ("path", "release", "git") if getattr(args, name, None)]
    if len(chosen) != 1:
        raise UsageError("give exactly one source: PATH, --release VERSION or --git REPO --rev REV")
    if args.release:
        return release_tree(args.release, index_url=args.index_url)
    if args.git:
        if not args.rev:
            raise UsageError("--git needs --rev")
        return git_tree(args.git, args.rev)
    return path_tree(args.path)


def run_extract(args: argparse.Namespace) -> Extraction:
    """Extract the source the arguments name, reusing what the nearest cached extraction kept (and
    keeping this one's) unless `--no-cache`: the same result either way."""
    jobs = jobs_of(args)  # a bad --jobs is told before a release is fetched
    if getattr(args, "no_cache", False):
        from ..products.extraction.extraction import extract

        with open_source(args) as tree:
            return extract(tree, include=args.include, keep_going=args.keep_going, jobs=jobs)
    from ..products.reuse.kept_walks import extract_reusing

    with open_source(args) as tree:
        ex = extract_reusing(tree, args.include, args.keep_going, jobs=jobs)
    from ..core.cache import prune_cache

    prune_cache()
    return ex
