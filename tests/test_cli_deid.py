import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app

_register_commands()
runner = CliRunner()

NOTE_EN = (
    "Patient: John Miller    MRN: 4829105\nSeen on 11/02/2023 by Dr. Sarah Thompson. Phone (217) 555-0143.\n"
)
NOTE_ES = "Nombre: Ernesto\nApellidos: Rivera Bueno\nNHC: 368503\nFecha de ingreso: 12/12/2016\n"


def write_notes(folder: Path) -> None:
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text(NOTE_EN, encoding="utf-8")
    (folder / "sub" / "b.txt").write_text(NOTE_ES.replace("\n", "\r\n"), encoding="utf-8")
    (folder / "broken.txt").write_bytes(b"\xff\xfe\x00\x00binary")
    (folder / "latin.txt").write_bytes("Nombre: José Núñez\n".encode("latin-1"))


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_deid_folder_keeps_layout_and_records_bad_documents(tmp_path: Path, caplog):
    src, out = tmp_path / "notes", tmp_path / "safe"
    write_notes(src)
    key = tmp_path / "secret.key"
    assert run("keygen", str(key)).exit_code == 0
    with caplog.at_level(logging.DEBUG):
        res = run(
            "deid", str(src), "-o", str(out), "--key-file", str(key), "--annotations", "brat", "--no-progress"
        )
    assert res.exit_code == 3, res.output  # the binary one failed; the latin-1 one is read as cp1252
    assert (out / "a.txt").exists() and (out / "sub" / "b.txt").exists() and (out / "sub" / "b.ann").exists()
    a = (out / "a.txt").read_text("utf-8")
    assert "John" not in a and "Miller" not in a and "4829105" not in a and "555-0143" not in a
    b = (out / "sub" / "b.txt").read_bytes().decode("utf-8")
    assert "\r\n" in b and "Rivera" not in b  # layout (CRLF) kept, PHI gone
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["documents"] == 4 and summary["succeeded"] == 3 and summary["failed"] == 1
    assert {e["id"] for e in summary["errors"]} == {"broken"}
    assert summary["encodings"] == {"cp1252": 1, "utf-8": 2}
    assert "Núñez" not in (out / "latin.txt").read_text("utf-8")
    assert summary["spans_per_label"]["PATIENT"] >= 2
    # no PHI in the summary, the per-document report or the logs
    everything = (out / "summary.json").read_text("utf-8") + (out / "report.jsonl").read_text("utf-8")
    everything += caplog.text + res.output
    for phi in ("John", "Miller", "4829105", "Rivera", "368503", "José", "Núñez"):
        assert phi not in everything


def test_deid_is_reproducible_with_a_key_file(tmp_path: Path):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a.txt").write_text(NOTE_EN, encoding="utf-8")
    key = tmp_path / "k"
    run("keygen", str(key))
    run("deid", str(src), "-o", str(tmp_path / "o1"), "--key-file", str(key), "--language", "en")
    run("deid", str(src), "-o", str(tmp_path / "o2"), "--key-file", str(key), "--language", "en")
    assert (tmp_path / "o1" / "a.txt").read_text() == (tmp_path / "o2" / "a.txt").read_text()


def test_deid_jsonl_and_operator_overrides(tmp_path: Path):
    src = tmp_path / "notes.jsonl"
    lines = [
        json.dumps({"id": "n1", "text": NOTE_EN, "language": "en", "extra": 1}),
        "{broken",
        json.dumps({"id": "n2", "text": NOTE_ES, "language": "es"}),
    ]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = run(
        "deid",
        str(src),
        "-o",
        str(tmp_path / "out"),
        "--operator",
        "default=tag",
        "--operator",
        "DATE=redact",
        "--operator",
        "AGE=tag",
    )
    assert res.exit_code == 3, res.output  # the broken line failed
    records = [json.loads(x) for x in (tmp_path / "out" / "notes.jsonl").read_text("utf-8").splitlines()]
    assert [r["id"] for r in records] == ["n1", "n2"] and records[0]["extra"] == 1
    assert "[NAME]" in records[0]["text"] and "11/02/2023" not in records[0]["text"]
    assert "Seen on  by" in records[0]["text"]  # redacted date
    summary = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))
    assert summary["failed"] == 1 and "notes.jsonl:2" in summary["errors"][0]["error"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--language", "xx"], "unsupported language"),
        (["--operator", "DATE"], "LABEL=OPERATOR"),
        (["--operator", "DATE=shred"], "unknown operator"),
        (["--operator", "DATE=date_generalize:strategy=century", "--ephemeral-key"], "century"),
        (["--operator", "NAMES=tag", "--ephemeral-key"], "unknown labels"),
        (["--scope", "planet", "--ephemeral-key"], "--scope"),
        ([], "--key-file"),  # surrogates need a key: no silent fixed key
    ],
)
def test_deid_bad_options_fail_clearly(tmp_path: Path, args, message):
    src = tmp_path / "a.txt"
    src.write_text(NOTE_EN, encoding="utf-8")
    from clinideid.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["deid", str(src), "-o", str(tmp_path / "out"), *args])
    assert exc.value.code == 2


def test_deid_missing_input_is_fatal(tmp_path: Path, capsys):
    from clinideid.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["deid", str(tmp_path / "nope"), "-o", str(tmp_path / "out"), "--ephemeral-key"])
    assert exc.value.code == 2
    assert "does not exist" in capsys.readouterr().err


def test_deid_brat_corpus_input(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "d1.txt").write_text(NOTE_ES, encoding="utf-8")
    (corpus / "d1.ann").write_text("T1\tNOMBRE_SUJETO_ASISTENCIA 8 15\tErnesto\n", encoding="utf-8")
    res = run(
        "deid", str(corpus), "--format", "brat", "-o", str(tmp_path / "out"), "--ephemeral-key", "-l", "es"
    )
    assert res.exit_code == 0, res.output
    assert "Ernesto" not in (tmp_path / "out" / "d1.txt").read_text("utf-8")


def test_deid_with_a_trained_model(tmp_path: Path):
    src = tmp_path / "a.txt"
    src.write_text(NOTE_ES, encoding="utf-8")
    for extra in ([], ["--no-rules"], ["--strategy", "union"]):
        out = tmp_path / f"out{len(extra)}"
        res = run(
            "deid",
            str(src),
            "-o",
            str(out),
            "-l",
            "es",
            "--model",
            "es-meddocan-crf",
            "--ephemeral-key",
            *extra,
        )
        assert res.exit_code == 0, res.output
        text = (out / "a.txt").read_text("utf-8")
        assert "Rivera" not in text and "368503" not in text
        summary = json.loads((out / "summary.json").read_text("utf-8"))
        assert summary["succeeded"] == 1
    report = [json.loads(x) for x in (tmp_path / "out1" / "report.jsonl").read_text("utf-8").splitlines()]
    assert all(r["source"] != "rules" for r in report[0]["replacements"])  # --no-rules: the model alone


def test_deid_resume_redoes_missing_outputs_only(tmp_path: Path):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a.txt").write_text(NOTE_EN, encoding="utf-8")
    (src / "b.txt").write_text(NOTE_EN, encoding="utf-8")
    out = tmp_path / "out"
    key = tmp_path / "secret.key"
    run("keygen", str(key))
    run("deid", str(src), "-o", str(out), "--key-file", str(key), "-l", "en")
    (out / "b.txt").unlink()
    res = run("deid", str(src), "-o", str(out), "--key-file", str(key), "-l", "en", "--resume")
    assert res.exit_code == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["skipped"] == 1 and summary["succeeded"] == 2 and (out / "b.txt").exists()
    assert [r["done"] for r in summary["runs"]] == [2, 1]
    reported = [json.loads(x)["id"] for x in (out / "report.jsonl").read_text("utf-8").splitlines()]
    assert sorted(reported) == ["a", "b"]  # one report line per document, whatever the number of runs


def test_operator_options_on_the_command_line(tmp_path: Path):
    src = tmp_path / "a.txt"
    src.write_text("Patient admitted on 11/02/2023 and seen again on 03/15/2024.\n", encoding="utf-8")
    res = run(
        "deid", str(src), "-o", str(tmp_path / "out"), "-l", "en", "--operator", "default=tag",
        "--operator", "DATE=date_generalize:strategy=year", "--operator", "AGE=tag",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    text = (tmp_path / "out" / "a.txt").read_text("utf-8")
    assert "11/02" not in text and "2023" in text and "2024" in text
