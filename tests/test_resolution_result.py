"""0.5.23's `resolution_result(server_args, "name")`: a guard reads the field as the resolution left it,
or, while that is None, the fallback its declaration gives (`Arg(fallback=0.8)`). The catalog keeps
the fallback (flags.json `fallback`), and the trigger reads the resolved field with it, so
`--swa-ratio 0` is a definite error and a launch that leaves the flag unset is none."""

from __future__ import annotations

import pytest

from extractor.core.serialize import flag_json
from extractor.products.check.linter import check
from tests.packages import OVERRIDES, package_ruleset

PACKAGE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/arg_utils.py": '''
from typing import Annotated as A


class Arg:
    def __init__(self, help=None, fallback=None, resolvable=False):
        self.help, self.fallback, self.resolvable = help, fallback, resolvable


def with_fallback(cls, name, value):
    if value is not None:
        return value
    return getattr(cls, "_FALLBACKS", {}).get(name, value)
''',
    # The shared overrides (views, declarations), and `resolution_result` as 0.5.23's reads a field.
    "sglang/srt/arg_groups/overrides.py": "from sglang.srt.arg_groups.arg_utils import with_fallback\n" + OVERRIDES + '''

def resolution_result(server_args, field, default=None):
    for _source, declared in reversed(getattr(server_args, "_resolved_overrides", None) or ()):
        if field in declared:
            return declared[field]
    return with_fallback(type(server_args), field, getattr(server_args, field, default))
''',
    "sglang/srt/arg_groups/cache_hook.py": '''
from sglang.srt.arg_groups.overrides import declare_resolution, resolution_result, resolving_view


def handle_cache(server_args):
    cfg = resolving_view(server_args)
    if cfg.model_path == "small":
        declare_resolution(server_args, "small", swa_ratio=0.1)
    if not (0 < resolution_result(server_args, "swa_ratio") <= 1.0):
        raise ValueError("--swa-ratio should be in range (0, 1.0].")
    if resolution_result(server_args, "page_size") > 64:
        raise ValueError("--page-size must be at most 64.")
''',
    "sglang/srt/server_args.py": '''
import dataclasses
from typing import Optional

from sglang.srt.arg_groups.arg_utils import A, Arg


@dataclasses.dataclass
class ServerArgs:
    model_path: A[str, Arg(help="The model.")] = "m"
    swa_ratio: A[Optional[float], Arg(help="SWA tokens over full tokens.", resolvable=True, fallback=0.8)] = None
    page_size: A[int, Arg(help="Tokens per page.")] = 1

    _FALLBACKS = {"swa_ratio": 0.8}

    def resolve_once(self):
        from sglang.srt.arg_groups.cache_hook import handle_cache

        handle_cache(self)
''',
}
RATIO = "--swa-ratio should be in range (0, 1.0]."
PAGES = "--page-size must be at most 64."


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    return package_ruleset(tmp_path_factory.mktemp("resolution_result"), PACKAGE)


def test_the_catalog_keeps_a_declared_fallback(ruleset) -> None:
    flags = {flag.name: flag for flag in ruleset.flags}
    assert flag_json(flags["swa_ratio"])["fallback"] == 0.8
    assert "fallback" not in flag_json(flags["page_size"])


@pytest.mark.parametrize("argv, first", [
    pytest.param([], None, id="unset: the fallback"),
    pytest.param(["--swa-ratio", "0"], RATIO, id="zero"),
    pytest.param(["--swa-ratio", "1.5"], RATIO, id="above one"),
    pytest.param(["--swa-ratio", "0.5"], None, id="in range"),
    pytest.param(["--model-path", "small", "--swa-ratio", "0"], None, id="a declaration wins over the input"),
    pytest.param(["--page-size", "128"], PAGES, id="no fallback: the field"),
])
def test_a_guard_reads_the_resolved_field_with_its_fallback(ruleset, argv, first) -> None:
    model = [] if "--model-path" in argv else ["--model-path", "m"]
    report = check(ruleset, [*model, *argv])
    definite = report.definite
    assert (definite[0].rule.message if definite else None) == first, \
        [(f.rule.message, f.certainty, f.unknown) for f in report.findings]
    guard = next(r for r in ruleset.rules if r.message == RATIO)
    assert "resolution_result" not in str(guard.effective)  # read as the field, not an opaque call
