"""Exit codes and the tool's error types: raised by every layer, turned into an exit code by the CLI alone.

Exit codes: 0 success; 1 findings (diff found changes, check found a definite error, explain found
nothing); 2 usage or input error; 3 partial result (--keep-going skipped broken files); 4 internal error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import SourceProblem

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_PARTIAL, EXIT_INTERNAL = 0, 1, 2, 3, 4


class UsageError(Exception):
    """Bad arguments: a one-line message, exit code 2."""


class SourceError(Exception):
    """A user-facing, one-line error about an input (exit code 2 at the CLI)."""


class LayoutError(Exception):
    """No file to read (a one-line message for the user)."""


class ParseError(Exception):
    """A file that is not valid Python; carries a SourceProblem."""

    def __init__(self, problem: SourceProblem) -> None:
        super().__init__(f"{problem.file}:{problem.line}:{problem.column}: {problem.message}")
        self.problem = problem


class DocumentError(ValueError):
    """A rules.json or flags.json that cannot be read or is not one: which file and why, in one line."""


class InvalidDocument(Exception):
    """A document failed its schema: a bug in the extractor, never silently dropped."""


class GraphQueryError(Exception):
    """An unknown flag or rule asked of the graph: a one-line message, exit code 2."""
