"""Documents generated for the ingest tests: DOCX (tables, nested tables, headers, footers, comments, a text
box), PDFs with and without a text layer, images of text, RTF and ODT. Every name and number is made up.
"""

from __future__ import annotations

import random
from pathlib import Path

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import parse_xml
from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
DPI = 300
#: letter-size page at 300 dpi
PAGE = (2550, 3300)

# planted PHI: the English rules find each of these in the sentences below
LINES = [
    "Patient: Zebediah Quackenbush, MRN: 4829105",
    "Seen on 11/02/2023 by Dr. Sarah Thompson.",
    "Phone: (617) 555-0142",
    "The patient was admitted with chest pain and discharged in stable condition.",
]
PHI = ("Zebediah", "Quackenbush", "4829105", "11/02/2023", "Thompson", "555-0142")


def font(size: int = 44) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT), size)


def text_image(lines: list[str], size: tuple[int, int] = PAGE, mode: str = "RGB") -> Image.Image:
    """``lines`` drawn at about 11 pt on a 300-dpi page."""
    image = Image.new(mode, size, "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((200, 250 + i * 90), line, font=font(), fill="black")
    return image


def degraded(image: Image.Image, seed: int = 0, noise: float = 0.5) -> Image.Image:
    """Heavy salt-and-pepper noise and blur: text Tesseract reads with low confidence."""
    rng = random.Random(seed)
    out = image.convert("L").filter(ImageFilter.GaussianBlur(3))
    px = out.load()
    for _ in range(int(out.width * out.height * noise * 0.1)):
        px[rng.randrange(out.width), rng.randrange(out.height)] = rng.choice((0, 255))
    return out


def save_image(image: Image.Image, path: Path, **kw) -> Path:
    image.save(path, dpi=(DPI, DPI), **kw)
    return path


def text_pdf(path: Path, pages: list[list[str]], author: str = "Dr. Sarah Thompson") -> Path:
    """A PDF with a text layer (reportlab) and document information naming a person."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    c.setAuthor(author)
    c.setTitle("Discharge summary of Zebediah Quackenbush")
    c.setSubject("Quackenbush")
    for lines in pages:
        for i, line in enumerate(lines):
            c.drawString(72, 760 - 18 * i, line)
        c.showPage()
    c.save()
    return path


def scanned_pdf(path: Path, images: list[Image.Image]) -> Path:
    """A PDF of page images only (no text layer), as a scanner makes."""
    rgb = [im.convert("RGB") for im in images]
    rgb[0].save(
        path,
        format="PDF",
        save_all=True,
        append_images=rgb[1:],
        resolution=float(DPI),
        title="Scan of Quackenbush",
        author="Dr. Sarah Thompson",
    )
    return path


def mixed_pdf(path: Path) -> Path:
    """Page 1 with a text layer, page 2 a scanned image (pypdfium2 joins the two)."""
    import pypdfium2 as pdfium

    text_pdf(Path(path.with_suffix(".text.tmp")), [LINES[:2]])
    scanned_pdf(Path(path.with_suffix(".scan.tmp")), [text_image(LINES[2:3])])
    out = pdfium.PdfDocument.new()
    for part in (path.with_suffix(".text.tmp"), path.with_suffix(".scan.tmp")):
        src = pdfium.PdfDocument(str(part))
        out.import_pages(src)
        src.close()
        part.unlink()
    out.save(str(path))
    out.close()
    return path


TEXTBOX = (
    '<w:r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:v="urn:schemas-microsoft-com:vml"><w:pict><v:shape style="width:200pt;height:40pt"><v:textbox>'
    "<w:txbxContent><w:p><w:r><w:t>Box: call Dr. Sarah Thompson</w:t></w:r></w:p></w:txbxContent>"
    "</v:textbox></v:shape></w:pict></w:r>"
)


EMAIL = "zebediah.quackenbush@example.org"
HYPERLINK = (
    '<w:hyperlink xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" r:id="{rel_id}">'
    "<w:r><w:t>{email}</w:t></w:r></w:hyperlink>"
)


def rich_docx(path: Path) -> Path:
    """A DOCX with PHI in a paragraph whose name spans two runs (bold first name), a table with a nested
    table, a mailto: hyperlink, a header, a footer, a comment (with an author), a text box and document
    properties."""
    d = docx.Document()
    props = d.core_properties
    props.author = "Dr. Sarah Thompson"
    props.last_modified_by = "Zebediah Quackenbush"
    props.title = "Quackenbush discharge"
    p = d.add_paragraph("Patient: ")
    first = p.add_run("Zebediah")
    first.bold = True
    p.add_run(" Quackenbush, MRN: 4829105")
    d.add_paragraph(LINES[1])
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Contact"
    table.cell(0, 1).text = "see below"
    inner = table.cell(1, 1).add_table(rows=1, cols=1)
    inner.cell(0, 0).text = LINES[2]
    d.add_paragraph(LINES[3])
    mail = d.add_paragraph("Mail: ")
    rel_id = d.part.relate_to(f"mailto:{EMAIL}", RT.HYPERLINK, is_external=True)
    mail._p.append(parse_xml(HYPERLINK.format(rel_id=rel_id, email=EMAIL)))
    box = d.add_paragraph("Text box follows.")
    box._p.append(parse_xml(TEXTBOX))
    section = d.sections[0]
    section.header.paragraphs[0].text = "Patient: Zebediah Quackenbush"
    section.footer.paragraphs[0].text = "MRN: 4829105"
    d.add_comment(
        first, text="Seen on 11/02/2023 by Dr. Sarah Thompson.", author="Dr. Sarah Thompson", initials="ST"
    )
    d.save(path)
    return path


def rtf(path: Path, lines: list[str]) -> Path:
    body = "\\par\n".join(lines)
    path.write_text("{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Arial;}}\\f0\\fs22 " + body + "\\par\n}", "ascii")
    return path


def odt(path: Path, lines: list[str]) -> Path:
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text="Discharge summary"))
    for line in lines:
        document.text.addElement(P(text=line))
    document.save(str(path))
    return path


def ocr_text(path: Path) -> str:
    """What Tesseract reads in an image or in every rendered page of a PDF (eng)."""
    from clinideid.ingest.ocr import ocr_image

    if path.suffix.lower() == ".pdf":
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(str(path))
        images = [pdf[i].render(scale=DPI / 72).to_pil() for i in range(len(pdf))]
    else:
        from PIL import ImageSequence

        images = [f.convert("RGB") for f in ImageSequence.Iterator(Image.open(path))]
    return "\n".join(" ".join(w.text for w in ocr_image(im, "eng", DPI).words) for im in images)


def pdf_text_layer(path: Path) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    return "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))


def word97_doc(path: Path, lines: list[str]) -> Path:
    """A Word 97-2003 ``.doc`` converted by LibreOffice (``soffice``) from a generated DOCX.

    antiword refuses very short documents ("text stream too small"), so filler paragraphs follow the lines.
    """
    import shutil
    import subprocess

    source = path.with_suffix(".source.docx")
    d = docx.Document()
    for line in lines:
        d.add_paragraph(line)
    for _ in range(30):
        d.add_paragraph("The plan was discussed with the family and the nursing team in clinic today.")
    d.save(str(source))
    out_dir = path.parent / ".soffice"
    subprocess.run(
        [
            shutil.which("soffice") or "soffice",
            "--headless",
            "--convert-to",
            "doc",
            "--outdir",
            str(out_dir),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=180,
        env={"HOME": str(out_dir), "PATH": "/usr/bin:/bin"},
    )
    (out_dir / source.with_suffix(".doc").name).replace(path)
    source.unlink()
    shutil.rmtree(out_dir)
    return path
