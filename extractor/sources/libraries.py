"""The files of a library a release pins exactly, for a guard whose outcome the library decides:
transformers' table of the model types `AutoConfig` loads. The release's archive says which version
(`Requires-Dist: transformers==5.3.0`); that version's wheel is fetched once and the files kept."""

from __future__ import annotations

import email.parser
import os
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from ..core.errors import SourceError
from .index import choose, fetch, index_files, reason

REQUIRES_FILE = "requires.json"  # beside an unpacked release: its exact pins, name -> version
MAX_LIBRARY_FILE_BYTES = 4 * 2**20


def exact_pins(archive: Path) -> dict[str, str]:
    """The requirements a release's archive pins to one version (`name==version`, no marker), by
    name: from a wheel's METADATA or an sdist's PKG-INFO. An archive without them pins nothing."""
    try:
        text = _metadata(archive)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError, ValueError) as exc:
        raise SourceError(f"{archive.name}: cannot read its metadata: {reason(exc)}") from None
    pins: dict[str, str] = {}
    for line in email.parser.Parser().parsestr(text or "").get_all("Requires-Dist") or ():
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        specifiers = list(requirement.specifier)
        if requirement.marker is None and len(specifiers) == 1 and specifiers[0].operator == "==" \
                and "*" not in specifiers[0].version:
            pins[requirement.name.lower()] = specifiers[0].version
    return dict(sorted(pins.items()))


def _metadata(archive: Path) -> str | None:
    if archive.name.endswith(".tar.gz"):
        with tarfile.open(archive, "r:gz") as tar:
            member = next((m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")), None)
            stream = tar.extractfile(member) if member is not None and member.isfile() else None
            return stream.read(MAX_LIBRARY_FILE_BYTES).decode("utf-8", "replace") if stream is not None else None
    with zipfile.ZipFile(archive) as zipped:
        name = next((n for n in zipped.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), None)
        return zipped.read(name)[:MAX_LIBRARY_FILE_BYTES].decode("utf-8", "replace") if name is not None else None


def library_file(package: str, version: str, path: str, *, index: str, root: Path) -> bytes | None:
    """The bytes of `path` (`transformers/models/auto/configuration_auto.py`) in `package`'s wheel at
    `version`, or None when the wheel has no such file. Fetched from the index once; kept under
    `root/libraries/`, written aside and moved in whole."""
    kept = root / "libraries" / f"{package}-{version}"
    target, absent = kept / path, kept / (path + ".absent")
    if target.is_file():
        return target.read_bytes()
    if absent.is_file():
        return None
    label = f"{package}=={version}"
    dist = choose([d for d in index_files(index, package, version) if d.filename.endswith(".whl")],
                  package, version, index)
    wheel = fetch(dist, root / "archives", label)
    try:
        with zipfile.ZipFile(wheel) as zipped:
            info = next((i for i in zipped.infolist() if i.filename == path), None)
            data = zipped.read(info)[:MAX_LIBRARY_FILE_BYTES + 1] if info is not None else None
    except (zipfile.BadZipFile, zlib.error, OSError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise SourceError(f"{label}: {wheel.name}: cannot unpack: {reason(exc)}") from None
    if data is not None and len(data) > MAX_LIBRARY_FILE_BYTES:
        raise SourceError(f"{label}: {path}: larger than {MAX_LIBRARY_FILE_BYTES} bytes")
    _write_whole(target if data is not None else absent, data or b"")
    return data


def _write_whole(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, target)
    finally:
        Path(temp).unlink(missing_ok=True)
