"""Platform profiles: named kinds of machine (`data/platforms.json`), what SGLang's platform predicates
and torch answer on each, and the key a platform term asks (`get_platform().is_sm100` is `is_sm100`)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from ..core.places import DATA

from ..core.errors import UsageError
from .expressions import Unknown
from .helpers import World


@dataclass(frozen=True)
class Platform:
    """A named hardware profile: what each platform predicate answers on it."""

    name: str
    description: str
    aliases: tuple[str, ...]
    facts: Mapping[str, object]
    world: World = World()  # what torch, the Python platform and the installed packages answer


@lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads(DATA.joinpath("platforms.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def platforms() -> dict[str, Platform]:
    """Every profile of the data file, by name."""
    data = _data()
    common = data.get("defaults", {})
    worlds = data.get("worlds", {})
    found = {}
    for name, entry in data["platforms"].items():
        # A predicate the profile leaves to SGLang's own helper (`is_cpu()` reads SGLANG_USE_CPU_ENGINE
        # of the launch): no fact of it, the helper is read over the launch's environment.
        facts = {k: v for k, v in {**common, **entry.get("facts", {})}.items() if k not in entry.get("from_helpers", ())}
        found[name] = Platform(name, entry.get("description", ""), tuple(entry.get("aliases", ())),
                               {k: _json_value(v) for k, v in facts.items()},
                               _world(worlds.get("defaults", {}), *(worlds.get(w, {}) for w in entry.get("world", ()))))
    return found


def _world(*layers: Mapping) -> World:
    """A world made of layers (later ones win): torch's and the platform's answers, absent names, packages."""
    answers: dict[str, object] = {}
    absent: set[str] = set()
    packages: dict[str, bool] = {}
    for layer in layers:
        for key, value in layer.get("answers", {}).items():
            answers[key] = _json_value(value)
            absent -= {a for a in absent if key == a or key.startswith((f"{a}.", f"{a}("))}
        for key in layer.get("absent", ()):
            absent.add(key)
            answers.pop(key, None)
        packages.update(layer.get("packages", {}))
    return World(answers, frozenset(absent), packages)


def _json_value(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


@lru_cache(maxsize=1)
def gpu_platforms() -> dict[str, Platform]:
    """The profile of each GPU a profile names (`gpus`), by the GPU's name: the profile with the name
    torch reports for it and its memory, which SGLang sizes its defaults by (an H200 is an sm90 part
    with 140 GiB where an H100 has 80)."""
    found = {}
    for name, entry in _data()["platforms"].items():
        base = platforms()[name]
        for gpu, (device, mib, *host) in entry.get("gpus", {}).items():
            answers = {**base.world.answers, "torch.cuda.get_device_name()": device}
            facts = {**base.facts, "get_device_memory_capacity": mib}
            if host == ["aarch64"]:  # a Grace CPU beside the GPU
                answers["platform.machine()"] = "aarch64"
                facts.update(is_host_cpu_x86=False, is_host_cpu_arm64=True)
            found[gpu] = Platform(base.name, f"{device}: {base.description}", (gpu,), facts,
                                  World(answers, base.world.absent, base.world.packages))
    return found


def find_platform(name: str) -> Platform:
    """A profile by its name, an alias (`sm90`, `mi300x`) or a GPU it names (`H200`), case and
    punctuation ignored."""
    wanted = _simple(name)
    for platform in platforms().values():
        if wanted == _simple(platform.name) or wanted in (_simple(a) for a in platform.aliases):
            return platform
    for gpu, platform in gpu_platforms().items():
        if wanted == _simple(gpu):
            return platform
    names = ", ".join(sorted(platforms()))
    raise UsageError(f"unknown platform {name!r}; known: {names} (or a GPU name such as H100, H200, A100, A10G, L4, "
                     f"B200, B300, MI300X)")


_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(mib|mb|gib|gb|tib|tb)?\s*$", re.IGNORECASE)
_MEMORY_UNITS = {None: 1, "mib": 1, "mb": 1, "gib": 1024, "gb": 1024, "tib": 1 << 20, "tb": 1 << 20}


def memory_mib(text: str) -> float:
    """`81559`, `80GiB`, `24 GB`: a device memory size in MiB, as `get_device_memory_capacity()` gives it."""
    found = _MEMORY.match(text)
    if not found or float(found.group(1)) <= 0:
        raise UsageError(f"--device-memory expects a size such as 81559 (MiB), 80GiB or 24GB, got {text!r}")
    return float(found.group(1)) * _MEMORY_UNITS[(found.group(2) or "").lower() or None]


def with_device_memory(platform: Platform | None, mib: float) -> Platform:
    """A profile whose device (or, on the CPU, host) memory is `mib`: what SGLang sizes defaults by."""
    base = platform if platform is not None else Platform("custom", "", (), {})
    return Platform(base.name, base.description, base.aliases, {**base.facts, "get_device_memory_capacity": mib},
                    base.world)


def _simple(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@lru_cache(maxsize=8192)  # a term's text is asked again on every launch
def platform_key(text: str) -> str:
    """The predicate a platform term asks: `get_platform().is_sm100`, `is_sm100()` and `_is_sm100` are
    `is_sm100`; a call's arguments are dropped when the call is the whole term."""
    key = "".join(text.split())
    for prefix in ("get_platform().", "current_platform.", "platform."):
        if key.startswith(prefix):
            key = key[len(prefix):]
    opening = key.find("(")
    if opening > 0 and _closing(key, opening) == len(key) - 1:
        key = key[:opening]
    return key.lstrip("_")


def _closing(text: str, opening: int) -> int:
    depth = 0
    for index in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return -1


# ---- model facts ---------------------------------------------------------------------------------


class PlatformView:
    """`get_platform()` on a profile: each predicate it answers, the others unknown."""

    __slots__ = ("platform",)

    def __init__(self, platform: Platform) -> None:
        self.platform = platform

    def fact(self, name: str) -> object:
        if name in self.platform.facts:
            return self.platform.facts[name]
        raise Unknown(f"platform.{name}")
