"""Tesseract OCR of one page image: words with boxes and confidences, assembled into text with offsets.

Tesseract runs as its command-line program (``tesseract``, Debian package ``tesseract-ocr`` plus one
``tesseract-ocr-LANG`` package per language) with TSV output; one page image is sent on stdin, nothing is
written to disk.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
from dataclasses import dataclass

from PIL import Image

from clinideid.errors import InputError, ModelError
from clinideid.ingest.model import WordBox

#: clinideid language code -> Tesseract language pack
TESSERACT_LANGUAGES = {"en": "eng", "de": "deu", "it": "ita", "ru": "rus", "es": "spa", "fr": "fra"}
OCR_SECONDS_PER_PAGE = 300


def ocr_languages(language: str | None, override: str | None = None) -> str:
    """The ``-l`` argument: the override, the document language's pack, or every supported pack."""
    if override:
        return override
    if language in TESSERACT_LANGUAGES:
        return TESSERACT_LANGUAGES[language]
    return "+".join(TESSERACT_LANGUAGES.values())


def tesseract_path() -> str:
    path = shutil.which("tesseract")
    if path is None:
        raise ModelError(
            "OCR needs Tesseract: install the Debian packages tesseract-ocr and tesseract-ocr-eng (plus "
            "-deu, -ita, -rus, -spa, -fra for other languages)"
        )
    return path


@dataclass
class OcrWord:
    text: str
    box: tuple[float, float, float, float]  # fractions of the page
    conf: float
    line: tuple[int, int, int]  # (block, paragraph, line)


@dataclass
class OcrPage:
    words: list[OcrWord]

    @property
    def mean_confidence(self) -> float | None:
        confs = [w.conf for w in self.words if w.conf >= 0]
        return round(sum(confs) / len(confs), 1) if confs else None


def ocr_image(image: Image.Image, languages: str, dpi: int) -> OcrPage:
    """The words Tesseract reads on ``image`` (any mode; sent as PNG)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG", dpi=(dpi, dpi))
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    cmd = [tesseract_path(), "-", "-", "-l", languages, "--dpi", str(dpi), "--psm", "3", "tsv"]
    try:
        done = subprocess.run(
            cmd, input=buf.getvalue(), capture_output=True, timeout=OCR_SECONDS_PER_PAGE, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        raise InputError(f"OCR of a page took over {OCR_SECONDS_PER_PAGE} s; not read") from None
    if done.returncode != 0:
        missing = b"Failed loading language" in done.stderr or b"Error opening data file" in done.stderr
        if missing:
            raise ModelError(
                f"Tesseract lacks a language pack among {languages!r}: install tesseract-ocr-<lang> "
                "(e.g. tesseract-ocr-deu)"
            )
        raise InputError(f"Tesseract failed on a page (exit code {done.returncode})")
    return OcrPage(parse_tsv(done.stdout.decode("utf-8", "replace"), image.width, image.height))


def parse_tsv(tsv: str, width: int, height: int) -> list[OcrWord]:
    """Level-5 (word) rows of Tesseract's TSV, boxes as fractions of the image."""
    words = []
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        if row.get("level") != "5" or not (row.get("text") or "").strip():
            continue
        left, top = int(row["left"]), int(row["top"])
        right, bottom = left + int(row["width"]), top + int(row["height"])
        box = (left / width, top / height, right / width, bottom / height)
        line = (int(row["block_num"]), int(row["par_num"]), int(row["line_num"]))
        words.append(OcrWord(row["text"].strip(), box, float(row["conf"]), line))
    return words


def words_to_text(words: list[OcrWord], page: int, offset: int) -> tuple[str, list[WordBox]]:
    """Text of one page (words joined by spaces, lines by newlines, paragraphs by blank lines) and each
    word's box at its offset (``offset`` is where the page starts in the document's text)."""
    parts: list[str] = []
    boxes: list[WordBox] = []
    pos = offset
    previous: tuple[int, int, int] | None = None
    for w in words:
        if previous is not None:
            sep = " " if w.line == previous else ("\n" if w.line[:2] == previous[:2] else "\n\n")
            parts.append(sep)
            pos += len(sep)
        parts.append(w.text)
        boxes.append(WordBox(pos, pos + len(w.text), page, w.box))
        pos += len(w.text)
        previous = w.line
    return "".join(parts), boxes
