"""JSONL (native and variants) and Presidio codecs."""

import json

import pytest

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats import ReadReport, read_corpus, write_corpus


def test_native_roundtrip_keeps_every_field(tmp_path):
    doc = Document(
        "n1",
        "Ana\u2028López\r\n vive en Sevilla\x85.",
        language="es",
        metadata={"split": "train", "n": [1, 2]},
        spans=[
            Span(
                0,
                9,
                "PATIENT",
                text="Ana\u2028López",
                source="rules",
                score=0.75,
                explanation="name list",
                id="S1",
            ),
            Span(19, 26, "CITY", fragments=((19, 22), (23, 26)), attributes={"note": "x", "k": {"a": 1}}),
        ],
    )
    path = tmp_path / "c.jsonl"
    write_corpus([doc, Document("empty", "")], path, "jsonl")
    assert len(path.read_bytes().split(b"\n")) == 3  # two records, no broken lines
    back = read_corpus(path, "jsonl")
    assert back[0] == doc
    assert back[1] == Document("empty", "")


def test_reads_eds_pseudo_and_spacy_like_lines(tmp_path):
    path = tmp_path / "mixed.jsonl"
    lines = [
        {
            "note_id": "gen-1",
            "note_text": "Dr DUPONT 18/02/2019",
            "entities": [{"start": 3, "end": 9, "label": "NOM"}],
        },
        {
            "text": "Call 555-1234",
            "spans": [{"start": 5, "end": 13, "label": "PHONE", "kb_id": "x"}],
            "split": "dev",
        },
        {"text": "Paris", "ents": [{"start": 0, "end": 5, "label": "GPE"}]},
        {"text": "Ana", "spans": {"sc": [{"start": 0, "end": 3, "label": "PER"}]}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    docs = read_corpus(path, "jsonl")
    assert [d.id for d in docs] == ["gen-1", "mixed-1", "mixed-2", "mixed-3"]
    assert docs[0].span_text(docs[0].spans[0]) == "DUPONT"
    assert docs[1].metadata["split"] == "dev" and docs[1].spans[0].attributes["kb_id"] == "x"
    assert docs[3].spans[0].attributes["span_group"] == "sc"


def test_reads_a_json_list_file(tmp_path):
    path = tmp_path / "list.json"
    path.write_text(json.dumps([{"id": 7, "text": "Ana", "spans": [{"start": 0, "end": 3, "label": "P"}]}]))
    (doc,) = read_corpus(path, "jsonl")
    assert doc.id == "7" and doc.spans[0].key() == (0, 3, "P")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"text": "Ana Secreta", "spans": [', "malformed JSON"),
        ('["Ana Secreta"]', "JSON object"),
        ('{"id": "x"}', "text field"),
        ('{"text": "Ana Secreta", "spans": [{"start": "0", "end": 3, "label": "P"}]}', "integer"),
        ('{"text": "Ana Secreta", "spans": [{"start": 0, "end": 3}]}', "label"),
        ('{"text": "Ana Secreta", "spans": [{"start": 0, "end": 99, "label": "P"}]}', "beyond"),
        ('{"text": "Ana Secreta", "spans": [{"start": 0, "end": 3, "label": "P", "score": 7}]}', "score"),
    ],
)
def test_malformed_lines_name_file_and_line_not_text(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "ok", "text": "fine"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=message) as err:
        read_corpus(path, "jsonl")
    assert "bad.jsonl:2" in str(err.value)
    assert "Secreta" not in str(err.value)


def test_skip_mode_reads_past_a_malformed_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{oops\n{"id": "b", "text": "y"}\n', encoding="utf-8")
    report = ReadReport()
    docs = read_corpus(path, "jsonl", on_error="skip", report=report)
    assert [d.id for d in docs] == ["a", "b"] and "c.jsonl:2" in str(report.errors[0])


def test_unserialisable_metadata_is_a_clear_error(tmp_path):
    with pytest.raises(FormatError, match="JSON cannot store"):
        write_corpus([Document("d", "x", metadata={"when": object()})], tmp_path / "o.jsonl", "jsonl")


PRESIDIO = [
    {
        "full_text": "The address of Persint is 6750 Koskikatu\nUruguay",
        "masked": "The address of {{ORGANIZATION}} is {{STREET_ADDRESS}}",
        "spans": [
            {
                "entity_type": "STREET_ADDRESS",
                "entity_value": "6750 Koskikatu\nUruguay",
                "start_position": 26,
                "end_position": 48,
            },
            {
                "entity_type": "ORGANIZATION",
                "entity_value": "Persint",
                "start_position": 15,
                "end_position": 22,
            },
        ],
        "template_id": 87,
        "metadata": None,
    },
    {
        "full_text": "What are my options?",
        "masked": "What are my options?",
        "spans": [],
        "template_id": 3,
        "metadata": None,
    },
]


def test_presidio_read_and_roundtrip(tmp_path):
    path = tmp_path / "synth.json"
    path.write_text(json.dumps(PRESIDIO), encoding="utf-8")
    docs = read_corpus(path, "presidio")
    assert [d.id for d in docs] == ["synth-0", "synth-1"]
    assert [s.label for s in docs[0].spans] == ["ORGANIZATION", "STREET_ADDRESS"]
    assert docs[0].metadata["template_id"] == 87
    out = tmp_path / "out.json"
    write_corpus(docs, out, "presidio")
    written = json.loads(out.read_text("utf-8"))
    assert written[0]["masked"] == PRESIDIO[0]["masked"]
    assert written[0]["template_id"] == 87 and written[0]["metadata"]["doc_id"] == "synth-0"
    assert read_corpus(out, "presidio") == docs


def test_presidio_wrong_entity_value_is_an_error(tmp_path):
    bad = json.loads(json.dumps(PRESIDIO))
    bad[0]["spans"][1]["start_position"] = 16
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(FormatError, match="sample 0") as err:
        read_corpus(path, "presidio")
    assert "Persint" not in str(err.value)


def test_duplicate_ids_stay_in_list_formats_but_cannot_become_files(tmp_path):
    docs = [Document("same", "a"), Document("same", "b")]
    write_corpus(docs, tmp_path / "c.jsonl", "jsonl")
    assert [d.text for d in read_corpus(tmp_path / "c.jsonl", "jsonl")] == ["a", "b"]
    with pytest.raises(FormatError, match="share the id 'same'"):
        write_corpus(docs, tmp_path / "brat", "brat")
