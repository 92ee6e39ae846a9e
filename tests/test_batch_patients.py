"""Across the documents of one patient (``clinideid deid --patient-id``): a name found in one document is
PHI in every other document of that patient, wherever it stands in the input; the same bytes with any
number of workers and after a kill and ``--resume``; the names are never written outside the outputs.

The names are made of random syllables (``batch_fixtures.fake_name``): nothing here is a real person.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from batch_fixtures import (
    fake_name,
    journal_lines,
    key_file,
    output_files,
    run_to_end,
    start,
    wait_for_journal,
)

FILLER = "Vital signs stable, no new complaints, plan unchanged and reviewed with the team. "


def patient_notes(seed: int, patients: int, notes_each: int, size: int = 300) -> tuple[list[dict], dict]:
    """Records whose first notes mention the patient's relative and doctor by surname only (no cue a rule
    needs), and whose last note names them with cues. Also: names planted per patient."""
    rng = random.Random(seed)
    records, planted = [], {}
    for p in range(patients):
        pid = f"P{p:02d}"
        relative, doctor, patient = fake_name(rng), fake_name(rng), fake_name(rng)
        planted[pid] = (relative, doctor)
        filler = FILLER * max(1, size // len(FILLER))
        for n in range(notes_each - 1):
            text = (
                f"Progress note {n + 1}.\n{relative} visited and stayed until evening; {doctor} to review.\n"
            )
            records.append({"id": f"{pid}-{n}", "patient_id": pid, "text": text + filler, "language": "en"})
        last = f"Patient: Dax {patient}\nNext of kin: daughter Lu {relative}\nAttending: Dr. Kim {doctor}\n"
        records.append({"id": f"{pid}-last", "patient_id": pid, "text": last + filler, "language": "en"})
    rng.shuffle(records)  # a patient's notes anywhere in the input, the naming one often after the others
    return records, planted


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def outputs_text(out: Path) -> str:
    return b"".join(output_files(out).values()).decode("utf-8")


def test_a_name_found_in_one_document_is_phi_in_every_document_of_that_patient(tmp_path: Path):
    records, planted = patient_notes(seed=1, patients=3, notes_each=3)
    # another patient's note writes one of these surnames too: it is not this patient's, it stays
    stranger = planted["P00"][0]
    records.append({"id": "X-1", "patient_id": "P99", "text": f"{stranger} brought lunch.", "language": "en"})
    src = tmp_path / "notes.jsonl"
    write_jsonl(src, records)
    key = key_file(tmp_path, b"cross-document tests")
    args = ["-l", "en", "--pipeline", "rules", "--key-file", str(key), "--no-progress"]

    alone = tmp_path / "alone"
    assert run_to_end(str(src), "-o", str(alone), *args).returncode == 0
    alone_records = (alone / "notes.jsonl").read_text("utf-8")
    assert all(name in alone_records for names in planted.values() for name in names)  # one note at a time

    outs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        res = run_to_end(
            str(src), "-o", str(out), *args, "--patient-id", "metadata:patient_id", "-j", workers
        )
        assert res.returncode == 0, res.stderr
        outs[workers] = output_files(out)
        state = b"".join(p.read_bytes() for p in (out / ".clinideid").rglob("*") if p.is_file())
        logs = res.stdout + res.stderr + state.decode("utf-8", "replace")
        logs += (out / "summary.json").read_text("utf-8")
        assert not any(name in logs for names in planted.values() for name in names)
    assert outs["1"] == outs["2"]  # the same bytes with one worker or two

    by_id = {
        r["id"]: r["text"] for r in map(json.loads, (out / "notes.jsonl").read_text("utf-8").splitlines())
    }
    for pid, names in planted.items():
        for doc_id, text in by_id.items():
            if doc_id.startswith(pid):
                assert not any(name in text for name in names), doc_id
    assert by_id["X-1"].startswith(stranger)  # P99 never named anyone: its note is its own
    report = [json.loads(x) for x in (out / "report.jsonl").read_text("utf-8").splitlines()]
    reasons = {r["explanation"] for line in report for r in line["replacements"]}
    assert "propagate_mentions: found in another document of the patient" in reasons


def test_a_folder_with_patient_ids_in_file_names(tmp_path: Path):
    records, planted = patient_notes(seed=2, patients=2, notes_each=3)
    src = tmp_path / "notes"
    src.mkdir()
    for r in records:
        (src / f"{r['id']}.txt").write_text(r["text"], encoding="utf-8")
    key = key_file(tmp_path, b"cross-document tests")
    args = ["-l", "en", "--key-file", str(key), "--no-progress", "--patient-id", r"filename:^(P\d+)-"]
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        res = run_to_end(str(src), "-o", str(out), *args, "-j", workers)
        assert res.returncode == 0, res.stderr
        outs.append(output_files(out))
        assert not any(name in outputs_text(out) for names in planted.values() for name in names)
    assert outs[0] == outs[1]


@pytest.mark.slow
def test_kill_9_in_either_pass_then_resume_writes_the_bytes_of_an_uninterrupted_run(tmp_path: Path):
    records, planted = patient_notes(seed=3, patients=8, notes_each=4, size=6000)
    src = tmp_path / "notes.jsonl"
    write_jsonl(src, records)
    key = key_file(tmp_path, b"cross-document tests")
    args = ["-l", "en", "--key-file", str(key), "--no-progress", "--patient-id", "metadata:patient_id"]

    clean = tmp_path / "clean"
    res = run_to_end(str(src), "-o", str(clean), *args, "-j", "1")
    assert res.returncode == 0, res.stderr

    out = tmp_path / "out"
    # the first kill lands while names are being collected (the journal holds only the run's start),
    # the second while documents are being written; each resumed run collects the names again
    lines = []
    for target, resume in ((1, []), (10, ["--resume"])):
        proc = start(str(src), "-o", str(out), *args, "-j", "2", *resume)
        assert wait_for_journal(out, target, proc)
        proc.kill()
        proc.wait()
        lines.append(journal_lines(out))
    assert lines[0] == 1  # the run's start only: killed while collecting, before any document was written
    assert lines[1] < len(records)  # killed before the end
    res = run_to_end(str(src), "-o", str(out), *args, "-j", "2", "--resume")
    assert res.returncode == 0, res.stderr
    assert output_files(out) == output_files(clean)
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["documents"] == summary["succeeded"] == len(records)
    assert not any(name in outputs_text(out) for names in planted.values() for name in names)
