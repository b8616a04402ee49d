"""Loading the checkpoint's config: transformers' `AutoConfig.from_pretrained` raises ValueError for a
config.json whose `model_type` the version a release pins does not know, and SGLang raises it again.

The made-up package imitates SGLang 0.5.10's `get_config` (names and messages of the package are
ours): a try body of one `AutoConfig.from_pretrained(model, trust_remote_code=..., **kwargs)`, and
`except ValueError as e: if not "deepseek_v32" in str(e): raise e`, reached from a function handed
the server arguments (as 0.5.10's `ModelConfig` is); its config modules declare the
model types SGLang registers. The made-up transformers has both layouts of its table (the older one
in `configuration_auto.py`, the newer completed there from `auto_mappings.py`) and its message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.analysis.config_loader import config_loader
from extractor.core.serialize import helpers_json, helpers_of
from extractor.logic.launch import parse_command
from extractor.logic.messages import filled_message, known_message, other_words
from extractor.logic.platforms import find_platform
from extractor.products.check.fixes import beyond_flags
from extractor.products.check.linter import check, launch_facts
from extractor.products.check.words import Flags
from extractor.products.extraction.extraction import extract
from extractor.products.reuse.rulesets import ruleset_of
from extractor.products.site.explain import explain_text
from extractor.products.site.pages import meaning, page
from extractor.sources.trees import path_tree
from tests.packages import write_package

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses

from sglang.srt.utils.hf_transformers_utils import get_hf_config


@dataclasses.dataclass
class ServerArgs:
    model_path: str = None
    trust_remote_code: bool = False
    page_size: int = 1

    def __post_init__(self):
        self._handle_model_specific_adjustments()
        if self.page_size < 1:
            raise ValueError("The page size must be at least 1.")

    def _handle_model_specific_adjustments(self):
        hf_config = get_hf_config(self)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--trust-remote-code", action="store_true")
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
''',
    "sglang/srt/utils/__init__.py": "",
    "sglang/srt/utils/hf_transformers_utils.py": '''
from transformers import AutoConfig


def get_config(model, trust_remote_code, revision=None, **kwargs):
    try:
        config = AutoConfig.from_pretrained(
            model, trust_remote_code=trust_remote_code, revision=revision, **kwargs
        )
    except ValueError as e:
        if not "deepseek_v32" in str(e):
            raise e
        config = load_deepseek_v32(model)
    return config


def load_deepseek_v32(model):
    return model


def get_hf_config(server_args):
    return get_config(server_args.model_path, trust_remote_code=server_args.trust_remote_code, revision=None)
''',
    "sglang/srt/configs/__init__.py": "",
    "sglang/srt/configs/kimi_vl.py": '''
class KimiVLConfig:
    model_type = "kimi_vl"
''',
}
MESSAGE = ("The checkpoint you are trying to load has model type `{model_type}` but Transformers does not "
           "recognize this architecture.")
OLDER = {"transformers/models/auto/configuration_auto.py": '''
CONFIG_MAPPING_NAMES = OrderedDict[str, str](
    [
        ("llama", "LlamaConfig"),
        ("qwen3", "Qwen3Config"),
    ]
)


class AutoConfig:
    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        config_dict, unused = get_config_dict(pretrained_model_name_or_path)
        try:
            config_class = CONFIG_MAPPING[config_dict["model_type"]]
        except KeyError:
            raise ValueError(
                f"The checkpoint you are trying to load has model type `{config_dict['model_type']}` "
                "but Transformers does not recognize this architecture."
            )
        raise ValueError(
            f"Unrecognized model in {pretrained_model_name_or_path}. "
            f"Should have a `model_type` key in its {CONFIG_NAME}."
        )
'''}
# Where transformers says a folder's own code is not trusted: the shape of its `resolve_trust_remote_code`
# (a message per kind of place, then one raise that goes on after it), in words of ours.
OLDER["transformers/dynamic_module_utils.py"] = '''
import os


def resolve_trust_remote_code(trust_remote_code, model_name, has_local_code, has_remote_code, error_message=None,
                              upstream_repo=None):
    if error_message is None:
        if upstream_repo is not None:
            error_message = f"{model_name} runs the code of {upstream_repo}."
        elif os.path.isdir(model_name):
            error_message = f"The folder {model_name} holds code of its own ({os.path.abspath(model_name)})."
        else:
            error_message = f"The repository {model_name} holds code of its own."
    if has_remote_code and not has_local_code and not trust_remote_code:
        raise ValueError(
            f"{error_message} Read it at {model_name}.\\n"
            f"Pass `trust_remote_code=True` to run it."
        )
    return trust_remote_code
'''
CUSTOM_CODE = "The folder {path} holds code of its own ({abspath}). Read it at {path}.\nPass `trust_remote_code=True` to run it."
NEWER = {
    "transformers/dynamic_module_utils.py": OLDER["transformers/dynamic_module_utils.py"],
    "transformers/models/auto/auto_mappings.py": 'CONFIG_MAPPING_NAMES = OrderedDict([("llama", "LlamaConfig")])\n',
    "transformers/models/auto/configuration_auto.py": OLDER["transformers/models/auto/configuration_auto.py"].replace(
        'CONFIG_MAPPING_NAMES = OrderedDict[str, str](\n    [\n        ("llama", "LlamaConfig"),\n'
        '        ("qwen3", "Qwen3Config"),\n    ]\n)',
        'from .auto_mappings import CONFIG_MAPPING_NAMES\n\nCONFIG_MAPPING_NAMES.update({"qwen3": "Qwen3Config"})\n'
        'CONFIG_MAPPING_NAMES = OrderedDict(**{"gpt-sw3": "GPT2Config"}, **CONFIG_MAPPING_NAMES)'),
}


@pytest.mark.parametrize("files", [OLDER, NEWER], ids=["older", "newer"])
def test_the_model_types_and_the_message_are_read_from_either_layout_of_transformers(files) -> None:
    loader = config_loader("9.1.0", files, {"sglang/srt/configs/kimi_vl.py": PACKAGE["sglang/srt/configs/kimi_vl.py"]})
    assert loader is not None and loader.transformers == "9.1.0"
    assert set(loader.model_types) == {"llama", "qwen3", "kimi_vl"} | ({"gpt-sw3"} if files is NEWER else set())
    assert loader.unknown_type_message == MESSAGE
    assert loader.untyped_message == "Unrecognized model in {path}. Should have a `model_type` key in its config.json."
    assert loader.custom_code_message == CUSTOM_CODE
    assert config_loader("9.1.0", {"transformers/models/auto/configuration_auto.py": "X = 1\n"}, {}) is None


def _ruleset(folder: Path, library: dict[str, str] | None):
    """The package extracted from a tree that pins transformers 9.1.0 (`library` its files), or pins nothing."""
    tree = path_tree(write_package(folder, PACKAGE))
    if library is not None:
        tree.pins = lambda: {"transformers": "9.1.0"}  # type: ignore[method-assign]
        tree._library = lambda package, version, path: library[path].encode() if path in library else None  # type: ignore[method-assign]
    return ruleset_of(extract(tree), tree)


@pytest.fixture(scope="module")
def pinned(tmp_path_factory):
    return _ruleset(tmp_path_factory.mktemp("pinned"), OLDER)


def _model(folder: Path, config: dict) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(folder)


def _first(report) -> tuple[str, str] | None:
    definite = report.definite
    return (definite[0].rule.function, definite[0].rule.message) if definite else None


@pytest.mark.parametrize("config, flags, first", [
    ({"model_type": "gemma4"}, [], ("get_config", MESSAGE)),  # unknown to transformers 9.1.0: raised again
    ({"model_type": "gemma4"}, ["--page-size", "0"], ("get_config", MESSAGE)),  # before the later guard
    ({"model_type": "llama"}, ["--page-size", "0"], ("ServerArgs.__post_init__", "The page size must be at least 1.")),
    ({"model_type": "kimi_vl"}, [], None),  # SGLang's own config class registers it
    ({"model_type": "deepseek_v32"}, [], None),  # unknown, but the handler loads it itself
    ({"model_type": "gemma4", "auto_map": {"AutoConfig": "m.C"}}, ["--trust-remote-code"], None),  # its own code
])
def test_a_model_type_the_pinned_transformers_does_not_know_is_the_launchs_first_error(pinned, tmp_path: Path,
                                                                                       config, flags, first) -> None:
    argv = ["--model-path", _model(tmp_path / "model", config), *flags]
    assert _first(check(pinned, argv, platform=find_platform("H100"))) == first


def test_without_a_pinned_transformers_or_a_local_config_the_load_is_only_possible(pinned, tmp_path: Path) -> None:
    """Possible where the load's outcome or its words are not known here: no transformers pinned, a
    Hub id not at hand, code of another repository (what transformers says of it is not read)."""
    unpinned = _ruleset(tmp_path / "unpinned", None)
    gemma = _model(tmp_path / "gemma", {"model_type": "gemma4"})
    assert unpinned.library.config_loader is None
    for ruleset, argv in ((unpinned, ["--model-path", gemma]), (pinned, ["--model-path", "org/not-here"]),
                          (pinned, ["--model-path", _model(tmp_path / "remote", {"model_type": "gemma4",
                                                                                 "auto_map": {"AutoConfig": "org/r--m.C"}})])):
        report = check(ruleset, argv, platform=find_platform("H100"))
        assert not report.definite
        assert any(f.rule.function == "get_config" for f in report.findings)  # possible: not decided here
    # Code of its own in the folder, not trusted: transformers' words are known, and have no
    # "deepseek_v32" in them, so `get_config` raises them again.
    custom = _model(tmp_path / "custom", {"model_type": "gemma4", "auto_map": {"AutoConfig": "m.C"}})
    report = check(pinned, ["--model-path", custom], platform=find_platform("H100"))
    assert _first(report) == ("get_config", MESSAGE)
    assert filled_message(report.definite[0].rule, report.evaluator.context).startswith(f"The folder {custom} holds")


def test_check_says_what_transformers_says_and_rules_json_keeps_what_decides_it(pinned, tmp_path: Path) -> None:
    report = check(pinned, ["--model-path", _model(tmp_path / "m", {"model_type": "gemma4"})], platform=find_platform("H100"))
    assert filled_message(report.definite[0].rule, report.evaluator.context) == MESSAGE.replace("{model_type}", "gemma4")
    document = {"helpers": json.loads(json.dumps(helpers_json(pinned.helpers)))}
    assert helpers_of(document) == pinned.helpers
    assert document["helpers"]["config_loader"]["model_types"] == ["kimi_vl", "llama", "qwen3"]


def _stops_at_the_load(ruleset, model: str, model_type: str, where: tuple[str, str]) -> None:
    """The launch's first definite error is the config load at `where` (file, function), with what
    transformers says of `model_type`."""
    report = check(ruleset, ["--model-path", model], platform=find_platform("H100"))
    first = report.definite[0].rule
    assert (first.location.file, first.function) == where
    assert filled_message(first, report.evaluator.context).startswith(
        f"The checkpoint you are trying to load has model type `{model_type}` but Transformers does not recognize")


@pytest.mark.network
def test_0_5_10_stops_at_a_model_type_the_transformers_it_pins_does_not_know(real_extraction, tmp_path: Path) -> None:
    """SGLang 0.5.10 pins transformers 5.3.0, which has no Gemma 4: a launch of a Gemma 4 checkpoint
    ends in `get_config`, which raises the load's ValueError again (as `make verify` saw the real
    SGLang do, 73 of its user commands on H100); a Llama checkpoint loads."""
    ruleset = ruleset_of(real_extraction("0.5.10"))
    assert ruleset.helpers.config_loader is not None and ruleset.helpers.config_loader.transformers == "5.3.0"
    gemma = _model(tmp_path / "gemma", {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4"})
    _stops_at_the_load(ruleset, gemma, "gemma4", ("sglang/srt/utils/hf_transformers_utils.py", "get_config"))
    llama = _model(tmp_path / "llama", {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                                        "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
                                        "vocab_size": 128256, "max_position_embeddings": 131072})
    loaded = check(ruleset, ["--model-path", llama], platform=find_platform("H100"))
    assert not [f for f in loaded.findings if f.rule.function == "get_config" and "model type" in f.rule.message]


@pytest.mark.network
@pytest.mark.parametrize("release", ["0.5.18", "0.5.23"])
def test_from_0_5_18_the_hf_parser_s_load_stops_a_model_type_transformers_does_not_know(real_extraction, tmp_path: Path,
                                                                                         release) -> None:
    """0.5.18 to 0.5.23 load the config through the parser registered as "hf" (`parser.parse(...)` of
    `get_model_config_parser(name)`), whose bare `AutoConfig.from_pretrained` raises for a model type
    the pinned transformers does not know (the real 0.5.23 stops there, `config.py:228`); a Llama
    checkpoint loads, and in 0.5.23 a raw state-space one (no model type, `d_model` and `ssm_cfg`)."""
    ruleset = ruleset_of(real_extraction(release))
    unknown = _model(tmp_path / "unknown", {"architectures": ["FooForCausalLM"], "model_type": "foo_unknown"})
    _stops_at_the_load(ruleset, unknown, "foo_unknown", ("sglang/srt/utils/hf_transformers/config.py", "HfModelConfigParser.parse"))
    # No model type and no raw state-space keys: transformers' own words, with the path it was given.
    untyped = _model(tmp_path / "untyped", {"hidden_size": 64})
    report = check(ruleset, ["--model-path", untyped], platform=find_platform("H100"))
    assert report.definite[0].rule.function == "HfModelConfigParser.parse"
    assert filled_message(report.definite[0].rule, report.evaluator.context) == \
        f"Unrecognized model in {untyped}. Should have a `model_type` key in its config.json."
    # A folder with code of its own, not trusted: what transformers' `resolve_trust_remote_code` says.
    custom = _model(tmp_path / "custom", {"model_type": "foo_custom", "auto_map": {"AutoConfig": "configuration_foo.C"}})
    report = check(ruleset, ["--model-path", custom], platform=find_platform("H100"))
    assert filled_message(report.definite[0].rule, report.evaluator.context) == (
        f"The repository {custom} contains custom code which must be executed to correctly load the model. You can "
        f"inspect the repository content at {custom} .\n You can inspect the repository content at https://hf.co/{custom}."
        "\nPlease pass the argument `trust_remote_code=True` to allow custom code to be run.")
    raw = {"d_model": 768, "n_layer": 24, "ssm_cfg": {}, "vocab_size": 50277}
    for config in ({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, *([raw] if release == "0.5.23" else [])):
        loaded = check(ruleset, ["--model-path", _model(tmp_path / str(len(config)), config)], platform=find_platform("H100"))
        assert not [f for f in loaded.definite if f.rule.function == "HfModelConfigParser.parse"]


def test_no_flag_avoids_it_and_what_decides_it_is_the_checkpoint_s_config(pinned, tmp_path: Path) -> None:
    """No change of flags avoids a config transformers cannot load, and what decides it is the
    checkpoint's config.json (it said "the GPU or platform; the model's config": the platform tests
    on the paths that load it only say where the load happens first); the page says the failure is
    its own test, and that what transformers says does not name the type the handler loads itself."""
    argv = ["--model-path", _model(tmp_path / "m", {"model_type": "gemma4"})]
    platform = find_platform("H100")
    rule = check(pinned, argv, platform=platform).definite[0].rule
    facts = launch_facts(parse_command(argv, pinned.catalog), platform, None, None, pinned.library, {}, pinned.envs)
    assert beyond_flags(pinned, rule, argv, facts=facts).text() == (
        "no change of flags avoids it here; it depends on the checkpoint's config.json: its model type is none "
        "the transformers this release pins knows")
    assert meaning(rule, Flags(pinned.flags), []) == (
        "Rejected when transformers does not load the checkpoint's config.json (no config class of the transformers "
        "this release pins has its `model_type`, it has none, or it names code of its own that the launch does not "
        "trust) and what transformers says does not include `deepseek_v32`.")


# SGLang 0.5.18 to 0.5.23 ask a registry of parsers (names of the package are ours): `get_config`
# resolves "auto" by the model's name, takes the parser registered under that key, and the "hf"
# parser tries a raw checkpoint's config dict before a bare `AutoConfig.from_pretrained` (no `try`
# around it but the caller's, whose handler raises again when the model is no adapter).
REGISTRY = {
    **{path: text for path, text in PACKAGE.items() if path != "sglang/srt/utils/hf_transformers_utils.py"},
    "sglang/srt/server_args.py": PACKAGE["sglang/srt/server_args.py"].replace(
        "    page_size: int = 1\n", '    page_size: int = 1\n    model_config_parser: str = "auto"\n').replace(
        '        parser.add_argument("--page-size"',
        '        parser.add_argument("--model-config-parser", type=str, default=ServerArgs.model_config_parser)\n'
        '        parser.add_argument("--page-size"'),
    # A module outside configs/ that registers a config class of its own (0.5.23's `common.py`).
    "sglang/srt/utils/aliases.py": '''
from sglang.srt.configs import _CONFIG_REGISTRY


class _MoonConfigAlias:
    model_type = "moon_k2"


_CONFIG_REGISTRY["moon_k2"] = _MoonConfigAlias
''',
    "sglang/srt/configs/parser_registry.py": '''
from abc import ABC, abstractmethod

_PARSERS = {}


class ParserBase(ABC):
    @abstractmethod
    def parse(self, model, trust_remote_code, revision=None, **kwargs):
        raise NotImplementedError


def register_parser(name):
    def _wrapper(cls):
        _PARSERS[name] = cls
        return cls
    return _wrapper


def get_parser(name) -> ParserBase:
    if name not in _PARSERS:
        raise ValueError(f"Unknown parser {name!r}.")
    return _PARSERS[name]()
''',
    "sglang/srt/utils/hf_transformers_utils.py": '''
from transformers import AutoConfig, PretrainedConfig

from sglang.srt.configs.parser_registry import ParserBase, get_parser, register_parser


class RawStateConfig:
    def __init__(self, width):
        self.width = width


def _try_raw_state_config(model, revision, **kwargs):
    config_dict, _ = PretrainedConfig.get_config_dict(model, revision=revision, **kwargs)
    if config_dict.get("model_type") or "d_model" not in config_dict:
        return None
    return RawStateConfig(width=config_dict["d_model"])


def is_native_model(name):
    return "native-format" in str(name).lower()


@register_parser("hf")
class HfParser(ParserBase):
    def parse(self, model, trust_remote_code, revision=None, **kwargs):
        config = _try_raw_state_config(model, revision, **kwargs)
        if config is None:
            config = AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code, revision=revision, **kwargs)
        return config


@register_parser("native")
class NativeParser(ParserBase):
    def parse(self, model, trust_remote_code, revision=None, **kwargs):
        return load_native(model)


def load_native(model):
    return model


def load_adapter(model):
    return None


def get_config(model, trust_remote_code, revision=None, model_config_parser="auto", **kwargs):
    if model_config_parser == "auto":
        model_config_parser = "native" if is_native_model(model) else "hf"
    parser = get_parser(model_config_parser)
    try:
        config = parser.parse(model, trust_remote_code=trust_remote_code, revision=revision, **kwargs)
    except (OSError, ValueError):
        meta = load_adapter(model)
        if meta is None:
            raise
        config = parser.parse(meta["base"], trust_remote_code=trust_remote_code)
    return config


def get_hf_config(server_args):
    return get_config(server_args.model_path, trust_remote_code=server_args.trust_remote_code,
                      model_config_parser=server_args.model_config_parser)
''',
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    tree = path_tree(write_package(tmp_path_factory.mktemp("registry"), REGISTRY))
    tree.pins = lambda: {"transformers": "9.1.0"}  # type: ignore[method-assign]
    tree._library = lambda package, version, path: OLDER.get(path, "").encode() or None  # type: ignore[method-assign]
    return ruleset_of(extract(tree), tree)


@pytest.mark.parametrize("folder, config, flags, loads", [
    ("m", {"model_type": "gemma4"}, [], False),  # the "hf" parser's bare load: transformers raises
    ("m", {"model_type": "llama"}, [], True),
    ("m", {"model_type": "kimi_vl"}, [], True),  # a config class of configs/
    ("m", {"model_type": "moon_k2"}, [], True),  # registered by a module outside configs/
    ("m", {"d_model": 64}, [], True),  # a raw checkpoint: its config dict is read, no load is tried
    ("m", {"hidden_size": 64}, [], False),  # no model type, not raw: transformers raises
    ("native-format-m", {"model_type": "gemma4"}, [], True),  # "auto" takes the native parser by the name
    ("m", {"model_type": "gemma4"}, ["--model-config-parser", "native"], True),
])
def test_a_parser_taken_from_a_registry_loads_the_config_as_its_key_says(registry, tmp_path: Path, folder, config,
                                                                          flags, loads) -> None:
    argv = ["--model-path", _model(tmp_path / folder, config), *flags]
    report = check(registry, argv, platform=find_platform("H100"))
    assert _first(report) == (None if loads else ("HfParser.parse", MESSAGE))
    if not loads:  # transformers' own words: of the model type, or of a config that has none
        said = filled_message(report.definite[0].rule, report.evaluator.context)
        assert said == (MESSAGE.replace("{model_type}", config["model_type"]) if "model_type" in config else
                        f"Unrecognized model in {argv[1]}. Should have a `model_type` key in its config.json.")


def test_a_registered_parser_is_reached_only_under_its_key(registry) -> None:
    """The load's rule is reached through `get_parser(...)`'s "hf" class only; the native parser's
    method adds no load, and the abstract method of the base is never walked."""
    loads = [r for r in registry.by_id.values() if r.location.file.endswith("hf_transformers_utils.py")
             and r.message == MESSAGE]
    assert [r.function for r in loads] == ["HfParser.parse"]
    assert not [r for r in registry.by_id.values() if r.exception == "NotImplementedError"]


def test_custom_code_the_launch_does_not_trust_is_not_said_to_be_beyond_flags(registry, tmp_path: Path) -> None:
    """A config.json whose `auto_map` names its own `AutoConfig`, of a model type transformers does not
    know: the bare load fails without `--trust-remote-code` (the launch's first error), and passing it
    avoids that error, so no sentence says that no change of flags does; a type it does not know, with
    no code of its own, still says so."""
    platform = find_platform("H100")
    for config, beyond in [({"model_type": "gemma4", "auto_map": {"AutoConfig": "m.C"}}, False),
                           ({"model_type": "gemma4"}, True)]:
        argv = ["--model-path", _model(tmp_path / str(len(config)), config)]
        rule = check(registry, argv, platform=platform).definite[0].rule
        assert rule.function == "HfParser.parse"
        facts = launch_facts(parse_command(argv, registry.catalog), platform, None, None, registry.library, {},
                             registry.envs)
        assert (beyond_flags(registry, rule, argv, facts=facts) is not None) is beyond


def test_custom_code_the_launch_does_not_trust_stops_with_transformers_words_which_explain_finds(registry,
                                                                                                tmp_path: Path) -> None:
    """A local folder whose config.json names its own `AutoConfig`, launched without
    `--trust-remote-code`: the load stops with what transformers' `resolve_trust_remote_code` says of
    a folder (its path as given, and absolute); of code in another repository (`repo--m.C`) it says
    other words, not read here. `explain` of the pasted line finds the load's rule."""
    platform = find_platform("H100")
    folder = _model(tmp_path / "custom", {"model_type": "gemma4", "auto_map": {"AutoConfig": "m.C"}})
    report = check(registry, ["--model-path", folder], platform=platform)
    said = filled_message(report.definite[0].rule, report.evaluator.context)
    assert said == CUSTOM_CODE.replace("{path}", folder).replace("{abspath}", str(Path(folder).resolve()))
    upstream = _model(tmp_path / "upstream", {"model_type": "gemma4", "auto_map": {"AutoConfig": "org/repo--m.C"}})
    report = check(registry, ["--model-path", upstream], platform=platform)
    assert report.definite[0].rule.function == "HfParser.parse"
    assert "holds code of its own" not in filled_message(report.definite[0].rule, report.evaluator.context)
    pasted = f"ValueError: {said}"
    assert explain_text(pasted, [("made-up", registry.rules)], lambda c: "")[1] == 1  # the rule says other words
    words = other_words(registry.helpers.config_loader)
    text, code = explain_text(pasted, [("made-up", registry.rules, words)], lambda c: c.rule.function)
    assert code == 0 and "HfParser.parse" in text and f"{{path}} = {folder}" in text
    # Its page says those words too, where it says them, with the values pasted.
    rule = report.definite[0].rule
    markdown = page(rule, Flags(registry.flags), registry.source, registry.by_id, other_words=words[known_message(rule)],
                    filled={"path": folder})
    assert "It says this instead where the checkpoint's config.json has no `model_type`:" in markdown
    assert f"Unrecognized model in {folder}. Should have" in markdown and f"The folder {folder} holds code" in markdown
    assert "It says this instead" not in page(rule, Flags(registry.flags), registry.source, registry.by_id)
