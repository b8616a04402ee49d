"""The machine and folder a launch will run from (`check --local`): SGLang's checks of the paths a
command line names (`os.path.isfile(cfg.ssl_keyfile)`) read its file system."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


# SGLang's checks of paths given on the command line (`os.path.isfile(cfg.ssl_keyfile)`).
PATH_TESTS = {"os.path.isfile": "is_file", "os.path.exists": "exists", "os.path.isdir": "is_dir"}
PATH_METHODS = frozenset({"is_file", "exists", "is_dir"})  # `Path(cfg.model_path).is_file()`
PATH_TEST = re.compile(r"\bos\.path\.(isfile|exists|isdir)\(|\bPath\([^()]*\)\.(is_file|exists|is_dir)\(\)")


@dataclass(frozen=True)
class LaunchHost:
    """The machine and folder the launch will run from (`check --local`): SGLang's checks of paths
    on the command line read this file system. Only paths are looked at, nothing is opened."""

    folder: Path

    def path_test(self, test: str, path: str) -> bool:
        method = PATH_TESTS.get(test, test)
        return bool(getattr((self.folder / Path(path).expanduser()), method)())
