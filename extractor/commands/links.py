"""The links a docs page carries (`--source-url`, `--report-url`), as `render` and `site` take them."""

from __future__ import annotations

import argparse

from ..core.errors import UsageError


def add_link_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source-url", default=None,
                        help="link template with {commit}, {path}, {line} (default: GitHub, pinned)")
    parser.add_argument("--report-url", default=None, metavar="URL",
                        help="repository whose issues take reports of a wrong page (a 'Report a problem' link on "
                             "each page; default: this project's; 'none' for no link)")


def page_links(args: argparse.Namespace) -> tuple[str, str | None]:
    """The source link template (checked before any work) and the report repository (None: no link)."""
    from ..products.site.pages import DEFAULT_REPORT_URL, DEFAULT_SOURCE_URL  # imported when pages are written

    source_url = args.source_url or DEFAULT_SOURCE_URL
    try:
        source_url.format(commit="c", path="p", line=1, end_line=1)
    except (KeyError, IndexError, ValueError) as error:
        raise UsageError(f"--source-url: bad template ({error})") from None
    return source_url, None if args.report_url == "none" else args.report_url or DEFAULT_REPORT_URL
