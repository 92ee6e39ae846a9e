"""CSV and Parquet tables: reading rows, and writing a de-identified table exactly once through part files.

Each batch of rows is written to a part file in ``<output>/.clinideid/staging/`` (atomically: a temporary
file and a rename), then its rows are recorded in the run journal (``journal.py``) with the part and the row's
place in it. When the run ends, however it ends, the table is assembled from the rows the journal's last entry
for each id points to, into a temporary file that is renamed over ``<output>/<name>.csv|.parquet``; a killed
run leaves at most an unrecorded part (ignored, then deleted) and is finished with ``--resume``. ``report.jsonl``
and ``summary.json`` are rebuilt from the journal as for the folder runner.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from clinideid.batch.journal import RunJournal, RunLock, build_reports, every_step, writing
from clinideid.batch.paths import (
    REPORT_NAME,
    STAGING_DIR,
    STATE_DIR,
    SUMMARY_NAME,
    TMP_DIR,
    display_id,
    prepare_output_folder,
)
from clinideid.batch.tables import RowOutcome, SourceRow, missing_extra
from clinideid.errors import ConfigError, InputError
from clinideid.files import atomic_file, open_read, real_dir
from clinideid.text.decoding import AUTO, check_decoded, check_encoding, sniff_bom

FORMATS = ("csv", "parquet")
#: what ``errors="surrogateescape"`` makes of bytes the encoding cannot decode
_UNDECODED = re.compile("[\udc80-\udcff]")


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise missing_extra("parquet", "pyarrow") from None
    return pyarrow, pyarrow.parquet


# -- sources -----------------------------------------------------------------------------------------------
class CsvSource:
    """Rows of a CSV file with a header line. Bytes the encoding cannot decode make *that row* fail (they are
    kept as lone surrogates, which the row's text check refuses); a field over the size limit, or a broken
    quote, stops reading (the rest of the file is reported as one failed row) since the parser's place in the
    file is then unknown."""

    def __init__(self, path: Path, encoding: str = "utf-8", max_bytes: int = 50 * 1024 * 1024) -> None:
        self.path = path
        self.description = display_id(path.name)
        with path.open("rb") as fh:
            head = fh.read(4)
        declared = check_encoding(encoding)
        self.encoding = sniff_bom(head) or ("utf-8" if declared == AUTO else declared)  # one for the file
        self.max_bytes = max_bytes
        with self._open() as fh:
            try:
                header = next(csv.reader(fh), None)
            except csv.Error as exc:
                raise InputError(f"{self.description}: cannot read the CSV header ({exc})") from None
        if not header:
            raise InputError(
                f"{self.description}: empty CSV file (a header line naming the columns is needed)"
            )
        self.columns = [display_id(c.strip()) for c in header]

    def _open(self):
        return self.path.open("r", encoding=self.encoding, errors="surrogateescape", newline="")

    def rows(self) -> Iterator[SourceRow]:
        limit = csv.field_size_limit()
        # cells a little over --max-bytes fail one by one (see process_row); far larger ones stop the reader
        csv.field_size_limit(2 * self.max_bytes + 1024)
        try:
            with self._open() as fh:
                reader = csv.reader(fh)
                next(reader, None)
                number = 0
                while True:
                    try:
                        cells = next(reader)
                    except StopIteration:
                        return
                    except csv.Error as exc:
                        yield SourceRow(
                            number + 1,
                            None,
                            f"{self.description}, row {number + 1}: {_csv_problem(exc)}; the rest of the file "
                            "was not read",
                        )
                        return
                    number += 1
                    if not any(c.strip() for c in cells):
                        number -= 1
                        continue
                    if len(cells) != len(self.columns):
                        yield SourceRow(
                            number,
                            dict(zip(self.columns, cells, strict=False)),
                            f"{self.description}, row {number}: {len(cells)} fields where the header has "
                            f"{len(self.columns)}",
                        )
                        continue
                    values = dict(zip(self.columns, cells, strict=True))
                    if any(_UNDECODED.search(c) for c in cells):
                        yield SourceRow(
                            number,
                            values,
                            f"{self.description}, row {number}: bytes that are not valid {self.encoding}; pass "
                            "--encoding (e.g. latin-1 or cp1252) if the file uses another encoding",
                        )
                        continue
                    try:
                        check_decoded(" ".join(cells), f"{self.description}, row {number}", self.encoding)
                    except InputError as exc:
                        yield SourceRow(number, values, str(exc))
                        continue
                    yield SourceRow(number, values)
        finally:
            csv.field_size_limit(limit)


def _csv_problem(exc: csv.Error) -> str:
    text = str(exc)
    if "field larger than field limit" in text:
        return "a field over --max-bytes"
    return "malformed CSV (" + text.split("(")[0].strip() + ")"


class ParquetSource:
    """Rows of a Parquet file, read one record batch at a time (bounded memory)."""

    def __init__(self, path: Path, batch_rows: int = 1024) -> None:
        pa, pq = _pyarrow()
        self.path = path
        self.description = display_id(path.name)
        try:
            self._file = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(
                f"{self.description}: not a readable Parquet file ({type(exc).__name__})"
            ) from None
        self.schema = self._file.schema_arrow
        self.columns = list(self.schema.names)
        self.batch_rows = batch_rows

    def rows(self) -> Iterator[SourceRow]:
        pa, _ = _pyarrow()
        number = 0
        batches = self._file.iter_batches(batch_size=self.batch_rows)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except (pa.ArrowException, OSError) as exc:
                yield SourceRow(
                    number + 1,
                    None,
                    f"{self.description}: a damaged part after row {number} ({type(exc).__name__}); "
                    "the rest of the file was not read",
                )
                return
            for values in batch.to_pylist():
                number += 1
                yield SourceRow(number, values)


def open_table_source(path: Path, fmt: str, encoding: str, max_bytes: int):
    if fmt == "csv":
        return CsvSource(path, encoding, max_bytes)
    if fmt == "parquet":
        return ParquetSource(path)
    raise ConfigError(f"unknown table format {fmt!r}; use csv or parquet")


# -- part files --------------------------------------------------------------------------------------------
def _csv_cell(value: Any) -> Any:
    return "" if value is None else value


def write_csv(out: BinaryIO, columns: Sequence[str], rows: Sequence[dict[str, Any]], header: bool) -> None:
    fh = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape", newline="")
    writer = csv.writer(fh)
    if header:
        writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row.get(c)) for c in columns])
    fh.flush()
    fh.detach()  # ``out`` stays open: its owner closes it


class FileTableSink:
    """A de-identified CSV or Parquet table (plus ``report.jsonl`` and ``summary.json``) in an output folder."""

    def __init__(
        self,
        out_dir: Path,
        name: str,
        fmt: str,
        settings: str,
        resume: bool = False,
        overwrite: bool = False,
        durable: bool = False,
        schema: Any = None,
    ) -> None:
        if fmt not in FORMATS:
            raise ConfigError(f"--output-format must be one of {', '.join(FORMATS)}")
        if fmt == "parquet":
            _pyarrow()
        if resume and overwrite:
            raise ConfigError("give either --resume or --overwrite, not both")
        self.out_dir = out_dir
        self.fmt = fmt
        self.name = f"{name}.{fmt}"
        self.description = str(out_dir / self.name)
        self.settings = settings
        self.resume = resume
        self.overwrite = overwrite
        self.durable = durable
        self.schema = schema  # the input's Arrow schema, when it has one
        self.state_dir = out_dir / STATE_DIR
        self.parts_dir = self.state_dir / STAGING_DIR
        self.tmp_dir = self.state_dir / TMP_DIR
        self.columns: list[str] = []
        self._lock = RunLock(self.state_dir)
        self._journal: RunJournal | None = None
        self._seq = 0

    # -- opening -------------------------------------------------------------------------------------------
    def open(self, columns: Sequence[str]) -> set[str]:
        self.columns = list(columns)
        with writing("the output folder"):
            prepare_output_folder(self.out_dir, self.overwrite, [self.name])
        self._lock.acquire()
        try:
            with writing("the output folder"):
                journal = RunJournal(self.out_dir, self.durable)
                journal.load()
                if journal.exists() and self.overwrite:
                    self._clear(journal)
                    journal = RunJournal(self.out_dir, self.durable)
                elif journal.exists() and not self.resume:
                    raise ConfigError(
                        "the output folder holds an earlier run; pass --resume to finish it or --overwrite to "
                        "replace it (or choose another -o)"
                    )
                journal.check_settings(self.settings)
                shutil.rmtree(self.tmp_dir, ignore_errors=True)
                real_dir(self.parts_dir, self.out_dir)
                journal.start(self.settings)
        except BaseException:
            self._lock.release()
            raise
        self._journal = journal
        return {doc_id for doc_id, status in journal.last_status.items() if status == "done"}

    def _clear(self, journal: RunJournal) -> None:
        """Remove what an earlier run wrote (its table, reports and state), nothing else."""
        for name in (REPORT_NAME, SUMMARY_NAME, self.name):
            path = self.out_dir / name
            if path.is_file() and not path.is_symlink():
                path.unlink()
        shutil.rmtree(self.parts_dir, ignore_errors=True)
        journal.path.unlink()

    # -- per batch -----------------------------------------------------------------------------------------
    def write_batch(self, outcomes: Sequence[RowOutcome]) -> None:
        journal = self._journal
        assert journal is not None
        rows = [o for o in outcomes if o.done]
        part = None
        if rows:
            self._seq += 1
            part = f"part-{journal.runs:05d}-{self._seq:06d}.{self.fmt}"
            self._write_part(part, [o.values or {} for o in rows])
        place = 0
        for outcome in outcomes:
            entry = dict(outcome.entry)
            if outcome.done:
                entry.update(part=part, row=place, output=None)
                place += 1
            journal.commit(entry)

    def _write_part(self, part: str, rows: list[dict[str, Any]]) -> None:
        with (
            writing("a part of the output table"),
            atomic_file(self.parts_dir / part, self.tmp_dir, self.durable) as fh,
        ):
            if self.fmt == "csv":
                write_csv(fh, self.columns, rows, header=False)
            else:
                _, pq = _pyarrow()
                pq.write_table(self._arrow_table(rows), fh)

    def _arrow_table(self, rows: list[dict[str, Any]]):
        pa, _ = _pyarrow()
        data = {c: [r.get(c) for r in rows] for c in self.columns}
        if self.schema is not None:
            schema = pa.schema([self.schema.field(c) for c in self.columns])
            return pa.Table.from_pydict(data, schema=schema)
        return pa.Table.from_pydict(data)

    # -- end -----------------------------------------------------------------------------------------------
    def close(self, finished: bool, skipped: int) -> dict[str, Any]:
        journal = self._journal
        if journal is None:
            return {}
        try:
            _, _, summary, _ = every_step(
                lambda: journal.end_run(ended="finished" if finished else "stopped", skipped=skipped),
                lambda: self._assemble(journal),
                lambda: build_reports(journal, skipped, finished, self.durable),
                journal.close,
            )
            return summary
        finally:
            self._journal = None
            self._lock.release()

    def _kept_rows(self, journal: RunJournal) -> dict[str, set[int]]:
        """For each part, the places of the rows whose id's last entry points there."""
        kept: dict[str, set[int]] = {}
        for entry in journal.final_entries():
            if entry["status"] == "done" and entry.get("part"):
                kept.setdefault(entry["part"], set()).add(entry["row"])
        return kept

    def _assemble(self, journal: RunJournal) -> None:
        kept = self._kept_rows(journal)
        parts = sorted(p.name for p in self.parts_dir.iterdir() if p.is_file())
        for name in parts:
            if name not in kept:  # unrecorded (a killed batch) or superseded: nothing in it is wanted
                (self.parts_dir / name).unlink()
        parts = [p for p in parts if p in kept]
        with (
            writing("the output table"),
            atomic_file(self.out_dir / self.name, self.tmp_dir, self.durable) as fh,
        ):
            if self.fmt == "csv":
                self._assemble_csv(fh, parts, kept)
            else:
                self._assemble_parquet(fh, parts, kept)

    def _assemble_csv(self, tmp: BinaryIO, parts: list[str], kept: dict[str, set[int]]) -> None:
        limit = csv.field_size_limit()
        csv.field_size_limit(2**31 - 1)  # parts were written by this program
        out = io.TextIOWrapper(tmp, encoding="utf-8", errors="surrogateescape", newline="")
        try:
            writer = csv.writer(out)
            writer.writerow(self.columns)
            for name in parts:
                places = kept[name]
                with open_read(self.parts_dir / name) as raw:
                    fh = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")
                    for i, cells in enumerate(csv.reader(fh)):
                        if i in places:
                            writer.writerow(cells)
            out.flush()
        finally:
            out.detach()  # ``tmp`` stays open: its owner closes it
            csv.field_size_limit(limit)

    def _assemble_parquet(self, tmp: BinaryIO, parts: list[str], kept: dict[str, set[int]]) -> None:
        pa, pq = _pyarrow()
        tables = []
        for name in parts:
            with open_read(self.parts_dir / name) as raw:
                table = pq.read_table(raw)
            places = sorted(i for i in kept[name] if i < table.num_rows)
            tables.append(table.take(pa.array(places, type=pa.int64())))
        if tables:
            schema = pa.unify_schemas([t.schema for t in tables], promote_options="permissive")
        elif self.schema is not None:
            schema = pa.schema([self.schema.field(c) for c in self.columns])
        else:
            schema = pa.schema([(c, pa.string()) for c in self.columns])
        with pq.ParquetWriter(tmp, schema) as writer:
            if not tables:
                writer.write_table(schema.empty_table())
            for table in tables:
                writer.write_table(table.select(schema.names).cast(schema))
