"""A tiny CRF trained inside the test suite on a generated corpus: scores, save/load, detector, CLI."""

from __future__ import annotations

import json

import pytest

from clinideid.detect.base import build_detector
from clinideid.detect.crf import CRFDetector, CRFModel
from clinideid.document import Document
from clinideid.errors import ModelError
from clinideid.evaluate import evaluate
from clinideid.models import METADATA_FILE, TrainingData
from clinideid.train.config import parse_train_config
from clinideid.train.crf import train_crf
from crf_fixtures import make_corpus

TINY = {
    "features": {"gazetteers": []},
    "c1": [0.05, 0.5],
    "c2": [0.01],
    "max_iterations": 60,
}


@pytest.fixture(scope="module")
def corpus():
    return (
        make_corpus(80, seed=1, prefix="train"),
        make_corpus(15, seed=2, prefix="dev"),
        make_corpus(25, seed=3, prefix="test"),
    )


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    train, dev, _ = corpus
    out = tmp_path_factory.mktemp("models") / "tiny-crf"
    stages = []
    result = train_crf(
        train,
        dev,
        parse_train_config({**TINY, "workers": 2}),  # the two grid points train in parallel
        out_dir=out,
        name="tiny-crf",
        seed=5,
        language="es",
        training_data=TrainingData(description="generated templates", licence="CC0"),
        progress=lambda stage, done, total: stages.append((stage, done, total)),
    )
    return result, stages


def test_training_writes_a_complete_artifact(trained):
    result, stages = trained
    out = result.model_dir
    meta = json.loads((out / METADATA_FILE).read_text())
    assert meta["model_type"] == "crf" and meta["label_scheme"] == "BIOES" and meta["seed"] == 5
    assert meta["labels"] == ["AGE", "CITY", "DATE", "DOCTOR", "MEDICALRECORD", "PATIENT"]
    assert meta["weights"] == "model.crfsuite.gz" and (out / meta["weights"]).is_file()
    assert meta["training_data"]["licence"] == "CC0" and meta["training_data"]["documents"] == 80
    assert meta["training_config"]["selected"]["c1"] in (0.05, 0.5)
    assert len(meta["training_config"]["grid"]) == 2
    assert set(meta["dev_metrics"]) == {"strict", "span", "token_binary"}
    assert "python-crfsuite" in meta["versions"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["summary"] == meta["dev_metrics"]
    assert {s for s, _, _ in stages} == {"features (train)", "features (dev)", "grid"}
    assert ("grid", 2, 2) in stages


def test_tiny_crf_scores_well_on_held_out_generated_documents(trained, corpus):
    result, _ = trained
    _, _, test = corpus
    detector = CRFDetector(result.model_dir)
    system = [d.with_spans(detector.detect_one(d)) for d in test]
    report = evaluate(test, system, modes=["strict", "token_binary"])
    assert report["strict"].micro.f1 >= 0.9
    assert report["token_binary"].micro.recall >= 0.95


def test_saved_model_reloads_with_identical_predictions(trained, corpus):
    result, _ = trained
    _, _, test = corpus
    a = CRFModel.load(result.model_dir)
    b = CRFModel.load(result.model_dir)
    for doc in test[:10]:
        assert [(s.key(), s.score) for s in a.predict_spans(doc)] == [
            (s.key(), s.score) for s in b.predict_spans(doc)
        ]


def test_detector_spans_carry_source_explanation_and_score(trained, corpus):
    result, _ = trained
    det = build_detector({"type": "crf", "model": str(result.model_dir), "name": "mycrf"})
    spans = det.detect_one(corpus[2][0])
    assert spans
    for s in spans:
        assert s.source == "mycrf" and s.explanation == "crf:tiny-crf"
        assert 0.0 < s.score <= 1.0
    assert build_detector(det.to_config()).to_config() == det.to_config()
    strict = build_detector({"type": "crf", "model": str(result.model_dir), "min_score": 1.01})
    assert strict.detect_one(corpus[2][0]) == []
    assert det.detect_one(Document("empty", "")) == []


def test_window_units_train_and_predict(corpus, tmp_path):
    train, dev, test = corpus
    cfg = parse_train_config(
        {**TINY, "c1": [0.1], "unit": "window", "window_size": 16, "window_overlap": 4, "label_scheme": "BIO"}
    )
    result = train_crf(train[:40], dev, cfg, out_dir=tmp_path / "w", name="w", language="es")
    det = CRFDetector(result.model_dir)
    report = evaluate(test, [d.with_spans(det.detect_one(d)) for d in test], modes=["strict"])
    assert report["strict"].micro.f1 >= 0.85


def test_native_label_model_maps_to_canonical(corpus, tmp_path):
    train, dev, test = corpus
    native = {"PATIENT": "NOMBRE_SUJETO_ASISTENCIA", "DOCTOR": "NOMBRE_PERSONAL_SANITARIO", "DATE": "FECHAS"}

    def to_native(docs):
        return [
            d.with_spans(s.with_(label=native.get(s.label, "OTROS_SUJETO_ASISTENCIA")) for s in d.spans)
            for d in docs
        ]

    cfg = parse_train_config({**TINY, "c1": [0.1]})
    result = train_crf(
        to_native(train[:40]), to_native(dev), cfg, out_dir=tmp_path / "n", name="n", label_set="meddocan"
    )
    own = CRFDetector(result.model_dir, labels="model").detect_one(test[0])
    mapped = CRFDetector(result.model_dir).detect_one(test[0])
    assert "NOMBRE_SUJETO_ASISTENCIA" in {s.label for s in own}
    assert "PATIENT" in {s.label for s in mapped} and "NOMBRE_SUJETO_ASISTENCIA" not in {
        s.label for s in mapped
    }


def test_corrupt_weights_and_wrong_type_give_model_errors(trained, tmp_path):
    import shutil

    result, _ = trained
    broken = tmp_path / "broken"
    shutil.copytree(result.model_dir, broken)
    meta = json.loads((broken / METADATA_FILE).read_text())
    import gzip

    (broken / meta["weights"]).write_bytes(gzip.compress(b"not a crfsuite model"))
    with pytest.raises(ModelError, match="cannot be loaded"):
        CRFDetector(broken)
    meta["model_type"] = "transformer"
    (broken / METADATA_FILE).write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="'model_type'"):
        CRFDetector(broken)


def test_changed_word_lists_are_reported_at_load(corpus, tmp_path, caplog):
    train, dev, _ = corpus
    cfg = parse_train_config({**TINY, "c1": [0.1], "features": {"gazetteers": ["cities"]}})
    result = train_crf(train[:20], dev[:5], cfg, out_dir=tmp_path / "g", name="g", language="es")
    meta = json.loads((result.model_dir / METADATA_FILE).read_text())
    assert set(meta["resources"]) == {"gazetteer:cities"}
    with caplog.at_level("WARNING", logger="clinideid.detect.crf"):
        CRFModel.load(result.model_dir)
    assert not caplog.records
    meta["resources"]["gazetteer:cities"] = "0" * 16
    (result.model_dir / METADATA_FILE).write_text(json.dumps(meta))
    with caplog.at_level("WARNING", logger="clinideid.detect.crf"):
        CRFModel.load(result.model_dir)
    assert "gazetteer:cities" in caplog.text
