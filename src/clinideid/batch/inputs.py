"""Reading de-identification inputs: a text file, a folder of text files, JSONL, or a corpus in a codec.

Each input item is either a ``Document`` or the error that prevented reading it, so one bad file never
stops a batch. Errors name the file (and line), never its content.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from clinideid.document import Document
from clinideid.errors import ClinideidError, InputError

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
TEXT_SUFFIXES = (".txt", ".text")


@dataclass
class InputItem:
    """One document to process: ``relpath`` says where its output goes (layout kept)."""

    doc_id: str
    relpath: str
    document: Document | None = None
    error: str | None = None
    record: dict | None = None  # the original JSONL record, to write back with the new text


def decode_bytes(data: bytes, name: str, encoding: str = "utf-8") -> str:
    """Text of ``data``; clear ``InputError`` for binary content or a wrong encoding."""
    if b"\x00" in data[:8192]:
        raise InputError(f"{name}: looks like a binary file (NUL bytes); give plain text files")
    try:
        text = data.decode("utf-8-sig" if encoding.lower().replace("-", "") == "utf8" else encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not valid {encoding} (first bad byte at offset {exc.start}); pass --encoding "
            "(e.g. latin-1 or cp1252) if the file uses another encoding"
        ) from None
    except LookupError:
        raise InputError(f"unknown encoding {encoding!r}") from None
    return text


def read_text_file(path: Path, name: str, encoding: str, max_bytes: int) -> str:
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(
            f"{name}: {size} bytes is over the limit of {max_bytes}; raise --max-bytes to process it"
        )
    return decode_bytes(path.read_bytes(), name, encoding)


def _text_item(path: Path, rel: str, language: str | None, encoding: str, max_bytes: int) -> InputItem:
    doc_id = rel.rsplit(".", 1)[0] if "." in Path(rel).name else rel
    try:
        text = read_text_file(path, rel, encoding, max_bytes)
    except (InputError, OSError) as exc:
        return InputItem(
            doc_id, rel, error=str(exc) if isinstance(exc, InputError) else f"{rel}: {exc.strerror}"
        )
    return InputItem(doc_id, rel, Document(doc_id, text, language))


def iter_text_inputs(
    root: Path, language: str | None, encoding: str = "utf-8", max_bytes: int = DEFAULT_MAX_BYTES
) -> Iterator[InputItem]:
    """A single text file, or every ``*.txt`` below a folder (sorted, relative paths kept)."""
    if root.is_file():
        yield _text_item(root, root.name, language, encoding, max_bytes)
        return
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES):
        yield _text_item(path, path.relative_to(root).as_posix(), language, encoding, max_bytes)


TEXT_FIELDS = ("text", "note_text", "full_text")
ID_FIELDS = ("id", "note_id", "doc_id")


def iter_jsonl_inputs(
    path: Path, language: str | None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Iterator[InputItem]:
    """One document per JSON line (text in ``text``/``note_text``/``full_text``); bad lines become errors."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            fallback_id = f"{path.stem}-{lineno}"
            if len(raw) > max_bytes:
                yield InputItem(
                    fallback_id, fallback_id, error=f"{path.name}:{lineno}: record over --max-bytes"
                )
                continue
            try:
                record = json.loads(decode_bytes(raw, f"{path.name}:{lineno}"))
            except InputError as exc:
                yield InputItem(fallback_id, fallback_id, error=str(exc))
                continue
            except json.JSONDecodeError as exc:
                yield InputItem(
                    fallback_id, fallback_id, error=f"{path.name}:{lineno}: invalid JSON (column {exc.colno})"
                )
                continue
            if not isinstance(record, dict):
                yield InputItem(fallback_id, fallback_id, error=f"{path.name}:{lineno}: not a JSON object")
                continue
            text_field = next((f for f in TEXT_FIELDS if isinstance(record.get(f), str)), None)
            if text_field is None:
                yield InputItem(
                    fallback_id,
                    fallback_id,
                    error=f"{path.name}:{lineno}: no text field (expected one of {', '.join(TEXT_FIELDS)})",
                )
                continue
            doc_id = str(next((record[f] for f in ID_FIELDS if record.get(f) not in (None, "")), fallback_id))
            meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
            if "patient_id" in record:
                meta = {**meta, "patient_id": record["patient_id"]}
            try:
                doc = Document(doc_id, record[text_field], record.get("language") or language, meta)
            except ClinideidError as exc:
                yield InputItem(doc_id, doc_id, error=f"{path.name}:{lineno}: {exc}")
                continue
            record["_text_field"] = text_field
            yield InputItem(doc_id, doc_id, doc, record=record)


def iter_codec_inputs(path: Path, fmt: str, language: str | None) -> Iterator[InputItem]:
    """Documents of a corpus in a registered format (annotations, if any, are ignored for de-id)."""
    from clinideid.formats import read_corpus

    for doc in read_corpus(path, fmt):
        lang = doc.language or language
        yield InputItem(doc.id, f"{doc.id}.txt", Document(doc.id, doc.text, lang, doc.metadata))


def count_inputs(path: Path, fmt: str | None = None) -> int | None:
    """How many documents ``iter_inputs`` will yield, when that is cheap to know (None otherwise)."""
    if path.is_file() and (fmt in (None, "text") and path.suffix.lower() not in (".jsonl", ".ndjson")):
        return 1
    if path.is_dir() and fmt in (None, "text"):
        return sum(1 for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    return None


def iter_inputs(
    path: Path,
    fmt: str | None = None,
    language: str | None = None,
    encoding: str = "utf-8",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Iterator[InputItem]:
    """Dispatch on ``fmt`` (``text``, ``jsonl`` or any codec name) or, when None, on the path."""
    if not path.exists():
        raise InputError(f"input path {path} does not exist")
    if fmt is None:
        fmt = "jsonl" if path.is_file() and path.suffix.lower() in (".jsonl", ".ndjson") else "text"
    if fmt == "text":
        yield from iter_text_inputs(path, language, encoding, max_bytes)
    elif fmt == "jsonl" and path.is_file():
        yield from iter_jsonl_inputs(path, language, max_bytes)
    else:
        yield from iter_codec_inputs(path, fmt, language)
