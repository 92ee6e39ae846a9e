"""``clinideid deid -``: JSONL records on stdin, de-identified JSONL records on stdout, one line each, in order.

Each non-empty input line gives exactly one output line, flushed at once, so the command works inside a pipe.
A line that cannot be de-identified gives ``{"id": …, "error": "…"}`` (the error never quotes the text) and
makes the exit code non-zero once the input ends. Nothing else goes to stdout: logs and the summary go to
stderr. When the reader of stdout goes away (``| head``), the command stops quietly.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from clinideid.batch.inputs import DEFAULT_MAX_BYTES, InputItem, _bounded_lines, _record_item
from clinideid.batch.limits import DocumentTimeout, default_time_limit, time_limit
from clinideid.batch.records import FieldPolicy, field_label, fields_to_deidentify, rebuild_record
from clinideid.errors import ClinideidError, ConfigError, InputError, ModelError
from clinideid.pipeline import MultilingualDeidentifier
from clinideid.text.decoding import check_encoding, decode_text

log = logging.getLogger(__name__)

SOURCE_NAME = "stdin"


@dataclass
class StreamCounts:
    records: int = 0
    failed: int = 0
    spans: int = 0


def _item(lineno: int, raw: bytes | None, encoding: str, language: str | None) -> InputItem:
    fallback = f"{SOURCE_NAME}-{lineno}"
    where = f"{SOURCE_NAME}:{lineno}"
    if raw is None:
        return InputItem(fallback, error=f"{where}: record over --max-bytes")
    try:
        line = decode_text(raw, where, encoding).removeprefix("\ufeff")
        record = json.loads(line)
    except InputError as exc:
        return InputItem(fallback, error=str(exc))
    except json.JSONDecodeError as exc:
        return InputItem(fallback, error=f"{where}: invalid JSON (column {exc.colno})")
    except RecursionError:
        return InputItem(fallback, error=f"{where}: JSON nested too deeply")
    if not isinstance(record, dict):
        return InputItem(fallback, error=f"{where}: not a JSON object")
    return _record_item(record, fallback, where, language, SOURCE_NAME)


def deidentify_record(
    item: InputItem,
    deid: MultilingualDeidentifier,
    policy: FieldPolicy,
    patient_id: Callable[[InputItem], str | None],
    limit: float | None,
) -> tuple[dict, int]:
    """The de-identified record of ``item`` and its number of replaced spans (every field, as in batches)."""
    assert item.document is not None and item.record is not None
    text_field = item.text_field or "text"
    fields = fields_to_deidentify(item.record, text_field, policy)
    seconds = default_time_limit(len(item.document.text)) if limit is None else limit
    with time_limit(seconds):
        result, field_results = deid.deidentify_with_fields(
            item.document, [(field_label(path), value) for path, value in fields], patient_id(item)
        )
    new_values = [(p, v, new) for (p, v), (new, _) in zip(fields, field_results, strict=True)]
    spans = len(result.replacements) + sum(len(reps) for _, reps in field_results)
    return rebuild_record(item.record, text_field, result.text, new_values, policy), spans


def run_stream(
    stdin: BinaryIO,
    stdout: BinaryIO,
    deid: MultilingualDeidentifier,
    language: str | None,
    policy: FieldPolicy,
    patient_id: Callable[[InputItem], str | None],
    encoding: str = "utf-8",
    max_bytes: int = DEFAULT_MAX_BYTES,
    limit: float | None = None,
) -> StreamCounts:
    """Copy records from ``stdin`` to ``stdout`` de-identified; ``BrokenPipeError`` reaches the caller."""
    codec = check_encoding(encoding)
    counts = StreamCounts()
    for lineno, raw in enumerate(_bounded_lines(stdin, max_bytes), start=1):
        if raw is not None and not raw.strip():
            continue
        item = _item(lineno, raw, codec, language)
        counts.records += 1
        error = item.error
        if error is None:
            try:
                record, spans = deidentify_record(item, deid, policy, patient_id, limit)
                counts.spans += spans
            except (ConfigError, ModelError):
                raise
            except (ClinideidError, DocumentTimeout) as exc:
                error = str(exc)
            except Exception as exc:  # a bug must not stop the stream; the type is enough to report
                log.error("record %s failed with an internal error (%s)", item.doc_id, type(exc).__name__)
                error = f"internal error ({type(exc).__name__})"
        if error is not None:
            counts.failed += 1
            log.warning("record %s failed: %s", item.doc_id, error)
            record = {"id": item.doc_id, "error": error}
        stdout.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace"))
        stdout.flush()
    return counts
