"""CoNLL-style token-per-line files with BIO or BIOES labels.

::

    # doc_id = note1
    # text = "Seen by Dr. Smith\\non 02/03."
    Seen	0	4	O
    by	5	7	O
    Dr	8	10	O
    .	10	11	O
    Smith	12	17	B-DOCTOR
    <blank line between sentences>

A line is ``TOKEN LABEL`` (tab- or space-separated), or ``TOKEN START END LABEL`` with character
offsets. More columns are allowed (``TOKEN POS CHUNK LABEL``): the label is the last column when every
token line's last column holds tags (``O``, ``B-TYPE``, ``I-TYPE``, ``E-``/``S-``/``L-``/``U-TYPE``);
otherwise the one other column that holds tags is taken, with a warning. ``label_column=N`` (0-based:
the token is column 0; ``-1`` is the last) names the column explicitly. A file whose chosen column holds
values that are not tags, or where several columns could be the labels, is a ``FormatError`` naming the
file and line, never a silent misreading. Documents are separated by ``-DOCSTART-`` lines or
``# doc_id = X`` comments (``# language = xx`` sets the language). Schemes: ``BIO`` and ``BIOES``
(``BILOU`` letters accepted; plain ``IO`` labels read too), chosen with ``scheme=`` or detected per file.

Text and offsets on read, first that applies:

1. ``# text = "..."``: the document's exact text as a JSON string (the writer's ``offsets=True``
   variant, which is lossless: whitespace and line breaks included);
2. a companion ``<doc_id>.txt`` in ``text_dir`` (default: the folder of the ``.conll`` file): tokens
   are aligned to it in order (skipped non-space characters are reported);
3. otherwise a text is rebuilt: tokens joined by single spaces, sentences by ``\\n``.

Token offsets come from the offset columns when present, else from the alignment. Writing tokenizes with
``clinideid.text.tokenize``, groups tokens into sentences (``split_sentences``, never cutting a span), and
labels every token a span touches: a token only partly covered gets the label too, and that is
reported. Overlapping spans cannot be tagged: the longest wins and the others are reported. ``path``
with a suffix is one file for all documents; a path without suffix (or a folder) holds one
``<doc_id>.conll`` per document (``texts=True`` also writes the companion ``.txt`` files).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinideid.document import Document, Span
from clinideid.errors import ConfigError, FormatError
from clinideid.formats._common import (
    LINE_BREAKS,
    ReadContext,
    ReadOptions,
    check_unique_ids,
    doc_relpath,
    encode_text,
    list_files,
    make_span,
    read_text,
    reject_unknown,
    require_exists,
    warn_write,
    write_bytes,
)
from clinideid.formats.base import Codec, ReadReport, register
from clinideid.formats.jsonl import dumps_line
from clinideid.resolve import resolve_spans
from clinideid.text import split_sentences, tokenize

SCHEMES = ("BIO", "BIOES")
_COMMENT = re.compile(r"^#\s*([A-Za-z_][\w-]*)\s*=\s?(.*)$")
_PREFIXED = re.compile(r"^([BIESLU])-(.+)$")
_SINGLE = {"S", "U"}
_LAST = {"E", "L"}


@dataclass
class _Token:
    text: str
    label: str
    line: int
    start: int | None = None
    end: int | None = None
    cols: tuple[str, ...] = ()  # every column of the line (the label column is chosen per file)


@dataclass
class _RawDoc:
    id: str | None
    line: int
    text: str | None = None
    language: str | None = None
    sentences: list[list[_Token]] = field(default_factory=list)
    _open: bool = False  # whether the last sentence still takes tokens (no blank line since)

    def add(self, token: _Token) -> None:
        if not self._open:
            self.sentences.append([])
            self._open = True
        self.sentences[-1].append(token)

    def close_sentence(self) -> None:
        self._open = False

    @property
    def empty(self) -> bool:
        return not self.sentences and self.text is None and self.id is None


def _split_label(label: str) -> tuple[str, str] | None:
    """``(prefix, type)`` of a label, ``None`` for ``O``; unprefixed labels are IO (``I``)."""
    if label == "O":
        return None
    m = _PREFIXED.match(label)
    return (m.group(1), m.group(2)) if m else ("I", label)


def detect_scheme(labels: Iterable[str]) -> str:
    """``BIOES`` when any label uses E/S (or BILOU's L/U), else ``BIO``."""
    for label in labels:
        parts = _split_label(label)
        if parts and parts[0] in "ESLU":
            return "BIOES"
    return "BIO"


def decode(labels: Sequence[str], scheme: str) -> tuple[list[tuple[int, int, str]], int]:
    """Entities ``(first token, last token + 1, type)`` of one sentence, and how many labels break ``scheme``.

    Decoding is lenient and the same for both schemes: an ``I``/``E`` that does not continue an entity
    of its type starts one, ``S`` is a one-token entity, and an entity ends at ``E``, ``O``, ``B``, ``S``
    or a change of type. Unprefixed (IO) labels join runs of the same type.
    """
    entities: list[tuple[int, int, str]] = []
    current: list[Any] | None = None  # [first token, type, prefix of the last token, unprefixed]
    bad = 0

    def close(end: int) -> None:
        nonlocal current, bad
        if current is not None:
            entities.append((current[0], end, current[1]))
            if scheme == "BIOES" and not current[3] and current[2] in ("B", "I"):
                bad += 1  # a BIOES entity ends with E (or is a single S)
            current = None

    for i, label in enumerate(labels):
        parts = _split_label(label)
        if parts is None:
            close(i)
            continue
        prefix, typ = parts
        plain = _PREFIXED.match(label) is None
        if scheme == "BIO" and prefix in "ESLU":
            bad += 1
        last = "E" if prefix in _LAST else "S" if prefix in _SINGLE else prefix
        if prefix in "IEL" and current is not None and current[1] == typ:
            current[2] = last
        else:
            if prefix in "IEL" and not plain:
                bad += 1  # a continuation without its beginning
            close(i)
            current = [i, typ, last, plain]
        if last in ("E", "S"):
            close(i + 1)
    close(len(labels))
    return entities, bad


def encode(n_tokens: int, entities: Sequence[tuple[int, int, str]], scheme: str) -> list[str]:
    """Token labels for non-overlapping token ranges ``(i, j, type)``."""
    labels = ["O"] * n_tokens
    for i, j, typ in entities:
        if scheme == "BIOES" and j - i == 1:
            labels[i] = f"S-{typ}"
            continue
        labels[i] = f"B-{typ}"
        for k in range(i + 1, j):
            labels[k] = f"I-{typ}"
        if scheme == "BIOES":
            labels[j - 1] = f"E-{typ}"
    return labels


def _valid_label(label: str) -> bool:
    return label == "O" or _PREFIXED.match(label) is not None


def parse_lines(raw: str, where: str) -> list[_RawDoc]:
    """The documents of one CoNLL file, tokens not yet placed on a text."""
    docs: list[_RawDoc] = []
    current = _RawDoc(id=None, line=1)

    def start_new(doc_id: str | None, line: int) -> None:
        nonlocal current
        if not current.empty:
            docs.append(current)
        current = _RawDoc(id=doc_id, line=line)

    for lineno, line in enumerate(raw.split("\n"), 1):
        line = line.removesuffix("\r")
        if not line.strip():
            current.close_sentence()
            continue
        if line.startswith("-DOCSTART-"):
            start_new(None, lineno)
            continue
        if line.startswith("#"):
            m = _COMMENT.match(line)
            cols = line.split("\t") if "\t" in line else line.split()
            is_token = (len(cols) == 2 and _valid_label(cols[1])) or (
                len(cols) == 4 and cols[1].isdigit() and cols[2].isdigit()
            )
            if m and not is_token:
                key, value = m.group(1), m.group(2)
                if key == "doc_id":
                    if current.id is None and not current.sentences and current.text is None:
                        current.id = value
                    else:
                        start_new(value, lineno)
                elif key == "text":
                    try:
                        text = json.loads(value)
                    except json.JSONDecodeError:
                        raise FormatError(
                            "'# text =' must hold a JSON string", path=where, line=lineno
                        ) from None
                    if not isinstance(text, str):
                        raise FormatError("'# text =' must hold a JSON string", path=where, line=lineno)
                    current.text = text
                elif key == "language":
                    current.language = value.strip() or None
                continue
            if not is_token:
                continue  # a free comment
        cols = line.split("\t") if "\t" in line else line.split()
        if len(cols) < 2 or not cols[0] or not cols[-1]:
            raise FormatError("a token line needs a token and a label", path=where, line=lineno)
        token = _Token(cols[0], cols[-1].strip(), lineno, cols=tuple(c.strip() for c in cols))
        if len(cols) == 4 and cols[1].strip().isdigit() and cols[2].strip().isdigit():
            token.start, token.end = int(cols[1]), int(cols[2])
        current.add(token)
    start_new(None, 0)
    return docs


_IO_LABEL = re.compile(r"[A-Za-z][\w.-]*")
_TAGS_HINT = "O, B-TYPE, I-TYPE (BIOES: also E-TYPE, S-TYPE)"


def _column_kind(values: Sequence[str]) -> str | None:
    """``"tags"`` when every value is a BIO/BIOES tag, ``"io"`` for plain IO labels (type names and at
    least one ``O``), else ``None``."""
    if all(_valid_label(v) for v in values):
        return "tags"
    if "O" in values and all(_IO_LABEL.fullmatch(v) for v in values):
        return "io"
    return None


def check_label_column(label_column: Any) -> int | None:
    """``label_column`` as an int (``None``: detect), or ``ConfigError``."""
    if label_column is None:
        return None
    if isinstance(label_column, str) and label_column.strip().lstrip("-").isdigit():
        label_column = int(label_column)
    if isinstance(label_column, bool) or not isinstance(label_column, int):
        raise ConfigError(
            f"label_column must be a column number (0-based: the token is column 0, -1 the last), got "
            f"{label_column!r}"
        )
    if label_column == 0:
        raise ConfigError(
            "label_column=0 is the token column; the labels are in column 1 or later (-1: last)"
        )
    return label_column


def assign_labels(
    tokens: Sequence[_Token], where: str, label_column: int | None = None, ctx: ReadContext | None = None
) -> int | None:
    """Set every token's label from the file's tag column; returns that column (``None``: the last).

    With ``label_column`` the column is checked; without it, the last column is used when it holds tags,
    else the only other column that does (reported through ``ctx``). ``FormatError`` (file and line,
    never a value) when the column holds values that are not tags or when several columns could be it.
    """
    if not tokens:
        return label_column
    if label_column is not None:
        for t in tokens:
            k = label_column if label_column > 0 else len(t.cols) + label_column
            if not 0 < k < len(t.cols):
                raise FormatError(
                    f"this token line has {len(t.cols)} column(s), so no label column {label_column} "
                    "(0-based, the token is column 0); check label_column",
                    path=where,
                    line=t.line,
                )
        values = [t.cols[label_column] for t in tokens]
        if _column_kind(values) is None:
            bad = next(t for t, v in zip(tokens, values, strict=True) if not _valid_label(v))
            raise FormatError(
                f"column {label_column} (label_column, 0-based) holds a value that is not a tag "
                f"({_TAGS_HINT}); choose the column of the BIO/BIOES tags",
                path=where,
                line=bad.line,
            )
        for t, v in zip(tokens, values, strict=True):
            t.label = v
        return label_column
    last = [t.cols[-1] for t in tokens]
    last_kind = _column_kind(last)
    if last_kind == "tags":
        for t, v in zip(tokens, last, strict=True):
            t.label = v
        return None
    widths = {len(t.cols) for t in tokens}
    same_width = len(widths) == 1  # else the columns before the last cannot be compared line to line
    middle: dict[int, str | None] = {}
    if same_width:
        middle = {k: _column_kind([t.cols[k] for t in tokens]) for k in range(1, widths.pop() - 1)}
    tagged = [k for k, kind in middle.items() if kind == "tags"]
    if len(tagged) == 1:
        k = tagged[0]
        if ctx is not None:
            ctx.warn(
                f"{where}: the last column does not hold BIO/BIOES tags; labels read from column {k} "
                "(0-based), the only one that does (pass label_column=N to choose another)"
            )
        for t in tokens:
            t.label = t.cols[k]
        return k
    if len(tagged) > 1:
        raise FormatError(
            f"columns {', '.join(map(str, tagged))} (0-based) all hold BIO/BIOES tags and the last column does "
            "not; pass label_column=N (e.g. --read-option label_column=N) to say which holds the labels",
            path=where,
            line=tokens[0].line,
        )
    if last_kind == "io" and same_width:
        others = [k for k, kind in middle.items() if kind == "io"]
        if others:
            raise FormatError(
                f"columns {', '.join(map(str, [*others, 'last']))} (0-based) could all hold plain IO labels; "
                "pass label_column=N (e.g. --read-option label_column=N) to say which holds the labels",
                path=where,
                line=tokens[0].line,
            )
        for t, v in zip(tokens, last, strict=True):
            t.label = v
        return None
    bad = next(t for t, v in zip(tokens, last, strict=True) if not _valid_label(v))
    raise FormatError(
        f"the last column holds a value that is not a tag ({_TAGS_HINT}) and no other column holds tags; "
        "is this a labelled CoNLL file? pass label_column=N (0-based) if the labels are in another column",
        path=where,
        line=bad.line,
    )


def _place(doc: _RawDoc, text: str | None, where: str, ctx: ReadContext) -> str:
    """Give every token offsets; returns the document text."""
    tokens = [t for s in doc.sentences for t in s]
    with_offsets = [t.start is not None for t in tokens]
    if tokens and all(with_offsets):
        if text is None:
            text = _rebuild_from_offsets(doc, where)
        for t in tokens:
            assert t.start is not None and t.end is not None
            if t.end > len(text) or text[t.start : t.end] != t.text:
                raise FormatError("token does not match the text at its offsets", path=where, line=t.line)
        return text
    if any(with_offsets):
        ctx.warn(f"{where}: some token lines have offsets and some do not; offsets ignored")
    if text is None:
        lines = [" ".join(t.text for t in s) for s in doc.sentences]
        pos = 0
        for s in doc.sentences:
            for t in s:
                t.start, t.end = pos, pos + len(t.text)
                pos = t.end + 1
        return "\n".join(lines)
    pos = 0
    for t in tokens:
        idx = text.find(t.text, pos)
        if idx < 0:
            raise FormatError(
                f"token not found in the document text after offset {pos}", path=where, line=t.line
            )
        skipped = sum(1 for c in text[pos:idx] if not c.isspace())
        if skipped:
            ctx.warn(
                f"{where}:{t.line}: {skipped} non-space character(s) of the text skipped before this token"
            )
        t.start, t.end = idx, idx + len(t.text)
        pos = t.end
    return text


def _rebuild_from_offsets(doc: _RawDoc, where: str) -> str:
    parts: list[str] = []
    pos = 0
    for k, s in enumerate(doc.sentences):
        for i, t in enumerate(s):
            assert t.start is not None and t.end is not None
            if t.start < pos:
                raise FormatError("token offsets overlap or go backwards", path=where, line=t.line)
            gap = t.start - pos
            if gap:
                parts.append("\n" + " " * (gap - 1) if (i == 0 and k > 0) else " " * gap)
            parts.append(t.text)
            pos = t.end
    return "".join(parts)


@register
class ConllCodec(Codec):
    name = "conll"
    description = "CoNLL token-per-line, BIO/BIOES labels (optionally with offset columns)"
    folder = False

    # ------------------------------------------------------------------ read
    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        path = Path(path)
        opts = ReadOptions.take(options)
        scheme = options.pop("scheme", None)
        text_dir = options.pop("text_dir", None)
        suffix = str(options.pop("suffix", ".conll"))
        label_column = check_label_column(options.pop("label_column", None))
        reject_unknown(self.name, options)
        if scheme is not None and str(scheme).upper() not in SCHEMES:
            raise ConfigError(f"unknown tagging scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
        require_exists(path)
        files = list_files(path, suffix, recursive=False) if path.is_dir() else [path]
        ctx = ReadContext(self.name, opts, report)
        try:
            for file in files:
                yield from self._read_file(
                    file, scheme, Path(text_dir) if text_dir else None, ctx, label_column
                )
        finally:
            ctx.close()

    def _read_file(
        self,
        file: Path,
        scheme: str | None,
        text_dir: Path | None,
        ctx: ReadContext,
        label_column: int | None = None,
    ) -> Iterator[Document]:
        where = str(file)
        raw_docs = parse_lines(read_text(file, ctx.options.encoding).removeprefix("\ufeff"), where)
        tokens = [t for d in raw_docs for s in d.sentences for t in s]
        try:
            assign_labels(tokens, where, label_column, ctx)
        except FormatError as exc:
            ctx.fail(exc)  # the whole file: its labels cannot be told apart
            return
        labels = [t.label for t in tokens]
        used_scheme = str(scheme).upper() if scheme else detect_scheme(labels)
        unnamed = 0
        for raw in raw_docs:
            if raw.id is None:
                unnamed += 1
                raw.id = file.stem if len(raw_docs) == 1 else f"{file.stem}-{unnamed}"
            try:
                doc = self._build(raw, used_scheme, file, text_dir, ctx)
            except FormatError as exc:
                ctx.fail(exc)
                continue
            yield doc

    def _build(
        self, raw: _RawDoc, scheme: str, file: Path, text_dir: Path | None, ctx: ReadContext
    ) -> Document:
        where = str(file)
        assert raw.id is not None
        text = raw.text
        if text is None:
            companion = (text_dir or file.parent) / f"{raw.id}.txt"
            if companion.is_file() and companion != file:
                text = read_text(companion, ctx.options.encoding)
        text = _place(raw, text, where, ctx)
        spans: list[Span] = []
        lines: list[int] = []
        violations = 0
        for sentence in raw.sentences:
            entities, bad = decode([t.label for t in sentence], scheme)
            violations += bad
            for i, j, typ in entities:
                a, b = sentence[i].start, sentence[j - 1].end
                spans.append(make_span(a, b, typ, path=where, line=sentence[i].line))
                lines.append(sentence[i].line)
        if violations:
            ctx.warn(
                f"{where}: document {raw.id!r}: {violations} label(s) break the {scheme} scheme (read leniently)"
            )
        return ctx.document(raw.id, text, spans, path=where, lines=lines, language=raw.language)

    # ----------------------------------------------------------------- write
    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        path = Path(path)
        report = options.pop("report", None)
        scheme = str(options.pop("scheme", "BIO")).upper()
        offsets = bool(options.pop("offsets", False))
        sep = options.pop("sep", "\t")
        docstart = bool(options.pop("docstart", False))
        texts = bool(options.pop("texts", False))
        reject_unknown(self.name, options)
        if scheme not in SCHEMES:
            raise ConfigError(f"unknown tagging scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
        if sep not in ("\t", " "):
            raise ConfigError("sep must be a tab or a space")
        docs = list(docs)
        single_file = bool(path.suffix) and not path.is_dir()
        if not single_file:
            check_unique_ids(docs, self.name)
        if texts and single_file:
            raise ConfigError("texts=True needs a folder output (one .conll and one .txt per document)")
        chunks: list[bytes] = []
        for doc in docs:
            content = self.format_document(
                doc, scheme=scheme, offsets=offsets, sep=sep, docstart=docstart, report=report
            )
            data = encode_text(content, doc_id=doc.id)
            if single_file:
                chunks.append(data)
            else:
                write_bytes(path / doc_relpath(doc.id, ".conll"), data)
                if texts:
                    write_bytes(path / doc_relpath(doc.id, ".txt"), encode_text(doc.text, doc_id=doc.id))
        if single_file:
            write_bytes(path, b"".join(chunks))

    @staticmethod
    def format_document(
        doc: Document,
        *,
        scheme: str = "BIO",
        offsets: bool = False,
        sep: str = "\t",
        docstart: bool = False,
        report: ReadReport | None = None,
    ) -> str:
        if any(c in LINE_BREAKS for c in doc.id):
            raise FormatError(f"document id {doc.id!r} holds a line break, which CoNLL cannot store")
        out: list[str] = []
        if docstart:
            out += [f"-DOCSTART-{sep}O", ""]
        out.append(f"# doc_id = {doc.id}")
        if doc.language:
            out.append(f"# language = {doc.language}")
        if offsets:
            out.append(f"# text = {dumps_line(doc.text)}")
        text = doc.text
        tokens = tokenize(text)
        pieces = _taggable_pieces(doc, report)
        ends = [t.end for t in tokens]
        entities: list[tuple[int, int, str]] = []
        owner: dict[int, int] = {}
        for a, b, label in pieces:
            i = bisect.bisect_right(ends, a)
            j = i
            while j < len(tokens) and tokens[j].start < b:
                j += 1
            if i == j:
                warn_write(
                    report, f"document {doc.id!r}: span {a}-{b} ({label}) covers no token; not written"
                )
                continue
            if tokens[i].start < a or tokens[j - 1].end > b:
                warn_write(
                    report,
                    f"document {doc.id!r}: span {a}-{b} ({label}) covers part of a token; the whole token "
                    "is labelled",
                )
            taken = [k for k in range(i, j) if k in owner]
            if taken:
                warn_write(
                    report,
                    f"document {doc.id!r}: span {a}-{b} ({label}) shares a token with another span; "
                    "the first span keeps it",
                )
                free = [k for k in range(i, j) if k not in owner]
                if not free or free != list(range(free[0], free[-1] + 1)):
                    continue
                i, j = free[0], free[-1] + 1
            for k in range(i, j):
                owner[k] = len(entities)
            entities.append((i, j, label))
        labels = encode(len(tokens), sorted(entities), scheme)
        bounds = _sentence_starts(text, [(tokens[i].start, tokens[j - 1].end) for i, j, _ in entities])
        previous = None
        for k, tok in enumerate(tokens):
            sentence = bisect.bisect_right(bounds, tok.start)
            if previous is not None and sentence != previous:
                out.append("")
            previous = sentence
            cols = [tok.text, str(tok.start), str(tok.end), labels[k]] if offsets else [tok.text, labels[k]]
            out.append(sep.join(cols))
        if tokens:
            out.append("")
        return "".join(f"{line}\n" for line in out)


def _taggable_pieces(doc: Document, report: ReadReport | None) -> list[tuple[int, int, str]]:
    """Non-overlapping ``(start, end, label)`` pieces: overlaps resolved (longest wins), fragments split."""
    resolution = resolve_spans(doc.spans, policy="longest")
    for span, reason in resolution.dropped:
        warn_write(
            report,
            f"document {doc.id!r}: span {span.start}-{span.end} ({span.label}) not written ({reason}); "
            "CoNLL labels cannot overlap",
        )
    pieces: list[tuple[int, int, str]] = []
    for s in sorted(resolution.kept, key=lambda s: s.start):
        if s.is_discontinuous:
            warn_write(
                report,
                f"document {doc.id!r}: discontinuous span {s.start}-{s.end} ({s.label}) written as "
                f"{len(s.fragments)} entities",
            )
        if any(c.isspace() for c in s.label):
            raise FormatError(f"document {doc.id!r}: label {s.label!r} contains whitespace")
        pieces.extend((a, b, s.label) for a, b in s.pieces)
    return pieces


def _sentence_starts(text: str, entities: Sequence[tuple[int, int]]) -> list[int]:
    """Start offsets of the sentences after the first, with no sentence boundary inside an entity."""
    starts = [s for s, _ in split_sentences(text)[1:]]
    ordered = sorted(entities)
    firsts = [a for a, _ in ordered]
    keep = []
    for s in starts:
        k = bisect.bisect_left(firsts, s) - 1  # the last entity starting before s
        if k >= 0 and ordered[k][1] > s:
            continue
        keep.append(s)
    return keep
