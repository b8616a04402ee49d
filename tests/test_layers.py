"""The package's layers (`extractor.LAYERS`): every import points down or stays in its layer, no module
imports itself back through others, each module imports alone, and no private name crosses modules.

Module-level, function-local and TYPE_CHECKING imports all count: a lazy import is still an import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import extractor
from extractor import LAYERS

PACKAGE = Path(extractor.__file__).resolve().parent


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by the name of its `__init__`)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("extractor", *path.relative_to(PACKAGE).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = module_names()


def layer(module: str) -> int:
    """The layer's rank: the package root lowest, then `LAYERS` in order; `__main__` stands with `cli`."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    name = "cli" if parts[1] == "__main__" else parts[1]
    return LAYERS.index(name)


def imports(module: str) -> list[tuple[str, list[str]]]:
    """The package modules `module` imports, each with the names taken, wherever the import stands."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] == "extractor"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "extractor":
                continue
            names = [a.name for a in node.names]
            submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            found += [(s, []) for s in submodules]
            if len(submodules) < len(names):
                found.append((target, [n for n in names if f"{target}.{n}" not in MODULES]))
    return found


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for target, _ in imports(module):
            assert target in MODULES, f"{module} imports {target}, which is no module of the package"
            if target != module:
                edges[module].add(target)
    return edges


def test_every_package_folder_is_a_known_layer() -> None:
    for module in MODULES:
        layer(module)  # ValueError names a folder that LAYERS does not


def test_no_import_points_up() -> None:
    upward = [f"{m} ({LAYERS[layer(m)] if layer(m) >= 0 else 'root'}) -> {t} ({LAYERS[layer(t)]})"
              for m, targets in graph().items() for t in sorted(targets) if layer(t) > layer(m)]
    assert upward == []


# The concerns of `products/`, in the order they may import each other (a later one from an earlier).
PRODUCTS = ("check", "extraction", "reuse", "history", "schema", "site")


def test_products_are_sub_packages_importing_only_earlier_ones() -> None:
    def concern(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 3 and parts[1] == "products" else None

    loose = [m for m in MODULES if m.startswith("extractor.products.") and m.count(".") == 2
             and MODULES[m].name != "__init__.py"]
    assert loose == []  # no module lies loose beside the sub-packages
    assert {m.split(".")[2] for m in MODULES if m.startswith("extractor.products.")} == set(PRODUCTS)
    later = [f"{m} -> {t}" for m, targets in graph().items() for t in sorted(targets)
             if concern(m) and concern(t) and PRODUCTS.index(concern(t)) > PRODUCTS.index(concern(m))]
    assert later == []


def test_no_import_cycle() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for target in sorted(edges[module]):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(edges):
        if module not in state:
            cycle = visit(module)
            assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_private_name_crosses_modules() -> None:
    crossing = [f"{m} takes {n} from {t}" for m in MODULES for t, names in imports(m)
                for n in names if n.startswith("_") and not n.startswith("__")]
    assert crossing == []


def test_every_module_starts_with_a_line_saying_its_purpose() -> None:
    for module, path in MODULES.items():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc and doc.split("\n")[0].strip(), f"{module} has no opening docstring"


def test_each_module_imports_alone() -> None:
    """Each module imported first, in a fresh package state: an order-dependent cycle would fail here."""
    script = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    for loaded in [m for m in sys.modules if m == 'extractor' or m.startswith('extractor.')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
    )
    names = [m for m in MODULES if not m.endswith("__main__")]  # __main__ runs the CLI
    result = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", LAYERS)
def test_each_layer_is_a_package_or_the_cli(name: str) -> None:
    assert (PACKAGE / name / "__init__.py").is_file() or (PACKAGE / f"{name}.py").is_file()


MAX_MODULE_LINES = 700  # a module a newcomer reads whole; past it, it is split along its seams


def test_no_module_is_over_700_lines() -> None:
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_every_package_is_installed() -> None:
    """pyproject.toml names the packages a wheel holds: each folder with an `__init__.py`."""
    import tomllib

    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    folders = {".".join(("extractor", *p.parent.relative_to(PACKAGE).parts)) for p in PACKAGE.rglob("__init__.py")}
    assert folders <= listed


FORBIDDEN_IN_CONSUMERS = ("libcst", "networkx", "jsonschema", "extractor.analysis", "extractor.sources")


# Runs the command line tool and prints, last on stderr, the modules its process loaded.
_LOADED_MODULES = (
    "import json, runpy, sys\n"
    "sys.argv = ['sglang-constraints', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('extractor', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
)


def run_loading(argv: list[str], cache: Path) -> tuple[str, list[str]]:
    """What the command printed, and the modules its process loaded (with its own extraction cache)."""
    env = {**__import__("os").environ, "SGLANG_CONSTRAINTS_EXTRACTION_CACHE": str(cache)}
    result = subprocess.run([sys.executable, "-c", _LOADED_MODULES, *argv], capture_output=True, text=True, env=env)
    return result.stdout, __import__("json").loads(result.stderr.strip().splitlines()[-1])


def fixture_rules(folder: Path) -> Path:
    """rules.json and flags.json of the render_basic fixture, written into `folder`."""
    from extractor.products.extraction.extraction import extract
    from extractor.products.extraction.output import flags_document, rules_document, write_documents
    from extractor.sources.trees import path_tree

    ex = extract(path_tree(PACKAGE.parent / "tests" / "fixtures" / "render_basic" / "src"))
    write_documents(folder, {"rules.json": (rules_document(ex), "rules.schema.json"),
                             "flags.json": (flags_document(ex), "flags.schema.json")})
    return folder / "rules.json"


@pytest.mark.parametrize("command", [
    ["check", "--rules", "{rules}", "--", "python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"],
    ["check", "--rules", "{rules}", "--file", "{launch}"],
    ["explain", "--rules", "{rules}", "Offloading the KV cache is only supported for decode side."],
], ids=["check", "check --file", "explain"])
def test_consumers_import_only_what_reads_rules(tmp_path: Path, command: list[str]) -> None:
    """`check` and `explain` read rules: they never load the analysis, the sources, libcst, networkx or
    jsonschema (a second run, once the rule set's index is made, as in an editor or a hook)."""
    rules = fixture_rules(tmp_path)
    launch = tmp_path / "serve.sh"
    launch.write_text("python -m sglang.launch_server --model-path m --tp 2\n", encoding="utf-8")
    argv = [part.format(rules=rules, launch=launch) for part in command]
    run_loading(argv, tmp_path / "cache")
    if command[0] == "check":  # evaluated again, the answer the run above kept not read
        argv = [*argv[:3], "--fresh", *argv[3:]]
    _, loaded = run_loading(argv, tmp_path / "cache")
    assert [m for m in loaded if m.startswith(FORBIDDEN_IN_CONSUMERS)] == []
    assert "extractor.logic.evaluation" in loaded or command[0] == "explain"
    if "--file" not in command and command[0] == "check":  # a command line, as text: only what it needs
        assert [m for m in loaded if m.startswith(NOT_FOR_ONE_COMMAND)] == []


@pytest.mark.parametrize("files", [False, True], ids=["check", "check --file"])
def test_a_check_answered_before_reads_no_rules(tmp_path: Path, files: bool) -> None:
    """A launch line checked before on the same rules, code and options is answered from what that
    check kept: the run reads neither the rule set's index nor evaluates (no linter, no formulas, no
    YAML reader), and prints what the first run printed."""
    launch = tmp_path / "serve.sh"
    launch.write_text("python -m sglang.launch_server --model-path m --tp 2 --pp 2\n", encoding="utf-8")
    argv = ["check", "--rules", str(fixture_rules(tmp_path)),
            *(["--file", str(launch)] if files else ["--", "--model-path", "m", "--tp", "2", "--pp", "2"])]
    (first, loaded_first), (again, loaded) = (run_loading(argv, tmp_path / "cache") for _ in range(2))
    assert first and again == first
    assert "extractor.logic.evaluation" in loaded_first
    assert [m for m in loaded if m.startswith(("extractor.logic.evaluation", "extractor.products.check",
                                               "extractor.core.model", "extractor.core.formula", "yaml"))] == []
    if sys.platform.startswith("linux"):  # the XDG cache folder is read without platformdirs (`core.places`)
        assert "platformdirs" not in loaded
    # Only check's own parser is built: no other command's module is imported (`cli.build_parser`).
    assert sorted(m for m in loaded if m.startswith("extractor.commands.")) == ["extractor.commands.check"]


# What the text report of one command line does not need: YAML's reader (launch files), the JSON writer
# of documents, the site's pages, the process pools of history and flag history, what builds the site
# (subprocess), sorts releases (packaging) or reads `1.5G` exactly (decimal).
NOT_FOR_ONE_COMMAND = ("yaml", "orjson", "extractor.products.site", "concurrent.futures", "subprocess", "packaging",
                       "decimal")
