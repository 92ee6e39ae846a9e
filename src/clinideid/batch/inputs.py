"""Reading de-identification inputs: a text file, a folder of text files, JSONL, or a corpus in a codec.

Each input item is a ``Document``, the error that prevented reading it, or the reason it is not a
document at all (an unsupported file type, a link to a folder): one bad file or record never stops a
batch, and nothing found in the input vanishes from the counts. Messages name the file (and line),
never its content.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clinideid.batch.limits import raise_if_timed_out
from clinideid.batch.paths import display_id, inside
from clinideid.document import Document
from clinideid.errors import ClinideidError, ConfigError, FormatError, InputError, ModelError
from clinideid.ingest import DOCUMENT_SUFFIXES
from clinideid.text.decoding import (
    AUTO,
    Decoded,
    check_decoded,
    check_encoding,
    check_text,
    decode_document,
    sniff_bom,
)
from clinideid.text.language import SUPPORTED

if TYPE_CHECKING:
    from clinideid.ingest import ExtractedDocument, IngestOptions

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
TEXT_SUFFIXES = (".txt", ".text")
#: files a folder holds besides documents, listed as ignored (not failed): system files, annotations
SYSTEM_FILES = frozenset({"thumbs.db", "desktop.ini", "ehthumbs.db"})
COMPANION_SUFFIXES = (".ann",)  # BRAT annotations beside their .txt (read them with --format brat)
JSONL_SUFFIXES = (".jsonl", ".ndjson")
SUPPORTED_FILES = (*TEXT_SUFFIXES, *DOCUMENT_SUFFIXES)
TEXT_FIELDS = ("text", "note_text", "full_text")
ID_FIELDS = ("id", "note_id", "doc_id")


@dataclass
class InputItem:
    """One thing found in the input.

    ``doc_id`` is the input's own id (a relative path without suffix, a record id, a codec id) in printable
    form; the output is named from it (see ``OutputNamer``) with ``suffix``. Exactly one of ``document``,
    ``error``, ``ignored`` and ``source`` is set; ``source`` is a document file (DOCX, PDF, image...) that
    is read only when it is processed, in the worker process that de-identifies it (not at all for one
    an earlier run finished; ``loaded()`` reads it here).
    """

    doc_id: str
    suffix: str = ""
    document: Document | None = None
    error: str | None = None
    ignored: str | None = None
    record: dict | None = None  # the original JSONL record, to write back with de-identified fields
    text_field: str | None = None
    source_name: str = ""  # the input file's name, for ``--patient-id filename:REGEX``
    extracted: ExtractedDocument | None = None  # a DOCX, PDF, image...: the source map for its format output
    encoding: str | None = None  # what its bytes were decoded with (text files, JSONL lines): in its report
    source: DocumentSource | None = None

    def loaded(self) -> InputItem:
        """This item with its document file read (an item without one as it is)."""
        if self.source is None:
            return self
        try:
            doc, extracted = self.source.read()
        except InputError as exc:
            return InputItem(self.doc_id, self.suffix, error=str(exc), source_name=self.source_name)
        return InputItem(self.doc_id, self.suffix, doc, source_name=self.source_name, extracted=extracted)


@dataclass(frozen=True)
class DocumentSource:
    """A document file to read to text (``clinideid.ingest``): plain data, so it can be sent to a worker
    process and read there, under that process's time and memory limits."""

    path: Path
    rel: str  # its path in the input, shown in messages
    language: str | None
    max_bytes: int
    options: IngestOptions | None = None

    @property
    def size(self) -> int:
        """The file's size in bytes (0 when it cannot be read: ``read`` says why)."""
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def read(self) -> tuple[Document, ExtractedDocument]:
        """The extracted document; ``InputError`` naming the file (never its content) when it cannot be
        read. ``MemoryError`` and the time limit's ``DocumentTimeout`` go through: the caller reports them."""
        from clinideid.ingest import extract

        shown = display_id(self.rel)
        try:
            if self.path.stat().st_size > self.max_bytes:
                raise InputError(f"over the limit of {self.max_bytes} bytes; raise --max-bytes to process it")
            extracted = extract(self.path, self.language, self.options)
            check_text(extracted.text, shown)
            doc = Document(shown, extracted.text, self.language, {"extraction": extracted.method})
        except MemoryError:
            raise
        except (InputError, ModelError) as exc:
            message = str(exc)
            raise InputError(message if message.startswith(shown) else f"{shown}: {message}") from None
        except OSError as exc:
            raise InputError(f"{shown}: cannot read ({exc.strerror})") from None
        except ClinideidError as exc:
            raise InputError(f"{shown}: {exc}") from None
        except Exception as exc:  # a reader's own exception on a malformed file: its type, never its message
            raise_if_timed_out()
            raise InputError(f"{shown}: could not be read ({type(exc).__name__})") from None
        return doc, extracted


def normalise_language(value: object, where: str) -> str | None:
    """A record's language code, lower-cased; ``InputError`` for one clinideid has no pipeline for."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(f"{where}: language must be a string code such as 'en'")
    code = value.strip().lower().replace("_", "-").split("-")[0]
    if code not in SUPPORTED:
        shown = value[:12] + ("…" if len(value) > 12 else "")
        raise InputError(f"{where}: unsupported language {shown!r}; supported: {', '.join(SUPPORTED)}")
    return code


def read_text_file(path: Path, name: str, encoding: str, max_bytes: int) -> Decoded:
    """The decoded text of one file, at most ``max_bytes`` of it read (a larger file is an error)."""
    with path.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"{name}: over the limit of {max_bytes} bytes; raise --max-bytes to process it")
    return decode_document(data, name, encoding)


def _text_item(path: Path, rel: str, language: str | None, encoding: str, max_bytes: int) -> InputItem:
    name = Path(rel).name
    suffix = Path(rel).suffix
    doc_id = rel[: -len(suffix)] if suffix else rel
    shown = display_id(rel)
    try:
        decoded = read_text_file(path, shown, encoding, max_bytes)
        doc = Document(display_id(doc_id), decoded.text, language)
        return InputItem(doc_id, suffix, doc, source_name=name, encoding=decoded.encoding)
    except InputError as exc:
        return InputItem(doc_id, suffix, error=str(exc), source_name=name)
    except OSError as exc:
        return InputItem(doc_id, suffix, error=f"{shown}: cannot read ({exc.strerror})", source_name=name)


def _deferred(
    path: Path, rel: str, language: str | None, max_bytes: int, options: IngestOptions | None
) -> InputItem:
    """A DOCX, PDF, image...: its extracted text is the document; the id keeps the suffix (``scan.pdf``),
    the text output is ``scan.pdf.txt`` and the format output ``scan.pdf``."""
    source = DocumentSource(path, rel, language, max_bytes, options)
    return InputItem(rel, ".txt", source_name=Path(rel).name, source=source)


def _skipped_file(rel: str, suffix: str, siblings: set[str]) -> str | None:
    """Why a file that is no document is only listed as ignored (hidden and system files, files in hidden
    folders such as ``.git``, annotations of a text file beside it); None for a file of an unsupported
    type, which is a failed input."""
    name = rel.rsplit("/", 1)[-1]
    if any(part.startswith(".") for part in rel.split("/")) or name.lower() in SYSTEM_FILES:
        return "a hidden or system file"
    if suffix.lower() in COMPANION_SUFFIXES and any(
        name[: -len(suffix)] + t in siblings for t in TEXT_SUFFIXES
    ):
        return "annotations of a text file (read them with --format brat)"
    return None


def _unsupported(rel: str, suffix: str) -> str:
    if suffix.lower() in JSONL_SUFFIXES:
        return f"{display_id(rel)}: a JSONL file inside a folder is not read; give it as the input on its own"
    kind = display_id(suffix.lower() or "no extension")
    return f"{display_id(rel)}: unsupported file type ({kind}); clinideid reads {', '.join(SUPPORTED_FILES)}"


def _not_readable(path: Path, root: Path) -> str | None:
    """Why ``path`` (found in the input folder) must not be read as a document, if it must not."""
    try:
        st = path.lstat()
    except OSError as exc:
        return f"cannot inspect ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        if not path.exists():
            return "a dangling symbolic link"
        if not inside(path, root):
            return "a symbolic link to a file outside the input folder: not followed"
        st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (FIFO, socket or device): not read"
    return None


def iter_text_inputs(
    root: Path,
    language: str | None,
    encoding: str = "utf-8",
    max_bytes: int = DEFAULT_MAX_BYTES,
    ingest: IngestOptions | None = None,
) -> Iterator[InputItem]:
    """A single file, or every text file (``*.txt``/``*.text``) and document (DOCX, PDF, image...: see
    ``clinideid.ingest``) below a folder (sorted, relative paths kept).

    Unreadable folders, dangling links, links leaving the folder, FIFOs, devices and files of other types
    are errors; hidden and system files, BRAT annotations beside their text and links to folders are
    listed as ignored.
    """
    if not root.is_dir():
        problem = _not_readable(root, root.parent)
        if problem and "outside" not in problem:
            yield InputItem(root.stem, root.suffix, error=f"{display_id(root.name)}: {problem}")
            return
        if root.suffix.lower() in DOCUMENT_SUFFIXES:
            yield _deferred(root, root.name, language, max_bytes, ingest)
            return
        yield _text_item(root, root.name, language, encoding, max_bytes)
        return
    unreadable: list[OSError] = []
    for folder, dirnames, filenames in os.walk(root, onerror=unreadable.append):
        base = Path(folder)
        while unreadable:
            yield _unreadable_folder(unreadable.pop(), root)
        dirnames.sort()
        for d in list(dirnames):
            if (base / d).is_symlink():
                dirnames.remove(d)
                rel = (base / d).relative_to(root).as_posix()
                yield InputItem(rel, ignored="a symbolic link to a folder: not followed")
        siblings = set(filenames)
        for f in sorted(filenames):
            path = base / f
            rel = path.relative_to(root).as_posix()
            suffix = path.suffix
            document = suffix.lower() in DOCUMENT_SUFFIXES
            if suffix.lower() not in TEXT_SUFFIXES and not document:
                skipped = _skipped_file(rel, suffix, siblings)
                if skipped:
                    yield InputItem(rel, ignored=skipped)
                    continue
                yield InputItem(rel, ".txt", error=_unsupported(rel, suffix), source_name=f)
                continue
            problem = _not_readable(path, root)
            if problem:
                own_id = rel if document else rel[: -len(suffix)]
                yield InputItem(
                    own_id,
                    ".txt" if document else suffix,
                    error=f"{display_id(rel)}: {problem}",
                    source_name=f,
                )
                continue
            if document:
                yield _deferred(path, rel, language, max_bytes, ingest)
                continue
            yield _text_item(path, rel, language, encoding, max_bytes)
    while unreadable:
        yield _unreadable_folder(unreadable.pop(), root)


def _unreadable_folder(exc: OSError, root: Path) -> InputItem:
    where = Path(exc.filename) if exc.filename else root
    try:
        rel = where.relative_to(root).as_posix() or "."
    except ValueError:
        rel = "."
    return InputItem(rel, error=f"{display_id(rel)}/: cannot read this folder ({exc.strerror}); not read")


def _jsonl_lines(
    path: Path, encoding: str, max_bytes: int
) -> Iterator[tuple[int, Decoded | None, str | None]]:
    """``(line number, decoded line or None, error or None)`` for each non-empty line; with ``auto`` each
    line (each record) gets its own encoding."""
    with path.open("rb") as fh:
        head = fh.read(4)
        fh.seek(0)
        codec = sniff_bom(head) or check_encoding(encoding)
        if codec.startswith(("utf-16", "utf-32")):
            yield from _wide_jsonl_lines(path, codec, max_bytes)
            return
        if codec == "utf-8-sig":
            codec = "utf-8"  # the mark opens the first line only
        for lineno, raw in enumerate(_bounded_lines(fh, max_bytes), start=1):
            where = f"{display_id(path.name)}:{lineno}"
            if raw is None:
                yield lineno, None, f"{where}: record over --max-bytes"
                continue
            if not raw.strip():
                continue
            try:
                line = decode_document(raw, where, codec)
            except InputError as exc:
                yield lineno, None, str(exc)
                continue
            yield lineno, Decoded(line.text.removeprefix("\ufeff"), line.encoding), None


def _bounded_lines(fh, max_bytes: int) -> Iterator[bytes | None]:
    """Lines of a binary file; ``None`` for a line over ``max_bytes`` (skipped without holding it)."""
    while True:
        raw = fh.readline(max_bytes + 1)
        if not raw:
            return
        if len(raw) > max_bytes and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = fh.readline(1 << 20)
            yield None
            continue
        yield raw


def _wide_jsonl_lines(
    path: Path, codec: str, max_chars: int
) -> Iterator[tuple[int, Decoded | None, str | None]]:
    name = display_id(path.name)
    lineno = 0
    try:
        with path.open("r", encoding=codec, newline="") as fh:
            for lineno, line in enumerate(fh, start=1):
                where = f"{name}:{lineno}"
                if len(line) > max_chars:
                    yield lineno, None, f"{where}: record over --max-bytes"
                    continue
                if not line.strip():
                    continue
                try:
                    check_text(line, where)
                except InputError as exc:
                    yield lineno, None, str(exc)
                    continue
                yield lineno, Decoded(line.removeprefix("\ufeff"), codec), None
    except UnicodeDecodeError:
        yield lineno + 1, None, f"{name}:{lineno + 1}: not valid {codec}; the rest of the file was not read"


def iter_jsonl_inputs(
    path: Path, language: str | None, max_bytes: int = DEFAULT_MAX_BYTES, encoding: str = "utf-8"
) -> Iterator[InputItem]:
    """One document per JSON line (text in ``text``/``note_text``/``full_text``); bad lines become errors."""
    name = display_id(path.name)
    stem = display_id(path.stem)
    for lineno, line, error in _jsonl_lines(path, encoding, max_bytes):
        fallback_id = f"{stem}-{lineno}"
        where = f"{name}:{lineno}"
        if error is not None:
            yield InputItem(fallback_id, error=error, source_name=name)
            continue
        assert line is not None
        try:
            record = json.loads(line.text)
        except json.JSONDecodeError as exc:
            yield InputItem(
                fallback_id, error=f"{where}: invalid JSON (column {exc.colno})", source_name=name
            )
            continue
        except RecursionError:
            yield InputItem(fallback_id, error=f"{where}: JSON nested too deeply", source_name=name)
            continue
        if not isinstance(record, dict):
            yield InputItem(fallback_id, error=f"{where}: not a JSON object", source_name=name)
            continue
        yield _record_item(record, fallback_id, where, language, name, line.encoding)


def _record_item(
    record: dict, fallback_id: str, where: str, language: str | None, name: str, encoding: str | None = None
) -> InputItem:
    text_field = next((f for f in TEXT_FIELDS if isinstance(record.get(f), str)), None)
    raw_id = next((record[f] for f in ID_FIELDS if record.get(f) not in (None, "")), None)
    doc_id = str(raw_id) if raw_id is not None else fallback_id
    if text_field is None:
        return InputItem(
            doc_id,
            error=f"{where}: no text field (expected one of {', '.join(TEXT_FIELDS)})",
            source_name=name,
        )
    meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    if "patient_id" in record:
        meta = {**meta, "patient_id": record["patient_id"]}
    try:
        check_text(record[text_field], where)
        lang = normalise_language(record.get("language"), where) or language
        doc = Document(display_id(doc_id), record[text_field], lang, meta)
    except ClinideidError as exc:
        return InputItem(doc_id, error=str(exc) if str(exc).startswith(where) else f"{where}: {exc}")
    return InputItem(
        doc_id, document=doc, record=record, text_field=text_field, source_name=name, encoding=encoding
    )


def iter_codec_inputs(
    path: Path, fmt: str, language: str | None, encoding: str = "utf-8"
) -> Iterator[InputItem]:
    """Documents of a corpus in a registered format (its annotations are ignored for de-identification);
    a document the codec cannot read is that document's error."""
    from clinideid.formats import ReadReport, get_codec

    codec = get_codec(fmt)  # unknown format: a run-wide error
    report = ReadReport()
    produced = 0
    encoding = "utf-8" if check_encoding(encoding) == AUTO else encoding  # corpus files: one encoding
    docs = codec.read(path, report=report, on_error="skip", encoding=encoding)
    while True:
        try:
            doc = next(docs)
        except StopIteration:
            break
        except (FormatError, InputError) as exc:
            if produced == 0 and not report.errors:
                raise InputError(f"cannot read the input as {fmt}: {exc}") from None
            yield InputItem(f"{fmt}-rest", error=f"reading stopped: {exc}")
            break
        yield from _codec_errors(report)
        produced += 1
        try:
            check_text(doc.text, doc.id)
            check_decoded(doc.text, doc.id, encoding)
            lang = normalise_language(doc.language, doc.id) or language
        except InputError as exc:
            yield InputItem(display_id(doc.id), ".txt", error=str(exc))
            continue
        yield InputItem(
            display_id(doc.id), ".txt", Document(doc.id, doc.text, lang, doc.metadata), source_name=doc.id
        )
    yield from _codec_errors(report)


def _codec_errors(report) -> Iterator[InputItem]:
    while report.errors:
        error = report.errors.pop(0)
        where = Path(error.path).stem if getattr(error, "path", None) else "document"
        yield InputItem(display_id(where), ".txt", error=str(error))


def iter_inputs(
    path: Path,
    fmt: str | None = None,
    language: str | None = None,
    encoding: str = "utf-8",
    max_bytes: int = DEFAULT_MAX_BYTES,
    ingest: IngestOptions | None = None,
) -> Iterator[InputItem]:
    """Dispatch on ``fmt`` (``text``, ``jsonl`` or any codec name) or, when None, on the path; ``ingest``
    says how documents (DOCX, PDF, images...) are read."""
    if not path.exists():
        raise InputError(f"input path {path} does not exist")
    if max_bytes < 1:
        raise ConfigError("--max-bytes must be a positive number of bytes")
    check_encoding(encoding)
    if fmt is None:
        fmt = "jsonl" if is_jsonl(path) else "text"
    if fmt == "text":
        yield from iter_text_inputs(path, language, encoding, max_bytes, ingest)
    elif fmt == "jsonl" and path.is_file():
        yield from iter_jsonl_inputs(path, language, max_bytes, encoding)
    else:
        yield from iter_codec_inputs(path, fmt, language, encoding)


def is_jsonl(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in JSONL_SUFFIXES


def count_inputs(path: Path, fmt: str | None = None) -> int | None:
    """How many items ``iter_inputs`` will yield, when that is cheap to know (None otherwise)."""
    if path.is_file() and fmt in (None, "text") and not is_jsonl(path):
        return 1
    if path.is_dir() and fmt in (None, "text"):
        total = 0
        for _, dirnames, filenames in os.walk(path):
            total += len(filenames) + sum(1 for d in dirnames if os.path.islink(os.path.join(_, d)))
        return total
    return None
