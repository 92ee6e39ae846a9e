"""Unlabelled text sources for LM pretraining and the deterministic held-out split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinideid.errors import ConfigError, InputError
from clinideid.formats.base import ReadReport
from clinideid.lm.data import (
    UnlabelledText,
    heldout_score,
    heldout_split,
    iter_unlabelled_documents,
    iter_unlabelled_texts,
)

SECRET = "Juana Pérez"


def test_folder_is_read_recursively_and_ann_files_are_ignored(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("uno\n", encoding="utf-8")
    (tmp_path / "a.ann").write_text("T1\tFECHAS 0 3\tuno\n", encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text("\ufeffdos", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    docs = list(iter_unlabelled_documents(tmp_path))
    assert docs == [UnlabelledText("a.txt", "uno\n"), UnlabelledText("sub/b.txt", "dos")]  # BOM dropped


def test_jsonl_text_fields_and_named_field(tmp_path: Path):
    f = tmp_path / "notes.jsonl"
    rows = [{"note_id": "n1", "note_text": "uno"}, {"text": "dos"}, {"body": "tres", "id": 7}]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    report = ReadReport()
    assert list(iter_unlabelled_texts(f, report=report)) == ["uno", "dos"]
    assert len(report.errors) == 1 and "notes.jsonl:3" in str(report.errors[0])
    assert "--field" in str(report.errors[0])
    names = [d.name for d in iter_unlabelled_documents(f, field="body", report=ReadReport())]
    assert names == ["notes.jsonl:7"]


def test_bad_jsonl_lines_are_recorded_without_text(tmp_path: Path):
    f = tmp_path / "n.jsonl"
    f.write_text(f'{{"text": "ok"}}\n{{"text": "{SECRET}"\n["{SECRET}"]\n{{"text": 5}}\n', encoding="utf-8")
    report = ReadReport()
    assert list(iter_unlabelled_texts(f, report=report)) == ["ok"]
    assert [e.line for e in report.errors] == [2, 3, 4]
    assert all(SECRET not in str(e) for e in report.errors)


def test_bad_encoding_file_is_recorded_and_skipped(tmp_path: Path):
    (tmp_path / "good.txt").write_text("bien", encoding="utf-8")
    (tmp_path / "latin.txt").write_bytes(f"Paciente {SECRET}".encode("latin-1"))
    (tmp_path / "latin.jsonl").write_bytes(json.dumps({"text": SECRET}, ensure_ascii=False).encode("latin-1"))
    report = ReadReport()
    texts = list(iter_unlabelled_texts([tmp_path, tmp_path / "latin.jsonl"], report=report))
    assert texts == ["bien"]
    assert len(report.errors) == 2
    message = str(report.errors[0])
    assert "latin.txt" in message and "UTF-8" in message and SECRET not in message


def test_single_text_file_and_missing_path(tmp_path: Path):
    f = tmp_path / "one.text"
    f.write_text("hola", encoding="utf-8")
    assert list(iter_unlabelled_documents(f)) == [UnlabelledText("one.text", "hola")]
    with pytest.raises(InputError, match="does not exist"):
        list(iter_unlabelled_texts(tmp_path / "nope"))


def test_codec_corpus_annotations_ignored(tmp_path: Path):
    (tmp_path / "d1.txt").write_text("Paciente: Ana.\n", encoding="utf-8")
    (tmp_path / "d1.ann").write_text("T1\tNOMBRE_SUJETO_ASISTENCIA 10 13\tAna\n", encoding="utf-8")
    (tmp_path / "d2.txt").write_text("Sin datos.\n", encoding="utf-8")
    (tmp_path / "d2.ann").write_text("T1\tFECHAS 0 99\tmal\n", encoding="utf-8")  # broken: skipped, recorded
    report = ReadReport()
    docs = list(iter_unlabelled_documents(tmp_path, "brat", report=report))
    assert [d.text for d in docs] == ["Paciente: Ana.\n"]
    assert len(report.errors) == 1
    with pytest.raises(ConfigError, match="--field"):
        list(iter_unlabelled_documents(tmp_path, "brat", field="x"))


def _docs(n: int) -> list[UnlabelledText]:
    return [UnlabelledText(f"doc{i}.txt", f"texto {i}") for i in range(n)]


def test_heldout_split_is_deterministic_and_by_name():
    train, held = heldout_split(_docs(400), 0.1)
    shuffled_train, shuffled_held = heldout_split(list(reversed(_docs(400))), 0.1)
    assert set(shuffled_held) == set(held) and set(shuffled_train) == set(train)
    assert 20 <= len(held) <= 60 and len(train) + len(held) == 400
    # a document's side does not depend on the other documents
    assert set(held) >= set(heldout_split(_docs(400)[:200], 0.1)[1])
    assert heldout_split(_docs(400), 0.1, seed=1) != (train, held)
    assert heldout_score("doc1.txt") == heldout_score("doc1.txt")


def test_heldout_split_keeps_both_sides_non_empty():
    train, held = heldout_split(_docs(2), 0.001)
    assert len(train) == 1 and len(held) == 1
    train, held = heldout_split(_docs(3), 0.999)
    assert len(train) == 1 and len(held) == 2


def test_single_document_is_split_inside_at_a_line_break():
    text = "".join(f"línea {i}\n" for i in range(100))
    train, held = heldout_split([UnlabelledText("one", text)], 0.1)
    assert train[0] + held[0] == text
    assert train[0].endswith("\n") and 0.05 < len(held[0]) / len(text) < 0.2


def test_heldout_split_errors():
    with pytest.raises(InputError, match="no text"):
        heldout_split([], 0.1)
    with pytest.raises(ConfigError):
        heldout_split(_docs(3), 0.0)
    with pytest.raises(InputError):
        heldout_split([UnlabelledText("x", "a")], 0.1)
