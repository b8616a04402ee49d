"""Answers `check` keeps: a launch line checked again on the same rules, code and options is answered
as its first check answered it, without evaluating; anything else an answer depends on names
another answer, or keeps none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.cli import main
from extractor.products.check import linter
from extractor.products.reuse import answers as kept
from extractor.products.reuse.answers import reads_only_its_words

from .test_check import OFFLOAD, rules_file, ruleset  # noqa: F401 - fixtures

DEFINITE = ["--model-path", "m", "--disaggregation-mode", "prefill", "--offload-kvcache"]


@pytest.fixture()
def evaluations(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The launch lines `check` evaluated, in order (answered lines are not among them; nor the bare
    launch a rule set evaluates once on new platform or model facts)."""
    seen: list[list[str]] = []
    evaluate = linter.check

    def counted(ruleset, argv, *args, **kwargs):
        if tuple(argv) != linter.BARE_LAUNCH:
            seen.append(list(argv))
        return evaluate(ruleset, argv, *args, **kwargs)

    monkeypatch.setattr(linter, "check", counted)
    return seen


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_a_line_checked_again_is_answered_as_before(rules_file: Path, capsys, evaluations) -> None:  # noqa: F811
    for format_ in ("text", "json", "github"):
        argv = ["check", "--rules", str(rules_file), "--format", format_, "--", *DEFINITE]
        first = run(capsys, *argv)
        count = len(evaluations)
        assert first[0] == 1 and OFFLOAD in first[1]
        assert run(capsys, *argv) == first  # the same exit code and the same bytes
        assert len(evaluations) == count  # from the answer kept, nothing evaluated
        assert run(capsys, *argv[:3], "--fresh", *argv[3:]) == first
        assert len(evaluations) > count  # --fresh evaluates it again


def test_every_option_an_answer_depends_on_names_its_own(rules_file: Path, capsys, evaluations) -> None:  # noqa: F811
    base = ["check", "--rules", str(rules_file)]
    variants = [[], ["--format", "json"], ["--show-possible"], ["--platform", "cuda-sm90"],
                ["--platform", "cpu", "--device-memory", "64GiB"], ["--env", "SGLANG_STRICT=1"],
                ["--assume", "get_platform().is_hip=true"], ["--model-arch", "LlamaForCausalLM"]]
    answers = []
    for options in variants:
        count = len(evaluations)
        answers.append(run(capsys, *base, *options, "--", *DEFINITE, "--dp-size", "2"))
        assert len(evaluations) > count, options  # not answered by another option's answer
        assert run(capsys, *base, *options, "--fresh", "--", *DEFINITE, "--dp-size", "2") == answers[-1]
    assert len(set(answers)) > 4  # the options do change what is printed
    for options, answer in zip(variants, answers):
        count = len(evaluations)
        assert run(capsys, *base, *options, "--", *DEFINITE, "--dp-size", "2") == answer
        assert len(evaluations) == count, options


def test_a_model_config_file_names_the_answer_by_its_bytes(rules_file: Path, tmp_path: Path, capsys,  # noqa: F811
                                                           evaluations) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}), encoding="utf-8")
    argv = ["check", "--rules", str(rules_file), "--model-config", str(config), "--", *DEFINITE]
    run(capsys, *argv)
    count = len(evaluations)
    run(capsys, *argv)
    assert len(evaluations) == count
    config.write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"]}), encoding="utf-8")
    run(capsys, *argv)
    assert len(evaluations) == count + 1


def test_a_line_naming_a_file_here_is_evaluated_every_time(rules_file: Path, tmp_path: Path, capsys,  # noqa: F811
                                                           evaluations) -> None:
    """A model folder's config.json (or a --config file) is read: its answer is never kept."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}), encoding="utf-8")
    argv = ["check", "--rules", str(rules_file), "--", "--model-path", str(model), "--offload-kvcache"]
    first = run(capsys, *argv)
    assert run(capsys, *argv) == first
    assert len(evaluations) == 2
    pasted = f"cd /srv && HF_HOME=/tmp python -m sglang.launch_server --model-path {model} --tp 2 > log"
    assert main(["check", "--rules", str(rules_file), "--", pasted]) in (0, 1) and len(evaluations) == 3
    assert main(["check", "--rules", str(rules_file), "--", pasted]) in (0, 1) and len(evaluations) == 4
    assert not reads_only_its_words(["--model-path", str(model)]) and not reads_only_its_words([f"--model-path={model}"])
    assert not reads_only_its_words([pasted]) and not reads_only_its_words([f"MODEL_DIR={model} python -m x --tp 2"])
    assert reads_only_its_words(["--model-path", str(tmp_path / "nowhere"), "--tp", "2"])
    assert not reads_only_its_words(["--config", str(tmp_path / "nowhere.yaml"), "--tp", "2"])  # it may be made


@pytest.mark.parametrize("options", [["--use-env"], ["--local", "."], ["--format", "sarif"], ["--from", "{rules}"]],
                         ids=["use-env", "local", "sarif", "from"])
def test_no_answer_is_kept_where_it_depends_on_more(rules_file: Path, capsys, evaluations,  # noqa: F811
                                                    options: list[str]) -> None:
    """This shell's environment, the launch host's files, a SARIF log of every report, another release."""
    argv = ["check", "--rules", str(rules_file), *(o.format(rules=rules_file) for o in options), "--", *DEFINITE]
    first = run(capsys, *argv)
    assert run(capsys, *argv) == first
    assert len(evaluations) >= 2 and evaluations[-1] == evaluations[0]
    assert not any(kept.answers_folder().iterdir())  # this test's own folder (conftest)


def test_other_rules_are_answered_anew(rules_file: Path, tmp_path: Path, capsys, evaluations) -> None:  # noqa: F811
    other = tmp_path / "other"
    other.mkdir()
    (other / "flags.json").write_bytes(rules_file.with_name("flags.json").read_bytes())
    (other / "rules.json").write_text(rules_file.read_text(encoding="utf-8").replace(OFFLOAD, "Offload: decode only."),
                                      encoding="utf-8")
    assert OFFLOAD in run(capsys, "check", "--rules", str(rules_file), "--", *DEFINITE)[1]
    answer = run(capsys, "check", "--rules", str(other), "--", *DEFINITE)[1]
    assert "Offload: decode only." in answer and OFFLOAD not in answer


def test_a_folder_of_scripts_is_answered_line_by_line(rules_file: Path, tmp_path: Path, capsys,  # noqa: F811
                                                      evaluations) -> None:
    """Each file's place is its own; a line met in another file or run is not evaluated again, and a
    new line is (its answer kept beside the others)."""
    folder = tmp_path / "scripts"
    folder.mkdir()
    (folder / "a.sh").write_text("python -m sglang.launch_server " + " ".join(DEFINITE) + "\n", encoding="utf-8")
    (folder / "b.sh").write_text("echo start\npython -m sglang.launch_server " + " ".join(DEFINITE) + "\n",
                                 encoding="utf-8")
    argv = ["check", "--rules", str(rules_file), "--format", "json", "--file", str(folder)]
    code, out = run(capsys, *argv)
    assert code == 1 and [(c["file"].rsplit("/", 1)[-1], c["line"]) for c in json.loads(out)["commands"]] == [
        ("a.sh", 1), ("b.sh", 2)]
    assert len(evaluations) == 1
    (folder / "c.sh").write_text("python -m sglang.launch_server --model-path m\n", encoding="utf-8")
    code, again = run(capsys, *argv)
    assert evaluations[1:] == [["python", "-m", "sglang.launch_server", "--model-path", "m"]] or \
        evaluations[1:] == [["--model-path", "m"]] or len(evaluations) == 2
    assert json.loads(again)["commands"][:2] == json.loads(out)["commands"]
    assert run(capsys, *argv) == (code, again) and len(evaluations) == 2


def test_answers_count_toward_the_cache_size_limit(rules_file: Path, tmp_path: Path, capsys, evaluations,  # noqa: F811
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers are files of the cache, pruned with the rest to its size limit once every `PRUNE_EVERY`
    bytes of answers written."""
    monkeypatch.setenv("SGLANG_CONSTRAINTS_EXTRACTION_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE_LIMIT_MB", "0")
    monkeypatch.setattr(kept, "answers_folder", lambda: tmp_path / "cache" / "answers")
    argv = ["check", "--rules", str(rules_file), "--format", "json", "--", *DEFINITE]
    run(capsys, *argv)
    assert list((tmp_path / "cache" / "answers").glob("*/*.pickle"))  # fewer bytes than PRUNE_EVERY so far
    monkeypatch.setattr(kept, "PRUNE_EVERY", 1)
    run(capsys, *argv[:3], "--fresh", *argv[3:])
    assert not list((tmp_path / "cache" / "answers").glob("*/*.pickle"))
