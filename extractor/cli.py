"""The command line: thin argparse subcommands over the library, each returning an exit code (see `errors`)."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from typing import TYPE_CHECKING

from .core.errors import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_PARTIAL,
    DocumentError,
    LayoutError,
    ParseError,
    SourceError,
    UsageError,
)
from .sources.trees import SourceTree, git_tree, path_tree, release_tree

if TYPE_CHECKING:  # extract pulls in libcst: imported when a command extracts (history, diff, check on
    from .products.extraction import Extraction  # a rules.json or a warm cache never do)

def add_source_arguments(parser: argparse.ArgumentParser, positional: bool = True) -> None:
    if positional:
        parser.add_argument("path", nargs="?", help="a local SGLang checkout, unpacked package, folder or file")
    parser.add_argument("--release", help="an SGLang release on PyPI, e.g. 0.5.23")
    parser.add_argument("--git", metavar="REPO", help="a local SGLang git clone (with --rev)")
    parser.add_argument("--rev", help="a commit, tag or branch of --git")
    parser.add_argument("--index-url", help="package index (default: $PIP_INDEX_URL or PyPI)")
    parser.add_argument("--include", action="append", metavar="GLOB", help="read these files instead of the layout's")


def open_source(args: argparse.Namespace) -> SourceTree:
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
    from .products.extraction import extract

    return extract(open_source(args), include=args.include, keep_going=args.keep_going)


def cmd_extract(args: argparse.Namespace) -> int:
    from .products.output import extract_documents, output_dir, write_documents

    ex = run_extract(args)
    folder = output_dir(Path(args.output), ex.info.label)
    documents = extract_documents(ex)  # rules.json, flags.json, graph.json, graph.graphml, graph.dot
    write_documents(folder, documents)
    counts = documents["rules.json"][0]["summary"]
    print(
        f"{ex.info.label}: {counts['rules']} rules ({counts['by_kind']['raise']} raise, {counts['by_kind']['assert']} assert, "
        f"{counts['by_kind']['adjustment']} adjustment; {counts['reachable']} reachable), {counts['flags']} flags, "
        f"{counts['unresolved_fields']} unresolved fields -> {folder}"
    )
    for problem in ex.problems:
        print(f"error: {problem.file}:{problem.line}:{problem.column}: {problem.message}", file=sys.stderr)
    return EXIT_PARTIAL if ex.problems else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sglang-constraints",
        description="Extract SGLang's server-argument constraints statically into JSON rules.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)

    extract_parser = commands.add_parser("extract", help="extract rules.json and flags.json from one source")
    add_source_arguments(extract_parser)
    extract_parser.add_argument("-o", "--output", default="out", help="output root; files go to OUTPUT/<label>/")
    extract_parser.add_argument("--keep-going", action="store_true", help="skip files that fail to parse (exit 3)")
    extract_parser.set_defaults(func=cmd_extract)

    from . import check, diff, explain, graph, history, render  # their commands live with their logic

    render.add_parser(commands)
    check.add_parser(commands)
    explain.add_parser(commands)
    graph.add_parser(commands)
    diff.add_parser(commands)
    history.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_INPUT if exit_.code not in (0, None) else EXIT_OK
    handler: Callable[[argparse.Namespace], int] = args.func
    try:
        return handler(args)
    except UsageError as error:
        parser.print_usage(sys.stderr)
        print(f"sglang-constraints: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    except ParseError as error:
        print(f"sglang-constraints: error: {error} (--keep-going skips broken files)", file=sys.stderr)
        return EXIT_INPUT
    except (SourceError, LayoutError, DocumentError, FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:
        print(f"sglang-constraints: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("sglang-constraints: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug: say so in one line, full traceback with --debug
        if args.debug:
            traceback.print_exc()
        else:
            print(f"sglang-constraints: internal error: {error.__class__.__name__}: {error} (rerun with --debug)",
                  file=sys.stderr)
        return EXIT_INTERNAL
