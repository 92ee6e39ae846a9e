"""Helpers shared by the codecs: read options, exact file I/O, and turning parsed spans into documents.

Every reader parses its format into ``Span`` objects (carrying the recorded span text when the format
stores one), then calls ``ReadContext.document`` which checks the spans against the text, repairs them
when asked, reports the rest, and builds the validated ``Document``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from clinideid.document import Document, Span
from clinideid.errors import ConfigError, FormatError, SpanError
from clinideid.formats.base import ReadReport
from clinideid.formats.repair import check_spans, repair_spans, same_text

logger = logging.getLogger("clinideid.formats")

#: characters ``str.splitlines`` breaks on: none may appear inside one line of a line-based format
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LINE_BREAK_RUN = re.compile(f"[{re.escape(LINE_BREAKS)}]+")
_ON_ERROR = ("raise", "skip")


def flatten_line(text: str) -> str:
    """``text`` with each line-break character replaced by a space (same length)."""
    return text.translate({ord(c): " " for c in LINE_BREAKS})


@dataclass(frozen=True)
class ReadOptions:
    """Options every reader takes.

    ``repair``: fix misaligned offsets and edge whitespace (else a span that does not fit is an error);
    ``align``: also snap spans to token boundaries (``"expand"``/``"shrink"``); ``strip_punctuation``:
    also trim edge punctuation; ``max_shift``: how far a misaligned span may move; ``on_error``:
    ``"raise"`` stops at the first bad document, ``"skip"`` records it in ``ReadReport.errors`` and
    goes on; ``encoding`` of the files; ``language`` to set on every document.
    """

    repair: bool = False
    align: str | None = None
    strip_punctuation: bool = False
    max_shift: int = 500
    on_error: str = "raise"
    encoding: str = "utf-8"
    language: str | None = None

    @classmethod
    def take(cls, options: dict[str, Any]) -> ReadOptions:
        """Pop the common options out of ``options`` (leaving format-specific ones) and validate them."""
        kwargs = {k: options.pop(k) for k in list(options) if k in cls.__dataclass_fields__}
        opts = cls(**kwargs)
        if opts.align not in (None, "expand", "shrink"):
            raise ConfigError(f"unknown token alignment {opts.align!r}; choose 'expand' or 'shrink'")
        if opts.on_error not in _ON_ERROR:
            raise ConfigError(f"unknown on_error {opts.on_error!r}; choose one of {', '.join(_ON_ERROR)}")
        if not isinstance(opts.max_shift, int) or opts.max_shift < 0:
            raise ConfigError("max_shift must be a non-negative integer")
        return opts


def reject_unknown(fmt: str, options: Mapping[str, Any]) -> None:
    if options:
        raise ConfigError(f"format {fmt!r} does not take the option(s) {', '.join(sorted(options))}")


class ReadContext:
    """Where a reader sends warnings and per-document errors, and how it builds documents."""

    def __init__(self, fmt: str, options: ReadOptions, report: ReadReport | None) -> None:
        self.fmt = fmt
        self.options = options
        self.report = report if report is not None else ReadReport()
        self._own_report = report is None

    def warn(self, message: str) -> None:
        self.report.warn(message)
        logger.debug("%s", message)

    def fail(self, error: FormatError) -> None:
        """A document could not be read: raise, or record it and go on (``on_error="skip"``)."""
        if self.options.on_error == "raise":
            raise error
        self.report.errors.append(error)
        logger.warning("skipped a document: %s", error)

    def close(self) -> None:
        if self._own_report and self.report.warnings:
            logger.warning(
                "%d warning(s) while reading %s data; pass a ReadReport to see them",
                len(self.report.warnings),
                self.fmt,
            )

    def document(
        self,
        doc_id: str,
        text: str,
        spans: Sequence[Span],
        *,
        path: str,
        lines: Sequence[int | None] | None = None,
        metadata: Mapping[str, Any] | None = None,
        language: str | None = None,
    ) -> Document:
        """A validated document: spans checked, repaired if asked, problems reported (never the text).

        ``lines`` gives, per span, the line of ``path`` it came from (for messages).
        """
        spans = list(spans)
        line_of = list(lines) if lines is not None else [None] * len(spans)

        def where(index: int) -> tuple[str, int | None]:
            return path, line_of[index] if index < len(line_of) else None

        def located(index: int, message: str) -> str:
            p, line = where(index)
            return f"{p}:{line}: {message}" if line is not None else f"{p}: {message}"

        opts = self.options
        problems = check_spans(text, spans, tokens=True)
        if opts.repair and problems:
            result = repair_spans(
                text,
                spans,
                max_shift=opts.max_shift,
                strip_punctuation=opts.strip_punctuation,
                align=opts.align,  # type: ignore[arg-type]
            )
            for p in result.fixed:
                self.warn(located(p.index, f"repaired {p.describe()}"))
            self.report.repaired += len(result.fixed)
            spans = result.spans
            problems = result.unfixed
        severe = [p for p in problems if p.severe]
        if severe:
            p = severe[0]
            repairable = spans[p.index].text is not None and not opts.repair
            hint = "; pass repair=True (--repair) to move misaligned spans" if repairable else ""
            file, line = where(p.index)
            more = f" (and {len(severe) - 1} more)" if len(severe) > 1 else ""
            raise FormatError(f"document {doc_id!r}: {p.describe()}{more}{hint}", path=file, line=line)
        for p in problems:
            self.warn(located(p.index, f"document {doc_id!r}: {p.describe()}"))
        fitted = []
        for s in spans:
            if s.text is not None:
                actual = s.covered_text(text)
                if s.text != actual and same_text(s.text, actual):
                    s = s.with_(text=actual)
            fitted.append(s)
        try:
            return Document(
                id=doc_id,
                text=text,
                language=language if language is not None else opts.language,
                metadata=metadata or {},
                spans=tuple(fitted),
            )
        except SpanError as exc:
            raise FormatError(str(exc), path=path) from None


def make_span(
    start: Any,
    end: Any,
    label: str,
    *,
    path: str,
    line: int | None = None,
    **fields: Any,
) -> Span:
    """A ``Span`` from parsed values, with a located ``FormatError`` instead of a ``SpanError``."""
    try:
        return Span(int(start), int(end), label, **fields)
    except (TypeError, ValueError, SpanError) as exc:
        message = str(exc) if isinstance(exc, SpanError) else "span offsets must be integers"
        raise FormatError(message, path=path, line=line) from None


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """The exact text of a file: no newline translation, a clear error on undecodable bytes."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read the file ({exc.strerror or exc})", path=str(path)) from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise FormatError(
            f"is not valid {encoding} text (undecodable byte at byte offset {exc.start}); re-encode it as "
            "UTF-8 (e.g. iconv -f latin1 -t utf-8) or pass encoding=...",
            path=str(path),
        ) from None
    except LookupError:
        raise ConfigError(f"unknown text encoding {encoding!r}") from None


def encode_text(text: str, *, doc_id: str, what: str = "text") -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FormatError(
            f"document {doc_id!r}: {what} cannot be encoded as UTF-8 (unpaired surrogate at offset {exc.start})"
        ) from None


def write_bytes(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise FormatError(f"cannot write the file ({exc.strerror or exc})", path=str(path)) from None


def doc_relpath(doc_id: str, suffix: str) -> PurePosixPath:
    """The relative file path for a document id (ids may name sub-folders: ``train/doc1``)."""
    rel = PurePosixPath(doc_id)
    if (
        "\x00" in doc_id
        or "\\" in doc_id
        or rel.is_absolute()
        or any(part in ("", ".", "..") for part in doc_id.split("/"))
        or any(c in doc_id for c in LINE_BREAKS)
    ):
        raise FormatError(
            f"document id {doc_id!r} cannot be used as a file name (absolute, '..', empty parts, "
            "backslashes or line breaks); relabel the document ids first"
        )
    return PurePosixPath(doc_id + suffix)


def doc_id_from(path: Path, root: Path, suffix: str) -> str:
    """The document id of ``path`` inside ``root``: its relative path without ``suffix``."""
    rel = path.relative_to(root).as_posix()
    return rel[: -len(suffix)] if suffix and rel.endswith(suffix) else rel


def list_files(root: Path, suffix: str, recursive: bool) -> list[Path]:
    pattern = f"*{suffix}"
    found = root.rglob(pattern) if recursive else root.glob(pattern)
    return sorted(p for p in found if p.is_file())


def require_exists(path: Path) -> None:
    if not path.exists():
        raise FormatError("path does not exist", path=str(path))


def check_unique_ids(docs: Sequence[Document], fmt: str) -> None:
    """Formats with one file (or record number) per document need unique ids: never overwrite one."""
    seen: set[str] = set()
    for d in docs:
        if d.id in seen:
            raise FormatError(
                f"cannot write {fmt}: two documents share the id {d.id!r} and {fmt} stores one file per "
                "document; make the ids unique first (or drop exact duplicates), or write jsonl"
            )
        seen.add(d.id)


def warn_write(report: ReadReport | None, message: str) -> None:
    """A loss or change while writing: into ``report`` if given, else the log (never text)."""
    if report is not None:
        report.warn(message)
    else:
        logger.warning("%s", message)


#: characters XML 1.0 cannot hold at all, even escaped
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def check_xml_chars(text: str, *, doc_id: str, what: str = "text") -> None:
    m = _XML_INVALID.search(text)
    if m:
        raise FormatError(
            f"document {doc_id!r}: {what} holds a character XML cannot store (U+{ord(m.group()):04X} at "
            f"offset {m.start()}); use the jsonl or brat format for this document"
        )


def xml_attr(value: str) -> str:
    """``value`` escaped for a double-quoted XML attribute, keeping tabs and line breaks exactly."""
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\t", "&#9;")
        .replace("\n", "&#10;")
        .replace("\r", "&#13;")
    )


def xml_text(value: str) -> str:
    """``value`` escaped as XML character data; carriage returns as ``&#13;`` so parsers keep them."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
