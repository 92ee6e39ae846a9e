"""One exception hierarchy for the whole package.

Messages say what is wrong and how to fix it. They never contain document text: callers pass
identifiers (file names, line numbers, label names, offsets), not content.
"""

from __future__ import annotations


class ClinideidError(Exception):
    """Root of every error clinideid raises on purpose."""


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
