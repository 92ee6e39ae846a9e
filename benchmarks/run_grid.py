"""Run a grid of experiment runs as child processes, a few at a time, resumable.

Each run has a key; it is done when ``<out>/<key>.json`` exists (written atomically by the child), so an
interrupted grid picks up where it stopped. Children get one BLAS/OpenMP thread each and log to
``<out>/logs/<key>.log``. Used by the semi-supervised and cross-lingual experiment scripts.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("run_grid")


def done(out: Path, key: str) -> bool:
    return (out / f"{key}.json").exists()


def save_result(out: Path, key: str, result: dict[str, Any]) -> None:
    """Write a run's result atomically (the marker that the run is finished)."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{key}.json.partial"
    tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / f"{key}.json")


def load_results(out: Path, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    return {k: json.loads((out / f"{k}.json").read_text(encoding="utf-8")) for k in keys if done(out, k)}


def run_grid(commands: dict[str, list[str]], out: Path, jobs: int) -> list[str]:
    """Run every command whose key is not done yet, ``jobs`` at a time; returns the keys that failed."""
    todo = [k for k in commands if not done(out, k)]
    log.info("%d runs planned, %d done, %d to do", len(commands), len(commands) - len(todo), len(todo))
    env = os.environ | {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    (out / "logs").mkdir(parents=True, exist_ok=True)
    running: list[tuple[str, subprocess.Popen[bytes], float]] = []
    failed: list[str] = []
    while todo or running:
        while todo and len(running) < jobs:
            key = todo.pop(0)
            with (out / "logs" / f"{key}.log").open("wb") as logf:
                proc = subprocess.Popen(commands[key], stdout=logf, stderr=subprocess.STDOUT, env=env)
            log.info("started %s (pid %d)", key, proc.pid)
            running.append((key, proc, time.perf_counter()))
        time.sleep(2)
        for item in list(running):
            key, proc, started = item
            if proc.poll() is None:
                continue
            running.remove(item)
            if proc.returncode == 0:
                log.info("finished %s in %.0fs", key, time.perf_counter() - started)
            else:
                failed.append(key)
                log.error("%s failed (exit %d); see logs/%s.log", key, proc.returncode, key)
    return failed


def mean_std(values: Sequence[float], digits: int = 2, scale: float = 100.0) -> str:
    import statistics

    if not values:
        return "–"
    m = statistics.fmean(values) * scale
    if len(values) == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ± {statistics.stdev(values) * scale:.{digits}f}"
