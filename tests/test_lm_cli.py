"""``clinideid pretrain-lm`` end to end on a tiny folder, resume, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app, main
from clinideid.lm import load_embedder
from clinideid.text import tokenize
from lm_fixtures import generated_notes, one_torch_thread


@pytest.fixture(autouse=True)
def _one_thread():
    with one_torch_thread():
        yield


_register_commands()

SECRET = "Ramón Quesada"
SMALL = ["--hidden", "16", "--embedding-dim", "8", "--seq-len", "20", "--batch-size", "2", "--min-count", "1"]


def corpus(folder: Path) -> Path:
    (folder / "sub").mkdir(parents=True)
    for i, note in enumerate(generated_notes(12, seed=4)):
        (folder / ("sub" if i % 2 else ".") / f"n{i}.txt").write_text(note, encoding="utf-8")
    (folder / "n0.ann").write_text("T1\tFECHAS 0 3\tPac\n", encoding="utf-8")
    (folder / "latin.txt").write_bytes(f"Paciente {SECRET}".encode("latin-1"))
    return folder


def test_pretrain_both_directions_then_embed(tmp_path):
    src = corpus(tmp_path / "notes")
    out = tmp_path / "lm"
    res = CliRunner().invoke(
        app,
        ["pretrain-lm", "--text", str(src), "--out", str(out), "--epochs", "2", "--sequential", *SMALL],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    assert "1 file(s) or record(s) skipped" in res.output and "latin.txt" in res.output
    assert SECRET not in res.output
    assert "forward: held-out perplexity" in res.output and "backward: held-out perplexity" in res.output
    emb = load_embedder(out / "forward", out / "backward")
    text = "Paciente Ana de 40 años."
    assert emb.token_embeddings(text, tokenize(text)).shape == (len(tokenize(text)), 32)
    assert emb.forward_lm.metadata is not None and emb.forward_lm.metadata.name == "lm-forward"


def test_stopped_run_resumes(tmp_path):
    src = corpus(tmp_path / "notes")
    out = tmp_path / "fwd"
    args = ["pretrain-lm", "--text", str(src), "--out", str(out), "--direction", "forward", *SMALL]
    runner = CliRunner()
    res = runner.invoke(app, [*args, "--max-minutes", "0.000001"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "stopped: max_minutes" in res.output and "--resume" in res.output
    res = runner.invoke(app, [*args, "--epochs", "1", "--resume"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "stopped: epochs" in res.output and (out / "model.json").is_file()


def run_main(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_clear_errors(tmp_path, capsys):
    src = corpus(tmp_path / "notes")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    assert "not empty" in run_main(["pretrain-lm", "--text", str(src), "--out", str(busy)], capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "blank.txt").write_text("\n\n")
    err = run_main(["pretrain-lm", "--text", str(empty), "--out", str(tmp_path / "o")], capsys)
    assert "no text found" in err
    err = run_main(
        ["pretrain-lm", "--text", str(src), "--out", str(tmp_path / "o"), "--direction", "up"], capsys
    )
    assert "unknown --direction" in err
    err = run_main(["pretrain-lm", "--text", str(src), "--out", str(tmp_path / "o"), "--layers", "3"], capsys)
    assert "layers" in err
    err = run_main(
        ["pretrain-lm", "--text", str(src), "--out", str(tmp_path / "o"), "--heldout", "1.5"], capsys
    )
    assert "--heldout" in err
    err = run_main(["pretrain-lm", "--text", str(tmp_path / "missing"), "--out", str(tmp_path / "o")], capsys)
    assert "does not exist" in err
    assert SECRET not in capsys.readouterr().err


def test_help_shows_an_example():
    res = CliRunner().invoke(app, ["pretrain-lm", "--help"])
    assert res.exit_code == 0 and "Example: clinideid pretrain-lm" in res.output
