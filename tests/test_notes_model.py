"""The multilingual notes CRF: language-independent evidence, per-document languages, SGD training, recall
decoding, writing-set folds and the packaged pipelines that use it."""

from __future__ import annotations

import random

import pytest

from clinideid.config import PIPELINES, default_config
from clinideid.detect.crf import CRFModel, train_crfsuite
from clinideid.detect.evidence import GROUPS, evidence_features
from clinideid.detect.features import FeatureConfig, FeatureExtractor
from clinideid.document import Document, Span
from clinideid.errors import ConfigError, InputError
from clinideid.pipeline import Deidentifier
from clinideid.resources import load_list
from clinideid.text import tokenize
from clinideid.train.config import parse_train_config
from clinideid.train.crf import featurize, training_sequences
from clinideid.train.notes import (
    first_fold_holding_out,
    notes_train_config,
    set_folds,
    train_notes_model,
    writing_set,
)
from crf_fixtures import make_corpus

KEY = bytes(range(32))


def _features_of(text: str, language: str, groups=GROUPS, rule_spans=()) -> dict[str, list[str]]:
    tokens = tokenize(text)
    feats = evidence_features(text, tokens, language, groups, rule_spans)
    return {t.text: f for t, f in zip(tokens, feats, strict=True)}


# -- evidence ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "name"),
    [
        ("en", "her daughter karen called", "karen"),
        ("de", "die Tochter Greta rief an", "Greta"),
        ("it", "la moglie rosa presente", "rosa"),
        ("ru", "звонила дочь наталья", "наталья"),
        ("es", "su hija lucía llamó", "lucía"),
        ("fr", "sa fille léa a appelé", "léa"),
    ],
)
def test_a_kinship_word_before_a_name_is_the_same_feature_in_every_language(language, text, name):
    assert "lx-1=KIN" in _features_of(text, language)[name]


def test_titles_roles_months_and_number_words_have_classes():
    feats = _features_of("seen by Dr Smith RN on Monday the fourth of July", "en", ("word_classes",))
    assert "lx=TITLE" in feats["Dr"] and "lx-1=TITLE" in feats["Smith"]
    assert "lx=ROLE" in feats["RN"] and "lx=WDAY" in feats["Monday"]
    assert "lx=NUMW" in feats["fourth"] and "lx=MONTH" in feats["July"]


def test_rows_of_numbers_and_tables_are_marked_and_prose_is_not():
    text = "HR  88  92  95  101\nPatient walked to the garden.\nName\tRoom\tBed\n"
    feats = _features_of(text, "en", ("line_shape",))
    assert "numrow" in feats["92"] and "numrow" not in feats["garden"]
    assert "tabrow" in feats["Room"] and "tabrow" not in feats["walked"]


def test_word_frequency_names_in_any_language_and_repetition():
    feats = _features_of("the patient Okonkwo saw Okonkwo again", "de", ("word_frequency", "repetition"))
    assert "zf=0" in feats["Okonkwo"] and "rep=2" in feats["Okonkwo"]
    en = _features_of("the patient and the nurse", "en", ("word_frequency",))
    assert any(f.startswith("zf=") and f != "zf=0" for f in en["the"])
    # a surname from the Russian lists is a name in an English note too
    ru_surname = next(w for w in load_list("ru", "surnames") if " " not in w)
    assert "name_any" in _features_of(f"Seen by {ru_surname} today", "en", ("names_any",))[ru_surname]


def test_a_word_the_rules_took_as_a_name_elsewhere_is_evidence_for_its_other_mentions():
    text = "Mr Quill was seen. Later quill walked."
    spans = [Span(3, 8, "PATIENT")]
    tokens = tokenize(text)
    feats = evidence_features(text, tokens, "en", ("rule_context",), spans)
    by_start = {t.start: f for t, f in zip(tokens, feats, strict=True)}
    assert "rdoc=NAME" in by_start[text.index("quill")]
    assert not any(f.startswith("rdoc") for f in by_start[text.index("walked")])


def test_unknown_evidence_groups_and_language_settings_are_config_errors():
    with pytest.raises(ConfigError, match="unknown feature group"):
        FeatureConfig(language="en", evidence=("hunches",))
    with pytest.raises(ConfigError, match="multilingual"):
        FeatureConfig(language="en", multilingual=True)
    with pytest.raises(ConfigError, match="language"):
        FeatureConfig(evidence=("word_classes",), gazetteers=())
    with pytest.raises(ConfigError, match="multilingual: true"):
        parse_train_config({"multilingual": True, "language": "en"}).feature_config(None)


def test_a_multilingual_extractor_reads_each_documents_language():
    extractor = FeatureExtractor(FeatureConfig(multilingual=True, evidence=("word_classes",)))
    de = extractor.document_features(Document("d", "Tochter Anna", "de"))
    it = extractor.document_features(Document("i", "figlia Anna", "it"))
    assert "lx-1=KIN" in de[1] and "lx-1=KIN" in it[1]
    with pytest.raises(ConfigError, match="multilingual model"):
        extractor.document_features(Document("x", "no language here", None))


# -- training and decoding -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A CRF trained with SGD on generated Spanish-like notes (seconds)."""
    cfg = parse_train_config({"language": "es", "algorithm": "l2sgd", "c2": [0.1], "max_iterations": 10})
    docs = make_corpus(60, seed=3)
    extractor = FeatureExtractor(cfg.feature_config("es"))
    fz = featurize(docs, extractor, cfg)
    x, y, _, _ = training_sequences(fz, cfg.label_scheme)
    weights = train_crfsuite(x, y, c1=0.0, c2=0.1, max_iterations=10, algorithm="l2sgd")
    return cfg, weights


def test_sgd_training_learns_the_generated_entities(tiny_model):
    cfg, weights = tiny_model
    from clinideid.detect.crf import _open_tagger, sequence_units, tag_units

    tagger = _open_tagger(weights)
    doc = make_corpus(1, seed=99)[0]
    tokens = tokenize(doc.text)
    feats = FeatureExtractor(cfg.feature_config("es")).document_features(doc, tokens)
    labels, _ = tag_units(tagger, feats, sequence_units(doc.text, tokens))
    found = {tokens[i].text for i, lab in enumerate(labels) if lab != "O"}
    gold = {t.text for s in doc.spans for t in tokenize(doc.text[s.start : s.end])}
    assert len(found & gold) >= 0.8 * len(gold)


def test_a_lower_threshold_only_adds_tokens_and_marks_them_with_an_entity_type(tiny_model):
    cfg, weights = tiny_model
    from clinideid.detect.crf import _open_tagger, sequence_units, tag_units, token_phi

    tagger = _open_tagger(weights)
    doc = Document(
        "t", "Nombre: Quorvan Ledstra.\nPresenta dolor.\nVive en Zentoria con su hijo Brel.\n", "es"
    )
    tokens = tokenize(doc.text)
    feats = FeatureExtractor(cfg.feature_config("es")).document_features(doc, tokens)
    units = sequence_units(doc.text, tokens)
    viterbi, _ = tag_units(tagger, feats, units)
    phi = token_phi(tagger, feats, units)
    for threshold in (0.5, 0.2, 0.05, 0.01):
        labels, probs = tag_units(tagger, feats, units, threshold)
        for i, (before, after) in enumerate(zip(viterbi, labels, strict=True)):
            if before != "O":
                assert after == before  # the best path is kept
            elif after != "O":
                assert phi[i] >= threshold and after.startswith("I-") and probs[i] == pytest.approx(phi[i])
            else:
                assert phi[i] < threshold
    assert sum(lab != "O" for lab in tag_units(tagger, feats, units, 0.01)[0]) >= sum(
        lab != "O" for lab in viterbi
    )


def test_threshold_out_of_range_is_a_config_error():
    with pytest.raises(ConfigError, match="threshold"):
        from clinideid.detect.base import build_detector

        build_detector({"type": "crf", "model": "notes-multi-crf", "threshold": 0})


# -- writing sets --------------------------------------------------------------------------------------------


def _notes(lang: str, sets: str, per_set: int = 2) -> list[Document]:
    return [Document(f"{lang}-{s}{k:03d}", "x", lang) for s in sets.split() for k in range(per_set)]


def test_writing_sets_come_from_ids_and_every_document_is_held_out_once():
    notes = {"en": _notes("en", "ua ub uc"), "ru": _notes("ru", "ra rb")}
    assert writing_set(notes["en"][0]) == "ua"
    with pytest.raises(InputError, match="writing set"):
        writing_set(Document("note-1", "x", "en"))
    folds = set_folds(notes)
    assert folds == [{"en": "ua", "ru": "ra"}, {"en": "ub", "ru": "rb"}, {"en": "uc", "ru": "ra"}]
    assert first_fold_holding_out(folds, "ru", "ra") == 0


def test_the_notes_model_trains_on_several_languages_and_tags_each_in_its_own(tmp_path):
    rng = random.Random(0)
    docs = []
    for k, doc in enumerate(make_corpus(24, seed=5)):
        lang = rng.choice(["es", "it"])
        docs.append(Document(f"{lang}-s{'ab'[k % 2]}{k:03d}", doc.text, lang, spans=doc.spans))
    config = notes_train_config(max_iterations=5)
    result = train_notes_model(docs, tmp_path / "m", "tiny-notes", config=config)
    assert set(result.metadata.resources) >= {"gazetteer:es:first_names", "gazetteer:it:first_names"}
    model = CRFModel.load(tmp_path / "m")
    assert model.extractor.config.multilingual
    spans = model.predict_spans(Document("x", make_corpus(1, seed=8)[0].text, "it"), threshold=0.3)
    assert any(s.label == "PATIENT" for s in spans)


# -- packaged pipelines --------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "de", "it", "ru", "es", "fr"])
def test_every_language_has_a_default_and_a_rules_only_pipeline(language):
    assert PIPELINES == ("default", "rules")
    rules = default_config(language, "rules")
    assert [d["type"] for d in rules.detectors] == ["rules"]
    default = default_config(language)
    assert any(m.get("model") == "notes-multi-crf" for d in default.detectors for m in d.get("models", []))
    with pytest.raises(ConfigError, match="packaged pipeline"):
        default_config(language, "fastest")


def test_the_rules_pipeline_finds_a_header_name_without_any_model():
    deid = Deidentifier.for_language("en", KEY, pipeline="rules")
    spans, _ = deid.detect(Document("h", "Patient: Thomas Whitaker\nDOB: 08/21/1944\n", "en"))
    assert {s.source for s in spans} <= {"rules"} and any(s.label == "PATIENT" for s in spans)
