"""The methods `dataclasses` writes for each class, compiled once and kept between processes.

A dataclass is made by writing the source of its `__init__`, `__eq__`, `__repr__`, ... and compiling
it with `exec`: about 1,400 functions for libcst's nodes and the package's records, half the time a
command spends importing (0.17 of 0.35 s). The text of such a function depends only on the class's
fields, so the code compiled from it is kept by that text, in a file per module of the classes and
per Python, and read back by the next process: `exec` of the kept code object gives the same
function as `exec` of its text.

Only `dataclasses`' own calls of `exec` go through it: the module looks the name up in its globals
before the builtins, and that is where `keep_dataclass_code` puts it. The file holds code that runs
in the process, as the rest of the cache (pickles) and `__pycache__` do: it is trusted as they are.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import importlib.util
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType

_installed: list[_KeptCode] = []


class _KeptCode:
    """`exec` for `dataclasses`: text compiled once, by its text, for this process and the next. Kept
    per module of the classes (a file each, read when the module makes its first dataclass): a
    command that imports no libcst reads none of libcst's."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.modules: dict[str, dict[str, CodeType]] = {}  # module name -> text -> code
        self.added: set[str] = set()  # modules some code was compiled for here

    def __call__(self, source: object, globals: dict | None = None, locals: dict | None = None, /) -> None:
        if type(source) is str:
            module = globals.get("__name__") if type(globals) is dict else None
            module = module if type(module) is str and module else "_"
            codes = self.modules.get(module)
            if codes is None:
                codes = self.modules[module] = _read(self.folder / f"{module}.marshal")
            code = codes.get(source)
            if code is None:
                # As `exec` compiles text: named "<string>", flags not inherited (`dataclasses` sets none).
                code = codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
                self.added.add(module)
            source = code
        builtins.exec(source, globals, locals)  # type: ignore[arg-type]

    def save(self) -> None:
        """Write the kept code of the modules this process added to (best effort: a cache that cannot
        be written only costs the next process the time to compile again)."""
        for module in sorted(self.added):
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                path = self.folder / f"{module}.marshal"
                fd, temporary = tempfile.mkstemp(dir=self.folder, prefix=f".{path.name}.")
                try:
                    with os.fdopen(fd, "wb") as stream:
                        marshal.dump(self.modules[module], stream)
                    os.replace(temporary, path)
                except BaseException:
                    Path(temporary).unlink(missing_ok=True)
                    raise
            except (OSError, ValueError):
                pass


def keep_dataclass_code(folder: Path) -> None:
    """From now on in this process, the methods of new dataclasses are compiled once and kept under
    `folder` for later processes (written at exit when some were added). Once per process; nothing
    when another module already put its own `exec` in `dataclasses`."""
    if _installed or "exec" in vars(dataclasses):
        return
    kept = _KeptCode(folder / f"dataclass-code-{_tag()}")
    dataclasses.exec = kept  # type: ignore[attr-defined]
    _installed.append(kept)
    atexit.register(kept.save)


def _tag() -> str:
    """What compiled code depends on: the bytecode format and the optimization level."""
    return f"{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}-O{sys.flags.optimize}"


def _read(path: Path) -> dict[str, CodeType]:
    try:
        with path.open("rb") as stream:
            found = marshal.load(stream)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {text: code for text, code in found.items() if type(text) is str and type(code) is CodeType}
