"""Attacks and the audit verdict: an identity representation fails, a random one passes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.formats import write_corpus
from clinideid.privacy.audit import (
    AuditReport,
    adversary_attack,
    discriminator_attack,
    lookup_attack,
    wilson_interval,
)
from clinideid.privacy.perturb import NeighbourTable, neighbour_pseudonymize
from clinideid.privacy.pseudonymize import Pseudonymizer
from privacy_fixtures import synth_notes, toy_sequences, vectors_for

torch.set_num_threads(1)


def test_wilson_interval() -> None:
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(10, 10)[1] == 1.0


def _audit(represent, seqs, vectors) -> AuditReport:
    results = [adversary_attack(seqs, represent, vectors, epochs=6, seed=2)]
    results.extend(lookup_attack(seqs, represent, seed=2))
    return AuditReport(results)


def test_identity_representation_fails_the_audit() -> None:
    seqs, vectors = toy_sequences(500)
    report = _audit(vectors.embed, seqs, vectors)
    by = {(r.attack, r.metric): r for r in report.results}
    assert by[("lookup", "top-1 hit rate")].value > 0.95
    assert by[("retrained adversary", "accuracy")].value > 0.8
    assert not report.passed and report.to_dict()["verdict"] == "FAIL"
    assert "FAIL" in report.to_markdown()


def test_random_representation_passes_the_audit() -> None:
    seqs, vectors = toy_sequences(500)
    rng = np.random.default_rng(7)
    report = _audit(lambda words: rng.normal(size=(len(words), 16)).astype(np.float32), seqs, vectors)
    assert report.passed, report.to_markdown()
    assert all(r.ci_low <= max(r.chance, 0.5) + 0.05 for r in report.results if r.metric == "accuracy")


def test_discriminator_spots_crude_replacements_but_not_an_unchanged_copy() -> None:
    docs = synth_notes(40, seed=9)
    vectors = vectors_for(docs)
    same = discriminator_attack(docs, docs, vectors, epochs=3, seed=1)
    assert same.passed and same.value < 0.65
    tagged = [d.with_text(d.text.replace("a", "a"), d.spans) for d in docs]  # an identical copy again
    assert discriminator_attack(docs, tagged, vectors, epochs=1, seed=1).value < 0.65
    key = hashlib.sha256(b"k").digest()
    # surrogates the word vectors never saw (zero vectors) are easy to tell apart
    crude = [Pseudonymizer(key, operator="hash").document(d)[0] for d in docs]
    found = discriminator_attack(docs, crude, vectors, epochs=4, seed=1)
    assert found.value > 0.75 and not found.passed


def test_cli_train_release_audit_and_pseudonymized_audit(tmp_path: Path) -> None:
    _register_commands()
    docs = synth_notes(30, seed=4)
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(docs, corpus, "jsonl")
    vectors = vectors_for(docs)
    vec_file = tmp_path / "vectors.txt"
    vec_file.write_text(
        f"{len(vectors.words)} {vectors.dim}\n"
        + "".join(
            f"{w} {' '.join(f'{x:.4f}' for x in vectors.matrix[i])}\n" for i, w in enumerate(vectors.words)
        )
    )
    runner = CliRunner()
    model = tmp_path / "model"
    r = runner.invoke(app, ["privacy-train", str(corpus), "-o", str(model), "--vectors", str(vec_file), "--size",
                            "8", "--epochs-deid", "1", "--epochs-adversary", "1", "--epochs-joint", "1"])  # fmt: skip
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        app, ["privacy-release", str(corpus), "--model", str(model), "-o", str(tmp_path / "rel")]
    )
    assert r.exit_code == 0, r.output
    assert {p.name for p in (tmp_path / "rel").iterdir()} == {"labels.json", "representations.npz"}
    r = runner.invoke(
        app, ["privacy-audit", str(corpus), "--model", str(model), "-o", str(tmp_path / "audit")]
    )
    assert r.exit_code in (0, 1), r.output
    verdict = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert verdict["verdict"] == ("PASS" if r.exit_code == 0 else "FAIL")
    assert {a["attack"] for a in verdict["attacks"]} == {"retrained adversary", "lookup"}
    text = (tmp_path / "audit" / "audit.md").read_text() + json.dumps(verdict)
    assert not any(d.span_text(s) in text for d in docs for s in d.spans if len(d.span_text(s)) > 4)

    pseudo = list(neighbour_pseudonymize(docs, NeighbourTable(vectors, 5), hashlib.sha256(b"k").digest()))
    write_corpus(pseudo, tmp_path / "pseudo.jsonl", "jsonl")
    r = runner.invoke(app, ["privacy-audit", str(corpus), "--pseudonymized", str(tmp_path / "pseudo.jsonl"),
                            "--vectors", str(vec_file), "-o", str(tmp_path / "audit2")])  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    assert (
        json.loads((tmp_path / "audit2" / "audit.json").read_text())["attacks"][0]["attack"]
        == "discriminator"
    )
