"""`site`: a docs site (MkDocs, Material) of every error across releases or commits, optionally built."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from ..core.errors import EXIT_INTERNAL, EXIT_OK, EXIT_PARTIAL, SourceError, UsageError
from .history import add_range_arguments, range_specs
from .links import add_link_arguments, page_links


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "site", help="write a docs site (MkDocs Material) of every error across releases",
        description="Extract every source like `history` (in parallel, cached), then write a MkDocs project: "
                    "mkdocs.yml and docs/ with a page per error, flag and release, a home page, and JSON under "
                    "docs/api/. --build runs `mkdocs build --strict` into public/ (needs the `site` extra).")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--release", metavar="VERSION", help="one release")
    add_range_arguments(parser, which)
    add_link_arguments(parser)
    parser.add_argument("-o", "--output", default="site", help="folder of the MkDocs project")
    parser.add_argument("--build", action="store_true", help="then run `mkdocs build --strict` into OUTPUT/public")
    parser.set_defaults(func=cmd_site)


def cmd_site(args: argparse.Namespace) -> int:
    from ..core.cache import extraction_cache
    from ..products.reuse.cached import load_cached
    from ..products.history.history import run_history
    from ..products.extraction.output import require_writable
    from ..products.site.site import history_site, write_site

    require_writable(Path(args.output), "--output")
    source_url, report_url = page_links(args)
    if args.build:
        require_mkdocs()  # before the long part
    specs = range_specs(args, args.release)
    history = run_history(specs, include=args.include, jobs=args.jobs, compare=args.compare)
    errors = [s for s in history.sources if s.error is not None]
    if len(errors) == len(history.sources):
        raise SourceError("no source could be extracted: " + "; ".join(str(s.error) for s in errors))
    folder = extraction_cache()

    def documents(key: str) -> tuple[dict, dict]:
        found = load_cached(key, folder)
        if found is None:
            raise SourceError(f"extraction {key[:12]} is missing from the cache {folder}")
        return found

    files = history_site(history, documents, args.compare, source_url, report_url)
    output = Path(args.output)
    written = write_site(output, files)
    pages = sum(name.endswith(".md") for name in files)
    print(f"{len(history.sources) - len(errors)} sources, {pages} pages, {written - pages} other files -> {output}")
    for source in errors:
        print(f"warning: {source.spec.value}: {source.error}", file=sys.stderr)
    if args.build:
        code = build(output)
        if code != EXIT_OK:
            return code
        print(f"built -> {output / 'public'}")
    return EXIT_PARTIAL if errors else EXIT_OK


def require_mkdocs() -> None:
    missing = [name for name in ("mkdocs", "material") if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(f"--build needs {' and '.join(missing)}: pip install 'sglang-constraints[site]'")


def build(folder: Path) -> int:
    """`mkdocs build --strict` of the project in `folder`, with this interpreter; its output shown only
    when it fails. The site is built beside `public/` and swapped in whole: an interrupted or failed
    build leaves the previous one."""
    import subprocess

    from ..core.progress import Status
    from ..products.extraction.output import folder_made_aside
    from ..products.site.site import PUBLIC

    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice about MkDocs 2 is not ours to show
    try:
        with folder_made_aside(folder / PUBLIC) as made, Status("site") as line:
            line.step(f"building {folder / PUBLIC} with MkDocs (mkdocs build --strict)")
            done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                                   "--config-file", str(folder / "mkdocs.yml"), "--site-dir", str(made)],
                                  env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise _BuildFailed(done)
    except _BuildFailed as failed:
        lines = [line for line in (failed.done.stderr + failed.done.stdout).splitlines() if line.strip()]
        sys.stderr.write("\n".join(lines[-20:]) + "\n")
        print(f"sglang-constraints: error: mkdocs build failed (exit {failed.done.returncode})", file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK


class _BuildFailed(Exception):
    def __init__(self, done) -> None:  # a subprocess.CompletedProcess
        super().__init__(done.returncode)
        self.done = done
