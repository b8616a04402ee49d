"""`check`'s fixes evaluate each fixed command from the command's own evaluation (`Context.inherit`):
only what reads a value the fix changes is evaluated again. Under a platform profile and a model's
config.json too, where platform and model terms are read by the facts and a method run over the launch
reads its flags, every answer must be a fresh evaluation's. The release used is shipped in the package:
nothing is downloaded."""

from __future__ import annotations

import dataclasses

import pytest

from extractor.core.model import RuleKind
from extractor.logic.facts import Facts
from extractor.logic.model_config import ModelFacts
from extractor.logic.platforms import find_platform
from extractor.logic.reads import FormulaReads
from extractor.products.check.fixes import checked_fixes
from extractor.products.check.linter import RuleSet, check, launch_evaluator, launch_facts
from extractor.products.check.typical import setups
from extractor.products.check.words import Flags, by_function
from extractor.products.reuse.rulesets import release_rules
from extractor.logic.launch import parse_command


@pytest.fixture(scope="module")
def ruleset() -> RuleSet:
    return release_rules("0.5.23")


def _facts(ruleset: RuleSet, argv: list[str], platform: str, model: str) -> Facts | None:
    config = next(s.config for s in setups() if s.model == model)
    return launch_facts(parse_command(argv, ruleset.catalog), find_platform(platform),
                        ModelFacts(dict(config), f"{model}/config.json"), None, ruleset.library, {}, ruleset.envs)


# A command on a setup, and edits a fix makes of it: values changed, flags added and removed.
BASE = ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--trust-remote-code",
        "--speculative-algorithm", "EAGLE", "--enable-dp-attention", "--dp", "8", "--disaggregation-mode", "prefill"]
EDITED = [
    BASE[:5],  # speculative decoding, DP attention and disaggregation taken away
    [*BASE, "--speculative-eagle-topk", "4", "--page-size", "64"],
    [*BASE[:9], "--dp", "3", *BASE[10:]],
    [*BASE[:11], "decode", "--disaggregation-decode-enable-offload-kvcache"],
    [*BASE, "--quantization", "fp8", "--kv-cache-dtype", "fp8_e4m3"],
    [*BASE, "--attention-backend", "trtllm_mla", "--moe-runner-backend", "flashinfer_trtllm"],
    [*BASE, "--enable-unified-memory"],
    [*BASE[:5], "--is-embedding"],  # a field every model term is handed (`MODEL_CONFIG_FIELDS`)
]


@pytest.mark.parametrize("platform", ["H100", "B200", "cpu"])
@pytest.mark.parametrize("edited", EDITED, ids=[f"edit{i}" for i in range(len(EDITED))])
def test_a_fixed_command_inherits_only_what_a_fresh_evaluation_gives(ruleset: RuleSet, platform: str,
                                                                     edited: list[str]) -> None:
    base = launch_evaluator(ruleset, BASE, facts=_facts(ruleset, BASE, platform, "deepseek-ai/DeepSeek-V3"))
    guards = [r for r in ruleset.rules if r.reachable and r.kind is not RuleKind.ADJUSTMENT]
    for rule in guards:  # the command's own evaluation, whole, before the fixed one reads it
        base.holds(rule)
    facts = _facts(ruleset, edited, platform, "deepseek-ai/DeepSeek-V3")
    inherited = launch_evaluator(ruleset, edited, facts=dataclasses.replace(facts), base=base)
    fresh = launch_evaluator(ruleset, edited, facts=dataclasses.replace(facts))
    assert inherited.context.memo.__class__.__name__ == "Inherited"  # it did inherit
    differ = [r.id for r in guards if inherited.holds(r) != fresh.holds(r)]
    assert differ == []
    assert [inherited.context.failing.get(r.effective) for r in guards] == \
        [fresh.context.failing.get(r.effective) for r in guards]


def test_the_fixes_of_a_command_are_those_found_without_its_evaluation(ruleset: RuleSet) -> None:
    """The whole fix search, given the report's evaluation or not: the same fixes, in the same order."""
    flags, groups = Flags(ruleset.flags), by_function(ruleset.rules)
    argv = ["--model-path", "m", "--disaggregation-mode", "prefill", "--disaggregation-decode-enable-offload-kvcache",
            "--speculative-algorithm", "EAGLE", "--enable-unified-memory"]
    for platform in (None, "H100"):
        profile = find_platform(platform) if platform else None
        report = check(ruleset, argv, platform=profile)
        facts = launch_facts(parse_command(argv, ruleset.catalog), profile, None, None, ruleset.library, {},
                             ruleset.envs)
        definite = {f.rule.id for f in report.definite}
        assert definite
        for finding in report.definite:
            kept = checked_fixes(ruleset, finding.rule, argv, flags, groups, facts=facts, had=definite,
                                 base=report.evaluator)
            alone = checked_fixes(ruleset, finding.rule, argv, flags, groups, facts=facts, had=definite)
            assert kept == alone


def test_a_launch_with_other_facts_or_environment_inherits_nothing(ruleset: RuleSet) -> None:
    base = launch_evaluator(ruleset, BASE, facts=_facts(ruleset, BASE, "H100", "deepseek-ai/DeepSeek-V3"))
    other_gpu = launch_evaluator(ruleset, BASE, facts=_facts(ruleset, BASE, "B200", "deepseek-ai/DeepSeek-V3"),
                                 base=base)
    other_env = launch_evaluator(ruleset, BASE, env={"SGLANG_ENABLE_JIT_DEEPGEMM": "0"},
                                 facts=_facts(ruleset, BASE, "H100", "deepseek-ai/DeepSeek-V3"), base=base)
    assert type(other_gpu.context.memo) is dict and type(other_env.context.memo) is dict


def test_reads_count_the_chain_and_the_model_fields(ruleset: RuleSet) -> None:
    """A resolved field reads what its writes read; a model term reads `--is-embedding` though its text
    does not name it; the masks kept in the index are those worked out afresh."""
    reads = FormulaReads(ruleset.writes)
    chain = next(key for key in ((name, len(w)) for name, w in ruleset.writes.items()) if key[1] >= 2)
    names, _ = reads.chain(chain)
    assert chain[0] in names and len(names) > 1
    model_guard = next(r for r in ruleset.rules if r.reachable and "model_config_of" in repr(r.effective))
    assert "is_embedding" in reads.names(model_guard.effective)
    assert reads.mask(model_guard.effective) & reads.mask_of(["is_embedding"])
    prepared = ruleset.read_sets  # read back from the index, prepared when it was made
    for rule in ruleset.rules[:200]:
        assert prepared.mask(rule.effective) == prepared.mask_of(reads.names(rule.effective))
