"""De-identify in worker processes, write and commit in the parent, in input order.

Every document is computed in a worker process (``batch.workers``), ``--workers 1`` included: reading the
file (DOCX, PDF, image, OCR), de-identifying, the audit and rendering the document in its own format all
run there, under the document's time limit and the worker's memory limit, so a hostile document can
neither stall nor exhaust the process that owns the run. The parent names outputs, skips what an earlier run
did, writes every output and commits every journal line in input order, so any number of workers writes
the same bytes (outputs, ``report.jsonl``; ``summary.json`` differs only in timings) and keeps the journal's
exactly-once and ``--resume`` guarantees.

- Workers build the pipeline once, when they start; the run touches its output folder only once they are
  set up, so a bad config or model is found first.
- Each worker holds one document at a time; at most ``QUEUED_PER_WORKER`` more per worker wait, prepared,
  and at most ``SLOTS_PER_WORKER`` inputs per worker are held between reading and committing, so memory
  stays bounded whatever the input's size.
- A document over its time limit fails (the alarm in the worker, or the parent kills the worker past the
  limit and a grace, and starts another); one over the memory limit fails; the batch goes on.
- A worker that dies (killed, a native crash) is replaced and its document retried once; dying again, it
  fails alone with a reason that names no content. A worker whose parent dies exits on its own.
- SIGINT/SIGTERM (handled by the parent's ``StopRequest``; workers ignore SIGINT): no new document is sent,
  the ones already running finish and are committed in order, the rest is left for ``--resume``.
- The default count (``workers=0``) is one per core, but only once the input holds enough characters to
  pay for the workers' start-up; a small input gets one worker.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from clinideid.batch.compute import Outcome, Task, compute
from clinideid.batch.inputs import InputItem
from clinideid.batch.limits import (
    DEFAULT_MEMORY_LIMIT,
    MEMORY_HINT,
    StopRequest,
    format_size,
    kill_after,
    time_message,
)
from clinideid.batch.runner import _finish, _Pending, _prepare, _Run
from clinideid.batch.workers import Reply, WorkerPool, WorkerSetup, WorkerSetupError, describe_exit
from clinideid.document import Document
from clinideid.errors import ClinideidError, ConfigError, ModelError
from clinideid.pipeline import MultilingualDeidentifier

log = logging.getLogger(__name__)

#: prepared documents waiting for a worker, per worker (so a worker never idles between documents)
QUEUED_PER_WORKER = 2
#: inputs held between reading and committing, per worker (committing waits for the slowest in order)
SLOTS_PER_WORKER = 64
#: with the default worker count, one worker per this many characters found in the input (looked at up to
#: this much per core): a worker's start-up (spawn, imports, rule packs from the compiled-pattern cache,
#: loading models) costs about a second, as much as de-identifying some 250,000 characters with the
#: English rules on one core
AUTO_CHARS_PER_WORKER = 300_000
#: how long the parent waits for results before it looks at stop requests again
POLL_SECONDS = 0.2
#: a worker de-identifies this once per language when it starts (no PHI)
WARM_UP_TEXT = "Seen today in clinic; follow-up in two weeks."


def default_workers() -> int:
    """Every core this process may use."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+: respects the CPU affinity mask
    if counter is not None:
        return max(1, counter() or 1)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def died_message(exitcode: int | None, memory_limit: int | None) -> str:
    """A document whose worker died twice (no content: how it ended and what to try)."""
    limit = f" (the memory limit is {format_size(memory_limit)}: {MEMORY_HINT})" if memory_limit else ""
    return (
        f"the worker process de-identifying this document died ({describe_exit(exitcode)}: killed, out of "
        f"memory or crashed); not written{limit}"
    )


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


def _init_worker(spec: PipelineSpec) -> MultilingualDeidentifier:
    """The worker's pipelines: a run in one language builds and warms its pipeline now (once per worker);
    with ``--language auto`` each language's pipeline is built when its first document comes (``_work``),
    so a run of English notes does not load six languages' models in every worker. The parent has built
    every pipeline the run can need before starting workers, so a bad config or model has failed by then."""
    deid = MultilingualDeidentifier(spec.language, spec.key, spec.config, spec.overrides)
    languages = deid.languages_needed()
    if len(languages) == 1:
        _ready(deid, languages[0])
    return deid


def _ready(deid: MultilingualDeidentifier, language: str) -> None:
    """Build and warm up the pipeline of ``language`` unless it is: what is built on first use must not
    count against a document's time limit."""
    if not deid.is_built(language):
        compute(Task(Document("warm-up", WARM_UP_TEXT, language)), deid)


def _work(deid: MultilingualDeidentifier, task: Task) -> Outcome | tuple[str, str]:
    """Compute one document; a problem of the whole run comes back as ``(class name, message)``. The
    pipeline of a note's language is made ready first, outside its time limit (a document file's language
    is known only once it is read, inside the limit)."""
    try:
        if task.doc is not None and not deid.all_built():  # identifying the language is then done once
            _ready(deid, deid.language_of(task.doc))
        return compute(task, deid)
    except (ConfigError, ModelError) as exc:
        return (type(exc).__name__, str(exc))


def _fatal(name: str, message: str) -> ClinideidError:
    cls = ModelError if name == "ModelError" else ConfigError
    return cls(message or f"a worker process could not build the pipeline ({name})")


# -- the parent side ------------------------------------------------------------------------------------------
def plan_workers(items: Iterable[InputItem], requested: int) -> tuple[Iterator[InputItem], int]:
    """The inputs (any read ahead put back in front) and how many workers to start: ``requested``, or
    (0) one per core, fewer when the whole input was seen and is small."""
    iterator = iter(items)
    ahead, exhausted = _look_ahead(iterator, requested)
    return _chain(ahead, iterator), _workers_for(ahead, exhausted, requested)


def start_workers(deid: MultilingualDeidentifier, workers: int, memory_limit: int | None) -> WorkerPool:
    """Start ``workers`` processes and wait until each has built the pipeline; a bad config or model is
    raised here (``ConfigError``/``ModelError``). ``memory_limit``: None for the default, 0 for none."""
    limit = DEFAULT_MEMORY_LIMIT if memory_limit is None else memory_limit
    if workers > 1:
        log.info("de-identifying with %d worker processes", workers)
    pool = WorkerPool(WorkerSetup(_init_worker, PipelineSpec.of(deid), _work, limit), workers)
    try:
        pool.wait_ready()
    except WorkerSetupError as exc:
        pool.close(kill=True)
        raise _fatal(exc.name, exc.message) from None
    except BaseException:
        pool.close(kill=True)
        raise
    return pool


def run_parallel(
    items: Iterable[InputItem], run: _Run, stop: StopRequest, progress: Callable[[], None] | None
) -> bool:
    """Process ``items`` with ``run.pool``; True when every input was read and handled, False when stopped
    by a signal."""
    return _Parallel(run, run.pool, stop, progress).run(iter(items))


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


@dataclass(eq=False)
class _Slot:
    """One input in input order; committed once ``done`` (no task, or its outcome is in)."""

    pending: _Pending
    done: bool
    outcome: Outcome | None = None
    retried: bool = False


class _Parallel:
    """The parent's loop: read and prepare inputs, send documents, commit results in input order.
    ``prepare`` and ``finish`` are the parent's two halves of each input's work (by default naming and
    skipping, then writing and committing; the first pass of ``batch.patients`` has its own)."""

    def __init__(
        self,
        run: _Run,
        pool: WorkerPool,
        stop: StopRequest,
        progress: Callable[[], None] | None,
        prepare: Callable[[InputItem, _Run], _Pending] = _prepare,
        finish: Callable[[_Pending, _Run, Outcome | None], None] = _finish,
    ) -> None:
        self.batch = run
        self.pool = pool
        self.stop = stop
        self.progress = progress
        self.prepare = prepare
        self.finish = finish
        self.max_queued = pool.size * QUEUED_PER_WORKER
        self.max_slots = pool.size * SLOTS_PER_WORKER
        self.slots: deque[_Slot] = deque()
        self.queue: deque[_Slot] = deque()  # waiting for a worker, in input order (a retry first)
        self.out: dict[int, _Slot] = {}  # ticket -> the slot a worker is computing

    def run(self, source: Iterator[InputItem]) -> bool:
        exhausted = False
        while True:
            self._collect(0)
            if not self.stop.requested and not exhausted:
                exhausted = self._fill(source)
            if self.stop.requested:
                self._drain_on_stop()
                return False
            self._dispatch()
            self._commit_ready()
            if not self.slots:
                if exhausted:
                    return True
                continue
            self._collect(POLL_SECONDS)

    # -- reading and sending ----------------------------------------------------------------------------
    def _fill(self, source: Iterator[InputItem]) -> bool:
        """Prepare inputs until enough wait; True when the input is exhausted."""
        while len(self.slots) < self.max_slots and len(self.queue) < self.max_queued:
            if self.stop.requested:
                return False
            item = next(source, None)
            if item is None:
                return True
            pending = self.prepare(item, self.batch)
            slot = _Slot(pending, done=pending.task is None)
            self.slots.append(slot)
            if pending.task is not None:
                self.queue.append(slot)
                self._dispatch()
        return False

    def _dispatch(self) -> None:
        while self.queue and self.pool.idle:
            slot = self.queue.popleft()
            task = slot.pending.task
            assert task is not None
            self.out[self.pool.submit(task, kill_after(task.limit))] = slot

    # -- results ----------------------------------------------------------------------------------------
    def _collect(self, timeout: float) -> None:
        try:
            replies = self.pool.poll(timeout)
        except WorkerSetupError as exc:  # a replacement worker could not build the pipeline
            raise _fatal(exc.name, exc.message) from None
        for ticket, reply in replies:
            slot = self.out.pop(ticket)
            outcome = self._outcome(slot, reply)
            if outcome is not None:
                slot.outcome, slot.done = outcome, True

    def _outcome(self, slot: _Slot, reply: Reply) -> Outcome | None:
        """The document's outcome from its worker's reply; None when it goes back to the queue."""
        task = slot.pending.task
        assert task is not None
        if reply.kind == "done":
            if isinstance(reply.value, tuple):
                raise _fatal(*reply.value)
            return reply.value
        if reply.kind == "time":
            return Outcome(error=reply.value or time_message(task.limit or 0))
        if reply.kind == "memory":
            return Outcome(error=reply.value)
        if reply.kind == "internal":
            return Outcome(internal=reply.value)
        if not slot.retried:  # died: perhaps not of this document (killed from outside): once more, alone
            log.warning("a worker process died (%s); retrying its document", describe_exit(reply.value))
            slot.retried = True
            self.queue.appendleft(slot)
            return None
        return Outcome(error=died_message(reply.value, self.pool.setup.memory_limit))

    def _commit_ready(self) -> None:
        """Commit, in input order, every leading input whose result is in."""
        while self.slots and self.slots[0].done:
            slot = self.slots.popleft()
            self.finish(slot.pending, self.batch, slot.outcome)
            if self.progress is not None:
                self.progress()

    # -- stopping ---------------------------------------------------------------------------------------
    def _drain_on_stop(self) -> None:
        """Finish what is running, commit the leading inputs whose results are in, drop the rest."""
        self.queue.clear()
        while self.out:
            self._collect(POLL_SECONDS)
            self.queue.clear()  # a retry is not sent any more
        self._commit_ready()
        self.slots.clear()
