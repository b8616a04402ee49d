"""Shared paths and JSON-lines helpers of the differential test (standard library only).

Imported by models.py, cases.py and compare.py, which run in the project's venv; the oracle
server (oracle_server.py) runs in the SGLang venv and deliberately does not import this module,
so that it has no dependency on the project at all.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

VERIFY_DIR = Path(__file__).resolve().parent
ROOT = VERIFY_DIR.parent
CACHE_DIR = Path(os.environ.get("VERIFY_CACHE", VERIFY_DIR / ".cache"))
MODELS_DIR = CACHE_DIR / "models"
CASES_FILE = CACHE_DIR / "cases.jsonl"
USER_CASES_FILE = CACHE_DIR / "cases-user.jsonl"
USER_COMMANDS = VERIFY_DIR / "user_commands.txt"
RELEASE = "0.5.23"
DEFAULT_RULES = ROOT / "out" / RELEASE / "rules.json"
DEFAULT_SGREAL = Path(os.environ.get("SGREAL_VENV", "/tmp/sgreal"))

# The model folder a case runs on is written into argv as a real path; the cache keys and case
# ids use this placeholder instead, so that moving the cache folder does not invalidate them.
MODEL_PLACEHOLDER = "<model:{}>"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_json(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Records of a JSON-lines file; a truncated last line (an interrupted run) is skipped."""
    if not path.exists():
        return
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    count = 0
    with open(tmp, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
            count += 1
    os.replace(tmp, path)
    return count


def model_dir(name: str) -> Path:
    return MODELS_DIR / name

