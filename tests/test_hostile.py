"""Hostile and broken inputs (issue 8): nothing executed, clear one-line errors, nothing half-written."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractor import cli
from extractor.analysis.modules import ParseError
from extractor.core import errors
from extractor.core.formula import atoms
from extractor.products.extraction.extraction import extract
from extractor.products.extraction.output import output_dir, rules_document, validate
from extractor.sources.trees import SourceInfo, SourceTree, path_tree

DOCS = Path(__file__).resolve().parent.parent / "docs" / "failure-modes.md"
ONE_LINE_ERROR = re.compile(r"^sglang-constraints: error: [^\n]+\n$")


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def guard(field: str, message: str, indent: str = "    ") -> str:
    """A method with one guard, in the shape of SGLang's `_handle_*` passes."""
    return (f"{indent}def _handle_{field}(self):\n{indent}    if self.{field} > 1:\n"
            f"{indent}        raise ValueError({message!r})\n")


def rules_of(out: Path, label: str) -> dict:
    return json.loads((out / label / "rules.json").read_text(encoding="utf-8"))


# ---- 1. nothing analysed is executed or imported ---------------------------------------------------


def test_analysed_code_is_never_executed_or_imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "marker"
    boom = f"open({str(marker)!r}, 'a').write('ran\\n'); raise SystemExit('imported')"
    pkg = tmp_path / "evilpkg"
    write(pkg / "sglang" / "__init__.py", boom + "\n")
    write(pkg / "sglang" / "srt" / "__init__.py", boom + "\n")
    write(pkg / "sglang" / "srt" / "utils.py", f"{boom}\n\n\ndef is_cuda():\n    {boom}\n")
    write(pkg / "sglang" / "srt" / "server_args.py", f"""\
import dataclasses
from sglang.srt.utils import is_cuda
{boom}


def register(fn):
    {boom}


@dataclasses.dataclass
class ServerArgs:
    {boom}
    tp_size: int = __import__("os").system("touch {marker}")

    @register
    def __post_init__(self, hook=open({str(marker)!r}, "w")):
        if is_cuda() and self.tp_size > 8:
            raise ValueError("tp-size is at most 8")
""")
    before = set(sys.modules)
    code, _, err = run_main(capsys, "extract", str(pkg), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert not marker.exists()
    gained = set(sys.modules) - before
    assert not [name for name in gained if name.split(".")[0] in ("sglang", "evilpkg")]
    # The code was read, not skipped: its guard is a rule.
    assert "tp-size is at most 8" in [r["message"] for r in rules_of(tmp_path / "out", "evilpkg")["rules"]]


# ---- 2. syntax errors ------------------------------------------------------------------------------


@pytest.fixture
def half_broken(tmp_path: Path) -> Path:
    folder = tmp_path / "half"
    write(folder / "a.py", "class S:\n" + guard("x", "x too big"))
    write(folder / "b.py", 'def f(self):\n    if self.y:\n        raise ValueError("y"\n')
    return folder


def test_syntax_error_is_one_line_with_position(half_broken: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, stdout, err = run_main(capsys, "extract", str(half_broken), "-o", str(out))
    assert code == errors.EXIT_INPUT == 2
    assert ONE_LINE_ERROR.match(err) and "Traceback" not in err
    assert re.search(r"error: b\.py:3:\d+: '\(' was never closed", err)
    assert stdout == "" and not out.exists()


def test_keep_going_extracts_the_rest_and_lists_the_broken_file(half_broken: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, _, err = run_main(capsys, "extract", str(half_broken), "-o", str(out), "--keep-going")
    assert code == errors.EXIT_PARTIAL == 3
    document = rules_of(out, "half")
    validate(document, "rules.schema.json")
    assert [(e["file"], e["line"]) for e in document["errors"]] == [("b.py", 3)]
    assert [r["message"] for r in document["rules"]] == ["x too big"]
    assert "b.py:3:" in err and "Traceback" not in err


# ---- 3. encodings, line ends, sizes, depth ---------------------------------------------------------

GUARDED = "class S:\n    def __post_init__(self):\n        if self.x > 1:\n            raise ValueError('x \u00e9')\n"


@pytest.mark.parametrize("data, line", [
    pytest.param(b"# -*- coding: latin-1 -*-\n" + GUARDED.encode("latin-1"), 5, id="pep263-latin-1"),
    pytest.param(b"\xef\xbb\xbf" + GUARDED.encode(), 4, id="bom"),
    pytest.param(GUARDED.replace("\n", "\r\n").encode(), 4, id="crlf"),
    pytest.param(b"\n\r\n\n" + GUARDED.replace("\n", "\r\n").encode(), 7, id="crlf-after-blank-lines"),
    pytest.param(GUARDED.replace("    ", "\t").encode(), 4, id="tabs"),
])
def test_odd_but_valid_files_extract(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, line: int) -> None:
    write(tmp_path / "src" / "m.py", data)
    code, _, err = run_main(capsys, "extract", str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    assert code == 0, err
    [rule] = rules_of(tmp_path / "out", "src")["rules"]
    assert rule["message"] == "x \u00e9" and rule["location"]["line"] == line
    assert rule["snippet"]["text"].split("\n")[-1].strip() == "raise ValueError('x \u00e9')"


def test_undecodable_file_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "src" / "m.py", GUARDED.encode("latin-1"))  # latin-1 bytes, no cookie
    code, _, err = run_main(capsys, "extract", str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    assert code == 2 and ONE_LINE_ERROR.match(err) and "m.py: cannot decode" in err
    assert not (tmp_path / "out").exists()


def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "src" / "m.py", b"")
    code, _, err = run_main(capsys, "extract", str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    document = rules_of(tmp_path / "out", "src")
    assert code == 0 and document["rules"] == [] and document["files"][0]["lines"] == 0


def test_200000_line_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # libcst needs ~0.3 ms per assignment line on a loaded machine, so most of the bulk is a long
    # string and comments (cheap to parse, but real lines): guards on both sides must keep their lines.
    head = "class S:\n" + guard("a", "first")
    bulk = ([f"V{i} = {i}" for i in range(3000)] + [f"# note {i}" for i in range(7000)]
            + ['BLOB = """'] + [f"row {i}" for i in range(189_990)] + ['"""'])
    text = head + "\n".join(bulk) + "\n\n\nclass T:\n" + guard("b", "last")
    assert text.count("\n") >= 200_000
    write(tmp_path / "src" / "m.py", text)
    code, _, err = run_main(capsys, "extract", str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    assert code == 0, err
    rules = {r["message"]: r["location"]["line"] for r in rules_of(tmp_path / "out", "src")["rules"]}
    assert rules == {"first": 4, "last": text.count("\n")}


def nested_ifs(depth: int) -> str:
    lines = ["class S:", "    def __post_init__(self):"]
    lines += [" " * (8 + 4 * i) + f"if self.f{i}:" for i in range(depth)]
    return "\n".join([*lines, " " * (8 + 4 * depth) + "raise ValueError('deep')"]) + "\n"


def test_300_deep_ifs_fail_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Python itself refuses more than 100 levels of indentation; the user gets that, not a traceback.
    write(tmp_path / "src" / "m.py", nested_ifs(300))
    code, _, err = run_main(capsys, "extract", str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    assert code == 2 and ONE_LINE_ERROR.match(err)
    assert "m.py:101:" in err and "too many levels of indentation" in err


def test_deepest_legal_ifs_extract(tmp_path: Path) -> None:
    ex = extract(path_tree(write(tmp_path / "src" / "m.py", nested_ifs(97)).parent))
    [rule] = ex.rules
    assert len(list(atoms(rule.condition))) == 97


@pytest.mark.parametrize("expression", [
    pytest.param("self.a == " + "+".join(["1"] * 1500), id="1500-term-sum"),
    pytest.param("self" + ".a" * 1500, id="1500-attribute-chain"),
    pytest.param("f(" * 180 + "self.a" + ")" * 180, id="180-nested-calls"),
    pytest.param(" and ".join(f"self.f{i}" for i in range(300)), id="300-atom-and"),
])
def test_deep_expressions_extract(tmp_path: Path, expression: str) -> None:
    # These used to end in an internal RecursionError in the function walk.
    text = f"class S:\n    def __post_init__(self):\n        if {expression}:\n            raise ValueError('deep')\n"
    ex = extract(path_tree(write(tmp_path / "src" / "m.py", text).parent))
    assert [r.message for r in ex.rules] == ["deep"]
    validate(rules_document(ex), "rules.schema.json")


def test_too_deep_to_parse_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "src" / "m.py", "X = " + "+".join(["1"] * 5000) + "\n")
    code, _, err = run_main(capsys, "extract", str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    assert code == 2 and ONE_LINE_ERROR.match(err) and "m.py:0:0: nesting too deep to parse" in err


# ---- 4. output: atomic, contained, deterministic ---------------------------------------------------


def many_guards(folder: Path, count: int) -> Path:
    methods = "".join(guard(f"field_{i}", f"field {i} is too big") for i in range(count))
    calls = "".join(f"        self._handle_field_{i}()\n" for i in range(count))
    write(folder / "server.py", f"class ServerArgs:\n    def __post_init__(self):\n{calls}\n{methods}")
    return folder


def extract_process(source: Path, out: Path, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "extractor", "extract", str(source), "-o", str(out)],
                            env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _folder_state(folder: Path) -> dict[str, tuple[int, int]]:
    return {entry.name: (entry.stat().st_size, entry.stat().st_mtime_ns) for entry in os.scandir(folder)}


def _kill_at_write(process: subprocess.Popen[bytes], folder: Path, writes: int) -> None:
    """Kill the run at its `writes`-th change to the output folder (a temporary file appearing, a rename, ...)."""
    seen, state = 0, _folder_state(folder)
    while process.poll() is None:
        try:
            current = _folder_state(folder)
        except FileNotFoundError:  # a temporary file renamed between listing and stat
            continue
        if current != state:
            seen, state = seen + 1, current
            if seen > writes:
                break
        time.sleep(0.0005)  # leave the run its core
    process.kill()
    process.wait()


def test_killed_run_leaves_old_or_new_complete_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    source = many_guards(tmp_path / "big", 40)
    assert extract_process(source, out).wait() == 0
    old = {p.name: p.read_bytes() for p in (out / "big").iterdir()}
    many_guards(source, 120)  # the next runs write different, larger files
    started = time.monotonic()
    assert extract_process(source, tmp_path / "new").wait() == 0
    took = time.monotonic() - started
    new = {p.name: p.read_bytes() for p in (tmp_path / "new" / "big").iterdir()}
    assert old.keys() == new.keys() and all(old[name] != new[name] for name in old if name.endswith(".json"))
    chance = random.Random(8)
    # One kill at a random moment of the run, three at random moments of the writing itself.
    kills = [("time", chance.random())] + [("write", chance.randrange(8)) for _ in range(3)]
    for how, when in kills:
        for name, data in old.items():  # back to the old complete files
            (out / "big" / name).write_bytes(data)
        process = extract_process(source, out)
        if how == "time":
            time.sleep(took * when)
            process.kill()
            process.wait()
        else:
            _kill_at_write(process, out / "big", when)
        for path in (out / "big").iterdir():
            if path.name.startswith("."):
                continue  # a temporary name, never read by anyone
            assert path.read_bytes() in (old[path.name], new[path.name]), (how, when, path.name)
        validate(json.loads((out / "big" / "rules.json").read_bytes()), "rules.schema.json")


def test_labels_cannot_leave_the_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    for label in ("..", "../x", "a/../../x", "/etc", "", "."):
        with pytest.raises(ValueError, match="leaves the output folder"):
            output_dir(out, label)
    weird = write(tmp_path / "..\\..$ {evil}" / "m.py", GUARDED).parent
    tree = path_tree(weird)
    assert output_dir(out, tree.info.label).parent == out.resolve()
    with pytest.raises(ValueError):
        output_dir(out, replace(tree.info, label="../../escaped").label)
    code, _, err = run_main(capsys, "extract", str(weird), "-o", str(out))
    assert code == 0, err
    everything = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert sorted(p.parent for p in everything if p.name != "m.py") == [out / tree.info.label] * 5


def test_output_bytes_do_not_depend_on_run_or_hash_seed(tmp_path: Path) -> None:
    source = tmp_path / "seeded"
    many_guards(source, 12)
    write(source / "flags.py", "import argparse\n\ndef add(parser):\n"
          + "".join(f"    parser.add_argument('--field-{i}', type=int, default={i}, choices=[{i}, {i + 1}])\n"
                    for i in range(12)))
    runs = {seed: extract_process(source, tmp_path / seed, PYTHONHASHSEED=seed) for seed in ("0", "1")}
    for seed, process in runs.items():
        _, err = process.communicate()
        assert process.returncode == 0, err.decode()
    again = extract_process(source, tmp_path / "again", PYTHONHASHSEED="0")
    assert again.wait() == 0
    outputs = [{p.relative_to(tmp_path / name).as_posix(): p.read_bytes() for p in (tmp_path / name).rglob("*")
                if p.is_file()} for name in ("0", "1", "again")]
    assert len(outputs[0]) == 5 and outputs[0] == outputs[1] == outputs[2]
    assert len(json.loads(outputs[0]["seeded/rules.json"])["rules"]) == 12


# ---- 5. fuzzing --------------------------------------------------------------------------------------


class MemoryTree(SourceTree):
    def __init__(self, files: dict[str, str]) -> None:
        super().__init__(SourceInfo(kind="path", label="fuzz"), files)
        self._files = files

    def _read(self, path: str) -> bytes:
        return self._files[path].encode()


NAMES = st.sampled_from(["self.mode", "self.tp_size", "self.page_size", "cfg.device", "server_args.backend",
                         "x", "items", "os.environ.get('SGLANG_X')", "envs.SGLANG_Y.get()", "is_cuda()",
                         "get_platform().is_sm100", "self.model_config.hf_config.architectures"])
LITERALS = st.one_of(st.integers(-3, 300).map(str), st.sampled_from(["None", "True", "False", "'decode'", "''",
                                                                    "1.5", "[1, 2]", "('a', 'b')", "{'k': 1}"]))
GARBAGE = st.text(alphabet="()[]{}:;,.=+-*/%<>!&|^~@'\"\\ abc01\t", min_size=1, max_size=8)


def _compound(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    two = st.tuples(children, children)
    return st.one_of(
        two.flatmap(lambda p: st.sampled_from(["==", "!=", "<", ">=", "in", "not in", "is", "is not"])
                    .map(lambda op: f"({p[0]}) {op} ({p[1]})")),
        two.flatmap(lambda p: st.sampled_from(["and", "or", "+", "*", "-"]).map(lambda op: f"({p[0]} {op} {p[1]})")),
        children.map(lambda e: f"(not {e})"),
        children.map(lambda e: f"len({e})"),
        children.map(lambda e: f"({e}).lower()"),
        children.map(lambda e: f"[{e}][0]"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        children.map(lambda e: f"'%s' % ({e},)"),
    )


EXPRESSIONS = st.recursive(st.one_of(NAMES, LITERALS), _compound, max_leaves=6)
# Rare enough that most programs stay valid: a program holds a dozen expressions or more.
EXPRESSION_OR_GARBAGE = st.integers(0, 49).flatmap(lambda i: GARBAGE if i == 0 else EXPRESSIONS)
TARGETS = st.sampled_from(["self.mode", "self.page_size", "cfg.device", "x", "items"])


def _simple() -> st.SearchStrategy[list[str]]:
    e = EXPRESSION_OR_GARBAGE
    return st.one_of(
        st.tuples(TARGETS, e).map(lambda t: [f"{t[0]} = {t[1]}"]),
        e.map(lambda m: [f"raise ValueError({m})"]),
        st.just(["raise"]),
        st.tuples(e, e).map(lambda t: [f"assert {t[0]}, {t[1]}"]),
        e.map(lambda v: [f"return {v}"]),
        st.sampled_from([["return"], ["pass"], ["break"], ["continue"], ["self._handle()"], ["helper(self)"]]),
    )


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def _blocks(body: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    e = EXPRESSION_OR_GARBAGE
    elifs = st.lists(st.tuples(e, body), max_size=2)
    return st.one_of(
        st.tuples(e, body, elifs, st.none() | body).map(
            lambda t: [f"if {t[0]}:", *_indent(t[1])]
            + [line for c, b in t[2] for line in (f"elif {c}:", *_indent(b))]
            + (["else:", *_indent(t[3])] if t[3] is not None else [])),
        st.tuples(e, body).map(lambda t: [f"for item in {t[0]}:", *_indent(t[1])]),
        st.tuples(e, body).map(lambda t: [f"while {t[0]}:", *_indent(t[1])]),
        st.tuples(body, body, st.none() | body).map(
            lambda t: ["try:", *_indent(t[0]), "except (ValueError, KeyError) as error:", *_indent(t[1])]
            + (["finally:", *_indent(t[2])] if t[2] is not None else [])),
        st.tuples(e, body).map(lambda t: [f"with {t[0]} as ctx:", *_indent(t[1])]),
        st.tuples(e, body, body).map(lambda t: [f"match {t[0]}:", "    case 'a' | 'b':", *_indent(_indent(t[1])),
                                                "    case _:", *_indent(_indent(t[2]))]),
    )


BODIES = st.recursive(
    st.lists(_simple(), min_size=1, max_size=3).map(lambda parts: [line for part in parts for line in part]),
    lambda inner: st.lists(st.one_of(_simple(), _blocks(inner)), min_size=1, max_size=3)
    .map(lambda parts: [line for part in parts for line in part]),
    max_leaves=8,
)


@st.composite
def programs(draw: st.DrawFn) -> str:
    post_init, handle, helper = draw(BODIES), draw(BODIES), draw(BODIES)
    text = "\n".join([
        "import os", "", "class ServerArgs:",
        "    def __post_init__(self):", *_indent(_indent(post_init)),
        "    def _handle(self):", "        cfg = self", *_indent(_indent(handle)),
        "", "def helper(server_args):", *_indent(helper),
    ]) + "\n"
    if draw(st.integers(0, 3)) == 0:  # about one in four: break the program
        position = draw(st.integers(0, len(text)))
        mutation = draw(st.sampled_from(["delete", "insert", "truncate", "indent"]))
        if mutation == "delete":
            text = text[:position] + text[position + draw(st.integers(1, 5)):]
        elif mutation == "insert":
            text = text[:position] + draw(GARBAGE) + text[position:]
        elif mutation == "truncate":
            text = text[:position]
        else:
            lines = text.splitlines()
            index = draw(st.integers(0, len(lines) - 1))
            lines[index] = draw(st.sampled_from(["  ", "\t", " "])) + lines[index]
            text = "\n".join(lines) + "\n"
    return text


@settings(max_examples=500, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_fuzzed_programs_give_valid_records_or_a_parse_error(source: str) -> None:
    try:
        ex = extract(MemoryTree({"m.py": source}))
    except ParseError as error:
        assert re.fullmatch(r"m\.py:\d+:\d+: [^\n]+", str(error)), str(error)
        return
    validate(rules_document(ex), "rules.schema.json")
    assert all(r.location.file == "m.py" and 1 <= r.location.line <= source.count("\n") + 1 for r in ex.rules)


# ---- 6. internal errors and the documented exit codes ----------------------------------------------


@pytest.mark.parametrize("debug", [False, True])
def test_internal_error_is_one_line_unless_debug(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch, debug: bool) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr("extractor.products.extraction.extraction.extract", broken)
    write(tmp_path / "src" / "m.py", GUARDED)
    code, _, err = run_main(capsys, *(["--debug"] if debug else []), "extract", str(tmp_path / "src"),
                            "-o", str(tmp_path / "out"))
    assert code == errors.EXIT_INTERNAL == 4
    if debug:
        assert err.startswith("Traceback (most recent call last):") and "KeyError: 'a bug'" in err
    else:
        assert err == "sglang-constraints: internal error: KeyError: 'a bug' (rerun with --debug)\n"


def test_documented_exit_codes_match_the_cli() -> None:
    rows = re.findall(r"^\| `(\d+)` \| (\w+) \|", DOCS.read_text(encoding="utf-8"), re.MULTILINE)
    documented = {int(code): name for code, name in rows}
    assert documented == {errors.EXIT_OK: "success", errors.EXIT_FINDINGS: "findings", errors.EXIT_INPUT: "input",
                          errors.EXIT_PARTIAL: "partial", errors.EXIT_INTERNAL: "internal"}
    # Every exit code the failure table promises is one of those.
    promised = {int(code) for code in re.findall(r"\| exit `(\d+)`", DOCS.read_text(encoding="utf-8"))}
    assert promised and promised <= documented.keys()


BAD_RULES = {
    "not-json": (b"{ nope", "cannot read rules"),
    "not-utf8": (b'{"rules": ["\xff"]}', "cannot read rules"),
    "not-a-rules-document": (b'{"flags": []}', "not a rules.json document"),
    "malformed-record": (b'{"rules": [{"id": "x"}]}', "malformed record"),
}


@pytest.mark.parametrize("case", sorted(BAD_RULES))
@pytest.mark.parametrize("command", ["check", "explain", "render", "graph", "diff"])
def test_bad_rules_documents_are_one_line_input_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       command: str, case: str) -> None:
    data, reason = BAD_RULES[case]
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "rules.json").write_bytes(data)
    (folder / "flags.json").write_text('{"flags": []}', encoding="utf-8")
    rules = str(folder / "rules.json")
    argv = {
        "check": ["check", "--rules", rules, "--", "--model-path", "m"],
        "explain": ["explain", "--rules", rules, "some error"],
        "render": ["render", rules, "-o", str(tmp_path / "site")],
        "graph": ["graph", rules],
        "diff": ["diff", rules, rules],
    }[command]
    code, _, err = run_main(capsys, *argv)
    assert code == errors.EXIT_INPUT, err
    assert err.count("\n") == 1 and err.startswith("sglang-constraints: error: ") and reason in err, err
    assert not (tmp_path / "site").exists()


def test_rules_without_flags_beside_them_are_refused_by_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "src" / "m.py", GUARDED)
    assert run_main(capsys, "extract", str(tmp_path / "src"), "-o", str(tmp_path / "out"))[0] == 0
    rules = next((tmp_path / "out").glob("*/rules.json"))
    rules.with_name("flags.json").unlink()
    code, _, err = run_main(capsys, "check", "--rules", str(rules), "--", "--model-path", "m")
    assert code == errors.EXIT_INPUT and "no flag catalog beside rules.json" in err


@pytest.mark.parametrize("command", [
    ["check", "--rules", "{rules}", "--format", "json", "--", "--model-path", b"m\xff\xfe", "--tp", "2"],
    ["check", "--rules", "{rules}", "--", "--model-path", b"m\xff\xfe", "--tp", "2"],
    ["explain", "--rules", "{rules}", b"ValueError: page_size \xff is larger than 64."],
], ids=["check json", "check text", "explain"])
def test_launch_arguments_that_are_no_utf8_are_answered_not_an_internal_error(tmp_path: Path, command: list) -> None:
    """A path's raw bytes on the command line (any byte sequence Linux allows): answered as any other
    value, twice (the second from what the first kept); where a report echoes it, as the bytes given."""
    from extractor.products.extraction.extraction import extract
    from extractor.products.extraction.output import flags_document, rules_document, write_documents
    from extractor.sources.trees import path_tree

    ex = extract(path_tree(Path(__file__).parent / "fixtures" / "render_basic" / "src"))
    write_documents(tmp_path, {"rules.json": (rules_document(ex), "rules.schema.json"),
                               "flags.json": (flags_document(ex), "flags.schema.json")})
    argv = [part if isinstance(part, bytes) else part.format(rules=tmp_path / "rules.json").encode() for part in command]
    env = {**os.environ, "SGLANG_CONSTRAINTS_EXTRACTION_CACHE": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable.encode(), b"-m", b"extractor", *argv], capture_output=True, env=env)
            for _ in range(2)]
    assert [r.returncode for r in runs] == [runs[0].returncode] * 2 and runs[0].returncode in (0, 1), runs[0].stderr
    assert runs[0].stdout and runs[1].stdout == runs[0].stdout and runs[0].stderr == b""


def test_json_of_an_undecodable_argument_is_valid_json_that_reads_back() -> None:
    """Where a report echoes such an argument (a message filled with the model path), the JSON writes
    each undecodable byte as its escape (`\\udcff`): valid JSON, read back as the very string."""
    from extractor.core.serialize import dumps

    document = {"message": "m\udcff\udcfe is a model", "errors": [{"value": "p\udcff"}], "plain": "é—"}
    text = dumps(document)
    assert json.loads(text) == document and "\\udcff" in text and "é—" in text
    text.encode("utf-8")  # strict: what is written is UTF-8
