"""Bounding one document's time and memory, and stopping a batch cleanly on SIGINT/SIGTERM.

The time limit uses ``SIGALRM`` (POSIX, main thread): the regex engines and Python code check for
signals while they run, so a stalled document raises ``DocumentTimeout`` — that document's error — and the
batch goes on. Where no alarm is available (another thread, Windows) documents run unbounded, and a
warning says so once. The alarm is the first line only: worker processes (``batch.workers``) are also
killed from outside once past the limit, for code that never gives the alarm a chance.

The memory limit is an address-space limit (``RLIMIT_AS``) that a worker process sets on itself once its
pipeline is loaded: an allocation past it fails (``MemoryError``, that document's error) instead of
growing until the system's out-of-memory killer picks a process, perhaps the one running the batch.
"""

from __future__ import annotations

import logging
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from clinideid.errors import ConfigError

log = logging.getLogger(__name__)

#: default limit: this many seconds, plus one second per ``CHARS_PER_SECOND_FLOOR`` characters
BASE_SECONDS = 60.0
CHARS_PER_SECOND_FLOOR = 5_000
#: once the limit is reached, the alarm fires again this often until the document is abandoned
REPEAT_SECONDS = 0.2
#: a worker still busy this long after its task's time limit (plus a tenth of the limit) is killed from outside
GRACE_SECONDS = 2.0
#: how much address space a worker may add, once its pipeline is loaded, for one document
DEFAULT_MEMORY_LIMIT = 4 * 1024**3
TIME_HINT = "raise --time-limit (0: no limit) to process it"
MEMORY_HINT = "raise --memory-limit (0: no limit) to process it"
_warned = False
_memory_limit: int | None = None  # what ``apply_memory_limit`` set in this process


class DocumentTimeout(BaseException):
    """A document took longer than the per-document time limit.

    A ``BaseException`` (like ``KeyboardInterrupt``) so that no ``except Exception`` that keeps one bad span
    or one bad file from losing a document can swallow it: the batch runner catches it by name.
    """


def default_time_limit(n_chars: int) -> float:
    """A generous bound: far above any normal document's time, far below a stalled batch's."""
    return BASE_SECONDS + n_chars / CHARS_PER_SECOND_FLOOR


def time_message(seconds: float) -> str:
    """The error of a document stopped at the time limit (no content: the limit and how to raise it)."""
    return f"took longer than the time limit of {seconds:g} s; not written; {TIME_HINT}"


def kill_after(seconds: float | None) -> float | None:
    """When a worker still busy with a task limited to ``seconds`` is killed: the alarm had its chance."""
    return None if not seconds else seconds + GRACE_SECONDS + seconds / 10


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(value: str | int, option: str) -> int:
    """Bytes from ``4G``, ``512M``, ``1.5GB``, ``300k`` or a plain number (binary units); 0 means no limit."""
    if isinstance(value, int):
        number = value
    else:
        m = _SIZE.fullmatch(value.strip())
        if m is None:
            raise ConfigError(f"{option} must be a size such as 4G, 512M or 0 (no limit)")
        number = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if number < 0:
        raise ConfigError(f"{option} must be a size such as 4G, 512M or 0 (no limit)")
    return number


def format_size(n: int) -> str:
    for unit, size in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _address_space() -> int:
    """This process's address space now (Linux ``/proc``; 0 where unknown)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def apply_memory_limit(extra: int | None) -> None:
    """Limit this process's address space to what it holds now plus ``extra`` bytes (None or 0: no limit).

    Called by a worker once its pipeline is loaded, so the limit bounds what one document may take. Child
    processes (Tesseract, antiword) inherit it.
    """
    global _memory_limit
    if not extra:
        return
    try:
        import resource
    except ImportError:  # not POSIX
        log.warning("no memory limit here (it needs RLIMIT_AS)")
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = _address_space() + extra
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft == resource.RLIM_INFINITY or wanted < soft:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
        except (ValueError, OSError):  # a system that does not support it
            log.warning("no memory limit here (RLIMIT_AS could not be set)")
            return
    _memory_limit = extra


def memory_message() -> str:
    """The error of a document that ran out of memory (under this process's limit, if it has one)."""
    if _memory_limit:
        return (
            f"needed more memory than the limit of {format_size(_memory_limit)}; not written; {MEMORY_HINT}"
        )
    return "ran out of memory; not written"


_fired: str | None = None  # the message of the time limit that fired in the body running now


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

    global _fired
    armed = True
    _fired = None

    def on_alarm(signum, frame):
        global _fired
        if armed:
            _fired = time_message(seconds)
            raise DocumentTimeout(_fired)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    # the alarm repeats: a handler that runs inside a finaliser (``__del__``, a GC callback) has its exception
    # printed and dropped by Python, so one alarm alone could be lost
    signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_SECONDS)
    try:
        yield
    finally:
        armed = False
        _fired = None
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def raise_if_timed_out() -> None:
    """Raise ``DocumentTimeout`` when the current time limit has fired although the body caught something
    else: a reader that calls back into Python from C turns the alarm's exception into its own
    (``ctypes.ArgumentError``), which must still read as the time limit, not as a malformed file."""
    if _fired is not None:
        raise DocumentTimeout(_fired)


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
