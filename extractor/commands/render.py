"""`render`: the docs pages of a source (extracted like `extract`) or of a rules.json."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.errors import EXIT_OK
from .links import add_link_arguments, page_links
from .source import add_source_arguments, jobs_of, open_source


def add_parser(commands) -> None:
    parser = commands.add_parser("render", help="write one Markdown page per rule and an index",
                                 description="Docs pages from a source (like extract) or a rules.json.")
    add_source_arguments(parser)
    parser.add_argument("-o", "--output", default="docs", help="folder for the pages")
    add_link_arguments(parser)
    parser.add_argument("--keep-going", action="store_true", help="skip files that fail to parse")
    parser.set_defaults(func=cmd_render)


def cmd_render(args: argparse.Namespace) -> int:
    from ..products.extraction.extraction import extract
    from ..products.check.fixes import example_fixes
    from ..products.check.words import by_function
    from ..products.site.pages import render_site  # imported when pages are written
    from ..logic.messages import other_words
    from ..products.reuse.rulesets import load_rules, ruleset_of
    from ..products.extraction.output import require_writable, whole_folder
    from ..products.extraction.typical_launches import typical_launches
    from ..products.check.words import Flags

    require_writable(Path(args.output), "--output")
    source_url, report_url = page_links(args)
    if args.path and args.path.endswith(".json") and not (args.release or args.git):
        ruleset = load_rules(args.path)
    else:
        jobs = jobs_of(args)
        with open_source(args) as tree:  # its environ.py gives env defaults, as the witnesses were checked with
            ruleset = ruleset_of(extract(tree, include=args.include, keep_going=args.keep_going, jobs=jobs), tree)
    rules, flag_list, source = ruleset.rules, ruleset.flags, ruleset.source
    # Each page's solutions checked on its example command line, as `check` checks its fixes.
    checked = example_fixes(ruleset, Flags(flag_list), by_function(rules))
    typical = typical_launches(ruleset, Flags(flag_list), by_function(rules))
    with whole_folder(Path(args.output)) as made:
        written = render_site(rules, flag_list, source, made, source_url, checked_fixes=checked,
                              report_url=report_url, typical=typical,
                              other_words=other_words(ruleset.helpers.config_loader))
    print(f"{len(rules)} pages and index.md -> {args.output} ({len(written)} files)")
    return EXIT_OK
