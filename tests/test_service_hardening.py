"""Security headers on every response, safe download names, and errors that name the field without repeating
its value: a marker in every string field of every endpoint reaches no error body, no header, no log line."""

import base64
import email.message
import email.utils
import hashlib
import json
import logging
import os
import re

import pytest
from fastapi.testclient import TestClient

from clinideid.service import ServiceSettings, create_app
from clinideid.service.headers import attachment

TOKEN = "hardening-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
NOTE = "Patient Quentin Harrowgate, MRN 4829105, seen 11/02/2023 by Dr. Keller."


@pytest.fixture
def settings(tmp_path):
    root = tmp_path / "inputs"
    root.mkdir()
    (root / "in.jsonl").write_text(json.dumps({"id": "x", "text": NOTE}) + "\n")
    return ServiceSettings(
        key=os.urandom(32),
        state_dir=tmp_path / "state",
        tokens=frozenset({TOKEN}),
        language="en",
        input_root=root,
        max_request_bytes=50_000,
        max_document_chars=5_000,
    )


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as c:
        yield c


def _check_headers(res, cacheable: bool = False) -> None:
    h = res.headers
    assert h["x-frame-options"] == "DENY" and h["x-content-type-options"] == "nosniff"
    assert h["referrer-policy"] == "no-referrer" and "frame-ancestors 'none'" in h["content-security-policy"]
    assert (h.get("cache-control") == "no-store") is not cacheable, res.request.url


def test_every_response_has_the_security_headers(client, monkeypatch):
    doc = client.post(
        "/v1/review/documents",
        json={"documents": [{"id": "d", "text": NOTE, "language": "en"}]},
        headers=AUTH,
    )
    responses = [
        doc,
        client.get("/health"),
        client.get("/ready"),
        client.get("/openapi.json"),
        client.get("/v1/pipelines", headers=AUTH),
        client.get("/v1/pipelines"),  # 401
        client.get("/nowhere", headers=AUTH),  # 404
        client.post("/v1/detect", json={"text": 5}, headers=AUTH),  # 422
        client.post("/v1/detect", content=b"x" * 60_000, headers=AUTH),  # 413 from the guard
        client.get("/v1/review/export?reviewer=ann", headers=AUTH),
        client.get("/v1/review/documents/1", headers=AUTH),
    ]
    for res in responses:
        _check_headers(res)
        if res.headers["content-type"].startswith("application/"):
            assert res.headers["content-security-policy"].startswith("default-src 'none';")
    _check_headers(client.get("/review/static/review.js"), cacheable=True)

    page = client.get("/review")
    _check_headers(page)
    csp = page.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "connect-src 'self'" in csp
    assert all(" src=" in tag for tag in re.findall(r"<script[^>]*>", page.text))  # no inline script
    assert not re.search(r"<[^>]+\son\w+=", page.text)  # no inline event handler

    docs = client.get("/docs")
    _check_headers(docs)
    inline = re.search(r"<script>(.*?)</script>", docs.text, re.DOTALL).group(1)
    digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in docs.headers["content-security-policy"]
    _check_headers(client.get("/redoc"))

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(client.app.state.engine, "pipeline", boom)
    failed = client.post("/v1/deidentify", json={"text": NOTE}, headers=AUTH)
    assert failed.status_code == 500
    _check_headers(failed)


def test_download_names_are_fixed_and_quoted(client):
    client.post(
        "/v1/review/documents",
        json={"documents": [{"id": "d", "text": NOTE, "language": "en"}]},
        headers=AUTH,
    )
    evil = client.get("/v1/review/export", params={"reviewer": 'a";filename="evil.html'}, headers=AUTH)
    assert evil.status_code == 422 and "evil" not in evil.text and "evil" not in str(evil.headers)
    for fmt, name in (("jsonl", "review.jsonl"), ("brat", "review-brat.zip")):
        res = client.get("/v1/review/export", params={"reviewer": "Ann Smith", "format": fmt}, headers=AUTH)
        assert res.status_code == 200 and res.headers["content-disposition"] == attachment(name)
        assert "Ann" not in res.headers["content-disposition"]
    # a name with quotes and non-ASCII stays one parameter: an ASCII fallback and the exact name in filename*
    value = attachment('a";filename="evil.html\u00e9')
    msg = email.message.Message()
    msg["content-disposition"] = value
    params = msg.get_params(header="content-disposition")
    assert [k for k, _ in params] == ["attachment", "filename", "filename"]  # nothing injected
    assert params[1][1] == "a__filename__evil.html_"
    assert email.utils.collapse_rfc2231_value(params[2][1]) == 'a";filename="evil.html\u00e9'


def m(name: str) -> str:
    """A marker no message of the server could contain by chance."""
    return f"zqx{name}qzx"


def test_no_caller_value_in_errors_headers_or_logs(client, caplog):
    text = "John Smith called 555-123-4567 today"
    ann = {"start": 0, "end": 10, "score": 0.9, "entity_type": "PERSON"}
    job_file = {"file": (m("filename") + ".jsonl", b'{"id": "x", "text": "hello"}\n')}
    added = client.post(
        "/v1/review/documents",
        json={"documents": [{"id": m("dupid"), "text": NOTE, "language": "en", "spans": []}]},
        headers=AUTH,
    )
    assert added.status_code == 201
    doc = added.json()["documents"][0]["id"]
    # (method, path, request arguments, the status the request gets); every string field, one marker each
    cases = [
        ("post", "/v1/deidentify", {"json": {"text": NOTE, "language": m("language")}}, 422),
        (
            "post",
            "/v1/detect",
            {"json": {"documents": [{"id": m("id"), "text": NOTE, "language": m("dl")}]}},
            422,
        ),
        ("post", "/v1/detect", {"json": {"documents": [{"id": m("bigid"), "text": "x " * 3000}]}}, 413),
        (
            "post",
            "/v1/deidentify",
            {"json": {"text": NOTE, "operators": {m("label"): {"operator": "tag"}}}},
            422,
        ),
        ("post", "/v1/deidentify", {"json": {"text": NOTE, "operators": {m("lab2"): {"op": "tag"}}}}, 422),
        ("post", "/v1/deidentify", {"json": {"text": NOTE, "operators": {m("lab3"): "tag"}}}, 422),
        (
            "post",
            "/v1/deidentify",
            {"json": {"text": NOTE, "operators": {"DATE": {"operator": m("op")}}}},
            422,
        ),
        (
            "post",
            "/v1/deidentify",
            {"json": {"text": NOTE, "operators": {"DATE": {"operator": "tag", "options": {m("key"): 1}}}}},
            422,
        ),
        (
            "post",
            "/v1/deidentify",
            {
                "json": {
                    "text": NOTE,
                    "operators": {
                        "DATE": {"operator": "date_generalize", "options": {"strategy": m("value")}}
                    },
                }
            },
            422,
        ),
        ("post", "/v1/deidentify", {"json": {"text": NOTE, "scope": m("scope")}}, 422),
        ("post", "/v1/deidentify", {"json": {"text": NOTE, "models": [m("model")]}}, 422),
        ("post", "/v1/deidentify", {"json": {"text": NOTE, "models": ["/tmp/" + m("modelpath")]}}, 422),
        ("post", "/v1/deidentify", {"json": {"text": NOTE, m("extra"): 1}}, 422),
        ("post", "/v1/deidentify", {"json": {"text": NOTE, "patient_id": m("patient") * 30}}, 422),
        ("post", "/v1/deidentify", {"json": {"documents": [{"id": m("idlong") * 30, "text": NOTE}]}}, 422),
        ("post", "/v1/jobs", {"files": job_file, "data": {"language": m("joblanguage")}}, 422),
        ("post", "/v1/jobs", {"files": job_file, "data": {"scope": m("jobscope")}}, 422),
        (
            "post",
            "/v1/jobs",
            {"files": job_file, "data": {"operators": json.dumps({m("joblabel"): {}})}},
            422,
        ),
        (
            "post",
            "/v1/jobs",
            {"files": job_file, "data": {"operators": json.dumps({"DATE": {"operator": m("jobop")}})}},
            422,
        ),
        (
            "post",
            "/v1/jobs",
            {
                "files": job_file,
                "data": {
                    "operators": json.dumps(
                        {"DATE": {"operator": "tag", "options": {"template": m("jobopt") + ",[{label}]"}}}
                    )
                },
            },
            422,
        ),
        ("post", "/v1/jobs/from-path", {"json": {"path": m("path")}}, 404),
        ("post", "/v1/jobs/from-path", {"json": {"path": "in.jsonl", "language": m("fplang")}}, 422),
        ("post", "/v1/jobs/from-path", {"json": {"path": "in.jsonl", "scope": m("fpscope")}}, 422),
        ("get", f"/v1/jobs/{m('jobid')}", {}, 404),
        ("post", f"/v1/jobs/{m('resumeid')}/resume", {}, 404),
        ("post", f"/v1/jobs/{m('cancelid')}/cancel", {}, 404),
        ("get", f"/v1/jobs/{m('resultid')}/result", {}, 404),
        ("get", f"/v1/jobs/abc/{m('part')}", {}, 422),
        ("post", "/analyze", {"json": {"text": NOTE, "language": m("alang")}}, 422),
        (
            "post",
            "/analyze",
            {
                "json": {
                    "text": NOTE,
                    "language": "en",
                    "entities": [m("entity")],
                    "correlation_id": m("corr"),
                }
            },
            200,
        ),
        (
            "post",
            "/anonymize",
            {
                "json": {
                    "text": text,
                    "analyzer_results": [ann],
                    "language": m("anlang"),
                    "anonymizers": {"PERSON": {"type": "surrogate"}},
                }
            },
            422,
        ),
        (
            "post",
            "/anonymize",
            {
                "json": {
                    "text": text,
                    "analyzer_results": [{**ann, "entity_type": m("et")}],
                    "anonymizers": {m("et"): {"type": m("atype")}},
                }
            },
            422,
        ),
        (
            "post",
            "/anonymize",
            {"json": {"text": text, "analyzer_results": [{**ann, "end": 99, "entity_type": m("et2")}]}},
            422,
        ),
        (
            "post",
            "/anonymize",
            {"json": {"text": text, "analyzer_results": [ann], "anonymizers": {m("akey"): "not a mapping"}}},
            422,
        ),
        (
            "post",
            "/anonymize",
            {
                "json": {
                    "text": text,
                    "analyzer_results": [ann],
                    "anonymizers": {"PERSON": {"type": "mask", "chars_to_mask": m("chars")}},
                }
            },
            422,
        ),
        (
            "post",
            "/anonymize",
            {
                "json": {
                    "text": text,
                    "analyzer_results": [ann],
                    "anonymizers": {"PERSON": {"type": "hash", "hash_type": m("hash")}},
                }
            },
            422,
        ),
        (
            "post",
            "/v1/review/documents",
            {"json": {"documents": [{"id": m("dupid"), "text": NOTE, "language": "en", "spans": []}]}},
            409,
        ),
        (
            "post",
            "/v1/review/documents",
            {"json": {"documents": [{"id": m("rid"), "text": NOTE, "language": m("rlang")}]}},
            422,
        ),
        (
            "post",
            "/v1/review/documents",
            {
                "json": {
                    "documents": [
                        {
                            "id": m("rid2"),
                            "text": NOTE,
                            "spans": [
                                {"start": 0, "end": 4, "label": m("spanlabel"), "source": m("spansource")}
                            ],
                        }
                    ]
                }
            },
            422,
        ),
        ("post", f"/v1/review/import-job/{m('importid')}", {}, 404),
        ("get", f"/v1/review/documents/{m('docpath')}", {}, 422),
        ("get", f"/v1/review/documents/{doc}", {"params": {"reviewer": m("rev") + "<"}}, 422),
        (
            "post",
            f"/v1/review/documents/{doc}/corrections",
            {"json": {"reviewer": m("crev") + "<", "action": "accept", "start": 0, "end": 4}},
            422,
        ),
        (
            "post",
            f"/v1/review/documents/{doc}/corrections",
            {"json": {"reviewer": "ann", "action": m("action"), "start": 0, "end": 4}},
            422,
        ),
        (
            "post",
            f"/v1/review/documents/{doc}/corrections",
            {"json": {"reviewer": "ann", "action": "add", "start": 0, "end": 4, "label": m("clabel")}},
            422,
        ),
        ("post", f"/v1/review/documents/{doc}/apply", {"params": {"reviewer": m("arev") + '"'}}, 422),
        ("get", "/v1/review/export", {"params": {"reviewer": m("erev") + ";"}}, 422),
        ("get", "/v1/review/export", {"params": {"reviewer": "ann", "format": m("format")}}, 422),
        ("get", f"/review/jobs/{m('auditid')}/audit", {}, 404),
        ("get", f"/v1/{m('unknown')}", {}, 404),
        ("get", "/v1/jobs", {"headers": {"Authorization": f"Bearer {m('token')}"}}, 401),
    ]
    markers = set()
    with caplog.at_level(logging.DEBUG):
        for method, path, kwargs, status in cases:
            kwargs = {"headers": AUTH, **kwargs}
            res = getattr(client, method)(path, **kwargs)
            case = re.findall(r"zqx\w+?qzx", repr(kwargs) + path)
            markers.update(case)
            assert res.status_code == status, (path, case, res.text)
            for marker in case:
                assert marker not in res.text and marker not in str(res.headers), (path, marker, res.text)
        # values a caller legitimately gets back in a successful answer: their own ids, not in headers
        export = client.get("/v1/review/export", params={"reviewer": m("okrev")}, headers=AUTH)
        assert m("okrev") in export.text and m("okrev") not in str(export.headers)
        markers.add(m("okrev"))
    assert len(markers) >= 50
    # the server's log records (the test client's own, which name the URL it called, are not the server's)
    server = [r for r in caplog.records if not r.name.startswith("httpx")]
    logged = " ".join(f"{r.getMessage()} {r.args}" for r in server)
    assert not [mk for mk in markers if mk in logged]
    assert "/v1/jobs/{job_id}" in logged  # the access log names the route, not the path
