"""Generate the launch commands of the differential test from flags.json and rules.json.

Deterministic: the same two documents give the same list, in the same order, with the same ids
(a case id hashes the model name and the arguments, never the folder's absolute path). Sources:

  choice    every choice of every flag that has choices;
  bool      every boolean flag alone (`--x`, and `--no-x` for BooleanOptionalAction);
  number    numeric flags at edge values (0 and -1 for all; 1, 2, 3 for widths and counts);
  literal   each (flag, literal) a rule trigger compares, set alone (and its neighbours for < >);
  witness   per guard, the flags its trigger asks for set to the literals it compares with
            (a greedy walk of the trigger tree: `and` sets all, `or` its first flag-only branch,
            `not` subtrees - mostly negated earlier guards - left at their defaults);
  pair      the first two flag settings of each multi-flag witness, alone;
  example   every rule's example.before and example.after;
  argparse  `--flag=value`, unique and ambiguous prefixes, bad choices, missing values, unknown
            flags, bad numbers, values given to store_true flags.

(`--source generated`, the default: verify/.cache/cases.jsonl.) `--source user` instead reads the
launch commands people type, collected in verify/user_commands.txt (see user_cases below), and
writes verify/.cache/cases-user.jsonl; `--source all` writes both.

Each generated command loses any `--device`/`--model-path` it carries and gets `--device cpu --model-path
<folder>` in front. Most run on the Llama folder; a trigger or example that names an MLA/DSA or
MoE property runs on DeepSeek-V3 or Qwen3-MoE instead, and model-sensitive flags (attention, MoE,
quantization backends) run on all three.

    python verify/cases.py [--rules out/0.5.23/rules.json] [-o verify/.cache/cases.jsonl]
    python verify/cases.py --source user     # -> verify/.cache/cases-user.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    CASES_FILE,
    DEFAULT_RULES,
    MODEL_PLACEHOLDER,
    MODELS_DIR,
    USER_CASES_FILE,
    USER_COMMANDS,
    model_dir,
    write_jsonl,
)
from models import DRAFT_MODELS, GENERATED_MODELS, MODELS  # noqa: E402

DEFAULT_MODEL = GENERATED_MODELS[0]
# Flags the harness owns: every case runs on the CPU with one of our model folders.
OWNED = {"--device", "--model-path", "--model"}
# Flags whose effect depends most on the architecture (MHA/GQA vs MLA, dense vs MoE): their
# choices run on every folder. Others run on the first folder only, which keeps the case count
# (and the ~5 s a `check` run costs per case) down.
MODEL_SENSITIVE = ("--attention-backend", "--moe-runner-backend", "--moe-a2a-backend", "--quantization", "--kv-cache-dtype")
NUMERIC_TYPES = ("int", "float")
EDGE_VALUES = (0, -1, 1, 2, 3)

Flag = dict[str, Any]
Args = list[str]


class Catalog:
    """The flags of flags.json, by every spelling (aliases included)."""

    def __init__(self, flags_doc: dict[str, Any]) -> None:
        # Fields with no command-line spelling (set only by resolution) cannot be launched with.
        self.flags: list[Flag] = [flag for flag in flags_doc["flags"] if flag.get("flags")]
        self.by_spelling: dict[str, Flag] = {}
        for flag in self.flags:
            for spelling in flag["flags"]:
                self.by_spelling.setdefault(spelling, flag)

    @staticmethod
    def base_type(flag: Flag) -> str:
        text = flag.get("type") or "str"
        for name in ("bool", "int", "float"):
            if text in (name, f"Optional[{name}]"):
                return name
        if text.startswith("Literal[1") or text.startswith("Optional[Literal[1"):
            return "int"
        return "str"

    @staticmethod
    def is_switch(flag: Flag) -> bool:
        """A flag that takes no value (store_true and its deprecated variants)."""
        action = flag.get("action") or ""
        return "StoreTrue" in action or action in ("store_true", "store_false")

    @staticmethod
    def is_negatable(flag: Flag) -> bool:
        return (flag.get("action") or "").endswith("BooleanOptionalAction")


def render(value: Any) -> str:
    """A literal as a command-line word: argparse reads strings, so booleans become lowercase."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# String literals rule triggers compare each flag with (filled by generate): the placeholder of
# a flag with no choices is one of them, so "is not None" on --speculative-algorithm asks for
# "EAGLE", not for an unknown name that would only ever hit the name check.
KNOWN_STRINGS: dict[str, list[str]] = {}


def placeholder(flag: Flag, model: str) -> str:
    """Some value for a flag a trigger wants set (`is not None`) with no literal to use."""
    if flag.get("choices"):
        return render(flag["choices"][0])
    if KNOWN_STRINGS.get(flag["flags"][0]):
        return KNOWN_STRINGS[flag["flags"][0]][0]
    kind = Catalog.base_type(flag)
    if kind in NUMERIC_TYPES:
        return "1"
    name = flag["name"]
    if "model_path" in name or "tokenizer_path" in name:
        return str(model_dir(model))  # an existing folder with a config.json
    if "Dict" in (flag.get("type") or "") or name.endswith("_config") or "json" in name:
        return "{}"
    return "x"


def setting(flag: Flag, value: Any, model: str) -> Args | None:
    """The words that give `flag` the value `value`, or None when no command line can."""
    spelling = flag["flags"][0]
    if spelling in OWNED:
        return None
    if Catalog.is_switch(flag):
        return [spelling] if value is True else None
    if Catalog.is_negatable(flag):
        if value is True:
            return [spelling]
        if value is False:
            return ["--no-" + spelling[2:]]
        return None
    if value is None:
        return None
    kind = Catalog.base_type(flag)
    if kind == "int" and isinstance(value, float):
        value = int(value)
    if kind in NUMERIC_TYPES and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return None
    if kind == "bool" and not isinstance(value, bool):
        return None
    choices = flag.get("choices")
    if choices and render(value) not in [render(c) for c in choices]:
        return None  # a literal outside the choices is an argparse case, made elsewhere
    if isinstance(value, (list, tuple, dict)):
        return None
    return [spelling, render(value)]


# ---------------------------------------------------------------- trigger walking


def field_flag(node: dict[str, Any], catalog: Catalog) -> Flag | None:
    if node.get("type") == "atom" and node.get("kind") == "field" and node.get("flag"):
        return catalog.by_spelling.get(node["flag"])
    return None


def literal_of(node: dict[str, Any]) -> tuple[bool, Any]:
    if node.get("type") == "literal":
        return True, node.get("value")
    return False, None


def compared_literals(tree: Any, catalog: Catalog) -> Iterable[tuple[Flag, str, Any]]:
    """Every (flag, op, literal) comparison anywhere in a trigger tree, both orientations."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        if node.get("type") == "compare":
            left, right = node.get("left", {}), node.get("right", {})
            for atom, other in ((left, right), (right, left)):
                flag = field_flag(atom, catalog)
                ok, value = literal_of(other)
                if flag is not None and ok:
                    yield flag, node.get("op", ""), value
        elif node.get("type") == "atom":
            flag = field_flag(node, catalog)
            if flag is not None and Catalog.base_type(flag) == "bool":
                yield flag, "truth", True
        for key in ("args", "arg", "left", "right"):
            if key in node:
                stack.append(node[key])


def values_for(flag: Flag, op: str, value: Any) -> list[Any]:
    """Values worth trying for a comparison: the literal, and for orderings its neighbours."""
    if op in ("in", "not in") and isinstance(value, list):
        return list(value)
    if op in ("contains", "not contains"):
        return [value]
    if op in ("<", "<=", ">", ">=") and isinstance(value, (int, float)) and not isinstance(value, bool):
        step = 1 if Catalog.base_type(flag) == "int" or float(value).is_integer() else 0.5
        return [value - step, value, value + step]
    if op in ("is", "is not") and value is None:
        return ["<set>"]  # "is not None" asks for some value
    return [value]


def satisfy(node: Any, catalog: Catalog, model: str, out: dict[str, Args]) -> bool:
    """Greedy: add to `out` settings that make `node` true; False when it needs something a
    command line cannot give (platform, model, env, opaque atoms are left to chance)."""
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "and":
        results = [satisfy(arg, catalog, model, out) for arg in node.get("args", [])]
        return all(results)
    if kind == "or":
        args = node.get("args", [])
        for arg in args:  # the first branch that flags alone can make true
            trial: dict[str, Args] = dict(out)
            if satisfy(arg, catalog, model, trial) and len(trial) > len(out):
                out.update(trial)
                return True
        for arg in args:
            trial = dict(out)
            if satisfy(arg, catalog, model, trial):
                out.update(trial)
                return True
        return False
    if kind == "not":
        return True  # negated earlier guards and "flag unset": the defaults usually hold
    if kind == "atom":
        flag = field_flag(node, catalog)
        if flag is None:
            return False
        words = setting(flag, True, model) if Catalog.base_type(flag) == "bool" else None
        if words is None:
            if Catalog.base_type(flag) == "bool":
                return False
            words = [flag["flags"][0], placeholder(flag, model)]  # truthy: any value
            if flag["flags"][0] in OWNED:
                return False
        out.setdefault(flag["flags"][0], words)
        return True
    if kind == "compare":
        left, right = node.get("left", {}), node.get("right", {})
        op = node.get("op", "")
        flag, (ok, value) = field_flag(left, catalog), literal_of(right)
        if flag is None or not ok:
            return False
        if flag["flags"][0] in out:
            return True  # first setting wins; a later conflicting one is left to chance
        default = flag.get("default_value")
        target: Any
        if op == "==" or op == "is":
            if value is None or value == default:
                return True
            target = value
        elif op in ("!=", "is not"):
            if value != default and not (value is None and default is None):
                return True
            if value is None:
                words = [flag["flags"][0], placeholder(flag, model)] if not Catalog.is_switch(flag) else [flag["flags"][0]]
                if flag["flags"][0] in OWNED:
                    return False
                out[flag["flags"][0]] = words
                return True
            others = [c for c in (flag.get("choices") or []) if c != value]
            if not others:
                return False
            target = others[0]
        elif op == "in" and isinstance(value, list):
            if default in value:
                return True
            target = next((v for v in value if setting(flag, v, model)), None)
        elif op == "not in" and isinstance(value, list):
            if default not in value:
                return True
            target = next((c for c in (flag.get("choices") or []) if c not in value), None)
        elif op == "contains":
            target = value
        elif op in (">", ">=", "<", "<=") and isinstance(value, (int, float)) and not isinstance(value, bool):
            step = 1 if Catalog.base_type(flag) == "int" else 0.5
            target = {">": value + step, ">=": value, "<": value - step, "<=": value}[op]
            if isinstance(default, (int, float)) and not isinstance(default, bool):
                if {">": default > value, ">=": default >= value, "<": default < value, "<=": default <= value}[op]:
                    return True
        else:
            return False
        words = setting(flag, target, model)
        if words is None:
            return False
        out[flag["flags"][0]] = words
        return True
    return False


def model_for(tree: Any) -> str:
    """The folder a rule's case runs on: DeepSeek-V3 when its model atoms ask about MLA/DSA or
    DeepSeek, Qwen3-MoE when they (or its flags) are about experts, else the Llama folder."""
    text = json.dumps(tree)
    if any(key in text for key in ("Deepseek", "deepseek", "use_mla", "is_deepseek_dsa", "kv_lora_rank", "mla")):
        return "deepseek_v3"
    moe_words = ("Qwen3Moe", "num_experts", "moe_intermediate", "is_moe", "--moe-", "-moe-", "expert", "--ep-size", "eplb")
    if any(key in text for key in moe_words):
        return "qwen3_moe"
    return DEFAULT_MODEL


# ---------------------------------------------------------------- commands


def strip_owned(words: Args) -> Args:
    """Drop `--device X`, `--model-path X` (and `=` forms, `--model`) from a generated command."""
    out: Args = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        head = word.split("=", 1)[0]
        if head in OWNED:
            skip = "=" not in word
            continue
        out.append(word)
    return out


class Builder:
    """Collects cases, deduplicated by (model, args), in generation order."""

    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []
        self.seen: set[tuple[str, tuple[str, ...]]] = set()
        self.seen_args: set[tuple[str, ...]] = set()

    def add(self, model: str, args: Args, source: str, rule: str | None = None, any_model: bool = False) -> None:
        """`any_model`: skip the case when the same arguments already run on some folder."""
        args = strip_owned(list(args))
        key = (model, tuple(args))
        if key in self.seen or (any_model and tuple(args) in self.seen_args):
            return
        self.seen.add(key)
        self.seen_args.add(tuple(args))
        # Ids and cache keys name folders by placeholder, never by where the cache lives.
        portable = [word.replace(str(MODELS_DIR), "<models>") for word in args]
        ident = hashlib.sha1(json.dumps([model, portable]).encode()).hexdigest()[:12]
        argv = ["--device", "cpu", "--model-path", str(model_dir(model))] + args
        case: dict[str, Any] = {
            "id": f"{model[:2]}-{ident}",
            "model": model,
            "args": args,
            "argv": argv,
            "key": [MODEL_PLACEHOLDER.format(model)] + portable,
            "source": source,
        }
        if rule:
            case["rule"] = rule
        self.cases.append(case)


def models_for_flag(flag: Flag) -> list[str]:
    if flag["flags"][0] in MODEL_SENSITIVE:
        return list(GENERATED_MODELS)
    return [DEFAULT_MODEL]


def generate(flags_doc: dict[str, Any], rules_doc: dict[str, Any]) -> list[dict[str, Any]]:
    catalog = Catalog(flags_doc)
    build = Builder()
    flags = sorted(catalog.flags, key=lambda f: f["flags"][0])
    rules = [r for r in rules_doc["rules"] if r.get("kind") in ("raise", "assert")]
    KNOWN_STRINGS.clear()
    for rule in rules:
        for flag, op, value in compared_literals(rule.get("trigger"), catalog):
            values = value if isinstance(value, list) else [value]
            for item in values:
                if isinstance(item, str) and item and op in ("==", "in", "!=", "not in"):
                    known = KNOWN_STRINGS.setdefault(flag["flags"][0], [])
                    if item not in known:
                        known.append(item)

    # Baseline: the plain launch of every folder (what every other case is a delta from).
    for model in GENERATED_MODELS:
        build.add(model, [], "plain")

    for flag in flags:  # choice
        if flag["flags"][0] in OWNED:
            continue
        for choice in flag.get("choices") or []:
            for model in models_for_flag(flag):
                words = setting(flag, choice, model)
                if words:
                    build.add(model, words, f"choice:{flag['flags'][0]}")

    for flag in flags:  # bool
        if Catalog.is_switch(flag) or Catalog.is_negatable(flag):
            for value in (True, False) if Catalog.is_negatable(flag) else (True,):
                words = setting(flag, value, DEFAULT_MODEL)
                if words:
                    build.add(DEFAULT_MODEL, words, f"bool:{flag['flags'][0]}")

    # Every numeric flag at 0 and -1 (the usual "disabled"/"auto" sentinels and the bounds
    # guards check); the parallel widths and counts, where divisibility guards live, at 1, 2, 3
    # as well. Other literals a trigger compares with come from the literal source below.
    for flag in flags:  # number
        if Catalog.base_type(flag) not in NUMERIC_TYPES or flag.get("choices") or flag["flags"][0] in OWNED:
            continue
        name = flag["name"]
        widths = name.endswith("_size") or name.startswith("num_") or "_num_" in name
        for value in EDGE_VALUES if widths else EDGE_VALUES[:2]:
            build.add(DEFAULT_MODEL, [flag["flags"][0], render(value)], f"number:{flag['flags'][0]}")

    for rule in rules:  # literal: per rule, so that a case can name the rule it aims at
        model = model_for(rule.get("trigger"))
        for flag, op, value in compared_literals(rule.get("trigger"), catalog):
            for candidate in values_for(flag, op, value):
                if candidate == "<set>":
                    words = [flag["flags"][0]] if Catalog.is_switch(flag) else [flag["flags"][0], placeholder(flag, model)]
                    if flag["flags"][0] in OWNED:
                        continue
                else:
                    words = setting(flag, candidate, model)
                if words:
                    # One flag alone: once is enough, whichever folder (witnesses target models).
                    build.add(model, words, f"literal:{flag['flags'][0]}", rule["id"], any_model=True)

    pairs: list[tuple[str, Args, str]] = []
    for rule in rules:  # witness
        model = model_for(rule.get("trigger"))
        chosen: dict[str, Args] = {}
        satisfy(rule.get("trigger"), catalog, model, chosen)
        if not chosen:
            continue
        words = [word for key in sorted(chosen) for word in chosen[key]]
        build.add(model, words, "witness", rule["id"])
        if len(chosen) > 2:
            first_two = [word for key in sorted(chosen)[:2] for word in chosen[key]]
            pairs.append((model, first_two, rule["id"]))
    for model, words, rule_id in pairs:  # pair
        build.add(model, words, "pair", rule_id)

    for rule in rules_doc["rules"]:  # example
        example = rule.get("example") or {}
        model = model_for(rule.get("trigger"))
        for side in ("before", "after"):
            if example.get(side) is not None:
                build.add(model, example[side], f"example:{side}", rule["id"])

    add_argparse_cases(build, catalog, flags)
    return build.cases


def add_argparse_cases(build: Builder, catalog: Catalog, flags: list[Flag]) -> None:
    """Command lines whose interest is argparse itself: spelling, prefixes, bad values."""
    model = DEFAULT_MODEL
    valued = [f for f in flags if not Catalog.is_switch(f) and not Catalog.is_negatable(f) and f["flags"][0] not in OWNED]
    spellings = sorted(catalog.by_spelling)
    for flag in valued[::12]:  # --flag=value for a spread of valued flags
        value = render(flag["choices"][0]) if flag.get("choices") else placeholder(flag, model)
        build.add(model, [f"{flag['flags'][0]}={value}"], "argparse:equals")
    for flag in valued[::25]:  # missing value: the flag last on the line
        build.add(model, [flag["flags"][0]], "argparse:missing-value")
    for flag in [f for f in flags if f.get("choices")][::6]:
        build.add(model, [flag["flags"][0], "no-such-choice"], "argparse:bad-choice")
    for flag in [f for f in valued if Catalog.base_type(f) in NUMERIC_TYPES][::16]:
        build.add(model, [flag["flags"][0], "abc"], "argparse:bad-number")
        build.add(model, [flag["flags"][0], "1.5e"], "argparse:bad-number")
    for flag in [f for f in flags if Catalog.is_switch(f)][::15]:
        build.add(model, [f"{flag['flags'][0]}=1"], "argparse:switch-with-value")
    # Prefixes: argparse (allow_abbrev) accepts a unique prefix and rejects an ambiguous one.
    for spelling in spellings[::30]:
        for cut in (len(spelling) - 1, max(4, len(spelling) // 2)):
            prefix = spelling[:cut]
            matches = [s for s in spellings if s.startswith(prefix)]
            flag = catalog.by_spelling[spelling]
            if Catalog.is_switch(flag) or Catalog.is_negatable(flag):
                words = [prefix]
            else:
                value = render(flag["choices"][0]) if flag.get("choices") else placeholder(flag, model)
                words = [prefix, value]
            # A prefix of --device/--model-path would override the harness's own values.
            if not any(owned.startswith(prefix) for owned in OWNED):
                kind = "unique" if len(matches) == 1 or spelling == prefix else "ambiguous"
                build.add(model, words, f"argparse:prefix-{kind}")
    for words in (["--tp", "2"], ["--enable"], ["--disable"], ["--mem-frac", "0.5"], ["--dp", "1"],
                  ["--no-such-flag"], ["--no-such-flag", "1"], ["positional"], ["-x"], ["--"],
                  ["--tp-size", "1", "--tp-size", "2"], ["--tp-size", "-1"], ["--tp-size", "1.0"],
                  ["--port", "70000"], ["--port", "-1"], ["--mem-fraction-static", "nan"],
                  ["--mem-fraction-static", "inf"], ["--context-length", "0x10"],
                  ["--json-model-override-args", "{not json"], ["--json-model-override-args", "[]"],
                  ["--log-level", "nope"], ["--log-level", "DEBUG"], ["--dtype", "float64"],
                  ["--enable-hierarchical-cache=true"], ["--no-enable-hierarchical-cache"]):
        build.add(model, words, "argparse:edge")


# Sources kept whole under a budget: the ones aimed at guards. The others (choices, literal
# settings, booleans, numbers, argparse) share what the budget leaves, each an evenly spaced
# sample of its own list. The budget exists because a `check` run costs ~5 s a case and every new
# rules.json recomputes them all; VERIFY_BUDGET=0 runs everything.
MANDATORY = ("plain", "witness", "example", "pair")


def source_class(case: dict[str, Any]) -> str:
    return case["source"].split(":")[0]


def within_budget(cases: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """A deterministic subset of at most `budget` cases (all when budget <= 0 or enough)."""
    if budget <= 0 or len(cases) <= budget:
        return cases
    keep = {i for i, case in enumerate(cases) if source_class(case) in MANDATORY}
    shared: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        if i not in keep:
            shared.setdefault(source_class(case), []).append(i)
    room = max(0, budget - len(keep))
    total = sum(len(v) for v in shared.values())
    for members in shared.values():
        quota = min(len(members), room * len(members) // total) if total else 0
        keep.update(members[j * len(members) // quota] for j in range(quota))
    return [case for i, case in enumerate(cases) if i in keep]


# ---------------------------------------------------------------- user commands
#
# verify/user_commands.txt holds launch commands found in SGLang's docs, tests, benchmark scripts
# and public deployment recipes, one per line, each under a `# source:` comment naming where it was
# found. They are read as a shell would split them (NAME=VALUE prefixes are the environment); the
# launcher, `--host`/`--port`-like deployment noise and `--device` are dropped; `--model-path`
# (or `--model`) names a Hugging Face checkpoint, mapped to one of our folders by MODEL_MAP (the
# first pattern that matches); a draft model path likewise by DRAFT_MAP. A command whose model maps
# to no folder is skipped (and counted). A command typing a spelling 0.5.23 dropped (RENAMED) is also
# run with today's spelling (`modern`). Every base command then yields deterministic mutations
# (of its modern form):
#   choice   one valued flag with choices set to the next choice (the first such flag typed);
#   drop     one typed flag removed (which one: a hash of the command);
#   confuse  two flags people commonly add or confuse (CONFUSED), picked by a hash of the command,
#            each added alone (flags the command already sets are skipped).

NOISE_WITH_VALUE = {"--host", "--port", "--device", "--model-path", "--model", "--served-model-name",
                    "--api-key", "--log-dir", "--download-dir", "--nccl-port", "--metrics-port"}
NOISE_SWITCHES = {"--enable-metrics", "--log-requests"}
LAUNCHERS = ("sglang.launch_server", "sglang_router.launch_server", "launch_server.py", "sglang.bench_one_batch")

# (regular expression on the model named, folder); the first match wins; None skips the command.
MODEL_MAP: list[tuple[str, str | None]] = [
    (r"(?i)deepseek-v3\.2", "deepseek_v32"),
    # DeepSeek-V4 (fp8 + FP4 experts as released); NVFP4 / FP8 conversions (nvidia/..., sgl-project/...) stand on
    # the release's folder: their own quantization_config was not found in public sources.
    (r"(?i)deepseek-v4-pro", "deepseek_v4_pro"),
    (r"(?i)deepseek-v4", "deepseek_v4_flash"),
    (r"(?i)distill-llama-70b", "llama31_70b"),
    (r"(?i)distill-llama-8b", "llama31_8b"),
    (r"(?i)distill-qwen", "qwen25_7b"),
    # Kimi-K2.5 (and K2.6, the same KimiK25ForConditionalGeneration shape): a multimodal wrapper of Kimi-K2's
    # text model with INT4 experts; third-party quantizations of it (NVFP4, ...) stand on the same folder.
    (r"(?i)kimi-k2\.[56]", "kimi_k25"),
    (r"(?i)sglang-ci-dsv3|deepseek-coder-v2|deepseek-v2", "deepseek_v3"),
    # Checkpoints quantized otherwise than DeepSeek's fp8 blocks (modelopt FP4, AWQ, INT8, W4AFP8, a
    # BF16 conversion) carry another quantization_config: the unquantized folder gives their shape.
    (r"(?i)deepseek-(r1|v3).*(fp4|awq|int8|w4a|bf16)|(fp4|awq|int8|bf16).*deepseek-(r1|v3)", "deepseek_v3"),
    (r"(?i)deepseek-(v3|r1)", "deepseek_r1"),  # the official checkpoints ship fp8 blocks
    (r"(?i)kimi-k2", "kimi_k2"),
    # GLM-5.2 (GlmMoeDsa with IndexShare and 1M positions): the FP8 checkpoint on its fp8-block folder, the BF16
    # one and third-party quantizations (nvidia/GLM-5.2-NVFP4: modelopt FP4) on the unquantized one.
    (r"(?i)glm-5\.2(?!\d).*fp8", "glm52_fp8"),
    (r"(?i)glm-5\.2(?!\d)", "glm52"),
    # GLM-5 and GLM-5.1 share the GlmMoeDsa backbone (GLM-5-FP8's fp8 blocks aside); GLM-5.3 and later have no
    # folder and are skipped.
    (r"(?i)glm-5(\.1)?(?![.\d])", "glm5"),
    (r"(?i)glm-4\.7(?!-flash)", "glm47"),  # GLM-4.7-Flash is another (MLA) architecture: no folder
    (r"(?i)glm-4\.[56]", "glm45"),
    (r"(?i)minimax-m[12]", "minimax_m2"),
    (r"(?i)gpt-oss", "gpt_oss_20b"),
    (r"(?i)llama-4", "llama4_scout"),
    (r"(?i)qwen2(\.5)?-vl|qwen3-vl", "qwen25_vl_7b"),
    (r"(?i)qwen3-next|qwen3-coder-next", "qwen3_next"),  # hybrid linear attention (Gated DeltaNet), 512 experts
    # Qwen3.5 (and Qwen3.6, the same two architectures): the MoE sizes (397B-A17B, 122B-A10B, 35B-A3B, FP8 or
    # NVFP4 conversions) on the flagship's shape, the dense sizes on the 27B's (qwen3_5 stands in for all).
    (r"(?i)qwen3\.[56]-[\d.]+b-a\d+b", "qwen35_397b"),
    (r"(?i)qwen3\.[56]", "qwen36_27b"),
    (r"(?i)qwen3-\d+b-a\d+b|qwen3-coder-\d+b-a\d+b|qwen2-57b-a14b|qwen1\.5-moe", "qwen3_moe"),
    (r"(?i)qwen3-", "qwen3_8b"),
    (r"(?i)qwen2\.5-(0\.5|1\.5)b", "qwen25_1_5b"),
    (r"(?i)qwen2|qwq", "qwen25_7b"),
    (r"(?i)mixtral", "mixtral_8x7b"),
    (r"(?i)mistral", "mistral_7b"),
    (r"(?i)gemma-2", "gemma2_9b"),
    (r"(?i)gemma-3", "gemma3_12b"),
    # Gemma 4: the MoE 26B-A4B on its folder; the dense 31B and the edge E2B / E4B on the 31B's (the 12B is
    # Gemma4UnifiedForConditionalGeneration, another architecture: no folder).
    (r"(?i)gemma-4-26b-a4b", "gemma4_26b_a4b"),
    (r"(?i)gemma-4-(31b|e[24]b)", "gemma4_31b"),
    # Nemotron-H (nemotron_h: Mamba-2 / MoE / attention hybrids); Nemotron-Nano-9B-v2 (same model_type, dense)
    # stands on the Super's folder; NVFP4 / FP8 conversions on the BF16 shapes.
    (r"(?i)nemotron-3-super|nemotron-nano-9b-v2", "nemotron3_super"),
    (r"(?i)nemotron-3-nano-30b", "nemotron3_nano"),
    (r"(?i)ernie-4\.5-21b-a3b", "ernie45_21b_a3b"),
    (r"(?i)bge-reranker-v2-m3", "bge_reranker_v2_m3"),
    (r"(?i)internvl2_5-8b", "internvl25_8b"),
    (r"(?i)paddleocr-vl", "paddleocr_vl"),
    (r"(?i)mimo-v2-flash", "mimo_v2_flash"),  # MiMo-V2.5 / V2.5-Pro (model_type mimo_v2) are another shape: no folder
    (r"(?i)grok-2(?![.\d])", "grok2"),
    (r"(?i)hy3-preview", "hy3_preview"),
    # No folder (skipped): ModelCloud's Qwen1.5-1.8B GPTQ dynamic-cfg checkpoints (their quantization_config is not in
    # public sources), Step-3.5-Flash (its config does not load under 0.5.23's transformers), Ling-2.6 / Ring-2.5.
    (r"(?i)phi-[34]", "phi4"),
    (r"(?i)llama-3\.[13]-70b|llama-3-70b|llama-2-70b|llama-3\.1-405b", "llama31_70b"),  # 405B: 70B's shape stands in
    (r"(?i)meta-llama-3-8b", "llama"),
    (r"(?i)llama-3\.[123]|llama-3\.1|llama-2|tinyllama|llama3", "llama31_8b"),
]
DRAFT_MAP: list[tuple[str, str]] = [
    (r"(?i)eagle3|eagle-3", "eagle3_llama31"),
    (r"(?i)eagle", "eagle_llama3"),
    (r"(?i)qwen2\.5-(0\.5|1\.5)b", "qwen25_1_5b"),
    (r"(?i)nextn|mtp", "deepseek_v3"),
]
DRAFT_FLAGS = ("--speculative-draft-model-path", "--speculative-draft-model", "--speculative-draft")  # argparse takes prefixes

# Spellings that SGLang 0.5.23 no longer accepts, with the one that sets the same field now (from
# extractor/data/flag_history.json's stories: removed, or now an ambiguous prefix). A base command
# that types one is also run "modernized" (kind `modern`), and its mutations derive from that form,
# so that they exercise guards rather than repeat the argument error.
RENAMED: dict[str, list[str] | None] = {
    "--cuda-graph-max-bs": ["--cuda-graph-max-bs-decode"],
    "--cuda-graph-bs": ["--cuda-graph-bs-decode"],
    "--speculative-draft": ["--speculative-draft-model-path"],
    "--enable-deepep-moe": ["--moe-a2a-backend", "deepep"],
    "--enable-ep-moe": None,  # EP is sized by --ep-size alone now
}


def modernize(args: Args) -> Args:
    out: Args = []
    for group in split_flags(args):
        head, eq, inline = group[0].partition("=")
        if head not in RENAMED:
            out.extend(group)
            continue
        new = RENAMED[head]
        if new is None:
            continue
        if eq:
            out.extend([new[0] + "=" + inline] + group[1:])
        else:
            out.extend(new + group[1:])
    return out


# Flags people commonly add or confuse (a mutation adds one alone to a base command).
CONFUSED: list[list[str]] = [
    ["--enable-dp-attention"], ["--dp", "2"], ["--tp", "3"], ["--ep-size", "2"], ["--kv-cache-dtype", "fp8_e4m3"],
    ["--page-size", "16"], ["--page-size", "64"], ["--disable-radix-cache"], ["--enable-hierarchical-cache"],
    ["--speculative-algorithm", "EAGLE"], ["--attention-backend", "trtllm_mla"], ["--attention-backend", "flashmla"],
    ["--attention-backend", "fa3"], ["--attention-backend", "flashinfer"], ["--attention-backend", "triton"],
    ["--attention-backend", "trtllm_mha"], ["--attention-backend", "cutlass_mla"], ["--quantization", "fp8"],
    ["--moe-a2a-backend", "deepep"], ["--moe-runner-backend", "flashinfer_trtllm"], ["--enable-torch-compile"],
    ["--disable-cuda-graph"], ["--chunked-prefill-size", "-1"], ["--mem-fraction-static", "0.95"],
    ["--pp-size", "2"], ["--disaggregation-mode", "decode"], ["--disaggregation-mode", "prefill"],
    ["--enable-mixed-chunk"], ["--enable-two-batch-overlap"], ["--cuda-graph-max-bs", "512"],
    ["--max-running-requests", "1"], ["--context-length", "1000000"], ["--speculative-eagle-topk", "4"],
    ["--nnodes", "2"], ["--enable-eplb"], ["--kv-cache-dtype", "fp8_e5m2"], ["--dtype", "float16"],
    ["--enable-lora"], ["--schedule-policy", "lpm"], ["--moe-runner-backend", "deep_gemm"],
]


def parse_user_commands(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """(commands, problems): each command {"line", "source", "env", "words"} as typed (less the
    launcher), in file order; problems are lines that are no launch command."""
    import shlex

    commands: list[dict[str, Any]] = []
    problems: list[str] = []
    source = ""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line[1:].strip().startswith("source:"):
                source = line[1:].strip()[len("source:"):].strip()
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            problems.append(f"{path.name}:{number}: {exc}")
            continue
        env: dict[str, str] = {}
        while words and "=" in words[0] and not words[0].startswith("-"):
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        index = next((i for i, w in enumerate(words) if any(w.endswith(l) for l in LAUNCHERS)
                      or w == "serve" and i > 0 and words[i - 1].endswith("sglang")), None)  # `sglang serve`
        if index is None:
            problems.append(f"{path.name}:{number}: no launcher in {line[:80]!r}")
            continue
        commands.append({"line": number, "source": source, "env": env, "words": words[index + 1:]})
    return commands, problems


def split_flags(words: Args) -> list[Args]:
    """The command as flag groups: [flag, value...] (a word not starting with `-` after a flag
    belongs to it; `--x=v` stays one word)."""
    groups: list[Args] = []
    for word in words:
        if word.startswith("-") and not _is_number(word) or not groups:
            groups.append([word])
        else:
            groups[-1].append(word)
    return groups


def _is_number(word: str) -> bool:
    try:
        float(word)
        return True
    except ValueError:
        return False


def map_model(name: str, table: list[tuple[str, str | None]]) -> tuple[bool, str | None]:
    import re

    for pattern, folder in table:
        if re.search(pattern, name):
            return True, folder
    return False, None


def normalize_user_command(words: Args) -> tuple[str | None, Args, str]:
    """(folder, flags without noise and with draft paths mapped, the model named)."""
    groups = split_flags(words)
    model_name = ""
    kept: list[Args] = []
    for group in groups:
        head, _, inline = group[0].partition("=")
        if head in ("--model-path", "--model"):
            model_name = inline or (group[1] if len(group) > 1 else "")
            continue
        if head in NOISE_WITH_VALUE or head in NOISE_SWITCHES:
            continue
        if head in DRAFT_FLAGS:
            value = inline or (group[1] if len(group) > 1 else "")
            matched, folder = map_model(value, DRAFT_MAP)
            if not matched:
                matched, folder = map_model(value, MODEL_MAP)
            if matched and folder:
                group = [head, str(model_dir(folder))]
        kept.append(group)
    matched, folder = map_model(model_name, MODEL_MAP) if model_name else (False, None)
    return (folder if matched else None), [w for g in kept for w in g], model_name


def _hash(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def mutations(args: Args, catalog: Catalog) -> list[tuple[str, Args]]:
    """Deterministic variants of one command: (kind, args)."""
    groups = split_flags(args)
    heads = [g[0].split("=", 1)[0] for g in groups]
    out: list[tuple[str, Args]] = []
    seed = _hash(" ".join(args))
    # choice: the first typed flag with choices and a value, set to its next choice
    for i, group in enumerate(groups):
        flag = catalog.by_spelling.get(heads[i])
        choices = [render(c) for c in (flag or {}).get("choices") or []]
        if len(group) == 2 and "=" not in group[0] and group[1] in choices and len(choices) > 1:
            other = choices[(choices.index(group[1]) + 1) % len(choices)]
            changed = [g if j != i else [group[0], other] for j, g in enumerate(groups)]
            out.append((f"choice:{heads[i]}", [w for g in changed for w in g]))
            break
    # drop: one typed flag (not a draft path: dropping it is its own kind of command)
    droppable = [i for i, h in enumerate(heads) if h.startswith("--")]
    if droppable:
        i = droppable[seed % len(droppable)]
        out.append((f"drop:{heads[i]}", [w for j, g in enumerate(groups) if j != i for w in g]))
    # confuse: two commonly confused flags, each alone
    picked = 0
    for step in range(len(CONFUSED)):
        extra = CONFUSED[(seed + step * 7) % len(CONFUSED)]
        if extra[0] in heads or (extra[0] == "--dp" and "--dp-size" in heads) or (extra[0] == "--tp" and "--tp-size" in heads):
            continue
        out.append((f"confuse:{' '.join(extra)}", args + extra))
        picked += 1
        if picked == 2:
            break
    return out


def user_cases(path: Path, catalog: Catalog) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The user-command cases (base commands first, in file order, then their mutations)."""
    commands, problems = parse_user_commands(path)
    stats = {"lines": len(commands), "problems": len(problems), "unmapped": 0, "duplicates": 0}
    for problem in problems:
        print(f"cases: {problem}", file=sys.stderr)
    base: list[dict[str, Any]] = []
    seen: set[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]] = set()
    for command in commands:
        folder, args, named = normalize_user_command(command["words"])
        if folder is None or folder in DRAFT_MODELS and folder not in ("qwen25_1_5b",):
            stats["unmapped"] += 1
            continue
        env = tuple(sorted(command["env"].items()))
        key = (folder, tuple(args), env)
        if key in seen:
            stats["duplicates"] += 1
            continue
        seen.add(key)
        base.append({"model": folder, "args": args, "env": dict(env), "named": named,
                     "origin": command["source"], "line": command["line"]})
    cases: list[dict[str, Any]] = []
    made: set[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]] = set()

    def add(item: dict[str, Any], args: Args, kind: str) -> None:
        env = tuple(sorted(item["env"].items()))
        key = (item["model"], tuple(args), env)
        if key in made:
            return
        made.add(key)
        portable = [word.replace(str(MODELS_DIR), "<models>") for word in args]
        ident = hashlib.sha1(json.dumps([item["model"], portable, list(env)]).encode()).hexdigest()[:12]
        case = {
            "id": f"u-{item['model'][:6]}-{ident}",
            "model": item["model"],
            "args": args,
            # No --device: on a GPU profile SGLang derives it; compare.py puts `--device cpu` first on cpu.
            "argv": ["--model-path", str(model_dir(item["model"]))] + args,
            "key": [MODEL_PLACEHOLDER.format(item["model"])] + portable + [f"{k}={v}" for k, v in env],
            "source": f"user:{kind}",
            "origin": f"{item['origin']} (user_commands.txt:{item['line']}; model {item['named']})",
        }
        if item["env"]:
            case["env"] = dict(item["env"])
        cases.append(case)

    for item in base:
        add(item, item["args"], "base")
    stats["base"] = len(cases)
    for item in base:
        modern = modernize(item["args"])
        if modern != item["args"]:
            add(item, modern, "modern")
        for kind, args in mutations(modern, catalog):
            add(item, args, kind)
    stats["mutations"] = len(cases) - stats["base"]
    return cases, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=Path, default=DEFAULT_RULES, help="rules.json (flags.json beside it)")
    parser.add_argument("-o", "--output", type=Path, default=CASES_FILE)
    parser.add_argument("--budget", type=int, default=int(os.environ.get("VERIFY_BUDGET", "1000")),
                        help="at most this many cases, 0 for all (default 1000 or $VERIFY_BUDGET: "
                             "a `check` run costs ~5 s a case, 2 at a time)")
    parser.add_argument("--source", choices=("generated", "user", "all"), default="generated",
                        help="generated: from flags.json/rules.json (default); user: verify/user_commands.txt "
                             "and its mutations (-> cases-user.jsonl); all: both")
    parser.add_argument("--commands", type=Path, default=USER_COMMANDS, help="the user commands file")
    parser.add_argument("--user-output", type=Path, default=USER_CASES_FILE)
    args = parser.parse_args(argv)
    started = time.monotonic()
    flags_doc = json.loads((args.rules.parent / "flags.json").read_text())
    if args.source in ("user", "all"):
        cases, stats = user_cases(args.commands, Catalog(flags_doc))
        write_jsonl(args.user_output, cases)
        by_model: dict[str, int] = {}
        for case in cases:
            by_model[case["model"]] = by_model.get(case["model"], 0) + 1
        print(f"cases: user: {len(cases)} cases ({stats['base']} base commands, {stats['mutations']} mutations) from "
              f"{stats['lines']} command lines ({stats['unmapped']} naming a model we have no folder for, "
              f"{stats['duplicates']} duplicates, {stats['problems']} unreadable) -> {args.user_output}; "
              f"by model {json.dumps(by_model, sort_keys=True)}")
        if args.source == "user":
            return 0
    rules_doc = json.loads(args.rules.read_text())
    generated = generate(flags_doc, rules_doc)
    cases = within_budget(generated, args.budget)
    write_jsonl(args.output, cases)
    by_source: dict[str, int] = {}
    for case in cases:
        head = case["source"].split(":")[0]
        by_source[head] = by_source.get(head, 0) + 1
    by_model: dict[str, int] = {}
    for case in cases:
        by_model[case["model"]] = by_model.get(case["model"], 0) + 1
    print(f"cases: {len(cases)} of {len(generated)} generated -> {args.output} in {time.monotonic() - started:.1f} s; "
          f"by source {json.dumps(by_source, sort_keys=True)}; by model {json.dumps(by_model, sort_keys=True)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
