"""The service under a real uvicorn server on 127.0.0.1: requests, auth, a small load run, clean shutdown."""

import importlib.util
from pathlib import Path

import httpx

from clinideid.service.local import LocalServer

ROOT = Path(__file__).resolve().parents[1]
NOTE = "Patient Quentin Harrowgate, MRN 4829105, seen 11/02/2023 by Dr. Keller."


def _load_benchmark():
    spec = importlib.util.spec_from_file_location("service_load", ROOT / "benchmarks" / "service_load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_real_server_serves_authenticates_and_shuts_down_cleanly(tmp_path, monkeypatch):
    token = "server-test-token-0123456789"
    monkeypatch.setenv("CLINIDEID_API_TOKENS", token)
    with LocalServer(tmp_path / "state", "--language", "en") as server:
        assert httpx.get(server.url + "/health").json() == {"status": "ok"}
        assert httpx.post(server.url + "/v1/deidentify", json={"text": NOTE}).status_code == 401
        res = httpx.post(
            server.url + "/v1/deidentify", json={"text": NOTE}, headers={"Authorization": f"Bearer {token}"}
        )
        assert res.status_code == 200 and "Harrowgate" not in res.json()["text"]
        analyzed = httpx.post(
            server.url + "/analyze",
            json={"text": NOTE, "language": "en"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert analyzed.status_code == 200 and analyzed.json()
        assert (
            analyzed.headers["x-frame-options"] == "DENY" and analyzed.headers["cache-control"] == "no-store"
        )
        # a path or query value the caller chose reaches no log line: the access log names the route
        probe = httpx.get(
            server.url + "/v1/jobs/zqxjobmarker",
            params={"reviewer": "zqxquerymarker"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert probe.status_code == 404
    # graceful shutdown on SIGTERM (uvicorn re-raises the signal once it is done: status -15)
    assert server.returncode in (0, -15)
    log = server.log_text()
    assert "Application shutdown complete" in log and '"POST /v1/deidentify HTTP/1.1" 200' in log
    assert "Harrowgate" not in log and "4829105" not in log
    assert '"GET /v1/jobs/{job_id} HTTP/1.1" 404' in log and "zqx" not in log and token not in log


def test_small_load_run_on_loopback():
    result = _load_benchmark().run(requests=60, concurrency=6, endpoint="deidentify")
    print(result)
    assert result["requests"] == 60 and result["ok"] + sum(result["errors"].values()) == 60
    assert result["ok"] == 60, result["errors"]
    assert result["p95_ms"] >= result["p50_ms"] > 0


def test_a_streamed_body_over_the_limit_is_refused(tmp_path):
    def body():
        yield b'{"text": "'
        for _ in range(100):
            yield b"x" * 1000
        yield b'"}'

    with LocalServer(tmp_path / "state", "--max-request-bytes", "10000") as server:
        # no Content-Length (chunked): the limit is enforced while the body is read
        res = httpx.post(
            server.url + "/v1/detect", content=body(), headers={"content-type": "application/json"}
        )
        assert res.status_code == 413
        assert httpx.post(server.url + "/v1/detect", json={"text": "Dr. Keller"}).status_code == 200
