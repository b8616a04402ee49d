"""What `check` answered each launch line (and `explain` each pasted error), kept by everything the
answer depends on: a line checked again (an editor saving its file, a pre-commit hook, CI over
unchanged scripts) is answered without reading the rule set's index or evaluating anything.

A check's answer depends on the rule set (its index key), the code that checks and words it, the
options of the check (output format, platform and model facts, environment, assumptions) and the
line's own words; on nothing else when no word of the line names a file or folder of this machine. A
model folder's config.json or a `--config` file would be read, so such a line is evaluated every time.
The answers of one rule set, code and options are a folder of the cache (`AnswerBook`), a small
file per line, written when the line is first checked.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from ...core.cache import extraction_cache, prune_cache, read_pickled, write_bytes
from ...logic.launch_words import split_command
from ...logic.hub_cache import hub_repo_folder

ANSWERS_FORMAT = "1"  # bumped when what an answer holds changes
# Answers are files of the cache, pruned with the rest to its size limit: once every so many bytes of
# answers written (a count kept beside them), not on every check (a scan of the whole cache).
PRUNE_EVERY = 64 << 20


class Answer(NamedTuple):
    """What a command reports of one launch line or error text."""

    code: int  # the exit code it gives (check: 1 for a definite or an argument error)
    shown: object  # what is printed of it: the text, the JSON document, or (title, message) annotations


class AnswerBook:
    """The answers kept for one rule set, code and options: a folder of the cache, a file per line (a
    line's JSON report is hundreds of kilobytes: a check reads the answers of its own lines alone)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.added: dict[tuple[str, ...], Answer] = {}

    def get(self, argv: Sequence[str]) -> Answer | None:
        path = self._path(argv)
        kept = read_pickled(path) if path.is_file() else None
        return kept if isinstance(kept, Answer) else None

    def add(self, argv: Sequence[str], answer: Answer) -> None:
        self.added[tuple(argv)] = answer

    def save(self) -> None:
        """Write what this run added, each answer atomically (best effort: a line whose answer is not
        written is evaluated again next time)."""
        written = 0
        for argv, answer in self.added.items():
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
            write_bytes(self._path(argv), data)
            written += len(data)
        self.added = {}
        if written and _written_since_pruning(self.folder.parent, written) >= PRUNE_EVERY:
            prune_cache()
            _written_since_pruning(self.folder.parent, 0, reset=True)

    def _path(self, argv: Sequence[str]) -> Path:
        return self.folder / f"{_digest(argv)}.pickle"


def answers_folder() -> Path:
    return extraction_cache() / "answers"


def answer_book(context: Iterable[str], folder: Path | None = None) -> AnswerBook:
    """The book of the answers given in `context`: strings naming the rule set, the code and the options
    (any change of them names another book)."""
    return AnswerBook((folder or answers_folder()) / _digest([ANSWERS_FORMAT, *context]))


def reads_only_its_words(argv: Sequence[str], env: Mapping[str, str] | None = None) -> bool:
    """Whether a launch line's answer depends on its words alone: none of its launch arguments (nor the
    value of an `--option=value`, nor of an env assignment), a pasted text read as a shell reads it,
    names a file or folder that exists here, as a model folder or a `--config` file does, nor a Hub id
    that the Hugging Face cache here holds (found where `env`, else this process's environment, says).
    A word that happens to name one only costs an evaluation. A `--config` file never: one missing
    here may be there on the next run."""
    tokens, assigned = split_command(list(argv))
    if "--config" in tokens:
        return False
    environment = {**(os.environ if env is None else env), **assigned}
    for word in [*tokens, *assigned.values()]:
        for part in (word, word.partition("=")[2]):
            if part and os.path.lexists(os.path.expanduser(part)):
                return False
            if part and (repo := hub_repo_folder(part, environment)) is not None and repo.is_dir():
                return False
    return True


def _written_since_pruning(folder: Path, written: int, reset: bool = False) -> int:
    """Bytes of answers written since the cache was last pruned, `written` more counted (best effort:
    a count lost to a race or a read-only cache only moves the next pruning)."""
    path = folder / "written-since-pruning"
    try:
        total = 0 if reset else int(path.read_text(encoding="ascii") or 0)
    except (OSError, ValueError):
        total = 0
    total += written
    try:
        path.write_text(str(total), encoding="ascii")
    except OSError:
        pass
    return total


def _digest(words: Iterable[str]) -> str:
    return hashlib.sha256("\0".join(words).encode("utf-8", "surrogatepass")).hexdigest()[:40]  # argv may hold undecodable bytes
