"""`diff`: the changes of rules and flags between two sources; exit 1 when a change of the --fail-on kinds is found."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..products.history.kinds import KINDS


# ---- the command -----------------------------------------------------------------------------------


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "diff", help="changes of rules and flags between two sources",
        description="Compare the rules and flags of two sources. Exit 0: no change of the --fail-on kinds; "
                    "1: changes found; 2: usage or input error.")
    add_arguments(parser)
    parser.set_defaults(func=run_diff)


def add_arguments(parser) -> None:
    parser.add_argument("old", help="release (0.5.18), git rev (with --git), local path, or rules.json")
    parser.add_argument("new", help="the same kinds of source, compared with OLD")
    parser.add_argument("--git", metavar="REPO", help="a local SGLang clone for revisions")
    parser.add_argument("--index-url", help="package index (default: $PIP_INDEX_URL or PyPI)")
    parser.add_argument("--include", action="append", metavar="GLOB", help="read these files instead of the layout's")
    parser.add_argument("--format", choices=("text", "json", "md"), default="text")
    parser.add_argument("--fail-on", default="all", metavar="KINDS",
                        help=f"comma list of change kinds that make the exit code 1 (default: all): {', '.join(KINDS)}")
    parser.add_argument("--compare", choices=("trigger", "condition"), default="trigger",
                        help="compare whole-program triggers (default) or in-function conditions")
    parser.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    parser.add_argument("--no-cache", action="store_true", help="extract again even if the inputs were seen")


def run_diff(args) -> int:
    """The `diff` command: 0 no change of the selected kinds, 1 changes found (2 is raised as errors)."""
    # Imported when a diff runs: the sources and the cache are not what other commands start with.
    from ..core.cache import write_pickled
    from ..products.history.diff import Memo, diff_document, find_changes, known_memo, memo_path, parse_kinds, render_markdown
    from ..products.history.diff import render_text
    from ..products.extraction.output import require_writable, validate, write_atomic
    from ..products.history.sides import load_side, resolve_spec

    if args.output:
        require_writable(Path(args.output), "--output", folder=False)

    try:
        selected = parse_kinds(args.fail_on)
    except ValueError as error:
        raise UsageError(str(error)) from None
    specs = [resolve_spec(text, args.git, args.index_url) for text in (args.old, args.new)]
    (old, old_key), (new, new_key) = (load_side(spec, args.include, use_cache=not args.no_cache) for spec in specs)
    # Two cached extractions diffed before: the matching and the solver's verdicts are read back.
    path = memo_path(old_key, new_key, args.compare) if old_key and new_key else None
    memo = known_memo(path) if path else Memo()
    import copy  # here: the other commands start without it

    known = copy.deepcopy(memo)
    changes = list(find_changes(old, new, args.compare, memo))
    if path and memo != known:
        write_pickled(path, memo)
    if args.format == "json":
        document = diff_document(old, new, changes, args.compare)
        validate(document, "diff.schema.json")
        from ..core.serialize import dumps

        text = dumps(document)
    elif args.format == "md":
        text = render_markdown(old, new, changes)
    else:
        text = render_text(old, new, changes)
    if args.output:
        write_atomic(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return EXIT_FINDINGS if any(c.kind in selected for c in changes) else EXIT_OK
