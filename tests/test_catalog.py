"""The flag catalog: live flags against deprecated aliases, defaults and choices resolved statically, how spellings parse."""

from __future__ import annotations

import textwrap

import pytest

from extractor.analysis.catalog import build_catalog
from extractor.analysis.modules import outline
from extractor.core.model import Flag
from extractor.core.serialize import SCHEMA_VERSION, dumps, flag_from_json, flag_json
from extractor.logic.expressions import UNKNOWN
from extractor.logic.launch import Catalog, parse_command
from extractor.products.extraction.extraction import module_loader
from extractor.products.extraction.output import validate
from extractor.sources.layout import find_layout
from extractor.sources.trees import release_tree

# Action classes shaped like SGLang's (argparse_actions.py): what each stores is read from its source.
ACTIONS = '''
import argparse

class DeprecatedAction(argparse.Action):
    def __init__(self, option_strings, dest, error_message=None, nargs=0, **kwargs):
        self.error_message = error_message
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if self.error_message is not None:
            parser.error(self.error_message)
        print("gone")

class OldSwitch(argparse.Action):
    def __init__(self, option_strings, dest, new_flag=None, nargs=0, default=False, **kwargs):
        super().__init__(option_strings, dest, nargs=nargs, default=default, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, True)

class OldConst(argparse.Action):
    def __init__(self, option_strings, dest, new_flag=None, const_value=None, nargs=0, **kwargs):
        self.const_value = const_value
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.const_value)

class OldName(argparse.Action):
    def __init__(self, option_strings, dest, new_flag=None, **kwargs):
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
'''

ACTIONS_PATH = "sglang/srt/arg_groups/argparse_actions.py"
IMPORT_ACTIONS = "from sglang.srt.arg_groups.argparse_actions import DeprecatedAction, OldConst, OldName, OldSwitch\n"


def catalog(files: dict[str, str]) -> dict[str, Flag]:
    modules = [outline(path, textwrap.dedent(text)) for path, text in files.items()]
    return {flag.name: flag for flag in build_catalog(modules)}


def server_args(fields: str, registrations: str, extra: str = "") -> dict[str, str]:
    """A 0.5.18-shaped server_args.py: annotated fields, then explicit add_argument calls."""
    body = textwrap.indent(textwrap.dedent(registrations).strip() or "pass", " " * 8) + "\n"
    text = (
        "import argparse\nfrom typing import List, Literal, Optional\nfrom sglang.srt.arg_groups.arg_utils import A, Arg\n"
        + IMPORT_ACTIONS + textwrap.dedent(extra) + "\n\nclass ServerArgs:\n" + textwrap.indent(textwrap.dedent(fields), "    ")
        + "\n    @staticmethod\n    def add_cli_args(parser):\n" + body
    )
    return {"sglang/srt/server_args.py": text, ACTIONS_PATH: ACTIONS}


# --- deprecated aliases do not overwrite the live flag ---------------------------------------------


def test_valued_alias_keeps_the_live_flags_attributes():
    files = server_args(
        '''
        backend: A[Optional[str], Arg(help="Sparse backend.", choices=["a", "b", "c"])] = None
        ''',
        '''
        parser.add_argument("--old-backend", dest="backend", action=OldName, default=argparse.SUPPRESS,
                            type=str, choices=["a", "b"], nargs="?", help="[Deprecated] Use --backend instead.")
        ''',
    )
    flag = catalog(files)["backend"]
    field_line = next(i for i, line in enumerate(files["sglang/srt/server_args.py"].splitlines(), 1) if "backend: A[" in line)
    assert flag.flags == ("--backend", "--old-backend")
    assert (flag.default, flag.default_value, flag.default_is_literal) == ("None", None, True)
    assert (flag.action, flag.nargs, flag.help, flag.choices) == (None, None, "Sparse backend.", ("a", "b", "c"))
    assert flag.deprecated is False
    assert flag.type == "Optional[str]"
    assert flag.line == field_line  # the annotated field, not the alias
    [alias] = flag.aliases
    assert (alias.flag, alias.deprecated, alias.takes_value, alias.nargs, alias.choices, alias.const) == (
        "--old-backend", True, True, "?", ("a", "b"), None)


def test_switch_and_const_aliases_take_no_value():
    flags = catalog(server_args(
        '''
        streaming: A[bool, "Stream disjoint segments."] = False
        graph_backend: A[Optional[Literal["full", "breakable", "disabled"]], "Graph backend."] = None
        ''',
        '''
        parser.add_argument("--stream-output", dest="streaming", action=OldSwitch, help="[Deprecated] Use --streaming.")
        parser.add_argument("--breakable-graph", dest="graph_backend", action=OldConst, const_value=BREAKABLE)
        parser.add_argument("--no-graph", dest="graph_backend", action=OldConst, const_value=Modes.DISABLED)
        parser.add_argument("--odd-graph", dest="graph_backend", action=OldConst, const_value=elsewhere.ODD)
        ''',
        extra='''
        BREAKABLE = "breakable"

        class Modes:
            DISABLED = "disabled"
        ''',
    ))
    streaming = flags["streaming"]
    assert (streaming.action, streaming.deprecated, streaming.help) == ("store_true", False, "Stream disjoint segments.")
    [alias] = streaming.aliases
    assert (alias.takes_value, alias.const, alias.const_value, alias.const_is_literal) == (False, "True", True, True)
    backend = flags["graph_backend"]
    assert backend.action is None and backend.deprecated is False
    assert backend.choices == ("full", "breakable", "disabled")
    consts = {a.flag: (a.takes_value, a.const, a.const_value, a.const_is_literal) for a in backend.aliases}
    assert consts == {
        "--breakable-graph": (False, "BREAKABLE", "breakable", True),
        "--no-graph": (False, "Modes.DISABLED", "disabled", True),
        "--odd-graph": (False, "elsewhere.ODD", None, False),  # not in the read modules: known by its text only
    }


def test_valued_const_alias_read_before_the_live_field():
    # 0.5.23: server_args.py registers `--monokernel-backend amd` before fields/exec_.py declares the field.
    files = {
        "sglang/srt/server_args.py": IMPORT_ACTIONS + textwrap.dedent('''
            def add_cli_args(parser):
                parser.add_argument("--monokernel-backend", action=OldConst, dest="mono", nargs=None,
                                    choices=["amd"], const_value=True, default=False,
                                    help="Deprecated. Use --mono instead of --monokernel-backend amd.")
            '''),
        "sglang/srt/arg_groups/fields/exec_.py": textwrap.dedent('''
            import msgspec
            from sglang.srt.arg_groups.arg_utils import A

            class Exec(msgspec.Struct):
                mono: A[bool, "Use the monokernel."] = False
            '''),
        ACTIONS_PATH: ACTIONS,
    }
    flag = catalog(files)["mono"]
    assert (flag.flags, flag.action, flag.nargs, flag.choices) == (("--mono", "--monokernel-backend"), "store_true", None, None)
    assert (flag.help, flag.deprecated, flag.file) == ("Use the monokernel.", False, "sglang/srt/arg_groups/fields/exec_.py")
    [alias] = flag.aliases
    assert (alias.takes_value, alias.nargs, alias.choices, alias.const_value) == (True, None, ("amd",), True)


def test_field_with_only_deprecated_spellings():
    flags = catalog(server_args(
        '''
        cp_mode: A[str, Arg(no_cli=True)] = "round-robin"
        legacy_cp: A[bool, Arg(no_cli=True)] = False
        ''',
        '''
        parser.add_argument("--cp-mode", dest="cp_mode", action=OldName, type=str, default=ServerArgs.cp_mode,
                            choices=["in-seq", "round-robin"], help="[Deprecated] Use --cp-strategy.")
        parser.add_argument("--old-cp-mode", dest="cp_mode", action=OldName, type=str, default=argparse.SUPPRESS,
                            choices=["in-seq", "round-robin"], help="[Deprecated] Use --cp-strategy.")
        parser.add_argument("--legacy-cp", action=OldSwitch, help="[Deprecated] Use --cp-strategy.")
        parser.add_argument("--old-legacy-cp", dest="legacy_cp", action=OldSwitch, help="[Deprecated] Use --cp-strategy.")
        ''',
    ))
    mode = flags["cp_mode"]
    assert mode.flags == ("--cp-mode", "--old-cp-mode")
    assert (mode.default, mode.default_value) == ('"round-robin"', "round-robin")  # not SUPPRESS from the second
    assert (mode.deprecated, mode.action, mode.type) == (True, "OldName", "str")
    assert [a.flag for a in mode.aliases] == ["--old-cp-mode"]
    legacy = flags["legacy_cp"]
    assert (legacy.deprecated, legacy.type, legacy.default_value, legacy.flags[0]) == (True, "bool", False, "--legacy-cp")
    assert [(a.flag, a.takes_value) for a in legacy.aliases] == [("--old-legacy-cp", False)]


@pytest.mark.parametrize(
    ("nargs", "expected"),
    [pytest.param("None", None, id="None-is-no-nargs"), ("'+'", "+"), ("2", "2"), ("'?'", "?")],
)
def test_nargs(nargs: str, expected: str | None):
    flags = catalog(server_args("", f'parser.add_argument("--sizes", type=int, nargs={nargs}, help="Sizes.")'))
    assert flags["sizes"].nargs == expected


# --- help that says the flag is deprecated --------------------------------------------------------


@pytest.mark.parametrize(
    ("help_text", "deprecated"),
    [
        ("[Deprecated] Use --new instead.", True),
        ("(Deprecated: use --new=auto) Enable the fusion.", True),
        ("(Deprecated, use --new) Legacy selector.", True),
        ("Deprecated. Use --new instead.", True),
        ("DEPRECATED alias for --new.", True),
        ("Note: --flag is deprecated now. Please use --new instead.", True),
        ("Replaces the deprecated --other.", False),
        ("Some values are deprecated: 'nsa' is an alias for 'dsa'.", False),
        ("Note: --other is deprecated now.", False),  # another flag's deprecation
        ("Enable the fusion.", False),
    ],
)
def test_help_deprecation(help_text: str, deprecated: bool):
    annotated = catalog(server_args(f"flag: A[bool, {help_text!r}] = False", ""))["flag"]
    registered = catalog(server_args("", f'parser.add_argument("--flag", action="store_true", help={help_text!r})'))["flag"]
    assert annotated.deprecated is deprecated
    assert registered.deprecated is deprecated


def test_deprecated_action_alone_is_deprecated():
    flag = catalog(server_args("", 'parser.add_argument("--gone", action=DeprecatedAction, help="Removed.")'))["gone"]
    assert flag.deprecated is True


def test_an_action_that_calls_parser_error_with_its_message_refuses_the_option():
    """0.5.18's `--enable-expert-distribution-metrics`: `DeprecatedAction` given `error_message=...`,
    whose `__call__` passes it to `parser.error`. argparse refuses the option with that message;
    without the message the same action only warns, and an action that never calls `parser.error`
    refuses nothing whatever it is given."""
    flags = catalog(server_args("", '''
        parser.add_argument("--gone", action=DeprecatedAction, error_message="--gone is no longer supported.")
        parser.add_argument("--old", action=DeprecatedAction, help="Deprecated.")
        parser.add_argument("--quiet", action=OldSwitch, error_message="never said")
        parser.add_argument("--tp-size", type=int, default=1)
    '''))
    assert flags["gone"].refused == "--gone is no longer supported."
    assert flags["old"].refused is None and flags["quiet"].refused is None
    assert flag_json(flags["gone"])["refused"] == "--gone is no longer supported."
    assert "refused" not in flag_json(flags["old"]) and flag_from_json(flag_json(flags["gone"])) == flags["gone"]
    command = parse_command(["--tp-size", "2", "--gone"], Catalog(tuple(flags.values())))
    assert [(e.flag, e.message) for e in command.errors] == [("--gone", "--gone is no longer supported.")]
    assert not parse_command(["--old", "--tp-size", "2"], Catalog(tuple(flags.values()))).errors


# --- dests linked in from_cli_args ---------------------------------------------------------------------


def test_dest_copied_into_a_field_gives_the_field_its_spellings():
    files = {"sglang/srt/server_args.py": textwrap.dedent('''
        import dataclasses

        @dataclasses.dataclass
        class ServerArgs:
            tp_size: int = 1
            dp_size: int = 1
            base_gpu_id: int = 0

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--tensor-parallel-size", "--tp-size", type=int, default=ServerArgs.tp_size,
                                    help="The tensor parallelism size.")
                parser.add_argument("--data-parallel-size", "--dp-size", type=int, default=ServerArgs.dp_size)
                parser.add_argument("--gpu-offset", type=int, default=2)

            @classmethod
            def from_cli_args(cls, args):
                args.tp_size = args.tensor_parallel_size
                args.dp_size = args.data_parallel_size
                return cls(**{a: getattr(args, a) for a in ("tp_size", "dp_size")})

            def __post_init__(self):
                self.base_gpu_id = self.gpu_offset  # the instance, not the namespace: no link
        ''')}
    flags = catalog(files)
    assert "tensor_parallel_size" not in flags and "data_parallel_size" not in flags
    tp = flags["tp_size"]
    assert tp.flags == ("--tp-size", "--tensor-parallel-size")
    assert (tp.default, tp.default_value, tp.help, tp.origins) == ("1", 1, "The tensor parallelism size.",
                                                                    ("dataclass-field", "add_argument"))
    assert flags["dp_size"].flags == ("--dp-size", "--data-parallel-size")
    assert flags["base_gpu_id"].flags == () and flags["gpu_offset"].flags == ("--gpu-offset",)


# --- defaults and choices resolved statically ------------------------------------------------------


DECLARED_DEFAULT = '''
def _declared_default(name: str):
    """A field default."""
    return next(field.default for field in msgspec.structs.fields(ServerArgs) if field.name == name)

def _by_attribute(name):
    return getattr(ServerArgs, name)

def _something_else(name):
    return next(field.default for field in msgspec.structs.fields(ServerArgs) if field.name != name)
'''


def test_defaults_through_a_helper_whose_source_returns_the_field_default():
    files = {
        "sglang/srt/server_args.py": "import msgspec\n" + textwrap.dedent(DECLARED_DEFAULT) + textwrap.dedent('''
            class ServerArgs:
                sampling: Optional[str] = "flashinfer"

            def add_cli_args(parser):
                parser.add_argument("--sampling", default=_declared_default("sampling"))
                parser.add_argument("--parser", default=_declared_default("parser"))
                parser.add_argument("--canary", default=_by_attribute("canary"))
                parser.add_argument("--other", default=_something_else("other"))
                parser.add_argument("--missing", default=_declared_default("nowhere"))
            '''),
        "sglang/srt/arg_groups/fields/serving.py": textwrap.dedent('''
            import msgspec

            class Serving(msgspec.Struct):
                parser: Optional[str] = None
                canary: str = "none"
                other: str = "x"
            '''),
    }
    flags = catalog(files)
    assert (flags["sampling"].default, flags["sampling"].default_value) == ('"flashinfer"', "flashinfer")
    assert (flags["parser"].default, flags["parser"].default_is_literal) == ("None", True)
    assert flags["canary"].default_value == "none"
    assert (flags["other"].default, flags["other"].default_is_literal) == ('_something_else("other")', False)
    assert (flags["missing"].default, flags["missing"].default_is_literal) == ('_declared_default("nowhere")', False)


CHOICES_MODULE = '''
import msgspec

BUILT_IN = frozenset({"flashinfer", "pytorch"})
SAMPLING = set(BUILT_IN)
QUANT = ["awq", "fp8"]
DRAFT_QUANT = [*QUANT, "unquant"]
GROWN = ["a"]
GROWN.append("b")
SHRUNK = ["a", "b"]
SHRUNK.remove("a")
'''


@pytest.mark.parametrize(
    ("setup", "choices", "expected"),
    [
        ("", "set(SAMPLING)", ("flashinfer", "pytorch")),
        ("", "sorted(DRAFT_QUANT)", ("awq", "fp8", "unquant")),
        ("", "list(QUANT) + ['none']", ("awq", "fp8", "none")),
        ("", "tuple(GROWN)", ("a", "b")),
        ("", "SHRUNK", None),
        pytest.param("local = set(SAMPLING)\nif flag_on():\n    local.add('oracle')", "local",
                     ("flashinfer", "pytorch", "oracle"), id="local-grown-on-some-path"),
        ("local = list(QUANT)\nlocal.extend(['x', 'y'])", "local", ("awq", "fp8", "x", "y")),
        ("local = list(QUANT)\nlocal.remove('awq')", "local", None),
        ("local = list(QUANT)\nlocal = ['z']", "local", None),
        ("local = parsers()", "['auto'] + local", None),
        ("", "[m.lower() for m in QUANT]", None),
    ],
)
def test_choices(setup: str, choices: str, expected: tuple | None):
    files = {
        "sglang/srt/arg_groups/choices.py": CHOICES_MODULE,
        "sglang/srt/server_args.py": "from sglang.srt.arg_groups.choices import DRAFT_QUANT, GROWN, QUANT, SAMPLING, SHRUNK\n"
        + "def add_cli_args(parser):\n" + textwrap.indent(setup, "    ") + "\n"
        + f"    parser.add_argument('--pick', type=str, choices={choices})\n",
    }
    assert catalog(files)["pick"].choices == expected


# Parser registries shaped like SGLang's: a class's dict of detectors (0.5.10, 0.5.18), and a function
# offering the loaded registry's names, else a list kept in a module of its own (0.5.23).
REGISTRY_MODULE = '''
class Detector: ...
class Other(Detector): ...

class FunctionCallParser:
    ToolCallParserEnum: dict = {"llama3": Detector, "qwen": Other}
'''
NAMES_MODULE = '''
TOOL_CALL_PARSER_NAMES = ["llama3", "qwen", "mistral"]
'''
CHOICE_HELPERS = '''
import sys

def names_when_unloaded():
    module = sys.modules.get("sglang.srt.function_call.function_call_parser")
    if module is not None:
        return list(module.FunctionCallParser.ToolCallParserEnum)
    from sglang.srt.function_call.parser_names import TOOL_CALL_PARSER_NAMES

    return list(TOOL_CALL_PARSER_NAMES)

def names_of(registry):
    return list(registry)

def names_if_flag():
    if flag_on():
        return ["a"]
    return ["b"]

def names_in_a_loop():
    for name in ("a", "b"):
        return [name]
'''


@pytest.mark.parametrize(
    ("choices", "expected"),
    [
        ("list(FunctionCallParser.ToolCallParserEnum.keys())", ("llama3", "qwen")),
        ("['auto'] + list(FunctionCallParser.ToolCallParserEnum)", ("auto", "llama3", "qwen")),
        ("FunctionCallParser.ToolCallParserEnum.keys()", ("llama3", "qwen")),
        ("['auto'] + names_when_unloaded()", ("auto", "llama3", "qwen", "mistral")),
        ("names_of(FunctionCallParser.ToolCallParserEnum)", None),
        ("names_if_flag()", None),
        ("names_in_a_loop()", None),
    ],
)
def test_choices_of_a_registry_read_through_other_modules(choices: str, expected: tuple | None):
    # The registry modules are outside the read files: the catalog loads them by name when a value
    # is read through them (`extraction.module_loader`).
    outside = {"sglang.srt.function_call.function_call_parser": REGISTRY_MODULE,
               "sglang.srt.function_call.parser_names": NAMES_MODULE}
    files = {
        "sglang/srt/arg_groups/choice_helpers.py": CHOICE_HELPERS,
        "sglang/srt/server_args.py": "from sglang.srt.function_call.function_call_parser import FunctionCallParser\n"
        "from sglang.srt.arg_groups.choice_helpers import names_if_flag, names_in_a_loop, names_of, names_when_unloaded\n"
        "def add_cli_args(parser):\n"
        f"    parser.add_argument('--tool-call-parser', type=str, choices={choices})\n",
    }
    modules = [outline(path, textwrap.dedent(text)) for path, text in files.items()]

    def load(dotted: str):
        text = outside.get(dotted)
        return outline(dotted.replace(".", "/") + ".py", textwrap.dedent(text)) if text is not None else None

    flags = {flag.name: flag for flag in build_catalog(modules, load=load)}
    assert flags["tool_call_parser"].choices == expected
    assert {flag.name: flag for flag in build_catalog(modules)}["tool_call_parser"].choices is None  # nothing loaded


def test_unknown_action_class_is_read_by_its_name():
    flags = catalog({"sglang/srt/server_args.py": textwrap.dedent('''
        from elsewhere import LegacyStoreTrueAction, LegacyStoreConstAction

        class ServerArgs:
            on: A[bool, "On."] = False
            mode: A[str, "Mode."] = "a"

        def add_cli_args(parser):
            parser.add_argument("--enable-on", dest="on", action=LegacyStoreTrueAction)
            parser.add_argument("--mode-b", dest="mode", action=LegacyStoreConstAction, const_value="b")
        ''')})
    assert [(a.takes_value, a.const_value) for a in flags["on"].aliases] == [(False, True)]
    assert [(a.takes_value, a.const_value) for a in flags["mode"].aliases] == [(False, "b")]


# --- the record: serialized, validated, old documents still load -------------------------------------


def test_aliases_round_trip_and_validate():
    flags = catalog(server_args(
        'graph_backend: A[Optional[str], "Graph backend."] = None',
        '''
        parser.add_argument("--no-graph", dest="graph_backend", action=OldConst, const_value="disabled")
        parser.add_argument("--odd-graph", dest="graph_backend", action=OldConst, const_value=elsewhere.ODD)
        parser.add_argument("--graph", dest="graph_backend", action=OldName, nargs="+", choices=("x", "y"))
        ''',
    ))
    flag = flags["graph_backend"]
    data = flag_json(flag)
    assert flag_from_json(data) == flag
    assert dumps(flag_json(flag_from_json(data))) == dumps(data)
    document = {"schema_version": SCHEMA_VERSION, "schema": "https://github.com/sglang-constraints/schemas/flags.schema.json",
                "generator": {"name": "t", "version": "0"}, "source": {"kind": "path", "label": "t"}, "warnings": [],
                "flags": [data]}
    validate(document, "flags.schema.json")
    old = {k: v for k, v in data.items() if k != "aliases"}
    assert flag_from_json(old).aliases == ()
    assert "aliases" not in flag_json(catalog(server_args('x: A[int, "X."] = 1', ""))["x"])


# --- check parses alias spellings as argparse would -----------------------------------------------------


@pytest.fixture(scope="module")
def check_catalog() -> Catalog:
    flags = catalog(server_args(
        '''
        model_path: A[str, "Model."] = "m"
        streaming: A[bool, "Stream."] = False
        graph_backend: A[Optional[Literal["full", "breakable", "disabled"]], "Graph backend."] = None
        mono: A[bool, "Monokernel."] = False
        sizes: A[Optional[List[int]], "Sizes."] = None
        ''',
        '''
        parser.add_argument("--stream-output", dest="streaming", action=OldSwitch)
        parser.add_argument("--breakable-graph", dest="graph_backend", action=OldConst, const_value="breakable")
        parser.add_argument("--odd-graph", dest="graph_backend", action=OldConst, const_value=elsewhere.ODD)
        parser.add_argument("--mono-backend", dest="mono", action=OldConst, nargs=None, choices=["amd"], const_value=True)
        parser.add_argument("--old-sizes", dest="sizes", action=OldName, type=int, nargs="+")
        parser.add_argument("--gone", action=DeprecatedAction)
        ''',
    ))
    return Catalog(flags.values())


@pytest.mark.parametrize(
    ("argv", "given", "errors"),
    [
        (["--stream-output", "--model-path", "x"], {"streaming": True, "model_path": "x"}, []),
        (["--breakable-graph", "--model-path", "x"], {"graph_backend": "breakable", "model_path": "x"}, []),
        (["--odd-graph"], {"graph_backend": UNKNOWN}, []),
        (["--mono-backend", "amd", "--model-path", "x"], {"mono": True, "model_path": "x"}, []),
        (["--mono-backend", "nvidia"], {"mono": UNKNOWN}, ["invalid choice: 'nvidia'"]),
        (["--mono-backend"], {"mono": UNKNOWN}, ["expected one argument"]),
        (["--old-sizes", "1", "2", "--stream-output"], {"sizes": [1, 2], "streaming": True}, []),
        (["--gone", "--model-path", "x"], {"gone": None, "model_path": "x"}, []),
        (["--stream-output=yes"], {"streaming": True}, ["ignored explicit argument"]),
    ],
)
def test_check_parses_aliases(check_catalog: Catalog, argv: list[str], given: dict, errors: list[str]):
    parsed = parse_command(argv, check_catalog)
    assert parsed.given == given
    assert len(parsed.errors) == len(errors)
    assert all(want in error.message for want, error in zip(errors, parsed.errors))


# --- real releases -----------------------------------------------------------------------------------


_CATALOGS: dict[str, dict[str, Flag]] = {}


@pytest.fixture(scope="module")
def release_catalog():
    """The catalog of a release, read with `ast` only (the catalog needs no libcst parse)."""

    def get(version: str) -> dict[str, Flag]:
        if version not in _CATALOGS:
            tree = release_tree(version)
            files = find_layout(tree.paths(), None).files
            modules = [outline(p, tree.read_text(p)) for p in files]
            _CATALOGS[version] = {f.name: f for f in build_catalog(modules, load=module_loader(tree, None))}
        return _CATALOGS[version]

    return get


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.10", "0.5.18", "0.5.23"])
def test_release_catalog_invariants(release_catalog, version: str):
    flags = release_catalog(version)
    for flag in flags.values():
        assert flag.nargs != "None", flag.name
        assert flag.default != "argparse.SUPPRESS", flag.name
        assert not flag.flags or flag.flags[0] not in {a.flag for a in flag.aliases}, flag.name
        assert {a.flag for a in flag.aliases} <= set(flag.flags), flag.name
        if flag.aliases and "annotated-field" in flag.origins and flag.file.endswith(("fields/exec_.py", "server_args.py")):
            # an alias never lends its attributes: a deprecated action on the flag is the flag's own
            assert not (flag.action or "").startswith("Deprecated") or flag.deprecated, flag.name


@pytest.mark.network
def test_release_0_5_10_parallel_sizes(release_catalog):
    flags = release_catalog("0.5.10")
    for size in ("tp_size", "dp_size", "pp_size", "ep_size", "attn_cp_size", "moe_dp_size"):
        flag = flags[size]
        assert flag.flags[0] == "--" + size.replace("_", "-"), size
        assert len(flag.flags) >= 2 and flag.help and flag.default_value == 1, size
    assert "tensor_parallel_size" not in flags
    stream = flags["incremental_streaming_output"]
    assert (stream.deprecated, stream.action) == (False, "store_true")
    assert [(a.flag, a.takes_value, a.const_value) for a in stream.aliases] == [("--stream-output", False, True)]


@pytest.mark.network
def test_release_0_5_18_live_flags_are_not_deprecated(release_catalog):
    flags = release_catalog("0.5.18")
    with_aliases = [f for f in flags.values() if f.aliases]
    live = [f for f in with_aliases if "annotated-field" in f.origins and not f.deprecated]
    assert len(live) >= 10
    for flag in live:
        assert not (flag.action or "").startswith("Deprecated"), flag.name
        assert all(a.deprecated for a in flag.aliases), flag.name
    assert flags["dsa_prefill_cp_mode"].default_value == "round-robin-split"
    prefill = flags["cuda_graph_backend_prefill"]
    assert prefill.action is None and all(not a.takes_value for a in prefill.aliases)
    assert flags["enable_flashinfer_allreduce_fusion"].deprecated is True


@pytest.mark.network
def test_release_0_5_23_monokernel_and_declared_defaults(release_catalog):
    flags = release_catalog("0.5.23")
    mono = flags["enable_amd_monokernel"]
    assert (mono.action, mono.deprecated, mono.choices, mono.nargs) == ("store_true", False, None, None)
    assert mono.file.endswith("fields/exec_.py")
    [alias] = mono.aliases
    assert (alias.flag, alias.takes_value, alias.choices, alias.const_value) == ("--monokernel-backend", True, ("amd",), True)
    for name in ("sampling_backend", "reasoning_parser", "tool_call_parser", "kv_canary_real_data"):
        assert flags[name].default_is_literal, name
    assert {"flashinfer", "pytorch"} <= set(flags["sampling_backend"].choices or ())
    catalog_ = Catalog(flags.values())
    parsed = parse_command(["--model-path", "m", "--monokernel-backend", "amd", "--disable-cuda-graph", "--port", "1"], catalog_)
    assert parsed.errors == [] and parsed.given["enable_amd_monokernel"] is True and parsed.given["port"] == 1


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.10", "0.5.18", "0.5.23"])
def test_release_parser_choices_come_from_their_registries(release_catalog, version: str):
    # 0.5.10 and 0.5.18: `list(FunctionCallParser.ToolCallParserEnum.keys())`; 0.5.23: a function
    # reading parser_names.py. The real launcher rejects `--tool-call-parser llama4` in all three.
    flags = release_catalog(version)
    tools, reasoning = flags["tool_call_parser"].choices, flags["reasoning_parser"].choices
    assert tools and {"llama3", "qwen25", "deepseekv3", "pythonic"} <= set(tools) and "llama4" not in tools
    assert reasoning and {"deepseek-r1", "qwen3", "glm45"} <= set(reasoning)
    assert ("auto" in tools) == (version != "0.5.10")
    parsed = parse_command(["--model-path", "m", "--tool-call-parser", "llama4"], Catalog(flags.values()))
    assert [e for e in parsed.errors if "--tool-call-parser" in str(e)]


def test_action_kwargs_carry_nargs_to_the_custom_action():
    # 0.5.23's --lora-paths: `Arg(action=LoRAPathAction, action_kwargs={"type": str, "nargs": "*"})`
    # takes several adapters; read as one value, a second adapter was "unrecognized".
    files = server_args(
        '''
        lora_paths: A[Optional[List[str]], Arg(help="Adapters.", action=OldName, action_kwargs={"type": str, "nargs": "*"})] = None
        ''',
        "",
    )
    flag = catalog(files)["lora_paths"]
    assert flag.nargs == "*"
    parsed = parse_command(["--lora-paths", "a", "b=c"], Catalog(tuple(catalog(files).values())))
    assert parsed.given["lora_paths"] == ["a", "b=c"] and not parsed.errors


def test_a_json_type_parser_rejects_what_it_cannot_parse():
    # 0.5.23: `Arg(type_parser=json.loads)` and `json_list_type` are argparse's `type`: a bad value is
    # an argparse error, not a later guard on a string.
    files = server_args(
        '''
        params: A[Optional[str], Arg(help="Sampling params.", type_parser=json.loads)] = None
        hooks: A[Optional[List[dict]], Arg(help="Hooks.", type_parser=json_list_type, nargs="+")] = None
        loose: A[Optional[dict], "A dict."] = None
        ''',
        "",
    )
    flags = catalog(files)
    assert (flags["params"].type, flags["hooks"].type) == ("json.loads", "json_list_type")
    parsed = parse_command(["--params", "x", "--hooks", "y", "--loose", "z"], Catalog(tuple(flags.values())))
    assert [e.message for e in parsed.errors] == [
        "argument --params: invalid loads value: 'x'",
        "argument --hooks: Invalid JSON list: y. Please provide a valid JSON list."]
    good = parse_command(["--params", '{"a": 1}', "--hooks", '[{"b": 2}]'], Catalog(tuple(flags.values())))
    assert not good.errors and good.given["params"] == {"a": 1}


def test_functions_scanned_before_are_not_read_again_and_the_catalog_is_the_same() -> None:
    """`build_catalog(modules, scans)`: a function whose scan is known (by digest) and declares no
    option is not read, so a module indexed from the cache with no class and only such functions is
    never parsed; the flags are those of a catalog built from nothing."""
    from extractor.analysis.modules import outline_key

    files = {
        "sglang/srt/server_args.py": textwrap.dedent('''
            class ServerArgs:
                tp_size: int = 1

                @staticmethod
                def add_cli_args(parser):
                    parser.add_argument("--tp-size", type=int, default=ServerArgs.tp_size)
                    parser.add_argument("--tensor-parallel-size", dest="tensor_parallel_size", type=int)

            def from_cli_args(args):
                args.tp_size = args.tensor_parallel_size
        '''),
        "sglang/srt/helpers.py": "def check(args):\n    if args.tp_size > 8:\n        raise ValueError('too many')\n",
    }
    fresh = [outline(path, text) for path, text in files.items()]
    scans: dict = {}
    expected = build_catalog(fresh, scans)
    assert len(scans) == 3 and sorted(scans.values()) == [
        (False, ()), (False, (("tp_size", "tensor_parallel_size"),)), (True, ())]
    kept = {outline_key(m.path, m.text): m.outline() for m in fresh}
    again = [outline(path, text, kept) for path, text in files.items()]
    assert build_catalog(again, dict(scans)) == expected
    helpers = again[1]
    assert helpers._syntax is None  # no class, no option declared: never parsed
    assert again[0]._syntax is not None  # a class and `add_argument` calls: read
    assert build_catalog([outline(path, text, kept) for path, text in files.items()], {}) == expected
