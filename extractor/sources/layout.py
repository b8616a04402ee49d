"""Which files of a source to read: server_args.py alone, or with arg_groups/**, or what --include says."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..core.errors import LayoutError

SERVER_ARGS = "sglang/srt/server_args.py"
ARG_GROUPS = "sglang/srt/arg_groups/"


@dataclass(frozen=True, slots=True)
class Layout:
    name: str  # single-file, file+arg_groups, split, custom, plain
    files: tuple[str, ...]


def find_layout(paths: list[str], include: list[str] | None = None) -> Layout:
    """Choose the read set from the package's file list (sorted posix paths)."""
    if include:
        files = tuple(p for p in paths if any(fnmatchcase(p, pattern) for pattern in include))
        if not files:
            raise LayoutError(f"no file matches --include {' '.join(include)}")
        return Layout("custom", files)
    if not any(p.startswith("sglang/") for p in paths):
        # Not an SGLang package (a fixture folder or a lone file): read every Python file.
        if not paths:
            raise LayoutError("no Python file to read")
        return Layout("plain", tuple(paths))
    if SERVER_ARGS not in paths:
        raise LayoutError(f"{SERVER_ARGS} not found; choose files with --include GLOB")
    groups = tuple(p for p in paths if p.startswith(ARG_GROUPS))
    if not groups:
        return Layout("single-file", (SERVER_ARGS,))
    # From 0.5.19 server_args.py is a small shell around arg_groups; before, it holds most guards.
    name = "split" if any(p.startswith(ARG_GROUPS + "fields/") for p in groups) else "file+arg_groups"
    return Layout(name, (SERVER_ARGS, *groups))
