"""Bounding one document's time, and stopping a batch cleanly on SIGINT/SIGTERM.

The time limit uses ``SIGALRM`` (POSIX, main thread): the regex engines and Python code check for
signals while they run, so a stalled document raises ``DocumentTimeout`` — that document's error — and the
batch goes on. Where no alarm is available (another thread, Windows) documents run unbounded, and a
warning says so once.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

#: default limit: this many seconds, plus one second per ``CHARS_PER_SECOND_FLOOR`` characters
BASE_SECONDS = 60.0
CHARS_PER_SECOND_FLOOR = 5_000
#: once the limit is reached, the alarm fires again this often until the document is abandoned
REPEAT_SECONDS = 0.2
_warned = False


class DocumentTimeout(BaseException):
    """A document took longer than the per-document time limit.

    A ``BaseException`` (like ``KeyboardInterrupt``) so that no ``except Exception`` that keeps one bad span
    or one bad file from losing a document can swallow it: the batch runner catches it by name.
    """


def default_time_limit(n_chars: int) -> float:
    """A generous bound: far above any normal document's time, far below a stalled batch's."""
    return BASE_SECONDS + n_chars / CHARS_PER_SECOND_FLOOR


def _alarm_available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise ``DocumentTimeout`` in the body once ``seconds`` have passed (``None`` or 0: no limit)."""
    global _warned
    if not seconds:
        yield
        return
    if not _alarm_available():
        if not _warned:
            log.warning("no per-document time limit here (it needs SIGALRM in the main thread)")
            _warned = True
        yield
        return

    armed = True

    def on_alarm(signum, frame):
        if armed:
            raise DocumentTimeout(f"took longer than the time limit of {seconds:g} s; not written")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    # the alarm repeats: a handler that runs inside a finaliser (``__del__``, a GC callback) has its exception
    # printed and dropped by Python, so one alarm alone could be lost
    signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_SECONDS)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class StopRequest:
    """Turns the first SIGINT/SIGTERM into a request to stop after the current document; a second SIGINT
    interrupts at once (KeyboardInterrupt), as usual."""

    def __init__(self) -> None:
        self.signal_name: str | None = None
        self._previous: dict[int, object] = {}

    @property
    def requested(self) -> bool:
        return self.signal_name is not None

    def _handle(self, signum, frame) -> None:
        if self.signal_name is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal_name = signal.Signals(signum).name
        log.warning("%s received: finishing the current document, then stopping", self.signal_name)

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
