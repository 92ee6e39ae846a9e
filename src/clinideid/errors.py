"""One exception hierarchy for the whole package.

Messages say what is wrong and how to fix it. They never contain document text: callers pass
identifiers (file names, line numbers, label names, offsets), not content.
"""

from __future__ import annotations

import errno


class ClinideidError(Exception):
    """Root of every error clinideid raises on purpose; ``exit_code`` is what the command exits with."""

    exit_code = 2


class SpanError(ClinideidError, ValueError):
    """A span is malformed or does not fit its document (offsets, text mismatch)."""


class LabelError(ClinideidError, KeyError):
    """A label is unknown to the scheme or mapping in use."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class FormatError(ClinideidError, ValueError):
    """A corpus file could not be read or written in the requested format.

    ``path`` and ``line`` locate the problem; the message never quotes document text.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(f"{where}{message}")


class UnknownFormatError(ClinideidError, ValueError):
    """The requested corpus format is not registered."""


class ConfigError(ClinideidError, ValueError):
    """A configuration file or option is invalid."""


class ModelError(ClinideidError):
    """A model artifact is missing, incompatible or corrupt."""


class InputError(ClinideidError):
    """An input document cannot be processed (binary, wrong encoding, too large, empty)."""


class OutputWriteError(ClinideidError):
    """An output could not be written: the disk is full, the folder read-only or not writable...

    A problem of the environment, not of a document: the run stops (exit code 4) with what is done kept.
    The message names what was being written (never a document's file name) and how to go on.
    """

    exit_code = 4

    def __init__(self, what: str, error: OSError, then: str = "") -> None:
        self.errno = error.errno
        super().__init__(f"cannot write {what}: {_write_problem(error)}{then}")


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DENIED = {errno.EACCES, errno.EPERM}


def _write_problem(error: OSError) -> str:
    """What a failed write means and what to do, by its errno (the strerror otherwise)."""
    if error.errno in _FULL:
        return "no space left (disk full, quota or file size limit reached); free space"
    if error.errno == errno.EROFS:
        return "the output folder is on a read-only file system; make it writable"
    if error.errno in _DENIED:
        return "permission denied in the output folder; give this user write access to it"
    if error.errno == errno.ELOOP:
        return "a symbolic link stands where clinideid keeps its own files and is never followed; remove it"
    return f"{error.strerror or type(error).__name__}; fix the cause"
