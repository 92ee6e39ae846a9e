"""Writing de-identified outputs: texts in the input's layout, BRAT annotations, de-identified JSONL.

Every file is written atomically (a temporary file in the run's state folder, then a rename) and only
inside the output folder: paths come from ``OutputNamer`` and are checked again here, and the state folder
is reached without following links (``clinideid.files``). A JSONL output grows in ``.clinideid/staging/``
while the run goes on (each line written whole before the journal records it, or cut off again) and is
moved into place when the run ends; a resumed run moves it back and cuts it to what the journal committed.
A write that fails (disk full, read-only folder) is an ``OutputWriteError``: the run stops.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

from clinideid.batch.journal import writing
from clinideid.batch.paths import STAGING_DIR, STATE_DIR, TMP_DIR, safe_relpath
from clinideid.errors import InputError
from clinideid.files import AppendFile, real_dir, write_atomic
from clinideid.pipeline import DeidResult


class OutputWriter:
    """Writes each result as it comes (bounded memory) under ``out_dir``."""

    def __init__(
        self, out_dir: Path, annotations: str = "jsonl", jsonl_name: str | None = None, durable: bool = False
    ) -> None:
        self.out_dir = out_dir
        self.root = Path(os.path.realpath(out_dir))
        self.annotations = annotations
        self.durable = durable
        self.tmp_dir = out_dir / STATE_DIR / TMP_DIR
        self.jsonl_name = safe_relpath(jsonl_name).replace("/", "_") if jsonl_name else None
        self._jsonl: AppendFile | None = None

    # -- setup ---------------------------------------------------------------------------------------------
    def open(self, committed_jsonl_bytes: int) -> None:
        """Prepare the JSONL staging file holding exactly the ``committed_jsonl_bytes`` of earlier runs."""
        with writing("the run's temporary folder"):
            real_dir(self.tmp_dir, self.out_dir)
        if self.jsonl_name is None:
            return
        staging, final = self._staging(), self.out_dir / self.jsonl_name
        with writing("the JSONL output"):
            real_dir(staging.parent, self.out_dir)
            if not staging.exists() and final.exists() and committed_jsonl_bytes:
                os.replace(final, staging)
            self._jsonl = AppendFile(staging, self.durable)
            if self._jsonl.size != committed_jsonl_bytes:
                self._jsonl.truncate(min(committed_jsonl_bytes, self._jsonl.size))

    def _staging(self) -> Path:
        assert self.jsonl_name is not None
        return self.out_dir / STATE_DIR / STAGING_DIR / self.jsonl_name

    # -- per document --------------------------------------------------------------------------------------
    def target(self, relpath: str) -> Path:
        """The path of output ``relpath``, checked to stay inside the output folder (links included)."""
        path = self.out_dir / relpath
        parent = Path(os.path.realpath(path.parent))
        if not parent.is_relative_to(self.root) or relpath.split("/")[0] == STATE_DIR:
            raise InputError("the output path would leave the output folder; document not written")
        return path

    def exists(self, relpath: str) -> bool:
        return (self.out_dir / relpath).is_file()

    def write_text(self, result: DeidResult, relpath: str) -> None:
        if self.annotations == "brat":
            self.write_file(
                PurePosixPath(relpath).with_suffix(".ann").as_posix(), _brat(result).encode("utf-8")
            )
        self.write_file(relpath, result.text.encode("utf-8"))

    def write_file(self, relpath: str, data: bytes) -> None:
        """Write one output file atomically, its folders made as needed (never through a link leaving the
        output folder)."""
        path = self.target(relpath)
        with writing("an output"):
            path.parent.mkdir(parents=True, exist_ok=True)
            self.target(relpath)  # again, now that the folders exist
            write_atomic(path, data, self.tmp_dir, self.durable)

    def write_record(self, record: dict) -> int:
        """Append one de-identified record; returns the committed size of the JSONL output after it."""
        assert self._jsonl is not None
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")
        with writing("the JSONL output"):
            return self._jsonl.append(line)

    # -- end -----------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Move the JSONL output into place (the run's texts are already in place)."""
        if self._jsonl is None:
            return
        jsonl, self._jsonl = self._jsonl, None
        with writing("the JSONL output"):
            try:
                jsonl.sync()
            finally:
                jsonl.close()
            os.replace(self._staging(), self.out_dir / self.jsonl_name)


def _brat(result: DeidResult) -> str:
    """Annotations of the *output* text: where each replacement now stands."""
    lines = []
    for i, r in enumerate(result.replacements, start=1):
        if r.new_end > r.new_start:
            frag = result.text[r.new_start : r.new_end].replace("\n", " ")
            lines.append(f"T{i}\t{r.label} {r.new_start} {r.new_end}\t{frag}")
    return "\n".join(lines) + ("\n" if lines else "")
