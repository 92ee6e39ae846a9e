"""`clinideid train` options of the neural tagger: cross-view training, continued training, mixed corpora."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.formats import write_corpus
from crf_fixtures import make_corpus

_register_commands()

CONFIG = {"model": "neural", "window_size": 40, "window_overlap": 8, "neural": {"epochs": 1, "threads": 1}}


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli_neural")
    write_corpus(make_corpus(8, seed=1), root / "train", "brat")
    write_corpus(make_corpus(3, seed=2, prefix="dev"), root / "dev", "brat")
    write_corpus(make_corpus(5, seed=3, prefix="other"), root / "other.jsonl", "jsonl")
    (root / "unlabelled").mkdir()
    for k, doc in enumerate(make_corpus(4, seed=4, prefix="u")):
        (root / "unlabelled" / f"note{k}.txt").write_text(doc.text, encoding="utf-8")
    (root / "cfg.yaml").write_text(json.dumps(CONFIG), encoding="utf-8")
    return root


def _train(root: Path, out: str, *extra: str):
    args = ["train", "--model", "neural", "--train", str(root / "train"), "--dev", str(root / "dev")]
    args += ["--config", str(root / "cfg.yaml"), "--out", str(root / out), "--language", "es", *extra]
    return CliRunner().invoke(app, args)


def test_cvt_from_a_folder_of_text(corpora: Path) -> None:
    result = _train(corpora, "cvt", "--semi-supervised", "cvt", "--unlabelled", str(corpora / "unlabelled"))
    assert result.exit_code == 0, result.output
    assert "4 unlabelled documents" in result.output
    meta = json.loads((corpora / "cvt" / "model.json").read_text())
    assert meta["training_config"]["neural"]["cvt"] is True
    assert "cvt_loss" in meta["training_config"]["history"][0]


def test_mixed_corpora_and_continued_training(corpora: Path) -> None:
    mixed = _train(corpora, "mixed", "--mix", f"jsonl::{corpora / 'other.jsonl'}")
    assert mixed.exit_code == 0, mixed.output
    assert "mixing in 5 documents" in mixed.output
    meta = json.loads((corpora / "mixed" / "model.json").read_text())
    assert meta["training_data"]["documents"] == 13
    cont = _train(corpora, "continued", "--init-from", str(corpora / "mixed"))
    assert cont.exit_code == 0, cont.output
    meta = json.loads((corpora / "continued" / "model.json").read_text())
    assert meta["training_config"]["init_from"]["name"] == "mixed"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--semi-supervised", "cvt"], "needs --unlabelled"),
        (["--semi-supervised", "tri-training", "--unlabelled", "x"], "unknown --semi-supervised"),
        (["--unlabelled", "x"], "add that option"),
        (["--mix", "jsonl"], "FORMAT:SCHEME:PATH"),
    ],
)
def test_bad_neural_options_are_clear_errors(corpora: Path, extra: list[str], message: str) -> None:
    result = _train(corpora, "bad", *extra)
    assert result.exit_code != 0
    assert message in str(result.exception) + result.output


def test_neural_options_need_the_neural_model(corpora: Path) -> None:
    args = ["train", "--model", "crf", "--train", str(corpora / "train"), "--out", str(corpora / "x")]
    result = CliRunner().invoke(app, [*args, "--init-from", str(corpora / "mixed")])
    assert result.exit_code != 0 and "for --model neural" in str(result.exception)


def test_cvt_with_neighbour_reading_blocks_is_refused(corpora: Path, tmp_path: Path) -> None:
    cfg = {**CONFIG, "neural": {**CONFIG["neural"], "affix": True}}
    (tmp_path / "cfg.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    args = ["train", "--model", "neural", "--train", str(corpora / "train"), "--out", str(tmp_path / "m")]
    args += [
        "--config",
        str(tmp_path / "cfg.yaml"),
        "--semi-supervised",
        "cvt",
        "--unlabelled",
        str(corpora / "unlabelled"),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0 and "token-local" in str(result.exception)
