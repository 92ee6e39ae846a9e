"""Presidio-compatible ``/analyze`` and ``/anonymize``: Presidio's request and response shapes.

``/analyze`` takes ``{"text", "language", "entities"?, "score_threshold"?, "return_decision_process"?}``
and answers ``[{"entity_type", "start", "end", "score", "analysis_explanation", "recognition_metadata"}]``
with Presidio's entity names (``PERSON``, ``DATE_TIME``, ``PHONE_NUMBER``...; the canonical clinideid label is
in ``recognition_metadata``). ``/anonymize`` takes ``{"text", "analyzer_results", "anonymizers"}`` and
answers ``{"text", "items": [{"start", "end", "entity_type", "text", "operator"}]}``; operators ``replace``,
``redact``, ``mask``, ``hash``, ``keep`` as Presidio defines them, plus ``surrogate`` (clinideid's keyed,
format-keeping surrogates with the server's key). Overlapping analyzer results keep the higher score.
Errors name the field (``analyzer_results[2]``, ``anonymizers.*.type``), never its value.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.labels import canonical


class AnonymizeError(ConfigError):
    """A bad ``/anonymize`` request; the message names the field and never repeats its value."""


#: canonical subcategory or category -> Presidio entity type
PRESIDIO_TYPES: dict[str, str] = {
    "NAME": "PERSON",
    "USERNAME": "USERNAME",
    "PROFESSION": "PROFESSION",
    "LOCATION": "LOCATION",
    "HOSPITAL": "HOSPITAL",
    "ORGANIZATION": "ORGANIZATION",
    "AGE": "AGE",
    "DATE": "DATE_TIME",
    "PHONE": "PHONE_NUMBER",
    "FAX": "PHONE_NUMBER",
    "EMAIL": "EMAIL_ADDRESS",
    "URL": "URL",
    "IPADDR": "IP_ADDRESS",
    "SSN": "US_SSN",
    "MEDICALRECORD": "MEDICAL_RECORD",
    "ID": "ID",
}
#: Presidio entity type -> canonical label (for analyzer results another tool produced)
CANONICAL_OF: dict[str, str] = {
    "PERSON": "PATIENT",
    "DATE_TIME": "DATE",
    "PHONE_NUMBER": "PHONE",
    "EMAIL_ADDRESS": "EMAIL",
    "IP_ADDRESS": "IPADDR",
    "US_SSN": "SSN",
    "MEDICAL_RECORD": "MEDICALRECORD",
    "LOCATION": "LOCATION_OTHER",
    "URL": "URL",
    "ORGANIZATION": "ORGANIZATION",
    "HOSPITAL": "HOSPITAL",
    "AGE": "AGE",
    "PROFESSION": "PROFESSION",
    "USERNAME": "USERNAME",
}


def presidio_type(label: str) -> str:
    tax = canonical()
    if label in PRESIDIO_TYPES:
        return PRESIDIO_TYPES[label]
    if label in tax:
        return PRESIDIO_TYPES.get(tax.category_of(label), tax.category_of(label))
    return label


def canonical_label(entity_type: str) -> str:
    if entity_type in canonical():
        return entity_type
    return CANONICAL_OF.get(entity_type, "IDNUM")


class AnalyzeRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # Presidio clients send fields clinideid does not use
    text: str
    language: str = "en"
    entities: list[str] | None = None
    score_threshold: float | None = None
    return_decision_process: bool = False
    correlation_id: str | None = None


class RecognizerResult(BaseModel):
    model_config = ConfigDict(extra="allow")
    entity_type: str
    start: int
    end: int
    score: float = 1.0


class AnonymizeRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    text: str
    analyzer_results: list[RecognizerResult] = Field(default_factory=list)
    anonymizers: dict[str, dict[str, Any]] = Field(default_factory=dict)


def analyze_results(spans: list[Span], request: AnalyzeRequest) -> list[dict[str, Any]]:
    out = []
    wanted = set(request.entities or ())
    for span in spans:
        entity = presidio_type(span.label)
        if wanted and entity not in wanted and span.label not in wanted:
            continue
        score = 1.0 if span.score is None else float(span.score)
        if request.score_threshold is not None and score < request.score_threshold:
            continue
        explanation = None
        if request.return_decision_process:
            explanation = {"recognizer": span.source, "pattern_name": span.explanation, "original_score": score,
                           "score": score, "textual_explanation": span.explanation}  # fmt: skip
        out.append({
            "entity_type": entity, "start": span.start, "end": span.end, "score": score,
            "analysis_explanation": explanation,
            "recognition_metadata": {"recognizer_name": span.source, "clinideid_label": span.label},
        })  # fmt: skip
    return out


def _resolve(results: list[RecognizerResult], n: int) -> list[RecognizerResult]:
    """Non-overlapping results: higher score first, then longer, then earlier."""
    for i, r in enumerate(results):
        if not 0 <= r.start < r.end <= n:
            raise AnonymizeError(
                f"`analyzer_results[{i}]` lies outside the text (length {n}) or ends at its start"
            )
    kept: list[RecognizerResult] = []
    for r in sorted(results, key=lambda r: (-r.score, -(r.end - r.start), r.start)):
        if all(r.end <= k.start or k.end <= r.start for k in kept):
            kept.append(r)
    return sorted(kept, key=lambda r: r.start)


def _presidio_operator(value: str, entity: str, spec: dict[str, Any]) -> str:
    kind = spec.get("type", "replace")
    if kind == "replace":
        return str(spec.get("new_value", f"<{entity}>"))
    if kind == "redact":
        return ""
    if kind == "keep":
        return value
    if kind == "mask":
        char = str(spec.get("masking_char", "*"))[:1] or "*"
        try:
            count = min(int(spec.get("chars_to_mask", len(value))), len(value))
        except (TypeError, ValueError):
            raise AnonymizeError("`anonymizers.*.chars_to_mask` must be an integer") from None
        if spec.get("from_end", False):
            return value[: len(value) - count] + char * count
        return char * count + value[count:]
    if kind == "hash":
        algo = str(spec.get("hash_type", "sha256")).lower()
        if algo not in ("sha256", "sha512"):
            raise AnonymizeError("`anonymizers.*.hash_type` must be sha256 or sha512")
        return hashlib.new(algo, value.encode("utf-8")).hexdigest()
    raise AnonymizeError("`anonymizers.*.type` must be replace, redact, mask, hash, keep or surrogate")


def anonymize(request: AnonymizeRequest, surrogate: Any) -> dict[str, Any]:
    """Apply the anonymizers right to left; ``surrogate(text, spans)`` -> new texts for ``surrogate`` ones."""
    text = request.text
    results = _resolve(list(request.analyzer_results), len(text))
    default = request.anonymizers.get("DEFAULT", {"type": "replace"})
    specs = [request.anonymizers.get(r.entity_type, default) for r in results]
    surrogate_idx = [i for i, s in enumerate(specs) if s.get("type") == "surrogate"]
    generated: dict[int, str] = {}
    if surrogate_idx:
        spans = [
            Span(results[i].start, results[i].end, canonical_label(results[i].entity_type))
            for i in surrogate_idx
        ]
        generated = dict(zip(surrogate_idx, surrogate(Document("anonymize", text, None), spans), strict=True))
    pieces: list[str] = []
    items: list[dict[str, Any]] = []
    cursor = 0
    for i, (r, spec) in enumerate(zip(results, specs, strict=True)):
        new = (
            generated[i] if i in generated else _presidio_operator(text[r.start : r.end], r.entity_type, spec)
        )
        pieces.append(text[cursor : r.start])
        start = sum(len(p) for p in pieces)
        pieces.append(new)
        items.append({"start": start, "end": start + len(new), "entity_type": r.entity_type, "text": new,
                      "operator": spec.get("type", "replace")})  # fmt: skip
        cursor = r.end
    pieces.append(text[cursor:])
    return {"text": "".join(pieces), "items": sorted(items, key=lambda it: it["start"])}
