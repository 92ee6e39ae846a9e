"""Feature extraction for the CRF on crafted examples."""

from __future__ import annotations

import pytest

from clinideid.detect.base import Detector, register_detector
from clinideid.detect.features import (
    FeatureConfig,
    FeatureExtractor,
    chunk_shape,
    mark_tokens,
    short_shape,
    word_shape,
)
from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.text import tokenize

PLAIN = FeatureConfig(gazetteers=(), language="es")


def _features(text: str, config: FeatureConfig = PLAIN) -> dict[str, list[str]]:
    doc = Document("d", text)
    tokens = tokenize(text)
    feats = FeatureExtractor(config).document_features(doc, tokens)
    return {f"{t.text}@{t.start}": f for t, f in zip(tokens, feats, strict=True)}


def test_shapes():
    assert chunk_shape("03/03/1946") == "dd/dd/dddd"
    assert chunk_shape("nnavcu@hotmail.com") == "x@x.x"
    assert chunk_shape("García-López") == "Xx-Xx"
    assert chunk_shape("123456789") == "dddd"
    assert short_shape("Juan") == "Xx"
    assert word_shape("Juan") == "Xxxx"
    assert word_shape("28016") == "ddddd"


def test_word_affix_and_casing_features():
    f = _features("Nombre: Ernesto.")["Ernesto@8"]
    assert "w=ernesto" in f
    assert "title" in f
    assert {"p1=e", "p4=erne", "s1=o", "s4=esto"} <= set(f)
    assert "sh=Xxxxxxx" in f
    assert "len=7-9" in f
    assert "-1:w=:" in f and "-2:w=nombre" in f and "+1:w=." in f and "+2:EOS" in f


def test_form_field_features():
    text = "Datos del paciente.\nNombre: Ernesto Rivera.\nEdad: 70 años Sexo: H.\n"
    feats = _features(text)
    name = feats["Ernesto@28"]
    assert "after_colon" in name
    assert "fk=nombre" in name and "fkd=1" in name
    assert "fkd=2" in feats["Rivera@36"]
    assert "field_key" in feats["Nombre@20"]
    assert "bol" in feats["Nombre@20"] and "nl" in feats["Nombre@20"]
    assert "eol" in feats[".@42"]
    sexo = feats["H@64"]
    assert "fk=sexo" in sexo  # the second field on the same line takes over
    assert "fk=edad" in feats["70@50"]
    # a new line forgets the previous line's field
    assert not any(x.startswith("fk=") for x in feats["Datos@0"])


def test_time_colon_is_not_a_field():
    feats = _features("Hora 12:30 llega Juan")
    assert not any(x.startswith("fk=") for x in feats["Juan@17"])


def test_two_word_field_key_and_date_chunk_shape():
    feats = _features("Fecha de nacimiento: 03/03/1946.")
    day = feats["03@21"]
    assert "fk=nacimiento" in day and "fk2=de_nacimiento" in day
    assert "cs=dd/dd/dddd." in day and "cp=B" in day
    assert "glued" in feats["/@23"]
    assert "dlen=4" in feats["1946@27"]


def test_accent_folded_word():
    assert "wf=medico" in _features("Médico")["Médico@0"]


def test_mark_tokens_begin_inside():
    tokens = tokenize("Hospital Santa María de Toledo")
    marks = mark_tokens(tokens, [(9, 19, "hospitals"), (24, 30, "cities")])
    assert marks == [[], ["B-hospitals"], ["I-hospitals"], [], ["B-cities"]]


def test_gazetteer_features_with_custom_lists():
    cfg = FeatureConfig(gazetteers=("first_names", "cities"), language="es")
    ex = FeatureExtractor(cfg)
    ex.use_gazetteers({"first_names": ["Ernesto"], "cities": ["Villanueva de la Serena"]})
    text = "Ernesto vive en Villanueva de la Serena"
    tokens = tokenize(text)
    feats = ex.document_features(Document("d", text), tokens)
    assert "g=B-first_names" in feats[0]
    assert "+1:g=B-first_names" not in feats[0] and "-1:g=B-first_names" in feats[1]
    assert "g=B-cities" in feats[3] and "g=I-cities" in feats[6]
    assert set(ex.fingerprints()) == {"gazetteer:first_names", "gazetteer:cities"}
    with pytest.raises(ConfigError, match="not in this feature config"):
        ex.use_gazetteers({"surnames": ["X"]})


@register_detector("test_crf_fixed_rules")
class _FixedRules(Detector):
    """Finds the word 'Juan' as PATIENT (a stand-in for the rule engine)."""

    def detect_one(self, doc: Document) -> list[Span]:
        i = doc.text.find("Juan")
        return [] if i < 0 else [Span(i, i + 4, "PATIENT", source=self.name)]


def test_rule_hit_features_from_a_detector_spec_or_given_spans():
    cfg = FeatureConfig(gazetteers=(), rules={"type": "test_crf_fixed_rules"})
    ex = FeatureExtractor(cfg)
    assert ex.uses_rules
    text = "Visto por Juan hoy"
    feats = ex.document_features(Document("d", text))
    assert "r=B-PATIENT" in feats[2] and "-1:r=B-PATIENT" in feats[3]
    given = ex.document_features(Document("d", text), rule_spans=[Span(0, 5, "DOCTOR")])
    assert "r=B-DOCTOR" in given[0] and not any(x.startswith("r=") for x in given[2])


def test_feature_config_validation():
    with pytest.raises(ConfigError, match="unknown gazetteer"):
        FeatureConfig(gazetteers=("pets",), language="es")
    with pytest.raises(ConfigError, match="need a language"):
        FeatureConfig(gazetteers=("cities",))
    with pytest.raises(ConfigError, match="window"):
        FeatureConfig(window=9, gazetteers=())
    cfg = FeatureConfig(window=1, gazetteers=("cities",), language="fr")
    assert FeatureConfig.from_dict(cfg.to_dict()) == cfg


def test_empty_document_has_no_features():
    assert FeatureExtractor(PLAIN).document_features(Document("d", "   \n")) == []


def test_lone_surrogates_give_encodable_features_at_the_same_offsets():
    from clinideid.detect.features import encodable_text

    text = "Nombre: Ju\ud800an \udfff 12/03"
    assert encodable_text(text) == "Nombre: Ju\ufffdan \ufffd 12/03"
    assert len(encodable_text(text)) == len(text)
    tokens = tokenize(text)
    feats = FeatureExtractor(FeatureConfig(language="es")).document_features(Document("d", text), tokens)
    assert len(feats) == len(tokens)
    for row in feats:
        for feature in row:
            feature.encode("utf-8")  # strict: what CRFsuite does
    clean = _features("Nombre: Ju\ufffdan \ufffd 12/03", FeatureConfig(language="es"))
    assert feats == list(clean.values())
