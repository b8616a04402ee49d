"""The package index client: a project's files on a PEP 503/691 simple index, chosen, downloaded
and checked against the sha256 the index gives."""

from __future__ import annotations

import hashlib
import html.parser
import json
import math
import os
import posixpath
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..core.errors import SourceError
from ..core.progress import step

DEFAULT_INDEX_URL = "https://pypi.org/simple"
HTTP_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class Dist:
    """One file of a project's index page."""

    filename: str
    url: str
    sha256: str | None
    size: int | None
    yanked: bool
    version: Version
    uploaded: str | None = None  # ISO time the index gives (PEP 700 "upload-time"), when it does


def chosen_index(given: str | None) -> str:
    """The index to ask: the one given, else pip's (`PIP_INDEX_URL`), else PyPI's."""
    return (given or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX_URL).rstrip("/")


def index_files(index: str, package: str, release: str) -> list[Dist]:
    """The files of `package` the index lists (`release`: what the caller wants, for its messages)."""
    import http.client, urllib.error, urllib.request  # noqa: E401 - networking: only when a release is fetched

    request = urllib.request.Request(
        f"{index}/{package}/", headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"}
    )
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            body, page, content_type = response.read(), response.geturl(), response.headers.get_content_type()
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        raise SourceError(f"{package}=={release}: cannot reach package index {redact(index)}: {reason(exc)}") from None
    try:
        if "json" in content_type:
            files = json.loads(body)["files"]
        else:
            parser = _AnchorParser()
            parser.feed(body.decode("utf-8", "replace"))
            files = parser.files
        return [
            _dist(entry, page, version) for entry in files
            if (version := _version_of(entry["filename"], package)) is not None
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SourceError(f"{package}=={release}: unreadable answer from package index {redact(index)}: "
                          f"{reason(exc)}") from None


def _dist(entry: dict, page: str, version: Version) -> Dist:
    size = entry.get("size")
    return Dist(
        filename=entry["filename"],
        url=urllib.parse.urljoin(page, entry["url"]),
        sha256=(entry.get("hashes") or {}).get("sha256"),
        size=size if isinstance(size, int) else None,
        yanked=bool(entry.get("yanked")),
        version=version,
        uploaded=entry.get("upload-time") if isinstance(entry.get("upload-time"), str) else None,
    )


class _AnchorParser(html.parser.HTMLParser):
    """Reads a PEP 503 page into the PEP 691 file shape."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[dict] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "a" and attributes.get("href"):
            url, fragment = urllib.parse.urldefrag(attributes["href"])
            hashes = dict([fragment.split("=", 1)]) if "=" in fragment else {}
            filename = urllib.parse.unquote(posixpath.basename(urllib.parse.urlsplit(url).path))
            self.files.append({"filename": filename, "url": url, "hashes": hashes, "yanked": "data-yanked" in attributes})


def _version_of(filename: str, package: str) -> Version | None:
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename

    if "/" in filename or "\\" in filename:
        return None
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return version if name == package else None


def choose(dists: list[Dist], package: str, release: str, index: str) -> Dist:
    """The file of `release` to fetch: a pure wheel first, then any wheel, then the sdist; smallest first."""
    wanted = Version(release)
    matching = [dist for dist in dists if dist.version == wanted]
    if not matching:
        versions = sorted({dist.version for dist in dists})
        below = [str(v) for v in versions if v < wanted][-3:]
        above = [str(v) for v in versions if v > wanted][:3]
        nearby = f" (nearby: {', '.join(below + above)})" if below or above else ""
        raise SourceError(f"{package}=={release}: no such release on {redact(index)}{nearby}")
    best = min(matching, key=_preference)
    if not best.sha256:
        raise SourceError(f"{package}=={release}: package index gives no sha256 for {best.filename}")
    return best


def _preference(dist: Dist) -> tuple:
    # Wheel Python sources do not depend on the platform, so any wheel will do; pure ones are smaller.
    from packaging.utils import parse_wheel_filename

    if dist.filename.endswith(".whl"):
        tags = parse_wheel_filename(dist.filename)[3]
        kind = 0 if any(tag.abi == "none" and tag.platform == "any" for tag in tags) else 1
    else:
        kind = 2
    return (dist.yanked, kind, dist.size if dist.size is not None else math.inf, dist.filename)


def fetch(dist: Dist, archives: Path, label: str) -> Path:
    """The file downloaded into `archives` (kept: a second call reads it), checked against its sha256;
    `label` ("sglang==0.5.23") names it in messages."""
    import http.client, urllib.error, urllib.request  # noqa: E401 - networking: only when a release is fetched

    target = archives / dist.filename
    expected = (dist.sha256 or "").lower()
    if target.is_file() and file_sha256(target) == expected:
        return target
    if urllib.parse.urlsplit(dist.url).scheme not in ("http", "https"):
        raise SourceError(f"{label}: refusing to download {redact(dist.url)}")
    archives.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=archives, prefix=".download-")
    temp = Path(temp_name)
    try:
        hasher = hashlib.sha256()
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(dist.url, timeout=HTTP_TIMEOUT) as response:
            total = dist.size or int(response.headers.get("Content-Length") or 0)
            done = 0
            while chunk := response.read(1 << 20):
                hasher.update(chunk)
                out.write(chunk)
                done += len(chunk)
                step(f"downloading {dist.filename}: {done >> 20} of {total >> 20} MiB" if total
                     else f"downloading {dist.filename}: {done >> 20} MiB", often=True)
        if hasher.hexdigest() != expected:
            raise SourceError(f"{label}: {dist.filename}: sha256 mismatch "
                              f"(index says {expected}, got {hasher.hexdigest()})")
        # Only complete, verified files ever get the archive's name.
        os.replace(temp, target)
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        raise SourceError(f"{label}: cannot download {redact(dist.url)}: {reason(exc)}") from None
    finally:
        temp.unlink(missing_ok=True)
    return target


def file_sha256(path: Path) -> str:
    hasher = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            hasher.update(chunk)
    return hasher.hexdigest()


def reason(exc: BaseException) -> str:
    """An exception as one line of text, without urllib's "<urlopen error ...>" wrapping."""
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return reason(exc.reason) if isinstance(exc.reason, BaseException) else str(exc.reason)
    return " ".join(str(exc).split()) or type(exc).__name__


def redact(url: str) -> str:
    """Drop user:password from a URL before it goes into a message."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
