"""Pasted commands read as a shell reads them, input that holds no launch, and outputs that are whole
or untouched: a read-only target refused before the work, an interrupted site build keeping the old one."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import time
from pathlib import Path

import pytest

from extractor.cli import main
from extractor.commands import site as site_command
from extractor.logic.launch_words import launch_kind, split_command
from extractor.logic.shell import Operator, shell_words, simple_commands
from extractor.products.extraction import output
from extractor.products.extraction.output import folder_made_aside, require_writable
from extractor.core.errors import UsageError

from .conftest import FIXTURES

from .test_check import rules_file, ruleset  # noqa: F401 - fixtures


@pytest.mark.parametrize("pasted, args, env", [
    pytest.param("nohup python -m sglang.launch_server --model-path m --port 30001 > server.log 2>&1 &",
                 ["--model-path", "m", "--port", "30001"], {}, id="redirections and a trailing &"),
    pytest.param("python -m sglang.launch_server --model-path m --tp 2>>err.log", ["--model-path", "m", "--tp"], {},
                 id="2>> takes the 2 as its descriptor, as bash does"),
    pytest.param("cd /srv && python -m sglang.launch_server --model-path m --tp 2 |& tee log; echo done",
                 ["--model-path", "m", "--tp", "2"], {}, id="a chain: the command that runs the launcher"),
    pytest.param("python -m sglang.launch_server --model-path m <<< 'x y' --tp 2", ["--model-path", "m", "--tp", "2"],
                 {}, id="here-string"),
    pytest.param("(HF_HOME=/h python -m sglang.launch_server --model-path $(cat /p) --tp `nproc` &)",
                 ["--model-path", "$(cat /p)", "--tp", "`nproc`"], {"HF_HOME": "/h"}, id="subshell, substitutions"),
    pytest.param('python -m sglang.launch_server --model-path "my model" --json-model-override-args \'{"a": 1}\' '
                 '--host 0.0.0.0:30000 &> log', ["--model-path", "my model", "--json-model-override-args", '{"a": 1}',
                                                 "--host", "0.0.0.0:30000"], {}, id="quotes and &>"),
    pytest.param("python -m sglang.launch_server \\\n  --model-path m \\  # why\n  # a comment line\n  --tp 2\nsleep 5",
                 ["--model-path", "m", "--tp", "2"], {}, id="continued lines, comments, another line"),
])
def test_pasted_commands_as_a_shell_reads_them(pasted: str, args: list[str], env: dict[str, str]) -> None:
    assert split_command([pasted]) == (args, env)
    assert launch_kind([pasted]) == "launch"


def test_operators_are_told_from_quoted_words() -> None:
    words = shell_words("a '>' b > c 2>&1")
    assert words == ["a", ">", "b", ">", "c", "2>&", "1"]
    assert [isinstance(w, Operator) for w in words] == [False, False, False, True, False, True, False]
    assert simple_commands(words) == [["a", ">", "b"]]
    with pytest.raises(ValueError):
        shell_words("a 'b")


@pytest.mark.parametrize("text, kind", [
    ("asdf qwer ;; |&& ...", "none"),
    ("echo hello > x", "none"),
    ("--tp 2 --dp 2", "launch"),
    ("python3 -m sglang.launch_server --help", "help"),
    ("sglang serve -h", "help"),
])
def test_launch_kind(text: str, kind: str) -> None:
    assert launch_kind([text]) == kind


def test_check_of_text_without_a_launch_is_an_input_error(rules_file, capsys) -> None:  # noqa: F811
    assert main(["check", "--rules", str(rules_file), "asdf qwer ;; |&& ..."]) == 2
    assert capsys.readouterr().err.strip() == ("sglang-constraints: error: no launch command found in the given text "
                                               "(nothing runs sglang.launch_server, `sglang serve` or starts with "
                                               "launch options)")


def test_a_help_launch_is_no_argument_error(rules_file, capsys, tmp_path) -> None:  # noqa: F811
    assert main(["check", "--rules", str(rules_file), "python3 -m sglang.launch_server --help"]) == 0
    assert "asks for SGLang's help" in capsys.readouterr().out
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM x\nRUN python3 -m sglang.launch_server --help\n", encoding="utf-8")
    assert main(["check", "--rules", str(rules_file), "--format", "github", "--file", str(dockerfile)]) == 0
    assert "::error" not in capsys.readouterr().out


def test_a_redirected_launch_reports_its_real_error(rules_file, capsys, tmp_path) -> None:  # noqa: F811
    script = tmp_path / "serve.sh"
    script.write_text("nohup python -m sglang.launch_server --model-path m --tp-size two > server.log 2>&1 &\n",
                      encoding="utf-8")
    assert main(["check", "--rules", str(rules_file), "--format", "github", "--file", str(script)]) == 1
    out = capsys.readouterr().out
    assert "invalid int value: 'two'" in out and "server.log" not in out and out.count("::error") == 1


def test_explain_of_nothing_is_a_usage_error(capsys) -> None:
    assert main(["explain", "  "]) == 2
    assert "give the error text" in capsys.readouterr().err


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch) -> Path:
    """A folder on which making a file fails as on a read-only mount (root ignores permission bits,
    and mounting needs privileges a test does not have)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    real = output.tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir).resolve() == folder.resolve():
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dir))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(output.tempfile, "mkstemp", mkstemp)
    return folder


def test_a_read_only_output_is_refused_before_any_work(read_only: Path, rules_file, capsys) -> None:  # noqa: F811
    with pytest.raises(UsageError, match="cannot write in"):
        require_writable(read_only / "docs", "--output")
    assert main(["render", str(rules_file), "-o", str(read_only / "docs")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sglang-constraints: error: --output") and "cannot write in" in err[0]


def test_an_output_file_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is a folder, not a file"):
        require_writable(tmp_path, "--output", folder=False)
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        require_writable(tmp_path / "f", "--output")
    require_writable(tmp_path / "f", "--output", folder=False)  # an existing file, replaced
    require_writable(tmp_path / "new" / "deeper", "--output")  # made later, under a writable folder
    assert not (tmp_path / "new").exists() and [p.name for p in tmp_path.iterdir()] == ["f"]


def test_a_folder_made_aside_is_swapped_in_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "public"
    target.mkdir()
    (target / "index.html").write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with folder_made_aside(target) as made:
            (made / "index.html").write_text("half")
            raise KeyboardInterrupt
    assert (target / "index.html").read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["public"]
    with folder_made_aside(target) as made:
        (made / "index.html").write_text("new")
    assert (target / "index.html").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["public"]
    # A run killed between the two renames: the old folder is put back by the next one.
    target.rename(tmp_path / ".public.old")
    with pytest.raises(RuntimeError):
        with folder_made_aside(target):
            raise RuntimeError
    assert (target / "index.html").read_text() == "new"


def test_what_a_killed_run_left_aside_goes_after_a_day(tmp_path: Path) -> None:
    """A folder made aside by a run killed with SIGKILL stays (hidden, never read) until a later run
    of the same output finds it over a day old; a younger one may be a live run's, and stays."""
    target = tmp_path / "out"
    stale, live = tmp_path / ".out.killed.tmp", tmp_path / ".out.running.tmp"
    for leftover in (stale, live):
        leftover.mkdir()
        (leftover / "rules.json").write_text("{")
    two_days_ago = time.time() - 2 * output.STALE_SECONDS
    os.utime(stale, (two_days_ago, two_days_ago))
    with folder_made_aside(target) as made:
        (made / "rules.json").write_text("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.running.tmp", "out"]


def test_an_interrupted_site_build_keeps_the_previous_site(tmp_path: Path, monkeypatch) -> None:
    public = tmp_path / "public"
    public.mkdir()
    (public / "index.html").write_text("previous")

    def interrupted(command, **kwargs):
        made = Path(command[command.index("--site-dir") + 1])
        (made / "index.html").write_text("half")
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess, "run", interrupted)  # the site command imports it when it builds
    with pytest.raises(KeyboardInterrupt):
        site_command.build(tmp_path)
    assert (public / "index.html").read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["public"]

    def failing(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "Error: broken page")

    monkeypatch.setattr(subprocess, "run", failing)
    assert site_command.build(tmp_path) == 4
    assert (public / "index.html").read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["public"]


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_notes_go_to_a_terminal_only(monkeypatch, capsys) -> None:
    from extractor.core.progress import progress

    progress("fetching")  # captured stderr is no terminal: nothing
    assert capsys.readouterr().err == ""

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    progress("sglang 0.5.23: fetching it")
    assert terminal.getvalue() == "sglang-constraints: sglang 0.5.23: fetching it\n"


def test_a_status_line_names_the_extraction_s_stage_on_a_terminal_only(monkeypatch, capsys) -> None:
    """Each stage of an extraction rewrites the one status line in place (`\\r`), and the line is
    cleared when the work ends; piped, nothing is written."""
    from extractor.core.progress import Status
    from extractor.products.extraction.extraction import extract
    from extractor.sources.trees import path_tree

    tree = path_tree(FIXTURES / "render_basic" / "src")
    with Status("extracting"):
        extract(tree)
    assert capsys.readouterr().err == ""

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with Status("extracting"):
        extract(tree)
    lines = terminal.getvalue().split("\r")
    assert [line.rstrip() for line in lines[1:5]] == [
        "sglang-constraints: extracting: parsing its files (1 of 4)",
        "sglang-constraints: extracting: walking its functions and the launch's run (2 of 4)",
        "sglang-constraints: extracting: finding an example launch for each guard (3 of 4)",
        "sglang-constraints: extracting: relating the errors (4 of 4)"]
    assert lines[-2].strip() == "" and lines[-1] == ""  # cleared: what follows starts on a clean line
    extract(tree)  # no line open: nothing more
    assert terminal.getvalue().count("\r") == len(lines) - 1


def test_sigterm_cleans_up_as_ctrl_c_does(tmp_path: Path) -> None:
    """The command's handler turns SIGTERM into an exception: the folder made aside is dropped and
    the previous output stays, as for Ctrl-C."""
    import sys

    target = tmp_path / "public"
    target.mkdir()
    (target / "index.html").write_text("previous")
    script = f"""
import os, signal, sys
from pathlib import Path
from extractor.cli import Terminated, _terminate
from extractor.products.extraction.output import folder_made_aside
signal.signal(signal.SIGTERM, _terminate)
try:
    with folder_made_aside(Path({str(target)!r})) as made:
        (made / "index.html").write_text("half")
        os.kill(os.getpid(), signal.SIGTERM)
except Terminated:
    sys.exit(143)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[1], check=False)
    assert done.returncode == 143
    assert (target / "index.html").read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["public"]


def test_a_full_disk_leaves_the_previous_output(rules_file, tmp_path: Path) -> None:  # noqa: F811
    """A file size limit (`RLIMIT_FSIZE`) as a full disk: `diff -o` fails in one line with exit 2, the
    previous report stays whole and no temporary file is left beside it."""
    import json
    import resource
    import shutil
    import signal
    import sys

    newer = tmp_path / "newer"
    newer.mkdir()
    shutil.copy(rules_file.parent / "flags.json", newer / "flags.json")
    document = json.loads(rules_file.read_text(encoding="utf-8"))
    document["rules"] = document["rules"][1:]  # one rule fewer: a report of some size
    (newer / "rules.json").write_text(json.dumps(document), encoding="utf-8")
    report = tmp_path / "out" / "diff.txt"
    report.parent.mkdir()
    report.write_text("previous report\n")

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))

    done = subprocess.run([sys.executable, "-m", "extractor", "diff", str(rules_file), str(newer / "rules.json"),
                           "-o", str(report)], cwd=Path(__file__).parents[1], capture_output=True, text=True,
                          preexec_fn=small_files, env={**os.environ, "SGLANG_CONSTRAINTS_CACHE": str(tmp_path / "cache")},
                          check=False)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sglang-constraints: error:") and "too large" in lines[0].lower()
    assert report.read_text() == "previous report\n" and [p.name for p in report.parent.iterdir()] == ["diff.txt"]
