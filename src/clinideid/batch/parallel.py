"""``--workers N``: de-identify in worker processes, write and commit in the parent, in input order.

Workers only compute (``batch.compute``); the parent names outputs, skips what an earlier run did, writes
every output and commits every journal line in input order, so a run with workers writes the same bytes as
one without (outputs, ``report.jsonl``; ``summary.json`` differs only in timings) and keeps the journal's
exactly-once and ``--resume`` guarantees.

- Workers are *spawned* (no fork of a process that may hold torch threads or locks) and build the pipeline
  once, in their initializer; documents travel in chunks, and at most ``IN_FLIGHT_PER_WORKER`` chunks per
  worker are out at a time, so memory stays bounded whatever the input's size.
- The per-document time limit runs in the worker (its main thread, where ``SIGALRM`` works).
- A worker that dies (killed, out of memory, a crash in native code) breaks the pool: a new pool is started
  and the documents that were out are retried one at a time; one that kills its worker again alone fails
  with a reason that names no content. A worker whose parent dies exits on its own.
- SIGINT/SIGTERM (handled by the parent's ``StopRequest``; workers ignore SIGINT): no new document is sent,
  the chunks already running finish and are committed in order, the rest is left for ``--resume``.
- The default count (``workers=0``) is one per core, but only once the input holds enough characters to
  pay for the workers' start-up; a small input runs in the parent as with ``--workers 1``.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from clinideid.batch.compute import Outcome, Task, compute
from clinideid.batch.inputs import InputItem
from clinideid.batch.limits import StopRequest
from clinideid.batch.runner import _finish, _Pending, _prepare, _Run
from clinideid.errors import ClinideidError, ConfigError, ModelError
from clinideid.pipeline import MultilingualDeidentifier

log = logging.getLogger(__name__)

#: a chunk holds at most this many documents, or this many characters (whichever comes first)
CHUNK_DOCS = 8
CHUNK_CHARS = 100_000
#: chunks out per worker: one running, one waiting in the queue so a worker never idles between chunks
IN_FLIGHT_PER_WORKER = 2
#: with the default worker count, one worker per this many characters found in the input (looked at up to
#: this much per core): a worker's start-up (spawn, imports, rule packs from the compiled-pattern cache the
#: command has just filled, loading models) costs about a second, as much as de-identifying some 250,000
#: characters with the English rules on one core
AUTO_CHARS_PER_WORKER = 300_000
#: how long the parent waits for results before it looks at stop requests again
POLL_SECONDS = 0.2
#: after a crash, how long to wait for the broken pool to fail its other futures
CRASH_SETTLE_SECONDS = 30.0
DIED = "the worker process de-identifying this document died (killed, out of memory or crashed); not written"


def default_workers() -> int:
    """Every core this process may use."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+: respects the CPU affinity mask
    if counter is not None:
        return max(1, counter() or 1)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


# -- the worker side ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PipelineSpec:
    """What a worker needs to build the parent's pipeline (built objects hold compiled packs and models)."""

    language: str
    key: bytes | None
    config: Any
    overrides: dict[str, Any]

    @classmethod
    def of(cls, deid: MultilingualDeidentifier) -> PipelineSpec:
        return cls(deid.language, deid.key, deid.config, deid.overrides)


_deid: MultilingualDeidentifier | None = None
_init_error: tuple[str, str] | None = None  # (class name, message) of a failed pipeline build


def _init_worker(spec: PipelineSpec) -> None:
    """Build the pipeline once per worker; a failure is reported with the first task (not as a broken pool,
    which would look like a crash)."""
    global _deid, _init_error
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    _watch_parent()
    try:
        deid = MultilingualDeidentifier(spec.language, spec.key, spec.config, spec.overrides)
        deid.build_all()
        _deid = deid
    except Exception as exc:  # reported to the parent, which raises it as a problem of the whole run
        _init_error = (type(exc).__name__, str(exc) if isinstance(exc, ClinideidError) else "")


def _watch_parent() -> None:
    """Exit when the parent dies (a kill -9 leaves no one to shut the pool down)."""
    parent = multiprocessing.parent_process()
    if parent is None or getattr(parent, "sentinel", None) is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="clinideid-parent-watch", daemon=True).start()


def _work(tasks: list[Task]) -> list[Outcome] | tuple[str, str]:
    """Compute a chunk; a problem of the whole run comes back as ``(class name, message)``."""
    if _init_error is not None:
        return _init_error
    assert _deid is not None
    try:
        return [compute(task, _deid) for task in tasks]
    except (ConfigError, ModelError) as exc:
        return (type(exc).__name__, str(exc))


def _fatal(error: tuple[str, str]) -> ClinideidError:
    name, message = error
    cls = ModelError if name == "ModelError" else ConfigError
    return cls(message or f"a worker process could not build the pipeline ({name})")


# -- the parent side ------------------------------------------------------------------------------------------
@dataclass(eq=False)
class _Chunk:
    tasks: list[Task]
    future: Future | None = None
    probation: bool = False  # sent alone, after a crash: a broken pool now is this document's doing

    @property
    def chars(self) -> int:
        return sum(len(t.doc.text) for t in self.tasks)


@dataclass
class _Slot:
    """One input in input order; committed when its chunk's result (if it needs one) is in."""

    pending: _Pending
    chunk: _Chunk | None = None
    index: int = 0


class _Pool:
    """A process pool that can be replaced after a crash."""

    def __init__(self, spec: PipelineSpec, workers: int) -> None:
        self.spec = spec
        self.workers = workers
        self.executor = self._start()

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(self.spec,),
        )

    def submit(self, chunk: _Chunk) -> None:
        try:
            chunk.future = self.executor.submit(_work, chunk.tasks)
        except BrokenProcessPool as exc:  # broken before this chunk went out: handled as a crash too
            chunk.future = Future()
            chunk.future.set_exception(exc)

    def restart(self) -> None:
        self.close(wait=False)
        self.executor = self._start()

    def close(self, wait: bool = True) -> None:
        """Shut the pool down; ``wait=False``: kill the workers instead of letting running chunks finish
        (a run ending on an error, a second SIGINT, a crash)."""
        if wait:
            self.executor.shutdown(wait=True, cancel_futures=True)
            return
        # ProcessPoolExecutor has no public way to stop running work before Python 3.14
        processes = list(getattr(self.executor, "_processes", {}).values())
        for process in processes:
            process.kill()
        self.executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(timeout=5)


def run_parallel(
    items: Iterable[InputItem], run: _Run, stop: StopRequest, progress: Callable[[], None] | None
) -> bool:
    """Process ``items`` with ``run.options.workers`` worker processes (0: the default); True when every
    input was read and handled, False when stopped by a signal."""
    iterator = iter(items)
    requested = run.options.workers
    ahead, exhausted = _look_ahead(iterator, requested)
    workers = _workers_for(ahead, exhausted, requested)
    source: Iterator[InputItem] = _chain(ahead, iterator)
    if workers <= 1:
        from clinideid.batch.runner import _process

        for item in source:
            if stop.requested:
                return False
            _process(item, run)
            if progress is not None:
                progress()
        return True
    log.info("de-identifying with %d worker processes", workers)
    return _Parallel(run, workers, stop, progress).run(source)


def _look_ahead(iterator: Iterator[InputItem], requested: int) -> tuple[list[InputItem], bool]:
    """With the default worker count, read enough of the input to tell whether workers pay off (at most
    ``AUTO_CHARS_PER_WORKER`` characters per core are held)."""
    if requested > 0:
        return [], False
    enough = default_workers() * AUTO_CHARS_PER_WORKER
    ahead: list[InputItem] = []
    chars = 0
    for item in iterator:
        ahead.append(item)
        chars += len(item.document.text) if item.document is not None else 0
        if chars >= enough:
            return ahead, False
    return ahead, True


def _workers_for(ahead: list[InputItem], exhausted: bool, requested: int) -> int:
    """``requested``, or (0) one per core, fewer when the whole input was seen and is small."""
    if requested > 0:
        return requested
    cores = default_workers()
    if not exhausted:
        return cores
    documents = [i.document for i in ahead if i.document is not None]
    chars = sum(len(d.text) for d in documents)
    return max(1, min(cores, len(documents), chars // AUTO_CHARS_PER_WORKER))


def _chain(ahead: list[InputItem], rest: Iterator[InputItem]) -> Iterator[InputItem]:
    yield from ahead
    yield from rest


class _Parallel:
    """The parent's loop: read and prepare inputs, send chunks, commit results in input order."""

    def __init__(
        self, run: _Run, workers: int, stop: StopRequest, progress: Callable[[], None] | None
    ) -> None:
        self.batch = run
        self.stop = stop
        self.progress = progress
        self.workers = workers
        self.max_chunks = workers * IN_FLIGHT_PER_WORKER
        self.max_slots = self.max_chunks * CHUNK_DOCS * 4  # inputs skipped or ignored need no chunk
        self.slots: deque[_Slot] = deque()
        self.forming: _Chunk | None = None
        self.out: list[_Chunk] = []  # submitted, result not yet committed
        self.probation: deque[_Chunk] = deque()  # waiting to be retried alone after a crash
        self.pool = _Pool(PipelineSpec.of(run.deid), workers)

    def run(self, source: Iterator[InputItem]) -> bool:
        finished = False
        try:
            exhausted = False
            while True:
                self._commit_ready()  # first, so that committed chunks make room for new ones at once
                if not self.stop.requested and not exhausted:
                    exhausted = self._fill(source)
                if self.stop.requested:
                    self._drain_on_stop()
                    return False
                if exhausted and self.forming is not None:
                    self._submit(self.forming)
                self._commit_ready()
                if not self.slots:
                    if exhausted:
                        finished = True
                        return True
                    continue
                self._wait_for_head()
        finally:
            # after a stop request the running chunks are already in: a clean shutdown is quick
            self.pool.close(wait=finished or self.stop.requested)

    # -- reading ----------------------------------------------------------------------------------------
    def _fill(self, source: Iterator[InputItem]) -> bool:
        """Prepare inputs until enough are out; True when the input is exhausted."""
        while len(self.out) < self.max_chunks and len(self.slots) < self.max_slots and not self._in_probation():
            if self.stop.requested:
                return False
            item = next(source, None)
            if item is None:
                return True
            pending = _prepare(item, self.batch)
            if pending.task is None:
                self.slots.append(_Slot(pending))
                continue
            if self.forming is None:
                self.forming = _Chunk([])
            chunk = self.forming
            self.slots.append(_Slot(pending, chunk, len(chunk.tasks)))
            chunk.tasks.append(pending.task)
            if len(chunk.tasks) >= CHUNK_DOCS or chunk.chars >= CHUNK_CHARS:
                self._submit(chunk)
        return False

    def _submit(self, chunk: _Chunk) -> None:
        if chunk is self.forming:
            self.forming = None
        self.pool.submit(chunk)
        self.out.append(chunk)

    # -- committing -------------------------------------------------------------------------------------
    def _commit_ready(self) -> None:
        """Commit, in input order, every leading input whose result is in."""
        while self.slots:
            slot = self.slots[0]
            outcome = None
            if slot.chunk is not None:
                future = slot.chunk.future
                if future is None or not future.done():
                    return
                results = self._results(slot.chunk)
                if results is None:  # the pool broke: the chunk is being retried
                    return
                outcome = results[slot.index]
            self.slots.popleft()
            _finish(slot.pending, self.batch, outcome)
            if slot.chunk is not None and slot.index == len(slot.chunk.tasks) - 1:
                self.out.remove(slot.chunk)
            if self.progress is not None:
                self.progress()

    def _results(self, chunk: _Chunk) -> list[Outcome] | None:
        assert chunk.future is not None
        try:
            results = chunk.future.result()
        except BrokenProcessPool:
            self._after_crash()
            return None
        if isinstance(results, tuple):
            raise _fatal(results)
        return results

    def _wait_for_head(self) -> None:
        head = self.slots[0].chunk
        assert head is not None
        if head.future is None and (head is self.forming or head in self.probation):
            self._send_next(head)
        pending = [c.future for c in self.out if c.future is not None and not c.future.done()]
        if pending:
            wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)

    def _send_next(self, head: _Chunk) -> None:
        if head is self.forming:
            self._submit(head)
            return
        # probation: one document at a time, so a crash points at its document
        if any(c.future is not None and not c.future.done() for c in self.out):
            return
        chunk = self.probation.popleft()
        assert chunk is head
        self.pool.submit(chunk)

    # -- crashes ----------------------------------------------------------------------------------------
    def _after_crash(self) -> None:
        """A worker died: restart the pool; fail the document sent alone, retry the others alone."""
        log.warning("a worker process died; restarting the workers and retrying its documents one by one")
        sent = [c.future for c in self.out if c.future is not None]
        wait(sent, timeout=CRASH_SETTLE_SECONDS)  # a broken pool fails all its futures, not all at once
        lost = [c for c in self.out if c.future is not None and not _succeeded(c.future)]
        culprit = next((c for c in lost if c.probation), None)
        self.pool.restart()
        if culprit is not None:
            culprit.future = _done([Outcome(error=DIED)])
            lost.remove(culprit)
        # the other lost chunks become one-document chunks, retried in input order, each alone
        retry: list[_Chunk] = []
        for slot in self.slots:
            if slot.chunk is not None and slot.chunk in lost:
                single = _Chunk([slot.chunk.tasks[slot.index]], probation=True)
                slot.chunk, slot.index = single, 0
                retry.append(single)
        self.out = [c for c in self.out if c not in lost] + retry
        self.probation.extend(retry)

    def _in_probation(self) -> bool:
        return any(c.probation and (c.future is None or not c.future.done()) for c in self.out)

    # -- stopping ---------------------------------------------------------------------------------------
    def _drain_on_stop(self) -> None:
        """Finish what is running, commit the leading inputs whose results are in, drop the rest."""
        self.forming = None
        self.probation.clear()
        for chunk in self.out:
            if chunk.future is not None:
                chunk.future.cancel()
        running = [c.future for c in self.out if c.future is not None and not c.future.cancelled()]
        wait(running)
        while self.slots:
            slot = self.slots[0]
            outcome = None
            if slot.chunk is not None:
                future = slot.chunk.future
                if future is None or future.cancelled() or future.exception() is not None:
                    break
                results = future.result()
                if isinstance(results, tuple):
                    break
                outcome = results[slot.index]
            self.slots.popleft()
            _finish(slot.pending, self.batch, outcome)
            if self.progress is not None:
                self.progress()
        self.slots.clear()


def _succeeded(future: Future) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


def _done(value: Any) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future
