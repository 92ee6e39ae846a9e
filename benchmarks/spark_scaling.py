"""Throughput of ``clinideid.spark`` on local Spark masters (``local[1]`` vs ``local[2]`` …) on synthetic notes.

    python benchmarks/spark_scaling.py [--docs 1000] [--repeat 2] [--masters local[1] local[2]] [--language en]

Generates invented English notes (names, dates, record numbers, phones, hospitals in varied sentences),
then for each master starts a Spark session, runs a warm-up job (each Python worker builds its pipeline
once) and times full de-identifications of every note (the report's aggregation forces them), keeping the
best of ``--repeat``. Also times the same notes in this process without Spark, the single-core reference. Prints a
Markdown table: seconds, characters per second, the speed-up over the first master, and the sum of the
per-document seconds measured inside the workers (which grows when the workers share too few cores).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

FIRST = ["John", "Mary", "Robert", "Linda", "James", "Patricia", "Michael", "Susan", "David", "Karen"]
LAST = ["Smith", "Johnson", "Williams", "Brown", "Miller", "Davis", "Garcia", "Wilson", "Moore", "Taylor"]
HOSPITALS = ["St. Mary's Hospital", "Boston Medical Center", "Mercy General Hospital", "Lakeside Clinic"]
CITIES = ["Boston", "Springfield", "Portland", "Madison"]
SENTENCES = [
    "Patient {name}, DOB {date}, MRN {mrn}, seen at {hospital}, {city}.",
    "Seen on {date} by Dr. {doctor}. Phone ({area}) 555-{line}.",
    "{title} {last} reports chest pain radiating to the left arm since {weekday}.",
    "History of type 2 diabetes mellitus and hypertension, on metformin and lisinopril.",
    "Vital signs stable, afebrile, lungs clear to auscultation bilaterally.",
    "Discharged home on {date} with follow-up in cardiology clinic in two weeks.",
    "Contact: daughter {name}, phone ({area}) 555-{line}.",
    "Labs notable for potassium 3.4 and creatinine 1.1; ECG without acute changes.",
]


def make_note(rng: random.Random) -> str:
    def fill(template: str) -> str:
        return template.format(
            name=f"{rng.choice(FIRST)} {rng.choice(LAST)}",
            doctor=f"{rng.choice(FIRST)} {rng.choice(LAST)}",
            last=rng.choice(LAST),
            title=rng.choice(["Mr", "Mrs", "Ms"]),
            date=f"{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}/{rng.randint(1940, 2023)}",
            mrn=rng.randint(1_000_000, 9_999_999),
            hospital=rng.choice(HOSPITALS),
            city=rng.choice(CITIES),
            area=rng.randint(200, 989),
            line=f"{rng.randint(0, 9999):04d}",
            weekday=rng.choice(["Monday", "Tuesday", "Friday"]),
        )

    return "\n".join(fill(rng.choice(SENTENCES)) for _ in range(rng.randint(6, 14)))


def run_master(
    master: str, notes: list[tuple[str, str]], language: str, key: bytes, repeat: int
) -> tuple[float, float]:
    """Seconds for one full de-identification of ``notes`` on ``master`` (best of ``repeat`` runs after a
    warm-up run), and the sum of the per-document seconds the workers measured in that run."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from clinideid.spark import SparkDeidSettings, deidentify_dataframe

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName("clinideid-spark-scaling")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    cores = spark.sparkContext.defaultParallelism
    settings = SparkDeidSettings("id", "text", language=language)
    try:
        df = spark.createDataFrame(notes, "id string, text string").repartition(4 * cores).cache()
        df.count()
        times = []
        for _ in range(1 + repeat):  # the first run warms up: each Python worker builds its pipeline
            result = deidentify_dataframe(df, settings, key)  # checks settings on the driver; runs nothing
            started = time.perf_counter()
            row = result.report.agg(
                F.count("*").alias("n"),
                F.sum((F.col("status") == "failed").cast("int")).alias("f"),
                F.sum("seconds").alias("s"),
            ).collect()
            times.append((time.perf_counter() - started, row[0]["s"]))
            result.close()
            assert row[0]["n"] == len(notes) and not row[0]["f"], "every note must be de-identified"
        return min(times[1:])
    finally:
        spark.stop()


def run_local(notes: list[tuple[str, str]], language: str, key: bytes, repeat: int) -> tuple[float, float]:
    from clinideid.document import Document
    from clinideid.pipeline import MultilingualDeidentifier

    deid = MultilingualDeidentifier(language, key)
    deid.build_all()
    times = []
    for _ in range(1 + repeat):
        started = time.perf_counter()
        for doc_id, text in notes:
            deid.deidentify_with_fields(Document(doc_id, text, language), [])
        seconds = time.perf_counter() - started
        times.append((seconds, seconds))
    return min(times[1:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    ap.add_argument("--language", default="en")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=2, help="timed runs after the warm-up (best is kept)")
    args = ap.parse_args()

    from clinideid.transform.keys import generate_key

    rng = random.Random(args.seed)
    notes = [(f"note-{i}", make_note(rng)) for i in range(args.docs)]
    chars = sum(len(t) for _, t in notes)
    key = generate_key()
    rows = [("in-process, no Spark", run_local(notes, args.language, key, args.repeat))]
    rows += [(f"Spark `{m}`", run_master(m, notes, args.language, key, args.repeat)) for m in args.masters]
    base = dict(rows).get(f"Spark `{args.masters[0]}`")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.docs} notes, {chars:,} characters, language {args.language}, {os.cpu_count()} CPUs")
    print(f"load average at the end (1, 5, 15 min): {load}\n")
    print(f"| run | seconds | chars/s | speed-up over {args.masters[0]} | sum of per-document seconds |")
    print("|---|---|---|---|---|")
    for name, (seconds, in_docs) in rows:
        speedup = f"{base[0] / seconds:.2f}×" if base else "—"
        print(f"| {name} | {seconds:.1f} | {chars / seconds:,.0f} | {speedup} | {in_docs:.1f} |")


if __name__ == "__main__":
    main()
