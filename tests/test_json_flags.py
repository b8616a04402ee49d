"""A flag whose text SGLang parses with `json.loads` after argparse: text that is no JSON ends the
launch in json (`json.JSONDecodeError`), or in the guard of a handler that takes it.

The made-up package imitates the shapes of SGLang's `--json-model-override-args`, read by the model
config's constructor (`self.model_override_args = json.loads(model_override_args)`, 0.5.10 to
0.5.23; here through a helper that returns it, as 0.5.23's `modelexpress_config_of` does), and of 0.5.23's `--model-loader-extra-config` check, whose handler swallows the error (names
and messages of the package are ours); a second handler raises its own error instead.
"""

from __future__ import annotations

import json

import pytest

from extractor.logic.messages import filled_message
from extractor.products.check.linter import check
from tests.packages import package_ruleset

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": '''
import argparse
import dataclasses
import json

from sglang.srt.configs.model_config import ModelConfig


@dataclasses.dataclass
class ServerArgs:
    model_path: str = "m"
    json_model_override_args: str = "{}"
    model_loader_extra_config: str = "{}"
    strict_loader_config: bool = False
    page_size: int = 1

    def __post_init__(self):
        self._check_loader_config()
        self.model_config = ModelConfig.from_server_args(self)
        if self.page_size < 1:
            raise ValueError("The page size must be at least 1.")

    def _check_loader_config(self):
        try:
            loader_config = json.loads(self.model_loader_extra_config)
        except json.JSONDecodeError:
            loader_config = {}
        if self.strict_loader_config:
            try:
                json.loads(self.model_loader_extra_config)
            except ValueError:
                raise ValueError("--model-loader-extra-config must be valid JSON.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, default=ServerArgs.model_path)
        parser.add_argument("--json-model-override-args", type=str, default=ServerArgs.json_model_override_args)
        parser.add_argument("--model-loader-extra-config", type=str, default=ServerArgs.model_loader_extra_config)
        parser.add_argument("--strict-loader-config", action="store_true")
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
''',
    "sglang/srt/configs/__init__.py": "",
    "sglang/srt/configs/model_config.py": '''
import json


class ModelConfig:
    def __init__(self, model_path, model_override_args="{}"):
        self.model_path = model_path
        self.model_override_args = parsed(model_override_args)

    @staticmethod
    def from_server_args(server_args):
        return ModelConfig(server_args.model_path, model_override_args=server_args.json_model_override_args)


def parsed(text):
    return json.loads(text)
''',
}


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("json"), PACKAGE)


def _said(ruleset, argv: list[str]) -> str | None:
    report = check(ruleset, argv)
    return filled_message(report.definite[0].rule, report.evaluator.context) if report.definite else None


def _json_error(text: str) -> str:
    try:
        json.loads(text)
    except ValueError as error:
        return str(error)
    raise AssertionError(f"{text!r} is JSON")


@pytest.mark.parametrize("argv, said", [
    (["--json-model-override-args", "{bad"], _json_error("{bad")),  # what json says, where SGLang calls it
    (["--json-model-override-args", "{rope_scaling: 1}", "--page-size", "0"], _json_error("{rope_scaling: 1}")),
    (["--json-model-override-args", '{"rope_scaling": {"factor": 2}}', "--page-size", "0"],
     "The page size must be at least 1."),
    (["--json-model-override-args", "[1, 2]"], None),  # JSON, if no object: json.loads takes it
    (["--model-loader-extra-config", "{bad"], None),  # the handler takes json's error and goes on
    (["--model-loader-extra-config", "{bad", "--strict-loader-config"], "--model-loader-extra-config must be valid JSON."),
    ([], None),
])
def test_text_that_is_no_json_ends_the_launch_in_json_or_in_the_handler_that_takes_it(ruleset, argv, said) -> None:
    assert _said(ruleset, argv) == said


def test_the_guard_is_json_s_own_at_the_call(ruleset) -> None:
    report = check(ruleset, ["--json-model-override-args", "{bad"])
    rule = report.definite[0].rule
    assert (rule.location.file, rule.function, rule.exception) == (
        "sglang/srt/configs/model_config.py", "parsed", "json.JSONDecodeError")
    assert rule.message == "{msg}: line {lineno} column {colno} (char {pos})"  # json.decoder's, for pages and explain


def test_a_handler_that_takes_json_s_error_leaves_no_guard_of_json_s_own_and_its_own_is_decided(ruleset) -> None:
    assert [(r.location.file, r.exception) for r in ruleset.rules if r.exception == "json.JSONDecodeError"] == [
        ("sglang/srt/configs/model_config.py", "json.JSONDecodeError")]  # the two taken by handlers are none
    report = check(ruleset, ["--model-loader-extra-config", '{"a": 1}', "--strict-loader-config"])
    assert not report.findings  # valid JSON: the handler's guard does not fire, nor may it
