"""A docs page for a terminal: the Markdown `pages.page` writes, as plain wrapped text.

`explain` shows the page the site shows, from the same code; this turns the small CommonMark subset
pages use (headings, paragraphs, lists, fenced blocks, inline code, links, backslash escapes) into
text without markup. Short by default: what a reader at a failed launch needs (the message, what it
means, the solutions and the example fix, where it is thrown); `full` keeps every section.
"""

from __future__ import annotations

import re
import textwrap

# Sections a short page keeps whole; "Source" keeps its first line (where it is thrown).
SHORT_SECTIONS = ("Error message", "What SGLang does", "What it means", "Solutions", "Example fix")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_ESCAPED = re.compile(r"\\([\\`*_\[\]<>#&|~{}()!.+-])")
_CODE_SPAN = re.compile(r"(?<!\\)(`+)\s?(.+?)\s?(?<!\\)\1")  # an escaped backquote opens or closes none
_FENCE = re.compile(r"^(`{3,})")


def inline(text: str) -> str:
    """Markdown inline text as plain text: links as their text (an absolute one with its address),
    code spans bare, escapes undone."""
    text = _LINK.sub(lambda m: m.group(1) + (f" <{m.group(2)}>" if m.group(2).startswith("http") else ""), text)
    parts = _CODE_SPAN.split(text)
    # split gives [plain, fence, code, plain, ...]: escapes are undone in the plain parts only.
    out = []
    for i, part in enumerate(parts):
        kind = i % 3
        if kind == 0:
            out.append(_ESCAPED.sub(r"\1", part))
        elif kind == 2:
            out.append(part)
    return "".join(out)


def terminal_page(markdown: str, *, full: bool = False, width: int = 100, url: str | None = None) -> str:
    """The page as text; `url`, the page's address on a docs site, goes under the title."""
    sections = _sections(markdown)
    out: list[str] = []
    title, intro = sections[0][0], sections[0][1]
    if full:  # a short page starts at the message the title repeats
        out.append(inline(title))
    out += [_wrap(inline(p), width, "") for p in _paragraphs(intro) if not p.startswith("---")]
    if url:
        out.append(f"Page: {url}")
    for heading, lines in sections[1:]:
        if not full and heading == "Source":
            first = next((p for p in _paragraphs(lines)), "")
            out += ["", "Source", _wrap(inline(first), width, "  ")]
            continue
        if not full and heading not in SHORT_SECTIONS:
            if heading == "Related errors":
                count = sum(1 for line in lines if line.startswith("- "))
                out += ["", f"Related errors: {count} (explain --full lists them)"]
            continue
        out += ["", heading]
        out += _blocks(lines, width, full)
    return "\n".join(line.rstrip() for line in out).rstrip() + "\n"


def _sections(markdown: str) -> list[tuple[str, list[str]]]:
    """[(heading, body lines)], the first being the title and what follows it; the generated-by
    footer (after `---`) dropped."""
    sections: list[tuple[str, list[str]]] = []
    fence = None
    for line in markdown.splitlines():
        opened = _FENCE.match(line)
        if opened and (fence is None or line.strip() == fence):
            fence = opened.group(1) if fence is None else None
        elif fence is None and line.startswith("# ") and not sections:
            sections.append((line[2:].strip(), []))
            continue
        elif fence is None and line.startswith("## "):
            sections.append((line[3:].split(" {", 1)[0].strip(), []))
            continue
        elif fence is None and line.strip() == "---":
            break
        if not sections:
            sections.append(("", []))
        sections[-1][1].append(line)
    return sections


def _paragraphs(lines: list[str]) -> list[str]:
    text = "\n".join(lines)
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def _blocks(lines: list[str], width: int, full: bool) -> list[str]:
    """A section's body: fenced blocks indented as they are, list items and paragraphs wrapped."""
    out: list[str] = []
    fence = None
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            text = " ".join(paragraph)
            item = re.match(r"^(- |\d+\. )", text)
            hang = " " * (2 + len(item.group(1))) if item else "  "
            out.append(_wrap(inline(text), width, "  ", hang))
            paragraph.clear()

    for line in lines:
        opened = _FENCE.match(line)
        if opened and fence is None:
            flush()
            fence = opened.group(1)
            continue
        if fence is not None:
            if line.strip() == fence:
                fence = None
            else:
                out.append("    " + line)
            continue
        if not line.strip():
            flush()
        elif re.match(r"^(- |\d+\. )", line):
            flush()
            paragraph.append(line.strip())
        else:
            paragraph.append(line.strip())
    flush()
    return out


def _wrap(text: str, width: int, indent: str, hang: str | None = None) -> str:
    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=hang or indent,
                         break_long_words=False, break_on_hyphens=False)
