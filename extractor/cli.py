"""The command line: the subcommands of `commands`, and every error turned into its exit code (see `core.errors`)."""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from collections.abc import Callable, Sequence

from .commands import check, diff, explain, extract, flag_history, graph, history, render, schema, site
from .core.errors import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    DocumentError,
    LayoutError,
    ParseError,
    SourceError,
    UsageError,
)
from .core.cache import start_process

# OSErrors that say the machine refuses a write (full disk, read-only or forbidden folder, file too big).
_ENVIRONMENT_ERRORS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sglang-constraints",
        description="Extract SGLang's server-argument constraints statically into JSON rules.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in (extract, render, check, explain, graph, diff, history, flag_history, site, schema):
        command.add_parser(commands)
    return parser


class Terminated(BaseException):
    """SIGTERM (a CI timeout, `kill`), raised where the process is so that `with` blocks and `finally`
    clauses clean up as for Ctrl-C: outputs made aside are dropped, readers stopped."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def run() -> int:
    """The installed command (and `python -m extractor`): `main` in a process of its own."""
    start_process()
    signal.signal(signal.SIGTERM, _terminate)
    # A launch argument that is no UTF-8 (a path's raw bytes) reaches `main` as surrogate escapes;
    # what echoes it (check's JSON, explain's text) writes those bytes back as given, not an error.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="surrogateescape")
    return main()


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
        print(f"sglang-constraints: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    except ParseError as error:
        print(f"sglang-constraints: error: {error} (--keep-going skips broken files)", file=sys.stderr)
        return EXIT_INPUT
    except (SourceError, LayoutError, DocumentError, FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:
        print(f"sglang-constraints: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        # `check ... | head`: the reader has all it wants. Not an error; say nothing more, and keep
        # Python from complaining when it flushes stdout at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout is no file (captured): nothing will be flushed to a pipe
            pass
        return EXIT_OK
    except KeyboardInterrupt:
        print("sglang-constraints: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("sglang-constraints: terminated", file=sys.stderr)
        return 143
    except OSError as error:
        if error.errno not in _ENVIRONMENT_ERRORS:
            return _internal(error, args.debug)
        # A full disk, a read-only or forbidden folder met while writing: the machine's, not a bug.
        where = f"{error.filename}: " if error.filename else ""
        print(f"sglang-constraints: error: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as error:  # a bug: say so in one line, full traceback with --debug
        return _internal(error, args.debug)


def _internal(error: BaseException, debug: bool) -> int:
    if debug:
        import traceback  # here: only a bug shown whole needs it (6 ms of every start)

        traceback.print_exc()
    else:
        print(f"sglang-constraints: internal error: {error.__class__.__name__}: {error} (rerun with --debug)",
              file=sys.stderr)
    return EXIT_INTERNAL
