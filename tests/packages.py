"""Made-up SGLang packages for tests: the record's resolution helpers every package shares, and a
package written to a folder and extracted into the rule set `check` reads."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

from extractor.products.extraction.extraction import extract
from extractor.products.check.linter import RuleSet
from extractor.products.reuse.rulesets import ruleset_of
from extractor.sources.trees import path_tree

# `resolving_view`, `declare_resolution` and a post-process pass runner, as 0.5.23's overrides.py
# shapes them (a view that reads declarations; a stash of (source, fields)).
OVERRIDES = '''
def resolving_view(server_args):
    return server_args


def record_of(view):
    return view


def declare_resolution(server_args, source, **fields):
    stash = getattr(server_args, "_resolved_overrides", None)
    if stash is None:
        stash = []
        server_args._resolved_overrides = stash
    stash.append((source, dict(fields)))


def run_post_process_pass(server_args, fn):
    declared = fn(server_args)
    if declared:
        declare_resolution(server_args, fn.__qualname__, **declared)
'''


def write_package(folder: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def package_ruleset(folder: Path, files: Mapping[str, str]) -> RuleSet:
    """The package written to `folder`, extracted, with environ.py's declarations when it has one."""
    tree = path_tree(write_package(folder, files))
    return ruleset_of(extract(tree), tree)
