"""Throughput of ``clinideid deid`` on a SQLite table in and out, against the pipeline alone on the same rows.

    python benchmarks/tables.py [--rows 2000] [--chars 600] [--batch-size 500]

Generates synthetic English rows (invented names, dates, record numbers) into a SQLite database, then times
(1) the pipeline alone (``deidentify_with_fields`` on each row's note and comment, no I/O) and (2) the table
job from the query to the output and report tables (reading pages, one transaction per batch), in-process,
with the pipeline built beforehand. Prints rows/s, chars/s and the share of time the table machinery adds.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

from clinideid.batch.sql import SqlSource, SqlTableSink
from clinideid.batch.tables import RowOptions, TableSpec, run_table
from clinideid.document import Document
from clinideid.pipeline import MultilingualDeidentifier

SYLLABLES = ["ka", "zo", "mir", "tel", "van", "qui", "bro", "sen", "dax", "lu", "per", "wen"]
FILLER = (
    "The patient was admitted with chest pain, treated with aspirin and discharged in stable condition. "
    "Follow-up in the cardiology clinic was arranged. "
)


def name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()


def make_rows(n: int, chars: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        head = (
            f"Patient: {name(rng)} {name(rng)}    MRN: {rng.randint(1_000_000, 9_999_999)}\n"
            f"Seen on {rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}/2023 by Dr. {name(rng)}.\n"
        )
        body = FILLER * max(1, (chars - len(head)) // len(FILLER))
        comment = f"Called by Dr. {name(rng)} {name(rng)} on 05/06/2021."
        rows.append({"id": i + 1, "note": head + body, "comment": comment, "ward": f"ward {i % 9}"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--chars", type=int, default=600, help="characters per note (about)")
    parser.add_argument("--batch-size", type=int, default=500)
    args = parser.parse_args()

    rows = make_rows(args.rows, args.chars)
    chars = sum(len(r["note"]) + len(r["comment"]) for r in rows)
    key = b"benchmark-key-0123456789abcdef0123"
    deid = MultilingualDeidentifier("en", key)
    t = time.perf_counter()
    deid.build_all()
    load = time.perf_counter() - t
    deid.deidentify(Document("warm", rows[0]["note"], "en"))  # warm-up

    t, c = time.perf_counter(), time.process_time()
    for r in rows:
        deid.deidentify_with_fields(Document(str(r["id"]), r["note"], "en"), [("comment", r["comment"])])
    alone, alone_cpu = time.perf_counter() - t, time.process_time() - c

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'notes.db'}"
        engine = sa.create_engine(url)
        meta = sa.MetaData()
        notes = sa.Table(
            "notes",
            meta,
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column("note", sa.Text),
            sa.Column("comment", sa.Text),
            sa.Column("ward", sa.Text),
        )
        with engine.begin() as conn:
            meta.create_all(conn)
            conn.execute(sa.insert(notes), rows)
        engine.dispose()
        spec = TableSpec("id", ("note", "comment"))
        source = SqlSource(url, "SELECT id, note, comment, ward FROM notes", "id")
        sink = SqlTableSink(url, "notes_deid", None, "id", ("note", "comment"), "benchmark")
        t, c = time.perf_counter(), time.process_time()
        outcome = run_table(source, spec, deid, sink, RowOptions("en"), args.batch_size)
        table, table_cpu = time.perf_counter() - t, time.process_time() - c
        assert outcome.summary["succeeded"] == args.rows, outcome.summary

    print(f"rows {args.rows:,}  chars {chars:,}  batch {args.batch_size}  pipeline load {load:.2f} s")
    print("| run | wall s | CPU s | rows/s (wall) | chars/s (wall) | chars/s (CPU) |")
    print("|---|---|---|---|---|---|")
    runs = (
        ("pipeline alone (no I/O)", alone, alone_cpu),
        ("SQLite table -> table + report", table, table_cpu),
    )
    for label, wall, cpu in runs:
        rates = f"{args.rows / wall:,.0f} | {chars / wall:,.0f} | {chars / cpu:,.0f}"
        print(f"| {label} | {wall:.2f} | {cpu:.2f} | {rates} |")
    extra = 100 * (table_cpu - alone_cpu) / alone_cpu
    print(f"the table machinery adds {extra:.1f}% CPU time to the pipeline's")


if __name__ == "__main__":
    main()
