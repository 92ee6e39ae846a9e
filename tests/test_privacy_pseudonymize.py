"""Pseudonymised corpora: offsets through every codec, determinism with a key, the CLI."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.document import Document, Span
from clinideid.formats import read_corpus, write_corpus
from clinideid.privacy.pseudonymize import (
    PseudonymizationError,
    Pseudonymizer,
    PseudonymizeReport,
    verify_pseudonymized,
)
from clinideid.synth import generate

KEY = hashlib.sha256(b"test key one").digest()
OTHER_KEY = hashlib.sha256(b"test key two").digest()
CODECS = ["brat", "i2b2", "conll", "jsonl", "physionet"]


@pytest.fixture(scope="module")
def notes() -> list[Document]:
    return generate("en", 6, seed=3, styles=["normal"])


def _outside(doc: Document) -> list[str]:
    pieces, cursor = [], 0
    for s in doc.spans:
        pieces.append(doc.text[cursor : s.start])
        cursor = s.end
    pieces.append(doc.text[cursor:])
    return pieces


def test_spans_replaced_and_text_outside_kept(notes: list[Document]) -> None:
    pseudo = Pseudonymizer(KEY)
    for doc in notes:
        new, reps = pseudo.document(doc)
        assert len(new.spans) == len(doc.spans) == len(reps)
        assert _outside(new) == _outside(doc)
        assert [s.label for s in new.spans] == [s.label for s in doc.spans]
        for rep, span in zip(reps, new.spans, strict=True):
            assert (rep.new_start, rep.new_end) == (span.start, span.end)
        changed = sum(new.span_text(a) != doc.span_text(b) for a, b in zip(new.spans, doc.spans, strict=True))
        assert changed >= len(doc.spans) * 0.7  # ages under 90 may stay; names, dates, ids change


def test_deterministic_with_a_key_and_different_with_another(notes: list[Document]) -> None:
    a = [Pseudonymizer(KEY).document(d)[0] for d in notes]
    b = [Pseudonymizer(KEY).document(d)[0] for d in notes]
    c = [Pseudonymizer(OTHER_KEY).document(d)[0] for d in notes]
    assert [d.text for d in a] == [d.text for d in b]
    assert [d.text for d in a] != [d.text for d in c]
    names = lambda docs: [d.span_text(s) for d in docs for s in d.spans if s.label == "PATIENT"]  # noqa: E731
    assert sum(x != y for x, y in zip(names(a), names(c), strict=True)) >= len(names(a)) * 0.8


def test_patient_scope_keeps_a_name_consistent_across_documents() -> None:
    text = "Patient John Smith seen today."
    docs = [Document(f"d{i}", text, "en", {"patient_id": "p1"}, (Span(8, 18, "PATIENT"),)) for i in range(2)]
    doc_scope = [Pseudonymizer(KEY).document(d)[0].text for d in docs]
    patient_scope = [Pseudonymizer(KEY, scope="patient").document(d)[0].text for d in docs]
    assert patient_scope[0] == patient_scope[1]
    assert doc_scope[0] != doc_scope[1]


@pytest.mark.parametrize("codec", CODECS)
def test_offsets_survive_every_codec(codec: str, notes: list[Document], tmp_path: Path) -> None:
    pseudo = [Pseudonymizer(KEY).document(d)[0] for d in notes]
    out = tmp_path / ("corpus" if codec in ("brat", "i2b2") else f"corpus.{codec}")
    opts = {"offsets": True} if codec == "conll" else {}
    write_corpus(pseudo, out, codec, **opts)
    back = read_corpus(out, codec)
    if codec != "physionet":  # PhysioNet numbers its records: documents come back in order, renamed
        by_id = {d.id: d for d in back}
        back = [by_id[d.id] for d in pseudo]
    assert len(back) == len(pseudo)
    for doc, got in zip(pseudo, back, strict=True):
        want = [(doc.span_text(s), s.label) for s in doc.spans]
        assert [(got.span_text(s), s.label) for s in got.spans] == want


def test_discontinuous_span_and_verification_catches_a_wrong_text() -> None:
    doc = Document(
        "d", "Dr. Anna and Dr. Berg met.", "en", {}, (Span(4, 21, "DOCTOR", fragments=((4, 8), (17, 21))),)
    )
    new, reps = Pseudonymizer(KEY).document(doc)
    assert new.text.endswith(" and Dr.  met.")
    assert new.span_text(new.spans[0]) not in ("Anna", "")
    tampered = new.with_text(new.text.replace(" and", " AND"), new.spans)
    with pytest.raises(PseudonymizationError):
        verify_pseudonymized(doc, tampered, reps)


def test_overlapping_gold_spans_fail_that_document_only() -> None:
    bad = Document("bad", "John Smith here", "en", {}, (Span(0, 10, "PATIENT"), Span(5, 10, "PATIENT")))
    good = Document("good", "Mary Jones here", "en", {}, (Span(0, 10, "PATIENT"),))
    report = PseudonymizeReport()
    out = list(Pseudonymizer(KEY).corpus([bad, good], report, on_error="skip"))
    assert [d.id for d in out] == ["good"]
    assert [i for i, _ in report.failures] == ["bad"]
    assert "John" not in report.failures[0][1]
    with pytest.raises(PseudonymizationError):
        list(Pseudonymizer(KEY).corpus([bad], on_error="raise"))


def test_label_scheme_picks_surrogates_for_native_labels() -> None:
    doc = Document("m", "Paciente: Ernesto Rivera.", "es", {}, (Span(10, 24, "NOMBRE_SUJETO_ASISTENCIA"),))
    new, reps = Pseudonymizer(KEY, label_scheme="meddocan").document(doc)
    assert new.spans[0].label == "NOMBRE_SUJETO_ASISTENCIA"
    assert reps[0].operator == "surrogate" and not new.span_text(new.spans[0]).startswith("[")


def test_cli_brat_to_jsonl(notes: list[Document], tmp_path: Path) -> None:
    _register_commands()
    src = tmp_path / "in"
    write_corpus(notes, src, "brat")
    key_file = tmp_path / "k.key"
    key_file.write_text(KEY.hex())
    out, rep = tmp_path / "out.jsonl", tmp_path / "report.json"
    args = ["pseudonymize-corpus", str(src), "-o", str(out), "--from-format", "brat", "--to-format", "jsonl",
            "--key-file", str(key_file), "--report", str(rep)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    docs = read_corpus(out, "jsonl")
    assert len(docs) == len(notes) and sum(len(d.spans) for d in docs) == sum(len(d.spans) for d in notes)
    assert json.loads(rep.read_text())["documents"] == len(notes)
    again = CliRunner().invoke(app, args)
    assert again.exit_code != 0  # never overwrites an existing output


@pytest.mark.parametrize(
    "command", ["pseudonymize-corpus", "privacy-train", "privacy-release", "privacy-audit"]
)
def test_help_shows_an_example(command: str) -> None:
    _register_commands()
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0 and f"clinideid {command}" in result.output
