"""`explain`: the rule behind a pasted error line, and its page, from a rules.json or the cached releases."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable

from ..core.errors import UsageError
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..products.reuse.answers import AnswerBook
    from ..products.site.explain import Candidate

SITE_URL_ENV = "SGLANG_CONSTRAINTS_SITE_URL"


# ---- command -------------------------------------------------------------------------------------------


def add_parser(commands) -> None:
    parser = commands.add_parser("explain", help="find the rule behind an error line and show its page",
                                 description="Paste an error line (log noise and `ValueError: ` are fine).")
    parser.add_argument("text", nargs="+", help="the error text (quote it, or pass several words)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--release", action="append",
                       help="look in this release (repeatable); default: the releases shipped with this tool "
                            "and those already in the cache")
    where.add_argument("--rules", help="look in this rules.json")
    parser.add_argument("--index-url", help="package index for --release")
    parser.add_argument("--full", action="store_true",
                        help="the whole page (its source, full condition and related errors) and every match")
    parser.add_argument("--site-url", default=os.environ.get(SITE_URL_ENV),
                        help=f"the docs site `site` built, to print the page's address (default: ${SITE_URL_ENV})")
    parser.add_argument("--fresh", action="store_true",
                        help="match the text again: do not answer from what an earlier explain of it on the same "
                             "rule sets, code and options found (that answer is replaced)")
    parser.set_defaults(func=cmd_explain)


def _releases(args: argparse.Namespace) -> list[str]:
    """The releases to look in: those given, else those shipped with the tool and those the cache holds
    already (a stated set: nothing is downloaded), newest first."""
    releases = args.release or _known_releases()
    if not releases:
        raise UsageError("no release shipped or in the cache: pass --release VERSION or --rules FILE")
    return releases


def _known_releases() -> list[str]:
    """Those shipped and those the cache holds, newest first (versions sorted only here: packaging's
    import is no cost of an explain of given releases)."""
    from packaging.version import Version

    from ..core.places import cached_releases
    from ..products.reuse.shipped import shipped_releases

    return sorted(set(shipped_releases()) | set(cached_releases()), key=Version, reverse=True)


def _rule_sets(args: argparse.Namespace, releases: list[str]) -> Iterable[tuple[str, object]]:
    # Imported when explain runs, so that the other commands do not start with them.
    from ..products.reuse.rulesets import load_rules, release_rules

    if args.rules:
        ruleset = load_rules(args.rules)
        return [(ruleset.label, ruleset)]
    return [(version, release_rules(version, args.index_url)) for version in releases]


def _answer_book(args: argparse.Namespace, width: int, releases: list[str],
                 keys: list[str | None] | None = None) -> AnswerBook | None:
    """Where the answers to pasted texts are kept for these rule sets (`keys`: their index keys, else
    read from their notes), code and options; None when a rule set has no index (or no note yet)."""
    import hashlib
    from pathlib import Path

    from ..core.cache import code_fingerprint
    from ..products.reuse.answers import answer_book
    from ..products.reuse.keys import noted_index_key, rules_index_key

    if keys is None:
        keys = [rules_index_key(args.rules)] if args.rules else \
            [noted_index_key(version, args.index_url) for version in releases]
    if not keys or None in keys:
        return None
    return answer_book([
        f"rules {keys}",
        "code " + code_fingerprint("products.site.explain", "products.site.pages", "products.site.terminal",
                                   "products.check.fixes", "products.check.words", "products.reuse.index",
                                   "products.reuse.rulesets", "products.reuse.examples"),
        "command " + hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
        f"options {[args.full, args.site_url, width]}",
    ])


def cmd_explain(args: argparse.Namespace) -> int:
    text = " ".join(args.text)
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():  # before any release is loaded: nothing to look for
        raise UsageError("explain: give the error text (a message, a log line or a traceback), or - to read it from stdin")
    import shutil  # here: the other commands start without it

    width = min(shutil.get_terminal_size((100, 40)).columns, 100)
    # A text explained before on the same rule sets, code and options: its answer, no rule set read.
    releases = [] if args.rules else _releases(args)
    book = _answer_book(args, width, releases)
    kept = book.get((text,)) if book is not None and not args.fresh else None
    if kept is not None:
        sys.stdout.write(kept.shown)  # type: ignore[arg-type]
        return kept.code
    from ..products.reuse.examples import kept_example_fix
    from ..products.reuse.index import with_baseline_on
    from ..logic.messages import known_message, other_words
    from ..products.site.explain import explain_text
    from ..products.check.fixes import example_fix
    from ..products.check.words import Flags, by_function
    from ..products.site.pages import page
    from ..products.site.terminal import terminal_page

    loaded = list(_rule_sets(args, releases))
    by_label = {label: ruleset for label, ruleset in loaded}
    if book is None:  # the first use of a release noted its index: its answers are kept from now on
        book = _answer_book(args, width, releases, [ruleset.__dict__.get("index_key") for _, ruleset in loaded])

    def show(c: Candidate) -> str:
        # The page the site shows, its solutions checked on its example as `render` and `site` check them
        # (evaluated from the bare launch as those evaluate it, kept beside the rule set's index).
        ruleset = by_label[c.label]
        flags, groups = Flags(ruleset.flags), by_function(ruleset.rules)

        def work_out() -> list:
            with_baseline_on(ruleset, None, None, without_facts=True)
            return example_fix(ruleset, c.rule, flags, groups)

        # (kept beside the index by rule: what the text pasted is does not change them)
        fixes = kept_example_fix(ruleset, c.rule, work_out) if c.rule.example is not None else None
        markdown = page(c.rule, flags, ruleset.source, {r.id: r for r in ruleset.rules}, fixes=fixes, filled=c.values,
                        other_words=other_words(ruleset.helpers.config_loader).get(known_message(c.rule), ()))
        url = f"{args.site_url.rstrip('/')}/errors/{c.rule.id}.html" if args.site_url else None
        return terminal_page(markdown, full=args.full, width=width, url=url)

    answer, code = explain_text(text, [(label, rs.rules, other_words(rs.helpers.config_loader)) for label, rs in loaded],
                                show, full=args.full)
    if book is not None:
        from ..products.reuse.answers import Answer

        book.add((text,), Answer(code, answer))
        book.save()
    sys.stdout.write(answer)
    return code
