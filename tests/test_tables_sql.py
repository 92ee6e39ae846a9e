"""``clinideid deid --from-sql/--to-sql``: SQLite and a real PostgreSQL server, end to end through the CLI."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batch_fixtures import deid_command
from clinideid.cli import _register_commands, app, main
from clinideid.errors import ConfigError
from table_fixtures import (
    FIXED_PHI,
    find_initdb,
    kill_when,
    leaked,
    make_rows,
    postgres_server,
    start_deid,
    write_key,
)

sa = pytest.importorskip("sqlalchemy")

_register_commands()
runner = CliRunner()
QUERY = "SELECT id, note, comment, ward, language FROM notes"


def run(*args: str):
    return runner.invoke(app, ["deid", *args], catch_exceptions=False)


def make_notes(url: str, rows: list[dict], table: str = "notes") -> None:
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    notes = sa.Table(
        table,
        meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("note", sa.Text),
        sa.Column("comment", sa.Text),
        sa.Column("ward", sa.Text),
        sa.Column("language", sa.Text),
    )
    with engine.begin() as conn:
        meta.drop_all(conn)
        meta.create_all(conn)
        conn.execute(sa.insert(notes), rows)
    engine.dispose()


def fetch(url: str, sql: str) -> list[tuple]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql))]
    finally:
        engine.dispose()


def sql_args(in_url: str, out_url: str, table: str, *extra: str) -> list[str]:
    return [
        "--from-sql", in_url, "--query", QUERY, "--id-column", "id", "--text-column", "note",
        "--text-column", "comment", "--to-sql", out_url, "--table", table, "--language", "en",
        "--no-progress", *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def pg_url():
    if find_initdb() is None:
        pytest.skip(
            "PostgreSQL server binaries (initdb) not installed; .ci/run installs the postgresql package"
        )
    with postgres_server() as url:
        yield url


def _round_trip(in_url: str, out_url: str, tmp_path: Path, caplog) -> None:
    rows, planted = make_rows(12)
    rows[3]["note"] = "Patient: Elvira Quandt. " * 200  # over --max-bytes: this row fails, the batch goes on
    rows[5]["note"] = None  # nothing to de-identify: written unchanged
    make_notes(in_url, rows)
    key = write_key(tmp_path)
    with caplog.at_level(logging.DEBUG):
        res = run(
            *sql_args(
                in_url,
                out_url,
                "notes_deid",
                "--key-file",
                str(key),
                "--batch-size",
                "5",
                "--max-bytes",
                "2000",
            )
        )
    assert res.exit_code == 3, res.output  # one row failed
    out = {r[0]: r for r in fetch(out_url, "SELECT id, note, comment, ward, language FROM notes_deid")}
    assert sorted(out) == [r["id"] for r in rows if r["id"] != 4]
    assert out[6][1] is None and out[2][3] == "ward 1" and out[2][4] == "en"  # other columns copied
    written = json.dumps([list(r) for r in out.values()])
    assert leaked((*FIXED_PHI, *planted, "Wenzel"), written) == []
    assert out[1][1].startswith("Patient ")  # the note's shape survives
    report = {
        r[0]: r
        for r in fetch(out_url, "SELECT id, status, error, spans_per_label, report FROM notes_deid_report")
    }
    assert len(report) == 12 and report["4"][1] == "failed" and "--max-bytes" in report["4"][2]
    assert all(report[str(i)][1] == "done" for i in out)
    labels = json.loads(report["1"][3])
    assert labels.get("MEDICALRECORD") == 1 and labels.get("DATE", 0) >= 2
    assert json.loads(report["1"][4])["fields"][0]["field"] == "comment"
    everything = json.dumps([list(r) for r in report.values()]) + res.output + caplog.text
    assert leaked((*FIXED_PHI, "Elvira", "Quandt", *planted), everything) == []
    # a rerun needs --resume, then skips every done id and retries the failed one
    with pytest.raises(ConfigError, match="--resume"):
        run(*sql_args(in_url, out_url, "notes_deid", "--key-file", str(key)))
    again = run(
        *sql_args(in_url, out_url, "notes_deid", "--key-file", str(key), "--resume", "--max-bytes", "2000")
    )
    assert again.exit_code == 3 and "11 skipped as done" in again.output
    assert len(fetch(out_url, "SELECT id FROM notes_deid")) == 11
    with pytest.raises(ConfigError, match="other settings"):  # another operator: inconsistent rows
        run(
            *sql_args(
                in_url, out_url, "notes_deid", "--key-file", str(key), "--resume", "--operator", "default=tag"
            )
        )


def test_sqlite_round_trip_writes_rows_and_reports(tmp_path: Path, caplog):
    url = f"sqlite:///{tmp_path / 'notes.db'}"
    _round_trip(url, url, tmp_path, caplog)


def test_postgres_round_trip_writes_rows_and_reports(pg_url: str, tmp_path: Path, caplog):
    _round_trip(pg_url, pg_url, tmp_path, caplog)


def test_postgres_password_never_printed(pg_url: str, tmp_path: Path, capsys):
    make_notes(pg_url, make_rows(3)[0], "pw_notes")
    secret_url = pg_url.replace("postgres@", "postgres:Sup3rS3cretPw@")  # trust auth: any password goes
    res = run(
        "--from-sql", secret_url, "--query", "SELECT id, note FROM pw_notes", "--id-column", "id",
        "--text-column", "note", "--to-sql", secret_url, "--table", "pw_notes_deid", "-l", "en",
        "--ephemeral-key", "--no-progress",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "Sup3rS3cretPw" not in res.output and "***" in res.output
    with pytest.raises(SystemExit) as exc:
        main(["deid", "--from-sql", secret_url, "--query", "SELECT id, note FROM no_such_table", "--id-column",
              "id", "--text-column", "note", "--to-sql", secret_url, "--table", "x_deid", "-l", "en",
              "--ephemeral-key"])  # fmt: skip
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "no_such_table" in err and "***" in err and "Sup3rS3cretPw" not in err


def test_output_table_that_is_the_input_is_refused(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'notes.db'}"
    make_notes(url, make_rows(2)[0])
    with pytest.raises(SystemExit) as exc:
        main(["deid", *sql_args(url, url, "notes", "--ephemeral-key")])
    assert exc.value.code == 2
    assert fetch(url, "SELECT count(*) FROM notes") == [(2,)]
    with pytest.raises(SystemExit) as exc:
        main(["deid", *sql_args(url, url, "out", "--report-table", "notes", "--ephemeral-key")])
    assert exc.value.code == 2
    relative = f"sqlite:///{os.path.relpath(tmp_path / 'notes.db')}"  # the same file, named otherwise
    with pytest.raises(SystemExit) as exc:
        main(["deid", *sql_args(url, relative, "notes", "--ephemeral-key")])
    assert exc.value.code == 2


def test_other_columns_dropped_on_request(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'notes.db'}"
    make_notes(url, make_rows(3)[0])
    res = run(
        *sql_args(url, url, "slim", "--ephemeral-key", "--drop-fields", "--language-column", "language")
    )
    assert res.exit_code == 0, res.output
    columns = [r[1] for r in fetch(url, "PRAGMA table_info(slim)")]
    assert columns == ["id", "note", "comment", "language"]


def _kill_and_resume(in_url: str, out_url: str, tmp_path: Path, table: str) -> None:
    rows, planted = make_rows(600, seed=3)
    make_notes(in_url, rows)
    key = write_key(tmp_path)
    args = sql_args(in_url, out_url, table, "--key-file", str(key), "--batch-size", "10")

    def written() -> int:
        try:
            return fetch(out_url, f"SELECT count(*) FROM {table}")[0][0]
        except sa.exc.SQLAlchemyError:
            return 0  # not created yet

    proc = start_deid(*args)
    assert kill_when(proc, lambda: written() >= 30), "the run ended before it could be killed"
    after_kill = written()
    assert 0 < after_kill < 600 and after_kill % 10 == 0  # whole batches only
    assert fetch(out_url, f"SELECT count(*) FROM {table}_report")[0][0] == after_kill
    done = subprocess.run(deid_command(*args, "--resume"), capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    ids = [r[0] for r in fetch(out_url, f"SELECT id FROM {table}")]
    assert sorted(ids) == list(range(1, 601))  # every id exactly once
    reports = fetch(out_url, f"SELECT id, status FROM {table}_report")
    assert len(reports) == 600 and {s for _, s in reports} == {"done"}
    assert f"{after_kill} skipped as done" in done.stdout.decode()
    texts = " ".join(r[0] for r in fetch(out_url, f"SELECT note FROM {table}"))
    assert leaked([p for p in planted[:300] if p.isalpha()], texts) == []


@pytest.mark.slow
def test_sqlite_killed_run_resumes_exactly_once(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'notes.db'}"
    _kill_and_resume(url, f"sqlite:///{tmp_path / 'out.db'}", tmp_path, "notes_deid")


@pytest.mark.slow
def test_postgres_killed_run_resumes_exactly_once(pg_url: str, tmp_path: Path):
    _kill_and_resume(pg_url, pg_url, tmp_path, "killed_deid")


def test_missing_extra_names_it(monkeypatch):
    import sys

    from clinideid.batch import sql, table_files

    monkeypatch.setitem(sys.modules, "sqlalchemy", None)
    with pytest.raises(ConfigError, match=r"clinideid\[sql\]"):
        sql.masked("sqlite://")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError, match=r"clinideid\[parquet\]"):
        table_files.ParquetSource(Path("x.parquet"))


def test_pages_never_skip_rows_that_share_an_id(tmp_path: Path):
    """Paging by id (``id > last``) would skip the rest of a repeated id at a page's end; they are read."""
    from clinideid.batch.sql import SqlSource

    url = f"sqlite:///{tmp_path / 'dup.db'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE t (id INTEGER, note TEXT)"))
        conn.execute(sa.text("INSERT INTO t VALUES (1,'a'),(2,'b'),(2,'c'),(2,'d'),(3,'e'),(NULL,'f')"))
    engine.dispose()
    rows = list(SqlSource(url, "SELECT id, note FROM t", "id", page_rows=2).rows())
    assert rows[0].error is not None and "NULL" in rows[0].error  # the row without an id is counted
    assert sorted(r.values["note"] for r in rows[1:]) == ["a", "b", "c", "d", "e"]


def test_postgres_value_errors_never_quote_row_values(pg_url: str, tmp_path: Path, capsys):
    """A database error about a value (here a text copied into an integer column) is reported by type only."""
    rows, _ = make_rows(3)
    for r in rows:
        r["ward"] = "Elvira Quandt"  # a name in a column copied verbatim
    make_notes(pg_url, rows, "typed_notes")
    engine = sa.create_engine(pg_url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS typed_deid"))
        conn.execute(sa.text("CREATE TABLE typed_deid (id INTEGER PRIMARY KEY, note TEXT, ward INTEGER)"))
    engine.dispose()
    with pytest.raises(SystemExit) as exc:
        main(["deid", "--from-sql", pg_url, "--query", "SELECT id, note, ward FROM typed_notes", "--id-column",
              "id", "--text-column", "note", "--to-sql", pg_url, "--table", "typed_deid", "-l", "en",
              "--ephemeral-key", "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "SQLSTATE 22P02" in err, err
    assert "Elvira" not in err and "Quandt" not in err
    assert fetch(pg_url, "SELECT count(*) FROM typed_deid") == [(0,)]  # the failed batch left nothing
