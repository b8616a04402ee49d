"""A pasted command line read as a POSIX shell reads it: words, quotes, operators, redirections.

People paste what they run: `nohup python -m sglang.launch_server ... > server.log 2>&1 &`,
`cd /srv && python -m ...`, `... | tee log`, continued lines with comments between them. The
launch arguments are the words of the one simple command that runs SGLang's launcher, without its
redirections (`>`, `2>&1`, `<<<`), whatever surrounds it. `shlex` does not split `30001>log` at the
operator, nor keep `$(cat f)` as one word, hence this small reader; it never runs anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Longest first: `>>` before `>`, `&&` before `&`.
_OPERATORS = ("<<<", "&>>", "<<-", "&&", "||", "|&", ";;", ">>", ">&", "<&", ">|", "<>", "<<", "&>",
              "|", "&", ";", "<", ">", "(", ")")
_REDIRECTIONS = frozenset({"<<<", "&>>", "<<-", ">>", ">&", "<&", ">|", "<>", "<<", "&>", "<", ">"})
_SEPARATORS = frozenset({"&&", "||", "|&", ";;", "|", "&", ";", "(", ")"})
_CONTINUED_COMMENT = re.compile(r"\\\s+#[^'\"]*$")


class Operator(str):
    """A shell operator (`|`, `&&`, `2>`), told apart from a quoted word that spells the same."""

    __slots__ = ()

    @property
    def redirects(self) -> bool:
        return self.lstrip("0123456789") in _REDIRECTIONS


def joined_lines(text: str) -> str:
    """The text with continued lines joined (`\\` at the end, also before a `# comment`, where people
    put them) and comment lines between continued lines dropped; other line ends stay."""
    out: list[str] = []
    continued = False
    for line in text.splitlines():
        stripped = _CONTINUED_COMMENT.sub("\\\\", line.rstrip())
        if continued and stripped.lstrip().startswith("#"):
            continue  # a comment line between continued lines
        if stripped.endswith("\\"):
            out.append(stripped[:-1] + " ")
            continued = True
        else:
            out.append(stripped + "\n")
            continued = False
    return "".join(out)


def shell_words(text: str) -> list[str]:
    """Words and operators (as `Operator`) of a pasted text; a line end is a `;`. ValueError on an
    unterminated quote or substitution."""
    return list(_tokens(joined_lines(text).rstrip("\n")))


def _tokens(text: str) -> Iterator[str]:  # noqa: C901 - one case per character class, as a shell reads
    i, n = 0, len(text)
    word: list[str] = []
    in_word = False  # a word started, even if empty so far (`''`)

    def flush() -> Iterator[str]:
        nonlocal in_word
        if in_word:
            yield "".join(word)
        word.clear()
        in_word = False

    while i < n:
        c = text[i]
        if c == "\n":
            yield from flush()
            yield Operator(";")
            i += 1
        elif c in " \t\r":
            yield from flush()
            i += 1
        elif c == "#" and not in_word:
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == "\\":
            if i + 1 < n:
                word.append(text[i + 1])
            in_word = True
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError("unterminated quote")
            word.append(text[i + 1:end])
            in_word = True
            i = end + 1
        elif c == '"':
            i = _double_quoted(text, i + 1, word)
            in_word = True
        elif c == "$" and text.startswith("$(", i) or c == "`":
            end = _substitution_end(text, i)
            word.append(text[i:end])  # kept as written: a placeholder whose value the shell computes
            in_word = True
            i = end
        elif c in "|&;<>()":
            op = next(o for o in _OPERATORS if text.startswith(o, i))
            if op in _REDIRECTIONS and in_word and "".join(word).isdigit():
                op = "".join(word) + op  # `2>`: a file descriptor, no word of its own
                word.clear()
                in_word = False
            yield from flush()
            yield Operator(op)
            i += len(op) if not op[0].isdigit() else len(op.lstrip("0123456789"))
        else:
            word.append(c)
            in_word = True
            i += 1
    yield from flush()


def _double_quoted(text: str, i: int, word: list[str]) -> int:
    """Reads a "..." body from i into word; the index after the closing quote."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
            word.append(text[i + 1])
            i += 2
        elif c == "$" and text.startswith("$(", i) or c == "`":
            end = _substitution_end(text, i)
            word.append(text[i:end])
            i = end
        else:
            word.append(c)
            i += 1
    raise ValueError("unterminated quote")


def _substitution_end(text: str, i: int) -> int:
    """The index after a `$(...)` (nested, quotes inside) or a `` `...` `` starting at i."""
    if text[i] == "`":
        end = text.find("`", i + 1)
        if end < 0:
            raise ValueError("unterminated substitution")
        return end + 1
    depth, j, n = 0, i + 1, len(text)
    while j < n:
        c = text[j]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        elif c == "'":
            j = text.find("'", j + 1)
            if j < 0:
                break
        elif c == '"':
            j = _double_quoted(text, j + 1, []) - 1
        j += 1
    raise ValueError("unterminated substitution")


def simple_commands(words: list[str]) -> list[list[str]]:
    """The simple commands of a word list: split at `;`, `&&`, `||`, `|`, `&` and parentheses, each
    without its redirections (the operator and the word it names)."""
    commands: list[list[str]] = [[]]
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            if not isinstance(word, Operator):
                continue
        if isinstance(word, Operator):
            if word.redirects:
                skip_next = True  # `> server.log`, `2>&1` (`>&` then `1`), `<<< text`
            elif word in _SEPARATORS:
                commands.append([])
            continue
        commands[-1].append(word)
    return [c for c in commands if c]
