"""Which releases accept each launch option (the shipped flag history), to word an unknown option.

`extractor/data/flag_history.json` is built by `sglang-constraints flag-history` from the catalogs of
every release (products/flag_history.py); this module only reads it, so `check` stays light.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.places import DATA



def release_key(label: str) -> tuple:
    """Sorts release labels in version order (labels that are no version last, by name)."""
    from packaging.version import InvalidVersion, Version  # here: a check reads the history, it sorts none

    try:
        return (0, Version(label))
    except InvalidVersion:
        return (1, label)


@dataclass(frozen=True)
class FlagHistory:
    """The shipped flag history: which releases accept each option."""

    releases: tuple[str, ...]
    flags: Mapping[str, Mapping[str, object]]
    released: Mapping[str, str] = field(default_factory=dict)  # release -> the day it was published

    def story(self, option: str, release: str) -> str | None:
        """Why `release` does not accept `option`, when another release did: removed (and since when),
        or newer than `release`. None when no release known here had it, or `release` is unknown."""
        record = self.flags.get(option)
        if record is None or release not in self.releases:
            return None
        here = release_key(release)
        runs = [(first, last) for first, last in record["releases"]]  # type: ignore[union-attr]
        if any(release_key(first) <= here <= release_key(last) for first, last in runs):
            return None  # it is in this release: nothing to tell
        earlier = [(first, last) for first, last in runs if release_key(last) < here]
        later = [(first, last) for first, last in runs if release_key(first) > here]
        successor = self._successor(option, record, release)
        if earlier:
            first, last = earlier[-1]
            removed = self._after(last)
            text = f"{option} was removed in {removed}" if removed else f"{option} was last in {last}"
            text += f" (accepted {first}..{last}" if first != last else f" (accepted in {first}"
            text += f", deprecated since {record['deprecated_since']})" if record.get("deprecated_since") else ")"
            if successor:
                text += f"; {release} sets that field with {successor}"
            return text
        first = later[0][0]
        return f"{option} is new in {first}: {release} is older"

    def _after(self, label: str) -> str | None:
        index = self.releases.index(label)
        return self.releases[index + 1] if index + 1 < len(self.releases) else None

    def _successor(self, option: str, record: Mapping[str, object], release: str) -> str | None:
        """The option `release` accepts for the same field, when there is one."""
        here = release_key(release)
        for other, entry in sorted(self.flags.items()):
            if other == option or entry.get("dest") != record.get("dest"):
                continue
            if any(release_key(first) <= here <= release_key(last) for first, last in entry["releases"]):  # type: ignore[union-attr]
                return other
        return None


@lru_cache(maxsize=1)
def shipped_flag_history() -> FlagHistory | None:
    """The history in the package's data folder; None when it is missing (a trimmed install)."""
    try:
        text = DATA.joinpath("flag_history.json").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None
    return flag_history_of(json.loads(text))


def release_date(release: str) -> str | None:
    """The day a release was published on PyPI, as the shipped history records it."""
    history = shipped_flag_history()
    return history.released.get(release) if history is not None else None


def flag_history_of(document: Mapping) -> FlagHistory:
    return FlagHistory(tuple(document["releases"]), document["flags"], document.get("released", {}))
