"""Review API (TestClient) and inter-annotator agreement: corrections per reviewer, export, apply, IAA."""

import io
import json
import os
import zipfile

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.evaluate.agreement import agreement, krippendorff_alpha_nominal
from clinideid.service import ServiceSettings, create_app

_register_commands()
TEXT = "Patient Quentin Harrowgate was seen in Springfield on 11/02/2023 by Dr. Keller."
SPANS = [
    {"start": 8, "end": 26, "label": "PATIENT", "source": "rules"},
    {"start": 39, "end": 50, "label": "CITY", "source": "crf"},
]


@pytest.fixture
def client(tmp_path):
    settings = ServiceSettings(key=os.urandom(32), state_dir=tmp_path / "state", language="en")
    with TestClient(create_app(settings), client=("127.0.0.1", 40000)) as c:
        yield c


def _correct(client, reviewer, action, start, end, label=None):
    res = client.post(
        "/v1/review/documents/1/corrections",
        json={"reviewer": reviewer, "action": action, "start": start, "end": end, "label": label},
    )
    assert res.status_code == 201, res.text
    return res.json()["spans"]


def test_reviewers_corrections_export_apply_and_agreement(client, tmp_path):
    res = client.post(
        "/v1/review/documents", json={"documents": [{"id": "n1", "text": TEXT, "spans": SPANS}]}
    )
    assert res.status_code == 201
    detected = client.post("/v1/review/documents", json={"documents": [{"id": "n2", "text": TEXT}]}).json()
    assert detected["documents"][0]["detected"] > 0  # the server ran its detectors
    assert (
        client.post("/v1/review/documents", json={"documents": [{"id": "n1", "text": TEXT}]}).status_code
        == 409
    )

    keller = TEXT.index("Keller")
    _correct(client, "ann", "accept", 8, 26)
    _correct(client, "ann", "relabel", 39, 50, "STATE")
    spans = _correct(client, "ann", "add", keller, keller + 6, "DOCTOR")
    assert [s["status"] for s in spans] == ["accepted", "relabelled", "added"]
    _correct(client, "bob", "reject", 39, 50)
    assert client.post(
        "/v1/review/documents/1/corrections",
        json={"reviewer": "bob", "action": "add", "start": 0, "end": 999, "label": "CITY"},
    ).status_code == 422  # fmt: skip

    docs = client.get("/v1/review/documents").json()["documents"]
    assert docs[0]["reviewers"] == ["ann", "bob"] and docs[0]["status"] == "reviewed"
    history = client.get("/v1/review/documents/1/corrections").json()["corrections"]
    assert [(c["reviewer"], c["action"]) for c in history] == [
        ("ann", "accept"), ("ann", "relabel"), ("ann", "add"), ("bob", "reject"),
    ]  # fmt: skip

    applied = client.post("/v1/review/documents/1/apply?reviewer=ann").json()
    assert "Harrowgate" not in applied["text"] and "Keller" not in applied["text"]
    assert {r["label"] for r in applied["replacements"]} == {"PATIENT", "STATE", "DOCTOR"}

    lines = client.get("/v1/review/export?reviewer=ann").text.splitlines()
    first = json.loads(lines[0])
    assert first["id"] == "n1" and [s["label"] for s in first["spans"]] == ["PATIENT", "STATE", "DOCTOR"]
    brat = zipfile.ZipFile(io.BytesIO(client.get("/v1/review/export?reviewer=ann&format=brat").content))
    ann = brat.read("000001.ann").decode()
    assert "T1\tPATIENT 8 26\tQuentin Harrowgate" in ann and "DOCTOR" in ann

    iaa = client.get("/v1/review/agreement").json()
    assert iaa["reviewers"] == ["ann", "bob"] and iaa["documents"] == 1
    pair = iaa["pairs"][0]
    assert pair["entity_f1"] == round(2 * 1 / (3 + 1), 4)  # only PATIENT matches
    assert 0 < iaa["observed_agreement"] < 1 and iaa["krippendorff_alpha"] < 1

    # the same figures from the command line, on the database and on exports
    db = tmp_path / "state" / "review.sqlite3"
    res = CliRunner().invoke(app, ["agreement", "--review-db", str(db), "--json", str(tmp_path / "iaa.json")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "iaa.json").read_text())["krippendorff_alpha"] == iaa["krippendorff_alpha"]
    for who in ("ann", "bob"):
        (tmp_path / f"{who}.jsonl").write_text(client.get(f"/v1/review/export?reviewer={who}").text)
    res = CliRunner().invoke(app, ["agreement", str(tmp_path / "ann.jsonl"), str(tmp_path / "bob.jsonl")])
    assert res.exit_code == 0 and "Krippendorff" in res.output


def test_review_page_and_static_files_are_served(client):
    page = client.get("/review")
    assert page.status_code == 200 and "review.js" in page.text
    assert client.get("/review/static/review.js").status_code == 200


def test_krippendorff_alpha_matches_the_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal data: alpha = 0.743
    data = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4], [4, 4, 4, 4],
            [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1], [None, None, 3, None]]  # fmt: skip
    units = [[str(v) for v in unit if v is not None] for unit in data]
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=5e-4)


def test_identical_annotations_agree_fully():
    spans = {"d": [(0, 4, "PATIENT")]}
    report = agreement({"a": spans, "b": spans}, {"d": "John saw Mary"})
    assert report["observed_agreement"] == 1.0 and report["pairs"][0]["entity_f1"] == 1.0
