"""Explain an error line pasted from a log, like `rustc --explain`: which rule raised it, and its page.

A rule's message is a template: the f-string's `{...}` parts are wildcards, and the values they took
in the pasted text are reported. Log noise around the message and an exception prefix
(`ValueError: `) are tolerated. Several matching rules are ranked, never silently picked; a
message found in several releases says in which.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...core.model import Rule, RuleKind
from ...logic.messages import known_message

_MAX_TEXT = 20_000  # characters of pasted text looked at (the end, where the error is)
_MIN_LITERAL = 10  # a template with less fixed text than this matches too much to mean anything
_MIN_STATIC = 4  # the same for a message without placeholders
_MIN_CHUNK = 8  # fixed pieces shorter than this do not count for a partial match
_PARTIAL = 0.6  # share of a template's fixed text a fragment must show to count as a partial match


@dataclass(frozen=True)
class Template:
    """A message split into fixed text and placeholders (`{expr}`)."""

    parts: tuple[str, ...]  # fixed text, placeholder, fixed text, ... (odd positions are placeholders)

    @property
    def literal(self) -> str:
        return "".join(self.parts[0::2])

    @property
    def placeholders(self) -> tuple[str, ...]:
        return self.parts[1::2]

    def pattern(self) -> re.Pattern[str]:
        pieces = []
        for i, part in enumerate(self.parts):
            if i % 2:
                pieces.append("(.+?)" if i < len(self.parts) - 2 or self.parts[-1].strip() else "(.+)")
            else:
                pieces.append(r"\s+".join(re.escape(w) for w in part.split()) if part.strip() else "")
                if part[:1].isspace() and i:
                    pieces[-1] = r"\s*" + pieces[-1]
                if part[-1:].isspace() and i < len(self.parts) - 1:
                    pieces[-1] += r"\s*"
        return re.compile("".join(pieces), re.DOTALL)


    def heads(self) -> tuple[Template, ...]:
        """The message cut at each line break of its fixed text, longest first: a log shows a long
        message's first line (transformers' unknown model type, four paragraphs) where a reader
        pastes only that. A cut leaving less fixed text than a template must show is no head."""
        found = []
        for i in range(len(self.parts) - 1, -1, -2):  # fixed pieces, last first
            piece = self.parts[i]
            for cut in sorted((m.start() for m in re.finditer(r"\n", piece)), reverse=True):
                head = Template((*self.parts[:i], piece[:cut].rstrip()))
                if len(" ".join(head.literal.split())) >= _MIN_LITERAL and head.parts[-1].strip():
                    found.append(head)
        return tuple(dict.fromkeys(found))


def template(rule: Rule) -> Template:
    """The rule's message as a template, as pages show it (`known_message`: a placeholder that holds
    one literal filled, a message built in a local f-string written out); a static message is all
    fixed text."""
    if rule.message_static:
        return Template((rule.message,))
    return Template(_parts(known_message(rule)))


def _parts(text: str) -> tuple[str, ...]:
    """Fixed text and placeholders, alternating: each `{` at the top starts a placeholder that ends at
    its matching `}` (a format spec may nest `{width}`); a `}` outside one is text, and so is the rest
    from an unbalanced `{`. Found by `str.find` from brace to brace: a message's fixed text is not
    walked character by character (explain matches every guard's message)."""
    parts: list[str] = []
    fixed = 0  # where the fixed text after the last placeholder starts
    opened = text.find("{")
    while opened >= 0:
        depth, i = 1, opened + 1
        while depth:
            close, inner = text.find("}", i), text.find("{", i)
            if close < 0:
                break
            if 0 <= inner < close:
                depth, i = depth + 1, inner + 1
            else:
                depth, i = depth - 1, close + 1
        if depth:
            break  # no `}` closes it: the rest is text
        parts += [text[fixed:opened], text[opened + 1:i - 1]]
        fixed = i
        opened = text.find("{", i)
    return (*parts, text[fixed:])


@dataclass
class Candidate:
    """A rule whose message matches, how well, the placeholder values, and where else it exists."""

    rule: Rule
    label: str  # the release (or rule set) it was found in first, the newest
    score: float
    exact: bool
    values: dict[str, str]
    releases: list[str] = field(default_factory=list)


def match(text: str, rule: Rule, said: str | None = None) -> tuple[float, bool, dict[str, str]] | None:
    """(score, whole message matched, placeholder values), or None when the text is not this message
    (`said`: another message the rule's error may say, `also_said`)."""
    tpl = template(rule) if said is None else Template(_parts(said))
    literal = " ".join(tpl.literal.split())
    if len(literal) < (_MIN_LITERAL if tpl.placeholders else _MIN_STATIC):
        return None  # a bare re-raise or a one-word message would match anything
    cleaned = " ".join(text.split())
    # The pattern matches only where each fixed piece's words stand in a row: most messages are told
    # apart by that alone, without building their pattern.
    fixed = [" ".join(piece.split()) for piece in tpl.parts[0::2] if piece.strip()]
    found = tpl.pattern().search(text) if all(piece in cleaned for piece in fixed) else None
    if found:
        values = _values(tpl, found)
        bonus = 0.5 if rule.exception and re.search(rf"\b{re.escape(rule.exception)}\s*:", text) else 0.0
        return len(literal) + bonus, True, values
    # The message's first lines, up to one of its own line breaks: a partial match, its length what
    # it shows (a reader pasting one line of a log, where the message goes on over several).
    for head in tpl.heads() if "\n" in tpl.literal else ():
        fixed_head = [" ".join(piece.split()) for piece in head.parts[0::2] if piece.strip()]
        found = head.pattern().search(text) if all(piece in cleaned for piece in fixed_head) else None
        if found:
            values = _values(head, found)
            return len(" ".join(head.literal.split())), False, values
    chunks = [c for c in fixed if len(c) >= _MIN_CHUNK]
    shown = sum(len(c) for c in chunks if c in cleaned)
    if not shown:
        # A fragment of one long fixed piece: the pasted text itself inside the message.
        core = _strip_noise(cleaned)
        if len(core) >= 15 and core in literal:
            return len(core) / 2, False, {}
        return None
    if shown / max(len(literal), 1) >= _PARTIAL:
        return shown / 2, False, {}
    return None


def _values(tpl: Template, found: re.Match[str]) -> dict[str, str]:
    """The placeholders' values in a match; one the message starts with holds none of what the log
    line shows before it (`json.decoder.JSONDecodeError: ` before json's `{msg}: line ...`)."""
    groups = list(found.groups())
    if groups and not tpl.parts[0].strip():
        groups[0] = _strip_noise(groups[0].rsplit("\n", 1)[-1])
    return {name.strip(): " ".join(value.split()) for name, value in zip(tpl.placeholders, groups)}


def _strip_noise(text: str) -> str:
    text = re.sub(r"^.*?\b\w*(Error|Exception)\s*:\s*", "", text)
    return text.strip().strip("'\"")


# A traceback frame: `File "/usr/lib/python3/site-packages/sglang/srt/arg_groups/parallel_hook.py", line 326`.
_FRAME = re.compile(r'File "(?:[^"]*/)?(sglang/[^"]+\.py)", line (\d+)')
_AT_FRAME = 1_000_000.0  # a rule at the traceback's innermost SGLang frame outranks any message match
# ... and one whose own `if` the frame is in, before its raise: SGLang failed testing it (`None > 1`).
_AT_TEST = _AT_FRAME / 2


def raised_at(text: str) -> tuple[str, int] | None:
    """The innermost SGLang frame of a pasted traceback (file, line), or None."""
    frames = _FRAME.findall(text)
    return (frames[-1][0], int(frames[-1][1])) if frames else None


def _raised_at(rule: Rule, frame: tuple[str, int] | None) -> bool:
    """Is the traceback's innermost SGLang frame the rule's raise (or assert)?"""
    return frame is not None and rule.location.file == frame[0] \
        and rule.location.line <= frame[1] <= rule.location.end_line


# What explain searches: (label, rules), or (label, rules, what else their errors say: `other_words`).
RuleSets = Sequence[tuple[str, Sequence[Rule]] | tuple[str, Sequence[Rule], Mapping[str, tuple[tuple[str, str], ...]]]]


def candidates(text: str, rule_sets: RuleSets) -> list[Candidate]:
    """Every matching rule, best first; one candidate per message, listing the releases that have it.
    A traceback's innermost SGLang frame names the rule by its place (a message-less assert too);
    places are a release's own, so only the releases where that place is the rule's count. A rule
    set may come with the other words its rules' errors say (`messages.other_words`)."""
    frame = raised_at(text)
    text = text[-_MAX_TEXT:]
    found: dict[str, Candidate] = {}
    for label, rules, *more in rule_sets:
        others: Mapping[str, tuple[tuple[str, str], ...]] = more[0] if more else {}
        # One candidate per rule id: ids hold across releases, line moves and moves between files
        # (0.5.18's server_args.py and 0.5.23's arg_groups/), so a message is shown once.
        guards = [r for r in rules if r.kind is not RuleKind.ADJUSTMENT]
        raised = any(_raised_at(r, frame) for r in guards)
        for rule in sorted(guards, key=lambda r: (r.location.file, r.location.line, r.id)):
            result = match(text, rule)
            for _, said in others.get(known_message(rule), ()) if others else ():
                alternative = match(text, rule, said)
                if alternative is not None and (result is None or alternative[1::-1] > result[1::-1]):
                    result = alternative
            at_frame = _raised_at(rule, frame)
            # Not at any raise: inside a guard's own `if`, before its raise (SGLang failed testing it).
            at_test = frame is not None and not raised and rule.location.file == frame[0] and bool(rule.enclosing) \
                and rule.enclosing[-1] <= frame[1] < rule.location.line
            if at_frame or at_test:
                result = ((_AT_FRAME if at_frame else _AT_TEST) + (result[0] if result else 0.0), True,
                          result[2] if result else {})
            if result is None:
                continue
            score, exact, values = result
            seen = found.get(rule.id)
            if seen is None:
                found[rule.id] = Candidate(rule, label, score, exact, values, [label])
                continue
            if label not in seen.releases:
                seen.releases.append(label)
            if score > seen.score:  # the traceback's place is this release's
                seen.rule, seen.label, seen.score, seen.exact, seen.values = rule, label, score, exact, values
        if frame is not None and not raised:
            # No guard there: an adjustment whose statement Python failed in computing what it writes
            # (a division by zero), as `check` reports it.
            for rule in rules:
                if rule.kind is RuleKind.ADJUSTMENT and _raised_at(rule, frame) and rule.id not in found:
                    found[rule.id] = Candidate(rule, label, _AT_FRAME, True, {}, [label])
    return sorted(found.values(), key=lambda c: (not c.exact, -c.score, c.rule.location.file, c.rule.location.line))


_LISTED = 5  # matches listed by default; `full` lists them all


def explain_text(text: str, rule_sets: RuleSets, pages, full: bool = False) -> tuple[str, int]:
    """The answer to print and the exit code (0 found, 1 nothing matched). By default the best
    match's page and up to five others by name; `full`: every match, each tie's page."""
    found = candidates(text, rule_sets)
    if not found:
        where = ", ".join(label for label, *_ in rule_sets)
        return f"No rule's message matches this text (searched: {where}).\n", 1
    lines = []
    best = found[0]
    ties = [c for c in found if c.exact == best.exact and c.score == best.score]
    if len(found) > 1:
        lines.append(f"{len(found)} rules match; best first:")
        listed = found if full else found[:_LISTED]
        for i, c in enumerate(listed, 1):
            kind = "traceback" if c.score >= _AT_TEST else "message" if c.exact else "partial"
            lines.append(f"  {i}. [{kind}] {c.rule.location.file}:{c.rule.location.line} ({c.rule.id}) "
                         f"in {', '.join(c.releases)}: {_short(c.rule.message)}")
        if len(listed) < len(found):
            lines.append(f"  … {len(found) - len(listed)} more (--full lists them)")
        if len(ties) > 1:
            lines.append(f"The first {len(ties)} match equally well; " + ("showing each." if full else "showing the first."))
        lines.append("")
    newest = rule_sets[0][0] if rule_sets else None
    for c in ties if full else ties[:1]:
        lines.append(_summary(c, newest))
        lines.append("")
        lines.append(pages(c))
    return "\n".join(lines).rstrip() + "\n", 0


def _summary(c: Candidate, newest: str | None = None) -> str:
    how = "Raised while SGLang computed the value of" if c.rule.kind is RuleKind.ADJUSTMENT \
        else "Raised at" if c.score >= _AT_FRAME else "Raised while SGLang tested" if c.score >= _AT_TEST \
        else "Matches" if c.exact else "Partly matches"
    lines = [f"{how} rule {c.rule.id} at {c.rule.location.file}:{c.rule.location.line}; "
             f"this message exists in: {', '.join(c.releases)}."]
    if c.rule.kind is RuleKind.ADJUSTMENT:
        lines.append("SGLang failed computing what this adjustment writes (the error is Python's): `check` "
                     "reports it as a definite error of the launch, fails_with that exception.")
    elif _AT_TEST <= c.score < _AT_FRAME:
        lines.append("SGLang failed evaluating the check itself (the error is Python's, not this message): "
                     "`check` reports it as this rule's error, fails_with that exception.")
    if newest is not None and newest not in c.releases:
        # Release labels are searched newest first: the first one listed is the latest that has it.
        lines.append(f"Not in {newest}, the newest release searched: removed or reworded after {c.releases[0]}.")
    for name, value in c.values.items():
        lines.append(f"  {{{name}}} = {value}")
    return "\n".join(lines)


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
