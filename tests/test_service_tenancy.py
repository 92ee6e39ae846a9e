"""Tenants of the REST service: every job and review document belongs to the token (or named tenant) that
created it; other tenants get the same 404 as for what does not exist; admins see everything; owners are
stored as tenant names or keyed hashes, never tokens; a state folder from before owners migrates."""

import io
import json
import os
import sqlite3
import time
import zipfile

import pytest
from fastapi.testclient import TestClient

from clinideid.errors import ConfigError
from clinideid.service import ServiceSettings, create_app
from clinideid.service.settings import load_access

ANN = "ann-token-0123456789abcdef"  # a bare token: a tenant of its own
BOB = "bob-token-0123456789abcdef"  # another one
ADMIN = "admin-token-0123456789abcdef"
WARD_1 = "ward-one-token-0123456789ab"  # two tokens of the named tenant "ward"
WARD_2 = "ward-two-token-0123456789ab"
TOKENS = (ANN, BOB, ADMIN, WARD_1, WARD_2)
NOTE = "Patient Quentin Harrowgate, MRN 4829105, seen 11/02/2023 by Dr. Keller."
SPANS = [{"start": 8, "end": 26, "label": "PATIENT", "source": "rules"}]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def make_settings(state_dir, input_root=None) -> ServiceSettings:
    return ServiceSettings(
        key=os.urandom(32),
        state_dir=state_dir,
        tokens=frozenset(TOKENS),
        tenants={WARD_1: "ward", WARD_2: "ward"},
        admin_tokens=frozenset({ADMIN}),
        language="en",
        input_root=input_root,
    )


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(make_settings(tmp_path / "state"))) as c:
        yield c


def _wait(client, job_id: str, token: str, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(f"/v1/jobs/{job_id}", headers=auth(token)).json()
        if status["status"] not in ("queued", "running"):
            return status
        time.sleep(0.5)
    raise AssertionError("the job did not finish in time")


def _upload(client, token: str, ids: list[str]):
    body = "".join(json.dumps({"id": i, "text": NOTE}) + "\n" for i in ids).encode()
    return client.post(
        "/v1/jobs", files={"file": ("n.jsonl", body)}, data={"language": "en"}, headers=auth(token)
    )


def test_jobs_belong_to_their_tenant(client, tmp_path):
    res = _upload(client, ANN, ["a1", "a2"])
    assert res.status_code == 202, res.text
    job = res.json()["id"]
    assert _wait(client, job, ANN)["status"] == "done"

    missing = client.get("/v1/jobs/0123456789abcdef", headers=auth(BOB))
    assert missing.status_code == 404
    # every route that reads, resumes, cancels, downloads or imports the job: 404, as for no job at all
    for method, path in [
        ("get", f"/v1/jobs/{job}"),
        ("get", f"/v1/jobs/{job}/result"),
        ("get", f"/v1/jobs/{job}/report"),
        ("get", f"/v1/jobs/{job}/summary"),
        ("get", f"/v1/jobs/{job}/audit"),
        ("post", f"/v1/jobs/{job}/resume"),
        ("post", f"/v1/jobs/{job}/cancel"),
        ("post", f"/v1/review/import-job/{job}"),
        ("get", f"/review/jobs/{job}/audit"),
    ]:
        for token in (BOB, WARD_1):
            res = getattr(client, method)(path, headers=auth(token))
            assert (res.status_code, res.json()) == (404, missing.json()), (token, path)
    assert client.get("/v1/jobs", headers=auth(BOB)).json()["jobs"] == []

    mine = client.get("/v1/jobs", headers=auth(ANN)).json()["jobs"]
    assert [j["id"] for j in mine] == [job] and "owner" not in mine[0]
    result = client.get(f"/v1/jobs/{job}/result", headers=auth(ANN))
    assert result.status_code == 200 and [json.loads(x)["id"] for x in result.text.splitlines()] == [
        "a1",
        "a2",
    ]
    audit = client.get(f"/v1/jobs/{job}/audit", headers=auth(ANN))
    assert audit.headers["content-security-policy"].startswith("sandbox;")
    assert audit.headers["content-disposition"].startswith('attachment; filename="audit.html"')

    # the admin sees every job, with its owner, and may read it
    listed = client.get("/v1/jobs", headers=auth(ADMIN)).json()["jobs"]
    assert [j["id"] for j in listed] == [job] and listed[0]["owner"].startswith("token:")
    assert client.get(f"/v1/jobs/{job}/result", headers=auth(ADMIN)).text == result.text

    # job.json holds a keyed hash of the token, never the token
    meta_text = (tmp_path / "state" / "jobs" / job / "job.json").read_text()
    assert json.loads(meta_text)["owner"] == listed[0]["owner"] and ANN not in meta_text

    # imported documents stay with the job's owner, also when an admin imports them
    imported = client.post(f"/v1/review/import-job/{job}", headers=auth(ADMIN))
    assert imported.status_code == 201 and len(imported.json()["documents"]) == 2
    doc_id = imported.json()["documents"][0]["id"]
    assert client.get(f"/v1/review/documents/{doc_id}", headers=auth(ANN)).json()["text"] == NOTE
    assert client.get(f"/v1/review/documents/{doc_id}", headers=auth(BOB)).status_code == 404
    assert client.get("/v1/review/documents", headers=auth(BOB)).json()["documents"] == []

    # tokens of one named tenant share its jobs
    shared = _upload(client, WARD_1, ["w1"]).json()["id"]
    assert client.get(f"/v1/jobs/{shared}", headers=auth(WARD_2)).status_code == 200
    assert client.post(f"/v1/jobs/{shared}/cancel", headers=auth(WARD_2)).status_code == 200
    assert client.get(f"/v1/jobs/{shared}", headers=auth(ANN)).status_code == 404
    assert [j["id"] for j in client.get("/v1/jobs", headers=auth(WARD_2)).json()["jobs"]] == [shared]
    owner = json.loads((tmp_path / "state" / "jobs" / shared / "job.json").read_text())["owner"]
    assert owner == "tenant:ward"


def _add(client, token, doc_id, text):
    return client.post(
        "/v1/review/documents",
        json={"documents": [{"id": doc_id, "text": text, "language": "en", "spans": SPANS}]},
        headers=auth(token),
    )


def test_review_documents_and_exports_belong_to_their_tenant(client):
    bob_text = "Patient Marguerite Olyphant was seen by Dr. Keller."
    ann_doc = _add(client, ANN, "n1", NOTE).json()["documents"][0]["id"]
    # the same display id in another tenant: no conflict, so nothing reveals that ann has one
    bob = _add(client, BOB, "n1", bob_text)
    assert bob.status_code == 201
    bob_doc = bob.json()["documents"][0]["id"]
    again = _add(client, ANN, "n1", NOTE)
    assert again.status_code == 409 and "n1" not in again.text

    missing = client.get("/v1/review/documents/9999", headers=auth(BOB)).json()
    correction = {"reviewer": "bob", "action": "accept", "start": 8, "end": 26}
    for method, path, kw in [
        ("get", f"/v1/review/documents/{ann_doc}", {}),
        ("get", f"/v1/review/documents/{ann_doc}?reviewer=bob", {}),
        ("get", f"/v1/review/documents/{ann_doc}/corrections", {}),
        ("post", f"/v1/review/documents/{ann_doc}/corrections", {"json": correction}),
        ("post", f"/v1/review/documents/{ann_doc}/apply?reviewer=bob", {}),
    ]:
        res = getattr(client, method)(path, headers=auth(BOB), **kw)
        assert (res.status_code, res.json()) == (404, missing), path

    for who, token, doc in (("ann", ANN, ann_doc), ("ann2", ANN, ann_doc), ("bob", BOB, bob_doc)):
        res = client.post(
            f"/v1/review/documents/{doc}/corrections",
            json={"reviewer": who, "action": "accept", "start": 8, "end": 26},
            headers=auth(token),
        )
        assert res.status_code == 201
    listed = client.get("/v1/review/documents", headers=auth(BOB)).json()["documents"]
    assert [d["id"] for d in listed] == [bob_doc]
    export = client.get("/v1/review/export?reviewer=bob", headers=auth(BOB)).text
    assert bob_text in export and "Harrowgate" not in export
    brat = zipfile.ZipFile(
        io.BytesIO(client.get("/v1/review/export?reviewer=bob&format=brat", headers=auth(BOB)).content)
    )
    assert brat.namelist() == [f"{bob_doc:06d}.txt", f"{bob_doc:06d}.ann"]
    assert client.get("/v1/review/agreement", headers=auth(BOB)).json()["reviewers"] == ["bob"]
    assert client.get("/v1/review/agreement", headers=auth(ANN)).json()["reviewers"] == ["ann", "ann2"]

    everything = client.get("/v1/review/export?reviewer=ann", headers=auth(ADMIN)).text
    assert "Harrowgate" in everything and "Olyphant" in everything
    assert len(client.get("/v1/review/documents", headers=auth(ADMIN)).json()["documents"]) == 2
    assert client.get("/v1/review/agreement", headers=auth(ADMIN)).json()["reviewers"] == [
        "ann",
        "ann2",
        "bob",
    ]

    ward = _add(client, WARD_1, "w1", NOTE).json()["documents"][0]["id"]
    assert client.get(f"/v1/review/documents/{ward}", headers=auth(WARD_2)).status_code == 200
    assert client.get(f"/v1/review/documents/{ward}", headers=auth(ANN)).status_code == 404


def test_an_older_state_folder_is_visible_to_admins_only(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    db = sqlite3.connect(state / "review.sqlite3")  # the review database as it was before owners
    db.executescript(
        """
        CREATE TABLE documents (id INTEGER NOT NULL, display_id VARCHAR(200) NOT NULL, language VARCHAR(8) NOT
            NULL, text TEXT NOT NULL, created DATETIME NOT NULL, PRIMARY KEY (id), UNIQUE (display_id));
        CREATE TABLE corrections (id INTEGER NOT NULL, document_id INTEGER NOT NULL, reviewer VARCHAR(80) NOT
            NULL, action VARCHAR(10) NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, label VARCHAR(40),
            created DATETIME NOT NULL, PRIMARY KEY (id), FOREIGN KEY(document_id) REFERENCES documents (id));
        CREATE TABLE detected_spans (id INTEGER NOT NULL, document_id INTEGER NOT NULL, start INTEGER NOT NULL,
            "end" INTEGER NOT NULL, label VARCHAR(40) NOT NULL, source VARCHAR(80) NOT NULL, explanation
            VARCHAR(200), PRIMARY KEY (id), FOREIGN KEY(document_id) REFERENCES documents (id));
        """
    )
    db.execute("INSERT INTO documents VALUES (7, 'old', 'en', ?, '2024-01-02 03:04:05.000000')", (NOTE,))
    db.execute("INSERT INTO detected_spans VALUES (1, 7, 8, 26, 'PATIENT', 'rules', NULL)")
    db.execute(
        "INSERT INTO corrections VALUES (1, 7, 'ann', 'reject', 8, 26, NULL, '2024-01-02 03:05:00.000000')"
    )
    db.commit()
    db.close()
    old_job = state / "jobs" / "00aa11bb22cc33dd"  # a job folder from before owners
    old_job.mkdir(parents=True)
    (old_job / "job.json").write_text(
        json.dumps({"id": old_job.name, "status": "done", "created": 1.0, "total": 1, "options": {}})
    )

    with TestClient(create_app(make_settings(state))) as client:
        assert client.get("/v1/jobs", headers=auth(ANN)).json()["jobs"] == []
        assert client.get(f"/v1/jobs/{old_job.name}", headers=auth(ANN)).status_code == 404
        assert [j["id"] for j in client.get("/v1/jobs", headers=auth(ADMIN)).json()["jobs"]] == [old_job.name]
        assert client.get(f"/v1/jobs/{old_job.name}", headers=auth(ADMIN)).json()["owner"] is None

        assert client.get("/v1/review/documents/7", headers=auth(ANN)).status_code == 404
        old = client.get("/v1/review/documents/7?reviewer=ann", headers=auth(ADMIN)).json()
        assert old["text"] == NOTE and [s["status"] for s in old["spans"]] == ["rejected"]
        # display ids are unique per owner now: the old unique constraint is gone
        assert _add(client, ANN, "old", NOTE).status_code == 201
        mine = client.get("/v1/review/documents", headers=auth(ANN)).json()["documents"]
        assert [d["display_id"] for d in mine] == ["old"] and mine[0]["id"] != 7
    columns = [
        row[1] for row in sqlite3.connect(state / "review.sqlite3").execute("PRAGMA table_info(documents)")
    ]
    assert "owner" in columns

    # owners survive a restart: the keyed hash uses the state folder's secret
    with TestClient(create_app(make_settings(state))) as client:
        assert [
            d["display_id"] for d in client.get("/v1/review/documents", headers=auth(ANN)).json()["documents"]
        ] == ["old"]
        assert client.get("/v1/review/documents", headers=auth(BOB)).json()["documents"] == []


def test_token_file_with_tenants_and_admins(tmp_path):
    path = tmp_path / "tokens.txt"
    path.write_text(f"# tokens\n{ANN}\n{WARD_1} tenant=ward\n{ADMIN}  admin\n{WARD_2} tenant=ward admin\n")
    access = load_access(path, env=f"{BOB}, ")
    assert access.tokens == {ANN, BOB, ADMIN, WARD_1, WARD_2}
    assert access.tenants == {WARD_1: "ward", WARD_2: "ward"}
    assert access.admin_tokens == {ADMIN, WARD_2}
    assert load_access(None, env=f"{ANN}\n{BOB} tenant=x").tenants == {BOB: "x"}  # a plain list still works

    for line, problem in [
        (f"{ANN} tenant=bad/name", "tenant=NAME"),
        (f"{ANN} owner=x", "tenant=NAME"),
        (f"{ANN} tenant=a\n{ANN} tenant=b", "another tenant"),
        ("short tenant=x", "at least 16"),
    ]:
        path.write_text(line + "\n")
        with pytest.raises(ConfigError, match=problem) as err:
            load_access(path, env="")
        assert ANN not in str(err.value) and "short" not in str(err.value)
    with pytest.raises(ConfigError, match="only name tokens"):
        ServiceSettings(key=None, state_dir=tmp_path, tokens=frozenset({ANN}), admin_tokens=frozenset({BOB}))
