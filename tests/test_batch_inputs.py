import json
from pathlib import Path

from clinideid.batch.inputs import iter_inputs


def test_folder_inputs_keep_layout_and_report_bad_files(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.txt").write_text("Paciente Juan.\r\nLínea 2", encoding="utf-8")
    (tmp_path / "two.txt").write_bytes("Nota en latin-1: María".encode("latin-1"))
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF")
    (tmp_path / "data.xyz").write_bytes(b"\x00")
    (tmp_path / ".DS_Store").write_bytes(b"\x00")
    (tmp_path / "two.ann").write_text("T1\tPERSON 0 4\tNota\n", encoding="utf-8")
    (tmp_path / "lone.ann").write_text("", encoding="utf-8")  # no text beside it: unsupported
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "index").write_bytes(b"\x00")
    found = [i.loaded() for i in iter_inputs(tmp_path)]  # documents are read on demand
    assert [(i.doc_id, i.ignored) for i in found if i.ignored] == [
        (".DS_Store", "a hidden or system file"),
        ("two.ann", "annotations of a text file (read them with --format brat)"),
        (".git/index", "a hidden or system file"),
    ]
    items = {i.doc_id + i.suffix: i for i in found if not i.ignored}
    assert set(items) == {
        "a/one.txt",
        "two.txt",
        "bin.txt",
        "empty.txt",
        "broken.pdf.txt",
        "data.xyz.txt",
        "lone.ann.txt",
    }
    assert items["broken.pdf.txt"].error == "broken.pdf: not a readable PDF; not read"
    assert items["data.xyz.txt"].error.startswith("data.xyz: unsupported file type (.xyz); clinideid reads")
    assert items["a/one.txt"].document.text == "Paciente Juan.\r\nLínea 2"  # CRLF kept
    assert "not valid utf-8" in items["two.txt"].error
    assert "María" not in items["two.txt"].error
    assert "binary" in items["bin.txt"].error
    assert items["empty.txt"].document.text == ""
    latin = {i.doc_id + i.suffix: i for i in iter_inputs(tmp_path, encoding="latin-1")}
    assert latin["two.txt"].document.text.endswith("María")


def test_huge_input_is_an_error_not_a_crash(tmp_path: Path):
    (tmp_path / "big.txt").write_text("x" * 1000, encoding="utf-8")
    [item] = iter_inputs(tmp_path, max_bytes=100)
    assert item.error and "--max-bytes" in item.error


def test_jsonl_inputs_record_errors_per_line(tmp_path: Path):
    f = tmp_path / "notes.jsonl"
    lines = [
        json.dumps({"id": "n1", "text": "Paciente Juan", "patient_id": "p1"}),
        "{not json",
        json.dumps({"id": "n3", "body": "no text field"}),
        json.dumps({"note_id": "n4", "note_text": "Patiente Claire"}),
        json.dumps([1, 2]),
    ]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = list(iter_inputs(f))
    assert [i.doc_id for i in items] == ["n1", "notes-2", "n3", "n4", "notes-5"]
    assert items[0].document.metadata["patient_id"] == "p1"
    assert "invalid JSON" in items[1].error and "notes.jsonl:2" in items[1].error
    assert "no text field" in items[2].error
    assert items[3].document.text == "Patiente Claire"
    assert "not a JSON object" in items[4].error
