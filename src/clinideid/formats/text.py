"""Plain text: a folder of ``.txt`` files (or one file), one document each, without spans.

Texts are read and written exactly (no newline translation; a BOM stays a character). Ids are file
names without ``.txt``; with ``recursive=True`` sub-folders are read too (ids become ``sub/NAME``).
Writing stores only the texts: spans are dropped (with one warning per document that had some).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from clinideid.document import Document
from clinideid.errors import FormatError
from clinideid.formats._common import (
    ReadContext,
    ReadOptions,
    check_unique_ids,
    doc_id_from,
    doc_relpath,
    encode_text,
    list_files,
    read_text,
    reject_unknown,
    require_exists,
    warn_write,
    write_bytes,
)
from clinideid.formats.base import Codec, ReadReport, register


@register
class TextCodec(Codec):
    name = "text"
    description = "plain text: folder of NAME.txt (or one file), no annotations"
    folder = True

    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        path = Path(path)
        opts = ReadOptions.take(options)
        recursive = bool(options.pop("recursive", False))
        reject_unknown(self.name, options)
        require_exists(path)
        ctx = ReadContext(self.name, opts, report)
        if path.is_file():
            files = [(path.stem if path.suffix == ".txt" else path.name, path)]
        else:
            files = [(doc_id_from(p, path, ".txt"), p) for p in list_files(path, ".txt", recursive)]
        try:
            for doc_id, file in files:
                try:
                    doc = ctx.document(doc_id, read_text(file, opts.encoding), [], path=str(file))
                except FormatError as exc:
                    ctx.fail(exc)
                    continue
                yield doc
        finally:
            ctx.close()

    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        path = Path(path)
        report = options.pop("report", None)
        reject_unknown(self.name, options)
        docs = list(docs)
        check_unique_ids(docs, self.name)
        if path.exists() and not path.is_dir():
            raise FormatError("text output must be a folder", path=str(path))
        for doc in docs:
            if doc.spans:
                warn_write(
                    report, f"document {doc.id!r}: {len(doc.spans)} span(s) not stored by the text format"
                )
            write_bytes(path / doc_relpath(doc.id, ".txt"), encode_text(doc.text, doc_id=doc.id))
