"""What the docs site knows of the releases it covers: error lineages, flags and releases as frozen records.

Built from the history document (lineages, flag runs, steps) and the releases' outlines before any
rule set is read, so every page can link to every other one; the pages themselves are written while
each release's rules are at hand (`products.site`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Changes that give a rule another text (message, trigger, exception, value): each starts a new version
# of its page. A move alone keeps the text (the source link differs, the words do not).
TEXT_CHANGES = frozenset({
    "added", "adjustment-added", "message-changed", "exception-changed", "tightened", "relaxed",
    "condition-changed", "adjustment-value-changed", "adjustment-widened", "adjustment-narrowed",
    "adjustment-condition-changed",
})


@dataclass(frozen=True, slots=True)
class ErrorEntry:
    """One page of the site: a rule followed across releases (every lineage of the history with this
    latest id; one that went away and came back has several)."""

    page: str  # the latest id: the page's name
    ids: tuple[str, ...]  # every id it had, oldest first
    kind: str
    message: str  # newest text
    releases: tuple[str, ...]  # where it is, in release order
    changes: tuple[Mapping, ...]  # the history document's compact changes, in order
    versions: tuple[str, ...]  # releases where its text starts anew (first seen, then each text change)

    @property
    def newest(self) -> str:
        return self.releases[-1]

    def version_of(self, label: str, order: Mapping[str, int]) -> str:
        """The release whose text `label` shows: the latest version start at or before it."""
        return max((v for v in self.versions if order[v] <= order[label]), key=order.__getitem__)


@dataclass(frozen=True, slots=True)
class FlagEntry:
    """A flag (by field name) across releases: where it is and its runs of the history."""

    name: str
    releases: tuple[str, ...]
    runs: tuple[Mapping, ...]  # the history document's flag runs (first_seen, last_seen, changes)

    @property
    def newest(self) -> str:
        return self.releases[-1]


@dataclass(frozen=True, slots=True)
class SiteIndex:
    """Every page the site has and which rule of which release each shows."""

    labels: tuple[str, ...]  # releases in order, oldest first
    sources: Mapping[str, Mapping]  # label -> the history's source entry (source, counts)
    errors: Mapping[str, ErrorEntry]  # page -> entry
    flags: Mapping[str, FlagEntry]  # field name -> entry
    page_of: Mapping[tuple[str, str], str]  # (release, rule id) -> page
    steps: Mapping[str, Sequence[Mapping]]  # release -> the changes from the release before it
    compare: str
    order: Mapping[str, int]  # label -> its place in `labels`

    def previous(self, label: str) -> str | None:
        i = self.labels.index(label)
        return self.labels[i - 1] if i else None


def flag_slug(name: str) -> str:
    """A flag's page name: its field name as the command line spells it (`tp_size` -> `tp-size`)."""
    return name.replace("_", "-")


def site_index(document: Mapping, outlines: Sequence[Mapping], steps: Mapping[str, Sequence[Mapping]]) -> SiteIndex:
    """The site's pages from the history document and each good source's outline (in source order)."""
    labels = tuple(s["label"] for s in document["sources"])
    order = {label: i for i, label in enumerate(labels)}
    by_page: dict[str, list[Mapping]] = defaultdict(list)
    spans: dict[str, list[tuple[int, int, str]]] = defaultdict(list)  # rule id -> (first, last, page)
    for lineage in document["rules"]:
        by_page[lineage["id"]].append(lineage)
        for rule_id in lineage.get("ids") or [lineage["id"]]:
            spans[rule_id].append((order[lineage["first_seen"]], order[lineage["last_seen"]], lineage["id"]))
    page_of: dict[tuple[str, str], str] = {}
    present: dict[str, list[str]] = defaultdict(list)
    for label, outline in zip(labels, outlines):
        for rule in outline["rule_list"]:
            # An id can be an old id of one lineage and the latest of another that began after the
            # rename: within the later one's span it is the later one's.
            here = [(first, p) for first, last, p in spans.get(rule["id"], ()) if first <= order[label] <= last]
            page = rule["id"] if (not here or any(p == rule["id"] for _, p in here)) else max(here)[1]
            page_of[label, rule["id"]] = page
            if not present[page] or present[page][-1] != label:
                present[page].append(label)
    errors = {}
    for page, lineages in sorted(by_page.items()):
        if not present[page]:  # every rule it had is another lineage's (cannot happen with a sound history)
            continue
        lineages.sort(key=lambda e: order[e["first_seen"]])
        changes = [c for e in lineages for c in e["changes"]]
        starts = {e["first_seen"] for e in lineages} | {c["to"] for c in changes if c["kind"] in TEXT_CHANGES}
        newest = lineages[-1]
        ids = tuple(dict.fromkeys(i for e in lineages for i in (e.get("ids") or [e["id"]])))
        errors[page] = ErrorEntry(page=page, ids=ids, kind=newest["kind"], message=newest["message"],
                                  releases=tuple(present[page]), changes=tuple(changes),
                                  versions=tuple(sorted((s for s in starts if s in order), key=order.__getitem__)))
    runs: dict[str, list[Mapping]] = defaultdict(list)
    for run in document["flags"]:
        runs[run["name"]].append(run)
    flags_present: dict[str, list[str]] = defaultdict(list)
    for label, outline in zip(labels, outlines):
        for name in outline["flag_names"]:
            flags_present[name].append(label)
    flags = {name: FlagEntry(name, tuple(flags_present[name]), tuple(runs[name])) for name in sorted(flags_present)}
    return SiteIndex(labels=labels, sources={s["label"]: s for s in document["sources"]}, errors=errors,
                     flags=flags, page_of=page_of, steps=steps, compare=document["compare"], order=order)
