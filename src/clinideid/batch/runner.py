"""Run a de-identification pipeline over many inputs, never stopping on one bad document."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from clinideid.batch.inputs import InputItem
from clinideid.batch.outputs import OutputWriter, RunSummary
from clinideid.errors import ClinideidError, ConfigError, ModelError
from clinideid.pipeline import MultilingualDeidentifier

log = logging.getLogger(__name__)


def patient_id_getter(spec: str | None) -> Callable[[InputItem], str | None]:
    """How to find a document's patient id: ``metadata:FIELD`` or ``filename:REGEX`` (first group)."""
    if not spec:
        return lambda item: None
    kind, _, arg = spec.partition(":")
    if kind == "metadata" and arg:
        return lambda item: (
            str(item.document.metadata.get(arg))
            if item.document and item.document.metadata.get(arg) is not None
            else None
        )
    if kind == "filename" and arg:
        pattern = re.compile(arg)

        def from_name(item: InputItem) -> str | None:
            m = pattern.search(Path(item.relpath).name)
            return (m.group(1) if m.groups() else m.group(0)) if m else None

        return from_name
    raise ConfigError(f"bad patient id source {spec!r}; use metadata:FIELD or filename:REGEX")


def run_batch(
    items: Iterable[InputItem],
    deid: MultilingualDeidentifier,
    writer: OutputWriter,
    patient_id: Callable[[InputItem], str | None] = lambda item: None,
    resume: bool = False,
    progress: Callable[[], None] | None = None,
) -> RunSummary:
    summary = RunSummary()
    started = time.perf_counter()
    for item in items:
        summary.documents += 1
        try:
            if item.error is not None:
                summary.errors.append({"id": item.doc_id, "error": item.error})
                continue
            assert item.document is not None
            if resume and item.record is None and writer.text_path(item.relpath).exists():
                summary.skipped += 1
                continue
            if not item.document.text.strip():
                summary.warnings.append({"id": item.doc_id, "warning": "empty document: written unchanged"})
            result = deid.deidentify(item.document, patient_id(item))
            writer.write(result, item.relpath, item.record)
            summary.add(result, len(item.document.text))
        except (ConfigError, ModelError):
            raise  # a problem of the whole run, not of this document
        except ClinideidError as exc:
            log.warning("document %s failed: %s", item.doc_id, exc)
            summary.errors.append({"id": item.doc_id, "error": str(exc)})
        except Exception as exc:  # a bug must not lose the rest of the batch; the type is enough to report
            log.error("document %s failed with an internal error (%s)", item.doc_id, type(exc).__name__)
            summary.errors.append({"id": item.doc_id, "error": f"internal error ({type(exc).__name__})"})
        finally:
            if progress is not None:
                progress()
    summary.seconds = time.perf_counter() - started
    writer.close(summary)
    return summary
