"""Docs pages from the records alone: one CommonMark page per rule, its JSON beside it, and an index.

Everything a page says is derived from the rule and the flag catalog: the meaning in words from
the trigger (the rule's own condition first, then the path conditions it inherits), the ways to
falsify it in flags as solutions, the witness command lines as the example fix. Pages are
deterministic: the same records give the same bytes.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from ...core.formula import every_atom, formula_size, literal_source, reads_resolved, render_flags, terms
from ...core.model import And, Flag, Formula, Lit, Rule, RuleKind, Term, TermKind
from ...core.serialize import rule_json
from ...logic.launch_words import ENV_ASSIGNMENT
from ...logic.messages import known_message, placeholder_alternatives
from ...logic.releases import release_date
from ..check.fixes import Fix, intent_keeping
from ..check.typical import Typical
from ..check.words import (Flags, by_function, code, join_words, library_test, library_tests, outside_terms, solutions,
                           split_condition, way_text, words)

DEFAULT_SOURCE_URL = "https://github.com/sgl-project/sglang/blob/{commit}/python/{path}#L{line}"
# Where readers report a wrong page: this project's repository (`--report-url` names another).
DEFAULT_REPORT_URL = "https://github.com/sglang-constraints/sglang-constraints"
LAUNCH = ("python", "-m", "sglang.launch_server")
_TITLE_LENGTH = 90
_MAX_WORDS = 300
_MAX_MEANING = 500  # the own condition in words longer than this reads as parts, or as what it reads
_KIND_WORDS = {"env": "environment", "platform": "platform", "model": "model", "opaque": "other",
               "resolved": "resolved value"}  # an inherited condition longer than this in words is summarized
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#&|~])")


def escape(text: str) -> str:
    """Plain text safe in CommonMark inline context (on one line)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


# ---- pages ------------------------------------------------------------------------------------------------


def source_link(rule: Rule, source: Mapping[str, object], template: str = DEFAULT_SOURCE_URL) -> str | None:
    """A link to the line, pinned to the commit (git) or the release tag; None for an unpinned folder."""
    return pinned_link(source, rule.location.file, rule.location.line, rule.location.end_line, template)


def pinned_link(source: Mapping[str, object], path: str, line: int, end_line: int | None = None,
                template: str = DEFAULT_SOURCE_URL) -> str | None:
    """A link to a line of a source's file, pinned to its commit or release tag; None when unpinned."""
    commit = source.get("commit") or (f"v{source['release']}" if source.get("release") else None)
    if not commit:
        return None
    return template.format(commit=commit, path=path, line=line, end_line=end_line or line)


def title(rule: Rule) -> str:
    text = " ".join(known_message(rule).split())
    return text if len(text) <= _TITLE_LENGTH else text[: _TITLE_LENGTH - 1].rstrip() + "…"


def fence(text: str, info: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    marks = "`" * (longest + 1)
    return f"{marks}{info}\n{text.rstrip()}\n{marks}"


def command_line(args: Sequence[str]) -> str:
    """The launch command for witness arguments; leading `NAME=VALUE` env assignments go in front."""
    env = list(itertools.takewhile(lambda a: ENV_ASSIGNMENT.match(a) is not None, args))
    return shlex.join([*env, *LAUNCH, *args[len(env):]])


def page(rule: Rule, flags: Flags, source: Mapping[str, object], rules: Mapping[str, Rule] | None = None,
         source_url: str = DEFAULT_SOURCE_URL, *, link_to: Callable[[str], str] | None = None,
         heading: str | None = None, data_link: str | None = None, sections: Sequence[str] = (),
         fixes: Sequence[Fix] | None = None, filled: Mapping[str, str] | None = None,
         report_url: str | None = DEFAULT_REPORT_URL, typical: Sequence[Typical] = (),
         other_words: Sequence[tuple[str, str]] = ()) -> str:
    """The Markdown page of one rule.

    `link_to` maps a rule id to the target of links to its page (default `<id>.md`, pages side by
    side); `heading` replaces the title line, `data_link` the target of the JSON link (a docs site
    keeps its pages and data apart), `sections` (Markdown) go after the related errors. `fixes`: the
    solutions checked on the example command line (`products.fixes.working_fixes`); without them the
    solutions are read off the condition and say so. `filled`: placeholder values to show in the
    message (those of a pasted error). `report_url`: the repository whose issues take reports of a
    wrong page (none: no link). `typical`: launches on common setups that stop at it (`typical`).
    `other_words`: what else the error says, and where (`messages.other_words`).
    """
    rules = rules or {}
    link_to = link_to or _beside
    siblings = [r for r in rules.values() if r.function == rule.function and r.location.file == rule.location.file]
    label = str(source.get("label", ""))
    kind = rule.kind.value
    out: list[str] = [heading or f"# {escape(title(rule))}", ""]
    facts = [code(rule.exception) if rule.exception else None, kind, code(rule.id), f"sglang {escape(label)}" if label else None]
    out += [" · ".join(f for f in facts if f), ""]
    message = _filled(known_message(rule), filled)
    out += ["## Error message" if kind != "adjustment" else "## What SGLang does", "", fence(message, "text"), ""]
    if not rule.message_static and "{" in message:
        out += ["Parts in `{...}` are filled in at run time.", ""]
        shown = [(name, texts) for name, texts in placeholder_alternatives(rule).items() if "{" + name in message]
        out += [f"- `{{{name}}}` is one of: {', '.join(code(text) for text in texts)}" for name, texts in shown]
        out += [""] if shown else []
    for when, words in other_words:
        out += [f"It says this instead where {when}:", "", fence(_filled(words, filled), "text"), ""]

    own, inherited = split_condition(rule, siblings)
    out += ["## What it means", "", meaning(rule, flags, siblings), ""]
    quoted = own_words(rule, flags, siblings)
    if quoted:
        out += ["In SGLang's own words:", ""] + [f"- {q}" for q in quoted] + [""]
    if inherited:
        out += ["It is checked only when all of these hold:" if kind != "adjustment" else "This happens only when all of these hold:", ""]
        out += [f"- {_bullet(part, flags)}" for part in inherited]
        out.append("")
    outside = outside_terms(rule, flags.spellings)
    if outside:
        out += ["Conditions outside the command line:", ""]
        out += [f"- {_KIND_WORDS[k]}: " + _listed_outside(texts) for k, texts in outside.items()]
        out.append("")
    if not rule.reachable:
        out += ["Not reached from the server-argument entry points: the condition is the function's own.", ""]

    out += ["## Source", ""]
    where = f"{rule.location.file}:{rule.location.line}"
    link = source_link(rule, source, source_url)
    shown = f"[{code(where)}]({link})" if link else code(where)
    out += [f"Thrown at {shown} in {code(rule.function)}." if kind != "adjustment" else f"Set at {shown} in {code(rule.function)}.", ""]
    if rule.call_path:
        out += ["Reached through " + " → ".join(code(step.split("::")[-1]) for step in rule.call_path) + ".", ""]
    out += [fence(rule.snippet.text, "python"), ""]

    out += ["## When it happens", "", *_whole_condition(rule, flags)]
    if reads_resolved(rule.effective):
        out += ["Flags here are read as SGLang resolves them: after the defaults it fills in for the "
                "platform and the model and the adjustments that run before this "
                f"{'check' if kind != 'adjustment' else 'one'}.", ""]
    if rule.affected_by:
        links = ", ".join(_rule_link(rules.get(a), a, link=link_to) for a in rule.affected_by)
        out += [f"Adjustments that run earlier may change what it reads: {links}.", ""]

    ways = solutions(rule, flags, siblings)
    out += ["## Solutions", ""]
    if fixes:
        out += ["Each one checked on the example command below: it clears this error and sets off no other.", ""]
        out += [f"{i}. " + _capital(_flags_in_code(fix.text)) + "." for i, fix in enumerate(fixes, 1)]
    elif ways:
        if rule.example is not None and fixes is not None:
            out += ["None of these, applied to the example command below, clears it without setting off another "
                    "error; they are read off the condition:", ""]
        elif kind != "adjustment":
            out += ["Read off the condition (not checked on a command line):", ""]
        out += [f"{i}. " + _capital(way_text(way, markdown=True)) + "." for i, way in enumerate(ways, 1)]
    else:
        out.append("No flag change that avoids it could be read off its condition: the message says what SGLang asks for."
                   if kind != "adjustment" else
                   "No flag change that keeps SGLang from making it could be read off its condition.")
        if typical:
            out[-1] += " The typical launches below have fixes found by trying changes of their flags."
    out.append("")

    if rule.example is not None:
        # The checked fix that keeps what the command asked for (the seed: the decode-only flag stays,
        # on a decode server with its storage backend), else the example's own way out.
        shown = intent_keeping(fixes or ())
        before = command_line(rule.example.before)
        after = command_line(shown.argv if shown is not None else rule.example.after)
        why = f": solution {list(fixes or ()).index(shown) + 1}" if shown is not None else ""
        out += ["## Example fix", "", fence(f"# before: {'rejected' if kind != 'adjustment' else 'adjusted'}\n{before}\n"
                                              f"# after{why}\n{after}", "sh"), ""]
    if typical:
        out += typical_section(typical)

    if rule.related:
        out += ["## Related errors", ""]
        out += [f"- {_rule_link(rules.get(r.id), r.id, r.message, link_to)} ({escape(r.kind)})" for r in rule.related]
        out.append("")
    for section in filter(None, sections):
        out += [section.rstrip(), ""]

    pin = pinned_to(source)
    report = report_link(rule, source, report_url)
    out += ["---", "", f"Generated by sglang-constraints from sglang {escape(label)}{f' ({pin})' if pin else ''}; "
                       f"do not edit. Data as JSON: [{rule.id}.json]({data_link or rule.id + '.json'})."
                       + (f" [Report a problem with this page]({report})." if report else "")]
    return "\n".join(out) + "\n"


def typical_section(typical: Sequence[Typical]) -> list[str]:
    """Launches on common setups that stop first at the error, each with the fix `check` gives there."""
    out = ["## Typical launches that hit it", "",
           "On a node of 8 GPUs with a model people serve (its config.json as Hugging Face ships it), each "
           "command stops first at this error, and its fix clears it without setting off another, as `check` "
           "finds with that `--gpu` and the model's config.json.", ""]
    for launch in typical:
        lines = f"# rejected\n{command_line(launch.before)}\n# fixed: {launch.fix}\n{command_line(launch.after)}"
        out += [f"**{escape(launch.setup)}**", "", fence(lines, "sh"), ""]
    return out


_OUTSIDE_LISTED = 8  # terms of one kind named at most: a trigger over many call paths reads dozens


def _listed_outside(texts: Sequence[str]) -> str:
    """Terms of one kind, the shortest first past `_OUTSIDE_LISTED` (the whole condition is under
    "When it happens")."""
    if len(texts) <= _OUTSIDE_LISTED:
        return ", ".join(code(t) for t in texts)
    shown = sorted(sorted(texts, key=lambda t: (len(t), t))[:_OUTSIDE_LISTED])
    return ", ".join(code(t) for t in shown) + f" and {len(texts) - len(shown)} more (see “When it happens”)"


def pinned_to(source: Mapping[str, object]) -> str | None:
    """What the page's source is pinned to, in words: the commit and its day, or the release's tag
    and the day it was published."""
    if source.get("commit"):
        day = str(source.get("commit_date") or "")[:10]
        return f"commit {code(str(source['commit'])[:12])}" + (f" of {day}" if day else "")
    if source.get("release"):
        day = release_date(str(source["release"]))
        return f"tag {code('v' + str(source['release']))}" + (f", released {day}" if day else "")
    return None


def report_link(rule: Rule, source: Mapping[str, object], report_url: str | None = DEFAULT_REPORT_URL) -> str | None:
    """A new issue of the repository `report_url` names, its title and body naming the page."""
    if not report_url:
        return None
    title = f"Page {rule.id} ({source.get('label', '')}): "
    body = (f"Rule {rule.id} of sglang {source.get('label', '')}, thrown at {rule.location.file}:{rule.location.line}."
            "\n\nWhat is wrong on the page:\n")
    return f"{report_url.rstrip('/')}/issues/new?" + urllib.parse.urlencode({"title": title, "body": body})


def meaning(rule: Rule, flags: Flags, siblings: Sequence[Rule]) -> str:
    """The first sentence of "What it means": the rule's own test in words (Markdown)."""
    own, _ = split_condition(rule, siblings)
    lead = ("Rejected" if rule.kind is not RuleKind.ADJUSTMENT
            else f"SGLang sets {code(flags.option(rule.target or ''))} to {written_words(rule, flags)}")
    # Its own test is what a library call did or said, on whichever path a call path gives it (a model
    # path as is, its folder, an object store's copy): that failure, and what it said, in words, first.
    rest = [part for part in own if library_test(part) is None]
    tested = not own or len(rest) < len(own)  # no own test shared by the paths, or a library test among them
    # (the whole trigger walked only then: most pages' own test names no library call)
    tests = library_tests(rule.effective) if tested and rule.kind is not RuleKind.ADJUSTMENT else []
    failing = join_words([words(test, flags) for test in tests], "and") if tests else ""
    if not rest:
        return f"{lead} when {failing}." if failing else f"{lead} whenever it is reached."
    said = _own_words(rest, flags)
    if not failing:
        return f"{lead} {said}."
    if said.startswith("under"):
        return f"{lead} when {failing}, {said}."
    return f"{lead} when {failing} and {said.removeprefix('when ')}."


def _own_words(own: Sequence[Formula], flags: Flags) -> str:
    """The rule's own test in words, after "Rejected": "when ..." or, too long, "under ..."."""
    whole = words(And(tuple(own)) if len(own) > 1 else own[0], flags)
    if len(whole) <= _MAX_MEANING:
        return f"when {whole}"
    # Too long to read as one sentence: each part in words, a long one by what it reads; all of it
    # by what it reads when that is still too long. The whole condition is under "When it happens".
    parts = [_bullet(part, flags) for part in own]
    joined = join_words(list(dict.fromkeys(parts)), "and")
    if len(own) > 1 and len(joined) <= _MAX_MEANING:
        return f"when {joined}"
    return f"under {_bullet(And(tuple(own)) if len(own) > 1 else own[0], flags, 0)}"


def written_words(rule: Rule, flags: Flags) -> str:
    """What an adjustment writes, in words (Markdown): the literal each of its cases writes (`128` or
    `64`), or the value of the flag it copies, rather than the name of the local or field the source
    writes (`local_page_size`, `dwdp_size`); else that source."""
    values = list(dict.fromkeys(value for _, value in rule.assigns))
    # (a test written as the value, `x = mode == "decode" and tp > 1`, says more than "`False` or `True`")
    if values and len(values) <= _MAX_WRITTEN and all(isinstance(v, Lit) for v in values) \
            and not (len(values) > 1 and all(isinstance(v.value, bool) for v in values)):  # type: ignore[union-attr]
        return join_words([code(literal_source(v.value)) for v in values], "or")  # type: ignore[union-attr]
    if len(values) == 1 and isinstance(values[0], Term) and values[0].kind in (TermKind.FIELD, TermKind.RESOLVED) \
            and not values[0].transforms and values[0].name in flags.by_field:
        return f"the value of {code(flags.option(values[0].name))}"
    return code(rule.value or "")


_MAX_WRITTEN = 4  # literals an adjustment's cases write, named one by one at most


def own_words(rule: Rule, flags: Flags, siblings: Sequence[Rule]) -> list[str]:
    """What SGLang itself says about the check, quoted and attributed (Markdown): the comments right
    above the guard and above each `if` around it, the docstring of its function, then the help text
    of each flag its own condition tests (marked when the flag is deprecated). Nothing else: no
    sentence of ours."""
    file = rule.location.file.rsplit("/", 1)[-1]
    found = [f"“{escape(text)}” (comment above {code(f'{file}:{line}')})" for line, text in comments_above(rule)]
    if rule.doc:
        found.append(f"{code(rule.function.rsplit('.', 1)[-1])}: “{escape(rule.doc)}” (its docstring)")
    for name in own_fields(rule, siblings, flags)[:_HELPS]:
        flag = flags.by_field.get(name)
        if flag is None or not (flag.help or "").strip():
            continue
        help_text = " ".join(flag.help.split())
        deprecated = ", deprecated" if flag.deprecated else ""
        found.append(f"{code(flag.flags[0])}: “{escape(help_text)}” (its help text{deprecated})")
    return found


_HELPS = 3  # help texts quoted at most: those of the flags the check itself tests


def comments_above(rule: Rule) -> list[tuple[int, str]]:
    """The comment blocks of the snippet that stand right above the guard's line or above an `if`
    that encloses it (outermost first), each as (the line it stands above, its text in one line)."""
    lines = rule.snippet.text.splitlines()
    found: list[tuple[int, str]] = []
    for target in (*rule.enclosing, rule.location.line):
        index = target - rule.snippet.start_line
        block: list[str] = []
        while 0 < index <= len(lines) and lines[index - 1].strip().startswith("#"):
            block.insert(0, lines[index - 1].strip().lstrip("#").strip())
            index -= 1
        text = " ".join(b for b in block if b)
        if text and all(text != t for _, t in found):
            found.append((target, text))
    return found


# An option and its value, an environment variable (`SGLANG_X=1`), a `file.py:12` place.
_CODE_WORDS = re.compile(r"(?<![\w`])(--[a-z0-9][a-z0-9-]*(?: (?!and\b|or\b)[^\s;()]+)?"
                         r"|[A-Z][A-Z0-9]*_[A-Z0-9_]+(?:=[^\s;()]+)?|[\w/.-]+\.py:\d+)")


def _flags_in_code(fix: str) -> str:
    """`pass --a 1 and --b (--b clears x.py:3)` with each option (and its value), variable and place as code."""
    return _CODE_WORDS.sub(lambda m: f"`{m.group(1)}`", fix)


def _bullet(part: Formula, flags: Flags, most: int = _MAX_WORDS) -> str:
    """A condition in words, or, when the words run longer than `most`, what it reads."""
    text = words(part, flags)
    if len(text) <= most:
        return text
    return f"a longer condition over {_what_it_reads(part, flags)} (see “When it happens”)"


def _what_it_reads(part: Formula, flags: Flags) -> str:
    """The options a condition reads (the first eight) and the kinds of what else it tests, in words."""
    names = sorted({flags.option(n) for t in terms(part) for n in t.fields
                    if t.kind in (TermKind.FIELD, TermKind.RESOLVED) and flags.settable(n)})
    kinds = sorted({_KIND_WORDS[t.kind.value] for t in terms(part)
                    if t.kind not in (TermKind.FIELD, TermKind.RESOLVED) and t.kind.value in _KIND_WORDS})
    reads = ", ".join(code(n) for n in names[:8]) + (" …" if len(names) > 8 else "")
    return reads + (((" and " if names else "") + join_words(kinds, "and") + " conditions") if kinds else "")


_MAX_WHOLE_CONDITION = 20_000  # characters of "When it happens" written out; past that, where it is


def _whole_condition(rule: Rule, flags: Flags) -> list[str]:
    """The trigger written out in flags (Markdown lines), or, when that runs past `_MAX_WHOLE_CONDITION`
    characters, how large it is and where it is whole. A guard reached through the config load of every
    model path (0.5.23's `get_hf_text_config` asserts) repeats the load's conditions per call path:
    written out, megabytes no reader reads, which `check` decides for a launch."""
    text = render_flags(rule.effective, flags.spellings)
    if len(text) <= _MAX_WHOLE_CONDITION:
        return [fence(text, "text"), ""]
    tests, distinct = formula_size(rule.effective), len(every_atom(rule.effective))
    return [f"The whole condition is too long to read here: {tests:,} tests ({distinct:,} distinct) over "
            f"{_what_it_reads(rule.effective, flags)}, {len(text):,} characters written out. It is the "
            f"`trigger` of rule `{rule.id}` in the release's rules.json (and in this page's JSON record); "
            "`sglang-constraints check` decides it for a launch command.", ""]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _beside(rule_id: str) -> str:
    return f"{rule_id}.md"


def _rule_link(rule: Rule | None, rule_id: str, message: str | None = None,
               link: Callable[[str], str] = _beside) -> str:
    text = title(rule) if rule is not None else (message or rule_id)
    return f"[{escape(text)}]({link(rule_id)})"


def index(rules: Sequence[Rule], flags: Flags, source: Mapping[str, object]) -> str:
    """index.md: the rules grouped by the flags of their own condition and by file, with counts."""
    label = str(source.get("label", ""))
    kinds = defaultdict(int)
    for rule in rules:
        kinds[rule.kind.value] += 1
    by_flag: dict[str, list[Rule]] = defaultdict(list)
    by_file: dict[str, list[Rule]] = defaultdict(list)
    groups = by_function(rules)
    for rule in rules:
        by_file[rule.location.file].append(rule)
        names = sorted({flags.option(n) for n in own_fields(rule, groups[(rule.location.file, rule.function)], flags)})
        for name in names or ["(no flag)"]:
            by_flag[name].append(rule)
    out = [f"# SGLang {escape(label)} server-argument rules", "",
           f"{len(rules)} rules: " + ", ".join(f"{kinds[k.value]} {k.value}" for k in RuleKind)
           + f"; {sum(r.reachable for r in rules)} reachable from the entry points.", "",
           "Generated by sglang-constraints; do not edit.", "", "## By flag", ""]
    for name in sorted(by_flag, key=lambda n: (n == "(no flag)", n)):
        out += [f"### {code(name) if name.startswith('-') else escape(name)} ({len(by_flag[name])})", ""]
        out += [f"- {_rule_link(r, r.id)} — {code(f'{r.location.file}:{r.location.line}')}" for r in _ordered(by_flag[name])]
        out.append("")
    out += ["## By file", ""]
    for path in sorted(by_file):
        out += [f"### {code(path)} ({len(by_file[path])})", ""]
        out += [f"- {_rule_link(r, r.id)} — line {r.location.line}" for r in _ordered(by_file[path])]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def own_fields(rule: Rule, siblings: Iterable[Rule], flags: Flags) -> list[str]:
    """The fields with a flag that the rule's own condition tests (not what it inherits), sorted."""
    own, _ = split_condition(rule, siblings)
    return sorted({n for part in own for t in terms(part) for n in t.fields if flags.settable(n)})


def _ordered(rules: Iterable[Rule]) -> list[Rule]:
    return sorted(rules, key=lambda r: (r.location.file, r.location.line, r.id))


def _filled(message: str, filled: Mapping[str, str] | None) -> str:
    """The message with the values a pasted error shows (`explain`) in its placeholders."""
    for name, value in (filled or {}).items():
        message = re.sub(r"(?<!\{)\{" + re.escape(name) + r"(![rs])?(:[^{}]*)?\}(?!\})", lambda m: value, message)  # noqa: B023
    return message


def render_site(rules: Sequence[Rule], flag_list: Sequence[Flag], source: Mapping[str, object], folder: Path,
                source_url: str = DEFAULT_SOURCE_URL, checked_fixes: Mapping[str, Sequence[Fix]] | None = None,
                report_url: str | None = DEFAULT_REPORT_URL, typical: Mapping[str, Sequence[Typical]] | None = None,
                other_words: Mapping[str, Sequence[tuple[str, str]]] | None = None) -> list[Path]:
    """Write `<id>.md`, `<id>.json` and `index.md` into `folder`; returns the files written.
    `checked_fixes`: by rule id, the solutions checked on the rule's example (`fixes.example_fixes`);
    `typical`: by rule id, its launches on common setups (`witness.typical_launches`); `other_words`:
    what else errors say, by their rules' message (`messages.other_words`)."""
    flags = Flags(flag_list)
    by_id = {r.id: r for r in rules}
    files: dict[str, str] = {"index.md": index(rules, flags, source)}
    for rule in rules:
        fixes = checked_fixes.get(rule.id) if checked_fixes is not None else None
        files[f"{rule.id}.md"] = page(rule, flags, source, by_id, source_url, fixes=fixes, report_url=report_url,
                                      typical=(typical or {}).get(rule.id, ()),
                                      other_words=(other_words or {}).get(known_message(rule), ()))
        # Compact, sorted: byte-stable, and the C encoder is 20 times faster than indenting.
        files[f"{rule.id}.json"] = json.dumps(rule_json(rule), sort_keys=True, ensure_ascii=False,
                                              separators=(",", ":")) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(files):
        replace_file(folder / name, files[name])
        written.append(folder / name)
    return written


def replace_file(path: Path, text: str) -> None:
    """Each page whole or not at all (temp file + rename); no fsync per page, it is a rebuildable folder."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    os.replace(tmp, path)
