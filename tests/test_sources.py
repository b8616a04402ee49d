"""Tests for extractor.sources: releases from a fake local index, local folders and git commits."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import socket
import stat
import subprocess
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest

from extractor.sources import trees as sources
from extractor.core.places import cached_releases
from extractor.sources.trees import SourceError, SourceInfo, git_tree, path_tree, release_tree

PACKAGE = {"sglang/__init__.py": b"", "sglang/srt/server_args.py": b"X = 1\n"}


# ---- a fake package index --------------------------------------------------------------------------


class FakeIndex:
    """A PEP 691 (or PEP 503) index for `sglang` on 127.0.0.1, serving archives built by the tests."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.entries: list[dict] = []
        self.requests: list[str] = []
        self.cut_short: set[str] = set()  # next download of these files stops half-way
        self.html = False
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.requests.append(self.path)
                if self.path in ("/simple/sglang/", "/simple/transformers/"):  # each reads its own files
                    body, kind = index.page()
                elif self.path.startswith("/files/") and self.path[7:] in index.files:
                    body, kind = index.files[self.path[7:]], "application/octet-stream"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path[7:] in index.cut_short:
                    index.cut_short.discard(self.path[7:])
                    body = body[: len(body) // 2]  # then HTTP/1.0 closes the connection
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/simple"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def add(self, filename: str, data: bytes, *, sha256: str | None = None, yanked: bool = False,
            uploaded: str | None = None) -> None:
        self.files[filename] = data
        self.entries.append({
            **({"upload-time": uploaded} if uploaded else {}),
            "filename": filename,
            "url": f"../../files/{filename}",  # relative, as PEP 691 allows
            "hashes": {"sha256": sha256 or hashlib.sha256(data).hexdigest()},
            "size": len(data),
            "yanked": yanked,
        })

    def page(self) -> tuple[bytes, str]:
        if self.html:
            links = "".join(
                f'<a href="{e["url"]}#sha256={e["hashes"]["sha256"]}"{" data-yanked" if e["yanked"] else ""}>'
                f'{e["filename"]}</a>' for e in self.entries
            )
            return f"<html><body>{links}</body></html>".encode(), "text/html"
        return json.dumps({"meta": {"api-version": "1.1"}, "files": self.entries}).encode(), \
            "application/vnd.pypi.simple.v1+json"


@pytest.fixture
def index():
    fake = FakeIndex()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "PIP_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def tar_bytes(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
        for name, target in (links or {}).items():
            member = tarfile.TarInfo(name)
            member.type, member.linkname = tarfile.SYMTYPE, target
            archive.addfile(member)
    return buffer.getvalue()


def fetch(index: FakeIndex, version: str, cache: Path) -> sources.SourceTree:
    return release_tree(version, index_url=index.url, cache_dir=cache)


# ---- releases ------------------------------------------------------------------------------------------


def test_wheel_is_preferred_over_sdist(index: FakeIndex, tmp_path: Path) -> None:
    index.add("sglang-1.0.tar.gz", tar_bytes({f"sglang-1.0/{n}": b"# sdist\n" for n in PACKAGE}))
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes(PACKAGE))
    tree = fetch(index, "1.0", tmp_path)
    assert tree.info.archive == "sglang-1.0-py3-none-any.whl"
    assert tree.paths() == ["sglang/__init__.py", "sglang/srt/server_args.py"]
    assert tree.read_text("sglang/srt/server_args.py") == "X = 1\n"
    assert tree.info.as_dict() == {
        "archive": "sglang-1.0-py3-none-any.whl",
        "archive_sha256": hashlib.sha256(index.files["sglang-1.0-py3-none-any.whl"]).hexdigest(),
        "kind": "release", "label": "1.0", "prefix": "", "release": "1.0",
    }


def test_pure_wheel_beats_smaller_platform_wheel(index: FakeIndex, tmp_path: Path) -> None:
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes({**PACKAGE, "sglang/pad.py": b"#" * 5000}))
    index.add("sglang-1.0-cp311-cp311-manylinux_2_34_x86_64.whl", zip_bytes(PACKAGE))
    assert fetch(index, "1.0", tmp_path).info.archive == "sglang-1.0-py3-none-any.whl"


def test_platform_only_release_takes_the_smallest_wheel(index: FakeIndex, tmp_path: Path) -> None:
    index.add("sglang-2.0-cp311-cp311-manylinux_2_34_x86_64.whl", zip_bytes({**PACKAGE, "sglang/pad.py": b"#" * 5000}))
    index.add("sglang-2.0-cp312-cp312-manylinux_2_34_aarch64.whl", zip_bytes(PACKAGE))
    tree = fetch(index, "2.0", tmp_path)
    assert tree.info.archive == "sglang-2.0-cp312-cp312-manylinux_2_34_aarch64.whl"
    assert "sglang/srt/server_args.py" in tree.paths()


def test_yanked_files_come_last(index: FakeIndex, tmp_path: Path) -> None:
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes(PACKAGE), yanked=True)
    index.add("sglang-1.0.tar.gz", tar_bytes({f"sglang-1.0/{n}": d for n, d in PACKAGE.items()}))
    assert fetch(index, "1.0", tmp_path).info.archive == "sglang-1.0.tar.gz"


@pytest.mark.parametrize("layout, prefix", [("sglang-1.0/python/", "python/"), ("sglang-1.0/", "")])
@pytest.mark.parametrize("suffix", [".tar.gz", ".zip"])
def test_sdist_only_release(index: FakeIndex, tmp_path: Path, layout: str, prefix: str, suffix: str) -> None:
    members = {f"{layout}{n}": d for n, d in PACKAGE.items()}
    members.update({f"{layout}setup.py": b"", "sglang-1.0/test/srt/test_x.py": b"", f"{layout}sglang/README.md": b""})
    build = tar_bytes if suffix == ".tar.gz" else zip_bytes
    index.add(f"sglang-1.0{suffix}", build(members))
    tree = fetch(index, "1.0", tmp_path)
    assert tree.info.prefix == prefix
    assert tree.paths() == ["sglang/__init__.py", "sglang/srt/server_args.py"]
    assert tree.read_bytes("sglang/srt/server_args.py") == b"X = 1\n"


def test_version_must_match_exactly(index: FakeIndex, tmp_path: Path) -> None:
    index.add("sglang-1.0.post1-py3-none-any.whl", zip_bytes({**PACKAGE, "sglang/post.py": b""}))
    with pytest.raises(SourceError, match=r"sglang==1\.0: no such release on .*nearby: 1\.0\.post1"):
        fetch(index, "1.0", tmp_path / "a")
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes(PACKAGE))
    assert "sglang/post.py" not in fetch(index, "1.0", tmp_path / "b").paths()


def test_html_index(index: FakeIndex, tmp_path: Path) -> None:
    index.html = True
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes(PACKAGE), yanked=True)
    index.add("sglang-1.0-cp311-cp311-manylinux_2_34_x86_64.whl", zip_bytes(PACKAGE))
    assert fetch(index, "1.0", tmp_path).info.archive == "sglang-1.0-cp311-cp311-manylinux_2_34_x86_64.whl"


def test_second_call_uses_the_cache_only(index: FakeIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes(PACKAGE))
    index.add("sglang-1.1-py3-none-any.whl", zip_bytes(PACKAGE))
    monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE", str(tmp_path))
    first = release_tree("1.0", index_url=index.url)
    assert len(index.requests) == 2
    second = release_tree("1.0", index_url=index.url)
    assert len(index.requests) == 2
    assert second.info == first.info and second.paths() == first.paths()
    assert first.digest(first.paths()) == second.digest(reversed(second.paths()))
    release_tree("1.1", index_url=index.url)
    assert cached_releases() == ["1.1", "1.0"]


def test_archive_in_cache_is_not_downloaded_again(index: FakeIndex, tmp_path: Path) -> None:
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes(PACKAGE))
    fetch(index, "1.0", tmp_path)
    sources.shutil.rmtree(tmp_path / "trees" / "1.0")
    assert fetch(index, "1.0", tmp_path).read_text("sglang/srt/server_args.py") == "X = 1\n"
    assert index.requests == ["/simple/sglang/", "/files/sglang-1.0-py3-none-any.whl", "/simple/sglang/"]


def test_missing_release(index: FakeIndex, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"^sglang==9\.9\.9: no such release on http://127\.0\.0\.1"):
        fetch(index, "9.9.9", tmp_path)


def test_unreachable_index(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SourceError, match=r"^sglang==1\.0: cannot reach package index") as caught:
        release_tree("1.0", index_url=f"http://u:secret@127.0.0.1:{port}/simple", cache_dir=tmp_path)
    assert "\n" not in str(caught.value) and "secret" not in str(caught.value)


def test_sha_mismatch_leaves_nothing(index: FakeIndex, tmp_path: Path) -> None:
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes(PACKAGE), sha256="0" * 64)
    with pytest.raises(SourceError, match="sha256 mismatch"):
        fetch(index, "1.0", tmp_path)
    assert list((tmp_path / "archives").iterdir()) == []


def test_interrupted_download_then_retry(index: FakeIndex, tmp_path: Path) -> None:
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes({**PACKAGE, "sglang/pad.py": bytes(range(256)) * 64}))
    index.cut_short.add("sglang-1.0-py3-none-any.whl")
    with pytest.raises(SourceError, match="^sglang==1.0: ") as caught:
        fetch(index, "1.0", tmp_path)
    assert "\n" not in str(caught.value)
    assert list((tmp_path / "archives").iterdir()) == []
    assert fetch(index, "1.0", tmp_path).read_text("sglang/srt/server_args.py") == "X = 1\n"


def test_release_dates_are_the_first_upload_of_each_release(index: FakeIndex) -> None:
    """PEP 700's upload times: a release's day is its earliest file's (the sdist may come later); a
    yanked file and an undated one say nothing; an HTML index dates none."""
    from extractor.sources.trees import release_dates

    index.add("sglang-0.5.1.tar.gz", b"x", uploaded="2026-02-02T08:00:00.5Z")
    index.add("sglang-0.5.1-py3-none-any.whl", b"x", uploaded="2026-02-01T23:59:59Z")
    index.add("sglang-0.5.2-py3-none-any.whl", b"x", uploaded="2026-03-01T00:00:00Z", yanked=True)
    index.add("sglang-0.5.3-py3-none-any.whl", b"x")
    assert release_dates(index_url=index.url) == {"0.5.1": "2026-02-01"}
    index.html = True
    assert release_dates(index_url=index.url) == {}


def test_invalid_version(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a valid version"):
        release_tree("latest", index_url="http://127.0.0.1:9/simple", cache_dir=tmp_path)


# ---- hostile and broken archives ----------------------------------------------------------------


def zip_with_symlink() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in PACKAGE.items():
            archive.writestr(name, data)
        link = zipfile.ZipInfo("sglang/link.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    return buffer.getvalue()


BAD_ARCHIVES = {
    "dotdot": ("sglang-1.0-py3-none-any.whl", lambda: zip_bytes({**PACKAGE, "../evil.py": b""}), "unsafe member"),
    "absolute": ("sglang-1.0-py3-none-any.whl", lambda: zip_bytes({**PACKAGE, "/abs.py": b""}), "unsafe member"),
    "zip-symlink": ("sglang-1.0-py3-none-any.whl", zip_with_symlink, "not a regular file"),
    "tar-symlink": (
        "sglang-1.0.tar.gz",
        lambda: tar_bytes({f"sglang-1.0/{n}": d for n, d in PACKAGE.items()},
                          {"sglang-1.0/sglang/evil.py": "../../../../etc/passwd"}),
        "unsafe member",
    ),
    "tar-absolute-link": (
        "sglang-1.0.tar.gz",
        lambda: tar_bytes({f"sglang-1.0/{n}": d for n, d in PACKAGE.items()}, {"sglang-1.0/x": "/etc/passwd"}),
        "unsafe member",
    ),
    "bomb": ("sglang-1.0-py3-none-any.whl", lambda: zip_bytes({**PACKAGE, "sglang/big.py": b"0" * 100_000}),
             "larger than 1000 bytes"),
    "total": ("sglang-1.0-py3-none-any.whl",
              lambda: zip_bytes({**PACKAGE, **{f"sglang/m{i}.py": b"0" * 900 for i in range(5)}}),
              "exceed 4000 bytes"),
    "truncated-zip": ("sglang-1.0-py3-none-any.whl", lambda: zip_bytes(PACKAGE)[:-30], "cannot unpack"),
    "truncated-tar": ("sglang-1.0.tar.gz", lambda: tar_bytes({f"s-1.0/{n}": d for n, d in PACKAGE.items()})[:-30],
                      "cannot unpack"),
    "wrong-magic": ("sglang-1.0-py3-none-any.whl", lambda: b"this is not a zip file", "cannot unpack"),
    "no-package": ("sglang-1.0-py3-none-any.whl", lambda: zip_bytes({"other/__init__.py": b""}), "no sglang/ package"),
}


@pytest.mark.parametrize("with_data_filter", [True, False], ids=["data_filter", "own-checks"])
@pytest.mark.parametrize("case", list(BAD_ARCHIVES))
def test_bad_archive_is_refused(index: FakeIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                case: str, with_data_filter: bool) -> None:
    filename, build, message = BAD_ARCHIVES[case]
    monkeypatch.setattr(sources, "MAX_MEMBER_BYTES", 1000)
    monkeypatch.setattr(sources, "MAX_TOTAL_BYTES", 4000)
    if not with_data_filter:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    index.add(filename, build())
    with pytest.raises(SourceError, match=message) as caught:
        fetch(index, "1.0", tmp_path)
    assert str(caught.value).startswith(filename) and "\n" not in str(caught.value)
    assert list((tmp_path / "trees").iterdir()) == [] and cached_releases(tmp_path) == []


# ---- local paths and decoding ----------------------------------------------------------------------


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("data, text", [
    (b"# -*- coding: latin-1 -*-\nNAME = '\xe9'\n", "# -*- coding: latin-1 -*-\nNAME = '\u00e9'\n"),
    (b"\xef\xbb\xbfNAME = '\xc3\xa9'\n", "NAME = '\u00e9'\n"),
    (b"NAME = 1\n", "NAME = 1\n"),
])
def test_read_text_follows_pep_263(tmp_path: Path, data: bytes, text: str) -> None:
    tree = path_tree(write(tmp_path / "sglang" / "mod.py", data))
    assert tree.read_text("sglang/mod.py") == text


@pytest.mark.parametrize("data", [
    b"NAME = '\xe9'\n",
    b"A = 1\nB = 2\nNAME = '\xe9'\n",
    b"# coding: no-such-codec\nA = 1\n",
])
def test_undecodable_file(tmp_path: Path, data: bytes) -> None:
    tree = path_tree(write(tmp_path / "mod.py", data))
    with pytest.raises(SourceError, match=r"^mod\.py: cannot decode: "):
        tree.read_text("mod.py")


def test_path_tree_on_a_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "my repo"
    write(repo / "python" / "sglang" / "srt" / "server_args.py", b"X = 1\n")
    write(repo / "python" / "sglang" / "__init__.py", b"")
    write(repo / "test" / "test_x.py", b"")
    expected = ["sglang/__init__.py", "sglang/srt/server_args.py"]
    tree = path_tree(repo)
    assert tree.paths() == expected
    assert tree.info == SourceInfo(kind="path", label="my_repo", path=repo.as_posix(), prefix="python/")
    assert path_tree(repo / "python").paths() == expected
    assert path_tree(repo / "python" / "sglang").paths() == expected
    inner = path_tree(str(repo / "python" / "sglang" / "srt"))
    assert inner.paths() == expected and inner.info.label == "srt"
    assert tree.read_bytes("sglang/srt/server_args.py") == b"X = 1\n"


def test_path_tree_on_a_single_file(tmp_path: Path) -> None:
    inside = write(tmp_path / "sglang" / "python" / "sglang" / "srt" / "server_args.py", b"X = 1\n")
    tree = path_tree(inside)
    assert tree.paths() == ["sglang/srt/server_args.py"] and tree.info.label == "server_args.py"
    loose = path_tree(write(tmp_path / "loose" / "case.py", b"Y = 2\n"))
    assert loose.paths() == ["case.py"] and loose.read_text("case.py") == "Y = 2\n"
    with pytest.raises(SourceError, match="not in source"):
        loose.read_bytes("../loose/case.py")


def test_path_tree_on_a_plain_folder(tmp_path: Path) -> None:
    folder = tmp_path / "fixtures" / "foo"
    write(folder / "a.py", b"")
    write(folder / "sub" / "b.py", b"")
    write(folder / "sub" / "notes.txt", b"")
    write(folder / "__pycache__" / "c.py", b"")
    assert path_tree(folder).paths() == ["a.py", "sub/b.py"]


def test_path_tree_missing(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"nowhere: no such file or directory$"):
        path_tree(tmp_path / "nowhere")


def test_labels_are_safe(tmp_path: Path) -> None:
    assert path_tree(write(tmp_path / "a b$c" / "x.py", b"").parent).info.label == "a_b_c"


@pytest.mark.parametrize("text, label", [("v0.5.10", "v0.5.10"), ("origin/main", "origin_main"), ("", "fb"),
                                         (".", "fb"), ("..", "fb"), ("...", "..."), ("é", "_")])
def test_sanitize(text: str, label: str) -> None:
    assert sources._sanitize(text, "fb") == label


# ---- git ----------------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root / "python" / "sglang" / "srt" / "x.py", b"VALUE = 1\n")
    write(root / "python" / "sglang" / "__init__.py", b"")
    write(root / "README.md", b"")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    write(root / "python" / "sglang" / "srt" / "x.py", b"VALUE = 2\n")
    git(root, "commit", "-q", "-am", "two")
    return root


def test_git_tree_reads_an_old_commit(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD~1")
    tree = git_tree(repo, "HEAD~1")
    assert tree.paths() == ["sglang/__init__.py", "sglang/srt/x.py"]
    assert tree.read_text("sglang/srt/x.py") == "VALUE = 1\n"
    assert tree.read_text("sglang/__init__.py") == ""
    assert tree.read_text("sglang/srt/x.py") == "VALUE = 1\n"
    assert (repo / "python" / "sglang" / "srt" / "x.py").read_text() == "VALUE = 2\n"
    assert tree.info.commit == first and tree.info.prefix == "python/" and tree.info.label == "HEAD_1"
    assert tree.info.commit_date == git(repo, "log", "-1", "--format=%cI", first)
    assert git_tree(repo, first[:8]).info.label == first[:12]
    assert git_tree(repo, "HEAD").digest(["sglang/srt/x.py"]) != tree.digest(["sglang/srt/x.py"])


def test_a_git_tree_stops_its_reader_when_its_block_ends(repo: Path) -> None:
    """One `git cat-file` process per tree while it is read, stopped when the `with` block ends (not
    left to the garbage collector); a read after that starts another."""
    with git_tree(repo, "HEAD") as tree:
        assert tree.read_text("sglang/srt/x.py") == "VALUE = 2\n"
        process = tree._process
        assert process is not None and process.poll() is None
    assert tree._process is None and process.returncode is not None
    assert tree.read_text("sglang/srt/x.py") == "VALUE = 2\n"  # read before: kept, no new process
    assert tree._process is None
    assert tree.read_text("sglang/__init__.py") == "" and tree._process is not None  # a new one
    tree.close()
    assert tree._process is None


@pytest.mark.parametrize("rev", ["no-such-branch", "-v", "HEAD~9"])
def test_git_tree_bad_revision(repo: Path, rev: str) -> None:
    with pytest.raises(SourceError) as caught:
        git_tree(repo, rev)
    assert rev in str(caught.value) and "\n" not in str(caught.value)


def test_git_tree_not_a_repo(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="git rev-parse failed"):
        git_tree(tmp_path, "HEAD")


def test_a_release_s_rules_are_read_again_without_its_source(index: FakeIndex, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`check --release X` once its index is made: the note of the index key is read, not the release's
    files (a release never changes); another package index is another note."""
    from extractor.products.reuse import rulesets
    from extractor.sources import trees

    source = Path(__file__).parent / "fixtures" / "render_basic" / "src"
    files = {path.relative_to(source).as_posix(): path.read_bytes() for path in sorted(source.rglob("*.py"))}
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes(files))
    monkeypatch.setenv("SGLANG_CONSTRAINTS_CACHE", str(tmp_path))
    monkeypatch.setenv("SGLANG_CONSTRAINTS_EXTRACTION_CACHE", str(tmp_path / "extractions"))
    first = rulesets.release_rules("1.0", index.url)

    def no_source(*args, **kwargs):
        raise AssertionError("the release's source was opened")

    monkeypatch.setattr(trees, "release_tree", no_source)
    again = rulesets.release_rules("1.0", index.url)
    assert [r.id for r in again.rules] == [r.id for r in first.rules] and again.rules
    with pytest.raises(AssertionError, match="source was opened"):
        rulesets.release_rules("1.0", index.url + "/other")


@pytest.mark.parametrize("xdg", [None, "", "   ", "/srv/cache", "relative/cache", " /padded "])
def test_user_cache_folder_is_the_one_platformdirs_names(monkeypatch, xdg):
    # The cache folder is read without importing platformdirs (6 ms of every command), the same one.
    import platformdirs

    from extractor.core.places import cache_root

    monkeypatch.delenv("SGLANG_CONSTRAINTS_CACHE", raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert cache_root() == Path(platformdirs.user_cache_dir("sglang-constraints"))


# ---- the libraries a release pins ----------------------------------------------------------------------


def test_a_release_gives_the_files_of_the_transformers_it_pins_fetched_once(index: FakeIndex, tmp_path: Path) -> None:
    metadata = (b"Metadata-Version: 2.1\nName: sglang\nVersion: 1.0\nRequires-Dist: transformers==9.1.0\n"
                b"Requires-Dist: torch>=2.5\nRequires-Dist: flashinfer==0.9; extra == \"cuda\"\n")
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes({"sglang/__init__.py": b"", "sglang/srt/server_args.py": b"x = 1\n",
                                                       "sglang-1.0.dist-info/METADATA": metadata}))
    index.add("transformers-9.1.0-py3-none-any.whl", zip_bytes({"transformers/models/auto/configuration_auto.py": b"T = 1\n"}))
    index.add("transformers-9.2.0-py3-none-any.whl", zip_bytes({"transformers/models/auto/configuration_auto.py": b"T = 2\n"}))
    tree = fetch(index, "1.0", tmp_path)
    assert tree.pins() == {"transformers": "9.1.0"}  # an exact pin without a marker only
    assert tree.library_text("transformers", "transformers/models/auto/configuration_auto.py") == "T = 1\n"
    assert tree.library_text("transformers", "transformers/models/auto/auto_mappings.py") is None
    assert tree.library_text("torch", "torch/__init__.py") is None
    assert tree.looked_at()["library:transformers"] == "9.1.0"
    asked = len(index.requests)
    again = fetch(index, "1.0", tmp_path)
    assert again.library_text("transformers", "transformers/models/auto/configuration_auto.py") == "T = 1\n"
    assert again.library_text("transformers", "transformers/models/auto/auto_mappings.py") is None
    assert len(index.requests) == asked  # kept: neither the release nor the library asked for again
    assert again.agrees(tree.looked_at())
    assert not path_tree(tmp_path / "trees" / "1.0").agrees(tree.looked_at())  # pins nothing: another source


def test_a_pinned_library_the_index_lacks_is_a_one_line_error(index: FakeIndex, tmp_path: Path) -> None:
    metadata = b"Metadata-Version: 2.1\nName: sglang\nVersion: 1.0\nRequires-Dist: transformers==9.1.0\n"
    index.add("sglang-1.0-py3-none-any.whl", zip_bytes({"sglang/__init__.py": b"", "sglang/srt/server_args.py": b"x = 1\n",
                                                       "sglang-1.0.dist-info/METADATA": metadata}))
    tree = fetch(index, "1.0", tmp_path)
    with pytest.raises(SourceError, match=r"^transformers==9\.1\.0: no such release on http://127\.0\.0\.1:\d+/simple$"):
        tree.library_text("transformers", "transformers/models/auto/configuration_auto.py")
