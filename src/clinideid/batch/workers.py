"""Worker processes that compute one task at a time within limits (the batch runner's and the service's).

Whatever a document does, the process that owns the run (or the server) stays small and responsive:

- **memory**: each worker limits its own address space (``limits.apply_memory_limit``) once it is set up,
  so an allocation past the limit fails in the worker (``MemoryError``, reported as a reply) or kills only
  the worker;
- **time**: the task's handler bounds itself with ``SIGALRM`` (``limits.time_limit``, the first line); the
  parent kills a worker still busy at the task's ``kill_after`` and starts another, so not even code that
  never yields to the alarm can stall the caller;
- **crashes**: a worker that dies (killed, a native crash) is replaced, and its task is answered
  ``Reply("died")``;
- workers are *spawned* (no fork of a process that may hold threads or locks), ignore SIGINT (the parent
  decides when to stop), and exit when the parent dies.

The parent drives a ``WorkerPool`` from one thread: ``submit`` to an idle worker, ``poll`` for replies
(also kills overdue workers and replaces dead ones), ``cancel`` a task, ``close``. Tasks, replies and the
``WorkerSetup`` pickle; the handler's result comes back as is, its exceptions as a kind and a type name.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from clinideid.batch.limits import DocumentTimeout, apply_memory_limit, memory_message
from clinideid.errors import ClinideidError

log = logging.getLogger(__name__)

#: how long a closing pool waits for a worker to exit before it kills it
EXIT_SECONDS = 5.0


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker runs: ``init(init_arg)`` once (its state, e.g. a built pipeline), then
    ``handler(state, payload)`` per task; both module-level functions (they travel by name)."""

    init: Callable[[Any], Any]
    init_arg: Any
    handler: Callable[[Any, Any], Any]
    memory_limit: int | None = None  # bytes a worker may add once set up; None or 0: no limit
    nice: int = 0  # a lower CPU priority for the workers, so the parent stays responsive under load


@dataclass(frozen=True)
class Reply:
    """A task's answer: ``done`` (``value``: the handler's result), ``time`` (stopped at the time limit:
    by the alarm, ``value`` its message, or killed, ``value`` None), ``memory`` (``value``: the message),
    ``internal`` (``value``: the exception's type name) or ``died`` (``value``: the exit code)."""

    kind: str
    value: Any = None


class WorkerSetupError(Exception):
    """A worker could not set itself up (the pipeline did not build): ``name`` and ``message`` of the
    error (the message only for a ``ClinideidError``, whose messages hold no data)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message or name)
        self.name = name
        self.message = message


# -- the worker side ------------------------------------------------------------------------------------------
def _exit_with_parent(alive: multiprocessing.connection.Connection) -> None:
    """Exit when the parent's end of ``alive`` closes (the parent died: no one is left to stop us)."""

    def watch() -> None:
        multiprocessing.connection.wait([alive])
        os._exit(1)

    threading.Thread(target=watch, name="clinideid-parent-watch", daemon=True).start()


def _serve(conn, alive, setup: WorkerSetup) -> None:
    """A worker's life: set up, limit its memory, then answer tasks until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent(alive)
    if setup.nice and hasattr(os, "nice"):
        os.nice(setup.nice)
    try:
        state = setup.init(setup.init_arg)
    except Exception as exc:
        conn.send(("fatal", type(exc).__name__, str(exc) if isinstance(exc, ClinideidError) else ""))
        return
    apply_memory_limit(setup.memory_limit)
    conn.send(("ready",))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        ticket, payload = message
        try:
            reply = Reply("done", setup.handler(state, payload))
        except DocumentTimeout as exc:
            reply = Reply("time", str(exc))
        except MemoryError:
            reply = Reply("memory", memory_message())
        except Exception as exc:  # a bug: its type only, its message may quote data
            reply = Reply("internal", type(exc).__name__)
        del payload
        try:
            conn.send((ticket, reply))
        except MemoryError:  # the result itself does not fit: pickling failed before anything was sent
            conn.send((ticket, Reply("memory", memory_message())))


# -- the parent side ------------------------------------------------------------------------------------------
class _Worker:
    """The parent's handle on one worker process."""

    def __init__(self, ctx, setup: WorkerSetup) -> None:
        self.conn, child = ctx.Pipe()
        alive_child, self.alive = ctx.Pipe(duplex=False)
        self.process = ctx.Process(
            target=_serve, args=(child, alive_child, setup), name="clinideid-worker", daemon=True
        )
        self.process.start()
        child.close()
        alive_child.close()
        self.ready = False
        self.ticket: int | None = None
        self.kill_at: float | None = None

    @property
    def idle(self) -> bool:
        return self.ready and self.ticket is None

    def stop(self, kill: bool) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                self.process.kill()
        self.process.join(timeout=EXIT_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=EXIT_SECONDS)
        self.conn.close()
        self.alive.close()


class WorkerPool:
    """``size`` worker processes running ``setup``; driven from one thread (not thread-safe)."""

    def __init__(self, setup: WorkerSetup, size: int) -> None:
        self.setup = setup
        self.size = max(1, size)
        self._ctx = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = [_Worker(self._ctx, setup) for _ in range(self.size)]
        self._tickets = 0
        self._failed: WorkerSetupError | None = None

    # -- starting --------------------------------------------------------------------------------------
    def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until every worker is set up; ``WorkerSetupError`` when one could not be."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not all(w.ready for w in self._workers):
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if left == 0.0:
                raise TimeoutError("the worker processes did not start in time")
            self._read(self._wait(left))
            if self._failed is not None:
                raise self._failed

    # -- tasks -----------------------------------------------------------------------------------------
    @property
    def idle(self) -> int:
        return sum(w.idle for w in self._workers)

    @property
    def busy(self) -> int:
        return sum(w.ticket is not None for w in self._workers)

    def submit(self, payload: Any, kill_after: float | None) -> int:
        """Send ``payload`` to an idle worker (there must be one); its ticket. The worker is killed if
        still busy ``kill_after`` seconds from now (None: never)."""
        worker = next(w for w in self._workers if w.idle)
        self._tickets += 1
        worker.ticket = self._tickets
        worker.kill_at = None if kill_after is None else time.monotonic() + kill_after
        with contextlib.suppress(OSError, ValueError):  # died while idle: poll() reports the task as died
            worker.conn.send((worker.ticket, payload))
        return worker.ticket

    def poll(self, timeout: float | None, wake: Iterable[Any] = ()) -> list[tuple[int, Reply]]:
        """Replies that came within ``timeout`` seconds (or until something in ``wake`` is readable);
        overdue workers are killed (``Reply("time")``), dead ones replaced (``Reply("died")``)."""
        if self._failed is not None:
            raise self._failed
        replies = self._read(self._wait(timeout, wake))
        now = time.monotonic()
        for worker in list(self._workers):
            if worker.ticket is not None and worker.kill_at is not None and now >= worker.kill_at:
                log.warning("a worker process ran past its time limit: killed and replaced")
                replies.append((worker.ticket, Reply("time")))
                self._replace(worker, kill=True)
        if self._failed is not None:
            raise self._failed
        return replies

    def cancel(self, ticket: int) -> None:
        """Stop the task ``ticket`` at once: its worker is killed and replaced (no reply comes)."""
        for worker in self._workers:
            if worker.ticket == ticket:
                self._replace(worker, kill=True)

    def close(self, kill: bool = False) -> None:
        """Stop every worker: let them finish (``kill=False``; they are idle by now) or kill them."""
        for worker in self._workers:
            worker.stop(kill or not worker.idle)
        self._workers = []

    # -- internals -------------------------------------------------------------------------------------
    def _wait(self, timeout: float | None, wake: Iterable[Any] = ()) -> list[Any]:
        kill_ats = [w.kill_at for w in self._workers if w.ticket is not None and w.kill_at is not None]
        if kill_ats:
            until_kill = max(0.0, min(kill_ats) - time.monotonic())
            timeout = until_kill if timeout is None else min(timeout, until_kill)
        waitables: list[Any] = [*wake]
        for w in self._workers:
            waitables += [w.conn, w.process.sentinel]
        return multiprocessing.connection.wait(waitables, timeout)

    def _read(self, ready: list[Any]) -> list[tuple[int, Reply]]:
        replies: list[tuple[int, Reply]] = []
        for worker in list(self._workers):
            if worker.conn not in ready and worker.process.sentinel not in ready:
                continue
            dead = False
            try:
                while worker.conn.poll():
                    message = worker.conn.recv()
                    if message[0] == "ready":
                        worker.ready = True
                    elif message[0] == "fatal":
                        self._failed = WorkerSetupError(message[1], message[2])
                    else:
                        ticket, reply = message
                        worker.ticket = worker.kill_at = None
                        replies.append((ticket, reply))
            except (EOFError, OSError):
                dead = True
            if dead or not worker.process.is_alive():
                if worker.ticket is not None:
                    replies.append((worker.ticket, Reply("died", worker.process.exitcode)))
                if self._failed is None:
                    self._replace(worker, kill=True)
        return replies

    def _replace(self, worker: _Worker, kill: bool) -> None:
        worker.stop(kill)
        index = self._workers.index(worker)
        self._workers[index] = _Worker(self._ctx, self.setup)


def describe_exit(code: int | None) -> str:
    """How a worker ended, in words (``-9``: killed by SIGKILL, as the out-of-memory killer does)."""
    if code is not None and code < 0:
        try:
            return f"ended by {signal.Signals(-code).name}"
        except ValueError:
            return f"ended by signal {-code}"
    return f"exited with code {code}"
