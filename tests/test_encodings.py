"""Encodings chosen per document, and mojibake refused whatever encoding was named.

Texts are written here in each encoding; the corpus test re-encodes notes of the six languages in every
encoding they can legitimately come in and checks that none is refused.
"""

from __future__ import annotations

import glob
import hashlib
import json
from pathlib import Path

import pytest

from clinideid.batch.table_files import CsvSource
from clinideid.cli import main
from clinideid.errors import InputError
from clinideid.text.decoding import decode_document
from clinideid.text.encodings import double_encoded_at

DE = (
    "Patient: Jürgen Weißmüller, geb. 03.05.1961, Größe 176 cm, Temp. 38,5 °C, Vitamin D 20 µg. Arzt: Dr. Bär"
)
FR = "Le patient présente un œdème du cœur ; coût 100 € ; IDENTITÉ : Hélène Lefèvre, née à Besançon"
RU = "Пациент Иванов Пётр Сергеевич поступил с жалобами на боль в груди. Диагноз: стенокардия IIА."
RUSSIAN_WORDS = ("Пациент", "Иванов", "Пётр")
FAST = ("--no-progress", "--workers", "1")


@pytest.mark.parametrize(
    ("text", "encoding"),
    [(DE, "utf-8"), (DE, "cp1252"), (FR, "iso8859-15"), (RU, "cp1251"), (RU, "koi8-r"), (RU, "utf-8")],
)
def test_auto_reads_each_document_in_its_own_encoding(text: str, encoding: str):
    decoded = decode_document(text.encode(encoding), "doc", "auto")
    assert (decoded.text, decoded.encoding) == (text, encoding)
    assert decode_document(text.encode(encoding), "doc", encoding).text == text  # named: accepted too


@pytest.mark.parametrize(
    ("text", "written", "named", "fits"),
    [
        (RU, "cp1251", "latin-1", "cp1251 (Cyrillic)"),  # Ïàöèåíò
        (RU, "cp1251", "cp1252", "cp1251 (Cyrillic)"),
        (RU, "koi8-r", "cp1252", "koi8-r (Cyrillic)"),
        (RU, "cp1251", "koi8-r", "cp1251 (Cyrillic)"),  # Cyrillic, but not Russian letters
        (RU, "koi8-r", "cp1251", "koi8-r (Cyrillic)"),
        (DE, "cp1252", "cp1251", "cp1252 (Western European)"),  # Jьrgen
        (DE, "cp1252", "koi8-r", "cp1252 (Western European)"),
        (FR, "iso8859-15", "cp1252", "iso8859-15 (Western European)"),  # c½ur, 100 ¤
        ("“Müller” – 5 mg", "cp1252", "latin-1", "cp1252 (Western European)"),  # C1 controls
    ],
)
def test_a_named_encoding_that_gives_mojibake_is_refused_with_the_one_that_fits(
    text: str, written: str, named: str, fits: str
):
    with pytest.raises(InputError) as exc:
        decode_document(text.encode(written), "note.txt", named)
    message = str(exc.value)
    assert message.startswith("note.txt: ") and "mojibake" in message
    assert f"looks like {fits} text" in message and f"--encoding {fits.split()[0]}" in message
    assert not any(word in message for word in (*RUSSIAN_WORDS, "Jürgen", "Müller", "cœur"))


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (
            "Dosis 20 µg/kg/min, 38 °C, 2 m², Aspirin®, geht´s, O´Brien, AkdÄ, Nº 5, João, Søren, 3×4",
            "cp1252",
        ),
        ("Anticorps anti-HER2 ; « CAFÉ » ; l’hôpital — 1½ cp", "cp1252"),
        ("Мкг/µl; стадия IIА; ВИЧ+; L-тироксин; 5–10 мг; «заключение»; №12", "cp1251"),
    ],
)
def test_what_clinical_text_writes_is_not_taken_for_mojibake(text: str, encoding: str):
    assert decode_document(text.encode(encoding), "doc", encoding).text == text
    assert decode_document(text.encode(encoding), "doc", "auto").text == text


def test_auto_refuses_what_it_cannot_tell_apart_or_read():
    with pytest.raises(InputError, match=r"cp1252 \(Western European\) or as cp1251 \(Cyrillic\)"):
        decode_document("да".encode("cp1251"), "short", "auto")  # äà or да: too short to tell
    mixed = "Müller ".encode() + "Weiß".encode("cp1252")  # UTF-8 with a cp1252 part
    with pytest.raises(InputError, match="none of utf-8, cp1252, iso8859-15, cp1251, koi8-r"):
        decode_document(mixed, "mixed", "auto")
    with pytest.raises(InputError, match="binary"):
        decode_document(b"\x00\x01\x02\x03\xff\xfe" * 10, "bin", "auto")


def test_a_mixed_folder_ends_with_each_document_decoded_or_refused_alone(tmp_path: Path, capsys):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a_en.txt").write_text("Patient John Miller seen on 11/02/2023.\n", encoding="utf-8")
    (src / "b_de.txt").write_bytes(DE.encode("cp1252"))
    (src / "c_ru.txt").write_bytes(RU.encode("cp1251"))
    (src / "d_ru.txt").write_bytes(RU.encode("koi8-r"))
    key = tmp_path / "secret.key"
    key.write_text(hashlib.sha256(b"encoding tests").hexdigest() + "\n", encoding="ascii")

    def deid(out: str, *extra: str) -> tuple[int, dict]:  # the Russian pipeline for all: fast to build
        try:
            main(
                [
                    "deid",
                    str(src),
                    "-o",
                    str(tmp_path / out),
                    "--key-file",
                    str(key),
                    "-l",
                    "ru",
                    *FAST,
                    *extra,
                ]
            )
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
        return code, json.loads((tmp_path / out / "summary.json").read_text("utf-8"))

    code, summary = deid("auto")  # the default: each document in its own encoding
    assert code == 0 and summary["succeeded"] == 4
    assert summary["encodings"] == {"cp1251": 1, "cp1252": 1, "koi8-r": 1, "utf-8": 1}
    reports = {r["id"]: r for r in map(json.loads, (tmp_path / "auto" / "report.jsonl").open("rb"))}
    assert reports["c_ru"]["encoding"] == "cp1251" and reports["d_ru"]["encoding"] == "koi8-r"
    for name in ("c_ru.txt", "d_ru.txt"):
        assert "Иванов" not in (tmp_path / "auto" / name).read_text("utf-8")

    code, summary = deid("forced", "--encoding", "latin-1")  # what "use --encoding" invites
    assert code == 3 and summary["succeeded"] == 2 and summary["failed"] == 2
    errors = {e["id"]: e["error"] for e in summary["errors"]}
    assert "pass --encoding cp1251" in errors["c_ru"] and "pass --encoding koi8-r" in errors["d_ru"]
    assert not (tmp_path / "forced" / "c_ru.txt").exists() and not (tmp_path / "forced" / "d_ru.txt").exists()
    for path in (tmp_path / "forced").glob("*.txt"):
        assert double_encoded_at(path.read_text("utf-8")) is None and "Ã" not in path.read_text("utf-8")


def test_csv_rows_and_corpus_documents_read_with_a_wrong_encoding_fail_alone(tmp_path: Path):
    table = tmp_path / "notes.csv"
    table.write_bytes(("id,note\n1,Herr Weber 38 °C\n2," + RU.replace(",", "") + "\n").encode("cp1251"))
    rows = list(CsvSource(table, "latin-1").rows())
    assert rows[0].error is None and rows[0].values["note"] == "Herr Weber 38 °C"
    assert rows[1].error is not None and "looks like cp1251 (Cyrillic)" in rows[1].error
    assert not any(word in rows[1].error for word in RUSSIAN_WORDS)

    from clinideid.batch.inputs import iter_inputs

    corpus = tmp_path / "brat"
    corpus.mkdir()
    (corpus / "ru.txt").write_bytes(RU.encode("cp1251"))
    (corpus / "ru.ann").write_text("", encoding="utf-8")
    [item] = iter_inputs(corpus, "brat", encoding="latin-1")
    assert item.document is None and "mojibake" in item.error and "cp1251" in item.error


# -- the six languages, in every encoding they come in --------------------------------------------------------
NOTES = "/work/shared/corpora/notes"
LEGITIMATE = {"ru": ("utf-8", "cp1251", "koi8-r")}
WESTERN = ("utf-8", "cp1252", "latin-1", "iso8859-15")


@pytest.mark.corpus
def test_notes_of_every_language_are_read_in_every_legitimate_encoding():
    files = sorted(glob.glob(f"{NOTES}/*.jsonl"))
    if not files:
        pytest.skip("the notes corpus is not available")
    checked = 0
    for path in files:
        with open(path, encoding="utf-8") as fh:
            docs = [json.loads(line) for line, _ in zip(fh, range(8), strict=False)]
        for doc in docs:
            text = doc["text"]
            if double_encoded_at(text) is not None or any("\x80" <= c <= "\x9f" for c in text):
                continue  # a note that already holds mojibake is no test of reading
            for encoding in LEGITIMATE.get(doc["language"], WESTERN):
                data = text.encode(encoding, errors="replace")
                expected = data.decode(encoding)
                for named in (encoding, "auto"):
                    assert decode_document(data, doc["id"], named).text == expected, (
                        doc["id"],
                        encoding,
                        named,
                    )
                    checked += 1
    assert checked > 200
