"""``clinideid adapt --model neural``: site-text character LMs or Cross-View Training, then the neural tagger."""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from clinideid.adapt import AdaptOptions, adapt, site_texts
from clinideid.cli import _register_commands, app
from clinideid.errors import ConfigError
from clinideid.pipeline import Deidentifier
from clinideid.synth import generate

pytest.importorskip("torch")

_register_commands()
runner = CliRunner()
SITE_SEED = 99  # the "site" notes: synthetic text, labels thrown away
#: a tiny LM and tagger: the tests check the workflow, not the quality
TINY_LM = {
    "hidden_size": 16,
    "embedding_dim": 8,
    "max_batches": 3,
    "eval_every": 2,
    "batch_size": 4,
    "seq_len": 50,
}
TINY_TAGGER = {"word_dim": 16, "lstm_hidden": 16, "char_dim": 8, "char_hidden": 8}


def _site_notes(folder: Path, n: int = 12) -> list:
    docs = generate("it", n, seed=SITE_SEED)
    folder.mkdir(parents=True)
    for k, doc in enumerate(docs):
        (folder / f"note{k}.txt").write_text(doc.text, encoding="utf-8")
    return docs


def _opts(notes: Path, out: Path, semi: str, **kw) -> AdaptOptions:
    return AdaptOptions(
        notes,
        "it",
        out,
        synthetic=20,
        seed=3,
        model="neural",
        semi=semi,
        epochs=1,
        lm_config=TINY_LM,
        neural_config=TINY_TAGGER,
        **kw,
    )


def test_cli_neural_charlm_end_to_end(tmp_path: Path):
    docs = _site_notes(tmp_path / "notes")
    out = tmp_path / "out"
    args = ["adapt", str(tmp_path / "notes"), "-l", "it", "-o", str(out), "--synthetic", "20", "--seed", "3"]
    res = runner.invoke(
        app, [*args, "--model", "neural", "--semi", "charlm", "--epochs", "1"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    for step in ("silver", "synthetic", "lm", "train", "choose"):
        assert f"{step}: done" in res.output
    report = json.loads((out / "adapt.json").read_text("utf-8"))
    assert report["training"]["model"] == "neural" and report["training"]["semi"] == "charlm"
    assert report["training"]["epochs"] == 1 and len(report["training"]["history"]) == 1
    lms = report["language_models"]
    assert (
        lms["characters"] > 0 and lms["forward"]["chars_trained"] > 0 and lms["backward"]["chars_trained"] > 0
    )
    assert set(report["step_seconds"]) == {"silver", "synthetic", "lm", "train", "choose"}
    # the tagger reads the site LMs' states (its own copies travel with the model)
    card = json.loads((out / "model" / "model.json").read_text("utf-8"))
    assert card["model_type"] == "neural" and card["training_config"]["neural"]["charlm"]
    assert card["training_config"]["neural"]["rules"] == {"type": "rules", "language": "it"}
    (hybrid,) = yaml.safe_load((out / "pipeline.yaml").read_text("utf-8"))["detectors"]
    assert hybrid["models"] == [{"type": "neural", "model": str((out / "model").resolve())}]
    # the written pipeline loads and runs
    deid = Deidentifier.from_file(out / "pipeline.yaml", secrets.token_bytes(32))
    new = generate("it", 2, seed=SITE_SEED + 1)
    assert all(spans for spans, _ in deid.detect_batch(new))
    # no note text in what is meant to be shared
    public = (out / "adapt.json").read_text("utf-8") + res.output
    public += (out / "work" / "lm" / "forward.done").read_text("utf-8")
    for doc in docs:
        for span in doc.spans:
            if span.label in ("PATIENT", "DOCTOR", "STREET", "EMAIL"):
                assert doc.text[span.start : span.end] not in public


def test_neural_cvt_uses_the_site_text_and_no_lm(tmp_path: Path):
    _site_notes(tmp_path / "notes")
    report = adapt(_opts(tmp_path / "notes", tmp_path / "out", "cvt"))
    assert "language_models" not in report and not (tmp_path / "out" / "work" / "lm").exists()
    assert report["training"]["semi"] == "cvt" and report["training"]["unlabelled_notes"] == 12
    assert "cvt_loss" in report["training"]["history"][0]
    card = json.loads((tmp_path / "out" / "model" / "model.json").read_text("utf-8"))
    assert card["training_config"]["neural"]["cvt"] is True
    assert set(report["step_seconds"]) == {"silver", "synthetic", "train", "choose"}


def test_neural_resume_skips_finished_steps_and_lm_directions(tmp_path: Path):
    _site_notes(tmp_path / "notes")
    out = tmp_path / "out"
    adapt(_opts(tmp_path / "notes", out, "charlm"))
    forward_model = (out / "work" / "lm" / "forward" / "model.json").read_bytes()

    # an interruption after the forward LM: the lm step is not recorded, the backward LM is gone
    state_path = out / "work" / "state.json"
    state = json.loads(state_path.read_text("utf-8"))
    for step in ("lm", "train", "choose"):
        del state["steps"][step]
    state_path.write_text(json.dumps(state), encoding="utf-8")
    shutil.rmtree(out / "work" / "lm" / "backward")
    (out / "work" / "lm" / "backward.done").unlink()

    lines: list[str] = []
    report = adapt(_opts(tmp_path / "notes", out, "charlm", resume=True), progress=lines.append)
    assert report["resumed_steps"] == ["silver", "synthetic"]
    assert "lm: forward done earlier, skipped" in lines
    assert any(line.startswith("lm: backward bits/char") for line in lines)
    assert (out / "work" / "lm" / "forward" / "model.json").read_bytes() == forward_model
    assert (out / "work" / "lm" / "backward" / "model.json").is_file()

    lines.clear()
    report = adapt(_opts(tmp_path / "notes", out, "charlm", resume=True), progress=lines.append)
    assert report["resumed_steps"] == ["silver", "synthetic", "lm", "train", "choose"]
    assert all("skipped" in line for line in lines)


def test_a_run_cannot_resume_with_another_model_or_mode(tmp_path: Path):
    _site_notes(tmp_path / "notes", n=4)
    out = tmp_path / "out"
    adapt(_opts(tmp_path / "notes", out, "cvt"))
    with pytest.raises(ConfigError, match="other settings"):
        adapt(_opts(tmp_path / "notes", out, "charlm", resume=True))
    with pytest.raises(ConfigError, match="other settings"):
        adapt(AdaptOptions(tmp_path / "notes", "it", out, synthetic=20, seed=3, resume=True))


def test_bad_neural_options_are_refused(tmp_path: Path):
    _site_notes(tmp_path / "notes", n=2)
    with pytest.raises(ConfigError, match="--model"):
        adapt(AdaptOptions(tmp_path / "notes", "it", tmp_path / "o1", model="svm"))
    with pytest.raises(ConfigError, match="--semi"):
        adapt(AdaptOptions(tmp_path / "notes", "it", tmp_path / "o2", model="neural", semi="both"))


def test_site_texts_stop_at_the_character_limit(tmp_path: Path):
    silver = tmp_path / "silver.jsonl"
    silver.write_text(
        "".join(json.dumps({"id": f"site-{k}", "text": "x" * 400, "spans": []}) + "\n" for k in range(5)),
        encoding="utf-8",
    )
    texts = site_texts(silver, 1000)
    assert [i for i, _ in texts] == ["site-0", "site-1", "site-2"]
    assert sum(len(t) for _, t in texts) == 1000
