"""The main job: from a source tree to rules, flags and warnings; reads through the tree, writes nothing."""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from ...analysis.callgraph import Program
from ...analysis.reuse import MemoryStore, StaleReuse
from ...analysis.run import Run
from ...analysis.catalog import build_catalog
from ...analysis.config_loader import REGISTERS, SGLANG_CONFIGS, TRANSFORMERS_FILES, config_loader, said_again
from ...analysis.modules import FunctionFacts, ModuleSummary, Outline, deep_recursion, dotted_module, outline, summarize
from ...analysis.environ import env_defaults
from ...analysis.helpers import CalledNames, helper_library, places_of_names
from ...analysis.rules import rules_of
from ...core.collector import long_lived
from ...core.errors import ParseError, SourceError
from ...core.formula import terms_once
from ...core.model import (ConfigLoader, Flag, HelperLibrary, Notice, Rule, SourceProblem, Term, Write,
                           placeholder_conditions, placeholder_operands)
from ...core.progress import step
from ...logic.environment import EnvVar
from ...sources.layout import Layout, find_layout
from ...sources.trees import SourceInfo, SourceTree
from .relations import Relations, relations, with_related
from .witness import witnessed


@dataclass(frozen=True, slots=True)
class FileInfo:
    path: str
    sha256: str
    lines: int


@dataclass(frozen=True, slots=True)
class Extraction:
    info: SourceInfo
    layout: Layout
    files: tuple[FileInfo, ...]
    rules: tuple[Rule, ...]
    flags: tuple[Flag, ...]
    notices: tuple[Notice, ...]
    problems: tuple[SourceProblem, ...]
    entry_points: tuple[str, ...]
    relations: Relations | None = None  # how the rules relate; the graph exports are built from it
    resolution: tuple[Write, ...] = ()  # the writes that `resolved(...)` terms of the rules read
    helpers: HelperLibrary = HelperLibrary()  # what platform, model and opaque terms call, as source
    environment: Mapping[str, EnvVar] = field(default_factory=dict)  # environ.py's `envs.NAME` declarations
    # What the next extraction of a similar source can reuse (`analysis.reuse`): walks and function facts.
    kept: MemoryStore | None = field(default=None, compare=False, repr=False)
    reused: tuple[int, int] = (0, 0)  # (walks reused from the store, walks made)
    run_reused: bool = False  # the run was the one the store kept (no walk it entered read differently)


def read_modules(tree: SourceTree, paths, keep_going: bool, known: Mapping[str, FunctionFacts] | None = None,
                 outlines: Mapping[str, Outline] | None = None,
                 ) -> tuple[list[ModuleSummary], list[FileInfo], list[SourceProblem]]:
    """The layout's files indexed and parsed (a function an earlier extraction parsed, `known`, is
    parsed when it is walked; a file it indexed, `outlines`, is parsed when its tree is read), their
    digests, and the files that did not parse."""
    modules: list[ModuleSummary] = []
    files: list[FileInfo] = []
    problems: list[SourceProblem] = []
    for path in paths:
        files.append(_file_info(tree, path))
        try:
            modules.append(summarize(path, tree.read_text(path), known, outlines))
        except ParseError as error:
            if not keep_going:
                raise
            problems.append(error.problem)
        except SourceError as error:
            if not keep_going:
                raise
            problems.append(SourceProblem(path, 0, 0, str(error)))
    return modules, files, problems


def module_loader(tree: SourceTree, outlines: Mapping[str, Outline] | None) -> Callable[[str], ModuleSummary | None]:
    """Modules of the tree outside the layout's files, indexed when the catalog first asks for one by
    its dotted name (the parser registries whose names `--tool-call-parser` offers)."""
    loaded: dict[str, ModuleSummary | None] = {}

    def load(dotted: str) -> ModuleSummary | None:
        if dotted not in loaded:
            loaded[dotted] = None
            base = dotted.replace(".", "/")
            for path in (base + ".py", base + "/__init__.py"):
                if tree.has(path):
                    with contextlib.suppress(ParseError, SourceError):
                        loaded[dotted] = outline(path, tree.read_text(path), outlines)
                    break
        return loaded[dotted]

    return load


def _followed(program: Program, run: Run):
    """Functions outside the read files that the launch calls into (`kernel_plugins/*/binding.py`'s
    hooks, `SpeculativeAlgorithm.from_string`): their guards and writes are the launch's too."""
    for dotted in sorted(program.modules):
        if dotted in program.read:
            continue
        module = program.modules[dotted]
        for key in module.functions:  # keys first: asking for a function parses it (most were never entered)
            if f"{module.dotted}:{key}" in run.entered:
                yield module, program.walk(module.functions[key])


def _helpers(program: Program, rules: list[Rule], resolution: tuple[Write, ...]) -> HelperLibrary:
    """The helpers the rules' and the resolution's platform, model and opaque terms call, each looked
    up in the modules of the rules that read it: where the guard or write is, and its call path."""
    by_id = {r.id: r for r in rules}
    called = CalledNames()

    def modules(rule: Rule) -> set[str]:
        files = {rule.location.file, *(step.split("::", 1)[0] for step in rule.call_path)}
        return {dotted_module(f) for f in files}

    uses = [(called.of([r.effective, *(w for w, _ in r.assigns),
                        *(w for _, v in r.placeholders for w in placeholder_conditions(v))],
                       [*(v for _, v in r.assigns), *(o for _, v in r.placeholders for o in placeholder_operands(v))]),
             modules(r))
            for r in rules]
    uses += [(called.of([w.when, *(c for c, _ in w.cases)], [v for _, v in w.cases]), modules(by_id[w.rule]))
             for w in resolution if w.rule in by_id]
    return helper_library(places_of_names(uses), program.denotes, program.module, program.mutated_anywhere,
                          program.changed_by_functions, program.registrations)


def _config_loader(tree: SourceTree, rules: list[Rule]) -> ConfigLoader | None:
    """What decides whether transformers loads a checkpoint's config.json, where a trigger or message
    asks (`raised(ValueError, AutoConfig.from_pretrained(...))`), from the transformers the source pins."""
    seen: set = set()
    asked = any("AutoConfig.from_pretrained(" in term.text for rule in rules
                for term in (*terms_once(rule.effective, seen),
                             *(o for _, v in rule.placeholders for o in placeholder_operands(v) if isinstance(o, Term))))
    version = tree.pins().get("transformers") if asked else None
    if version is None:
        return None
    transformers = {path: text for path in TRANSFORMERS_FILES
                    if (text := tree.library_text("transformers", path)) is not None}
    # SGLang's config classes, and the modules that register more (0.5.23's `common.py` subclasses
    # transformers' DeepseekV3Config as `kimi_k2` and puts it in `_CONFIG_REGISTRY`).
    # Tested as bytes, decoded only when kept: a release has some 2,000 modules and a few register.
    marks = tuple(mark.encode() for mark in REGISTERS)
    registering = {path: tree.read_text(path) for path in tree.paths() if path.endswith(".py") and (
        path.startswith(SGLANG_CONFIGS) or any(mark in tree.read_bytes(path) for mark in marks))}
    return config_loader(version, transformers, registering)


def _file_info(tree: SourceTree, path: str) -> FileInfo:
    data = tree.read_bytes(path)
    return FileInfo(path, hashlib.sha256(data).hexdigest(), data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1))


def _summaries(program: Program, modules: list[ModuleSummary], keep_going: bool, problems: list[SourceProblem]):
    """Each function walked; one nested beyond what the walk can follow is a problem of its file, not a crash."""
    for module in modules:
        for fn in module.functions.values():
            try:
                yield module, program.walk(fn)
            except RecursionError:
                problem = SourceProblem(fn.file, fn.line, 0, f"{fn.qualname}: nested too deep to analyse")
                if not keep_going:
                    raise ParseError(problem) from None
                problems.append(problem)


def no_collections() -> contextlib.AbstractContextManager[None]:
    """No cyclic garbage collection while parsing, walking and writing (`core.collector.long_lived`:
    what is still alive at the end moves to the oldest generation unscanned).

    With the default thresholds the collector rescans libcst's growing heap again and again, a
    quarter of the run time on a release; with fewer, larger passes (`FEWER_COLLECTIONS`) it still
    scanned 100,000 young objects ten times per extraction of 0.5.23 (0.2 s) to find next to nothing:
    an extraction makes few reference cycles (its peak memory is the same without the collector:
    0.5.18, 0.5.23 and the bench's synthetic source, within 5 MiB). What is freed by reference
    counting still is; a cycle waits for a full collection.
    """
    return long_lived()


def extract(tree: SourceTree, include: list[str] | None = None, keep_going: bool = False,
            timings: dict[str, float] | None = None, store: MemoryStore | None = None, keep: bool = False,
            jobs: int = 1) -> Extraction:
    """Rules, flags and warnings of a source tree; `timings`, when given, gets seconds per stage.

    With `store`, what an earlier extraction kept is reused where it still holds: its walks where
    every question they asked gets the same answer (`analysis.reuse`), its witnesses where their
    inputs are the same (`products.witness`): the same result, faster. A reused walk that must be made
    again and comes out different (not seen on real sources) makes the extraction start over without
    the store. With `store` or `keep`, `Extraction.kept` holds what the next extraction can reuse.
    `jobs`: processes the stages that split into independent pieces may share them with
    (`core.parallel`): the same result, sooner on several cores."""
    with no_collections():
        if store is not None:
            try:
                return _extract(tree, include, keep_going, _Stages(timings), store, True, jobs)
            except StaleReuse:
                pass
        return _extract(tree, include, keep_going, _Stages(timings), None, keep, jobs)


class _Stages:
    """Wall time per stage, for the benchmark (`bench/run.py`), when asked; and the stage in progress
    told to the terminal's status line, when one is open (`core.progress`)."""

    # What comes after each stage, in words.
    NEXT = {"": "parsing its files (1 of 4)", "parse": "walking its functions and the launch's run (2 of 4)",
            "walk": "finding an example launch for each guard (3 of 4)", "witnesses": "relating the errors (4 of 4)"}

    def __init__(self, into: dict[str, float] | None) -> None:
        self.into = into
        self.last = time.perf_counter()
        step(self.NEXT[""])

    def done(self, stage: str) -> None:
        if stage in self.NEXT:
            step(self.NEXT[stage])
        if self.into is not None:
            now = time.perf_counter()
            self.into[stage] = self.into.get(stage, 0.0) + now - self.last
            self.last = now


def _extract(tree: SourceTree, include: list[str] | None, keep_going: bool, stages: _Stages,
             store: MemoryStore | None, keep: bool, jobs: int) -> Extraction:
    layout = find_layout(tree.paths(), include)
    modules, files, problems = read_modules(tree, layout.files, keep_going, store.facts if store is not None else None,
                                            store.outlines if store is not None else None)
    stages.done("parse")
    # What the later stages kept last time (catalog scans, the run, witnesses, relations), and keep for next time.
    later: dict | None = dict(store.later) if store is not None else {} if keep else None
    scans = dict(later.get("catalog", {})) if later is not None else None
    flags = build_catalog(modules, scans, module_loader(tree, store.outlines if store is not None else None))
    if later is not None and scans != later.get("catalog"):
        later["catalog"] = scans  # else the very dict read: a delta of the bundle leaves it out
    program = Program(tree, modules, store, frozenset(f.name for f in flags),
                      {f.name: f.fallback for f in flags if f.fallback is not None})
    with deep_recursion():
        read = list(_summaries(program, modules, keep_going, problems))
        run = Run(program, later.get("registering") if later is not None else None)
        run.execute(later.get("run") if later is not None else None)
        followed = list(_followed(program, run))
        rules = run.apply(rules_of(read + followed))
        resolution = run.resolution(rules)
        loader = _config_loader(tree, rules)
        helpers = replace(_helpers(program, rules, resolution), config_loader=loader)
        if loader is not None:
            rules = [said_again(rule, loader) for rule in rules]
        files.extend(_file_info(tree, path) for path in sorted({module.path for module, _ in followed}))
    if later is not None and run.registries.used != later.get("registering"):
        later["registering"] = run.registries.used
    notices = program.notices(rules, flags)
    stages.done("walk")
    memo = dict(later.get("witnesses", {})) if later is not None else None
    # Example command lines, verified like `check`, shared with helper processes (`jobs`); the
    # relations do not read them, so they are made here meanwhile.
    done = witnessed(rules, flags, tree, resolution, memo, jobs, beside=lambda: relations(rules, later))
    stages.done("witnesses")
    related = done.aside
    rules = with_related(done.items, related)
    stages.done("related")
    return Extraction(
        info=tree.info,
        layout=layout,
        files=tuple(files),
        rules=tuple(rules),
        flags=tuple(flags),
        notices=tuple(notices),
        problems=tuple(problems),
        entry_points=tuple(program.entry_points),
        relations=related,
        resolution=resolution,
        helpers=helpers,
        environment=env_defaults(tree),
        kept=MemoryStore(program.kept(), program.facts(), {**later, "witnesses": memo, "run": run.keep()},
                         program.outlines())
        if later is not None else None,
        reused=program.reuse_counts(),
        run_reused=run.reused,
    )
