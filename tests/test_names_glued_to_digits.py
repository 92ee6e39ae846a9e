"""A name glued to digits ("Quackenbush000", "000Quackenbush", "Smith2") is still the name, in the note as in
a field: digits are a boundary of a name word (rule name words end there, propagation and word lists split
there, as the tokenizer does), while an upper-case letter glued to digits is the shape of a code ("SpO2",
"HbA1c", "CD4", "T4", "B12") and stays what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.config import OperatorSpec, default_config
from clinideid.detect.rules.propagate import Seed, find_variants
from clinideid.detect.rules.schema import PropagateSpec
from clinideid.document import Document
from clinideid.pipeline import Deidentifier

_register_commands()
runner = CliRunner()
_PIPELINES: dict[str, Deidentifier] = {}

#: per language: a cue with a surname glued to digits, and the surname
CUED = {
    "en": [("Seen today by Dr. Quackenbush2 for chest pain.", "Quackenbush"),
           ("Mr Quackenbush000 reports less pain.", "Quackenbush")],
    "de": [("Heute gesehen von Dr. Quackenbusch2 wegen Brustschmerzen.", "Quackenbusch"),
           ("Herr Quackenbusch000 berichtet weniger Schmerzen.", "Quackenbusch")],
    "it": [("Visitata oggi dal Dott. Quackenbush2 per dolore toracico.", "Quackenbush"),
           ("Il Sig. Quackenbush000 riferisce meno dolore.", "Quackenbush")],
    "ru": [("Осмотрена сегодня врачом Кваккенбушем2 по поводу боли в груди.", "Кваккенбушем"),
           ("Пациент Кваккенбуш000 отмечает уменьшение боли.", "Кваккенбуш")],
}  # fmt: skip
#: per language: a note whose only name is the surname, the field label and the field value
WITH_FIELD = {
    "en": ("Seen today. Quackenbush000 reports less pain.", "patient name", "Quackenbush000"),
    "de": ("Heute gesehen. Quackenbusch000 berichtet weniger Schmerzen.", "patient name", "Quackenbusch000"),
    "it": ("Visitata oggi. Quackenbush000 riferisce meno dolore.", "paziente", "Quackenbush000"),
    "ru": ("Осмотрена сегодня. Кваккенбуш000 отмечает уменьшение боли.", "пациент", "Кваккенбуш000"),
}
#: per language: codes of letters and digits next to name cues and a name; none of them is a name
CODES = {
    "en": "Dr. Marwood reviewed: SpO2 94% on room air, HbA1c 8.2, CD4 300, T4 low, B12 low, pCO2 41. "
    "Continue Metformin500 mg. Mr Marwood agrees. Patient SpO2 stable.",
    "de": "Dr. Marwood: SpO2 94 % unter Raumluft, HbA1c 8,2, CD4 300, T4 erniedrigt, B12 niedrig. "
    "Weiter Metformin500 mg. Herr Marwood ist einverstanden. Patient SpO2 stabil.",
    "it": "Dott. Marwood: SpO2 94% in aria ambiente, HbA1c 8,2, CD4 300, T4 basso, B12 basso. "
    "Proseguire Metformin500 mg. Il Sig. Marwood concorda. Paziente SpO2 stabile.",
    "ru": "Врач Марвуд: SpO2 94%, HbA1c 8,2, CD4 300, T4 снижен, B12 снижен. Продолжить Метформин500 мг. "
    "Пациент Марвуд согласен. Пациент SpO2 стабилен.",
}
NAME_LABELS = {"PATIENT", "DOCTOR", "PERSON", "USERNAME"}


def tagging(language: str) -> Deidentifier:
    if language not in _PIPELINES:
        cfg = default_config(language).model_copy(
            update={"operators": {"default": OperatorSpec(operator="tag")}}
        )
        _PIPELINES[language] = Deidentifier(cfg)
    return _PIPELINES[language]


@pytest.mark.parametrize("language", sorted(CUED))
def test_a_cued_name_glued_to_digits_is_found(language):
    deid = tagging(language)
    for text, name in CUED[language]:
        result = deid.deidentify(Document("n", text, language))
        assert name not in result.text, text
        assert any(text[s.start : s.end] == name and s.label in NAME_LABELS for s in result.spans), text


@pytest.mark.parametrize("language", sorted(WITH_FIELD))
def test_a_name_found_in_a_field_is_found_glued_to_digits_in_the_note(language):
    note, label, value = WITH_FIELD[language]
    surname = value.rstrip("0")
    deid = tagging(language)
    result, fields = deid.deidentify_with_fields(Document("n", note, language), [(label, value)])
    assert surname not in result.text and surname not in fields[0][0]
    assert result.text.count("[NAME]") == 1
    assert result.text.replace("[NAME]", surname) == note  # the digits stay, only the name went


def test_a_known_name_is_found_after_digits_and_before_them():
    deid = tagging("en")
    text = "Patient: Zebediah Quackenbush\nLabel printed for 000Quackenbush, tube Quackenbush2."
    result = deid.deidentify(Document("n", text, "en"))
    assert "Quackenbush" not in result.text
    assert result.text.endswith("for 000[NAME], tube [NAME]2.")


@pytest.mark.parametrize("language", sorted(CODES))
def test_codes_of_letters_and_digits_never_become_names(language):
    text = CODES[language]
    spans, _ = tagging(language).detect(Document("n", text, language))
    names = [text[s.start : s.end] for s in spans if s.label in NAME_LABELS]
    assert names and {n for n in names} <= {"Marwood", "Марвуд"}, names


def test_propagation_counts_digits_as_a_word_boundary_and_letters_not():
    spec = PropagateSpec()
    seeds = [Seed("Quackenbush", "PATIENT", 0.9, "r", spec)]
    text = "A Quackenbush000, 000Quackenbush, Quackenbushes, Quackenbush\u0301 and Quackenbush."
    found = [text[s:e] for s, e, _ in find_variants(seeds, text, connectors=frozenset(), allowlist=None)]
    assert found == ["Quackenbush"] * 3
    # the path for many names (read word by word) agrees
    many = seeds + [
        Seed(f"Name{chr(97 + i)}{chr(97 + j)}", "PATIENT", 0.9, "r", spec) for i in range(9) for j in range(9)
    ]
    found = [text[s:e] for s, e, _ in find_variants(many, text, connectors=frozenset(), allowlist=None)]
    assert found == ["Quackenbush"] * 3


def test_deid_command_on_jsonl_with_a_name_field(tmp_path: Path):
    src = tmp_path / "notes.jsonl"
    records = [
        {
            "id": "a",
            "text": "Seen today. Quackenbush000 reports less pain.",
            "patient_name": "Quackenbush000",
        },
        {"id": "b", "text": "Mr Smith2 was seen by Dr. Quackenbush2 today.", "ward": "B12"},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    res = runner.invoke(
        app,
        ["deid", str(src), "-o", str(tmp_path / "out"), "--language", "en", "--ephemeral-key",
         "--operator", "default=tag", "--no-progress"],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = [json.loads(x) for x in (tmp_path / "out" / "notes.jsonl").read_text("utf-8").splitlines()]
    assert "Quackenbush" not in json.dumps(out) and "Smith" not in json.dumps(out)
    assert out[0]["text"] == "Seen today. [NAME]000 reports less pain."
    assert set(out[1]) == {"id", "text", "ward"}  # the record keeps its fields
