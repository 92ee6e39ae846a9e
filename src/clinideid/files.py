"""Writing files without following links and without leaving half-written results.

Every writer of an output folder goes through here:

- ``atomic_file``/``write_atomic``: a new temporary file in a folder reached from the target's folder
  without links (``O_NOFOLLOW`` at every step below it), then a rename over the target: readers see the old
  file or the new one, never a part, and a failed write leaves no temporary file behind;
- ``AppendFile``: a file grown by whole records (a journal, a JSONL output); a record that cannot be written
  completely (disk full) is cut off again, so the file always ends after a whole record;
- ``open_read``, ``real_dir``: reading a file and making a folder, refusing a link where they stand.

A link met where a file or folder of this kind belongs is an ``OSError`` with ``errno.ELOOP`` (or
``ENOTDIR``): the link is never followed, so nothing lands outside the folder it was planted in.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW


def is_link_or_odd(path: Path, want_dir: bool) -> bool:
    """Whether ``path`` exists as something other than a real folder (``want_dir``) or regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    return not (stat.S_ISDIR(st.st_mode) if want_dir else stat.S_ISREG(st.st_mode))


def _open_dir_below(base: Path, parts: tuple[str, ...], create: bool) -> int:
    """A descriptor of ``base/parts...``, every part opened without following a link (made when missing)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):  # a link or a file stands there
                    raise OSError(
                        errno.ELOOP, "a link or a file stands where a folder belongs", part
                    ) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _split_below(folder: Path, base: Path) -> tuple[Path, tuple[str, ...]]:
    """``folder`` as ``base`` plus the parts below it; ``base`` is trusted as given (links allowed)."""
    folder, base = Path(os.path.abspath(folder)), Path(os.path.abspath(base))
    if folder == base or not folder.is_relative_to(base):
        return folder, ()
    return base, folder.relative_to(base).parts


def real_dir(folder: Path, base: Path) -> None:
    """Make ``folder`` (and the folders between ``base`` and it) unless it exists; ``OSError`` (``ELOOP``)
    when a link or a file stands anywhere below ``base``."""
    start, parts = _split_below(folder, base)
    os.close(_open_dir_below(start, parts, create=True))


@contextlib.contextmanager
def atomic_file(path: Path, tmp_dir: Path, durable: bool = False) -> Iterator[BinaryIO]:
    """A binary file whose content replaces ``path`` when the block ends without an exception.

    The temporary file is made in ``tmp_dir``, which must lie at or below ``path``'s folder: every folder
    from there down to ``tmp_dir`` is opened without following links (and made if missing). ``durable``
    syncs the file to disk before the rename.
    """
    common = Path(os.path.commonpath([os.path.abspath(path.parent), os.path.abspath(tmp_dir)]))
    start, parts = _split_below(tmp_dir, common)
    dir_fd = _open_dir_below(start, parts, create=True)
    name = f"{os.getpid()}-{time.monotonic_ns()}.part"
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                yield fh
                fh.flush()
                if durable:
                    os.fsync(fh.fileno())
            os.replace(name, path, src_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


def write_atomic(path: Path, data: bytes, tmp_dir: Path, durable: bool = False) -> None:
    """Write ``data`` to ``path`` through ``atomic_file``."""
    with atomic_file(path, tmp_dir, durable) as fh:
        fh.write(data)


def open_read(path: Path) -> BinaryIO:
    """``path`` opened for reading; ``OSError`` (``ELOOP``) when it is a link."""
    return os.fdopen(os.open(path, os.O_RDONLY | _NOFOLLOW), "rb")


class AppendFile:
    """A file (never a link) grown by whole records, unbuffered: ``size`` is always the end of the last
    record written completely."""

    def __init__(self, path: Path, durable: bool = False) -> None:
        self.durable = durable
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW, 0o666)
        self.size = os.lseek(self._fd, 0, os.SEEK_END)

    def truncate(self, size: int) -> None:
        os.ftruncate(self._fd, size)
        self.size = size

    def append(self, data: bytes) -> int:
        """Write one record; the file's size after it. On ``OSError`` the part written is cut off again."""
        start = self.size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
            if self.durable:
                os.fsync(self._fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)
            raise
        self.size = start + len(data)
        return self.size

    def sync(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
