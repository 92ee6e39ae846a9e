"""Invisible characters inside a name never hide it: detectors read the visible text, and each replacement
covers the whole original word, the hidden characters in it included (``clinideid.text.invisible``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.config import OperatorSpec, default_config, parse_config
from clinideid.document import Document
from clinideid.pipeline import Deidentifier, model_detectors
from clinideid.text.invisible import strip_invisible, visible_text
from clinideid.text.language import identify_language

#: one character of every class that is removed before detection
INVISIBLE = {
    "zero-width space": "\u200b",
    "zero-width non-joiner": "\u200c",
    "zero-width joiner": "\u200d",
    "word joiner": "\u2060",
    "function application": "\u2061",
    "invisible times": "\u2062",
    "invisible separator": "\u2063",
    "invisible plus": "\u2064",
    "soft hyphen": "\u00ad",
    "zero-width no-break space (BOM)": "\ufeff",
    "left-to-right mark": "\u200e",
    "right-to-left mark": "\u200f",
    "arabic letter mark": "\u061c",
    "left-to-right embedding": "\u202a",
    "right-to-left embedding": "\u202b",
    "pop directional formatting": "\u202c",
    "left-to-right override": "\u202d",
    "right-to-left override": "\u202e",
    "left-to-right isolate": "\u2066",
    "right-to-left isolate": "\u2067",
    "first strong isolate": "\u2068",
    "pop directional isolate": "\u2069",
    "mongolian vowel separator": "\u180e",
    "mongolian free variation selector": "\u180b",
    "variation selector 16": "\ufe0f",
    "variation selector 17": "\U000e0100",
    "tag latin small letter a": "\U000e0061",
    "cancel tag": "\U000e007f",
    "combining grapheme joiner": "\u034f",
    "interlinear annotation anchor": "\ufff9",
    "shorthand format letter overlap": "\U0001bca0",
}
#: characters that look blank or odd but are kept: spaces separate words for every detector already, the
#: Hangul filler is a letter, the Arabic number sign is visible
KEPT = ["\u00a0", "\u202f", "\u2009", "\u2002", "\u3164", "\u0600", "\u2028", "é", "ё"]

#: per language: a note and the names the default pipeline finds in it (clean)
NOTES = {
    "en": (
        "Patient: Ottilie Vandersloot\nSeen today by Dr. Quentin Marwood for chest pain.\n",
        ["Ottilie", "Vandersloot", "Quentin", "Marwood"],
    ),
    "de": (
        "Patientin: Ottilie Vandersloot\nHeute gesehen von Dr. Quentin Marwood wegen Brustschmerzen.\n",
        ["Ottilie", "Vandersloot", "Quentin", "Marwood"],
    ),
    "it": (
        "Paziente: Ottilie Vandersloot\nVisitata oggi dal Dott. Quentin Marwood per dolore toracico.\n",
        ["Ottilie", "Vandersloot", "Quentin", "Marwood"],
    ),
    "ru": (
        "Пациент: Вандерслоот Оттилия\nОсмотрена сегодня врачом Марвудом К. по поводу боли в груди.\n",
        ["Вандерслоот", "Оттилия", "Марвудом"],
    ),
}

#: halves of the names above that occur nowhere else in the notes
FRAGMENTS = ("Otti", "ilie", "Vander", "sloot", "Марв", "удом", "Ванде", "слоот", "Отти", "лия")

_register_commands()
runner = CliRunner()
_PIPELINES: dict[str, Deidentifier] = {}


def tagging(language: str) -> Deidentifier:
    """The language's default detectors with every span replaced by its tag (no surrogate can happen to
    contain a fragment of the name)."""
    if language not in _PIPELINES:
        cfg = default_config(language).model_copy(
            update={"operators": {"default": OperatorSpec(operator="tag")}}
        )
        _PIPELINES[language] = Deidentifier(cfg)
    return _PIPELINES[language]


def split_names(text: str, names: list[str], hidden: str) -> str:
    """``text`` with ``hidden`` inserted in the middle of every name."""
    for name in names:
        half = len(name) // 2
        text = text.replace(name, name[:half] + hidden + name[half:])
    return text


def name_positions(text: str, names: list[str]) -> list[int]:
    """The positions of every letter of every name in ``text`` (names as written in the clean note)."""
    visible, offsets = strip_invisible(text)
    out = []
    for name in names:
        start = visible.index(name)
        for i in range(start, start + len(name)):
            out.append(offsets.start(i) if offsets is not None else i)
    return out


def covered(positions: list[int], replacements) -> list[int]:
    """The positions not inside any replacement."""
    return [p for p in positions if not any(r.start <= p < r.end for r in replacements)]


# ---- the normalisation itself ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_every_invisible_class_is_removed_and_mapped_back(name):
    char = INVISIBLE[name]
    text = f"{char}Jo{char}{char}hn Smi{char}th{char}"
    visible, offsets = strip_invisible(text)
    assert visible == "John Smith" and offsets is not None
    assert offsets.span(0, 4) == (1, 7)  # "Jo..hn": from its first letter to its last, hidden ones inside
    assert offsets.span(5, 10) == (8, 14)
    assert text[slice(*offsets.span(0, 10))] == text[1:-1]


@pytest.mark.parametrize("char", KEPT)
def test_visible_characters_and_spaces_are_kept(char):
    text = f"John{char}Smith"
    assert strip_invisible(text) == (text, None)


def test_text_without_invisible_characters_takes_the_fast_path():
    for text in ("plain ASCII note", "Ärztin Dr. Müller, Москва, né\u00a0le 12/03"):
        visible, offsets = strip_invisible(text)
        assert visible is text and offsets is None
        assert visible_text(text) is text or visible_text(text) == text


@given(
    st.text(alphabet=st.sampled_from("ab \n."), min_size=1, max_size=30),
    st.lists(st.tuples(st.integers(0, 30), st.sampled_from(sorted(INVISIBLE.values()))), max_size=10),
)
def test_every_visible_span_maps_to_the_original_characters(clean, inserts):
    text = clean
    for pos, char in sorted(inserts, reverse=True):
        pos = min(pos, len(text))
        text = text[:pos] + char + text[pos:]
    visible, offsets = strip_invisible(text)
    assert visible == clean
    if offsets is None:
        assert text == clean
        return
    for s in range(len(clean)):
        for e in range(s + 1, len(clean) + 1):
            a, b = offsets.span(s, e)
            assert visible_text(text[a:b]) == clean[s:e]
            assert text[a] == clean[s] and text[b - 1] == clean[e - 1]  # no hidden character at the edges


def test_the_language_guess_reads_words_without_hidden_characters():
    text = "Il paziente è stato ricoverato con febbre e la dimissione è avvenuta dopo tre giorni."
    hidden = text.replace("il ", "i\u200bl ").replace(" e ", " \u2060e ").replace(" la ", " l\u00ada ")
    assert identify_language(hidden) == identify_language(text)
    assert identify_language(text).language == "it"


# ---- through the pipeline ------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", sorted(NOTES))
@pytest.mark.parametrize("hidden", ["\u200b", "\u2060", "\u00ad", "\u202e", "\ufeff\u200d"])
def test_a_name_split_by_a_hidden_character_is_replaced_whole(language, hidden):
    clean, names = NOTES[language]
    deid = tagging(language)
    text = split_names(clean, names, hidden)
    result = deid.deidentify(Document("n", text, language))
    assert result.text == deid.deidentify(Document("n", clean, language)).text  # same as the clean note
    assert not covered(name_positions(text, names), result.replacements)
    assert not any(fragment in result.text for fragment in FRAGMENTS)
    doc = Document("n", text, language, spans=result.spans)  # spans are valid in the original text
    for span in doc.spans:
        assert span.text is None or span.text == text[span.start : span.end]
        assert visible_text(text[span.start]) and visible_text(text[span.end - 1])
    for rep in result.replacements:  # report offsets point at the original and at the new text
        assert result.text[rep.new_start : rep.new_end].startswith("[")


def test_hidden_characters_outside_names_are_kept_and_surrogates_match_the_clean_name():
    deid = Deidentifier.for_language("en", key=bytes(range(32)))
    clean = "Patient: John Quackenbush\u200b\nSeen today.\u2060"
    hidden = "Patient: Jo\u200bhn Quacken\u00adbush\u200b\nSeen today.\u2060"
    a = deid.deidentify(Document("n", clean, "en"))
    b = deid.deidentify(Document("n", hidden, "en"))
    assert a.text == b.text  # the same surrogate, and no hidden character carried into it
    assert b.text.endswith("\u200b\nSeen today.\u2060")  # characters outside spans untouched
    keep = Deidentifier(
        default_config("en").model_copy(update={"operators": {"default": OperatorSpec(operator="keep")}})
    )
    assert keep.deidentify(Document("n", hidden, "en")).text == hidden


def test_fields_and_note_both_lose_a_hidden_split_name():
    deid = tagging("en")
    note = Document("n", "Seen today. Mr Quacken\u200bbush reports pain.", "en")
    result, fields = deid.deidentify_with_fields(note, [("patient name", "Zebe\u00addiah Quacken\u2060bush")])
    assert "Quacken" not in result.text and "bush" not in result.text
    ((value, replacements),) = fields
    assert value == "[NAME]" and replacements[0].start == 0 and replacements[0].end == 22


def test_a_learned_detector_reads_the_visible_text():
    cfg = default_config("es").model_dump()
    cfg["detectors"] = model_detectors("es", ["es-meddocan-crf"], with_rules=False)
    cfg["operators"] = {"default": {"operator": "tag"}}
    deid = Deidentifier(parse_config(cfg, "test"))
    clean = "Paciente de 45 años, Ernesto Rivera Bueno, natural de Sevilla, acude el 12/12/2016."
    text = split_names(clean, ["Ernesto", "Rivera", "Bueno"], "\u200b")
    spans, _ = deid.detect(Document("n", text, "es"))
    clean_spans, _ = deid.detect(Document("n", clean, "es"))
    assert [visible_text(text[s.start : s.end]) for s in spans] == [
        clean[s.start : s.end] for s in clean_spans
    ]
    assert any(s.label in ("PATIENT", "DOCTOR", "PERSON") for s in spans)


def test_long_documents_are_chunked_on_the_visible_text():
    cfg = default_config("en").model_copy(
        update={"max_chunk_chars": 2_000, "operators": {"default": OperatorSpec(operator="tag")}}
    )
    deid = Deidentifier(cfg)
    clean, names = NOTES["en"]
    clean = "The patient was comfortable overnight.\n" * 60 + clean
    text = split_names(clean, names, "\u200b\u00ad")
    result = deid.deidentify(Document("n", text, "en"))
    assert not covered(name_positions(text, names), result.replacements)


@settings(max_examples=40, deadline=None)
@given(
    language=st.sampled_from(sorted(NOTES)),
    inserts=st.lists(
        st.tuples(st.integers(0, 10_000), st.sampled_from(sorted(INVISIBLE.values()))),
        min_size=1,
        max_size=12,
    ),
)
def test_hidden_characters_at_random_positions_never_let_a_name_survive(language, inserts):
    clean, names = NOTES[language]
    deid = tagging(language)
    text = clean
    for pos, char in sorted(inserts, reverse=True):
        pos = pos % (len(text) + 1)
        text = text[:pos] + char + text[pos:]
    result = deid.deidentify(Document("n", text, language))
    assert not covered(name_positions(text, names), result.replacements)
    assert visible_text(result.text) == deid.deidentify(Document("n", clean, language)).text


# ---- through ``clinideid deid`` -----------------------------------------------------------------------------


def _deid(*args: str):
    return runner.invoke(
        app,
        ["deid", *args, "--no-progress", "--ephemeral-key", "--operator", "default=tag"],
        catch_exceptions=False,
    )


def test_deid_command_on_a_folder_and_a_jsonl_file(tmp_path: Path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    clean, names = NOTES["en"]
    for i, char in enumerate(INVISIBLE.values()):
        (src / f"{i:02d}.txt").write_text(split_names(clean, names, char), encoding="utf-8")
    res = _deid(str(src), "-o", str(out), "--language", "en")
    assert res.exit_code == 0, res.output
    for i, name in enumerate(INVISIBLE):
        written = (out / f"{i:02d}.txt").read_text("utf-8")
        assert written == "Patient: [NAME]\nSeen today by Dr. [NAME] for chest pain.\n", name

    notes = tmp_path / "notes.jsonl"
    records = [
        {
            "id": "a",
            "text": "Patient: Jo\u200bhn Smith\nSeen by Dr. Otti\u2060lie Vander\u00adsloot.",
            "language": "en",
        },
        {
            "id": "b",
            "text": "Seen today. Mr Quacken\u200bbush reports pain.",
            "patient_name": "Quacken\u00adbush",
        },
    ]
    notes.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    res = _deid(str(notes), "-o", str(tmp_path / "jout"), "--language", "en")
    assert res.exit_code == 0, res.output
    written = (tmp_path / "jout" / "notes.jsonl").read_text("utf-8")
    for fragment in ("Jo", "hn", "Smith", "Otti", "lie ", "Vander", "sloot", "Quacken", "bush"):
        assert fragment not in json.dumps([json.loads(x) for x in written.splitlines()], ensure_ascii=False)
    report = [json.loads(x) for x in (tmp_path / "jout" / "report.jsonl").read_text("utf-8").splitlines()]
    for line, record in zip(report, records, strict=True):
        for rep in line["replacements"]:
            assert 0 <= rep["start"] < rep["end"] <= len(record["text"])


def test_deid_command_on_a_docx_replaces_the_whole_hidden_split_name(tmp_path: Path):
    docx = pytest.importorskip("docx")
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    document = docx.Document()
    paragraph = document.add_paragraph("Patient: Otti\u2060lie ")
    paragraph.add_run("Vander\u00ad")  # the name runs on over two runs
    paragraph.add_run("sloot")
    document.add_paragraph("Seen today by Dr. Quen​tin Marwood.")
    document.save(src / "letter.docx")
    res = _deid(str(src), "-o", str(out), "--language", "en")
    assert res.exit_code == 0, res.output
    text = "\n".join(p.text for p in docx.Document(out / "letter.docx").paragraphs)
    assert text.startswith("Patient: [NAME]\nSeen today by Dr. [NAME]"), text
    assert not any(fragment in text for fragment in FRAGMENTS)
