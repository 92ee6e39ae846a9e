"""``Deidentifier``: detect → resolve → transform, returning the new text and a report.

The report maps every original span (offsets, label, detector, explanation) to its replacement's offsets in
the output text and the operator used. It never contains the original text.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clinideid.analysis import analysing
from clinideid.config import PipelineConfig, default_config, load_config, parse_config
from clinideid.detect.base import Detector, build_detector
from clinideid.document import Document, Span, sort_spans
from clinideid.errors import ClinideidError, ConfigError
from clinideid.mentions import Mention, document_mentions
from clinideid.postprocess import StepContext, run_steps
from clinideid.resolve import resolve_spans
from clinideid.text.invisible import OffsetMap, strip_invisible
from clinideid.text.language import LanguageGuess, identify_language
from clinideid.transform.apply import Replacement, apply_operators
from clinideid.transform.base import Operator, build_operator

log = logging.getLogger(__name__)

#: characters of context shared by neighbouring chunks of a long document
CHUNK_OVERLAP = 500


@dataclass
class DeidResult:
    """The outcome for one document."""

    document_id: str
    text: str
    language: str
    spans: list[Span]
    replacements: list[Replacement]
    dropped: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    language_guess: LanguageGuess | None = None  # set when the language was identified, not given

    @property
    def warnings(self) -> list[str]:
        """What the document's report should warn about (an unreliable language guess)."""
        warning = self.language_guess.warning() if self.language_guess is not None else None
        return [warning] if warning else []

    def report(self) -> dict[str, Any]:
        """A JSON-ready report without any original text."""
        report = {
            "id": self.document_id,
            "language": self.language,
            "n_spans": len(self.spans),
            "n_dropped_overlaps": self.dropped,
            "replacements": [r.to_dict() for r in self.replacements],
        }
        if self.language_guess is not None:
            report["language_detection"] = self.language_guess.to_dict()
        return report


def chunk_bounds(text: str, max_chars: int, overlap: int = CHUNK_OVERLAP) -> list[tuple[int, int]]:
    """Chunks ``[(start, end)]`` of at most ``max_chars`` characters, cut at line breaks (or spaces)
    when possible, consecutive chunks sharing ``overlap`` characters so no entity is lost at a cut."""
    n = len(text)
    if n <= max_chars:
        return [(0, n)]
    overlap = min(overlap, max_chars // 4)
    bounds: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = min(start + max_chars, n)
        if end < n:
            cut = text.rfind("\n", start + max_chars // 2, end)
            if cut < 0:
                cut = text.rfind(" ", start + max_chars // 2, end)
            if cut > start:
                end = cut + 1
        bounds.append((start, end))
        if end >= n:
            break
        start = max(end - overlap, start + 1)
    return bounds


def check_operators(config: PipelineConfig, key: bytes | None) -> None:
    """Fail early (``ConfigError``) on unknown operators, bad options, a weak key, or keyed operators
    without a key."""
    if key is not None:
        from clinideid.transform.keys import check_key

        check_key(key)
    for spec in config.operators.values():
        op = build_operator(spec.operator, **spec.options)
        if op.needs_key and key is None:
            raise ConfigError(
                f"operator {spec.operator!r} needs a secret key: pass --key-file FILE (make one with "
                "'clinideid keygen FILE'), or, for a one-off run whose surrogates need not be reproducible, "
                "--ephemeral-key"
            )


class Deidentifier:
    """A configured de-identification pipeline.

    ``key`` is the secret for keyed operators (surrogates, keyed hash, date shift); a pipeline whose operators
    need one and has none fails on first use with a clear ``ConfigError``.
    """

    def __init__(self, config: PipelineConfig, key: bytes | None = None) -> None:
        self.config = config
        self.key = key
        self.detectors: list[Detector] = [build_detector(spec) for spec in config.detectors]
        self._operators: dict[str, Operator] = {}
        self._check_key()

    @classmethod
    def for_language(cls, language: str, key: bytes | None = None, pipeline: str = "default") -> Deidentifier:
        """The packaged pipeline ``pipeline`` (``default`` or ``rules``) of ``language``."""
        return cls(default_config(language, pipeline), key)

    @classmethod
    def from_file(cls, path: str | Path, key: bytes | None = None) -> Deidentifier:
        return cls(load_config(path), key)

    # -- operators ---------------------------------------------------------------------------------
    def _check_key(self) -> None:
        check_operators(self.config, self.key)

    def operator_for(self, label: str) -> Operator:
        op = self._operators.get(label)
        if op is None:
            spec = self.config.operator_for(label)
            op = build_operator(spec.operator, **spec.options)
            self._operators[label] = op
        return op

    # -- detection ---------------------------------------------------------------------------------
    def detect(self, doc: Document, known: Sequence[Mention] = ()) -> tuple[list[Span], int]:
        """Resolved and post-processed spans for ``doc`` and the number of spans dropped by resolution.
        ``known``: names and places found in other documents of the same patient, marked here too."""
        return self.detect_batch([doc], [known])[0]

    def detect_batch(
        self, docs: Sequence[Document], known: Sequence[Sequence[Mention]] | None = None
    ) -> list[tuple[list[Span], int]]:
        """``detect`` for several documents at once: each detector reads all their chunks in one call
        (a learned tagger batches its windows across documents) and every document's analysis (tokens,
        rule hits) is computed once and shared by the detectors. ``known``: one sequence of mentions per
        document (see ``detect``).

        Detectors read each document as a reader sees it, without invisible characters (zero-width
        spaces, soft hyphens, bidi controls...; ``clinideid.text.invisible``), so a name split by one is
        one word to all of them; the resolved spans are post-processed (the config's ``postprocess``
        steps) and mapped back to the original text, each covering the invisible characters inside it."""
        knowns = list(known) if known is not None else [()] * len(docs)
        if len(knowns) != len(docs):
            raise ValueError("give one sequence of known mentions per document")
        views = [_visible(doc) for doc in docs]
        found = self._detect_visible([view for view, _ in views])
        out = []
        for doc, (view, offsets), spans, mentions in zip(docs, views, found, knowns, strict=True):
            res = resolve_spans(spans, self.config.resolution.policy, self.config.resolution.priority)
            context = StepContext(view.text, doc.language or self.config.language, tuple(mentions))
            kept = run_steps(self.config.postprocess, sort_spans(res.kept), context)
            if offsets is not None:
                kept = [_to_original(span, offsets, doc.text) for span in kept]
            out.append((kept, sum(1 for _, reason in res.dropped if reason != "duplicate")))
        return out

    def _detect_visible(self, docs: Sequence[Document]) -> list[list[Span]]:
        """Every detector's spans (above ``min_score``) for each document, before resolution."""
        chunks: list[Document] = []
        owner: list[tuple[int, int]] = []  # (document index, chunk offset) of each chunk
        for i, doc in enumerate(docs):
            for start, end in chunk_bounds(doc.text, self.config.max_chunk_chars):
                whole = (start, end) == (0, len(doc.text))
                chunks.append(
                    doc if whole else Document(doc.id, doc.text[start:end], doc.language, doc.metadata)
                )
                owner.append((i, start))
        found: list[list[Span]] = [[] for _ in docs]
        if chunks:
            with analysing(*chunks):  # tokens, rule hits... computed once for every detector
                per_detector = [detector.detect(chunks) for detector in self.detectors]
            for spans_of_chunks in per_detector:
                for (i, start), spans in zip(owner, spans_of_chunks, strict=True):
                    for span in spans:
                        if span.score is not None and span.score < self.config.min_score:
                            continue
                        if start:
                            span = span.with_(
                                start=span.start + start,
                                end=span.end + start,
                                fragments=tuple((a + start, b + start) for a, b in span.fragments),
                            )
                        found[i].append(span)
        return found

    # -- the whole job -----------------------------------------------------------------------------
    def scope_id(self, doc: Document, patient_id: str | None) -> str:
        if self.config.scope == "corpus":
            return "corpus"
        if self.config.scope == "patient":
            pid = patient_id or doc.metadata.get("patient_id")
            if pid:
                return f"patient:{pid}"
        return f"document:{doc.id}"

    def deidentify(
        self, doc: Document, patient_id: str | None = None, known: Sequence[Mention] = ()
    ) -> DeidResult:
        return self._replace(doc, *self.detect(doc, known), patient_id)

    def deidentify_batch(
        self, docs: Sequence[Document], patient_ids: Sequence[str | None] | None = None
    ) -> list[DeidResult]:
        """``deidentify`` for several documents, detection batched across them (``detect_batch``)."""
        ids = list(patient_ids) if patient_ids is not None else [None] * len(docs)
        if len(ids) != len(docs):
            raise ValueError("give one patient id (or None) per document")
        detected = self.detect_batch(docs)
        return [
            self._replace(doc, spans, dropped, pid)
            for doc, (spans, dropped), pid in zip(docs, detected, ids, strict=True)
        ]

    def _replace(self, doc: Document, spans: list[Span], dropped: int, patient_id: str | None) -> DeidResult:
        language = doc.language or self.config.language
        new_text, replacements = apply_operators(
            doc,
            spans,
            self.operator_for,
            {"key": self.key, "scope_id": self.scope_id(doc, patient_id), "language": language},
        )
        return DeidResult(doc.id, new_text, language, spans, replacements, dropped, dict(doc.metadata))

    def deidentify_with_fields(
        self,
        doc: Document,
        fields: Sequence[tuple[str, str]],
        patient_id: str | None = None,
        known: Sequence[Mention] = (),
    ) -> tuple[DeidResult, list[tuple[str, list[Replacement]]]]:
        """De-identify ``doc`` together with other text fields of the same record.

        ``fields`` are ``(label, value)`` pairs such as ``("patient name", "…")``. Detection runs once on
        the note followed by one ``label: value`` line per field, so a name confirmed in the note is found in
        the fields too and a field's label acts as a cue; each value is then rewritten on its own with the
        note's key and scope (the same person gets the same surrogate). Returns the note's result and each
        field's new value with its replacements (offsets into the value). ``known``: see ``detect``.
        """
        if not fields:
            return self.deidentify(doc, patient_id, known), []
        combined, bounds = _with_fields(doc, fields)
        spans, dropped = self.detect(combined, known)
        context = {
            "key": self.key,
            "scope_id": self.scope_id(doc, patient_id),
            "language": doc.language or self.config.language,
        }
        outcomes: list[tuple[str, list[Replacement], list[Span]]] = []
        for i, (lo, hi) in enumerate(bounds):
            segment = doc if i == 0 else Document(doc.id, combined.text[lo:hi], doc.language, doc.metadata)
            own = [clipped for span in spans for clipped in _clip(span, lo, hi)]
            text, replacements = apply_operators(segment, own, self.operator_for, context)
            outcomes.append((text, replacements, own))
        text, replacements, own = outcomes[0]
        result = DeidResult(doc.id, text, context["language"], own, replacements, dropped, dict(doc.metadata))
        return result, [(t, r) for t, r, _ in outcomes[1:]]

    def deidentify_text(self, text: str, doc_id: str = "text") -> str:
        return self.deidentify(Document(doc_id, text, self.config.language)).text

    def mentions(self, doc: Document, fields: Sequence[tuple[str, str]] = ()) -> list[Mention]:
        """The names and places found in ``doc`` (with its record's ``fields``, read as
        ``deidentify_with_fields`` reads them): what its patient's other documents should mark too."""
        combined = _with_fields(doc, fields)[0] if fields else doc
        spans, _ = self.detect(combined)
        return document_mentions(spans, combined.text)


def _with_fields(doc: Document, fields: Sequence[tuple[str, str]]) -> tuple[Document, list[tuple[int, int]]]:
    """``doc`` followed by one ``label: value`` line per field, and the bounds of the note and each value."""
    parts = [doc.text]
    bounds = [(0, len(doc.text))]
    offset = len(doc.text)
    for label, value in fields:
        prefix = f"\n\n{label}: "
        parts.extend((prefix, value))
        offset += len(prefix)
        bounds.append((offset, offset + len(value)))
        offset += len(value)
    return Document(doc.id, "".join(parts), doc.language, doc.metadata), bounds


def _visible(doc: Document) -> tuple[Document, OffsetMap | None]:
    """``doc`` as its detectors read it (without invisible characters) and the map back to its offsets;
    ``doc`` itself and ``None`` when it holds no invisible character."""
    text, offsets = strip_invisible(doc.text)
    if offsets is None:
        return doc, None
    return Document(doc.id, text, doc.language, doc.metadata), offsets


def _to_original(span: Span, offsets: OffsetMap, text: str) -> Span:
    """``span`` (offsets in the visible text) with offsets in the original ``text``."""
    pieces = tuple(offsets.span(a, b) for a, b in span.pieces)
    mapped = span.with_(
        start=pieces[0][0], end=pieces[-1][1], fragments=pieces if span.fragments else (), text=None
    )
    return mapped if span.text is None else mapped.with_(text=mapped.covered_text(text))


def _clip(span: Span, lo: int, hi: int) -> list[Span]:
    """The parts of ``span`` inside ``[lo, hi)``, shifted to offsets relative to ``lo`` (one per piece)."""
    out = []
    for a, b in span.pieces:
        a, b = max(a, lo), min(b, hi)
        if a < b:
            out.append(span.with_(start=a - lo, end=b - lo, fragments=(), text=None))
    return out


_DETECTOR_OVERRIDES = ("operators", "models", "strategy", "rules", "pipeline")


def model_detectors(
    language: str, models: Sequence[str], strategy: str = "model_first", with_rules: bool = True
) -> list[dict[str, Any]]:
    """Detector specs for saved models (directories or packaged names), with the language's rules unless
    ``with_rules`` is false: one hybrid detector combining them with ``strategy``."""
    from clinideid.models import load_metadata, resolve_model_path

    specs: list[dict[str, Any]] = []
    for model in models:
        path = resolve_model_path(model)
        specs.append({"type": load_metadata(path).model_type, "model": str(path)})
    if not with_rules:
        return specs
    return [{"type": "hybrid", "language": language, "models": specs, "strategy": strategy}]


class MultilingualDeidentifier:
    """Picks (and caches) one ``Deidentifier`` per document language; ``language='auto'`` identifies it."""

    def __init__(
        self,
        language: str = "auto",
        key: bytes | None = None,
        config: PipelineConfig | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> None:
        self.language = language
        self.key = key
        self.config = config
        self.overrides = overrides or {}
        self._pipelines: dict[str, Deidentifier] = {}
        self.check()

    def config_for(self, language: str) -> PipelineConfig:
        """The pipeline config used for documents in ``language`` (overrides applied)."""
        if self.config is not None:
            cfg = self.config
            if language != cfg.language:
                cfg = cfg.model_copy(update={"language": language})
        else:
            cfg = default_config(language, self.overrides.get("pipeline", "default"))
        if self.overrides:
            data = cfg.model_dump()
            data["operators"] = {**data["operators"], **self.overrides.get("operators", {})}
            models = self.overrides.get("models")
            if models:
                data["detectors"] = model_detectors(
                    language,
                    models,
                    self.overrides.get("strategy", "model_first"),
                    self.overrides.get("rules", True),
                )
            data.update({k: v for k, v in self.overrides.items() if k not in _DETECTOR_OVERRIDES})
            cfg = parse_config(data, "command-line overrides")
        return cfg

    @property
    def default_language(self) -> str:
        """The run's language, or with 'auto' the one used when a document's cannot be determined."""
        if self.language != "auto":
            return self.language
        return self.config.language if self.config is not None else "en"

    def check(self) -> None:
        """Validate config, overrides, operators and key up front, before any document is read."""
        check_operators(self.config_for(self.default_language), self.key)

    def pipeline(self, language: str) -> Deidentifier:
        if language not in self._pipelines:
            self._pipelines[language] = Deidentifier(self.config_for(language), self.key)
        return self._pipelines[language]

    def is_built(self, language: str) -> bool:
        """Whether the pipeline of ``language`` has been built in this process."""
        return language in self._pipelines

    def all_built(self) -> bool:
        """Whether every pipeline the run can need has been built in this process."""
        return all(lang in self._pipelines for lang in self.languages_needed())

    def identify(self, doc: Document) -> LanguageGuess | None:
        """The language identified for ``doc``; None when it is given (by the document, the run or the
        config) or when the text is blank (its language does not matter)."""
        if doc.language or self.language != "auto" or self.config is not None or not doc.text.strip():
            return None
        return identify_language(doc.text, self.default_language)

    def language_of(self, doc: Document) -> str:
        return self.route(doc)[0].language or self.default_language

    def route(self, doc: Document) -> tuple[Document, LanguageGuess | None]:
        """``doc`` with the language whose pipeline it goes to, and the guess when it was identified."""
        guess = self.identify(doc)
        lang = guess.language if guess is not None else doc.language or self.default_language
        doc = doc if doc.language == lang else Document(doc.id, doc.text, lang, doc.metadata, doc.spans)
        return doc, guess

    def deidentify(
        self, doc: Document, patient_id: str | None = None, known: Sequence[Mention] = ()
    ) -> DeidResult:
        doc, guess = self.route(doc)
        result = self.pipeline(doc.language).deidentify(doc, patient_id, known)
        return result if guess is None else replace(result, language_guess=guess)

    def deidentify_with_fields(
        self,
        doc: Document,
        fields: Sequence[tuple[str, str]],
        patient_id: str | None = None,
        known: Sequence[Mention] = (),
    ) -> tuple[DeidResult, list[tuple[str, list[Replacement]]]]:
        """``Deidentifier.deidentify_with_fields`` with the pipeline of the document's language."""
        doc, guess = self.route(doc)
        pipeline = self.pipeline(doc.language)
        result, field_results = pipeline.deidentify_with_fields(doc, fields, patient_id, known)
        return (result if guess is None else replace(result, language_guess=guess)), field_results

    def mentions(self, doc: Document, fields: Sequence[tuple[str, str]] = ()) -> list[Mention]:
        """``Deidentifier.mentions`` with the pipeline of the document's language."""
        doc, _ = self.route(doc)
        return self.pipeline(doc.language).mentions(doc, fields)

    def languages_needed(self) -> tuple[str, ...]:
        """The languages whose pipelines a run may build: its own, or every supported one for 'auto'."""
        from clinideid.text.language import SUPPORTED

        if self.language != "auto":
            return (self.language,)
        return (self.config.language,) if self.config is not None else SUPPORTED

    def build_all(self) -> None:
        """Build every pipeline the run can need now, so a bad config or model fails before any output."""
        for language in self.languages_needed():
            self.pipeline(language)

    def deidentify_many(
        self, docs: Iterable[Document], patient_ids: Sequence[str | None] | None = None
    ) -> Iterator[DeidResult | ClinideidError]:
        """Results in order; a document that fails yields its error instead and the batch goes on."""
        for i, doc in enumerate(docs):
            try:
                yield self.deidentify(doc, patient_ids[i] if patient_ids else None)
            except ClinideidError as exc:
                log.warning("document %s failed: %s", doc.id, exc)
                yield exc
