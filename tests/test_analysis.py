"""One analysis per document: the rule engine and the tokenizer run once, whoever asks."""

from __future__ import annotations

import hashlib

import pytest

from clinideid import analysis
from clinideid.analysis import analysing, analysis_of, shared, tokens_of
from clinideid.detect.base import available_detectors
from clinideid.detect.rules.engine import RuleEngine
from clinideid.document import Document
from clinideid.pipeline import Deidentifier
from clinideid.resolve import resolve_spans

KEY = hashlib.sha256(b"analysis tests").digest()
TEXT_ES = "Paciente: Juan Pérez García, 45 años, NHC 1234567. Vive en la Calle Mayor 3 de Madrid."


@pytest.fixture
def counted(monkeypatch):
    calls = {"rules": 0, "tokenize": 0}
    run = RuleEngine.run

    def counting_run(self, text):
        calls["rules"] += 1
        return run(self, text)

    tokenize = analysis.tokenize

    def counting_tokenize(text):
        calls["tokenize"] += 1
        return tokenize(text)

    monkeypatch.setattr(RuleEngine, "run", counting_run)
    monkeypatch.setattr(analysis, "tokenize", counting_tokenize)
    return calls


def test_spanish_default_runs_the_rules_and_the_tokenizer_once_per_document(counted):
    deid = Deidentifier.for_language("es", KEY)
    doc = Document("d1", TEXT_ES, "es")
    spans, _ = deid.detect(doc)
    assert spans
    # the hybrid's rule source and the neural tagger's rule inputs share one engine run
    assert counted["rules"] == 1
    assert counted["tokenize"] == 1
    deid.detect(Document("d2", TEXT_ES + " Alta.", "es"))
    assert counted["rules"] == 2  # a new document is a new analysis


def test_the_same_detections_with_and_without_the_shared_analysis():
    deid = Deidentifier.for_language("es", KEY)
    doc = Document("d1", TEXT_ES, "es")
    in_pipeline, _ = deid.detect(doc)
    hybrid = deid.detectors[0]
    alone = hybrid.detect_one(doc)  # no analysis open: everything computed directly
    with analysing(doc):
        shared_run = hybrid.detect_one(doc)
    assert [(s.start, s.end, s.label) for s in alone] == [(s.start, s.end, s.label) for s in shared_run]
    every = [s for d in deid.detectors for s in (alone if d is hybrid else d.detect_one(doc))]
    res = deid.config.resolution
    resolved = resolve_spans(every, res.policy, res.priority).kept
    assert {(s.start, s.end, s.label) for s in in_pipeline} == {(s.start, s.end, s.label) for s in resolved}


def test_analysis_is_scoped_to_its_document():
    a = Document("a", "first text", "en")
    b = Document("b", "second text", "en")
    assert analysis_of(a) is None
    with analysing(a) as current:
        assert analysis_of(a) is current
        assert analysis_of(Document("copy", "first text", "en")) is current  # same text, same analysis
        assert analysis_of(b) is None
        assert tokens_of(a) is tokens_of(a)
        assert shared(a, "k", lambda: [1]) is shared(a, "k", lambda: [2])
        assert current.hits >= 2
    assert analysis_of(a) is None
    assert tokens_of(a) is not tokens_of(a)  # outside a pipeline: computed each time


def test_every_builtin_detector_declares_what_it_reads():
    from clinideid.detect.crf import CRFDetector
    from clinideid.detect.hybrid import HybridDetector
    from clinideid.detect.neural.tagger import NeuralDetector
    from clinideid.detect.rules import RuleDetector
    from clinideid.detect.transformer import TransformerDetector

    assert set(available_detectors()) >= {"rules", "crf", "hybrid", "neural", "transformer"}
    for cls in (RuleDetector, CRFDetector, HybridDetector, NeuralDetector, TransformerDetector):
        assert cls.needs and set(cls.needs) <= set(analysis.ANALYSES)


def test_batched_detection_equals_one_document_at_a_time():
    deid = Deidentifier.for_language("es", KEY)
    docs = [
        Document("a", TEXT_ES, "es"),
        Document("b", "Remitido por la Dra. Ana Martín Ruiz el 12/03/2019 desde Sevilla.", "es"),
        Document("c", "", "es"),
        Document("d", TEXT_ES, "es"),  # same text as "a": its own analysis, the same spans
    ]
    one_by_one = [deid.detect(d) for d in docs]
    batched = deid.detect_batch(docs)
    assert [[(s.start, s.end, s.label) for s in spans] for spans, _ in batched] == [
        [(s.start, s.end, s.label) for s in spans] for spans, _ in one_by_one
    ]
    patients = ["p1", "p2", None, "p1"]
    results = deid.deidentify_batch(docs, patients)
    assert [r.text for r in results] == [deid.deidentify(d, p).text for d, p in zip(docs, patients, strict=True)]
    assert results[0].text == results[3].text  # same patient, same key: same surrogates
    with pytest.raises(ValueError, match="one patient id"):
        deid.deidentify_batch(docs, ["p1"])


def test_long_documents_are_detected_in_chunks_within_a_batch():
    deid = Deidentifier.for_language("en", KEY)
    deid.config.max_chunk_chars = 400
    note = "Patient John Smith was seen on 03/04/2021 by Dr. Okafor at St. Mary's Hospital. " * 12
    spans, _ = deid.detect_batch([Document("long", note, "en")])[0]
    assert {note[s.start : s.end] for s in spans} >= {"John Smith", "03/04/2021", "Okafor"}
    assert all(s.text is None or note[s.start : s.end] == s.text for s in spans)
