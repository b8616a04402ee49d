"""A command evaluated from the bare launch its rule set's index keeps (`linter.Baseline`,
`Context.carry`) gets a fresh evaluation's answers: the same findings (certainty, what decides them,
what they wait for, the adjustments in the way, how Python fails on them, the filled message), the
same adjustments and the same fixes. The release is shipped in the package: nothing is downloaded."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from extractor.logic.evaluation import Carried
from extractor.logic.platforms import find_platform
from extractor.products.check.fixes import checked_fixes
from extractor.products.check.linter import BARE_LAUNCH, Report, RuleSet, check
from extractor.products.check.words import Flags, by_function
from extractor.products.reuse.rulesets import release_rules


@pytest.fixture(scope="module")
def kept() -> RuleSet:
    """The rule set as its index gives it back: the bare launch evaluated, pickled and read again."""
    ruleset = release_rules("0.5.23")
    assert ruleset.baseline is not None
    return pickle.loads(pickle.dumps(ruleset, protocol=pickle.HIGHEST_PROTOCOL))


@pytest.fixture(scope="module")
def plain(kept: RuleSet) -> RuleSet:
    """The same records without a baseline: every guard evaluated on the command itself."""
    return dataclasses.replace(kept)


# Launch lines as users write them (SGLang's docs, recipes) and edits of them: Hub ids, a local path,
# the bare model name, features that move many guards, values Python fails on, a typo.
COMMANDS = [
    list(BARE_LAUNCH),
    ["--model-path", "m"],
    ["--model-path", "meta-llama/Llama-3.1-8B-Instruct"],
    ["--model-path", "/models/Qwen3-32B", "--tp", "4", "--enable-dp-attention", "--dp", "4"],
    ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--trust-remote-code", "--speculative-algorithm", "EAGLE"],
    ["--model-path", "deepseek-ai/DeepSeek-V3", "--enable-dp-attention", "--tp", "16", "--dp", "2", "--nnodes", "2",
     "--node-rank", "0", "--dist-init-addr", "10.0.0.1:5000"],
    ["--model-path", "m", "--disaggregation-mode", "prefill", "--disaggregation-decode-enable-offload-kvcache"],
    ["--model-path", "Qwen/Qwen3-8B", "--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "nixl"],
    ["--model-path", "nvidia/DeepSeek-R1-FP4", "--tp", "8", "--attention-backend", "trtllm_mla",
     "--moe-runner-backend", "flashinfer_trtllm", "--quantization", "modelopt_fp4"],
    ["--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
     "--speculative-num-steps", "3", "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "2"],
    ["--model-path", "Qwen/Qwen3-8B", "--tp", "3", "--nnodes", "0"],
    ["--model-path", "Qwen/Qwen3-8B", "--enable-lora", "--lora-paths", "a=b", "--max-loras-per-batch", "0"],
    ["--model-path", "Qwen/Qwen3-8B", "--device", "cpu", "--kv-cache-dtype", "fp8_e4m3", "--page-size", "64"],
    ["--model-path", "Qwen/Qwen3-8B", "--is-embedding", "--enable-mixed-chunk", "--chunked-prefill-size", "-1"],
    ["--model-path", "Qwen/Qwen3-8B", "--load-format", "gguf", "--tokenizer-path", "t", "--revision", "main"],
    ["--model-path", "Qwen/Qwen3-8B", "--tp-szie", "2"],
]


def _outcome(report: Report) -> list:
    return [[(f.rule.id, f.certainty, f.unknown, f.changed_by, f.needs, f.fails_with, f.text) for f in report.findings],
            [r.id for r in report.adjustments], [(e.flag, e.message) for e in report.argument_errors], report.checked]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv)[:60])
def test_a_command_evaluated_from_the_bare_launch_has_a_fresh_evaluations_answers(kept: RuleSet, plain: RuleSet,
                                                                                  argv: list[str]) -> None:
    report = check(kept, argv)
    assert isinstance(report.evaluator.context.memo, Carried)  # the baseline was used, not a full evaluation
    assert _outcome(report) == _outcome(check(plain, argv))


@pytest.mark.parametrize("argv", COMMANDS[4:8], ids=lambda argv: " ".join(argv)[:60])
def test_fixes_of_a_command_evaluated_from_the_bare_launch_are_a_fresh_evaluations(kept: RuleSet, plain: RuleSet,
                                                                                   argv: list[str]) -> None:
    flags, siblings = Flags(kept.flags), by_function(kept.rules)
    report, fresh = check(kept, argv), check(plain, argv)
    assert [f.rule.id for f in report.definite] == [f.rule.id for f in fresh.definite]
    for finding in report.definite:
        ways = checked_fixes(kept, finding.rule, argv, flags, siblings, base=report.evaluator)
        assert [w.text for w in ways] == [w.text for w in checked_fixes(plain, finding.rule, argv, flags, siblings)]


@pytest.mark.parametrize("env", [{"SGLANG_ENABLE_TORCH_COMPILE": "1"}, {}])
def test_a_launch_that_differs_in_more_than_values_is_evaluated_whole(kept: RuleSet, plain: RuleSet,
                                                                      env: dict[str, str]) -> None:
    argv = ["--model-path", "Qwen/Qwen3-8B", "--tp", "2"]
    platform = find_platform("H100") if not env else None
    report = check(kept, argv, env=env, platform=platform)
    assert not isinstance(report.evaluator.context.memo, Carried)  # its environment or facts are not the bare launch's
    assert _outcome(report) == _outcome(check(plain, argv, env=env, platform=platform))
