"""``batch.workers``: worker processes bounded in memory and time, replaced when they die or overrun.

The handlers below run in real spawned worker processes (they import this module by name); nothing is
mocked. No test asserts a wall time: each asserts which limit stopped the task and that the pool goes on.
"""

from __future__ import annotations

import os
import signal

import pytest

from clinideid.batch.limits import format_size, parse_size, time_limit
from clinideid.batch.workers import WorkerPool, WorkerSetup, WorkerSetupError
from clinideid.errors import ConfigError

MEMORY_LIMIT = 64 * 1024 * 1024


def _init(arg: str) -> str:
    if arg == "broken":
        raise ConfigError("the test pipeline is broken on purpose")
    return arg


def _handle(state: str, task: tuple[str, int]) -> object:
    kind, n = task
    if kind == "echo":
        return (state, n)
    if kind == "allocate":  # more than the memory limit allows
        return len(bytearray(n))
    if kind == "stall":  # the alarm is ignored, as by native code that never returns to Python
        with time_limit(0.2):
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            while True:
                pass
    if kind == "alarm":  # a stall the alarm can stop
        with time_limit(0.2):
            while True:
                pass
    if kind == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    raise ValueError(f"no task {kind}")


def _run(pool: WorkerPool, task: tuple[str, int], kill_after: float | None = 30.0):
    while not pool.idle:  # a replacement worker starting
        assert pool.poll(5.0) == []
    ticket = pool.submit(task, kill_after)
    while True:
        for got, reply in pool.poll(5.0):
            assert got == ticket
            return reply


@pytest.fixture
def pool():
    pool = WorkerPool(WorkerSetup(_init, "state", _handle, MEMORY_LIMIT), 1)
    pool.wait_ready(timeout=120)
    yield pool
    pool.close(kill=True)


def test_memory_over_the_limit_fails_the_task_and_the_worker_goes_on(pool: WorkerPool):
    reply = _run(pool, ("allocate", 4 * MEMORY_LIMIT))
    assert (
        reply.kind == "memory"
        and "--memory-limit" in reply.value
        and format_size(MEMORY_LIMIT) in reply.value
    )
    assert _run(pool, ("allocate", MEMORY_LIMIT // 4)).value == MEMORY_LIMIT // 4
    assert _run(pool, ("echo", 1)).value == ("state", 1)


def test_a_stalled_worker_is_killed_and_replaced(pool: WorkerPool):
    stalled = _run(pool, ("stall", 0), kill_after=1.0)
    assert stalled.kind == "time" and stalled.value is None  # killed from outside
    assert pool.idle == 0  # the replacement is still starting
    assert _run(pool, ("echo", 2)).value == ("state", 2)
    alarmed = _run(pool, ("alarm", 0), kill_after=30.0)
    assert alarmed.kind == "time" and "time limit of 0.2 s" in alarmed.value  # stopped by its own alarm


def test_a_crashed_worker_is_replaced(pool: WorkerPool):
    died = _run(pool, ("crash", 0))
    assert died.kind == "died" and died.value == -signal.SIGKILL
    assert _run(pool, ("echo", 3)).value == ("state", 3)
    bug = _run(pool, ("nothing", 0))
    assert bug.kind == "internal" and bug.value == "ValueError"  # the type only, never the message


def test_a_worker_that_cannot_set_up_is_reported():
    pool = WorkerPool(WorkerSetup(_init, "broken", _handle), 1)
    try:
        with pytest.raises(WorkerSetupError) as err:
            pool.wait_ready(timeout=120)
        assert err.value.name == "ConfigError" and "broken on purpose" in err.value.message
    finally:
        pool.close(kill=True)


def test_sizes_parse_and_print():
    assert parse_size("4G", "--memory-limit") == 4 * 1024**3
    assert parse_size("512M", "--memory-limit") == 512 * 1024**2
    assert parse_size("1.5GiB", "--memory-limit") == int(1.5 * 1024**3)
    assert parse_size("0", "--memory-limit") == 0
    assert parse_size("300000", "--max-unzipped-bytes") == 300_000
    for bad in ("lots", "-1G", "4X"):
        with pytest.raises(ConfigError, match="--memory-limit must be a size"):
            parse_size(bad, "--memory-limit")
    assert format_size(4 * 1024**3) == "4 GiB" and format_size(200 * 1024**2) == "200 MiB"
