"""``clinideid deid`` against hostile documents: size checks before decompression, the memory limit, the
time limit over every stage (reading included), a worker killed from outside; each such document fails
alone with a reason naming the limit, the rest of the batch is done, ``--resume`` retries it.

The CLI runs in a subprocess with its real worker processes; the documents are generated small (a zip bomb
of a few hundred kilobytes, a PNG header claiming billions of pixels). No test asserts a wall time.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from batch_fixtures import key_file, output_files, run_to_end, write_text_notes
from clinideid.errors import InputError
from clinideid.ingest import IngestOptions, extract
from limits_fixtures import STALL_MARKER, many_pages_pdf, pixel_bomb_png, stalling_script, zip_bomb_docx

pytestmark = pytest.mark.slow

MB = 1024 * 1024


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text("utf-8"))


def _errors(out: Path) -> dict[str, str]:
    return {e["id"]: e["error"] for e in _summary(out)["errors"]}


# -- size checks, in process ----------------------------------------------------------------------------------
def test_sizes_are_checked_before_anything_is_decompressed(tmp_path: Path):
    bomb = zip_bomb_docx(tmp_path / "bomb.docx", 30 * MB)
    assert bomb.stat().st_size < MB // 4  # a quarter of a megabyte on disk
    with pytest.raises(InputError, match=r"unzip to 30 MiB, over the limit of 10 MiB.*--max-unzipped-bytes"):
        extract(bomb, "en", IngestOptions(max_unzipped_bytes=10 * MB))
    dense = zip_bomb_docx(tmp_path / "dense.docx", 5 * MB)
    with pytest.raises(
        InputError, match=r"times its compressed size, over the limit of 100.*--max-zip-ratio"
    ):
        extract(dense, "en")  # 5 MiB is under the default total: the ratio refuses it
    relaxed = extract(dense, "en", IngestOptions(max_zip_ratio=0))
    assert relaxed.text.split() == ["Seen", "today", "in", "clinic.", "Follow-up", "in", "two", "weeks."]

    pdf = many_pages_pdf(tmp_path / "long.pdf", 12, lines=2)
    with pytest.raises(InputError, match=r"has 12 pages, over the limit of 10.*--max-pages"):
        extract(pdf, "en", IngestOptions(max_pages=10))
    assert len(extract(pdf, "en", IngestOptions(max_pages=12)).pages) == 12

    png = pixel_bomb_png(tmp_path / "huge.png", 60_000, 60_000)
    assert png.stat().st_size < 50_000
    with pytest.raises(
        InputError, match=r"60,000 x 60,000 pixels is over the limit of 100,000,000.*--max-pixels"
    ):
        extract(png, "en")


# -- the batch ------------------------------------------------------------------------------------------------
def test_oversized_documents_fail_alone_and_resume_retries_them(tmp_path: Path):
    key = key_file(tmp_path, b"limit tests")
    src, out = tmp_path / "in", tmp_path / "out"
    planted = write_text_notes(src, 3, 2000)
    zip_bomb_docx(src / "bomb.docx", 30 * MB)  # over --max-unzipped-bytes
    zip_bomb_docx(src / "dense.docx", 5 * MB)  # under it, but a zip bomb's ratio
    many_pages_pdf(src / "long.pdf", 3, lines=2)
    pixel_bomb_png(src / "huge.png", 60_000, 60_000)
    args = [str(src), "-o", str(out), "-l", "en", "--key-file", str(key), "--no-progress"]
    args += ["--max-unzipped-bytes", "10M", "--max-pages", "2"]

    res = run_to_end(*args)
    assert res.returncode == 3, res.stderr
    errors = _errors(out)
    assert "--max-unzipped-bytes" in errors["bomb.docx"] and "--max-zip-ratio" in errors["dense.docx"]
    assert "--max-pages" in errors["long.pdf"] and "--max-pixels" in errors["huge.png"]
    assert _summary(out)["succeeded"] == 3  # the notes
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "audit.html", "note000.txt", "note001.txt", "note002.txt", "report.jsonl", "summary.json",
    ]  # fmt: skip

    # --resume retries what failed; raising a limit (not among the settings a resumed run must keep) lets
    # the document through, the others fail the same way again, the notes are not read again
    res = run_to_end(*args, "--resume", "--max-pages", "0", "--max-zip-ratio", "0")
    assert res.returncode == 3, res.stderr
    assert _errors(out) == {name: errors[name] for name in ("bomb.docx", "huge.png")}
    assert _summary(out)["skipped"] == 3 and _summary(out)["runs"][-1]["failed"] == 2
    assert (out / "long.pdf.txt").is_file() and (out / "long.pdf").is_file()
    assert "Follow-up in two weeks." in (out / "dense.docx.txt").read_text("utf-8")
    everything = b"".join(output_files(out).values()).decode("utf-8", "replace") + res.stderr
    assert not any(phi in everything for phi in planted)


def test_slow_reading_and_a_stalled_worker_hit_the_time_limit_and_the_batch_goes_on(tmp_path: Path):
    key = key_file(tmp_path, b"limit tests")
    src, out = tmp_path / "in", tmp_path / "out"
    write_text_notes(src, 4, 2000)
    many_pages_pdf(src / "note001-scan.pdf", 400)  # seconds of text-layer reading: far over the limit
    (src / "note002-stall.txt").write_text(f"Seen by Dr. Zorvak Quimbel.\n{STALL_MARKER}\n", encoding="utf-8")
    script = stalling_script(tmp_path)  # its operator ignores the alarm: the worker is killed from outside
    cmd = [sys.executable, str(script), "deid", str(src), "-o", str(out), "-l", "en", "--key-file", str(key)]
    cmd += ["--no-progress", "--operator", "default=stall_on_marker", "--time-limit", "1"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 3, res.stderr
    errors = _errors(out)
    assert set(errors) == {"note001-scan.pdf", "note002-stall"}
    for error in errors.values():
        assert "time limit of 1 s" in error and "--time-limit" in error
    assert _summary(out)["succeeded"] == 4
    ids = [json.loads(line)["id"] for line in (out / "report.jsonl").read_text("utf-8").splitlines()]
    assert ids == ["note000", "note001", "note002", "note003"]  # in input order
    assert "Zorvak" not in res.stderr + json.dumps(_summary(out))


# the peak resident memory of this process image: VmHWM, not ru_maxrss, which keeps the peak of the process
# that forked it (pytest, large after a long session) across exec
MEASURED = (
    "import re, sys\n"
    "try:\n"
    "    from clinideid.cli import main\n"
    "    main()\n"
    "finally:\n"
    "    status = open('/proc/self/status').read()\n"
    "    print('parent-max-rss-kb', re.search(r'VmHWM:\\s*(\\d+)', status).group(1), file=sys.stderr)\n"
)


def _parent_max_rss(stderr: str) -> int:
    match = re.search(r"parent-max-rss-kb (\d+)", stderr)
    assert match, stderr
    return int(match.group(1)) * 1024


def test_a_document_over_the_memory_limit_fails_alone_and_the_parent_stays_small(tmp_path: Path):
    key = key_file(tmp_path, b"limit tests")
    src, out = tmp_path / "in", tmp_path / "out"
    write_text_notes(src, 2, 2000)
    inflated = 400 * MB
    zip_bomb_docx(src / "note000-big.docx", inflated)  # the size checks are off: the memory limit stops it
    cmd = [
        sys.executable,
        "-c",
        MEASURED,
        "deid",
        str(src),
        "-o",
        str(out),
        "-l",
        "en",
        "--key-file",
        str(key),
    ]
    cmd += ["--no-progress", "--max-unzipped-bytes", "0", "--max-zip-ratio", "0", "--memory-limit", "100M"]
    for attempt in range(2):  # --resume retries it, and it fails the same way
        res = subprocess.run(
            [*cmd, *(["--resume"] if attempt else [])], capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 3, res.stderr
        errors = _errors(out)
        assert list(errors) == ["note000-big.docx"]
        assert "memory" in errors["note000-big.docx"] and "--memory-limit" in errors["note000-big.docx"]
        assert (out / "note000.txt").is_file() and (out / "note001.txt").is_file()
        assert _parent_max_rss(res.stderr) < inflated // 2  # the document was never read in this process
    assert _summary(out)["skipped"] == 2
