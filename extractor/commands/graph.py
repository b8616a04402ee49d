"""`graph`: the constraint graph around one flag or rule (or its figures) as text, DOT or JSON."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from typing import TYPE_CHECKING

from ..core.errors import EXIT_INPUT, EXIT_OK, DocumentError, GraphQueryError
from .source import add_source_arguments, run_extract

if TYPE_CHECKING:  # the records are read when a graph is asked for: other commands start without them
    from ..core.model import Flag, Rule


def load_rules_file(path: Path) -> tuple[list[Rule], list[Flag]]:
    """Rules from an existing rules.json (or a folder holding one) and flags from the flags.json beside it."""
    from ..core.serialize import read_rule_documents, records_of

    try:
        rules, flags = records_of(*read_rule_documents(path), where=str(path))
    except DocumentError as error:
        raise GraphQueryError(str(error)) from None
    return list(rules), list(flags)


def is_rules_file(path: str) -> bool:
    candidate = Path(path)
    return (candidate.is_file() and candidate.suffix == ".json") or (candidate.is_dir() and (candidate / "rules.json").is_file())


def query(rules: Sequence[Rule], flags: Sequence[Flag], flag: str | None, rule: str | None, fmt: str) -> str:
    """The `graph` command's answer: the neighbourhood of one flag or rule (or the whole graph) as text, DOT or JSON."""
    from ..products.extraction.exports import dot_text, node_link  # networkx is imported when a graph is asked for
    from ..products.extraction.graph import build_graph, describe, figures, find_flag, find_rule, neighbourhood
    from ..core.serialize import dumps

    graph = build_graph(rules, flags)
    if flag is None and rule is None:
        if fmt == "dot":
            return dot_text(graph)
        if fmt == "json":
            return dumps(node_link(graph))
        return dumps(figures(graph))
    center = find_flag(graph, flags, flag) if flag is not None else find_rule(graph, rule or "")
    if fmt == "dot":
        return dot_text(neighbourhood(graph, center), name=center)
    if fmt == "json":
        return dumps(node_link(neighbourhood(graph, center), {"center": center}))
    return describe(graph, center)


# --- the `graph` command --------------------------------------------------------------------------


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "graph", help="the constraint graph around one flag or rule",
        description="Print the rules, flags and related rules around one flag (--flag) or rule (--rule); "
                    "with neither, the graph figures. SOURCE is as for `extract`, or an existing rules.json "
                    "(flags.json beside it is read when present).")
    add_source_arguments(parser)
    parser.add_argument("--keep-going", action="store_true", help="skip files that fail to parse")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--flag", help="a flag, with or without dashes: disaggregation-mode, --flag=--tp-size")
    what.add_argument("--rule", metavar="ID", help="a rule id (or a unique prefix of at least 4 characters)")
    parser.add_argument("--format", choices=("text", "dot", "json"), default="text")
    parser.set_defaults(func=cmd_graph)


def cmd_graph(args: argparse.Namespace) -> int:
    try:
        if args.path and not args.release and not args.git and is_rules_file(args.path):
            rules, flags = load_rules_file(Path(args.path))
        else:
            ex = run_extract(args)
            rules, flags = list(ex.rules), list(ex.flags)
        sys.stdout.write(query(rules, flags, args.flag, args.rule, args.format))
    except GraphQueryError as error:
        print(f"sglang-constraints: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK
