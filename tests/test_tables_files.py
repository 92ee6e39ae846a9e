"""``clinideid deid notes.csv|notes.parquet -o out/``: CSV and Parquet tables end to end through the CLI."""

from __future__ import annotations

import csv
import json
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batch_fixtures import deid_command, journal_lines
from clinideid.cli import _register_commands, app
from clinideid.errors import ConfigError
from table_fixtures import FIXED_PHI, kill_when, leaked, make_rows, start_deid, write_key

_register_commands()
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["deid", *args], catch_exceptions=False)


def write_csv(path: Path, rows: list[dict], extra_lines: list[bytes] = ()) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with path.open("ab") as fh:
        for line in extra_lines:
            fh.write(line)


def read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def table_args(*extra: str) -> list[str]:
    return ["--id-column", "id", "--text-column", "note", "--text-column", "comment", "-l", "en", "--no-progress",
            *extra]  # fmt: skip


def test_csv_round_trip_with_bad_rows(tmp_path: Path):
    rows, planted = make_rows(8)
    bad = [
        b'901,"Patient: Elvira Quandt \xff\xfe bad bytes",ok,ward 1,en\r\n',  # not UTF-8: this row fails
        b"902,too,few\r\n",  # wrong number of fields
        b'903,"' + b"Patient: Elvira Quandt. " * 30 + b'",ok,ward 2,en\r\n',  # over --max-bytes
        b'904,"Patient: Zofia Brandt, MRN 7654321.","Seen by Dr. Hal Ostrow",ward 3,en\r\n',  # after them: fine
    ]
    src = tmp_path / "notes.csv"
    write_csv(src, rows, bad)
    out = tmp_path / "safe"
    res = run(
        str(src),
        "-o",
        str(out),
        *table_args("--key-file", str(write_key(tmp_path)), "--max-bytes", "500", "--batch-size", "3"),
    )
    assert res.exit_code == 3, res.output
    written = read_csv(out / "notes.csv")
    assert [r["id"] for r in written] == [str(i) for i in range(1, 9)] + ["904"]
    assert list(written[0]) == ["id", "note", "comment", "ward", "language"]
    assert written[2]["ward"] == "ward 2" and written[2]["language"] == "en"
    text = (out / "notes.csv").read_text("utf-8")
    assert leaked((*FIXED_PHI, *planted, "Wenzel", "Zofia Brandt", "7654321", "Ostrow"), text) == []
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 9 and summary["failed"] == 3
    errors = {e["id"]: e["error"] for e in summary["errors"]}
    assert "not valid utf-8" in errors["901"]
    assert "fields" in errors["902"] and "--max-bytes" in errors["903"]
    reports = [json.loads(line) for line in (out / "report.jsonl").read_text("utf-8").splitlines()]
    assert len(reports) == 9 and reports[0]["fields"][0]["field"] == "comment"
    everything = (
        (out / "summary.json").read_text("utf-8") + (out / "report.jsonl").read_text("utf-8") + res.output
    )
    assert leaked(("Elvira", "Quandt", *FIXED_PHI, *planted), everything) == []
    assert not list((out / ".clinideid" / "tmp").iterdir())


def test_csv_stops_reading_at_a_huge_field_and_says_so(tmp_path: Path):
    rows, _ = make_rows(3)
    src = tmp_path / "notes.csv"
    write_csv(src, rows, [b'9,"' + b"x" * 5000 + b'",c,w,en\r\n', b"10,after,c,w,en\r\n"])
    out = tmp_path / "safe"
    res = run(str(src), "-o", str(out), *table_args("--ephemeral-key", "--max-bytes", "1000"))
    assert res.exit_code == 3
    assert [r["id"] for r in read_csv(out / "notes.csv")] == ["1", "2", "3"]
    errors = json.loads((out / "summary.json").read_text("utf-8"))["errors"]
    assert len(errors) == 1 and "rest of the file was not read" in errors[0]["error"]


def test_parquet_round_trip_keeps_types(tmp_path: Path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    import datetime as dt

    rows, planted = make_rows(6)
    for r in rows:
        r["seen"] = dt.datetime(2021, 5, 6, 10, 30)
        r["score"] = 0.5
    src = tmp_path / "notes.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    out = tmp_path / "safe"
    key = write_key(tmp_path)
    res = run(str(src), "-o", str(out), *table_args("--key-file", str(key), "--batch-size", "4"))
    assert res.exit_code == 0, res.output
    table = pq.read_table(out / "notes.parquet")
    assert table.schema.field("id").type == pa.int64() and table.schema.field("seen").type == pa.timestamp(
        "us"
    )
    got = table.to_pylist()
    assert [r["id"] for r in got] == list(range(1, 7)) and got[0]["score"] == 0.5
    assert leaked((*FIXED_PHI, *planted, "Wenzel"), json.dumps(got, default=str)) == []
    # the same rows to CSV give the same texts: the key decides the surrogates
    again = run(str(src), "-o", str(tmp_path / "csv"), "--output-format", "csv",
                *table_args("--key-file", str(key)))  # fmt: skip
    assert again.exit_code == 0, again.output
    assert [r["note"] for r in read_csv(tmp_path / "csv" / "notes.csv")] == [r["note"] for r in got]


def test_csv_rerun_needs_resume_or_overwrite_and_never_writes_beside_the_input(tmp_path: Path):
    rows, _ = make_rows(3)
    src = tmp_path / "notes.csv"
    write_csv(src, rows)
    original = src.read_bytes()
    out = tmp_path / "safe"
    key = write_key(tmp_path)
    assert run(str(src), "-o", str(out), *table_args("--key-file", str(key))).exit_code == 0
    with pytest.raises(ConfigError, match="--resume"):
        run(str(src), "-o", str(out), *table_args("--key-file", str(key)))
    res = run(str(src), "-o", str(out), *table_args("--key-file", str(key), "--resume"))
    assert res.exit_code == 0 and "3 skipped as done" in res.output
    res = run(str(src), "-o", str(out), *table_args("--key-file", str(key), "--overwrite"))
    assert res.exit_code == 0 and "3/3 rows" in res.output
    with pytest.raises(ConfigError, match="input"):
        run(str(src), "-o", str(tmp_path), *table_args("--key-file", str(key)))  # the input's own folder
    with pytest.raises(ConfigError, match="no column 'missing'"):
        run(
            str(src),
            "-o",
            str(tmp_path / "x"),
            "--id-column",
            "missing",
            "--text-column",
            "note",
            "-l",
            "en",
            "--ephemeral-key",
        )
    assert not (tmp_path / "x" / "notes.csv").exists()
    assert src.read_bytes() == original  # the input untouched


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_killed_table_run_resumes_exactly_once(tmp_path: Path, fmt: str):
    if fmt == "parquet":
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
    rows, planted = make_rows(600, seed=5)
    src = tmp_path / f"notes.{fmt}"
    if fmt == "csv":
        write_csv(src, rows)
    else:
        pq.write_table(pa.Table.from_pylist(rows), src)
    out = tmp_path / "safe"
    key = write_key(tmp_path)
    args = [str(src), "-o", str(out), *table_args("--key-file", str(key), "--batch-size", "10")]
    proc = start_deid(*args)
    assert kill_when(proc, lambda: journal_lines(out) >= 40), "the run ended before it could be killed"
    assert not (out / f"notes.{fmt}").exists()  # nothing in place yet: the table appears at the end
    done = subprocess.run(deid_command(*args, "--resume"), capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    if fmt == "csv":
        got = read_csv(out / "notes.csv")
        ids = sorted(int(r["id"]) for r in got)
    else:
        got = pq.read_table(out / "notes.parquet").to_pylist()
        ids = sorted(r["id"] for r in got)
    assert ids == list(range(1, 601))  # every id exactly once
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 600 and summary["failed"] == 0 and summary["skipped"] > 0
    assert len((out / "report.jsonl").read_text("utf-8").splitlines()) == 600
    assert leaked([p for p in planted[:300] if p.isalpha()], " ".join(r["note"] for r in got)) == []
    assert len(list((out / ".clinideid" / "staging").iterdir())) <= 60  # unrecorded parts cleaned up


def test_patient_scope_and_duplicate_ids(tmp_path: Path):
    rows = [
        {"id": "a", "note": "Patient: John Smith seen today.", "patient": "P1"},
        {"id": "b", "note": "Patient: John Smith came back.", "patient": "P1"},
        {"id": "c", "note": "Patient: John Smith, first visit.", "patient": "P2"},
        {"id": "a", "note": "Patient: Elvira Quandt, same id again.", "patient": "P3"},
    ]
    src = tmp_path / "visits.csv"
    write_csv(src, rows)
    out = tmp_path / "safe"
    key = write_key(tmp_path)
    res = run(
        str(src), "-o", str(out), "--id-column", "id", "--text-column", "note", "-l", "en", "--no-progress",
        "--key-file", str(key), "--scope", "patient", "--patient-id", "column:patient", "--drop-fields",
    )  # fmt: skip
    assert res.exit_code == 3, res.output  # the repeated id
    got = {r["id"]: r["note"] for r in read_csv(out / "visits.csv")}
    assert sorted(got) == ["a", "b", "c"]  # the first row of a repeated id is the one written

    def name(note: str) -> str:
        return " ".join(note.replace(",", " ").split()[1:3])

    assert name(got["a"]) != "John Smith" and name(got["a"]) == name(got["b"])  # same patient, same surrogate
    assert name(got["c"]) != name(got["a"])  # another patient, another surrogate
    assert list(read_csv(out / "visits.csv")[0]) == ["id", "note"]  # --drop-fields: the patient column too
    errors = json.loads((out / "summary.json").read_text("utf-8"))["errors"]
    assert errors == [{"id": "a#row-4", "error": "row 4: duplicate id; not written"}]


@pytest.mark.slow
def test_sigterm_writes_what_is_done_and_resume_finishes(tmp_path: Path):
    import signal

    rows, _ = make_rows(400, seed=9)
    src = tmp_path / "notes.csv"
    write_csv(src, rows)
    out = tmp_path / "safe"
    args = [
        str(src),
        "-o",
        str(out),
        *table_args("--key-file", str(write_key(tmp_path)), "--batch-size", "10"),
    ]
    proc = start_deid(*args)
    deadline = time.monotonic() + 180
    while journal_lines(out) < 25 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before it could be stopped"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err.decode()
    assert "--resume" in err.decode()
    stopped = read_csv(out / "notes.csv")  # the table of what was done is in place
    # the current row was finished and written with the rows before it: nothing done is lost
    assert 0 < len(stopped) < 400 and [int(r["id"]) for r in stopped] == list(range(1, len(stopped) + 1))
    done = subprocess.run(deid_command(*args, "--resume"), capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    final = read_csv(out / "notes.csv")
    assert sorted(int(r["id"]) for r in final) == list(range(1, 401))
    assert final[: len(stopped)] == stopped  # what the stopped run wrote is kept as it was


def test_config_and_operator_options_apply_to_tables(tmp_path: Path):
    rows, planted = make_rows(3)
    src = tmp_path / "notes.csv"
    write_csv(src, rows)
    config = tmp_path / "tags.yaml"
    config.write_text(
        "language: en\ndetectors:\n  - type: rules\n    language: en\noperators:\n  default: tag\n",
        encoding="utf-8",
    )
    out = tmp_path / "safe"
    res = run(
        str(src), "-o", str(out), *table_args("--config", str(config), "--operator", "DATE=redact"),
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    got = read_csv(out / "notes.csv")
    assert "[" in got[0]["note"] and "[" in got[0]["comment"]  # tags, no key needed
    assert "05/06/2021" not in got[0]["comment"] and "/" not in got[1]["comment"]  # dates redacted
    assert leaked((*FIXED_PHI, *planted, "Wenzel"), json.dumps(got)) == []


def test_rows_over_the_time_limit_fail_and_the_table_is_still_written(tmp_path: Path):
    rows, planted = make_rows(3, size=20000)
    src = tmp_path / "notes.csv"
    write_csv(src, rows)
    out = tmp_path / "safe"
    res = run(str(src), "-o", str(out), *table_args("--ephemeral-key", "--time-limit", "0.001"))
    assert res.exit_code == 3, res.output
    assert read_csv(out / "notes.csv") == []  # the header only: no row half de-identified
    errors = json.loads((out / "summary.json").read_text("utf-8"))["errors"]
    assert len(errors) == 3 and all("time limit" in e["error"] for e in errors)
    assert leaked((*FIXED_PHI, *planted), (out / "summary.json").read_text("utf-8") + res.output) == []
