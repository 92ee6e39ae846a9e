"""Documents round trip on the challenge notes: render, extract (text layer or OCR), de-identify, score.

Usage (from the repository root)::

    .venv/bin/python benchmarks/ocr_roundtrip.py                     # 15 notes per language, markdown tables
    .venv/bin/python benchmarks/ocr_roundtrip.py --per-language 5 --languages en de

A seeded sample of the challenge notes (``../shared/corpora/challenge/<lang>.jsonl``, fictitious notes with
gold PHI spans) is rendered, at benchmark time only and into a temporary folder, to

- a PDF with a text layer (reportlab, DejaVu Sans 10 pt, 50 lines per page);
- 300-dpi PNG pages (Pillow, DejaVu Sans, the same lines), OCR'd by Tesseract with the note's language pack;
- the same pages degraded: Gaussian noise (sigma 30), 0.2 % salt and pepper, rotated by 1-2 degrees (random
  sign);
- a DOCX (one paragraph per line), for throughput.

Each extracted text is de-identified with ``Deidentifier.for_language(lang, key)`` and scored by token
recall of the gold PHI: the note's word tokens are aligned to the extracted text's tokens (difflib on
lower-cased tokens; equal runs, and replaced runs of the same length position by position, i.e. misread
words), and a gold PHI token counts as caught when its aligned token lies in a replaced span. A gold token
with no aligned token (OCR lost or merged it) counts as missed. "plain text" is the same pipeline on the
note itself, the ceiling for the others; "wrapped text" is the note as laid out on the pages (lines
wrapped at 85 characters, joined by newlines), which is what a perfect extraction of the rendered pages
gives: the gap between the two is the layout's, not the extraction's. Nothing of the notes is printed or
stored.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import random
import re
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from clinideid.document import Document  # noqa: E402
from clinideid.errors import ClinideidError  # noqa: E402
from clinideid.ingest import IngestOptions, extract  # noqa: E402
from clinideid.pipeline import Deidentifier  # noqa: E402

DEFAULT_CORPUS_DIR = ROOT.parent / "shared" / "corpora" / "challenge"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
WRAP = 85
LINES_PER_PAGE = 50
DPI = 300
TOKEN = re.compile(r"\w+")


def load(corpus: Path, lang: str, n: int, seed: int) -> list[dict]:
    notes = [json.loads(line) for line in (corpus / f"{lang}.jsonl").read_text("utf-8").splitlines() if line]
    return random.Random(seed).sample(notes, min(n, len(notes)))


def page_lines(text: str) -> list[list[str]]:
    lines = [w for line in text.split("\n") for w in (textwrap.wrap(line, WRAP) or [""])]
    return [lines[i : i + LINES_PER_PAGE] for i in range(0, len(lines), LINES_PER_PAGE)] or [[""]]


def render_pdf(pages: list[list[str]], path: Path) -> None:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    if "DejaVu" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("DejaVu", str(FONT)))
    c = canvas.Canvas(str(path), pagesize=(612, 792))
    for lines in pages:
        c.setFont("DejaVu", 10)
        for i, line in enumerate(lines):
            c.drawString(54, 740 - 13.5 * i, line)
        c.showPage()
    c.save()


def render_images(pages: list[list[str]]):
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT), 38)
    for lines in pages:
        image = Image.new("L", (2550, 3300), 255)
        draw = ImageDraw.Draw(image)
        for i, line in enumerate(lines):
            draw.text((150, 200 + 58 * i), line, font=font, fill=0)
        yield image


def degrade(image, rng: random.Random):
    import numpy as np
    from PIL import Image

    gen = np.random.default_rng(rng.randrange(1 << 30))
    px = np.asarray(image, dtype=np.float32) + gen.normal(0, 30, (image.height, image.width))
    salt = gen.random((image.height, image.width))
    px[salt < 0.001] = 0
    px[salt > 0.999] = 255
    noisy = Image.fromarray(np.clip(px, 0, 255).astype(np.uint8))
    angle = rng.uniform(1, 2) * rng.choice((-1, 1))
    return noisy.rotate(angle, resample=Image.Resampling.BILINEAR, fillcolor=255)


def render_docx(text: str, path: Path) -> None:
    import docx

    d = docx.Document()
    for line in text.split("\n"):
        d.add_paragraph(line)
    d.save(path)


def tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group().lower()) for m in TOKEN.finditer(text)]


def recall(note: dict, text: str, spans: list[tuple[int, int]]) -> tuple[int, int, int, int]:
    """(gold PHI tokens caught, gold PHI tokens, note tokens found verbatim, note tokens)."""
    gold_tokens = tokens(note["text"])
    gold = [any(s["start"] < e and b < s["end"] for s in note["spans"]) for b, e, _ in gold_tokens]
    found = tokens(text)
    matcher = difflib.SequenceMatcher(
        None, [t for *_, t in gold_tokens], [t for *_, t in found], autojunk=False
    )
    aligned: dict[int, int] = {}
    exact = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            aligned.update(zip(range(i1, i2), range(j1, j2), strict=True))
            exact += (i2 - i1) if op == "equal" else 0
    caught = 0
    for i, is_phi in enumerate(gold):
        if not is_phi or i not in aligned:
            continue
        b, e, _ = found[aligned[i]]
        caught += any(s < e and b < t for s, t in spans)
    return caught, sum(gold), exact, len(gold_tokens)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus-dir", type=Path, default=DEFAULT_CORPUS_DIR)
    ap.add_argument("--languages", nargs="+", default=["en", "de", "it", "ru"])
    ap.add_argument("--per-language", type=int, default=15)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    key = hashlib.sha256(b"ocr roundtrip benchmark key").digest()
    options = IngestOptions(dpi=DPI)
    rows = []
    timing = {
        "pdf_text_s": 0.0,
        "pdf_pages": 0,
        "pdf_out_s": 0.0,
        "docx_s": 0.0,
        "docx_out_s": 0.0,
        "ocr_clean_s": 0.0,
        "ocr_degraded_s": 0.0,
        "ocr_pages": 0,
    }
    with tempfile.TemporaryDirectory(prefix="clinideid-ocr-bench-") as tmp:
        tmpdir = Path(tmp)
        for lang in args.languages:
            deid = Deidentifier.for_language(lang, key)
            rng = random.Random(f"{args.seed}-{lang}")
            scores = {v: [0, 0, 0, 0] for v in ("text", "wrapped", "pdf", "ocr", "degraded")}
            confidences: dict[str, list[float]] = {"ocr": [], "degraded": []}
            failures = {"ocr": 0, "degraded": 0}
            for n, note in enumerate(load(args.corpus_dir, lang, args.per_language, args.seed)):
                pages = page_lines(note["text"])
                variants: dict[str, str] = {
                    "text": note["text"],
                    "wrapped": "\n".join(line for page in pages for line in page),
                }
                pdf = tmpdir / f"{lang}{n}.pdf"
                render_pdf(pages, pdf)
                t0 = time.perf_counter()
                doc = extract(pdf, lang, options)
                timing["pdf_text_s"] += time.perf_counter() - t0
                timing["pdf_pages"] += len(doc.pages)
                variants["pdf"] = doc.text
                result = deid.deidentify(Document("n", doc.text, lang))
                t0 = time.perf_counter()
                from clinideid.ingest.outputs import render_output

                render_output(doc, result)
                timing["pdf_out_s"] += time.perf_counter() - t0
                docx_path = tmpdir / f"{lang}{n}.docx"
                render_docx(note["text"], docx_path)
                t0 = time.perf_counter()
                ddoc = extract(docx_path, lang, options)
                timing["docx_s"] += time.perf_counter() - t0
                t0 = time.perf_counter()
                render_output(ddoc, deid.deidentify(Document("n", ddoc.text, lang)))
                timing["docx_out_s"] += time.perf_counter() - t0
                for variant in ("ocr", "degraded"):
                    images = list(render_images(pages))
                    if variant == "degraded":
                        images = [degrade(im, rng) for im in images]
                    path = tmpdir / f"{lang}{n}-{variant}.tif"
                    images[0].save(
                        path, save_all=True, append_images=images[1:], dpi=(DPI, DPI), compression="tiff_lzw"
                    )
                    t0 = time.perf_counter()
                    try:
                        odoc = extract(path, lang, options)
                    except ClinideidError:  # e.g. Tesseract over its time limit: every PHI token missed
                        failures[variant] += 1
                        variants[variant] = ""
                        continue
                    finally:
                        timing[f"ocr_{'clean' if variant == 'ocr' else 'degraded'}_s"] += (
                            time.perf_counter() - t0
                        )
                    if variant == "ocr":
                        timing["ocr_pages"] += len(odoc.pages)
                    variants[variant] = odoc.text
                    confidences[variant] += [p.ocr_confidence or 0.0 for p in odoc.pages]
                for variant, text in variants.items():
                    spans = [(s.start, s.end) for s in deid.deidentify(Document("n", text, lang)).spans]
                    for k, v in enumerate(recall(note, text, spans)):
                        scores[variant][k] += v
            row = {"language": lang, "notes": min(args.per_language, n + 1)}
            for variant, (caught, gold, exact, total) in scores.items():
                row[f"{variant}_recall"] = caught / gold if gold else None
                row[f"{variant}_tokens_exact"] = exact / total if total else None
            row["gold_phi_tokens"] = scores["text"][1]
            row["ocr_failed_notes"] = failures["ocr"]
            row["degraded_failed_notes"] = failures["degraded"]
            for variant, values in confidences.items():
                row[f"{variant}_confidence"] = sum(values) / len(values) if values else None
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print(table(rows, timing, args))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "timing": timing}, indent=2), "utf-8")
    return 0


def table(rows: list[dict], timing: dict, args) -> str:
    def f(x):
        return "-" if x is None else f"{x:.3f}"

    out = [
        "| lang | notes | gold PHI tokens | recall plain text | recall wrapped text | recall PDF text layer | "
        "recall OCR clean | recall OCR degraded | tokens read exactly clean / degraded | "
        "mean OCR confidence clean / degraded | notes OCR failed on clean / degraded |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['language']} | {r['notes']} | {r['gold_phi_tokens']} | {f(r['text_recall'])} | "
            f"{f(r['wrapped_recall'])} | "
            f"{f(r['pdf_recall'])} | {f(r['ocr_recall'])} | {f(r['degraded_recall'])} | "
            f"{f(r['ocr_tokens_exact'])} / {f(r['degraded_tokens_exact'])} | "
            f"{r['ocr_confidence']:.1f} / {r['degraded_confidence']:.1f} | "
            f"{r['ocr_failed_notes']} / {r['degraded_failed_notes']} |"
        )
    pages, ocr_pages = timing["pdf_pages"], timing["ocr_pages"]
    out += [
        "",
        "| step | seconds per page | pages per second |",
        "|---|---|---|",
    ]
    for label, key, n in (
        ("PDF text layer extraction (pypdfium2)", "pdf_text_s", pages),
        ("PDF burned-out output (render 300 dpi, burn, image PDF)", "pdf_out_s", pages),
        ("DOCX extraction (pages as rendered for the PDF)", "docx_s", pages),
        ("DOCX output (replacements in place)", "docx_out_s", pages),
        ("OCR clean 300-dpi page (Tesseract, 1 thread)", "ocr_clean_s", ocr_pages),
        ("OCR degraded page", "ocr_degraded_s", ocr_pages),
    ):
        per = timing[key] / n if n else 0.0
        out.append(f"| {label} | {per:.3f} | {1 / per if per else 0:.1f} |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
