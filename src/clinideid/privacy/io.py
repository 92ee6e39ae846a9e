"""Writing privacy outputs atomically: into a hidden temporary sibling, then moved into place."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from clinideid.document import Document
from clinideid.errors import ConfigError
from clinideid.formats import write_corpus


def _atomic_path(out: Path, write: Callable[[Path], None], overwrite: bool = False) -> None:
    """Call ``write(tmp_path)`` and move ``tmp_path`` to ``out``; nothing is left at ``out`` on failure."""
    out = Path(out)
    if out.exists() and not overwrite:
        raise ConfigError(f"output {out} already exists; choose a new path (nothing is overwritten)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_dir = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        tmp = tmp_dir / out.name
        write(tmp)
        if out.exists():
            shutil.rmtree(out) if out.is_dir() else out.unlink()
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


def write_corpus_atomic(docs: Iterable[Document], out: Path, fmt: str, **options: Any) -> None:
    """``write_corpus`` to ``out`` (a file or folder, by codec) as one atomic step."""
    docs = list(docs)
    _atomic_path(out, lambda tmp: write_corpus(docs, tmp, fmt, **options))


def write_json_atomic(data: Any, out: Path) -> None:
    """A JSON file written atomically (overwriting is allowed: reports are regenerated)."""
    _atomic_path(
        out,
        lambda tmp: tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8"),
        overwrite=True,
    )


def write_text_atomic(text: str, out: Path) -> None:
    """A text file written atomically (overwriting is allowed: reports are regenerated)."""
    _atomic_path(out, lambda tmp: tmp.write_text(text, encoding="utf-8"), overwrite=True)


def write_dir_atomic(out: Path, write: Callable[[Path], None]) -> None:
    """A new folder filled by ``write(tmp_folder)``, moved into place when complete."""

    def fill(tmp: Path) -> None:
        tmp.mkdir()
        write(tmp)

    _atomic_path(out, fill)
