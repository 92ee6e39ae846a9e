"""Mixed-language batches: each document goes to its own language's pipeline; uncertain guesses are warned
about in its report and counted in summary.json, never with any of the text."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.document import Document
from clinideid.pipeline import MultilingualDeidentifier
from language_fixtures import SHORT_NOTES

_register_commands()
KEY = bytes(range(32))
ONLY_NUMBERS = "12/03/2019 45 120/80"
WEAK = "bp 120/80 hr 72"


def _mixed_notes() -> dict[str, tuple[str, str | None]]:
    """id -> (text, expected language; None where the run's default is expected)."""
    notes: dict[str, tuple[str, str | None]] = {}
    for lang, texts in SHORT_NOTES.items():
        notes[f"{lang}-lower"] = (texts[0], lang)
        notes[f"{lang}-upper"] = (texts[1].upper(), lang)
    notes["numbers"] = (ONLY_NUMBERS, None)
    notes["weak"] = (WEAK, None)
    return notes


def _run(*args: str):
    return CliRunner().invoke(app, ["deid", *args, "--no-progress", "--workers", "1"], catch_exceptions=False)


def _check_outputs(out: Path, notes: dict[str, tuple[str, str | None]], log_text: str) -> None:
    reports = {r["id"]: r for r in map(json.loads, (out / "report.jsonl").read_text("utf-8").splitlines())}
    assert set(reports) == set(notes)
    for doc_id, (_text, lang) in notes.items():
        if lang is not None:
            assert reports[doc_id]["language"] == lang, doc_id
            assert reports[doc_id]["language_detection"]["reliable"] is True
    assert reports["numbers"]["language"] == "en"  # the run's default for --language auto
    assert reports["numbers"]["language_detection"] == {"confidence": None, "reliable": False}
    assert reports["weak"]["language_detection"]["reliable"] is False

    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == len(notes)
    languages = summary["languages"]
    weak_lang = reports["weak"]["language"]
    expected_docs = {lang: 2 for lang in SHORT_NOTES}
    expected_docs["en"] += 1
    expected_docs[weak_lang] += 1
    assert languages["documents"] == expected_docs
    expected_detected = {lang: 2 for lang in SHORT_NOTES}
    expected_detected[weak_lang] += 1
    assert languages["detected"] == expected_detected
    assert languages["low_confidence"] == 1 and languages["undetermined"] == 1
    warned = {w["id"]: w["warning"] for w in summary["warnings"]}
    assert set(warned) == {"numbers", "weak"}
    assert "could not be determined" in warned["numbers"] and "low confidence" in warned["weak"]

    everything = (out / "summary.json").read_text("utf-8") + (out / "report.jsonl").read_text("utf-8")
    everything += log_text
    for text, _lang in notes.values():
        assert text not in everything and text.lower() not in everything


def test_a_mixed_folder_is_routed_per_document(tmp_path: Path, caplog):
    src, out = tmp_path / "notes", tmp_path / "safe"
    src.mkdir()
    notes = _mixed_notes()
    for doc_id, (text, _lang) in notes.items():
        (src / f"{doc_id}.txt").write_text(text, encoding="utf-8")
    with caplog.at_level(logging.DEBUG):
        res = _run(str(src), "-o", str(out), "--ephemeral-key")
    assert res.exit_code == 0, res.output
    _check_outputs(out, notes, caplog.text + res.output)


def test_a_mixed_jsonl_file_is_routed_per_record(tmp_path: Path, caplog):
    src, out = tmp_path / "notes.jsonl", tmp_path / "safe"
    notes = _mixed_notes()
    src.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, (t, _) in notes.items()), "utf-8")
    with caplog.at_level(logging.DEBUG):
        res = _run(str(src), "-o", str(out), "--ephemeral-key")
    assert res.exit_code == 0, res.output
    _check_outputs(out, notes, caplog.text + res.output)


def test_a_given_language_is_used_as_given():
    multi = MultilingualDeidentifier("auto", key=KEY)
    text = SHORT_NOTES["it"][0]
    assert multi.deidentify(Document("d", text, "es")).report().get("language_detection") is None
    assert multi.language_of(Document("d", text)) == "it"
    forced = MultilingualDeidentifier("fr", key=KEY)
    assert forced.identify(Document("d", text)) is None and forced.language_of(Document("d", text)) == "fr"


def test_a_blank_document_goes_to_the_default_without_a_language_warning():
    multi = MultilingualDeidentifier("auto", key=KEY)
    result = multi.deidentify(Document("d", "   \n"))
    assert result.language == "en" and result.warnings == [] and "language_detection" not in result.report()


def test_the_service_reports_the_identified_language_and_warns(tmp_path: Path):
    from fastapi.testclient import TestClient

    from clinideid.service import ServiceSettings, create_app

    token = "test-token-0123456789abcdef"
    settings = ServiceSettings(
        key=KEY, state_dir=tmp_path / "state", tokens=frozenset({token}), language="en"
    )
    documents = [
        {"id": "it", "text": SHORT_NOTES["it"][0]},
        {"id": "numbers", "text": ONLY_NUMBERS},
        {"id": "given", "text": SHORT_NOTES["it"][0], "language": "it"},
    ]
    with TestClient(create_app(settings)) as client:
        res = client.post(
            "/v1/deidentify",
            json={"documents": documents, "language": "auto", "audit": False},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert res.status_code == 200, res.text
    out = {d["id"]: d for d in res.json()["documents"]}
    assert out["it"]["language"] == "it" and out["it"]["language_detection"]["reliable"] is True
    assert "warnings" not in out["it"]
    assert out["numbers"]["language"] == "en" and "could not be determined" in out["numbers"]["warnings"][0]
    assert "language_detection" not in out["given"]
