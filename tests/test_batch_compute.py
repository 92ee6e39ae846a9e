"""One document's work: de-identified and audited, or failed with a reason that holds no text."""

from __future__ import annotations

from clinideid.batch import compute as compute_module
from clinideid.batch.compute import Task, compute
from clinideid.document import Document
from clinideid.pipeline import MultilingualDeidentifier

KEY = bytes(range(32))
NOTE = "Seen by Dr. Quentin Harrowgate on 03/04/2021, MRN 48291057."


def _deid() -> MultilingualDeidentifier:
    return MultilingualDeidentifier("en", KEY)


def test_the_outcome_carries_the_audit_of_the_output():
    outcome = compute(Task(Document("n1", NOTE, "en")), _deid())
    assert outcome.result is not None and outcome.error is None and outcome.internal is None
    assert set(outcome.audit) >= {"risk", "flags_per_kind", "flags"}
    assert "Harrowgate" not in str(outcome.audit)  # offsets and kinds only


def test_an_audit_bug_fails_the_document_without_its_text(monkeypatch):
    def broken(*_args, **_kw):
        raise RuntimeError(NOTE)

    monkeypatch.setattr(compute_module, "audit_document", broken)
    outcome = compute(Task(Document("n1", NOTE, "en")), _deid())
    assert outcome.result is None and outcome.internal == "audit: RuntimeError"
    assert "Harrowgate" not in outcome.internal
