"""Size checks made before anything is decompressed or rendered: a small file must not turn into gigabytes.

Each limit lives in ``IngestOptions`` (0 turns it off) and a refusal is that document's ``InputError``,
naming the limit and the option that raises it, never the content:

- zip-based formats (DOCX, ODT): the uncompressed sizes the zip directory declares, in total and as a
  ratio to the compressed size of each large part (Python's ``zipfile`` never inflates a part past its
  declared size, so the directory can be trusted);
- PDF: the page count, before any page is read or rendered (the burned-out output renders the same pages);
- images: the pixels of each frame (from the header, before decoding) and the number of frames.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from clinideid.batch.limits import format_size
from clinideid.errors import InputError
from clinideid.ingest.model import IngestOptions

#: parts smaller than this are not checked for their ratio (small XML parts compress very well)
RATIO_MIN_BYTES = 1024 * 1024


def check_zip(path: Path, options: IngestOptions) -> None:
    """Refuse a zip whose parts would inflate past ``max_unzipped_bytes`` or ``max_zip_ratio``; a file
    that is not a zip is left to its reader (which says it cannot read it)."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return
    total = sum(m.file_size for m in members)
    if options.max_unzipped_bytes and total > options.max_unzipped_bytes:
        raise InputError(
            f"its parts would unzip to {format_size(total)}, over the limit of "
            f"{format_size(options.max_unzipped_bytes)}; not read; raise --max-unzipped-bytes (0: no limit) "
            "to process it"
        )
    if not options.max_zip_ratio:
        return
    for m in members:
        if m.file_size > RATIO_MIN_BYTES and m.file_size > options.max_zip_ratio * max(1, m.compress_size):
            ratio = m.file_size / max(1, m.compress_size)
            raise InputError(
                f"a part would unzip to {ratio:,.0f} times its compressed size, over the limit of "
                f"{options.max_zip_ratio:g}; not read; raise --max-zip-ratio (0: no limit) to process it"
            )


def check_pages(pages: int, options: IngestOptions) -> None:
    if options.max_pages and pages > options.max_pages:
        raise InputError(
            f"has {pages:,} pages, over the limit of {options.max_pages:,}; not read; raise --max-pages "
            "(0: no limit) to process it"
        )


def check_pixels(size: tuple[int, int], options: IngestOptions) -> None:
    width, height = size
    if options.max_pixels and width * height > options.max_pixels:
        raise InputError(
            f"an image of {width:,} x {height:,} pixels is over the limit of {options.max_pixels:,} pixels; "
            "not read; raise --max-pixels (0: no limit) to process it"
        )
