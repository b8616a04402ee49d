"""Dataclass methods compiled once and kept between processes (`core.dataclass_code`): the same
classes as `dataclasses` makes them, their code read back by the next process, a bad file ignored."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

# Made in a fresh interpreter (the code is kept per process); prints what the classes' methods are.
PROGRAM = textwrap.dedent("""
    import dataclasses, inspect, json, sys
    from pathlib import Path
    if sys.argv[1] == "kept":
        from extractor.core import dataclass_code
        dataclass_code.keep_dataclass_code(Path(sys.argv[2]))

    @dataclasses.dataclass(frozen=True, slots=True, order=True)
    class Point:
        x: int
        y: "list[int]" = dataclasses.field(default_factory=list, compare=False)

        def __post_init__(self):
            object.__setattr__(self, "y", [self.x])

    @dataclasses.dataclass
    class Box:
        items: list = dataclasses.field(default_factory=list)
        label: str = "b"

    def shape(fn):
        code = fn.__code__
        return [code.co_code.hex(), repr(code.co_consts), code.co_names, code.co_varnames, code.co_filename,
                code.co_qualname, str(inspect.signature(fn)), repr(fn.__annotations__), repr(fn.__defaults__)]

    methods = {f"{cls.__name__}.{name}": shape(getattr(cls, name))
               for cls in (Point, Box) for name in ("__init__", "__repr__", "__eq__", "__lt__", "__hash__",
                                                    "__setattr__") if getattr(getattr(cls, name), "__code__", None)}
    behaviour = [repr(Point(2)), Point(1) < Point(2), hash(Point(3)) == hash(Point(3)), Point(4).y, repr(Box()),
                 Box([1]) == Box([1])]
    try:
        Point(1).x = 2
    except dataclasses.FrozenInstanceError:
        behaviour.append("frozen")
    kept = sys.modules.get("extractor.core.dataclass_code")
    added = sorted(kept._installed[0].added) if kept is not None and kept._installed else None
    read = sorted(kept._installed[0].modules) if kept is not None and kept._installed else None
    print(json.dumps({"methods": methods, "behaviour": behaviour, "added": added, "read": read}))
""")


def _run(mode: str, folder: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROGRAM, mode, str(folder)], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[1])
    return json.loads(done.stdout)


def test_kept_code_makes_the_classes_dataclasses_makes(tmp_path: Path) -> None:
    plain = _run("plain", tmp_path)
    first = _run("kept", tmp_path)
    (kept,) = tmp_path.glob("dataclass-code-*/__main__.marshal")  # written as the first process exits
    again = _run("kept", tmp_path)
    assert first["added"] == ["__main__"] and again["added"] == []  # the second process compiled nothing
    assert again["read"] == ["__main__"]  # the kept code of the modules that made dataclasses, no other
    assert plain["methods"] == first["methods"] == again["methods"]
    assert plain["behaviour"] == first["behaviour"] == again["behaviour"]
    assert "frozen" in plain["behaviour"]
    assert kept.stat().st_size > 0


def test_an_unreadable_file_is_compiled_again_and_replaced(tmp_path: Path) -> None:
    first = _run("kept", tmp_path)
    (kept,) = tmp_path.glob("dataclass-code-*/__main__.marshal")
    kept.write_bytes(b"not marshal data")
    again = _run("kept", tmp_path)
    assert again["added"] == first["added"] == ["__main__"] and again["methods"] == first["methods"]
    assert _run("kept", tmp_path)["added"] == []  # the bad file was replaced by a good one


def test_an_exec_already_in_dataclasses_is_left_alone(tmp_path: Path, monkeypatch) -> None:
    import dataclasses

    from extractor.core import dataclass_code

    own = object()
    monkeypatch.setattr(dataclass_code, "_installed", [])  # as in a process that has not installed it
    monkeypatch.setattr(dataclasses, "exec", own, raising=False)
    dataclass_code.keep_dataclass_code(tmp_path)
    assert dataclasses.exec is own and not dataclass_code._installed  # type: ignore[attr-defined]
