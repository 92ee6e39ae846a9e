"""``clinideid convert`` end to end: formats, options, and clear errors that never echo document text."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app, main
from clinideid.formats import read_corpus

_register_commands()

TEXT = "Paciente: Ernesto Rivera.\nIngreso: 12/12/2016.\n"
ANN = "T1\tNOMBRE_SUJETO_ASISTENCIA 10 24\tErnesto Rivera\nT2\tFECHAS 35 45\t12/12/2016\n"


def brat_corpus(folder: Path) -> Path:
    folder.mkdir()
    (folder / "d1.txt").write_text(TEXT, encoding="utf-8")
    (folder / "d1.ann").write_text(ANN, encoding="utf-8")
    return folder


def test_convert_chain_keeps_spans(tmp_path: Path):
    src = brat_corpus(tmp_path / "brat")
    runner = CliRunner()
    res = runner.invoke(
        app, ["convert", "--from", "brat", "--to", "jsonl", str(src), str(tmp_path / "c.jsonl")]
    )
    assert res.exit_code == 0, res.output
    assert "1 documents, 2 spans" in res.output
    res = runner.invoke(
        app,
        [
            "convert",
            "--from",
            "jsonl",
            "--to",
            "conll",
            str(tmp_path / "c.jsonl"),
            str(tmp_path / "c.conll"),
            "--write-option",
            "scheme=BIOES",
            "--write-option",
            "offsets=true",
        ],
    )
    assert res.exit_code == 0, res.output
    conll = (tmp_path / "c.conll").read_text("utf-8")
    assert "S-FECHAS" not in conll and "B-FECHAS" in conll and "E-FECHAS" in conll
    runner.invoke(
        app, ["convert", "--from", "conll", "--to", "brat", str(tmp_path / "c.conll"), str(tmp_path / "b2")]
    )
    [doc] = read_corpus(tmp_path / "b2", "brat")
    [orig] = read_corpus(src, "brat")
    assert doc.text == orig.text
    assert [(s.start, s.end, s.label) for s in doc.spans] == [(s.start, s.end, s.label) for s in orig.spans]


def test_convert_errors_are_clear_and_hold_no_text(tmp_path: Path, capsys):
    src = brat_corpus(tmp_path / "brat")
    with pytest.raises(SystemExit) as exc:
        main(["convert", "--from", "bratt", "--to", "jsonl", str(src), str(tmp_path / "o.jsonl")])
    assert exc.value.code == 2 and "unknown corpus format" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"id": "a", "text": "Juan Pérez", "spans": []}) + "\n{oops Juan\n", encoding="utf-8"
    )
    with pytest.raises(SystemExit) as exc:
        main(["convert", "--from", "jsonl", "--to", "brat", str(bad), str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "bad.jsonl:2" in err and "Juan" not in err
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "convert",
                "--from",
                "jsonl",
                "--to",
                "brat",
                str(tmp_path / "missing.jsonl"),
                str(tmp_path / "o"),
            ]
        )
    assert exc.value.code == 2 and "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "convert",
                "--from",
                "jsonl",
                "--to",
                "brat",
                str(bad),
                str(tmp_path / "o"),
                "--write-option",
                "x",
            ]
        )
    assert exc.value.code == 2 and "KEY=VALUE" in capsys.readouterr().err


def test_convert_skip_bad_documents(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    good = json.dumps(
        {"id": "a", "text": "Juan Pérez", "spans": [{"start": 0, "end": 4, "label": "PATIENT"}]}
    )
    bad.write_text(good + "\n{oops\n", encoding="utf-8")
    res = CliRunner().invoke(
        app,
        [
            "convert",
            "--from",
            "jsonl",
            "--to",
            "jsonl",
            str(bad),
            str(tmp_path / "o.jsonl"),
            "--on-error",
            "skip",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "1 documents, 1 spans" in res.output
