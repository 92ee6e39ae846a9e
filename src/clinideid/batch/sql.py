"""SQL databases through SQLAlchemy: rows of a query in, de-identified rows and a report table out.

Reading pages through the query by its id column (``WHERE id > :last ORDER BY id LIMIT n``): each page is a
short read, so a database that is both input and output (SQLite) is never locked against the writer, and
the order is the same in every run. Each batch of rows is written to the output table and ``<table>_report``
in one transaction: a crash leaves whole batches or nothing. A resumed run skips ids already in the output
table; a failed row has only a report row and is tried again. Messages show URLs with the password hidden and
never a database's error text that could quote row values.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

from clinideid.batch.tables import RowOutcome, SourceRow, count_by, missing_extra
from clinideid.errors import ConfigError

DEFAULT_PAGE_ROWS = 1000
REPORT_SUFFIX = "_report"


def _sqlalchemy():
    try:
        import sqlalchemy
    except ImportError:
        raise missing_extra("sql", "sqlalchemy") from None
    return sqlalchemy


def masked(url: str) -> str:
    """The URL with its password hidden, for messages."""
    sa = _sqlalchemy()
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(an unreadable database URL)"


def db_error(exc: BaseException, what: str, url: str) -> ConfigError:
    """A PHI-free message for a database error: its type and SQLSTATE, plus its first line only for errors
    about the connection or the schema (a value error's text can quote a row: ``invalid input … 'Smith'``)."""
    sa = _sqlalchemy()
    orig = getattr(exc, "orig", None) or exc
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    detail = ""
    if isinstance(exc, sa.exc.OperationalError | sa.exc.ProgrammingError | sa.exc.NoSuchTableError):
        text = str(orig).strip()
        first = text.splitlines()[0] if text else ""
        password = sa.engine.make_url(url).password if "://" in url else None
        if password:
            first = first.replace(str(password), "***")
        detail = f": {first[:300]}" if first else ""
    code_text = f", SQLSTATE {code}" if code else ""
    return ConfigError(f"{what} failed on {masked(url)} ({type(orig).__name__}{code_text}){detail}")


def create_engine(url: str):
    sa = _sqlalchemy()
    try:
        parsed = sa.engine.make_url(url)
    except Exception:
        raise ConfigError(
            "not a database URL; use e.g. sqlite:///notes.db or postgresql+psycopg://user@host/db"
        ) from None
    try:
        return sa.create_engine(parsed)
    except ImportError as exc:
        driver = parsed.get_driver_name()
        extra = "sql"
        raise ConfigError(
            f"no database driver {driver!r} for {masked(url)} ({exc.name or exc}); install it, e.g. "
            f"pip install 'clinideid[{extra}]' for PostgreSQL (psycopg)"
        ) from None
    except Exception as exc:
        raise ConfigError(f"cannot use the database URL {masked(url)} ({type(exc).__name__})") from None


def same_database(a: str, b: str) -> bool:
    """Whether two URLs name the same database (SQLite files compared by their resolved path)."""
    sa = _sqlalchemy()

    def where(url: str) -> tuple:
        u = sa.engine.make_url(url)
        database = u.database
        if u.get_backend_name() == "sqlite" and database and database != ":memory:":
            database = os.path.realpath(database)
        return (u.get_backend_name(), u.host, u.port, database)

    return where(a) == where(b)


def _table_words(query: str) -> set[str]:
    """Lower-cased names that follow FROM, JOIN, UPDATE or INTO in a query (quotes and schemas stripped)."""
    names = re.findall(r"\b(?:from|join|into|update)\s+([\w.\"`\[\]]+)", query, flags=re.IGNORECASE)
    return {
        n.replace('"', "").replace("`", "").replace("[", "").replace("]", "").split(".")[-1].lower()
        for n in names
    }


def check_not_input(query: str, in_url: str, out_url: str, tables: Sequence[str]) -> None:
    """``ConfigError`` when an output table is a table the input query reads (in the same database)."""
    if not same_database(in_url, out_url):
        return
    read = _table_words(query)
    for table in tables:
        if table.split(".")[-1].lower() in read:
            raise ConfigError(
                f"the output table {table!r} is a table the --query reads: its rows would be overwritten or "
                "read back; choose another --table / --report-table"
            )


class SqlSource:
    """The rows of a SELECT query, read page by page in the order of its id column."""

    def __init__(self, url: str, query: str, id_column: str, page_rows: int = DEFAULT_PAGE_ROWS) -> None:
        sa = _sqlalchemy()
        if not query.strip():
            raise ConfigError("--from-sql needs --query, e.g. --query 'SELECT id, note FROM notes'")
        self.url = url
        self.description = f"the query on {masked(url)}"
        self.query = query.strip().rstrip(";")
        self.id_column = id_column
        self.page_rows = page_rows
        self.engine = create_engine(url)
        try:
            with self.engine.connect() as conn:
                result = conn.execute(sa.text(f"SELECT * FROM ({self.query}) AS clinideid_q WHERE 1 = 0"))
                self.columns = list(result.keys())
        except sa.exc.SQLAlchemyError as exc:
            raise db_error(exc, "the --query", url) from None

    def _quoted_id(self) -> str:
        return "clinideid_q." + self.engine.dialect.identifier_preparer.quote(self.id_column)

    def rows(self) -> Iterator[SourceRow]:
        sa = _sqlalchemy()
        column = self._quoted_id()
        base = f"SELECT * FROM ({self.query}) AS clinideid_q"
        try:
            with self.engine.connect() as conn:
                nulls = conn.execute(
                    sa.text(f"SELECT COUNT(*) FROM ({self.query}) AS clinideid_q WHERE {column} IS NULL")
                ).scalar()
        except sa.exc.SQLAlchemyError as exc:
            raise db_error(exc, "the --query", self.url) from None
        if nulls:
            yield SourceRow(0, None, f"{nulls} row(s) of the query have an empty (NULL) id column; not read")
        number = 0
        last: Any = None
        first_page = sa.text(f"{base} WHERE {column} IS NOT NULL ORDER BY {column} LIMIT :n")
        next_page = sa.text(f"{base} WHERE {column} > :last ORDER BY {column} LIMIT :n")
        same_id = sa.text(f"{base} WHERE {column} = :last")
        while True:
            try:
                with self.engine.connect() as conn:
                    if last is None:
                        result = conn.execute(first_page, {"n": self.page_rows})
                    else:
                        result = conn.execute(next_page, {"last": last, "n": self.page_rows})
                    page = [dict(r._mapping) for r in result]
                    if len(page) == self.page_rows:
                        # rows sharing the page's last id may run past the page: read them all now, or the
                        # next page (id > last) would skip them; the batch then reports them as duplicates
                        last = page[-1][self.id_column]
                        seen = sum(1 for v in page if v[self.id_column] == last)
                        page += [dict(r._mapping) for r in conn.execute(same_id, {"last": last})][seen:]
            except sa.exc.SQLAlchemyError as exc:
                raise db_error(exc, "reading the --query", self.url) from None
            for values in page:
                number += 1
                yield SourceRow(number, values)
            if len(page) < self.page_rows:
                return


def _sql_type(values: list[Any]):
    sa = _sqlalchemy()
    sample = next((v for v in values if v is not None), None)
    if isinstance(sample, bool):
        return sa.Boolean()
    if isinstance(sample, int):
        return sa.BigInteger()
    if isinstance(sample, float):
        return sa.Float()
    if isinstance(sample, decimal.Decimal):
        return sa.Numeric()
    if isinstance(sample, _dt.datetime):
        return sa.DateTime()
    if isinstance(sample, _dt.date):
        return sa.Date()
    if isinstance(sample, bytes | bytearray | memoryview):
        return sa.LargeBinary()
    return sa.Text()


def _split(name: str) -> tuple[str | None, str]:
    schema, _, table = name.rpartition(".")
    return (schema or None), table


class SqlTableSink:
    """The de-identified rows in ``table`` and one report row per input row in ``report_table``."""

    def __init__(
        self,
        url: str,
        table: str,
        report_table: str | None,
        id_column: str,
        text_columns: Sequence[str],
        settings: str,
        resume: bool = False,
        overwrite: bool = False,
    ) -> None:
        if not table:
            raise ConfigError("--to-sql needs --table, the name of the output table")
        if resume and overwrite:
            raise ConfigError("give either --resume or --overwrite, not both")
        self.url = url
        self.table_name = table
        self.report_name = report_table or table + REPORT_SUFFIX
        if self.report_name == self.table_name:
            raise ConfigError("--report-table must differ from --table")
        self.id_column = id_column
        self.text_columns = list(text_columns)
        self.settings = settings
        self.resume = resume
        self.overwrite = overwrite
        self.description = f"table {table} on {masked(url)}"
        self.engine = create_engine(url)
        self.columns: list[str] = []
        self.table = None
        self.report = None
        self.run_started = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._wrote = {"done": 0, "failed": 0}

    # -- opening -------------------------------------------------------------------------------------------
    def open(self, columns: Sequence[str]) -> set[str]:
        sa = _sqlalchemy()
        self.columns = list(columns)
        try:
            self.report = self._report_table()
            self.table = self._reflect(self.table_name)
            with self.engine.begin() as conn:
                self.report.create(conn, checkfirst=True)
                has_rows = self._has_rows(conn)
                if has_rows and self.overwrite:
                    if self.table is not None:
                        conn.execute(self.table.delete())
                    conn.execute(self.report.delete())
                elif has_rows and not self.resume:
                    raise ConfigError(
                        f"the output table {self.table_name} (or its report table) holds an earlier run; pass "
                        "--resume to finish it or --overwrite to replace its rows (or choose another --table)"
                    )
                elif has_rows:
                    self._check_settings(conn)
                if self.table is not None:
                    self._check_columns()
                    return {str(v) for v in conn.execute(sa.select(self.table.c[self.id_column])).scalars()}
        except sa.exc.SQLAlchemyError as exc:
            raise db_error(exc, "preparing the output tables", self.url) from None
        return set()

    def _has_rows(self, conn) -> bool:
        sa = _sqlalchemy()
        for table in (self.table, self.report):
            if (
                table is not None
                and conn.execute(sa.select(sa.literal(1)).select_from(table).limit(1)).first()
            ):
                return True
        return False

    def _check_settings(self, conn) -> None:
        sa = _sqlalchemy()
        found = conn.execute(
            sa.select(self.report.c.settings).where(self.report.c.settings != self.settings).limit(1)
        ).first()
        if found is not None:
            raise ConfigError(
                "--resume with other settings than the run being resumed (key, language, config, operators, "
                "columns differ): its rows would be inconsistent; resume with the same options, or write to "
                "another --table"
            )

    def _reflect(self, name: str):
        sa = _sqlalchemy()
        schema, table = _split(name)
        if not sa.inspect(self.engine).has_table(table, schema=schema):
            return None
        return sa.Table(table, sa.MetaData(), schema=schema, autoload_with=self.engine)

    def _check_columns(self) -> None:
        assert self.table is not None
        missing = [c for c in self.columns if c not in self.table.c]
        if missing:
            raise ConfigError(
                f"the output table {self.table_name} exists without column(s) {', '.join(missing)}; add them, "
                "pass --drop-fields to write only the id and text columns, or choose another --table"
            )

    def _report_table(self):
        sa = _sqlalchemy()
        schema, name = _split(self.report_name)
        existing = self._reflect(self.report_name)
        if existing is not None:
            return existing
        return sa.Table(
            name,
            sa.MetaData(),
            sa.Column("id", sa.String(512), primary_key=True),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("error", sa.Text),
            sa.Column("language", sa.String(16)),
            sa.Column("chars", sa.Integer),
            sa.Column("seconds", sa.Float),
            sa.Column("n_spans", sa.Integer),
            sa.Column("spans_per_label", sa.Text),
            sa.Column("spans_per_detector", sa.Text),
            sa.Column("spans_per_operator", sa.Text),
            sa.Column("warnings", sa.Text),
            sa.Column("report", sa.Text),  # the row's report.jsonl line: every replacement, no original text
            sa.Column("settings", sa.String(64)),
            sa.Column("run_started", sa.String(32)),
            schema=schema,
        )

    def _create_table(self, rows: list[dict[str, Any]]) -> None:
        sa = _sqlalchemy()
        schema, name = _split(self.table_name)
        cols = []
        for c in self.columns:
            kind = sa.Text() if c in self.text_columns else _sql_type([r.get(c) for r in rows])
            cols.append(sa.Column(c, kind, primary_key=(c == self.id_column)))
        self.table = sa.Table(name, sa.MetaData(), *cols, schema=schema)

    # -- per batch -----------------------------------------------------------------------------------------
    def _report_row(self, outcome: RowOutcome) -> dict[str, Any]:
        entry = outcome.entry
        report = entry.get("report") or {}
        return {
            "id": outcome.id[:512],
            "status": entry["status"],
            "error": entry.get("error"),
            "language": report.get("language"),
            "chars": entry.get("chars"),
            "seconds": entry.get("seconds"),
            "n_spans": report.get("n_spans"),
            "spans_per_label": json.dumps(count_by(report, "label")) if report else None,
            "spans_per_detector": json.dumps(count_by(report, "source")) if report else None,
            "spans_per_operator": json.dumps(count_by(report, "operator")) if report else None,
            "warnings": json.dumps(entry.get("warnings", [])),
            "report": json.dumps(report, ensure_ascii=False) if report else None,
            "settings": self.settings,
            "run_started": self.run_started,
        }

    def write_batch(self, outcomes: Sequence[RowOutcome]) -> None:
        sa = _sqlalchemy()
        rows = [o.values or {} for o in outcomes if o.done]
        reports = [self._report_row(o) for o in outcomes]
        try:
            with self.engine.begin() as conn:
                if rows:
                    if self.table is None:
                        self._create_table(rows)
                        self.table.create(conn, checkfirst=True)
                    conn.execute(sa.insert(self.table), [{c: r.get(c) for c in self.columns} for r in rows])
                ids = [r["id"] for r in reports]
                conn.execute(sa.delete(self.report).where(self.report.c.id.in_(ids)))
                conn.execute(sa.insert(self.report), reports)
        except sa.exc.SQLAlchemyError as exc:
            raise db_error(exc, "writing a batch of rows", self.url) from None
        for o in outcomes:
            self._wrote[o.entry["status"]] += 1

    # -- end -----------------------------------------------------------------------------------------------
    def close(self, finished: bool, skipped: int) -> dict[str, Any]:
        """The summary over every run into these tables (counted from the report table)."""
        sa = _sqlalchemy()
        try:
            with self.engine.connect() as conn:
                counts = dict(
                    conn.execute(
                        sa.select(self.report.c.status, sa.func.count()).group_by(self.report.c.status)
                    ).all()
                )
                errors = [
                    {"id": i, "error": e}
                    for i, e in conn.execute(
                        sa.select(self.report.c.id, self.report.c.error)
                        .where(self.report.c.status == "failed")
                        .order_by(self.report.c.id)
                        .limit(100)
                    )
                ]
                per_label: dict[str, int] = {}
                for (value,) in conn.execute(
                    sa.select(self.report.c.spans_per_label).where(self.report.c.status == "done")
                ):
                    for label, n in json.loads(value or "{}").items():
                        per_label[label] = per_label.get(label, 0) + n
        except sa.exc.SQLAlchemyError as exc:
            raise db_error(exc, "reading the report table", self.url) from None
        finally:
            self.engine.dispose()
        return {
            "documents": counts.get("done", 0) + counts.get("failed", 0),
            "succeeded": counts.get("done", 0),
            "failed": counts.get("failed", 0),
            "ignored": 0,
            "skipped": skipped,
            "complete": finished and not counts.get("failed", 0),
            "spans_per_label": dict(sorted(per_label.items())),
            "this_run": dict(self._wrote),
            "errors": errors,
        }
