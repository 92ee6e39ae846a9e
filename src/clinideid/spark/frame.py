"""Driver side: de-identify a Spark DataFrame of notes into a de-identified DataFrame and a report DataFrame.

The rows go through ``mapInPandas`` (see ``clinideid.spark.worker``) once; the result, with one status per
row, is persisted so that writing the data and the report does not de-identify everything twice. The key
reaches the executors as a broadcast variable: the query plan, the task closures and the logs hold only
the broadcast's id.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from clinideid.batch.records import PASS_THROUGH, FieldPolicy
from clinideid.errors import ConfigError
from clinideid.spark import worker
from clinideid.spark.worker import SparkDeidSettings

if TYPE_CHECKING:
    from pyspark.broadcast import Broadcast
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

#: columns of the report DataFrame, one row per input row (``report`` is the ``report.jsonl`` line)
REPORT_COLUMNS = ("id", "status", "error", "chars", "seconds", "spans_per_label", "warnings", "report")


@dataclass
class SparkDeidResult:
    """The de-identified rows (``data``: rows that succeeded, same columns as the input less the dropped
    ones) and one report row per input row (``report``). ``close()`` releases the cache and the key."""

    data: DataFrame
    report: DataFrame
    _combined: DataFrame
    _key: Broadcast | None = field(default=None, repr=False)

    def summary(self) -> dict[str, Any]:
        """Counts per status and spans per label over the whole job (runs a small aggregation)."""
        from pyspark.sql import functions as F

        statuses = {r["status"]: r["count"] for r in self.report.groupBy("status").count().collect()}
        labels = (
            self.report.select(F.explode("spans_per_label").alias("label", "n"))
            .groupBy("label")
            .agg(F.sum("n").alias("n"))
            .collect()
        )
        return {
            "documents": sum(statuses.values()),
            "succeeded": statuses.get("done", 0),
            "failed": statuses.get("failed", 0),
            "spans_per_label": dict(sorted((r["label"], int(r["n"])) for r in labels)),
        }

    def close(self) -> None:
        """Drop the cached rows and destroy the key's broadcast (the DataFrames cannot be used after)."""
        self._combined.unpersist()
        if self._key is not None:
            self._key.destroy()
            self._key = None


def output_columns(
    columns: list[str], settings: SparkDeidSettings, policy: FieldPolicy
) -> tuple[list[str], tuple[str, ...]]:
    """(columns of the de-identified DataFrame, string columns de-identified with the note).

    As for JSONL records: the id and language columns pass through, kept columns are copied verbatim,
    every other column is de-identified with the note, or dropped with ``drop_others``.
    """
    passed = {settings.id_column, settings.text_column, *PASS_THROUGH}
    if settings.language_column:
        passed.add(settings.language_column)
    out: list[str] = []
    fields: list[str] = []
    for name in columns:
        if name == settings.corrupt_column:
            continue
        if name in passed or name in policy.keep:
            out.append(name)
        elif not policy.drop_others:
            out.append(name)
            fields.append(name)
    return out, tuple(fields)


def check_schema(df: DataFrame, settings: SparkDeidSettings, policy: FieldPolicy) -> tuple[str, ...]:
    """``ConfigError`` for a missing id/text column or a column that cannot be de-identified; returns the
    string columns to de-identify with the note."""
    from pyspark.sql.types import StringType

    types = {f.name: f.dataType for f in df.schema.fields}
    for role, name in (
        ("--id-column", settings.id_column),
        ("--text-column", settings.text_column),
        ("--language-column", settings.language_column),
        ("--patient-column", settings.patient_column),
    ):
        if name is not None and name not in types:
            raise ConfigError(f"{role} {name!r} is not a column of the input (columns: {', '.join(types)})")
    if not isinstance(types[settings.text_column], StringType):
        raise ConfigError(f"the text column {settings.text_column!r} is not a string column")
    unknown = sorted(policy.keep - set(types))
    if unknown:
        raise ConfigError(f"--keep-column names columns the input does not have: {', '.join(unknown)}")
    clash = [n for n in types if n.startswith("_clinideid_")]
    if clash:
        raise ConfigError(
            "input columns may not start with '_clinideid_' (reserved for the job's bookkeeping)"
        )
    _, fields = output_columns(list(types), settings, policy)
    refused = [n for n in fields if not isinstance(types[n], StringType)]
    if refused:
        raise ConfigError(
            f"column(s) {', '.join(refused)} are not strings and cannot be de-identified: pass "
            "--keep-column NAME to copy one verbatim (only if it holds no PHI) or --drop-columns"
        )
    return fields


def deidentify_dataframe(
    df: DataFrame,
    settings: SparkDeidSettings,
    key: bytes | None = None,
    policy: FieldPolicy | None = None,
) -> SparkDeidResult:
    """De-identify the rows of ``df``: the text column, and every other string column with it.

    ``settings.fields`` is filled in from the schema and ``policy`` (columns kept verbatim or dropped).
    Raises ``ConfigError`` before any work for a bad schema, config or key. Nothing runs until an action
    on the result (a write, ``collect``, ``summary``).
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    policy = policy or FieldPolicy()
    corrupt = settings.corrupt_column if settings.corrupt_column in df.columns else None
    settings = replace(settings, corrupt_column=corrupt)
    fields = check_schema(df, settings, policy)
    settings = replace(settings, fields=fields)
    worker.cached_pipeline(settings, key)  # a bad config, model or key fails here, before any job
    out_cols, _ = output_columns(df.columns, settings, policy)

    spark = df.sparkSession
    broadcast = spark.sparkContext.broadcast(key) if key is not None else None
    schema = _combined_schema(df)
    combined = df.mapInPandas(worker.batch_function(settings, broadcast), schema).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    data = combined.where(F.col(worker.STATUS) == "done").select(*[F.col(_quote(c)) for c in out_cols])
    report = combined.select(
        F.col(_quote(settings.id_column)).cast("string").alias("id"),
        F.col(worker.STATUS).alias("status"),
        F.col(worker.ERROR).alias("error"),
        F.col(worker.CHARS).alias("chars"),
        F.col(worker.SECONDS).alias("seconds"),
        F.col(worker.SPANS_PER_LABEL).alias("spans_per_label"),
        F.col(worker.WARNINGS).alias("warnings"),
        F.col(worker.REPORT).alias("report"),
    )
    return SparkDeidResult(data, report, combined, broadcast)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _combined_schema(df: DataFrame) -> StructType:
    """The input's columns, every one nullable (a failed row's text and fields become null), then the
    worker's bookkeeping columns."""
    from pyspark.sql.types import (
        ArrayType,
        DoubleType,
        IntegerType,
        LongType,
        MapType,
        StringType,
        StructField,
        StructType,
    )

    columns = [StructField(f.name, f.dataType, True, f.metadata) for f in df.schema.fields]
    return StructType(
        [
            *columns,
            StructField(worker.STATUS, StringType(), False),
            StructField(worker.ERROR, StringType(), True),
            StructField(worker.REPORT, StringType(), True),
            StructField(worker.SPANS_PER_LABEL, MapType(StringType(), IntegerType()), True),
            StructField(worker.CHARS, LongType(), True),
            StructField(worker.SECONDS, DoubleType(), True),
            StructField(worker.WARNINGS, ArrayType(StringType()), True),
        ]
    )
