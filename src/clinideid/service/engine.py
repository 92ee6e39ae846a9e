"""Computing requests in worker processes, each request within the time limit and the memory limit.

Requests compute in ``workers`` worker processes (``batch.workers``, the batch runner's mechanism), one
request per worker at a time; at most ``queue`` more wait, and more get 503. A request past the time limit
gets 504 *and* its work stops: the alarm in the worker first, and a worker that does not stop is killed
and replaced. One dispatcher thread owns the workers; the event loop only hands requests over and awaits
them, so ``/health`` answers whatever the requests do. Each worker keeps its own built pipelines.

``pipeline`` checks a request's language and overrides here (a ``ConfigError`` is the request's 422)
without building anything; ``run`` computes light work that needs this process's state (the review store)
in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import HTTPException

from clinideid.batch.limits import DEFAULT_MEMORY_LIMIT, format_size
from clinideid.batch.workers import Reply, WorkerPool, WorkerSetup, WorkerSetupError
from clinideid.pipeline import MultilingualDeidentifier
from clinideid.service import work
from clinideid.service.settings import ServiceSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

#: pipelines kept (checked, not built) for validating requests here
CACHE_SIZE = 16
#: a worker still busy this long past the request time limit is killed (its alarm had its chance)
GRACE_SECONDS = 0.5
#: how long the dispatcher waits for a reply before it looks at new and cancelled requests again
POLL_SECONDS = 1.0
#: workers compute at a lower CPU priority than the server, which must answer probes whatever they do
WORKER_NICE = 5


class Engine:
    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self._threads = self._new_threads()
        self._slots = threading.BoundedSemaphore(settings.workers + settings.queue)
        self._cache: OrderedDict[str, MultilingualDeidentifier] = OrderedDict()
        self._lock = threading.Lock()
        self._dispatcher: _Dispatcher | None = None

    def _new_threads(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=self.settings.workers, thread_name_prefix="clinideid-req")

    @property
    def memory_limit(self) -> int:
        limit = self.settings.memory_limit
        return DEFAULT_MEMORY_LIMIT if limit is None else limit

    def open(self) -> None:
        """Start the worker processes (again, after a shutdown); ``warm`` waits until they are ready."""
        if self._threads._shutdown:
            self._threads = self._new_threads()
        if self._dispatcher is None or self._dispatcher.closed:
            config = work.WorkerConfig(self.settings.key, self.settings.language)
            setup = WorkerSetup(work.init, config, work.handle, self.memory_limit, WORKER_NICE)
            self._dispatcher = _Dispatcher(setup, self.settings.workers, self.settings.time_limit)

    def warm(self) -> None:
        """Wait until every worker has built the default pipeline (``/ready`` answers once this is done)."""
        self.open()
        assert self._dispatcher is not None
        self._dispatcher.wait_ready()

    def pipeline(self, language: str | None, overrides: dict[str, Any] | None) -> MultilingualDeidentifier:
        """The pipeline for this language and these overrides, checked (``ConfigError`` when they are
        invalid) but built only when used here: requests compute in the workers, which build their own."""
        lang = language or self.settings.language
        cache_key = json.dumps([lang, overrides or {}], sort_keys=True)
        with self._lock:
            deid = self._cache.get(cache_key)
            if deid is not None:
                self._cache.move_to_end(cache_key)
                return deid
        deid = MultilingualDeidentifier(lang, self.settings.key, None, overrides or None)
        with self._lock:
            self._cache[cache_key] = deid
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return deid

    async def compute(self, task: Any) -> Any:
        """``task`` (``service.work``) in a worker process: 503 when the queue is full, 504 past the time
        limit (the work stopped), the task's own refusal as its status."""
        if not self._slots.acquire(blocking=False):
            raise HTTPException(503, "the server is busy; retry later", headers={"Retry-After": "1"})
        try:
            if self._dispatcher is None or self._dispatcher.closed:
                raise HTTPException(503, "the server is shutting down")
            future = self._dispatcher.submit(task)
            reply = await asyncio.wrap_future(future)  # cancelled (client gone): the work is stopped too
        finally:
            self._slots.release()
        return self._answer(reply)

    def _answer(self, reply: Reply) -> Any:
        if reply.kind == "done":
            if isinstance(reply.value, work.Rejected):
                raise HTTPException(reply.value.status, reply.value.message)
            return reply.value
        if reply.kind == "time":
            raise HTTPException(
                504,
                f"the request ran past the time limit of {self.settings.time_limit:g} s; its work was stopped",
            )
        if reply.kind == "memory":
            raise HTTPException(
                413,
                f"the request needs more memory than the limit of {format_size(self.memory_limit)} per "
                "worker; send smaller documents (or raise the server's --memory-limit)",
            )
        if reply.kind == "unavailable":
            raise HTTPException(503, reply.value, headers={"Retry-After": "1"})
        if reply.kind == "died":
            log.error(
                "the worker process computing a request died (exit code %s); it was replaced", reply.value
            )
            raise HTTPException(
                500, "the worker process computing the request died (out of memory or crashed); not computed"
            )
        log.error("a request failed in its worker process (%s %s)", reply.kind, reply.value)
        raise HTTPException(500, "internal error while computing the request; see the server log")

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a thread of this process, for light work that needs its state (the review store):
        503 when the queue is full, 504 past the time limit (the thread cannot be stopped: keep it light)."""
        if not self._slots.acquire(blocking=False):
            raise HTTPException(503, "the server is busy; retry later", headers={"Retry-After": "1"})

        def task() -> T:
            try:
                return fn()
            finally:
                self._slots.release()

        try:
            future = self._threads.submit(task)
        except RuntimeError:
            self._slots.release()
            raise HTTPException(503, "the server is shutting down") from None
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.settings.time_limit)
        except TimeoutError:
            raise HTTPException(
                504, f"the request ran past the time limit of {self.settings.time_limit:g} s"
            ) from None

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        if self._dispatcher is not None:
            self._dispatcher.close()


@dataclass(eq=False)
class _Job:
    task: Any
    future: Future


class _Dispatcher:
    """One thread owning the worker pool: sends waiting requests to idle workers, resolves futures with
    the workers' replies, kills the worker of a request that was given up (client gone)."""

    def __init__(self, setup: WorkerSetup, workers: int, limit: float) -> None:
        self.limit = limit
        self.closed = False
        self._pool = WorkerPool(setup, workers)
        self._lock = threading.Lock()
        self._waiting: deque[_Job] = deque()
        self._running: dict[int, _Job] = {}
        self._wake_r, self._wake_w = socket.socketpair()  # a closed socket refuses writes (no fd reuse)
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._ready = threading.Event()
        self._setup_error: WorkerSetupError | None = None
        self._thread = threading.Thread(target=self._loop, name="clinideid-dispatch", daemon=True)
        self._thread.start()

    def wait_ready(self) -> None:
        self._ready.wait()
        if self._setup_error is not None:
            raise RuntimeError(f"the worker processes could not start ({self._setup_error.name})")

    def submit(self, task: Any) -> Future:
        future: Future = Future()
        with self._lock:
            if self.closed:
                raise HTTPException(503, "the server is shutting down")
            self._waiting.append(_Job(task, future))
        future.add_done_callback(lambda _: self._wake())
        self._wake()
        return future

    def close(self) -> None:
        with self._lock:
            self.closed = True
        self._wake()
        self._thread.join(timeout=30)

    # -- the dispatcher thread ----------------------------------------------------------------------------
    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (a wake-up is pending anyway) or closed
            self._wake_w.send(b"x")

    def _loop(self) -> None:
        try:
            self._pool.wait_ready()
        except WorkerSetupError as exc:
            log.error("the worker processes could not build the pipeline (%s)", exc.name)
            self._setup_error = exc
        self._ready.set()
        try:
            while not self.closed and self._setup_error is None:
                self._send()
                try:
                    replies = self._pool.poll(POLL_SECONDS, wake=[self._wake_r])
                except WorkerSetupError as exc:
                    log.error("a replacement worker process could not build the pipeline (%s)", exc.name)
                    break
                self._drain_wake()
                with self._lock:
                    for ticket, reply in replies:
                        job = self._running.pop(ticket, None)
                        if job is not None:
                            _resolve(job.future, reply)
        finally:
            self._shut_down()

    def _send(self) -> None:
        """Stop the work of given-up requests, send waiting ones to idle workers (the lock guards the
        queues only: the pool is this thread's alone, and the event loop must never wait on it)."""
        with self._lock:
            given_up = [ticket for ticket, job in self._running.items() if job.future.cancelled()]
            for ticket in given_up:
                del self._running[ticket]
        for ticket in given_up:
            self._pool.cancel(ticket)
        kill_after = self.limit + GRACE_SECONDS if self.limit else None
        while self._pool.idle:
            with self._lock:
                job = self._waiting.popleft() if self._waiting else None
            if job is None:
                return
            if job.future.cancelled():
                continue
            ticket = self._pool.submit((job.task, self.limit), kill_after)
            with self._lock:
                self._running[ticket] = job

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:  # nothing more to read
            pass

    def _shut_down(self) -> None:
        with self._lock:
            self.closed = True
            jobs = [*self._waiting, *self._running.values()]
            self._waiting.clear()
            self._running.clear()
        for job in jobs:
            _resolve(job.future, Reply("unavailable", "the server is shutting down"))
        self._pool.close(kill=True)
        self._wake_r.close()
        self._wake_w.close()


def _resolve(future: Future, reply: Reply) -> None:
    with contextlib.suppress(InvalidStateError):  # given up meanwhile
        future.set_result(reply)
