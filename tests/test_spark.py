"""De-identification on Apache Spark: a real local Spark session (``local[2]``), one for the whole module.

The Spark job must give exactly what ``clinideid deid`` gives for the same records and key.
"""

import json
import logging
import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("no Java runtime (apt-get install default-jre-headless)", allow_module_level=True)

import pandas as pd  # noqa: E402
from pyspark import cloudpickle  # noqa: E402  (the copy Spark pickles closures with)
from pyspark.sql import SparkSession  # noqa: E402

import clinideid  # noqa: E402
from clinideid.batch.records import FieldPolicy  # noqa: E402
from clinideid.cli import _register_commands, app  # noqa: E402
from clinideid.errors import ConfigError, InputError  # noqa: E402
from clinideid.spark import SparkDeidSettings, deidentify_dataframe  # noqa: E402
from clinideid.spark.io import CORRUPT_COLUMN, read_table  # noqa: E402
from clinideid.spark.worker import (  # noqa: E402
    ERROR,
    REPORT,
    STATUS,
    batch_function,
    cached_pipeline,
    deidentify_frame,
)
from clinideid.transform.keys import generate_key, load_key  # noqa: E402

_register_commands()
runner = CliRunner()

# invented notes; ``contact`` is a second string column, de-identified with the note
RECORDS = [
    {
        "contact": "Mary Smith",
        "id": "n1",
        "patient_id": "p-17",
        "text": "Patient John Smith, DOB 01/02/1950, MRN 1234567, seen at St. Mary's Hospital, Boston.\n"
        "Phone (617) 555-0199. Wife Mary Smith present.",
    },
    {
        "contact": "Dr. Sarah Thompson",
        "id": "n2",
        "patient_id": "p-17",
        "text": "Seen on 11/02/2023 by Dr. Sarah Thompson. Mr Smith reports chest pain since Monday.",
    },
    {"contact": None, "id": "n3", "patient_id": "p-18", "text": "No PHI here: afebrile, lungs clear."},
    {
        "contact": "",
        "id": "n4",
        "patient_id": None,
        "text": "Admitted 03/14/2021 to Boston Medical Center, room 12.",
    },
]
#: PHI in the notes above (surrogates are random per key, so a surrogate may repeat a common name: checked by
#: the replaced offsets, not by the absence of the string)
PHI = ("John Smith", "1234567", "555-0199", "Sarah Thompson", "Mary Smith")


def covered(text: str, replacements: list[dict], phi: str) -> bool:
    """Whether every occurrence of ``phi`` in ``text`` lies inside a replaced span."""
    starts = [i for i in range(len(text)) if text.startswith(phi, i)]
    return all(any(r["start"] <= i and i + len(phi) <= r["end"] for r in replacements) for i in starts)


SCHEMA = "contact string, id string, patient_id string, text string"


@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("clinideid-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def key_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("key") / "secret.key"
    assert runner.invoke(app, ["keygen", str(path)]).exit_code == 0
    return path


def write_jsonl(path: Path, records: list[dict], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) for r in records] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_parts(folder: Path) -> list[dict]:
    """The rows of a folder of JSON-lines part files written by Spark."""
    return [
        json.loads(line) for f in sorted(folder.glob("part-*.json")) for line in f.read_text().splitlines()
    ]


def local_cli(tmp_path: Path, source: Path, key_file: Path) -> tuple[dict, dict]:
    """Texts/records and reports by id from ``clinideid deid`` on a JSONL file."""
    out = tmp_path / "local-out"
    res = runner.invoke(
        app,
        [
            "deid",
            str(source),
            "-o",
            str(out),
            "--language",
            "en",
            "--key-file",
            str(key_file),
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert res.exit_code in (0, 3), res.output
    records = [json.loads(x) for x in (out / source.name).read_text("utf-8").splitlines()]
    reports = [json.loads(x) for x in (out / "report.jsonl").read_text("utf-8").splitlines()]
    return {r["id"]: r for r in records}, {r["id"]: r for r in reports}


def test_spark_output_is_exactly_the_local_cli_output(spark, key_file, tmp_path):
    source = write_jsonl(tmp_path / "notes.jsonl", RECORDS)
    expected, expected_reports = local_cli(tmp_path, source, key_file)

    df = spark.createDataFrame([tuple(r.values()) for r in RECORDS], SCHEMA).repartition(2)
    settings = SparkDeidSettings("id", "text", language="en", patient_column="patient_id")
    result = deidentify_dataframe(df, settings, load_key(key_file))
    try:
        rows = {r["id"]: r.asDict() for r in result.data.collect()}
        reports = {r["id"]: r.asDict() for r in result.report.collect()}
    finally:
        result.close()

    assert set(rows) == set(expected) == {"n1", "n2", "n3", "n4"}
    for doc_id, record in expected.items():
        assert rows[doc_id]["text"] == record["text"]
        assert rows[doc_id]["contact"] == record.get("contact")
        assert rows[doc_id]["patient_id"] == record.get("patient_id")
        local_report = dict(expected_reports[doc_id])
        local_report.pop("encoding")  # the CLI decoded bytes; Spark rows are text already
        assert json.loads(reports[doc_id]["report"]) == local_report
        assert reports[doc_id]["status"] == "done" and reports[doc_id]["error"] is None
    assert rows["n1"]["text"] != RECORDS[0]["text"]
    for record in RECORDS:
        report = json.loads(reports[record["id"]]["report"])
        for phi in PHI:
            assert covered(record["text"], report["replacements"], phi), (record["id"], phi)
        contact = [f["replacements"] for f in report["fields"] if f["field"] == "contact"]
        if record["contact"]:
            name = record["contact"].removeprefix("Dr. ")  # the title stays
            assert contact and covered(record["contact"], contact[0], name)
    assert "1234567" not in rows["n1"]["text"] and "555-0199" not in rows["n1"]["text"]
    # counts per label add up to the replacements of the note and its fields
    report = json.loads(reports["n1"]["report"])
    n_replacements = len(report["replacements"]) + sum(len(f["replacements"]) for f in report["fields"])
    assert sum(reports["n1"]["spans_per_label"].values()) == n_replacements
    assert reports["n1"]["chars"] == len(RECORDS[0]["text"])


def test_failing_rows_are_reported_without_phi_and_the_job_goes_on(spark, key_file, caplog):
    rows = [
        ("n1", RECORDS[0]["text"], "en"),
        ("bad-nul", "John Smith\x00Quasimodo", "en"),
        ("bad-null", None, "en"),
        ("bad-lang", "Patient John Smith", "xx"),
        ("too-big", "Patient John Smith " * 20, None),
        (None, "Patient John Smith", "en"),
    ]
    df = spark.createDataFrame(rows, "note_id string, body string, lang string")
    settings = SparkDeidSettings("note_id", "body", language="en", language_column="lang", max_bytes=200)
    with caplog.at_level(logging.DEBUG, logger="clinideid"):
        result = deidentify_dataframe(df, settings, load_key(key_file))
        try:
            data = {r["note_id"]: r for r in result.data.collect()}
            report = {r["id"]: r for r in result.report.collect()}
            summary = result.summary()
        finally:
            result.close()
    assert set(data) == {"n1"}
    assert len(report) == 6 and summary["documents"] == 6
    assert summary["succeeded"] == 1 and summary["failed"] == 5
    errors = {k: v["error"] for k, v in report.items() if v["status"] == "failed"}
    assert "NUL" in errors["bad-nul"]
    assert "empty" in errors["bad-null"]
    assert "unsupported language" in errors["bad-lang"]
    assert "over the limit of 200 bytes" in errors["too-big"]
    assert "no id" in errors[None]
    assert all(report[k]["report"] is None for k in errors)
    for phi in ("John", "Smith", "Quasimodo"):
        assert phi not in json.dumps(errors) + caplog.text


def test_key_is_not_in_the_plan_or_the_task_closure(spark, key_file):
    key = load_key(key_file)
    df = spark.createDataFrame([tuple(r.values()) for r in RECORDS[:1]], SCHEMA)
    settings = SparkDeidSettings("id", "text", language="en")
    result = deidentify_dataframe(df, settings, key)
    try:
        plans = result.data._jdf.queryExecution().toString() + result.report._jdf.queryExecution().toString()
        closure = cloudpickle.dumps(batch_function(settings, result._key))
        # pickling a broadcast registers it for the next job Spark submits; this pickle is not a job
        spark.sparkContext._pickled_broadcast_vars.clear()
    finally:
        result.close()
    assert "mapInPandas" in plans.replace("MapInPandas", "mapInPandas")
    for form in (key.hex(), key.hex().upper()):
        assert form not in plans
    assert key not in closure and key.hex().encode() not in closure


def test_pipeline_is_built_once_per_process_and_settings():
    settings = SparkDeidSettings("id", "text", language="en")
    key, other = generate_key(), generate_key()
    a = cached_pipeline(settings, key)
    assert cached_pipeline(SparkDeidSettings("id", "text", language="en"), key) is a
    assert cached_pipeline(settings, other) is not a


def test_each_executor_process_builds_the_pipeline_once(spark, key_file):
    key = load_key(key_file)
    settings = SparkDeidSettings("id", "text", language="en")
    df = spark.createDataFrame([tuple(r.values()) for r in RECORDS] * 4, SCHEMA).repartition(4)
    for _ in range(2):
        result = deidentify_dataframe(df, settings, key)
        try:
            assert result.report.where("status = 'done'").count() == 16
        finally:
            result.close()
    fingerprint = settings.fingerprint(key)

    def probe(batches):
        from clinideid.spark import worker

        for _ in batches:
            yield pd.DataFrame({"pid": [os.getpid()], "builds": [worker.BUILDS[fingerprint]]})

    builds = df.mapInPandas(probe, "pid long, builds long").collect()
    assert max(r["builds"] for r in builds) == 1


def test_time_limit_fails_the_row_in_the_executor(spark, key_file):
    rows = [("slow", "Patient John Smith seen at St. Mary's Hospital on 01/02/2020. " * 3000)]
    df = spark.createDataFrame(rows, "id string, text string")
    settings = SparkDeidSettings("id", "text", language="en", time_limit=0.01)
    result = deidentify_dataframe(df, settings, load_key(key_file))
    try:
        (row,) = result.report.collect()
        assert result.data.count() == 0
    finally:
        result.close()
    assert row["status"] == "failed" and "time limit of 0.01 s" in row["error"]


def test_an_unexpected_error_in_one_row_fails_only_that_row():
    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("cannot print")

    batch = pd.DataFrame(
        {"id": [Unprintable(), "n2"], "text": ["Patient John Smith.", "Dr. Sarah Thompson."]}
    )
    out = deidentify_frame(batch, SparkDeidSettings("id", "text", language="en"), generate_key())
    assert out[STATUS].tolist() == ["failed", "done"]
    assert out[ERROR][0] == "internal error (RuntimeError)" and out["text"][0] is None
    assert covered("Dr. Sarah Thompson.", json.loads(out[REPORT][1])["replacements"], "Sarah Thompson")


def test_columns_that_cannot_be_deidentified_are_refused_unless_kept(spark, key_file):
    df = spark.createDataFrame([("n1", "Patient John Smith, age 45.", 45)], "id string, text string, age int")
    settings = SparkDeidSettings("id", "text", language="en")
    with pytest.raises(ConfigError, match="age"):
        deidentify_dataframe(df, settings, load_key(key_file))
    with pytest.raises(ConfigError, match="--text-column"):
        deidentify_dataframe(df, SparkDeidSettings("id", "body", language="en"), load_key(key_file))
    kept = deidentify_dataframe(df, settings, load_key(key_file), FieldPolicy(frozenset({"age"})))
    dropped = deidentify_dataframe(df, settings, load_key(key_file), FieldPolicy(drop_others=True))
    try:
        row = kept.data.collect()[0]
        assert row["age"] == 45 and row["text"] != "Patient John Smith, age 45."
        assert dropped.data.columns == ["id", "text"]
    finally:
        kept.close()
        dropped.close()


def test_integer_ids_and_kept_columns_with_nulls_keep_their_values(spark, key_file):
    df = spark.createDataFrame(
        [(17, "Patient John Smith, MRN 1234567.", None), (18, "Seen by Dr. Sarah Thompson.", 3)],
        "id long, text string, visits int",
    )
    settings = SparkDeidSettings("id", "text", language="en")
    result = deidentify_dataframe(df, settings, load_key(key_file), FieldPolicy(frozenset({"visits"})))
    try:
        data = {r["id"]: r for r in result.data.collect()}
        report = {r["id"]: json.loads(r["report"]) for r in result.report.collect()}
    finally:
        result.close()
    assert data[17]["visits"] is None and data[18]["visits"] == 3
    assert report["17"]["id"] == "17" and report["18"]["id"] == "18"
    assert dict(zip(df.schema.names, [f.dataType for f in df.schema.fields], strict=True)) == {
        f.name: f.dataType for f in result.data.schema.fields
    }


def test_cli_on_parquet(spark, key_file, tmp_path):
    source = tmp_path / "notes.parquet"
    spark.createDataFrame([tuple(r.values()) for r in RECORDS], SCHEMA).write.parquet(str(source))
    expected, _ = local_cli(tmp_path, write_jsonl(tmp_path / "notes.jsonl", RECORDS), key_file)
    out, report = tmp_path / "safe.parquet", tmp_path / "report"
    args = ["spark-deid", str(source), "-o", str(out), "--report", str(report), "--language", "en"]
    args += ["--key-file", str(key_file), "--master", "local[2]", "--patient-column", "patient_id"]
    res = runner.invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "4/4 rows de-identified, 0 failed" in res.output
    assert (out / "_SUCCESS").exists() and (report / "_SUCCESS").exists()
    rows = {r["id"]: r for r in spark.read.parquet(str(out)).collect()}
    assert {k: r["text"] for k, r in rows.items()} == {k: r["text"] for k, r in expected.items()}
    reports = read_parts(report)
    assert sorted(r["id"] for r in reports) == ["n1", "n2", "n3", "n4"]
    assert {r["status"] for r in reports} == {"done"}

    # an existing output is refused without --overwrite, then replaced with it
    res = runner.invoke(app, args)
    assert isinstance(res.exception, ConfigError) and "--overwrite" in str(res.exception)
    assert runner.invoke(app, [*args, "--overwrite"], catch_exceptions=False).exit_code == 0
    # an output inside (or equal to) the input is refused before anything is written
    inside = ["spark-deid", str(source), "-o", str(source / "out"), "--report", str(tmp_path / "r2")]
    res = runner.invoke(app, [*inside, "--ephemeral-key"])
    assert isinstance(res.exception, ConfigError) and "inside" in str(res.exception)
    assert not (source / "out").exists() and not (tmp_path / "r2").exists()
    missing = ["spark-deid", str(tmp_path / "missing.parquet"), "-o", str(tmp_path / "o3"), "--report"]
    res = runner.invoke(app, [*missing, str(tmp_path / "r3"), "--ephemeral-key"])
    assert isinstance(res.exception, InputError) and "does not exist" in str(res.exception)


def test_cli_on_jsonl_with_a_malformed_line(spark, key_file, tmp_path):
    source = write_jsonl(tmp_path / "notes.jsonl", RECORDS, ('{"id": "n5", "text": "John Smith',))
    expected, _ = local_cli(tmp_path, source, key_file)
    out, report = tmp_path / "safe", tmp_path / "report"
    args = ["spark-deid", str(source), "-o", str(out), "--report", str(report), "--language", "en"]
    args += ["--key-file", str(key_file), "--patient-column", "patient_id"]
    res = runner.invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 3, res.output  # one row failed
    assert "4/5 rows de-identified, 1 failed" in res.output
    records = read_parts(out)
    assert {r["id"]: r["text"] for r in records} == {k: r["text"] for k, r in expected.items()}
    assert all("_corrupt_record" not in r for r in records)
    reports = read_parts(report)
    failed = [r for r in reports if r["status"] == "failed"]
    assert len(failed) == 1 and "could not be parsed" in failed[0]["error"]
    assert "John" not in json.dumps(failed)

    # the malformed line's raw text is not carried in the cached rows either
    df = read_table(spark, [str(source)], "jsonl")
    settings = SparkDeidSettings("id", "text", language="en", corrupt_column=CORRUPT_COLUMN)
    result = deidentify_dataframe(df, settings, load_key(key_file))
    try:
        assert result._combined.where(f"{CORRUPT_COLUMN} is not null").count() == 0
        assert result.report.where("status = 'failed'").count() == 1
    finally:
        result.close()


def test_cli_on_csv_keeps_line_breaks_and_quotes(spark, key_file, tmp_path):
    records = [{"id": "c1", "text": 'Patient John Smith said "fine".\nSeen 01/02/2020, MRN 1234567.'}]
    source = tmp_path / "notes.csv"
    spark.createDataFrame([tuple(r.values()) for r in records], "id string, text string").coalesce(
        1
    ).write.options(header="true", escape='"').csv(str(source))
    expected, _ = local_cli(tmp_path, write_jsonl(tmp_path / "notes.jsonl", records), key_file)
    out, report = tmp_path / "safe.csv", tmp_path / "report"
    args = ["spark-deid", str(source), "-o", str(out), "--report", str(report), "--format", "csv"]
    res = runner.invoke(app, [*args, "--language", "en", "--key-file", str(key_file)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    rows = spark.read.options(header="true", multiLine="true", escape='"').csv(str(out)).collect()
    assert [(r["id"], r["text"]) for r in rows] == [("c1", expected["c1"]["text"])]
    assert "\n" in rows[0]["text"] and rows[0]["text"] != records[0]["text"]

    # a line with more fields than the header fails in the report instead of being cut short
    bad = tmp_path / "bad.csv"
    bad.write_text('id,text\nb1,"Patient John Smith."\nb2,Patient John Smith,extra\n', encoding="utf-8")
    args = ["spark-deid", str(bad), "-o", str(tmp_path / "o2"), "--report", str(tmp_path / "r2")]
    res = runner.invoke(app, [*args, "--language", "en", "--key-file", str(key_file)], catch_exceptions=False)
    assert res.exit_code == 3, res.output
    failed = [r for r in read_parts(tmp_path / "r2") if r["status"] == "failed"]
    assert len(failed) == 1 and "could not be parsed" in failed[0]["error"]


def test_cli_operator_overrides_and_config_reach_the_executors(spark, tmp_path):
    records = [{"id": "o1", "text": "Patient John Smith, seen 01/02/2020, MRN 1234567."}]
    source = write_jsonl(tmp_path / "notes.jsonl", records)
    options = ["--language", "en", "--ephemeral-key", "--operator", "DATE=date_generalize:strategy=year"]
    config = Path(clinideid.__file__).parent / "config" / "en.yaml"
    options += ["--operator", "default=tag", "--config", str(config)]
    out, report = tmp_path / "safe", tmp_path / "report"
    res = runner.invoke(
        app,
        ["spark-deid", str(source), "-o", str(out), "--report", str(report), *options],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    local = runner.invoke(
        app, ["deid", str(source), "-o", str(tmp_path / "local"), "--no-progress", *options]
    )
    assert local.exit_code == 0, local.output
    expected = json.loads((tmp_path / "local" / "notes.jsonl").read_text("utf-8"))["text"]
    assert [r["text"] for r in read_parts(out)] == [expected] == ["Patient [NAME], seen 2020, MRN [ID]."]
