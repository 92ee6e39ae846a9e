"""``clinideid adapt``: silver labels + synthetic notes -> CRF -> per-label hybrid -> a runnable config."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from clinideid.adapt import AdaptOptions, adapt
from clinideid.cli import _register_commands, app
from clinideid.errors import ConfigError, InputError
from clinideid.synth import generate

_register_commands()
runner = CliRunner()
SITE_SEED = 99  # the "site" notes: synthetic text, labels thrown away


def _site_notes(folder: Path) -> list:
    docs = generate("it", 40, seed=SITE_SEED)
    folder.mkdir(parents=True)
    for k, doc in enumerate(docs):
        (folder / f"note{k}.txt").write_text(doc.text, encoding="utf-8")
    return docs


@pytest.fixture(scope="module")
def adapted(tmp_path_factory):
    """One adaptation run through the CLI (40 site notes, 60 synthetic), shared by the tests."""
    root = tmp_path_factory.mktemp("adapt")
    docs = _site_notes(root / "notes")
    out = root / "out"
    res = runner.invoke(
        app,
        ["adapt", str(root / "notes"), "-l", "it", "-o", str(out), "--synthetic", "60", "--seed", "3"],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    return root, out, docs, res.output


def test_adapt_writes_a_model_a_config_and_a_report_without_text(adapted):
    _root, out, docs, output = adapted
    assert (out / "model" / "model.json").is_file()
    report = json.loads((out / "adapt.json").read_text("utf-8"))
    assert report["notes"]["notes"] == 40 and report["notes"]["spans"] > 0
    assert report["synthetic"]["notes"] == 60
    assert report["training"]["train_notes"] + report["training"]["held_back_notes"] == 100
    assert report["training"]["held_back_notes"] == 20
    assert report["training"]["grid_points_trained"] == 3
    assert set(report["step_seconds"]) == {"silver", "synthetic", "train", "choose"}
    per_label = report["per_label"]
    assert "PATIENT" in per_label and "DATE" in per_label
    for entry in per_label.values():
        assert entry["choice"] in ("rules", "model", "union")
        assert set(entry["strict_f1"]) == {"rules", "model", "union"}
    config = yaml.safe_load((out / "pipeline.yaml").read_text("utf-8"))
    (hybrid,) = config["detectors"]
    assert hybrid["type"] == "hybrid" and hybrid["strategy"] == "per_label"
    assert {k: v["choice"] for k, v in per_label.items()} == hybrid["per_label"]
    assert Path(hybrid["models"][0]["model"]) == (out / "model").resolve()
    # progress on stderr, one line per step; no note text in the report, the model card or the output
    for step in ("silver", "synthetic", "train", "choose"):
        assert f"{step}: done" in output
    public = (out / "adapt.json").read_text("utf-8") + (out / "model" / "model.json").read_text("utf-8")
    public += output
    for doc in docs:
        for span in doc.spans:
            if span.label in ("PATIENT", "DOCTOR", "STREET", "EMAIL", "PHONE"):
                assert doc.text[span.start : span.end] not in public


def test_the_written_config_runs_through_deid_and_finds_phi(adapted, tmp_path: Path):
    _, out, _, _ = adapted
    src = tmp_path / "new"
    new_docs = generate("it", 5, seed=SITE_SEED + 1)
    src.mkdir()
    for k, doc in enumerate(new_docs):
        (src / f"n{k}.txt").write_text(doc.text, encoding="utf-8")
    safe = tmp_path / "safe"
    res = runner.invoke(
        app,
        [
            "deid",
            str(src),
            "-o",
            str(safe),
            "--config",
            str(out / "pipeline.yaml"),
            "--ephemeral-key",
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((safe / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 5
    assert sum(summary["spans_per_label"].values()) > 0
    found = missed = 0
    for k, doc in enumerate(new_docs):
        text = (safe / f"n{k}.txt").read_text("utf-8")
        for span in doc.spans:
            if span.label == "PATIENT":
                gone = doc.text[span.start : span.end] not in text
                found, missed = found + gone, missed + (not gone)
    assert found > missed  # most patient names replaced


def test_resume_skips_finished_steps_and_a_time_budget_trims_the_grid(adapted, tmp_path: Path):
    root, out, _, _ = adapted
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    opts = AdaptOptions(root / "notes", "it", copy, synthetic=60, seed=3, resume=True)
    lines: list[str] = []
    report = adapt(opts, progress=lines.append)
    assert report["resumed_steps"] == ["silver", "synthetic", "train", "choose"]
    assert all("skipped" in line for line in lines)

    # forget the last two steps: only they run again, now with a budget too small for a second grid point
    state_path = copy / "work" / "state.json"
    state = json.loads(state_path.read_text("utf-8"))
    del state["steps"]["train"], state["steps"]["choose"]
    state_path.write_text(json.dumps(state), encoding="utf-8")
    lines.clear()
    opts.time_budget_minutes = 0.001
    report = adapt(opts, progress=lines.append)
    assert report["resumed_steps"] == ["silver", "synthetic"]
    # only the calibration run fits: its model is the one kept
    assert report["training"]["grid_points_trained"] == 1
    assert report["training"]["iterations_per_grid_point"] == [5]
    assert report["training"]["time_budget_minutes"] == 0.001
    assert report["training"]["within_budget"] is False
    assert any("train: done" in line for line in lines) and (copy / "pipeline.yaml").is_file()

    # a budget that holds the whole grid: after the calibration run every point gets all its iterations
    state = json.loads(state_path.read_text("utf-8"))
    del state["steps"]["train"], state["steps"]["choose"]
    state_path.write_text(json.dumps(state), encoding="utf-8")
    opts.time_budget_minutes = 30
    report = adapt(opts, progress=lines.append)
    assert report["training"]["iterations_per_grid_point"] == [5] + [opts.max_iterations] * 3
    assert report["training"]["within_budget"] is True


def test_an_existing_run_needs_resume_and_the_same_settings(adapted):
    root, out, _, _ = adapted
    with pytest.raises(ConfigError, match="--resume"):
        adapt(AdaptOptions(root / "notes", "it", out, synthetic=60, seed=3))
    with pytest.raises(ConfigError, match="other settings"):
        adapt(AdaptOptions(root / "notes", "it", out, synthetic=10, seed=3, resume=True))


def test_clear_errors_for_an_empty_folder_and_an_unknown_language(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no readable notes"):
        adapt(AdaptOptions(empty, "it", tmp_path / "o1", synthetic=0))
    assert not (tmp_path / "o1" / "work" / "silver.jsonl").exists()
    with pytest.raises(ConfigError, match="unknown language 'xx'"):
        adapt(AdaptOptions(empty, "xx", tmp_path / "o2"))
    with pytest.raises(InputError, match="does not exist"):
        adapt(AdaptOptions(tmp_path / "nope", "it", tmp_path / "o3"))


def test_cli_reports_errors_in_one_line(tmp_path: Path, capsys):
    from clinideid.cli import main

    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exc:
        main(["adapt", str(tmp_path / "empty"), "-l", "xx", "-o", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert "unknown language 'xx'" in capsys.readouterr().err


def test_jsonl_notes_are_silver_labelled_under_fresh_ids(tmp_path: Path):
    from clinideid.adapt import silver_label

    notes = tmp_path / "notes.jsonl"
    docs = generate("it", 5, seed=SITE_SEED)
    records = [{"id": f"MRN-{k}", "text": d.text} for k, d in enumerate(docs)] + [{"id": "x", "text": 3}]
    notes.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    target = tmp_path / "silver.jsonl"
    counts = silver_label(AdaptOptions(notes, "it", tmp_path / "out", batch_size=2), target)
    assert counts["notes"] == 5 and counts["unreadable"] == 1 and counts["spans"] > 0
    written = [json.loads(line) for line in target.read_text("utf-8").splitlines()]
    assert [r["id"] for r in written] == [f"site-{k}" for k in range(1, 6)]  # site ids never copied
    assert [r["text"] for r in written] == [d.text for d in docs]
    assert not list(tmp_path.glob(".*.part"))


def test_max_site_notes_caps_the_notes_trained_on_not_those_labelled(tmp_path: Path):
    _site_notes(tmp_path / "notes")
    opts = AdaptOptions(tmp_path / "notes", "it", tmp_path / "out", synthetic=10, seed=3, max_site_notes=10)
    opts.max_iterations = 10
    report = adapt(opts)
    assert report["notes"]["notes"] == 40  # every note silver-labelled
    assert report["training"]["train_notes"] + report["training"]["held_back_notes"] == 10 + 10
    with pytest.raises(ConfigError, match="--max-site-notes"):
        adapt(AdaptOptions(tmp_path / "notes", "it", tmp_path / "o2", max_site_notes=0))
