"""A docs site of every error across releases: a MkDocs (Material) project of generated pages and JSON.

`site_files` walks the releases of a history in order, reading one release's documents at a time
from the extraction cache, and makes every page and API document (`site_pages`, `site_api`) plus
`mkdocs.yml`; `write_site` validates the documents and writes the project. The same history gives the
same bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path

from ..core.serialize import dumps, resolution_of
from .history import History, history_document
from ..core.model import RuleKind
from .fixes import example_fixes
from .linter import RuleSet
from .pages import DEFAULT_SOURCE_URL, by_function, own_fields, replace_file
from .sides import Snapshot
from .site_api import SITE_SCHEMA, api_record, error_document, flag_document, index_document, release_document
from .site_model import SiteIndex, flag_slug, site_index
from .site_pages import (
    BANNER,
    error_page,
    errors_index,
    flag_page,
    flags_index,
    home_page,
    release_page,
    releases_index,
)
from .words import Flags

DOCS = "docs"  # the MkDocs docs_dir inside the project folder
PUBLIC = "public"  # where `mkdocs build` writes the site
GENERATED = ("errors", "flags", "releases", "api")  # folders of docs/ the site owns: stale files there go

MKDOCS_YML = f"""# {BANNER[5:-4]}
site_name: SGLang server-argument errors
site_description: Every error and adjustment of SGLang's server-argument validation, across releases.
docs_dir: {DOCS}
site_dir: {PUBLIC}
use_directory_urls: false
strict: true
theme:
  name: material
  features:
    - search.highlight
    - navigation.top
plugins:
  - search:
      # Words of messages and flags: `--tp-size` and `tp_size` split into their parts, `x=y` too.
      separator: '[\\s\\-_=,:;!?()\\[\\]{{}}"''/]+|\\.(?!\\d)'
markdown_extensions:
  - admonition
  - attr_list
  - tables
  - toc:
      permalink: true
nav:
  - Home: index.md
  - Releases: releases/index.md
  - Errors: errors/index.md
  - Flags: flags/index.md
"""


def history_site(history: History, documents: Callable[[str], tuple[Mapping, Mapping]], compare: str = "trigger",
                 source_url: str = DEFAULT_SOURCE_URL) -> dict[str, tuple[object, str | None]]:
    """The site of a history: `documents(key)` gives the cached rules and flags documents of a source."""
    document = history_document(history, compare)
    good = [s for s in history.sources if s.error is None]
    steps = {}
    for old, new, step in history.steps:
        old_label, new_label = (str(s.outline["source"].get("label", s.spec.value)) for s in (old, new))
        steps[new_label] = [{**c, "from": old_label, "to": new_label} for c in step["changes"]]
    site = site_index(document, [s.outline for s in good], steps)
    keys = {label: s.key for label, s in zip(site.labels, good)}
    return site_files(site, lambda label: documents(keys[label]), source_url)


def site_files(site: SiteIndex, documents: Callable[[str], tuple[Mapping, Mapping]],
               source_url: str = DEFAULT_SOURCE_URL) -> dict[str, tuple[object, str | None]]:
    """Every file of the MkDocs project by path: (text or document, schema of a document or None).

    One release's documents and records are held at a time: a page is written while the release that
    has its text is at hand."""
    files: dict[str, tuple[object, str | None]] = {}
    records: dict[str, list[tuple[str, Mapping]]] = defaultdict(list)
    flag_records: dict[str, list[tuple[str, Mapping]]] = defaultdict(list)
    flag_lists: dict[str, tuple[list[str], list[str]]] = {}
    primary: dict[str, str] = {}
    old_rule_flags: dict[str, list[str]] = {}
    for label in site.labels:
        rules_document, flags_document = documents(label)
        snapshot = Snapshot.from_documents(rules_document, flags_document)
        flags = Flags(snapshot.flags)
        by_id = {r.id: r for r in snapshot.rules}
        raw = {r["id"]: r for r in rules_document["rules"]}
        groups = by_function(snapshot.rules)
        own = {r.id: own_fields(r, groups[(r.location.file, r.function)], flags) for r in snapshot.rules}
        # Each page's solutions checked on its example command line, as `check` checks its fixes.
        ruleset = RuleSet(tuple(snapshot.rules), tuple(snapshot.flags), snapshot.source, None,
                          resolution_of(dict(rules_document)))
        checked = example_fixes(ruleset, flags, groups)
        for rule in snapshot.rules:
            page = site.page_of[label, rule.id]
            entry = site.errors[page]
            records[page].append((label, api_record(raw[rule.id])))
            newest_version = entry.version_of(entry.newest, site.order)
            if label == entry.newest or (label in entry.versions and label != newest_version):
                text = error_page(entry, rule, label, flags, snapshot.source, by_id, site, own[rule.id], source_url,
                                  checked.get(rule.id))
                path = f"errors/{page}.md" if label == entry.newest else f"errors/{page}/{label}.md"
                files[path] = (text, None)
        for flag_data in flags_document["flags"]:
            flag_records[flag_data["name"]].append((label, flag_data))
        for flag in snapshot.flags:
            primary[flag.name] = flag.flags[0] if flag.flags else flag.name
            entry = site.flags[flag.name]
            if label != entry.newest:
                continue
            errors = [(site.page_of[label, r.id], r.message) for r in snapshot.rules
                      if r.kind is not RuleKind.ADJUSTMENT and flag.name in own[r.id]]
            adjustments = [(site.page_of[label, r.id], r.message) for r in snapshot.rules
                           if r.kind is RuleKind.ADJUSTMENT and r.target == flag.name]
            flag_lists[flag.name] = ([p for p, _ in errors], [p for p, _ in adjustments])
            files[f"flags/{flag_slug(flag.name)}.md"] = (
                flag_page(entry, flag, snapshot.source, errors, adjustments, site, source_url), None)
        rule_flags = {rule_id: [flags.option(n) for n in names] for rule_id, names in own.items()}
        changes = [_with_page(c, site, label) for c in site.steps.get(label, ())]
        files[f"releases/{label}.md"] = (release_page(label, site, changes, rule_flags, old_rule_flags, primary), None)
        pages = sorted({site.page_of[label, r.id] for r in snapshot.rules})
        files[f"api/releases/{label}.json"] = (
            release_document(label, site, changes, pages, [f.name for f in snapshot.flags]), SITE_SCHEMA)
        old_rule_flags = rule_flags
        del snapshot, by_id, raw, own, rules_document, flags_document  # the next release replaces them
    for page, entry in site.errors.items():
        files[f"api/errors/{page}.json"] = (error_document(entry, records[page]), SITE_SCHEMA)
    for name, entry in site.flags.items():
        errors, adjustments = flag_lists.get(name, ([], []))
        files[f"api/flags/{flag_slug(name)}.json"] = (flag_document(entry, flag_records[name], errors, adjustments),
                                                       SITE_SCHEMA)
    files["api/index.json"] = (index_document(site), SITE_SCHEMA)
    files["index.md"] = (home_page(site), None)
    files["errors/index.md"] = (errors_index(site), None)
    files["flags/index.md"] = (flags_index(site, primary), None)
    files["releases/index.md"] = (releases_index(site), None)
    return files


def _with_page(change: Mapping, site: SiteIndex, label: str) -> dict:
    """A step's change with the page of its rule (the new side's, else the old side's in the release before)."""
    if change.get("subject") != "rule":
        return dict(change)
    new = change.get("new")
    side = new or change.get("old") or {}
    at = label if new else site.previous(label)
    page = site.page_of.get((at or "", side.get("id", change["id"])))
    return {**change, "page": page} if page else dict(change)


def write_site(folder: Path, files: Mapping[str, tuple[object, str | None]]) -> int:
    """Validate every document, then write mkdocs.yml and docs/ (each file whole or not at all); files
    left in the site's own folders from an earlier run go. Returns the number of files written."""
    from .output import validate

    texts: dict[str, str] = {}
    for name, (content, schema) in files.items():
        if schema is not None:
            assert isinstance(content, dict)
            validate(content, schema)
            texts[name] = dumps(content)
        else:
            assert isinstance(content, str)
            texts[name] = content
    docs = folder / DOCS
    for name in sorted(texts):
        path = docs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, texts[name])
    for owned in GENERATED:
        for path in sorted((docs / owned).rglob("*")):
            if path.is_file() and path.relative_to(docs).as_posix() not in texts:
                path.unlink()
    replace_file(folder / "mkdocs.yml", MKDOCS_YML)
    return len(texts) + 1
