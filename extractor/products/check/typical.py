"""Typical launches, the model: common setups (a node of one kind of GPU and a model people serve,
`data/setups.json`), and a launch on one that stops first at a guard with the fix `check` gives it
there. The search that finds them is `extraction.typical_launches`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

MAX_SHOWN = 3  # typical launches kept per guard, from as many setups


@dataclass(frozen=True)
class Setup:
    """A common setup: a node of one kind of GPU (a `check --platform` profile) and a model."""

    title: str  # "8 × H100, DeepSeek-V3"
    platform: str
    model: str  # the checkpoint's name on Hugging Face, as `--model-path` names it
    args: tuple[str, ...]  # flags every launch of it carries (`--tp 8`)
    config: Mapping[str, object]  # the checkpoint's config.json

    @property
    def launch(self) -> tuple[str, ...]:
        return ("--model-path", self.model, *self.args)


@dataclass(frozen=True)
class Typical:
    """A launch on a setup that stops first at a guard, and the fix `check` gives it there."""

    setup: str
    platform: str
    before: tuple[str, ...]
    fix: str  # the fix's words
    after: tuple[str, ...]  # the fixed launch


@lru_cache(maxsize=1)
def setups() -> tuple[Setup, ...]:
    """The shipped setups, in the order pages show them."""
    doc = json.loads(resources.files("extractor").joinpath("data/setups.json").read_text(encoding="utf-8"))
    return tuple(Setup(s["title"], s["platform"], s["model"], tuple(s["args"]), doc["models"][s["model"]])
                 for s in doc["setups"])
