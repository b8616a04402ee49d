"""Where a Hub id's config.json is on this machine: the Hugging Face cache's layout (huggingface_hub's).

A download of `org/name` is the folder `models--org--name` under the cache folder: the file
`refs/<branch or tag>` holds a commit, whose files are in `snapshots/<commit>/`. A launch of that id on
this machine reads its config.json from there (transformers' `from_pretrained`), so `check` can too.
Only paths and file reads here: the answered check asks whether a line names such an id.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

_HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")
_REVISION = re.compile(r"[\w.-]+(/[\w.-]+)*")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def hub_cache_folder(env: Mapping[str, str]) -> Path:
    """Where huggingface_hub keeps downloads: HF_HUB_CACHE, else the older HUGGINGFACE_HUB_CACHE, else
    `hub` under HF_HOME (by default `huggingface` under XDG_CACHE_HOME, else ~/.cache)."""
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")).expanduser()


def hub_repo_folder(model_id: object, env: Mapping[str, str]) -> Path | None:
    """The cache folder of the Hub id `model_id` (it may not exist), or None for a name that is no Hub id."""
    if not isinstance(model_id, str) or not _HUB_ID.fullmatch(model_id) or ".." in model_id:
        return None
    return hub_cache_folder(env) / ("models--" + model_id.replace("/", "--"))


def hub_cached_config(model_id: object, revision: object, env: Mapping[str, str]) -> Path | None:
    """The config.json of the Hub id `model_id` at `revision` (a branch, tag or commit; None: main) in
    the Hugging Face cache `env` names, when it holds that snapshot; None for anything else: a local
    path, a name that is no Hub id, a ModelScope launch (SGLANG_USE_MODELSCOPE), a revision not cached."""
    repo = hub_repo_folder(model_id, env)
    if repo is None or str(env.get("SGLANG_USE_MODELSCOPE", "")).lower() in ("1", "true", "yes", "on"):
        return None
    revision = revision if isinstance(revision, str) and revision else "main"
    if not _REVISION.fullmatch(revision) or ".." in revision:
        return None
    try:
        if Path(str(model_id)).expanduser().exists():
            return None  # a folder of that name here: a local path, not the Hub id
        commit = revision if _COMMIT.fullmatch(revision) else \
            (repo / "refs" / revision).read_text(encoding="utf-8").strip()
        path = repo / "snapshots" / commit / "config.json"
        return path if _COMMIT.fullmatch(commit) and path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None
