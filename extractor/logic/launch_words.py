"""Which words of a command are SGLang's launch arguments: in a pasted text, those of the simple
command that runs the launcher, what comes before the launcher dropped and its env assignments kept.
Text alone, no flag catalog: a check answered before (`products.reuse.answers`) needs only this."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .shell import shell_words, simple_commands

ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

# Where SGLang's own arguments start in a pasted command: after the launcher it names.
_LAUNCHER = re.compile(r"(?:.*[/.])?launch_server(?:\.py)?$")
_SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>>", "&>", "2>&1", ">&", "|&"})


def split_command(argv: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Launch arguments from a pasted command: of the simple commands a pasted text holds (`cd x &&
    ...; ... | tee log`), the one that runs SGLang's launcher, without its redirections; what comes
    before the launcher (`docker run ... IMAGE`, `env`, `nohup`, `NAME=VALUE`, `python -m`) dropped,
    its env assignments kept."""
    tokens = launch_words(argv)
    env: dict[str, str] = {}
    launcher = _launcher_at(tokens)
    if launcher is not None:
        for i, token in enumerate(tokens[:launcher]):
            if ENV_ASSIGNMENT.match(token) and not token.startswith("-"):
                name, _, value = token.partition("=")
                env[name] = value
            elif token in ("-e", "--env") and i + 1 < launcher and ENV_ASSIGNMENT.match(tokens[i + 1]):
                pass  # docker's `-e NAME=VALUE`: the assignment itself is read on its own turn
        tokens = tokens[launcher + 1:]
    else:
        i = 0
        while i < len(tokens) and (tokens[i] in ("env", "nohup", "exec") or ENV_ASSIGNMENT.match(tokens[i])):
            if ENV_ASSIGNMENT.match(tokens[i]):
                name, _, value = tokens[i].partition("=")
                env[name] = value
            i += 1
        if i < len(tokens) and not tokens[i].startswith(("-", "$")):  # `$ARGS` first: launch words, no program
            python = re.fullmatch(r"(?:.*/)?python[\d.]*", tokens[i]) is not None
            i += 1
            while i < len(tokens):
                token = tokens[i]
                if token == "-m" and i + 1 < len(tokens):
                    i += 2
                    continue
                if python and re.fullmatch(r"-[a-zA-Z]+", token) and token not in ("-m",):
                    i += 2 if token in ("-X", "-W") else 1
                    continue
                if not token.startswith("-"):
                    i += 1  # a subcommand such as `sglang serve`
                    continue
                break
        tokens = tokens[i:]
    end = next((i for i, t in enumerate(tokens) if t in _SHELL_OPERATORS or t.startswith(("2>", ">", "|"))), len(tokens))
    return tokens[:end], env


def _pasted(argv: Sequence[str]) -> bool:
    return len(argv) == 1 and (" " in argv[0] or "\n" in argv[0])


def launch_words(argv: Sequence[str]) -> list[str]:
    """The words of the simple command that runs the launcher (a pasted text is read as a shell reads
    it); the words as given otherwise (exec-form lists, arguments after `--`)."""
    if not _pasted(argv):
        return list(argv)
    try:
        commands = simple_commands(shell_words(argv[0]))
    except ValueError:  # an unbalanced quote: split as the user typed it
        commands = [argv[0].replace("\\\n", " ").split()]
    return next((c for c in commands if runs_launcher(c)), commands[0] if commands else [])


def _launcher_at(words: Sequence[str]) -> int | None:
    """Where SGLang's launcher is named (`-m sglang.launch_server`, `launch_server.py`, `sglang serve`)."""
    return next((i for i, w in enumerate(words) if _LAUNCHER.match(w) or
                 w == "serve" and i > 0 and words[i - 1].rsplit("/", 1)[-1] == "sglang"), None)


def runs_launcher(words: Sequence[str]) -> bool:
    return _launcher_at(words) is not None


def launch_kind(argv: Sequence[str]) -> str:
    """"launch"; "help" when SGLang would print its help and exit (`--help`, `-h`); "none" for a
    pasted text in which no command runs the launcher or starts with launch options."""
    words = launch_words(argv)
    if _pasted(argv) and not runs_launcher(words):
        rest = [w for w in words if not (w in ("env", "nohup", "exec") or ENV_ASSIGNMENT.match(w))]
        if not rest or not rest[0].startswith("-"):
            return "none"
    tokens, _ = split_command(argv)
    return "help" if any(t in ("-h", "--help") for t in tokens) else "launch"
