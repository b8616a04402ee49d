"""Output documents: assembled from an extraction, validated against the schemas, written atomically."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import fastjsonschema

from ... import __version__
from ...core.errors import InvalidDocument, UsageError
from ...core.formula import Spellings, atoms
from ...core.model import RuleKind, TermKind
from ...core.parallel import shared_map
from ...core.serialize import (
    FLAGS_SCHEMA_ID,
    RULES_SCHEMA_ID,
    SCHEMA_VERSION,
    dump_bytes,
    dump_pieces,
    environment_json,
    flag_json,
    helpers_json,
    problem_json,
    record_lines,
    rule_json,
    write_json,
)
from ...core.cache import compiled_code
from .exports import graph_documents
from .graph import figures, graph_data

if TYPE_CHECKING:  # libcst-backed; `diff` and `history` write and validate documents without it
    from .extraction import Extraction

# The repository's `schemas/` in a checkout (an editable install too); in an installed package, the
# same files as the folder `extractor/_schemas` (pyproject.toml maps it).
_PACKAGE = Path(__file__).resolve().parents[2]  # extractor/
SCHEMA_DIR = next((d for d in (_PACKAGE.parent / "schemas", _PACKAGE / "_schemas") if d.is_dir()), _PACKAGE.parent / "schemas")
GENERATOR = {"name": "sglang-constraints", "version": __version__}


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """A schema of `schemas/`, checked against its metaschema."""
    import jsonschema  # the reference implementation, for the checks only: slow to import

    schema = _read_schema(name)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    return schema


@lru_cache(maxsize=None)
def _read_schema(name: str) -> dict:
    """A schema as the validators compile it: ours, checked by the tests (tests/test_schemas.py), not
    against the metaschema in every process that writes a document (0.1 s each)."""
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def validator(name: str, part: str = "document") -> Callable[[object], object]:
    """A compiled validator for a schema, or for the part used to check formula trees node by node.

    Rule triggers are deep trees that share most of their subformulas; walking every copy costs
    seconds even compiled. So the document is checked with formulas as opaque objects, and every
    distinct formula node once against the formula schema with its children as opaque objects:
    by induction the same verdict, at a fraction of the cost.

    fastjsonschema compiles a schema to Python code, ten times faster than jsonschema's interpreter.
    It implements draft 7; our schemas (2020-12) use only keywords that mean the same in both, which
    tests/test_schemas.py checks, with jsonschema as the reference on valid and broken documents.
    """
    schema = json.loads(json.dumps(_read_schema(name)))
    defs = schema.get("$defs", {})
    if "formula" in defs:
        full = json.loads(json.dumps(defs["formula"]))
        _shallow_children(full)
        defs["formula_node"] = full
        defs["formula"] = {"type": "object"}
    if part == "formula_node":
        schema = {"$defs": defs, "$ref": "#/$defs/formula_node"}
    schema.pop("$schema", None)  # compiled as draft 7: see above
    schema.pop("$id", None)  # local references only; nothing is fetched
    return _compiled(schema)


def _shallow_children(node: object) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if value == {"$ref": "#/$defs/formula"}:
                node[key] = {"type": "object"}
            else:
                _shallow_children(value)
    elif isinstance(node, list):
        for item in node:
            _shallow_children(item)


# The record lists of each document whose records the schema checks one by one and nothing else
# checks (an array of `items` only: tests/test_schemas.py holds the schemas to it): a record found
# valid once is valid in any such list.
RECORD_LISTS = {"rules.schema.json": ("rules", "resolution"), "flags.schema.json": ("flags",)}


def checked_pieces(document: dict, schema: str, known: Collection[bytes] = ()) -> tuple[list[bytes], set[bytes]]:
    """The document validated, then written (`dump_bytes`, as the pieces `write_atomic` writes one
    after another), and the digests of its records (those of `RECORD_LISTS`). A record whose digest
    is in `known` (found valid under the same schema before,
    and kept by the caller) is not checked again: one extraction of a commit after another meets
    all but a few records as they were."""
    lines = record_lines(document, RECORD_LISTS.get(schema, ()))
    salt = hashlib.blake2b(schema.encode(), digest_size=16).digest()
    digests = {key: [hashlib.blake2b(line, digest_size=16, key=salt).digest() for line in found]
               for key, found in lines.items()}
    unchecked = {key: [item for item, digest in zip(document[key], digests[key]) if digest not in known]
                 for key in lines} if known else {}
    validate({**document, **unchecked}, schema)
    return dump_pieces(document, lines), {digest for found in digests.values() for digest in found}


def validate(document: dict, schema: str) -> None:
    """Raise InvalidDocument, naming the place, if the document does not follow the schema."""
    _check(validator(schema), document, schema)
    if "formula" in _read_schema(schema).get("$defs", {}):
        node_validator = validator(schema, "formula_node")
        by_type = _node_validators(schema)
        for node in _formula_nodes(document):
            check = by_type.get(node.get("type")) if isinstance(node, dict) else None  # type: ignore[arg-type]
            _check(check or node_validator, node, schema)


@lru_cache(maxsize=None)
def _node_validators(name: str) -> dict[object, Callable[[object], object]]:
    """Per node type, the validator of what the formula schema asks of that type (its `if type is ...
    then ...` branch, children opaque): the same verdict as the whole node schema for a node of that
    type, without fastjsonschema trying, and raising, every other branch's `if` (thousands of nodes).
    Empty when the schema is not made of such branches: then the node schema checks each node."""
    schema = json.loads(json.dumps(_read_schema(name)))
    defs = schema.get("$defs", {})
    branches = defs.get("formula", {}).get("allOf", [])
    found: dict[object, Callable[[object], object]] = {}
    for branch in branches:
        test = branch.get("if", {}).get("properties", {}).get("type", {}) if isinstance(branch, dict) else {}
        types = [test["const"]] if "const" in test else test.get("enum")
        if set(branch) != {"if", "then"} or not isinstance(types, list) or set(test) - {"const", "enum"}:
            return {}
        then = json.loads(json.dumps(branch["then"]))
        _shallow_children(then)
        shallow_defs = json.loads(json.dumps(defs))
        shallow_defs["formula"] = {"type": "object"}
        check = _compiled({"$defs": shallow_defs, **then})
        found.update((t, check) for t in types)
    return found


def _compiled(schema: dict) -> Callable[[object], object]:
    schema.pop("$schema", None)  # compiled as draft 7: see `validator`
    schema.pop("$id", None)
    key = f"fastjsonschema {fastjsonschema.VERSION}\n{json.dumps(schema, sort_keys=True)}"
    code = compiled_code(key, "<validator>", lambda: fastjsonschema.compile_to_code(schema, use_formats=False))
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 - fastjsonschema's own code, as compile() runs it
    return namespace["validate"]


def _check(check: Callable[[object], object], value: object, schema: str) -> None:
    try:
        check(value)
    except fastjsonschema.JsonSchemaValueException as error:
        raise InvalidDocument(f"{schema}: {error.message}") from None


def _formula_nodes(document: dict):
    """Every distinct formula node (by identity) under the rules' condition, trigger and assigned cases,
    and under the `resolution` table's writes."""
    seen: set[int] = set()
    stack = [r[key] for r in document.get("rules", ()) for key in ("condition", "trigger") if key in r]
    stack += [case["when"] for r in document.get("rules", ()) for case in r.get("assigns", ()) if "when" in case]
    for write in document.get("resolution", ()):
        stack += [write["when"]] if "when" in write else []
        stack += [case["when"] for case in write.get("cases", ()) if "when" in case]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, dict):
            if "args" in node and isinstance(node["args"], list):
                stack.extend(node["args"])
            if "arg" in node:
                stack.append(node["arg"])


def summary(ex: Extraction) -> dict:
    kinds = Counter(r.kind.value for r in ex.rules)
    atom_kinds: Counter[str] = Counter()
    for rule in ex.rules:
        for atom in atoms(rule.effective):
            atom_kinds[atom.term.kind.value] += 1
    unresolved = {n.field for n in ex.notices if n.code == "unresolved-field"}
    guards = [r for r in ex.rules if r.kind is not RuleKind.ADJUSTMENT]
    return {
        "rules": len(ex.rules),
        "by_kind": {k: kinds.get(k, 0) for k in (k.value for k in RuleKind)},
        "reachable": sum(r.reachable for r in ex.rules),
        "reachable_guards": sum(r.reachable for r in guards),
        "atoms_by_kind": {k: atom_kinds.get(k, 0) for k in (k.value for k in TermKind)},
        "flags": len(ex.flags),
        "unresolved_fields": len(unresolved),
        "files": len(ex.files),
        "errors": len(ex.problems),
    }


def rules_document(ex: Extraction, extra: dict | None = None) -> dict:
    cache: dict = {}  # equal subformulas share one JSON dict
    spellings = Spellings.of(ex.flags)
    document = {
        "schema_version": SCHEMA_VERSION,
        "schema": RULES_SCHEMA_ID,
        "generator": GENERATOR,
        "source": ex.info.as_dict(),
        "layout": ex.layout.name,
        "entry_points": [f"{fn.file}::{fn.qualname}" for fn in ex.entry_points],
        "files": [{"path": f.path, "sha256": f.sha256, "lines": f.lines} for f in ex.files],
        "summary": summary(ex),
        "warnings": [
            {"code": n.code, "message": n.message, **({"field": n.field} if n.field else {}), "rules": list(n.rules)}
            for n in ex.notices
        ],
        "errors": [problem_json(p) for p in ex.problems],
        "rules": [rule_json(r, cache, spellings) for r in ex.rules],
        "resolution": [write_json(w, cache, spellings) for w in ex.resolution],
        "helpers": helpers_json(ex.helpers),
        "environment": environment_json(ex.environment),
    }
    document.update(extra or {})
    return document


def flags_document(ex: Extraction) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "schema": FLAGS_SCHEMA_ID,
        "generator": GENERATOR,
        "source": ex.info.as_dict(),
        "summary": {"flags": len(ex.flags), "deprecated": sum(f.deprecated for f in ex.flags)},
        "warnings": [{"code": n.code, "message": n.message, "field": n.field} for n in ex.notices if n.field],
        "flags": [flag_json(f) for f in ex.flags],
    }


def extract_documents(ex: Extraction) -> dict[str, tuple[dict, str | None]]:
    """What `extract` writes: rules.json (graph figures under `graph`), flags.json and the graph exports."""
    rules, graph, flags = _document_parts(ex)
    return {**rules(), **flags(), **graph()}


def _document_parts(ex: Extraction) -> tuple[Callable[[], dict[str, tuple[dict, str | None]]], ...]:
    """rules.json, the graph exports and flags.json of an extraction, each made when called: the
    documents by file name, with their schema."""
    graph = graph_data(ex.rules, ex.flags, ex.relations)  # plain data: no networkx on this path
    return (lambda: {"rules.json": (rules_document(ex, {"graph": figures(graph)}), "rules.schema.json")},
            lambda: graph_documents(graph, {"source": ex.info.label}),
            lambda: {"flags.json": (flags_document(ex), "flags.schema.json")})


_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_atomic(path: Path, text: str | bytes | list[bytes], durable: bool = True) -> None:
    """Write to a temporary file in the same folder, then rename: readers see the old file or the new one.
    Text is written as UTF-8 with its newlines as they are; a list of pieces, one after another.

    `durable`: on disk before the rename (fsync), so a crash leaves the old file or the whole new one.
    A cache entry need not be (a torn one does not parse and is made again): that is a tenth of a
    second of system time for the 20 MB of a release's rules."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(text, list):
                handle.writelines(text)
            else:
                handle.write(text.encode() if isinstance(text, str) else text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs are ordinary shareable files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def require_writable(target: Path, option: str, folder: bool = True) -> None:
    """Before any work: can the output (a folder, or a file when `folder` is false) be made where it
    is asked for? Tried for real, with a probe file in the nearest folder that exists (permission
    bits do not tell a read-only mount, nor what root may do). UsageError in one line if not."""
    place = target.resolve()
    if place.exists():
        if place.is_dir() != folder:
            raise UsageError(f"{option} {target}: {'is a file, not a folder' if folder else 'is a folder, not a file'}")
        place = place if folder else place.parent
    else:
        while not place.exists() and place != place.parent:
            place = place.parent
        if not place.is_dir():
            raise UsageError(f"{option} {target}: {place} is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".probe.", suffix=".tmp", dir=place)
    except OSError as error:
        raise UsageError(f"{option} {target}: cannot write in {place} ({error.strerror or error})") from None
    os.close(fd)
    os.unlink(probe)


@contextmanager
def folder_made_aside(target: Path) -> Iterator[Path]:
    """A fresh folder beside `target` to make a whole output in; swapped in for `target` when the
    block ends normally, removed otherwise (Ctrl-C, a failure): readers see the old folder or the
    new one, never a half-made one. The old one is moved aside first and dropped after the swap;
    a run killed between the two renames leaves it as `.NAME.old`, put back by the next run."""
    parent, old = target.parent, target.parent / f".{target.name}.old"
    parent.mkdir(parents=True, exist_ok=True)
    if old.is_dir() and not target.exists():
        old.rename(target)  # an earlier run was killed mid-swap
    _sweep(parent, target.name)
    made = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
    os.chmod(made, 0o777 & ~_UMASK)  # mkdtemp makes 0700; an output folder is an ordinary shareable one
    try:
        yield made
        shutil.rmtree(old, ignore_errors=True)
        if target.exists():
            target.rename(old)
        made.rename(target)
    except BaseException:
        shutil.rmtree(made, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)


# A folder made aside this long ago belongs to a run that was killed (`kill -9`, a power cut): no
# run of this tool takes a day.
STALE_SECONDS = 24 * 3600


def _sweep(parent: Path, name: str) -> None:
    """Remove what killed runs left beside `name` (`.NAME.*.tmp` folders older than STALE_SECONDS);
    a live run's folder is younger and stays."""
    now = time.time()
    for leftover in parent.glob(f".{name}.*.tmp"):
        try:
            if leftover.is_dir() and now - leftover.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(leftover, ignore_errors=True)
        except OSError:
            continue


# Marks a folder `whole_folder` made: the next run may replace it whole (it holds no one else's files).
MADE_WHOLE = ".sglang-constraints"


@contextmanager
def whole_folder(target: Path, *, owned: bool = False) -> Iterator[Path]:
    """Where a command writes a folder of outputs so that readers see the previous complete folder
    or the new one: made aside and swapped in (`folder_made_aside`) when the folder is the tool's
    (`owned`: extract's OUTPUT/<label>/), new, empty, or marked by an earlier whole write; else the
    folder itself, file by file, each whole (a folder holding the user's own files, such as a docs
    folder `render` was pointed at, is never replaced)."""
    if not (owned or not target.exists() or (target / MADE_WHOLE).is_file() or not any(target.iterdir())):
        yield target
        return
    with folder_made_aside(target) as made:
        if not owned:
            (made / MADE_WHOLE).write_text("Made whole by sglang-constraints: its next run replaces this folder.\n",
                                           encoding="utf-8")
        yield made


def output_dir(out_root: Path, label: str) -> Path:
    folder = (out_root / label).resolve()
    if out_root.resolve() not in folder.parents:
        raise ValueError(f"label {label!r} leaves the output folder")
    return folder


def write_documents(folder: Path, documents: dict[str, tuple[dict, str | None]]) -> list[Path]:
    """Validate every document first, then write them all; nothing is written if one is invalid."""
    return write_encoded(folder, _encoded_all(documents))


def encoded(name: str, document: dict, schema: str | None) -> bytes:
    """A document validated against its schema (if any), as its file holds it."""
    if schema is not None:
        validate(document, schema)
    return dump_bytes(document) if name.endswith(".json") else document["text"].encode()


def _encoded_all(documents: dict[str, tuple[dict, str | None]]) -> dict[str, bytes]:
    return {name: encoded(name, document, schema) for name, (document, schema) in documents.items()}


def write_encoded(folder: Path, texts: dict[str, bytes]) -> list[Path]:
    """Write documents `encoded` (all valid, so none is left half-written by a bad one), by name."""
    written = []
    for name, text in sorted(texts.items()):
        write_atomic(folder / name, text)
        written.append(folder / name)
    return written


def encoded_documents(ex: Extraction, jobs: int = 1) -> tuple[dict[str, bytes], dict]:
    """The files of `extract_documents`, validated and `encoded`, and the rules document's summary.

    With `jobs`, helper processes make the graph files and flags.json (`core.parallel`) while this
    one makes rules.json, the largest, which is not sent anywhere: the same bytes, sooner."""
    rules, *others = _document_parts(ex)

    def rules_encoded() -> tuple[dict[str, bytes], dict]:
        documents = rules()
        return _encoded_all(documents), documents["rules.json"][0]["summary"]

    made = shared_map(lambda piece: _encoded_all(others[piece]()), len(others), jobs, 1, aside=rules_encoded)
    texts, summary = made.aside  # type: ignore[misc]
    for part in made.items:
        texts.update(part)
    return texts, summary
