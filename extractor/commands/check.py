"""`check`: a launch command against the rules of a release or a rules.json; exit 1 on a definite error."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from typing import TYPE_CHECKING

from .. import __version__
from ..core.errors import EXIT_FINDINGS, EXIT_OK, UsageError

if TYPE_CHECKING:  # the linter and its helpers are imported when a check runs: other commands start faster
    from ..core.model import Rule
    from ..logic.launch import CommandLine
    from ..products.check.linter import Beyond, RuleSet
    from ..products.check.words import Flags
    from ..products.reuse.answers import AnswerBook


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "check", help="check a launch command against the rules",
        description="Report the errors a launch command will (definite) or may (possible) hit. "
                    "Give the launch arguments after `--`, or a whole pasted command as one string.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--rules", help="rules.json (flags.json beside it)")
    where.add_argument("--release", help="an SGLang release (extracted once, cached)")
    parser.add_argument("--index-url", help="package index for --release")
    parser.add_argument("--from", dest="from_", metavar="RELEASE|RULES",
                        help="the release (or rules.json) the command works on today: also say what changes for it "
                             "(options no longer accepted, new errors, defaults it relies on, new rewrites)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="an environment variable")
    parser.add_argument("--use-env", action="store_true", help="read environment variables from this shell")
    parser.add_argument("--assume", action="append", default=[], metavar="'ATOM=true|false'",
                        help="decide a platform, model or opaque condition, e.g. 'get_platform().is_npu=false'")
    facts = parser.add_argument_group("platform and model facts")
    facts.add_argument("--platform", "--gpu", metavar="NAME",
                       help="a platform profile: cpu, cuda-sm75/80/86/89/90/100/103/120, rocm-mi300/325/355, npu, xpu, "
                            "mps, cpu-engine, or a GPU name such as H100, H200, A100, A10G, L4, B200, B300, MI300X "
                            "(with its own memory)")
    facts.add_argument("--device-memory", metavar="SIZE",
                       help="the device's memory (on the CPU, the host's per NUMA node), e.g. 80GiB or 81559 "
                            "(MiB): SGLang sizes chunked prefill, CUDA graphs and other defaults by it")
    facts.add_argument("--local", nargs="?", const=".", metavar="DIR",
                       help="the launch will run on this machine, from DIR (default: this folder): decide SGLang's "
                            "checks of the paths it names (SSL key and certificate files) by this file system")
    model = facts.add_mutually_exclusive_group()
    model.add_argument("--model-config", metavar="FILE", help="the model's config.json (default: the config.json "
                       "of --model-path when it names a local folder)")
    model.add_argument("--model-arch", metavar="NAME", help="the model's architecture alone, e.g. LlamaForCausalLM")
    parser.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text",
                        help="github: one workflow annotation (::error file=...,line=...::) per definite or "
                             "argument error, at the launch command's line; sarif: a SARIF 2.1.0 log of them, "
                             "for code scanning")
    parser.add_argument("--show-possible", action="store_true",
                        help="text output: list each possible error with what would decide it (default: one "
                             "summary line per kind of missing fact)")
    parser.add_argument("--definite-only", action="store_true", help=argparse.SUPPRESS)  # the default now
    parser.add_argument("--fresh", action="store_true",
                        help="evaluate every launch line again: do not answer a line from what an earlier check "
                             "of it on the same rules, code and options found (that answer is replaced)")
    parser.add_argument("--file", action="extend", nargs="+", default=[], metavar="PATH",
                        help="check every launch command in shell scripts, Dockerfiles or YAML files (a folder: "
                             "every such file under it); several after one --file, or repeated (end the list "
                             "with -- before launch arguments)")
    parser.add_argument("launch", nargs="*", help="launch arguments (after --)")
    parser.set_defaults(func=cmd_check)


def _fixes(ruleset, report, argv: list[str], flags: Flags, groups, env: dict[str, str], platform, model, host
           ) -> tuple[Callable[[Rule], list[str]], Callable[[Rule], Beyond | None]]:
    """Fixes of each finding: those of a definite error checked on this very command line (and
    completed where they would set off another error); a possible one's read off its condition.
    And, for a definite error no fix clears, what decides it when no change of flags can."""
    from ..logic.launch import parse_command
    from ..logic.launch_words import split_command
    from ..products.check.fixes import beyond_flags, working_fixes
    from ..products.check.linter import launch_facts
    from ..products.check.words import fixes_for

    tokens, assignments = split_command(argv)
    plain = [f"{name}={value}" for name, value in assignments.items()] + tokens
    facts = launch_facts(parse_command(plain, ruleset.catalog), platform, model, host, ruleset.library, env,
                         ruleset.envs)
    definite = {f.rule.id for f in report.definite}

    found: dict[str, list[str]] = {}

    def fixes(rule: Rule) -> list[str]:
        if rule.id not in found:
            found[rule.id] = (working_fixes(ruleset, rule, plain, flags, groups, env=env, facts=facts, had=definite,
                                            base=report.evaluator)
                              if rule.id in definite else fixes_for(rule, flags, groups[(rule.location.file, rule.function)]))
        return found[rule.id]

    def beyond(rule: Rule) -> Beyond | None:
        if rule.id not in definite or fixes(rule):
            return None
        return beyond_flags(ruleset, rule, plain, env=env, facts=facts)

    return fixes, beyond


def _pairs(items: Sequence[str], what: str, parse: Callable[[str], object]) -> dict[str, object]:
    found = {}
    for item in items:
        key, eq, value = item.rpartition("=")
        if not eq or not key.strip():
            raise UsageError(f"{what} {item!r}: expected TEXT=VALUE")
        found[key.strip()] = parse(value.strip())
    return found


def _truth_value(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise UsageError(f"--assume: {text!r} is not true or false")


def _local_model(launch: Sequence[str]) -> object:
    """The model folder `--model-path` names, when it is a local folder with a config.json."""
    from ..logic.model_config import local_model
    from ..logic.launch_words import split_command

    launch, _ = split_command(list(launch))
    for index, item in enumerate(launch):
        path = item.split("=", 1)[1] if item.startswith("--model-path=") else (
            launch[index + 1] if item == "--model-path" and index + 1 < len(launch) else None)
        if path is not None:
            return local_model(path)
    return None


def open_rules(args: argparse.Namespace) -> RuleSet:
    from ..products.reuse.rulesets import load_rules, release_rules

    if getattr(args, "rules", None):
        return load_rules(args.rules)
    return release_rules(args.release, getattr(args, "index_url", None))


def cmd_check(args: argparse.Namespace) -> int:
    from ..logic.launch_words import ENV_ASSIGNMENT, launch_kind
    from ..products.reuse.answers import reads_only_its_words

    launch = list(args.launch)
    if launch[:1] == ["--"]:
        launch = launch[1:]
    if not launch and not args.file:
        raise UsageError("give the launch arguments after --, e.g. check --release 0.5.23 -- --model-path m, "
                         "or --file PATH")
    if launch and launch_kind(launch) == "none":
        raise UsageError("no launch command found in the given text (nothing runs sglang.launch_server, "
                         "`sglang serve` or starts with launch options)")
    if any(not ENV_ASSIGNMENT.match(item) for item in args.env):
        raise UsageError("--env expects NAME=VALUE")
    env = dict(item.split("=", 1) for item in args.env)
    assume = _pairs(args.assume, "--assume", _truth_value)
    platform, model = _facts(args)
    if args.local is not None and not Path(args.local).is_dir():
        raise UsageError(f"--local {args.local}: no such folder")
    if args.from_ and args.format in ("github", "sarif"):
        raise UsageError("--from goes with --format text or json")
    host = _launch_host(Path(args.local).resolve()) if args.local is not None else None
    found, unread, mounted = _commands_in_files(args.file)
    commands = ([(None, tuple(launch))] if launch else []) + found
    lines = list(dict.fromkeys(argv for _, argv in commands if launch_kind(argv) != "help"))
    rules = _Rules(args)
    book = _answer_book(args, rules, env, assume)
    # A launch line met again (one model served from several scripts, or checked by an earlier run on
    # the same rules, code and options) is checked once: its answer is all its report depends on.
    own_words = {argv for argv in lines if reads_only_its_words(argv, {**os.environ, **env})} \
        if book is not None else set()
    answers: dict[tuple[str, ...], tuple] = {}
    if book is not None and not args.fresh:
        answers.update((argv, (kept, None)) for argv in lines
                       if argv in own_words and (kept := book.get(argv)) is not None)
    pending = [argv for argv in lines if argv not in answers]
    if pending or book is None:  # the rule set opened, if only to say what is wrong with it
        answers.update(_evaluated(args, rules.ruleset, pending, env, assume, platform, model, host, book, own_words,
                                  mounted))
    failed = False
    documents, texts, reports = [], [], []
    for place, argv in commands:
        if launch_kind(argv) == "help":  # argparse prints the help and exits 0: there is no launch
            note = "the launch asks for SGLang's help (--help) and exits: nothing to check"
            if args.format == "json":
                documents.append({**({"file": place[0], "line": place[1]} if place else {}), "note": note})
            elif args.format == "text":
                texts.append(f"{place[0]}:{place[1]}: {_short(argv)}\n" + _indent(note) if place else note)
            continue
        answer, evaluated = answers[argv]
        failed |= bool(answer.code)
        if args.format == "json":
            documents.append({**({"file": place[0], "line": place[1]} if place else {}), **answer.shown})
        elif args.format == "github":
            texts.extend(_annotation_lines(answer.shown, place))
        elif args.format == "sarif":
            reports.append((place, *evaluated))
        else:
            texts.append(f"{place[0]}:{place[1]}: {_short(argv)}\n" + _indent(answer.shown) if place else answer.shown)
    if args.format == "json":
        from ..core.serialize import dumps

        sys.stdout.write(dumps(documents[0] if not args.file else {
            "commands": documents, **({"unread": [{"file": path, "reason": why} for path, why in unread]} if unread else {})}))
    elif args.format == "sarif":
        from ..core.serialize import dumps
        from ..products.check.sarif import sarif_document

        sys.stdout.write(dumps(sarif_document(reports, __version__)))
    else:
        if args.file and not found:
            texts.append("no launch command found in " + ", ".join(args.file))
        texts += [f"::warning file={_escape_property(path)},title=sglang-constraints::not read: {_escape_data(why)}"
                  if args.format == "github" else f"{path}: not read: {why}" for path, why in unread]
        print("\n".join(texts))
    return EXIT_FINDINGS if failed else EXIT_OK


def _facts(args: argparse.Namespace) -> tuple[object, object]:
    """The platform profile and the model facts the options give (None each when not given)."""
    platform = model = None
    if args.platform or args.device_memory is not None:
        from ..logic.platforms import find_platform, memory_mib, with_device_memory

        platform = find_platform(args.platform) if args.platform else None
        if args.device_memory is not None:
            platform = with_device_memory(platform, memory_mib(args.device_memory))
    if args.model_config or args.model_arch:
        from ..logic.model_config import ModelFacts

        model = ModelFacts.from_file(args.model_config) if args.model_config else ModelFacts.from_architecture(args.model_arch)
    return platform, model


def _cached_models(commands: Mapping[tuple[str, ...], CommandLine], env: dict[str, str]) -> dict[tuple[str, ...], object]:
    """By launch line (its parsed command), the model facts of the Hub id its `--model-path` names (at
    its `--revision`) when the Hugging Face cache here holds that snapshot's config.json, read as
    `--model-config` reads one; else None (a local folder's config.json is read by `check` itself)."""
    from ..logic.hub_cache import hub_cached_config
    from ..logic.model_config import ModelFacts

    found: dict[tuple[str, ...], object] = {}
    read: dict[Path, object] = {}
    for argv, command in commands.items():
        path = hub_cached_config(command.given.get("model_path"), command.given.get("revision"),
                                 {**os.environ, **env, **command.env})
        if path is not None and path not in read:
            try:
                read[path] = ModelFacts.from_file(path)
            except UsageError:  # not a config.json: as if the cache did not hold it
                read[path] = None
        found[argv] = read.get(path) if path is not None else None
    return found


def _launch_host(folder: Path) -> object:
    from ..logic.launch_host import LaunchHost

    return LaunchHost(folder)


class _Rules:
    """The rule set of `--rules` or `--release`, opened when first needed: a run whose every line was
    answered before never reads it."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self._ruleset: RuleSet | None = None

    @property
    def ruleset(self) -> RuleSet:
        if self._ruleset is None:
            self._ruleset = open_rules(self.args)
        return self._ruleset

    def key(self) -> str | None:
        """The key of the rule set's index, from a note when there is one (the rule set unread), else
        from the rule set opened; None when it has no index."""
        from ..products.reuse.keys import noted_index_key, rules_index_key

        if self._ruleset is None:
            found = rules_index_key(self.args.rules) if self.args.rules else \
                noted_index_key(self.args.release, self.args.index_url)
            if found is not None:
                return found
        return self.ruleset.__dict__.get("index_key")


def _answer_book(args: argparse.Namespace, rules: _Rules, env: dict[str, str], assume: dict) -> AnswerBook | None:
    """Where this run's answers are kept, by the rule set, the code and every option an answer depends
    on; None when one depends on more: this shell's environment (`--use-env`), the files of the launch
    host (`--local`), another release (`--from`), or a SARIF log (one document of every report)."""
    import hashlib

    from ..core.cache import code_fingerprint
    from ..core.places import DATA
    from ..products.reuse.answers import answer_book

    if args.use_env or args.local is not None or args.from_ or args.format == "sarif":
        return None
    key = rules.key()
    if key is None:
        return None
    model_config = hashlib.sha256(Path(args.model_config).read_bytes()).hexdigest() if args.model_config else ""
    data = sorted((path.name, path.stat().st_size, path.stat().st_mtime_ns) for path in DATA.glob("*.json"))
    return answer_book([
        f"rules {key}",
        "code " + code_fingerprint("products.check.linter", "products.check.report", "products.check.fixes",
                                   "products.check.words", "products.reuse.index", "products.reuse.rulesets",
                                   "logic.launch_files"),
        "command " + hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),  # the command layer words the text
        f"data {data}",
        f"options {[args.format, args.show_possible, args.definite_only, sorted(env.items()), sorted(assume.items())]}",
        f"facts {[args.platform, args.device_memory, args.model_arch, model_config]}",
    ])


def _evaluated(args: argparse.Namespace, ruleset: RuleSet, lines: list[tuple[str, ...]], env: dict[str, str],
               assume: dict, platform, model, host, book: AnswerBook | None,
               own_words: set[tuple[str, ...]], mounted: dict[str, str]) -> dict[tuple[str, ...], tuple]:
    """Each launch line checked, its answer kept in `book` when it depends on its words alone (those of
    `own_words`): by line, its answer and what a SARIF log is made from (the report, its fixes, what no
    fix decides). `mounted`: the files the deployment puts where the launch runs, by path."""
    from ..products.check.linter import check
    from ..products.check.report import report_json, report_text
    from ..products.check.words import Flags, by_function
    from ..products.reuse.answers import Answer
    from ..products.reuse.rulesets import load_rules, release_rules

    from ..logic.launch import parse_command

    # A `--config` file the deployment mounts (a ConfigMap's key) merged as SGLang merges it: its words
    # first, then the line's own; the line is checked, and its fixes made, as those words.
    words = {argv: _with_mounted_config(argv, mounted, ruleset) for argv in lines}
    commands = {argv: parse_command(list(words[argv]), ruleset.catalog) for argv in lines}
    models = {argv: model for argv in lines} if model is not None else _cached_models(commands, env)
    kept = None
    if not assume:  # a command on a platform or a given model is evaluated from the bare launch on them
        from ..products.reuse.index import keep_model_states, load_model_states, with_baseline_on

        for facts in {id(facts): facts for facts in models.values()}.values():
            with_baseline_on(ruleset, platform, facts)
        # What launches found of a model path is kept for the next only without a config.json read here.
        kept = load_model_states(ruleset, (command.given.get("model_path") for argv, command in commands.items()
                                           if models[argv] is None))
    flags, groups = Flags(ruleset.flags), by_function(ruleset.rules)
    if args.from_:  # what changes from another release: only then
        from ..products.check.upgrade import upgrade, upgrade_json, upgrade_text
    older = (load_rules(args.from_) if Path(args.from_).suffix == ".json" or Path(args.from_).is_dir()
             else release_rules(args.from_, args.index_url)) if args.from_ else None
    found: dict[tuple[str, ...], tuple] = {}
    for argv in lines:
        report = check(ruleset, list(words[argv]), env=env, use_env=args.use_env, assume=assume,  # type: ignore[arg-type]
                       platform=platform, model=models[argv], host=host, files=mounted)
        fixes, beyond = _fixes(ruleset, report, list(words[argv]), flags, groups,
                               {**(os.environ if args.use_env else {}), **env}, platform, models[argv], host)
        change = None
        if older is not None:
            before = check(older, list(words[argv]), env=env, use_env=args.use_env, assume=assume,  # type: ignore[arg-type]
                           platform=platform, model=model, host=host)
            change = upgrade(older, ruleset, before, report, list(words[argv]))
        if args.format == "json":
            document = report_json(report, fixes, beyond)
            if words[argv] != argv:
                document["config_mounted"] = True  # the --config file read from the deployment's ConfigMap
            if model is None and models[argv] is not None:
                document["model_config"] = models[argv].source
            shown: object = {**document, "upgrade": upgrade_json(change)} if change is not None else document
        elif args.format == "github":
            shown = _annotation_items(report)
        elif args.format == "sarif":
            shown = None
        else:
            given = frozenset(k for k, v in (("platform", platform), ("model", models[argv] or _local_model(argv))) if v)
            cached = [f"the model's config.json from the Hugging Face cache: {models[argv].source}"] \
                if model is None and models[argv] is not None else []
            if words[argv] != argv:
                cached.append("the --config file read from the ConfigMap the deployment mounts at its path")
            shown = report_text(report, fixes, show_possible=args.show_possible and not args.definite_only,
                                given=given, beyond=beyond, notes=cached)
            if change is not None:
                shown += "\n" + upgrade_text(change)
        answer = Answer(int(bool(report.definite or report.argument_errors)), shown)
        found[argv] = (answer, (report, fixes, beyond))
        if book is not None and argv in own_words:
            book.add(argv, answer)
    if kept:
        keep_model_states(ruleset, kept)
    if book is not None:
        book.save()
    return found


def _annotation_items(report) -> tuple[tuple[str, str], ...]:
    """The title and message of a GitHub annotation for each definite or argument error of a report."""
    from ..products.check.report import shown_message

    found = [("sglang-constraints", e.message) for e in report.argument_errors]
    for finding in report.definite:
        rule = finding.rule
        found.append((f"sglang-constraints {rule.id}",
                      f"{shown_message(rule, finding.text)} ({rule.location.file}:{rule.location.line})"))
    return tuple(found)


def _annotation_lines(items: Sequence[tuple[str, str]], place: tuple[str, int] | None) -> list[str]:
    """GitHub workflow commands: one `::error` per item, at the launch command's line."""
    where = f"file={_escape_property(place[0])},line={place[1]}," if place else ""
    return [f"::error {where}title={title}::{_escape_data(message)}" for title, message in items]


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _commands_in_files(paths: Sequence[str]) -> tuple[list[tuple[tuple[str, int], tuple[str, ...]]],
                                                       list[tuple[str, str]], dict[str, str]]:
    """(file, line) and the command, for every launch command in the files (folders searched); the
    files that name SGLang's launcher but cannot be read, each with why (a template that decides its
    lines, YAML that does not parse): said, not passed over in silence; and the files the manifests'
    ConfigMaps put where their containers run, by path (a launch's `--config` is read from there)."""
    if not paths:
        return [], [], {}
    from ..logic.launch_files import (config_maps, config_mounts, file_kind, launch_commands,  # YAML's reader:
                                      mounted_files, server_config, unread_reason)  # only for files

    found, unread, maps, mounts = [], [], {}, []
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise UsageError(f"--file {given}: no such file or folder")
        files = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.is_file() and _worth_reading(p))
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise UsageError(f"--file {path}: cannot read it ({error.__class__.__name__})") from None
            kind = file_kind(path.name)
            commands = launch_commands(text, kind)
            if kind == "yaml" and ("ConfigMap" in text or "volumeMounts" in text):
                maps.update(config_maps(text))
                mounts += config_mounts(text)
            for command in commands:
                found.append(((path.as_posix(), command.line), _config_beside(command.argv, path.parent)))
            if not commands and kind == "yaml" and server_config(text):  # launched as `--config FILE`
                found.append(((path.as_posix(), 1), ("--config", path.as_posix())))
            elif not commands and (why := unread_reason(text, kind)) is not None:
                unread.append((path.as_posix(), why))
    return found, unread, mounted_files(mounts, maps)


def _config_beside(argv: tuple[str, ...], folder: Path) -> tuple[str, ...]:
    """A file's launch line whose relative `--config FILE` is not found from here but beside the file
    (a script run from its own folder): read from there, as the words of the line. SGLang reads it
    from where the launch runs, which a file does not say; from here, a missing file would be a false
    "Config file not found"."""
    found = _config_word(argv)
    if found is None:
        return argv  # most lines: not read again
    tokens, assigned, at = found
    given = Path(tokens[at]).expanduser()
    if given.is_absolute() or given.exists() or not (folder / given).is_file():
        return argv
    tokens[at] = (folder / given).as_posix()
    return (*(f"{name}={value}" for name, value in assigned.items()), *tokens)


def _with_mounted_config(argv: tuple[str, ...], mounted: dict[str, str], ruleset: RuleSet) -> tuple[str, ...]:
    """The launch line with its `--config FILE` merged, when the deployment mounts that file (a
    ConfigMap's key at the path the line names); else the line as written. A file SGLang's merger
    refuses stays named, for `check` to read it there (`files`) and tell its error as SGLang tells it."""
    from ..logic.launch import config_arguments

    found = _config_word(argv) if mounted else None
    if found is None or found[0][found[2]] not in mounted:
        return argv
    tokens, assigned, _ = found
    merged, problem = config_arguments(tokens, ruleset.catalog, mounted.__getitem__)
    if problem:
        return argv
    return (*(f"{name}={value}" for name, value in assigned.items()), *merged)


def _config_word(argv: tuple[str, ...]) -> tuple[list[str], dict[str, str], int] | None:
    """A launch line's words, its assignments and the place of its `--config` file's word; None when
    it names none (a line without `--config` is not split again)."""
    from ..logic.launch_words import split_command

    if not any("--config" in word for word in argv):
        return None
    tokens, assigned = split_command(list(argv))
    at = tokens.index("--config") + 1 if "--config" in tokens else len(tokens)
    return (tokens, assigned, at) if at < len(tokens) else None


def _worth_reading(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith((".sh", ".bash", ".yaml", ".yml", ".dockerfile")) or name.startswith(("dockerfile", "containerfile"))


def _short(argv: Sequence[str]) -> str:
    text = " ".join(" ".join(argv).split())
    return text if len(text) <= 100 else text[:97] + "..."


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
