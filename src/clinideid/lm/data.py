"""Unlabelled text for language-model pretraining, and a deterministic held-out split by document.

Sources (``paths``: one or several):

- a folder: every ``.txt`` file under it, recursively, one document each (BRAT folders therefore work:
  ``.ann`` files are ignored);
- a ``.jsonl`` file: one document per line, its text in the field named by ``field`` or else the first of
  ``text``, ``note_text``, ``full_text``;
- any other file: one plain-text document;
- with ``fmt``: whatever the ``fmt`` codec reads (``clinideid.formats``), annotations ignored.

Files are UTF-8. A file (or JSONL line) that cannot be read is recorded in the ``ReadReport`` and skipped;
messages name files and lines, never text. Documents get a stable name (path relative to the given folder,
``FILE:LINE`` or ``FILE:ID`` for JSONL records, ``PATH:ID`` for codec documents) which decides the
held-out split, so the split does not depend on which other files are present.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from clinideid.errors import ConfigError, FormatError, InputError
from clinideid.formats import read_corpus
from clinideid.formats._common import list_files, read_text
from clinideid.formats.base import ReadReport

log = logging.getLogger(__name__)

TEXT_FIELDS = ("text", "note_text", "full_text")
_ID_FIELDS = ("id", "note_id", "doc_id", "document_id")
_BOM = "\ufeff"


@dataclass(frozen=True)
class UnlabelledText:
    """One document's text and its stable name (a file name or record id, never content)."""

    name: str
    text: str


def _as_paths(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    if isinstance(paths, str | Path):
        return [Path(paths)]
    return [Path(p) for p in paths]


def _record(report: ReadReport, error: FormatError) -> None:
    report.errors.append(error)
    log.warning("skipped: %s", error)


def _read_jsonl(
    file: Path, name: str, field: str | None, report: ReadReport, encoding: str
) -> Iterator[UnlabelledText]:
    try:
        content = read_text(file, encoding)
    except FormatError as exc:
        _record(report, exc)
        return
    fields = (field,) if field else TEXT_FIELDS
    for lineno, line in enumerate(content.split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            _record(report, FormatError(f"not valid JSON (column {exc.colno})", path=str(file), line=lineno))
            continue
        if not isinstance(obj, dict):
            _record(report, FormatError("a JSONL record must be a JSON object", path=str(file), line=lineno))
            continue
        key = next((k for k in fields if k in obj), None)
        if key is None:
            wanted = " or ".join(repr(k) for k in fields)
            hint = "" if field else "; name the field with --field"
            _record(report, FormatError(f"no text field {wanted}{hint}", path=str(file), line=lineno))
            continue
        text = obj[key]
        if not isinstance(text, str):
            _record(report, FormatError(f"field {key!r} is not a string", path=str(file), line=lineno))
            continue
        doc_id = next((obj[k] for k in _ID_FIELDS if isinstance(obj.get(k), str | int)), None)
        yield UnlabelledText(f"{name}:{doc_id if doc_id is not None else lineno}", text)


def _read_plain(file: Path, name: str, report: ReadReport, encoding: str) -> Iterator[UnlabelledText]:
    try:
        text = read_text(file, encoding)
    except FormatError as exc:
        _record(report, exc)
        return
    yield UnlabelledText(name, text.removeprefix(_BOM))


def _read_path(
    path: Path, fmt: str | None, field: str | None, report: ReadReport, encoding: str
) -> Iterator[UnlabelledText]:
    if not path.exists():
        raise InputError(f"{path}: path does not exist")
    if fmt is not None:
        if field is not None:
            raise ConfigError("--field applies to JSONL files read without --format; drop one of them")
        for doc in read_corpus(path, fmt, report=report, on_error="skip", encoding=encoding):
            yield UnlabelledText(f"{path.name}:{doc.id}", doc.text)
        return
    if path.is_dir():
        for file in list_files(path, ".txt", recursive=True):
            yield from _read_plain(file, file.relative_to(path).as_posix(), report, encoding)
    elif path.suffix.lower() == ".jsonl":
        yield from _read_jsonl(path, path.name, field, report, encoding)
    else:
        yield from _read_plain(path, path.name, report, encoding)


def iter_unlabelled_documents(
    paths: str | Path | Iterable[str | Path],
    fmt: str | None = None,
    *,
    field: str | None = None,
    report: ReadReport | None = None,
    encoding: str = "utf-8",
) -> Iterator[UnlabelledText]:
    """The non-empty documents found at ``paths`` (see the module docstring), with their names.

    Unreadable files and records go to ``report.errors`` (a summary is logged when no report is given).
    """
    own = report is None
    rep = report if report is not None else ReadReport()
    try:
        for path in _as_paths(paths):
            for doc in _read_path(path, fmt, field, rep, encoding):
                if doc.text.strip():
                    yield doc
    finally:
        if own and rep.errors:
            log.warning("%d file(s) or record(s) skipped; pass a ReadReport to see them", len(rep.errors))


def iter_unlabelled_texts(
    paths: str | Path | Iterable[str | Path],
    fmt: str | None = None,
    *,
    field: str | None = None,
    report: ReadReport | None = None,
    encoding: str = "utf-8",
) -> Iterator[str]:
    """The texts of ``iter_unlabelled_documents``."""
    for doc in iter_unlabelled_documents(paths, fmt, field=field, report=report, encoding=encoding):
        yield doc.text


def heldout_score(name: str, seed: int = 0) -> float:
    """A stable pseudo-random number in [0, 1) for a document name (blake2b, not Python's salted hash)."""
    digest = hashlib.blake2b(f"{seed}\x00{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def heldout_split(
    docs: Iterable[UnlabelledText], fraction: float = 0.05, seed: int = 0
) -> tuple[list[str], list[str]]:
    """Training and held-out texts: a document is held out when the hash of its name is below ``fraction``.

    With two or more documents both sides get at least one. A single document is split inside: its last
    ``fraction`` of characters (cut at a line break when there is one nearby) is held out.
    """
    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"the held-out fraction must be between 0 and 1 (exclusive), got {fraction}")
    docs = list(docs)
    if not docs:
        raise InputError("no text found to train a language model on (empty files are skipped)")
    if len(docs) == 1:
        return _split_inside(docs[0].text, fraction)
    scores = [heldout_score(d.name, seed) for d in docs]
    held = [s < fraction for s in scores]
    if not any(held):
        held[min(range(len(docs)), key=scores.__getitem__)] = True
    if all(held):
        held[max(range(len(docs)), key=scores.__getitem__)] = False
    train = [d.text for d, h in zip(docs, held, strict=True) if not h]
    heldout = [d.text for d, h in zip(docs, held, strict=True) if h]
    return train, heldout


def _split_inside(text: str, fraction: float) -> tuple[list[str], list[str]]:
    cut = int(len(text) * (1.0 - fraction))
    newline = text.rfind("\n", 0, cut)
    if newline > 0 and newline > cut - max(200, len(text) // 20):
        cut = newline + 1
    cut = min(max(cut, 1), len(text) - 1)
    if cut < 1:
        raise InputError("a single one-character document cannot be split into training and held-out text")
    return [text[:cut]], [text[cut:]]
