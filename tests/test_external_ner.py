"""NER-library adapters: Natasha (real packaged models), spaCy (a real pipeline trained here), Stanza."""

from __future__ import annotations

import hashlib
import os
import random
import sys
from pathlib import Path

import pytest

from clinideid.config import PipelineConfig
from clinideid.detect.base import build_detector
from clinideid.document import Document
from clinideid.errors import ConfigError, ModelError
from clinideid.pipeline import Deidentifier

KEY = hashlib.sha256(b"external-ner-tests").digest()

RU_NOTE = (
    "Пациент Смирнов Олег Викторович, 1961 г.р., проживает в г. Казань, Россия.\n"
    "Работает в ООО «Вектор». Осмотрен врачом Гончаровой Е.Н. 12.03.2024."
)


def _ru_doc(text: str = RU_NOTE) -> Document:
    return Document("n1", text, language="ru")


def _by_text(doc: Document, spans) -> dict[str, object]:
    return {doc.text[s.start : s.end]: s for s in spans}


# ---- Natasha ----------------------------------------------------------------------------------------------


@pytest.fixture
def natasha() -> None:
    pytest.importorskip("natasha", reason="the natasha extra is not installed")


def test_natasha_finds_people_places_organisations_with_exact_offsets(natasha: None) -> None:
    doc = _ru_doc()
    spans = build_detector({"type": "natasha"}).detect_one(doc)
    found = _by_text(doc, spans)
    assert found["Смирнов Олег Викторович"].label == "PERSON"
    assert found["Казань"].label == "CITY"
    assert found["Россия"].label == "COUNTRY"  # refined by the Russian place lists
    assert found["ООО «Вектор»"].label == "ORGANIZATION"
    assert any(t.startswith("Гончаровой") for t in found)
    for s in spans:
        assert s.source == "natasha"
        assert s.explanation and s.explanation.startswith("natasha-news-ner:")
        assert doc.text[s.start : s.end] == doc.text[s.start : s.end].strip()


def test_natasha_label_map_overrides_and_drops(natasha: None) -> None:
    doc = _ru_doc()
    spans = build_detector({"type": "natasha", "labels": {"ORG": "HOSPITAL", "LOC": None}}).detect_one(doc)
    labels = {s.label for s in spans}
    assert "HOSPITAL" in labels
    assert not labels & {"CITY", "COUNTRY", "STATE"}
    with pytest.raises(ConfigError, match="not a canonical label"):
        build_detector({"type": "natasha", "labels": {"PER": "HUMAN"}})


def test_natasha_alone_in_a_pipeline_config_and_inside_hybrid(natasha: None) -> None:
    alone = Deidentifier(PipelineConfig(language="ru", detectors=[{"type": "natasha"}]), key=KEY)
    doc = _ru_doc()
    assert {s.source for s in alone.detect(doc)[0]} == {"natasha"}
    result = alone.deidentify(doc)
    assert "Смирнов" not in result.text and "Казань" not in result.text

    hybrid = Deidentifier(
        PipelineConfig(
            language="ru",
            detectors=[
                {"type": "hybrid", "language": "ru", "models": [{"type": "natasha"}], "strategy": "union"}
            ],
        ),
        key=KEY,
    )
    spans, _ = hybrid.detect(doc)
    texts = {doc.text[s.start : s.end] for s in spans}
    assert "12.03.2024" in texts  # from the rules
    assert "ООО «Вектор»" in texts
    assert any("natasha" in s.source for s in spans)


def test_missing_library_is_a_model_error_naming_the_extra(monkeypatch) -> None:
    from clinideid.detect.external import natasha_ner, spacy_ner

    monkeypatch.setitem(sys.modules, "natasha", None)
    natasha_ner._models.cache_clear()
    try:
        with pytest.raises(ModelError, match=r"clinideid\[natasha\]"):
            build_detector({"type": "natasha"})
    finally:
        natasha_ner._models.cache_clear()
    monkeypatch.setitem(sys.modules, "spacy", None)
    spacy_ner._load.cache_clear()
    with pytest.raises(ModelError, match=r"clinideid\[spacy\]"):
        build_detector({"type": "spacy", "model": "any"})
    spacy_ner._load.cache_clear()


# ---- spaCy: a real pipeline trained with spaCy's own API on generated sentences ---------------------------

FIRST = ["John", "Mary", "Peter", "Linda", "Robert", "Susan", "James", "Karen"]
LAST = ["Smith", "Miller", "Walker", "Turner", "Hughes", "Parker", "Morgan", "Fisher"]
CITIES = ["Boston", "Denver", "Chicago", "Seattle", "Houston", "Phoenix"]
TEMPLATES = [
    "Patient {n} was admitted to the ward in {c}.",
    "Seen today: {n}, lives in {c}.",
    "{n} reports chest pain since Monday in {c}.",
    "Discussed with {n} who moved from {c}.",
]


@pytest.fixture(scope="module")
def spacy_model(tmp_path_factory) -> Path:
    spacy = pytest.importorskip("spacy", reason="the spacy extra is not installed")
    from spacy.training import Example

    spacy.util.fix_random_seed(0)
    rng = random.Random(0)
    data = []
    for _ in range(60):
        name, city = f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng.choice(CITIES)
        text = rng.choice(TEMPLATES).format(n=name, c=city)
        a, b = text.index(name), text.index(city)
        data.append((text, [(a, a + len(name), "PERSON"), (b, b + len(city), "GPE")]))
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("ner")
    for label in ("PERSON", "GPE"):
        ner.add_label(label)
    optimizer = nlp.initialize()
    for _ in range(12):
        rng.shuffle(data)
        for text, ents in data:
            example = Example.from_dict(nlp.make_doc(text), {"entities": ents})
            nlp.update([example], sgd=optimizer, drop=0.1)
    path = tmp_path_factory.mktemp("spacy") / "tiny_ner"
    nlp.to_disk(path)
    return path


def test_spacy_pipeline_loaded_by_path(spacy_model: Path) -> None:
    det = build_detector({"type": "spacy", "model": str(spacy_model)})
    docs = [
        Document("a", "Seen today: Mary Walker, lives in Boston.", language="en"),
        Document("b", "Patient Peter Fisher was admitted to the ward in Denver.", language="en"),
    ]
    out = det.detect(docs)
    for doc, spans in zip(docs, out, strict=True):
        found = _by_text(doc, spans)
        person = next(t for t in found if found[t].label == "PERSON")
        assert person in ("Mary Walker", "Peter Fisher")
        assert any(found[t].label == "CITY" for t in found)
        for s in spans:
            assert s.source == "spacy" and s.explanation.startswith("spacy:en_")
    assert det.to_config()["model"] == str(spacy_model)


def test_spacy_inside_hybrid(spacy_model: Path) -> None:
    deid = Deidentifier(
        PipelineConfig(
            language="en",
            detectors=[
                {
                    "type": "hybrid",
                    "language": "en",
                    "models": [{"type": "spacy", "model": str(spacy_model)}],
                    "strategy": "union",
                }
            ],
        ),
        key=KEY,
    )
    doc = Document("c", "Discussed with Linda Parker who moved from Seattle.", language="en")
    assert "Linda Parker" not in deid.deidentify(doc).text


def test_spacy_missing_pipeline_is_a_model_error(tmp_path: Path) -> None:
    pytest.importorskip("spacy", reason="the spacy extra is not installed")
    with pytest.raises(ModelError, match="nothing is downloaded"):
        build_detector({"type": "spacy", "model": str(tmp_path / "absent")})


# ---- Stanza -----------------------------------------------------------------------------------------------


def test_stanza_needs_an_existing_model_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="model_dir"):
        build_detector({"type": "stanza"})
    with pytest.raises(ModelError, match="no model directory"):
        build_detector({"type": "stanza", "model_dir": str(tmp_path / "absent")})


def test_stanza_folder_without_models_is_a_model_error(tmp_path: Path) -> None:
    pytest.importorskip("stanza", reason="the stanza extra is not installed")
    with pytest.raises(ModelError, match=r"stanza\.download"):
        build_detector({"type": "stanza", "model_dir": str(tmp_path), "language": "ru"})


STANZA_DIR = os.environ.get("CLINIDEID_STANZA_DIR", str(Path.home() / "stanza_resources"))


@pytest.mark.skipif(
    not (Path(STANZA_DIR) / "ru").is_dir(),
    reason="no local Stanza Russian models (set CLINIDEID_STANZA_DIR to a folder filled by stanza.download('ru'))",
)
def test_stanza_with_a_real_model_folder() -> None:
    pytest.importorskip("stanza", reason="the stanza extra is not installed")
    doc = _ru_doc()
    spans = build_detector({"type": "stanza", "model_dir": STANZA_DIR, "language": "ru"}).detect_one(doc)
    found = _by_text(doc, spans)
    assert any(s.label == "PERSON" for s in spans)
    assert all(s.source == "stanza" and s.explanation.startswith("stanza:ru:") for s in spans)
    assert all(t == t.strip() for t in found)
