"""The speed and memory benchmark scripts run end to end on small generated documents.

They are run as the documentation says (fresh processes, the rules-only English pipeline); the Presidio
side needs its own virtual environment and is exercised by ``benchmarks/speed_compare.py`` itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))

from synthetic_notes import long_text, notes  # noqa: E402


def _env() -> dict[str, str]:
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    return env


def test_generated_notes_vary_and_are_reproducible() -> None:
    first, second = notes(2, seed=5)
    assert first != second
    assert notes(2, seed=5) == [first, second]
    assert first.isascii() and 1500 < len(first) < 6000
    text = long_text(20_000, seed=5)
    assert 20_000 <= len(text) < 20_000 + 6000


@pytest.mark.slow
def test_clinideid_driver_reports_every_set(tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    texts = notes(3, seed=1)
    rows = [{"set": "notes", "id": f"n{i}", "text": t} for i, t in enumerate(texts)]
    rows += [{"set": "tiny", "id": f"t{i}", "text": "No acute distress today."} for i in range(5)]
    docs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "clinideid_driver.py"),
            str(docs),
            "--language",
            "en",
            "--pipeline",
            "rules",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        check=True,
    )
    result = json.loads(proc.stdout)
    assert result["sets"]["notes"]["docs"] == 3 and result["sets"]["tiny"]["docs"] == 5
    assert result["sets"]["notes"]["entities"] > 10  # names, dates, phones of the generated notes
    assert result["sets"]["tiny"]["entities"] == 0
    assert 0 < result["import_s"] <= result["ready_s"]
    assert result["peak_rss_mb"] > 10
    printed = proc.stdout + proc.stderr
    assert not any(t.splitlines()[1] in printed for t in texts)  # no document text in the output


@pytest.mark.slow
def test_memory_script_measures_one_document(tmp_path: Path) -> None:
    out = tmp_path / "memory.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "memory_single_document.py"), "--sizes", "0.05", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        check=True,
    )
    (row,) = json.loads(out.read_text(encoding="utf-8"))
    assert row["chars"] >= 50_000 and row["spans"] > 100
    assert row["peak_mb"] >= row["rss_with_document_mb"] - 1  # the peak mark was reset before deidentify
    assert row["peak_per_doc"] > 1
    assert "| en | rules |" in proc.stdout
