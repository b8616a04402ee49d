"""A command evaluated from the bare launch its rule set's index keeps (`linter.Baseline`,
`Context.carry`) gets a fresh evaluation's answers: the same findings (certainty, what decides them,
what they wait for, the adjustments in the way, how Python fails on them, the filled message), the
same adjustments and the same fixes. The release is shipped in the package: nothing is downloaded."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from extractor.core.formula import every_atom
from extractor.logic.carried import Carried
from extractor.logic.evaluation import Evaluator
from extractor.logic.platforms import find_platform, memory_mib, with_device_memory
from extractor.products.check.fixes import checked_fixes, example_fix
from extractor.products.check.linter import BARE_LAUNCH, Report, RuleSet, check, facts_key, launch_evaluator
from extractor.products.reuse.index import keep_model_states, load_model_states, shared_objects, with_baseline_on
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


def test_a_command_from_the_bare_launch_asks_only_after_atoms_that_read_a_changed_name(kept: RuleSet, plain: RuleSet,
                                                                                       monkeypatch) -> None:
    """Whether a part of a trigger comes out as on the bare launch (`Carried.inherits`) is asked of its
    atoms that read a name the command changes: a part that reads none (its mask, kept with the rule
    set) is not entered. What the walk found of each part is whether one of its atoms changes."""
    asked = []
    changes = Carried.changes

    def recording(self: Carried, atom):
        if sys._getframe(1).f_code.co_name == "_touched_below":  # asked by the walk, not by `moved` or a chain
            asked.append((atom, self))
        return changes(self, atom)

    monkeypatch.setattr(Carried, "changes", recording)
    argv = ["--model-path", "org/model", "--tp", "2", "--disaggregation-mode", "decode"]
    report = check(kept, argv)
    monkeypatch.setattr(Carried, "changes", changes)
    assert asked and all(carried.reads.atom_mask(atom) & carried.changed for atom, carried in asked)
    carried = report.evaluator.context.memo
    walked = list(carried._touched.values())
    assert len(walked) > 100 and any(touched for _, touched in walked)
    assert all(touched == any(map(carried.changes, every_atom(node))) for node, touched in walked)
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


# ---- on a platform profile: the bare launch evaluated there, kept beside the index --------------------

PROFILES = ["H100", "cpu", "B200"]


@pytest.fixture(scope="module")
def on_profiles(kept: RuleSet) -> RuleSet:
    """The kept rule set with the bare launch evaluated on each profile of PROFILES, each pickled
    against the rule set's own objects and read back (`with_baseline_on`)."""
    ruleset = pickle.loads(pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
    ruleset.__dict__["index_key"] = "test"
    with tempfile.TemporaryDirectory() as folder:
        for name in PROFILES:
            with_baseline_on(ruleset, find_platform(name), None, folder=Path(folder))
        ruleset.__dict__.pop("baselines_on_facts")
        for name in PROFILES:  # read back, not the evaluations made above
            with_baseline_on(ruleset, find_platform(name), None, folder=Path(folder))
    return ruleset


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("argv", COMMANDS[2:12], ids=lambda argv: " ".join(argv)[:60])
def test_a_command_on_a_profile_is_evaluated_from_the_bare_launch_on_it(on_profiles: RuleSet, plain: RuleSet,
                                                                        argv: list[str], name: str) -> None:
    platform = find_platform(name)
    report = check(on_profiles, argv, platform=platform)
    assert isinstance(report.evaluator.context.memo, Carried)
    assert _outcome(report) == _outcome(check(plain, argv, platform=platform))


def test_a_profile_edited_or_an_environment_is_not_carried_from_the_profiles_bare_launch(on_profiles: RuleSet,
                                                                                          plain: RuleSet) -> None:
    argv = ["--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--mem-fraction-static", "0.9"]
    smaller = with_device_memory(find_platform("H100"), memory_mib("24GB"))
    for platform, env in ((smaller, {}), (find_platform("H100"), {"SGLANG_ENABLE_TORCH_COMPILE": "1"})):
        report = check(on_profiles, argv, env=env, platform=platform)
        assert not isinstance(report.evaluator.context.memo, Carried)
        assert _outcome(report) == _outcome(check(plain, argv, env=env, platform=platform))


def test_a_bare_launch_kept_beside_the_index_is_read_back_as_the_index_s_own_objects(tmp_path: Path) -> None:
    ruleset = release_rules("0.5.23")
    assert ruleset.__dict__.get("index_key")  # read through the index
    platform = find_platform("H100")
    with_baseline_on(ruleset, platform, None, folder=tmp_path)
    built = ruleset.baselines_on_facts[facts_key(platform, None)]
    kept_files = list(tmp_path.glob(f"{ruleset.__dict__['index_key']}-on-*.pickle"))
    assert len(kept_files) == 1
    ruleset.__dict__.pop("baselines_on_facts")
    with_baseline_on(ruleset, platform, None, folder=tmp_path)
    read = ruleset.baselines_on_facts[facts_key(platform, None)]
    assert read is not built
    assert read.outcomes == built.outcomes and read.atoms == built.atoms
    # Shared, not copied: the formulas and tables are the rule set's (what `Context.changed_from` asks).
    assert read.evaluator.rules is ruleset.by_id and read.evaluator.context.writes is ruleset.writes
    assert read.evaluator.context.envs is ruleset.envs and read.evaluator.context.facts.helpers is ruleset.library
    memo = read.evaluator.context.memo
    guards = [r.effective for r in ruleset.rules if r.reachable and r.effective in memo]
    assert guards and all(any(key is trigger for key in memo) for trigger in guards)
    assert len(shared_objects(ruleset)) > len(ruleset.rules)
    # An unreadable file, or one written against other objects, is made again.
    kept_files[0].write_bytes(b"not a pickle")
    ruleset.__dict__.pop("baselines_on_facts")
    with_baseline_on(ruleset, platform, None, folder=tmp_path)
    again = ruleset.baselines_on_facts[facts_key(platform, None)]
    assert again.outcomes == built.outcomes and again.evaluator.rules is ruleset.by_id


def test_a_profile_names_its_bare_launch_alike_in_every_process() -> None:
    # A profile holds sets, whose order follows the per-process string hashing.
    code = ("from extractor.logic.platforms import find_platform; from extractor.products.check.linter import facts_key;"
            "print(facts_key(find_platform('H100'), None))")
    keys = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip() for seed in ("1", "2", "3")}
    assert keys == {facts_key(find_platform("H100"), None)}
    assert facts_key(with_device_memory(find_platform("H100"), memory_mib("24GB")), None) not in keys


# ---- what launches found of a model path, kept beside the index ----------------------------------------


def test_what_a_check_found_of_a_model_path_is_read_back_by_the_next_and_answers_alike(tmp_path: Path,
                                                                                     plain: RuleSet) -> None:
    argv = ["--model-path", "Qwen/Qwen3-8B", "--disaggregation-mode", "prefill",
            "--disaggregation-decode-enable-offload-kvcache"]
    first = release_rules("0.5.23")
    loaded = load_model_states(first, ["Qwen/Qwen3-8B"], folder=tmp_path)
    assert loaded == {("bare", "Qwen/Qwen3-8B"): 0}
    before = _outcome(check(first, argv))
    keep_model_states(first, loaded, folder=tmp_path)
    kept_files = list(tmp_path.glob("*-states-*.pickle"))
    assert len(kept_files) == 1
    # Another process: the rule set read from its index again, its bare launch without the states.
    again = pickle.loads(pickle.dumps(first, protocol=pickle.HIGHEST_PROTOCOL))
    again.__dict__["index_key"] = first.__dict__["index_key"]
    assert again.baseline.states == {}
    read = load_model_states(again, ["Qwen/Qwen3-8B"], folder=tmp_path)
    assert read[("bare", "Qwen/Qwen3-8B")] > 400  # the atoms and chains that read the model path
    worked_out = []
    original = Evaluator.state
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Evaluator, "state", lambda self, atom, fresh=False: (
            worked_out.append(atom) if fresh else None, original(self, atom, fresh))[1])
        report = check(again, argv)
    assert _outcome(report) == before == _outcome(check(plain, argv))
    reads = again.read_sets
    model_bit = reads.mask_of(("model_path",))
    assert not [atom for atom in worked_out if reads.atom_mask(atom) & model_bit
                and not reads.atom_mask(atom) & reads.mask_of(("disaggregation_mode",
                                                                "disaggregation_decode_enable_offload_kvcache"))]
    stamp = kept_files[0].stat().st_mtime_ns
    keep_model_states(again, read, folder=tmp_path)
    assert kept_files[0].stat().st_mtime_ns == stamp  # nothing new: not written again
    # A file that does not read back is passed over, and written anew once found again.
    kept_files[0].write_bytes(b"garbage")
    third = pickle.loads(pickle.dumps(first, protocol=pickle.HIGHEST_PROTOCOL))
    third.__dict__["index_key"] = first.__dict__["index_key"]
    loaded = load_model_states(third, ["Qwen/Qwen3-8B"], folder=tmp_path)
    assert loaded == {("bare", "Qwen/Qwen3-8B"): 0}
    assert _outcome(check(third, argv)) == before
    keep_model_states(third, loaded, folder=tmp_path)
    assert kept_files[0].read_bytes() != b"garbage"


def test_a_local_model_path_is_never_kept(tmp_path: Path) -> None:
    ruleset = release_rules("0.5.23")
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    loaded = load_model_states(ruleset, [str(folder), None], folder=tmp_path)
    assert loaded == {}
    check(ruleset, ["--model-path", str(folder), "--tp", "2"])
    keep_model_states(ruleset, loaded, folder=tmp_path)
    assert list(tmp_path.glob("*-states-*")) == []


# ---- a page's short command lines, evaluated without facts ---------------------------------------------


def test_a_pages_fixes_checked_from_the_bare_launch_without_facts_are_a_fresh_evaluations(tmp_path: Path,
                                                                                        plain: RuleSet) -> None:
    ruleset = release_rules("0.5.23")
    with_baseline_on(ruleset, None, None, folder=tmp_path, without_facts=True)
    assert list(tmp_path.glob("*-on-without-facts.pickle"))
    flags, siblings = Flags(ruleset.flags), by_function(ruleset.rules)
    shown = [r for r in ruleset.rules if r.example is not None and r.kind.value != "adjustment"][::12]
    assert len(shown) >= 10
    for rule in shown:
        assert isinstance(launch_evaluator(ruleset, rule.example.before).context.memo, Carried)
        assert launch_evaluator(plain, rule.example.before).context.memo.__class__ is dict
        assert example_fix(ruleset, rule, flags, siblings) == example_fix(plain, rule, flags, siblings), rule.id


def test_check_on_a_profile_keeps_its_parts_beside_the_index_and_answers_as_a_full_evaluation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, plain: RuleSet) -> None:
    """The command as users run it, twice in a fresh cache: the first builds the index, the bare launch
    on H100 and what it finds of the model path, the second reads them; both say what an evaluation
    of every guard says."""
    from extractor.cli import main

    import extractor.products.reuse.index as index

    monkeypatch.setenv("SGLANG_CONSTRAINTS_EXTRACTION_CACHE", str(tmp_path / "cache"))
    argv = ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--enable-dp-attention", "--dp", "3"]
    outputs = []
    for _ in range(2):
        assert main(["check", "--release", "0.5.23", "--platform", "H100", "--format", "json", "--", *argv]) == 1
        outputs.append(capsys.readouterr().out)
        if len(outputs) == 1:
            parts = sorted(p.name.split("-")[1] for p in (tmp_path / "cache" / "index").glob("*-*-*.pickle"))
            assert parts == ["on", "states"]  # the bare launch on the profile, what it found of the model path
            written = []
            monkeypatch.setattr(index, "bare_baseline", lambda *a, **k: pytest.fail("the bare launch made again"))
            monkeypatch.setattr(index, "write_pickled", lambda path, *a, **k: written.append(path))
    assert outputs[0] == outputs[1]
    assert written == []  # everything read back, nothing new to keep
    full = check(plain, argv, platform=find_platform("H100"), baseline=False)
    found = __import__("json").loads(outputs[0])
    assert [(e["id"], e["certainty"]) for e in found["errors"]] == [(f.rule.id, f.certainty) for f in full.findings]
