"""De-identification of notes held in Apache Spark DataFrames (``pip install 'clinideid[spark]'``).

>>> from clinideid.spark import SparkDeidSettings, deidentify_dataframe
>>> result = deidentify_dataframe(df, SparkDeidSettings("note_id", "text", language="en"), key)
>>> result.data.write.parquet("safe/")       # de-identified rows
>>> result.report.write.json("report/")      # one status row per input row

``worker`` (run on the executors) needs pandas; ``frame`` and ``io`` need pyspark, imported when used.
"""

from clinideid.spark.frame import REPORT_COLUMNS, SparkDeidResult, deidentify_dataframe
from clinideid.spark.worker import SparkDeidSettings

__all__ = ["REPORT_COLUMNS", "SparkDeidResult", "SparkDeidSettings", "deidentify_dataframe"]
