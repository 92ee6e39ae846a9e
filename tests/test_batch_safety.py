"""What a careful user or an attacker can do to ``clinideid deid``: overlapping paths, hostile ids, PHI
outside the text field, bad records among good ones, wrong encodings, stalls, bad flags."""

from __future__ import annotations

import codecs
import hashlib
import json
import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinideid.batch.limits import DocumentTimeout, time_limit
from clinideid.batch.paths import OutputNamer, safe_relpath
from clinideid.cli import _register_commands, app, main
from clinideid.errors import ConfigError, InputError
from clinideid.text.decoding import decode_text

_register_commands()
runner = CliRunner()

NOTE = "Patient: Zebediah Quackenbush    MRN: 4829105\nSeen on 11/02/2023 by Dr. Sarah Thompson.\n"
PHI = ("Zebediah", "Quackenbush", "4829105", "Thompson")


def deid(*args: str):
    return runner.invoke(app, ["deid", *args, "--no-progress"], catch_exceptions=False)


def exit_code(*args: str) -> int:
    with pytest.raises(SystemExit) as exc:
        main(["deid", *args, "--no-progress"])
    return exc.value.code


@pytest.fixture
def key(tmp_path: Path) -> Path:
    path = tmp_path / "secret.key"
    path.write_text(hashlib.sha256(b"batch safety tests").hexdigest() + "\n", encoding="ascii")
    return path


def everything_written(out: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in sorted(out.rglob("*")) if p.is_file()
    ) + "\n".join(p.as_posix() for p in out.rglob("*"))


# -- inputs and outputs never overlap -----------------------------------------------------------------------
def test_input_inside_the_output_folder_is_refused_and_left_intact(tmp_path: Path, key: Path):
    folder = tmp_path / "r1"
    folder.mkdir()
    src = folder / "notes.jsonl"
    src.write_text(json.dumps({"id": "a", "text": NOTE}) + "\n", encoding="utf-8")
    before = src.read_bytes()
    assert exit_code(str(src), "-o", str(folder), "--key-file", str(key)) == 2
    assert src.read_bytes() == before


@pytest.mark.parametrize("where", ["same", "inside"])
def test_output_equal_to_or_inside_the_input_is_refused(tmp_path: Path, key: Path, where: str):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a.txt").write_text(NOTE, encoding="utf-8")
    out = src if where == "same" else src / "out"
    assert exit_code(str(src), "-o", str(out), "--key-file", str(key)) == 2
    assert (src / "a.txt").read_text("utf-8") == NOTE and not (src / "out").exists()


def test_output_that_is_a_file_is_refused(tmp_path: Path, key: Path):
    src = tmp_path / "a.txt"
    src.write_text(NOTE, encoding="utf-8")
    target = tmp_path / "existing.txt"
    target.write_text("keep me", encoding="utf-8")
    assert exit_code(str(src), "-o", str(target), "--key-file", str(key)) == 2
    assert target.read_text("utf-8") == "keep me"


def test_a_non_empty_folder_or_an_earlier_run_needs_resume_or_overwrite(tmp_path: Path, key: Path):
    src = tmp_path / "a.txt"
    src.write_text(NOTE, encoding="utf-8")
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.txt").write_text("user data", encoding="utf-8")
    assert exit_code(str(src), "-o", str(other), "--key-file", str(key)) == 2
    assert deid(str(src), "-o", str(other), "--key-file", str(key), "--overwrite").exit_code == 0
    assert (other / "mine.txt").read_text("utf-8") == "user data"
    out = tmp_path / "out"
    assert deid(str(src), "-o", str(out), "--key-file", str(key)).exit_code == 0
    assert exit_code(str(src), "-o", str(out), "--key-file", str(key)) == 2
    assert deid(str(src), "-o", str(out), "--key-file", str(key), "--overwrite").exit_code == 0
    assert json.loads((out / "summary.json").read_text("utf-8"))["succeeded"] == 1


# -- safe output names --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "doc_id, expected",
    [
        ("../../ESCAPED", "ESCAPED"),
        ("/abs/path", "abs/path"),
        ("..\\..\\win", "win"),
        (".hidden", "_.hidden"),
        (".clinideid", "_.clinideid"),
        ("summary.json", "_summary.json"),
        ("a/./b/../c", "a/b/c"),
        ("", "_"),
        ("tab\there", "tab%09here"),
        ("bad\udcffbyte", "bad%ffbyte"),
    ],
)
def test_safe_relpath_never_leaves_the_folder(doc_id: str, expected: str):
    assert safe_relpath(doc_id) == expected


def test_long_ids_stay_distinct_and_short():
    a, b = safe_relpath("x" * 300 + "a"), safe_relpath("x" * 300 + "b")
    assert a != b and len(a.encode()) <= 200


def test_duplicate_ids_are_made_unique():
    namer = OutputNamer()
    names = [namer.name(i, ".txt") for i in ["a", "A", "a", "b"]]
    assert names == [("a", False), ("A~2", True), ("a~3", True), ("b", False)]


def test_hostile_ids_in_jsonl_and_codec_inputs_stay_inside(tmp_path: Path, key: Path):
    src = tmp_path / "in" / "notes.ndjson"  # JSONL under another name
    src.parent.mkdir()
    ids = ["../../ESCAPED", "/tmp/ABSOLUTE", "dup", "dup"]
    src.write_text("".join(json.dumps({"id": i, "text": NOTE}) + "\n" for i in ids), encoding="utf-8")
    out = tmp_path / "deep" / "er" / "out"
    res = deid(str(src), "-o", str(out), "--key-file", str(key), "-l", "en")
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "ESCAPED").exists() and not (tmp_path / "deep" / "ESCAPED").exists()
    records = [json.loads(x) for x in (out / "notes.ndjson").read_text("utf-8").splitlines()]
    assert [r["id"] for r in records] == ids  # ids are data: kept in the record
    report = [json.loads(x)["id"] for x in (out / "report.jsonl").read_text("utf-8").splitlines()]
    assert report == ["ESCAPED", "tmp/ABSOLUTE", "dup", "dup~2"]
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["warnings"] == [
        {"id": "dup~2", "warning": "duplicate id: this document's output has a ~N suffix"}
    ]

    corpus = tmp_path / "corpus.jsonl"  # the native corpus codec: ids become file names
    corpus.write_text(
        "".join(json.dumps({"id": i, "text": NOTE, "spans": []}) + "\n" for i in ids), encoding="utf-8"
    )
    out2 = tmp_path / "out2"
    codec_dir = tmp_path / "codec"
    codec_dir.mkdir()
    corpus.rename(codec_dir / "corpus.jsonl")
    res = deid(str(codec_dir), "--format", "jsonl", "-o", str(out2), "--key-file", str(key), "-l", "en")
    assert res.exit_code == 0, res.output
    written = sorted(p.relative_to(out2).as_posix() for p in out2.rglob("*.txt"))
    assert written == ["ESCAPED.txt", "dup.txt", "dup~2.txt", "tmp/ABSOLUTE.txt"]
    assert not Path("/tmp/ABSOLUTE.txt").exists()


def test_outputs_named_by_keyed_hash_carry_no_ids(tmp_path: Path, key: Path):
    src = tmp_path / "notes"
    (src / "quackenbush_zebediah").mkdir(parents=True)
    (src / "quackenbush_zebediah" / "zebediah_1950.txt").write_text(NOTE, encoding="utf-8")
    (src / "quackenbush_zebediah" / "zebediah_broken.txt").write_bytes(b"\x00\x01binary")
    out = tmp_path / "out"
    res = deid(str(src), "-o", str(out), "--key-file", str(key), "-l", "en", "--name-outputs", "hash")
    assert res.exit_code == 3
    names = [p.relative_to(out).as_posix() for p in out.rglob("*")]
    assert not any("zebediah" in n.lower() or "quackenbush" in n.lower() for n in names)
    text = everything_written(out) + res.output
    assert "zebediah" not in text.lower() and "quackenbush" not in text.lower()
    with pytest.raises(ConfigError, match="needs a secret key"):
        OutputNamer("hash", None)


# -- every field is de-identified or dropped ----------------------------------------------------------------
def _record() -> dict:
    return {
        "id": "n1",
        "text": NOTE,
        "note_text": "Called Zebediah Quackenbush back.",
        "patient_name": "Zebediah Quackenbush",
        "mrn": 4829105,
        "contacts": [{"role": "son", "phone": "(217) 555-0143"}],
        "metadata": {"attending": "Dr. Sarah Thompson", "ward": "4B"},
        "language": "EN",
    }


def test_phi_in_every_field_never_reaches_outputs_reports_or_logs(tmp_path: Path, key: Path, caplog):
    src = tmp_path / "notes.jsonl"
    src.write_text(json.dumps(_record()) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    with caplog.at_level(logging.DEBUG):
        res = deid(str(src), "-o", str(out), "--key-file", str(key))
    assert res.exit_code == 0, res.output
    [record] = [json.loads(x) for x in (out / "notes.jsonl").read_text("utf-8").splitlines()]
    assert set(record) == set(_record())
    # the language field is kept as it is; a ward is a location (i2b2, the notes corpus): de-identified too
    assert record["language"] == "EN" and set(record["metadata"]) == {"attending", "ward"}
    leaked = everything_written(out) + caplog.text + res.output
    for phi in (*PHI, "555-0143"):
        assert phi not in leaked, phi
    # the same person gets the same surrogate in the text and in the fields
    surrogate = record["patient_name"]
    assert surrogate in record["text"] and surrogate in record["note_text"]
    report = json.loads((out / "report.jsonl").read_text("utf-8"))
    assert {f["field"] for f in report["fields"]} >= {"patient_name", "note_text", "contacts.0.phone"}


def test_keep_and_drop_fields(tmp_path: Path, key: Path):
    src = tmp_path / "notes.jsonl"
    src.write_text(json.dumps(_record()) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    res = deid(str(src), "-o", str(out), "--key-file", str(key), "--keep-field", "metadata", "--drop-fields")
    assert res.exit_code == 0, res.output
    [record] = [json.loads(x) for x in (out / "notes.jsonl").read_text("utf-8").splitlines()]
    assert set(record) == {"id", "text", "language", "metadata"}
    assert record["metadata"] == _record()["metadata"]  # kept verbatim, as asked


# -- no record stops the batch ------------------------------------------------------------------------------
def test_bad_records_are_their_own_errors(tmp_path: Path, key: Path):
    src = tmp_path / "notes.jsonl"
    lines = [
        json.dumps({"id": "upper", "text": NOTE, "language": "EN"}),
        json.dumps({"id": "unknown", "text": NOTE, "language": "xx"}),
        "[" * 100_000 + "]" * 100_000,
        '{"id": "surrogate", "text": "Patient \\ud800 Zebediah"}',
        json.dumps({"id": "nested", "text": NOTE, "extra": json.loads("[" * 40 + "]" * 40)}),
        json.dumps({"id": "fine", "text": NOTE, "language": "en"}),
    ]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    res = deid(str(src), "-o", str(out), "--key-file", str(key))
    assert res.exit_code == 3
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 2 and summary["failed"] == 4
    errors = {e["id"]: e["error"] for e in summary["errors"]}
    assert "unsupported language" in errors["unknown"]
    assert "nested too deeply" in errors["notes-3"]
    assert "unpaired surrogate" in errors["surrogate"]
    assert "nested deeper" in errors["nested"]
    assert "Zebediah" not in json.dumps(summary)
    assert (
        deid(str(src), "-o", str(tmp_path / "o2"), "--key-file", str(key), "--allow-failures").exit_code == 0
    )


def test_bad_file_names_links_fifos_and_other_files_are_counted(tmp_path: Path, key: Path):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "good.txt").write_text(NOTE, encoding="utf-8")
    (os.fsencode(src) + b"/caf\xe9.txt").decode  # noqa: B018 (the next line makes the file)
    with open(os.fsencode(src) + b"/caf\xe9.txt", "wb") as fh:
        fh.write(NOTE.encode("utf-8"))
    (src / "scan.pdf").write_bytes(b"%PDF-1.4")
    (src / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    outside = tmp_path / "outside.txt"
    outside.write_text(NOTE, encoding="utf-8")
    (src / "escape.txt").symlink_to(outside)
    (src / "linked_dir").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(src / "pipe.txt")
    out = tmp_path / "out"
    res = deid(str(src), "-o", str(out), "--key-file", str(key), "-l", "en")
    assert res.exit_code == 3, res.output
    summary = json.loads((out / "summary.json").read_text("utf-8"))  # valid JSON despite the bad name
    assert summary["succeeded"] == 2
    errors = {e["id"]: e["error"] for e in summary["errors"]}
    assert "dangling" in errors["dangling"] and "outside" in errors["escape"] and "FIFO" in errors["pipe"]
    assert "not a readable PDF" in errors["scan.pdf"]
    assert {i["id"] for i in summary["ignored_inputs"]} == {"linked_dir"}
    assert (out / "caf%e9.txt").exists()


def test_unreadable_folder_is_an_error_not_a_silence(tmp_path: Path, monkeypatch):
    from clinideid.batch import inputs

    src = tmp_path / "notes"
    (src / "locked").mkdir(parents=True)
    (src / "a.txt").write_text(NOTE, encoding="utf-8")
    real_walk = os.walk

    def walk(top, onerror=None, **kw):  # what os.walk reports for a folder it may not list
        for folder, dirs, files in real_walk(top, onerror=onerror, **kw):
            if Path(folder).name == "locked":
                onerror(PermissionError(13, "Permission denied", folder))
                continue
            yield folder, dirs, files

    monkeypatch.setattr(inputs.os, "walk", walk)
    items = list(inputs.iter_inputs(src))
    errors = [i for i in items if i.error]
    assert len(errors) == 1 and "cannot read this folder" in errors[0].error


def test_a_bad_ann_in_a_brat_corpus_fails_that_document_only(tmp_path: Path, key: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("d1", "d2"):
        (corpus / f"{name}.txt").write_text(NOTE, encoding="utf-8")
    (corpus / "d1.ann").write_text("T1\tPATIENT 9 17\tZebediah\n", encoding="utf-8")
    (corpus / "d2.ann").write_text("T1\tPATIENT nine\tbroken line\n", encoding="utf-8")
    out = tmp_path / "out"
    res = deid(str(corpus), "--format", "brat", "-o", str(out), "--key-file", str(key), "-l", "en")
    assert res.exit_code == 3, res.output
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 1 and [e["id"] for e in summary["errors"]] == ["d2"]


def test_run_wide_errors_are_found_before_anything_is_written(tmp_path: Path, key: Path):
    src = tmp_path / "a.txt"
    src.write_text(NOTE, encoding="utf-8")
    out = tmp_path / "out"
    assert deid(str(src), "-o", str(out), "--key-file", str(key)).exit_code == 0
    report = (out / "report.jsonl").read_bytes()
    bad = tmp_path / "bad.yaml"
    bad.write_text("language: en\ndetectors:\n  - type: crf\n    model: /no/such/model\n", encoding="utf-8")
    assert exit_code(str(src), "-o", str(out), "--key-file", str(key), "--config", str(bad), "--resume") == 2
    assert (out / "report.jsonl").read_bytes() == report
    assert exit_code(str(src), "-o", str(out), "--key-file", str(key), "--encoding", "no-such-codec") == 2
    assert (out / "report.jsonl").read_bytes() == report


def test_resume_with_other_settings_is_refused(tmp_path: Path, key: Path):
    src = tmp_path / "a.txt"
    src.write_text(NOTE, encoding="utf-8")
    out = tmp_path / "out"
    assert deid(str(src), "-o", str(out), "--key-file", str(key)).exit_code == 0
    assert (
        exit_code(str(src), "-o", str(out), "--key-file", str(key), "--resume", "--operator", "default=tag")
        == 2
    )


# -- decoding -----------------------------------------------------------------------------------------------
def test_decoding_honours_boms_and_encoding_and_refuses_mojibake():
    utf16 = codecs.BOM_UTF16_LE + NOTE.encode("utf-16-le")
    assert decode_text(utf16, "a") == NOTE  # BOM: no --encoding needed
    assert decode_text(NOTE.encode("utf-16-be"), "a", "utf-16-be") == NOTE
    assert decode_text(codecs.BOM_UTF32_BE + NOTE.encode("utf-32-be"), "a") == NOTE
    assert decode_text("Nombre: José".encode("cp1252"), "a", "cp1252") == "Nombre: José"
    with pytest.raises(InputError, match="mojibake"):
        decode_text("Nombre: José Núñez, 45 años".encode(), "a", "latin-1")
    with pytest.raises(InputError, match=r"mojibake|NUL|not valid"):
        decode_text((NOTE + "x" * (len(NOTE) % 2)).encode("utf-8"), "a", "utf-16")
    with pytest.raises(InputError, match="binary"):
        decode_text(bytes(range(1, 32)) * 20, "a", "latin-1")
    with pytest.raises(ConfigError):
        decode_text(b"abc", "a", "no-such-codec")


def test_encoding_applies_to_jsonl_and_utf16_files(tmp_path: Path, key: Path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "wide.txt").write_bytes(codecs.BOM_UTF16_LE + NOTE.encode("utf-16-le"))
    jsonl = tmp_path / "latin.jsonl"
    jsonl.write_bytes(
        (json.dumps({"id": "l", "text": NOTE + "Señora Núñez"}, ensure_ascii=False) + "\n").encode("latin-1")
    )
    assert deid(str(src), "-o", str(tmp_path / "o1"), "--key-file", str(key), "-l", "en").exit_code == 0
    assert "Zebediah" not in (tmp_path / "o1" / "wide.txt").read_text("utf-8")
    res = deid(str(jsonl), "-o", str(tmp_path / "o2"), "--key-file", str(key), "--encoding", "latin-1")
    assert res.exit_code == 0, res.output
    assert "Zebediah" not in (tmp_path / "o2" / "latin.jsonl").read_text("utf-8")


# -- bounded time -------------------------------------------------------------------------------------------
def test_time_limit_turns_a_stall_into_an_error():
    import time

    with pytest.raises(DocumentTimeout), time_limit(0.2):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            pass


def test_a_document_over_the_time_limit_fails_and_the_batch_goes_on(tmp_path: Path, key: Path):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a_small.txt").write_text(NOTE, encoding="utf-8")
    (src / "b_huge.txt").write_text(NOTE * 20_000, encoding="utf-8")
    (src / "c_small.txt").write_text(NOTE, encoding="utf-8")
    out = tmp_path / "out"
    res = deid(str(src), "-o", str(out), "--key-file", str(key), "-l", "en", "--time-limit", "0.3")
    assert res.exit_code == 3
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 2 and "time limit" in summary["errors"][0]["error"]
    assert not (out / "b_huge.txt").exists()


# -- smaller rows -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["--patient-id", "filename:("],
        ["--max-bytes", "-1"],
        ["--time-limit", "-5"],
        ["--name-outputs", "plain"],
        ["--resume", "--overwrite"],
        ["--resume", "--ephemeral-key"],
    ],
)
def test_bad_flags_are_clear_errors(tmp_path: Path, key: Path, args: list[str], capsys):
    src = tmp_path / "a.txt"
    src.write_text(NOTE, encoding="utf-8")
    extra = [] if "--ephemeral-key" in args else ["--key-file", str(key)]
    assert exit_code(str(src), "-o", str(tmp_path / "out"), *extra, *args) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_every_document_failing_is_not_success(tmp_path: Path, key: Path):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a.txt").write_bytes(b"\x00\x01")
    res = deid(str(src), "-o", str(tmp_path / "out"), "--key-file", str(key))
    assert res.exit_code == 3
