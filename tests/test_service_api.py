"""The REST service through FastAPI's TestClient: every endpoint, auth, limits, Presidio shapes, a job,
and no document text in any log line."""

import json
import logging
import os
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from clinideid.service import ServiceSettings, create_app

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PLANTED = "Quentin Harrowgate"
NOTE = f"Patient {PLANTED}, MRN 4829105, seen 11/02/2023 by Dr. Keller. Phone (217) 555-0143."


def make_settings(tmp_path: Path, **kw) -> ServiceSettings:
    defaults = dict(
        key=os.urandom(32), state_dir=tmp_path / "state", tokens=frozenset({TOKEN}), language="en"
    )
    defaults.update(kw)
    return ServiceSettings(**defaults)


@pytest.fixture
def settings(tmp_path):
    root = tmp_path / "inputs"
    root.mkdir()
    return make_settings(tmp_path, input_root=root)


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as c:
        yield c


def test_probes_and_docs_are_public(client):
    assert client.get("/health").json() == {"status": "ok"}
    assert client.get("/ready").json() == {"ready": True}
    spec = client.get("/openapi.json").json()
    for path in (
        "/v1/deidentify",
        "/v1/detect",
        "/v1/jobs",
        "/analyze",
        "/anonymize",
        "/v1/review/documents",
    ):
        assert path in spec["paths"]
    assert client.get("/docs").status_code == 200


def test_auth_needs_a_valid_bearer_token(client):
    assert client.post("/v1/detect", json={"text": NOTE}).status_code == 401
    bad = {"Authorization": "Bearer wrong-token-0123456789"}
    assert client.post("/v1/detect", json={"text": NOTE}, headers=bad).status_code == 401
    assert client.get("/v1/jobs", headers={"Authorization": TOKEN}).status_code == 401
    assert client.post("/v1/detect", json={"text": NOTE}, headers=AUTH).status_code == 200


def test_without_tokens_only_loopback_is_served(tmp_path):
    app = create_app(make_settings(tmp_path, tokens=frozenset()))
    with TestClient(app) as remote:  # TestClient's peer is "testclient", not a loopback address
        assert remote.post("/v1/detect", json={"text": NOTE}).status_code == 403
    with TestClient(app, client=("127.0.0.1", 50000)) as local:
        assert local.post("/v1/detect", json={"text": NOTE}).status_code == 200


def test_deidentify_one_document_and_a_batch(client, settings):
    res = client.post("/v1/deidentify", json={"text": NOTE}, headers=AUTH)
    assert res.status_code == 200
    body = res.json()
    assert PLANTED not in body["text"] and "4829105" not in body["text"]
    assert {r["label"] for r in body["replacements"]} >= {"MEDICALRECORD", "DATE"}
    assert "risk" in body["audit"]
    batch = client.post(
        "/v1/deidentify",
        json={
            "documents": [
                {"id": "a", "text": NOTE, "patient_id": "p1"},
                {"id": "b", "text": "Frau Renate Schulze, geb. 12.03.1956.", "language": "de"},
            ],
            "operators": {"DATE": {"operator": "tag"}},
            "scope": "patient",
        },
        headers=AUTH,
    ).json()
    assert [d["id"] for d in batch["documents"]] == ["a", "b"] and batch["errors"] == []
    assert "[DATE]" in batch["documents"][1]["text"]
    assert settings.key.hex() not in res.text and settings.key.hex() not in json.dumps(batch)


def test_detect_returns_spans_with_their_source(client):
    body = client.post("/v1/detect", json={"text": NOTE}, headers=AUTH).json()
    assert body["spans"] and all(s["source"] and s["end"] > s["start"] for s in body["spans"])
    start = NOTE.index(PLANTED)
    assert any(s["start"] <= start < s["end"] for s in body["spans"])


def test_bad_requests_get_clear_errors_without_the_input(client):
    res = client.post("/v1/deidentify", json={"text": 5, "documents": PLANTED}, headers=AUTH)
    assert res.status_code == 422 and PLANTED not in res.text
    res = client.post(
        "/v1/deidentify", json={"text": NOTE, "operators": {"DATE": {"operator": "nope"}}}, headers=AUTH
    )
    assert res.status_code == 422 and "operators.DATE.operator" in res.text and "nope" not in res.text
    assert client.post("/v1/deidentify", json={}, headers=AUTH).status_code == 422


def test_request_size_document_and_batch_limits(tmp_path):
    settings = make_settings(
        tmp_path, max_request_bytes=20_000, max_document_chars=5_000, max_batch_documents=2
    )
    with TestClient(create_app(settings)) as c:
        big = c.post("/v1/detect", json={"text": "x " * 20_000}, headers=AUTH)
        assert big.status_code == 413
        long_doc = c.post("/v1/detect", json={"text": "word " * 1_500}, headers=AUTH)
        assert long_doc.status_code == 413
        docs = [{"id": str(i), "text": "hello"} for i in range(3)]
        assert c.post("/v1/detect", json={"documents": docs}, headers=AUTH).status_code == 413


def test_time_limit_answers_504(tmp_path):
    with TestClient(create_app(make_settings(tmp_path, time_limit=0.001))) as c:
        res = c.post("/v1/deidentify", json={"text": NOTE * 200}, headers=AUTH)
        assert res.status_code == 504


def test_presidio_analyze_shape(client):
    res = client.post(
        "/analyze", json={"text": NOTE, "language": "en", "return_decision_process": True}, headers=AUTH
    )
    results = res.json()
    assert isinstance(results, list) and results
    for r in results:
        assert {"entity_type", "start", "end", "score", "analysis_explanation"} <= set(r)
        assert 0 <= r["score"] <= 1 and r["analysis_explanation"]["recognizer"]
    assert "PHONE_NUMBER" in {r["entity_type"] for r in results}
    only = client.post(
        "/analyze", json={"text": NOTE, "language": "en", "entities": ["PHONE_NUMBER"]}, headers=AUTH
    )
    assert {r["entity_type"] for r in only.json()} == {"PHONE_NUMBER"}


def test_presidio_anonymize_operators(client):
    text = "John Smith called 555-123-4567 today"
    results = [
        {"start": 0, "end": 10, "score": 0.9, "entity_type": "PERSON"},
        {"start": 5, "end": 10, "score": 0.5, "entity_type": "PERSON"},  # overlaps: the higher score wins
        {"start": 18, "end": 30, "score": 0.8, "entity_type": "PHONE_NUMBER"},
    ]
    plain = client.post("/anonymize", json={"text": text, "analyzer_results": results}, headers=AUTH).json()
    assert plain["text"] == "<PERSON> called <PHONE_NUMBER> today"
    assert [i["entity_type"] for i in plain["items"]] == ["PERSON", "PHONE_NUMBER"]
    assert plain["items"][0] == {
        "start": 0,
        "end": 8,
        "entity_type": "PERSON",
        "text": "<PERSON>",
        "operator": "replace",
    }
    anonymizers = {
        "PHONE_NUMBER": {"type": "mask", "masking_char": "*", "chars_to_mask": 4, "from_end": True},
        "PERSON": {"type": "surrogate"},
    }
    body = client.post(
        "/anonymize",
        json={"text": text, "analyzer_results": results, "anonymizers": anonymizers},
        headers=AUTH,
    ).json()
    assert "555-123-****" in body["text"] and "John Smith" not in body["text"]
    person = body["items"][0]
    assert body["text"][person["start"] : person["end"]] == person["text"]
    bad = client.post("/anonymize", json={"text": text, "analyzer_results": [{"start": 0, "end": 99,
                      "entity_type": "PERSON", "score": 1}]}, headers=AUTH)  # fmt: skip
    assert bad.status_code == 422


def test_listings(client):
    pipelines = client.get("/v1/pipelines", headers=AUTH).json()
    assert "surrogate" in pipelines["operators"] and "en" in pipelines["languages"]
    models = client.get("/v1/models", headers=AUTH).json()["models"]
    assert {"name", "type"} <= set(models[0])


def _wait(client, job_id: str, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(f"/v1/jobs/{job_id}", headers=AUTH).json()
        if status["status"] not in ("queued", "running"):
            return status
        time.sleep(0.5)
    raise AssertionError("the job did not finish in time")


def test_job_upload_poll_download_and_resume(client, settings):
    lines = [json.dumps({"id": f"n{i}", "text": NOTE}) for i in range(3)]
    res = client.post(
        "/v1/jobs",
        files={"file": ("notes.jsonl", ("\n".join(lines) + "\n").encode(), "application/x-ndjson")},
        data={"language": "en"},
        headers=AUTH,
    )
    assert res.status_code == 202, res.text
    job = res.json()
    assert job["total"] == 3
    status = _wait(client, job["id"])
    assert status["status"] == "done" and status["processed"] == 3 and status["progress"] == 1.0
    result = client.get(f"/v1/jobs/{job['id']}/result", headers=AUTH)
    records = [json.loads(line) for line in result.text.splitlines()]
    assert [r["id"] for r in records] == ["n0", "n1", "n2"]
    assert all(PLANTED not in r["text"] for r in records)
    summary = client.get(f"/v1/jobs/{job['id']}/summary", headers=AUTH).json()
    assert summary["succeeded"] == 3 and "audit" in summary
    assert "<svg" in client.get(f"/v1/jobs/{job['id']}/audit", headers=AUTH).text
    assert client.get(f"/v1/jobs/{job['id']}/nothing", headers=AUTH).status_code == 422
    imported = client.post(f"/v1/review/import-job/{job['id']}", headers=AUTH)
    assert imported.status_code == 201 and len(imported.json()["documents"]) == 3
    first = client.get(f"/v1/review/documents/{imported.json()['documents'][0]['id']}", headers=AUTH).json()
    assert first["display_id"] == f"{job['id']}/n0" and first["text"] == NOTE
    assert any(sp["start"] == NOTE.index(PLANTED) for sp in first["spans"])
    assert client.post(f"/v1/review/import-job/{job['id']}", headers=AUTH).json()["documents"] == []
    # resuming a finished job is exactly-once: nothing is done twice
    assert client.post(f"/v1/jobs/{job['id']}/resume", headers=AUTH).status_code == 202
    assert _wait(client, job["id"])["status"] == "done"
    again = client.get(f"/v1/jobs/{job['id']}/result", headers=AUTH).text
    assert again == result.text
    assert client.get("/v1/jobs/0123456789abcdef", headers=AUTH).status_code == 404


def test_job_from_a_server_path_stays_inside_the_root(client, settings):
    (settings.input_root / "in.jsonl").write_text(json.dumps({"id": "x", "text": NOTE}) + "\n")
    (settings.input_root.parent / "outside.jsonl").write_text(json.dumps({"id": "y", "text": NOTE}) + "\n")
    res = client.post("/v1/jobs/from-path", json={"path": "in.jsonl"}, headers=AUTH)
    assert res.status_code == 202, res.text
    escape = client.post("/v1/jobs/from-path", json={"path": "../outside.jsonl"}, headers=AUTH)
    assert escape.status_code == 404
    assert _wait(client, res.json()["id"])["status"] == "done"


def test_no_document_text_in_logs(client, settings, caplog, monkeypatch):
    with caplog.at_level(logging.DEBUG):
        client.post("/v1/deidentify", json={"text": NOTE}, headers=AUTH)
        client.post("/v1/detect", json={"documents": [{"id": "d", "text": NOTE}]}, headers=AUTH)
        client.post("/analyze", json={"text": NOTE, "language": "en"}, headers=AUTH)
        client.post("/v1/deidentify", json={"text": NOTE, "language": "xx"}, headers=AUTH)
        client.post("/v1/deidentify", json={"text": 5, "documents": PLANTED}, headers=AUTH)

        def boom(*args, **kwargs):
            raise RuntimeError(f"failed on {PLANTED}")

        monkeypatch.setattr(client.app.state.engine, "pipeline", boom)
        res = client.post("/v1/deidentify", json={"text": NOTE}, headers=AUTH)
        assert res.status_code == 500 and PLANTED not in res.text
    assert "RuntimeError" in caplog.text
    assert PLANTED not in caplog.text and "4829105" not in caplog.text
    assert settings.key.hex() not in caplog.text
