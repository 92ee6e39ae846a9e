"""The synthetic-only CRF (``clinideid.train.synthetic``): trained, combined per label, runnable."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from clinideid.config import parse_config
from clinideid.pipeline import Deidentifier
from clinideid.synth import generate
from clinideid.train.synthetic import pipeline_with, train_synthetic_crf


def test_synthetic_crf_has_provenance_and_a_per_label_hybrid_that_runs(tmp_path: Path):
    model = train_synthetic_crf("de", tmp_path / "m", notes=30, seed=0, max_iterations=20)
    assert model.train_notes == 24 and model.held_back_notes == 6
    card = json.loads((tmp_path / "m" / "model.json").read_text("utf-8"))
    assert card["name"] == "de-synth-crf" and card["language"] == "de"
    assert "synthetic de notes from clinideid.synth (seed 0, notes 30" in card["training_data"]["description"]
    assert card["training_config"]["features"]["rules"]
    spec = model.detector
    assert spec["type"] == "hybrid" and spec["strategy"] == "per_label" and spec["default"] == "rules"
    assert spec["models"] == [{"type": "crf", "model": str((tmp_path / "m").resolve())}]
    assert set(spec["per_label"]) == set(model.per_label_scores)
    assert set(spec["per_label"].values()) <= {"rules", "model", "union"}
    deid = Deidentifier(parse_config(pipeline_with("de", spec)), secrets.token_bytes(32))
    (doc,) = generate("de", 1, seed=7)
    spans, _ = deid.detect(doc)
    assert spans and deid.config.operators  # the packaged operators kept, detectors replaced
