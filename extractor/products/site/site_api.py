"""The docs site's JSON API: one document per error, flag and release, and an index, each schema-checked.

An error's document holds its record of every release it is in; records that are the same in several
releases are kept once with the list of those releases. A record is the rule as `extract` writes it,
less its formula trees and their Python renderings (`trigger_cli` says the same in flags; the trees
are in each release's rules.json). Beside them, `reader`: what the newest release's page says for
people (meaning, solutions, example fix), as data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ...core.model import Rule
from ...core.serialize import SCHEMA_VERSION
from ..check.fixes import Fix, intent_keeping
from ..check.typical import Typical
from .pages import meaning
from .site_model import ErrorEntry, FlagEntry, SiteIndex, flag_slug
from .terminal import inline as plain
from ..check.words import Flags, solutions, way_text

SITE_SCHEMA = "site.schema.json"
SITE_SCHEMA_ID = "https://github.com/sglang-constraints/schemas/site.schema.json"
_LEFT_OUT = ("condition", "trigger", "condition_source", "trigger_source", "assigns")


def _header(kind: str) -> dict:
    from ..extraction.output import GENERATOR

    return {"schema": SITE_SCHEMA_ID, "schema_version": SCHEMA_VERSION, "generator": GENERATOR, "type": kind}


def api_record(rule: Mapping) -> dict:
    """A rule record as the API serves it (see the module's docstring)."""
    return {k: v for k, v in rule.items() if k not in _LEFT_OUT}


def grouped(records: Sequence[tuple[str, Mapping]], key: str) -> list[dict]:
    """(release, record) pairs in release order as [{"releases": [...], key: record}], equal records once."""
    groups: dict[str, dict] = {}
    for label, record in records:
        text = json.dumps(record, sort_keys=True, ensure_ascii=False)
        group = groups.setdefault(text, {"releases": [], key: record})
        group["releases"].append(label)
    return list(groups.values())


def error_document(entry: ErrorEntry, records: Sequence[tuple[str, Mapping]], reader: Mapping | None = None) -> dict:
    """An error's API document; `reader`: what its page in the newest release says (`reader_record`)."""
    return {**_header("error"), "id": entry.page, "ids": list(entry.ids), "kind": entry.kind,
            "message": entry.message, "releases": list(entry.releases), "first_seen": entry.releases[0],
            "last_seen": entry.newest, "versions": list(entry.versions), "changes": [dict(c) for c in entry.changes],
            "records": grouped(records, "rule"), **({"reader": dict(reader)} if reader is not None else {})}


def reader_record(rule: Rule, flags: Flags, siblings: Sequence[Rule], fixes: Sequence[Fix] | None,
                  typical: Sequence[Typical] = ()) -> dict:
    """What a guard's page says for people, as data: the meaning in words, the solutions (checked on
    the example command line when `fixes` is given, else read off the condition), the example fix
    (the command lines before and after, the checked solution that keeps the flags passed) and the
    typical launches on common setups (each with its fix there)."""
    checked = fixes is not None
    ways = [fix.text for fix in fixes] if checked else [way_text(w) for w in solutions(rule, flags, siblings)]
    shown = intent_keeping(fixes or ())
    example = None
    if rule.example is not None:
        example = {"before": list(rule.example.before),
                   "after": list(shown.argv) if shown is not None else list(rule.example.after)}
    launches = [{"setup": t.setup, "gpu": t.platform, "before": list(t.before), "fix": t.fix, "after": list(t.after)}
                for t in typical]
    return {"meaning": plain(meaning(rule, flags, siblings)), "solutions": ways, "solutions_checked": checked,
            "example": example, "typical_launches": launches}


def flag_document(entry: FlagEntry, records: Sequence[tuple[str, Mapping]], errors: Sequence[str],
                  adjustments: Sequence[str]) -> dict:
    """A flag's records per release, its history runs, and the pages of the errors it can trigger and
    of the adjustments that rewrite it (in its newest release)."""
    return {**_header("flag"), "name": entry.name, "slug": flag_slug(entry.name), "releases": list(entry.releases),
            "first_seen": entry.releases[0], "last_seen": entry.newest, "runs": [dict(r) for r in entry.runs],
            "records": grouped(records, "flag"), "errors": list(errors), "adjustments": list(adjustments)}


def release_document(label: str, site: SiteIndex, changes: Sequence[Mapping], errors: Sequence[str],
                     flags: Sequence[str]) -> dict:
    """A release: its source and counts, the changes from the one before (with the page of each changed
    rule), and the pages of its errors and flags."""
    entry = site.sources[label]
    return {**_header("release"), "label": label, "source": entry["source"], "previous": site.previous(label),
            "counts": {k: entry[k] for k in ("rules", "guards", "adjustments", "flags", "errors")},
            "changes": [dict(c) for c in changes], "errors": sorted(errors), "flags": sorted(flags)}


def index_document(site: SiteIndex) -> dict:
    return {
        **_header("index"),
        "compare": site.compare,
        "releases": [{"label": label, "counts": {k: site.sources[label][k] for k in ("rules", "guards", "adjustments", "flags")},
                      "api": f"api/releases/{label}.json", "page": f"releases/{label}.html"} for label in site.labels],
        "errors": [{"id": e.page, "kind": e.kind, "message": e.message, "first_seen": e.releases[0],
                    "last_seen": e.newest, "api": f"api/errors/{e.page}.json", "page": f"errors/{e.page}.html"}
                   for e in site.errors.values()],
        "flags": [{"name": f.name, "first_seen": f.releases[0], "last_seen": f.newest,
                   "api": f"api/flags/{flag_slug(f.name)}.json", "page": f"flags/{flag_slug(f.name)}.html"}
                  for f in site.flags.values()],
    }
