"""A bounded load test of the REST service on loopback: latency percentiles, throughput, errors.

Usage (from the repository root)::

    .venv/bin/python benchmarks/service_load.py                          # 2,000 requests, 20 concurrent
    .venv/bin/python benchmarks/service_load.py --requests 200 --concurrency 5 --endpoint detect
    .venv/bin/python benchmarks/service_load.py --url http://127.0.0.1:8000 --token "$TOKEN"  # a running server

Without ``--url`` it starts ``clinideid serve`` on a free loopback port (ephemeral key, ``--workers``
request threads) and stops it afterwards. Each request carries one short synthetic English note (made up
here, no corpus). Reported: requests, concurrency, errors by status, wall seconds, requests per second,
p50/p95/p99/max latency in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

NOTES = [
    "Patient John Miller (MRN 4829105) seen on 11/02/2023 by Dr. Sarah Thompson. Phone (217) 555-0143.",
    "Mrs. Alice Brown, 67 years old, admitted to St. Mary's Hospital on March 3, 2022 for chest pain.",
    "Follow-up with Dr. Patel in Springfield on 04/05/2024; contact: alice.brown@example.com.",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


async def _load(url: str, token: str | None, endpoint: str, n: int, concurrency: int) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as client:

        async def worker() -> None:
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                body = {"text": NOTES[i % len(NOTES)], "language": "en"}
                started = time.perf_counter()
                try:
                    res = await client.post(f"/v1/{endpoint}", json=body)
                    statuses[str(res.status_code)] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    ms = [x * 1000 for x in latencies]
    return {
        "endpoint": endpoint,
        "requests": n,
        "concurrency": concurrency,
        "ok": statuses.get("200", 0),
        "errors": {k: v for k, v in statuses.items() if k != "200"},
        "wall_s": round(wall, 2),
        "requests_per_s": round(n / wall, 1),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(percentile(ms, 95), 1),
        "p99_ms": round(percentile(ms, 99), 1),
        "max_ms": round(max(ms), 1),
    }


def run(requests: int, concurrency: int, endpoint: str = "deidentify", url: str | None = None,
        token: str | None = None, workers: int = 2) -> dict[str, Any]:  # fmt: skip
    """The load test against ``url``, or against a server started here for the run."""
    if url is not None:
        return asyncio.run(_load(url, token, endpoint, requests, concurrency))
    from clinideid.service.local import LocalServer

    with tempfile.TemporaryDirectory() as tmp:
        # the queue must hold every concurrent request: the test measures latency, not refusals
        args = ("--workers", str(workers), "--language", "en")
        with LocalServer(Path(tmp) / "state", *args) as server:
            return asyncio.run(_load(server.url, None, endpoint, requests, concurrency))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--endpoint", choices=["deidentify", "detect"], default="deidentify")
    parser.add_argument("--url", help="a running server (default: start one on loopback)")
    parser.add_argument("--token", help="bearer token for --url")
    parser.add_argument("--workers", type=int, default=2, help="request threads of the started server")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    result = run(args.requests, args.concurrency, args.endpoint, args.url, args.token, args.workers)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
