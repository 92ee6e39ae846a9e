"""What the service's worker processes compute: requests as picklable tasks, pipelines cached per process.

``service.engine`` sends each request to a worker process (``batch.workers``) as a task holding the
request's data; ``handle`` runs it under the request time limit (``SIGALRM`` in the worker; the engine
kills a worker that does not stop) with the worker's own pipelines, and returns plain data, or ``Rejected``
(a status and a message without document text) for a request that cannot be served.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from clinideid.audit.residual import audit_document
from clinideid.batch.limits import time_limit
from clinideid.document import Document
from clinideid.errors import ClinideidError, ConfigError
from clinideid.pipeline import MultilingualDeidentifier
from clinideid.service.checks import pipeline_error, public_error
from clinideid.service.schemas import BatchOut

#: pipelines kept built per worker (one per language + overrides combination)
CACHE_SIZE = 16
#: a worker de-identifies this once when it starts, so first-use costs do not count against a request
WARM_UP_TEXT = "Seen today in clinic; follow-up in two weeks."


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs from the server's settings (the key stays between server and workers)."""

    key: bytes | None
    language: str  # the server's default: a code or "auto"


@dataclass(frozen=True)
class Rejected:
    """A request the worker refuses: the HTTP status and a message that holds no document text."""

    status: int
    message: str


class WorkerState:
    """A worker's pipelines, built on first use and kept (least recently used dropped past ``CACHE_SIZE``)."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self._cache: OrderedDict[str, MultilingualDeidentifier] = OrderedDict()

    def pipeline(self, language: str | None, overrides: dict[str, Any] | None) -> MultilingualDeidentifier:
        lang = language or self.config.language
        cache_key = json.dumps([lang, overrides or {}], sort_keys=True)
        deid = self._cache.get(cache_key)
        if deid is None:
            deid = MultilingualDeidentifier(lang, self.config.key, None, overrides or None)
            self._cache[cache_key] = deid
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        self._cache.move_to_end(cache_key)
        return deid


def init(config: WorkerConfig) -> WorkerState:
    """Build and warm up the default pipeline (the server is ready once every worker has)."""
    state = WorkerState(config)
    lang = config.language if config.language != "auto" else "en"
    deid = state.pipeline(lang, None)
    result = deid.deidentify(Document("warm-up", WARM_UP_TEXT, lang))
    audit_document(result.text, lang, result.replacements)
    return state


def handle(state: WorkerState, payload: tuple[Any, float | None]) -> Any:
    """Run one task within ``limit`` seconds (``DocumentTimeout`` past it: the engine answers 504)."""
    task, limit = payload
    with time_limit(limit):
        return task.run(state)


# -- tasks ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DocumentsTask:
    """``/v1/deidentify`` and ``/v1/detect``: each document's result, or its error."""

    mode: str  # "detect" or "deidentify"
    docs: tuple[tuple[str, str, str | None, str | None], ...]  # (id, text, language, patient id)
    language: str | None
    overrides: dict[str, Any]
    patient_id: str | None = None
    audit: bool = False

    def run(self, state: WorkerState) -> BatchOut | Rejected:
        try:
            deid = state.pipeline(self.language, self.overrides)
        except ConfigError as exc:
            return _pipeline_rejected(exc)
        results: list[dict[str, Any]] = []
        errors: list[dict[str, str]] = []
        for doc_id, text, language, patient_id in self.docs:
            doc = Document(doc_id, text, language)
            try:
                doc, guess = deid.route(doc)
                lang = doc.language
                pipeline = deid.pipeline(lang)
                # an identified language says how sure it is, and warns when it is not
                detection: dict[str, Any] = {} if guess is None else {"language_detection": guess.to_dict()}
                if guess is not None and guess.warning():
                    detection["warnings"] = [guess.warning()]
                if self.mode == "detect":
                    spans, _ = pipeline.detect(doc)
                    results.append({
                        "id": doc_id, "language": lang, **detection,
                        "spans": [{"start": s.start, "end": s.end, "label": s.label, "source": s.source,
                                   "score": s.score, "explanation": s.explanation} for s in spans],
                    })  # fmt: skip
                else:
                    res = pipeline.deidentify(doc, patient_id or self.patient_id)
                    reps = [r.to_dict() for r in res.replacements]
                    out = {"id": doc_id, "language": lang, **detection, "text": res.text, "replacements": reps}
                    if self.audit:
                        out["audit"] = audit_document(res.text, lang, reps)
                    results.append(out)
            except ConfigError as exc:
                return _pipeline_rejected(exc)
            except ClinideidError as exc:
                errors.append({"id": doc_id, "error": public_error(exc)})
        return BatchOut(documents=results, errors=errors)


@dataclass(frozen=True)
class AnalyzeTask:
    """Presidio's ``/analyze``: the spans found, in Presidio's shape."""

    body: Any  # presidio.AnalyzeRequest

    def run(self, state: WorkerState) -> list[dict[str, Any]] | Rejected:
        from clinideid.service import presidio

        try:
            deid = state.pipeline(self.body.language, None)
        except ClinideidError as exc:
            return _pipeline_rejected(exc)
        doc = Document(self.body.correlation_id or "analyze", self.body.text, self.body.language)
        spans, _ = deid.pipeline(deid.language_of(doc)).detect(doc)
        return presidio.analyze_results(spans, self.body)


@dataclass(frozen=True)
class AnonymizeTask:
    """Presidio's ``/anonymize``: the given analyzer results replaced (surrogates with the server's key)."""

    body: Any  # presidio.AnonymizeRequest
    language: str

    def run(self, state: WorkerState) -> dict[str, Any] | Rejected:
        from clinideid.service import presidio
        from clinideid.transform.apply import apply_operators

        def surrogate(doc: Document, spans: list) -> list[str]:
            pipeline = state.pipeline(self.language, None).pipeline(self.language)
            doc = Document(doc.id, doc.text, self.language)
            context = {"key": state.config.key, "scope_id": "document:anonymize"}
            new_text, reps = apply_operators(doc, spans, pipeline.operator_for, context)
            return [new_text[r.new_start : r.new_end] for r in reps]

        try:
            return presidio.anonymize(self.body, surrogate)
        except presidio.AnonymizeError as exc:  # its messages name fields only
            return Rejected(422, str(exc))
        except ClinideidError as exc:
            return _pipeline_rejected(exc)


def _pipeline_rejected(exc: ClinideidError) -> Rejected:
    """A pipeline that the checked fields still could not build or apply: its message is not relayed."""
    error = pipeline_error(exc)
    return Rejected(error.status_code, str(error.detail))
