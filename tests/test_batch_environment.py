"""A hostile or broken environment: a full disk, a read-only output folder, links planted in the run's state.

Each ends the run with one clear line and a documented exit code (4: an output could not be written; 2: an
unsafe output folder), never a traceback, never a write outside the output folder; once the cause is gone,
``--resume`` finishes with the bytes of an uninterrupted run. Disk-full and read-only runs mount a small
tmpfs or a read-only bind mount, which needs root (skipped otherwise); the file-size limit stands in for a
full disk everywhere.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
from pathlib import Path

import pytest

from batch_fixtures import deid_command, key_file, output_files, write_jsonl_notes, write_text_notes
from clinideid.cli import main
from clinideid.files import atomic_file, write_atomic

N_DOCS = 12
NOTE_SIZE = 4000


def deid(capsys, *args: str) -> tuple[int, str]:
    """Run ``clinideid deid`` in this process: its exit code and what it wrote to stderr."""
    capsys.readouterr()
    try:
        main(["deid", *args, "--no-progress", "--workers", "1"])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    return code, capsys.readouterr().err


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip()[:80]})")


@pytest.fixture
def mounts():
    """Mount points made by the test, unmounted afterwards (last first)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs or a read-only bind mount needs root")
    made: list[Path] = []
    yield made
    for point in reversed(made):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def _inputs(tmp_path: Path, kind: str) -> tuple[Path, list[str]]:
    if kind == "text":
        src = tmp_path / "notes"
        return src, write_text_notes(src, N_DOCS, NOTE_SIZE)
    src = tmp_path / "notes.jsonl"
    return src, write_jsonl_notes(src, N_DOCS, NOTE_SIZE)


def _assert_clean_failure(code: int, err: str, words: str, names: list[str]) -> None:
    assert code == 4, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and words in errors[0] and "--resume" in errors[0], err
    assert not any(name in err for name in names)  # no document text, no input name


@pytest.mark.parametrize("kind", ["text", "jsonl"])
def test_a_full_disk_stops_the_run_cleanly_and_resume_finishes_it(
    tmp_path: Path, mounts: list, kind: str, capsys
):
    src, planted = _inputs(tmp_path, kind)
    key = key_file(tmp_path, b"environment tests")
    args = ["-l", "en", "--key-file", str(key), "--name-outputs", "hash"]
    clean = tmp_path / "clean"
    assert deid(capsys, str(src), "-o", str(clean), *args)[0] == 0

    disk = tmp_path / "disk"
    disk.mkdir()
    _mount("-t", "tmpfs", "-o", "size=40k", "tmpfs", str(disk))
    mounts.append(disk)
    out = disk / "out"
    code, err = deid(capsys, str(src), "-o", str(out), *args)
    _assert_clean_failure(code, err, "no space left", [*planted, "note0", "n00", src.name])
    journal = (out / ".clinideid" / "journal.jsonl").read_bytes()
    assert journal.endswith(b"\n") and all(json.loads(line) for line in journal.splitlines())
    done = sum(1 for line in journal.splitlines() if b'"status": "done"' in line)
    assert 0 < done < N_DOCS  # the run stopped part-way, with what it did recorded whole

    _mount("-o", "remount,size=16m", str(disk))  # space freed
    code, err = deid(capsys, str(src), "-o", str(out), *args, "--resume")
    assert code == 0, err
    assert output_files(out) == output_files(clean)
    assert not list((out / ".clinideid" / "tmp").iterdir())


def test_a_file_size_limit_is_met_like_a_full_disk(tmp_path: Path, capsys):
    """``RLIMIT_FSIZE`` (SIGXFSZ is ignored by Python: writes past it fail with EFBIG) needs no privilege."""
    src, planted = _inputs(tmp_path, "jsonl")
    key = key_file(tmp_path, b"environment tests")
    args = ["-l", "en", "--key-file", str(key)]
    clean = tmp_path / "clean"
    assert deid(capsys, str(src), "-o", str(clean), *args)[0] == 0

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    out = tmp_path / "out"
    res = subprocess.run(
        deid_command(str(src), "-o", str(out), *args, "--no-progress", "--workers", "1"),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=limit_file_size,
    )
    _assert_clean_failure(res.returncode, res.stderr, "file size limit", planted)
    code, err = deid(capsys, str(src), "-o", str(out), *args, "--resume")
    assert code == 0, err
    assert output_files(out) == output_files(clean)


def test_a_read_only_output_folder_stops_the_run_cleanly(tmp_path: Path, mounts: list, capsys):
    src, planted = _inputs(tmp_path, "text")
    key = key_file(tmp_path, b"environment tests")
    args = ["-l", "en", "--key-file", str(key)]
    clean = tmp_path / "clean"
    assert deid(capsys, str(src), "-o", str(clean), *args)[0] == 0

    out = tmp_path / "out"
    out.mkdir()
    _mount("--bind", str(out), str(out))
    mounts.append(out)
    _mount("-o", "remount,bind,ro", str(out))
    code, err = deid(capsys, str(src), "-o", str(out), *args)
    _assert_clean_failure(code, err, "read-only", planted)
    assert not list(out.iterdir())

    _mount("-o", "remount,bind,rw", str(out))
    code, err = deid(capsys, str(src), "-o", str(out), *args, "--resume")
    assert code == 0, err
    assert output_files(out) == output_files(clean)


# -- links planted where the run keeps its state ------------------------------------------------------------
STATE_LINKS = {
    ".clinideid": "dir",
    ".clinideid/tmp": "dir",
    ".clinideid/staging": "dir",
    ".clinideid/journal.jsonl": "file",
    ".clinideid/lock": "file",
    "report.jsonl": "file",
    "summary.json": "file",
}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("entry", list(STATE_LINKS))
def test_a_link_where_the_state_belongs_is_refused_or_reset_never_followed(
    tmp_path: Path, entry: str, capsys
):
    src = tmp_path / "notes.jsonl"
    write_jsonl_notes(src, 3, 400)
    key = key_file(tmp_path, b"environment tests")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("the test's own file\n", encoding="utf-8")
    target = outside if STATE_LINKS[entry] == "dir" else outside / "keep.txt"
    before = _snapshot(outside)
    out = tmp_path / "out"
    (out / ".clinideid").mkdir(parents=True)
    if entry == ".clinideid":
        (out / ".clinideid").rmdir()
    (out / entry).symlink_to(target)
    args = [str(src), "-o", str(out), "-l", "en", "--key-file", str(key)]

    code, err = deid(capsys, *args)
    assert code == 2 and "symbolic link" in err and entry in err and "Traceback" not in err
    assert (out / entry).is_symlink() and _snapshot(outside) == before
    assert deid(capsys, *args, "--resume")[0] == 2 and _snapshot(outside) == before

    assert deid(capsys, *args, "--overwrite")[0] == 0  # resets the link (the link only) and runs
    assert not (out / entry).is_symlink() and (out / entry).exists()
    assert _snapshot(outside) == before
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 3 and (out / "notes.jsonl").is_file()


def test_atomic_writes_go_through_no_link_and_leave_no_part(tmp_path: Path):
    out = tmp_path / "out"
    outside = tmp_path / "outside"
    (out / "state").mkdir(parents=True)
    outside.mkdir()
    (out / "state" / "tmp").symlink_to(outside)
    with pytest.raises(OSError) as exc:
        write_atomic(out / "a.txt", b"text", out / "state" / "tmp")
    assert exc.value.errno == errno.ELOOP
    assert not list(outside.iterdir()) and not (out / "a.txt").exists()

    (out / "state" / "tmp").unlink()
    with pytest.raises(RuntimeError), atomic_file(out / "a.txt", out / "state" / "tmp") as fh:
        fh.write(b"half")
        raise RuntimeError("stopped while writing")
    assert not (out / "a.txt").exists() and not list((out / "state" / "tmp").iterdir())
    write_atomic(out / "a.txt", b"whole", out / "state" / "tmp")
    assert (out / "a.txt").read_bytes() == b"whole"
