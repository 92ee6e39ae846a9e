"""Synthetic notes (``clinideid.synth``): exact gold spans, coverage, determinism, distractors, CLI."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid import validators as v
from clinideid.cli import _register_commands, app
from clinideid.document import find_overlaps
from clinideid.errors import ConfigError
from clinideid.evaluate import evaluate
from clinideid.formats import read_corpus
from clinideid.pipeline import Deidentifier
from clinideid.synth import DOC_TYPES, LANGUAGES, STYLES, generate, generate_notes

_register_commands()
runner = CliRunner()

#: labels every language's generator must produce
LABELS = {
    "PATIENT", "DOCTOR", "HOSPITAL", "ORGANIZATION", "STREET", "CITY", "STATE", "COUNTRY", "ZIP", "AGE",
    "DATE", "PHONE", "FAX", "EMAIL", "IDNUM", "MEDICALRECORD", "SSN", "HEALTHPLAN", "PROFESSION",
}  # fmt: skip
SAMPLE = len(STYLES) * len(DOC_TYPES) * 2  # every (style, type) pair twice

#: national identifiers that must carry a valid check digit, by language
VALID_SSN = {
    "en": v.validate_ssn,
    "it": v.validate_codice_fiscale,
    "ru": v.validate_snils,
    "es": lambda s: v.validate_dni(s) or v.validate_nie(s),
    "fr": v.validate_nir,
}


@pytest.fixture(scope="module", params=LANGUAGES)
def sample(request):
    lang = request.param
    return lang, list(generate_notes(lang, SAMPLE, seed=11))


def test_spans_are_exact_and_do_not_overlap(sample):
    lang, notes = sample
    for note in notes:
        doc = note.document
        assert doc.language == lang and doc.spans
        for span in doc.spans:
            assert doc.text[span.start : span.end] == span.text
            assert span.text == span.text.strip() and span.source == "gold"
        assert not find_overlaps(doc.spans)


def test_every_label_style_and_type_appears(sample):
    lang, notes = sample
    labels = Counter(s.label for n in notes for s in n.document.spans)
    assert set(labels) >= LABELS, f"{lang}: missing {LABELS - set(labels)}"
    assert {n.document.metadata["style"] for n in notes} == set(STYLES)
    assert {n.document.metadata["type"] for n in notes} == set(DOC_TYPES)
    pairs = {(n.document.metadata["style"], n.document.metadata["type"]) for n in notes}
    assert len(pairs) == len(STYLES) * len(DOC_TYPES)
    assert all(n.document.metadata["seed"] == 11 for n in notes)


def test_distractors_are_present_and_never_annotated(sample):
    lang, notes = sample
    kinds = Counter()
    for note in notes:
        for start, end, kind in note.distractors:
            kinds[kind] += 1
            assert not any(s.start < end and start < s.end for s in note.document.spans), (lang, kind)
    for kind in ("drug", "eponym", "vitals", "score", "time", "duration"):
        assert kinds[kind] > 0, (lang, kind)


def test_styles_change_the_text_as_described(sample):
    _lang, notes = sample
    by_style = {}
    for note in notes:
        by_style.setdefault(note.document.metadata["style"], []).append(note.document)
    for doc in by_style["upper"]:
        assert doc.text == doc.text.upper()
    for doc in by_style["lower"]:
        assert doc.text == doc.text.lower()
    assert any(" , " in d.text or " . " in d.text or " : " in d.text for d in by_style["tokens"])

    def glued(docs):  # values written straight after a letter or punctuation ("byDr.X", "Tel.:0612")
        return sum(s.start > 0 and d.text[s.start - 1] not in " \n\t(-/*" for d in docs for s in d.spans)

    assert glued(by_style["nospace"]) > glued(by_style["normal"])


def test_values_follow_the_country_formats(sample):
    lang, notes = sample
    ssns = [s.text for n in notes for s in n.document.spans if s.label == "SSN" and n.document.metadata["style"]
            in ("normal", "upper", "nospace", "tokens")]  # fmt: skip
    assert ssns
    check = VALID_SSN.get(lang)
    if check is not None:
        assert all(check(v.compact(x)) for x in ssns), lang
    if lang == "de":
        plans = [s.text for n in notes for s in n.document.spans if s.label == "HEALTHPLAN"
                 and n.document.metadata["style"] == "normal"]  # fmt: skip
        assert plans and all(v.validate_kvnr(p) for p in plans)


def test_patient_is_named_consistently_within_a_document(sample):
    lang, notes = sample
    repeated = 0
    for note in notes:
        names = [s.text.lower() for s in note.document.spans if s.label == "PATIENT"]
        words = Counter(w.strip(".,") for name in names for w in name.split() if len(w) > 2)
        repeated += any(c > 1 for c in words.values())
    assert repeated >= len(notes) // 10, lang


def test_same_seed_same_notes_other_seed_other_notes():
    a = generate("de", 30, seed=5)
    b = generate("de", 30, seed=5)
    c = generate("de", 30, seed=6)
    assert a == b
    assert [d.text for d in a] != [d.text for d in c]
    # a note does not depend on how many come before it in the request
    assert generate_notes("de", 1, seed=5, start=29).__next__().document == a[29]


def test_notes_are_the_same_in_another_process():
    code = (
        "import hashlib, json; from clinideid.synth import generate; "
        "print(hashlib.sha256(json.dumps([[d.text, [s.key() for s in d.spans]] for d in "
        "generate('ru', 14, seed=3)]).encode()).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    here = [[d.text, [list(s.key()) for s in d.spans]] for d in generate("ru", 14, seed=3)]
    assert out.stdout.strip() == hashlib.sha256(json.dumps(here).encode()).hexdigest()


def test_filters_and_bad_requests():
    docs = generate("fr", 12, seed=1, styles=["ocr", "upper"], types=["ed"])
    assert {d.metadata["style"] for d in docs} == {"ocr", "upper"}
    assert {d.metadata["type"] for d in docs} == {"ed"}
    with pytest.raises(ConfigError, match="unknown style"):
        generate("fr", 1, styles=["cursive"])
    with pytest.raises(ConfigError, match="unknown document type"):
        generate("fr", 1, types=["poem"])
    with pytest.raises(ConfigError, match="no synthetic-note templates"):
        generate("xx", 1)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_default_rules_find_most_generated_phi(lang):
    gold = generate(lang, len(STYLES) * len(DOC_TYPES), seed=2)
    deid = Deidentifier.for_language(lang, b"synth-test-key-not-a-secret-key!")
    system = [d.with_spans(spans) for d, (spans, _) in zip(gold, deid.detect_batch(gold), strict=True)]
    result = evaluate(gold, system, level="binary", modes=["token_binary"]).results["token_binary"]
    print(f"{lang}: token recall {result.micro.recall:.3f}, precision {result.micro.precision:.3f}")
    assert result.micro.recall >= 0.6


def test_cli_writes_a_corpus_that_reads_back(tmp_path: Path):
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["synth", "--language", "it", "--count", "20", "--seed", "7", "-o", f"{out}/"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    path = out / "synth-it-seed7.jsonl"
    docs = read_corpus(path, "jsonl")
    assert docs == generate("it", 20, seed=7)
    first = json.loads(path.read_text("utf-8").splitlines()[0])
    assert {"type", "style", "seed"} <= set(first["metadata"])

    brat = tmp_path / "brat"
    result = runner.invoke(
        app, ["synth", "-l", "ru,es", "-n", "5", "--styles", "ocr", "--types", "form", "-o", str(brat),
              "--format", "brat"], catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    back = read_corpus(brat, "brat")
    assert len(back) == 10 and sum(len(d.spans) for d in back) == sum(
        len(d.spans) for lang in ("ru", "es") for d in generate(lang, 5, 0, styles=["ocr"], types=["form"])
    )


def test_cli_rejects_unknown_language_without_writing(tmp_path: Path):
    from clinideid.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["synth", "--language", "xx", "-o", str(tmp_path / "x.jsonl")])
    assert exc.value.code == 2
    assert not (tmp_path / "x.jsonl").exists()
