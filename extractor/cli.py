"""The command line: the subcommands of `commands`, and every error turned into its exit code (see `core.errors`)."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
from collections.abc import Callable, Sequence

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


# The subcommands, by name, and the module of `commands` that adds each one's parser.
COMMANDS = {"extract": "extract", "render": "render", "check": "check", "explain": "explain", "graph": "graph",
            "diff": "diff", "history": "history", "flag-history": "flag_history", "site": "site", "schema": "schema"}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given the arguments, only the parser of the subcommand they name is
    built, its module alone imported: a check answered from the cache pays for no other command's
    options (a fifth of its time). Every one is built for the top-level help or a name no command has,
    so that argparse lists them."""
    parser = argparse.ArgumentParser(
        prog="sglang-constraints",
        description="Extract SGLang's server-argument constraints statically into JSON rules.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    named = _command_named(argv)
    for name, module in COMMANDS.items():
        if named is None or name == named:
            importlib.import_module(f".commands.{module}", __package__).add_parser(commands)
    return parser


def _command_named(argv: Sequence[str] | None) -> str | None:
    """The subcommand the arguments name (the first word after the top-level options), when it is one."""
    words = [word for word in (sys.argv[1:] if argv is None else argv) if word != "--debug"]
    return words[0] if words and words[0] in COMMANDS else None


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
    parser = build_parser(argv)
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
