"""The codec contract and registry.

A codec reads a corpus (a file or a folder, depending on the format) into ``Document`` objects and writes
documents back. Codecs register themselves by name with ``@register``; callers use ``get_codec(name)``,
``read_corpus`` and ``write_corpus``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from clinideid.document import Document
from clinideid.errors import FormatError, UnknownFormatError
from clinideid.registry import Registry


@dataclass
class ReadReport:
    """Problems met while reading, located by file and line, never quoting text."""

    errors: list[FormatError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    repaired: int = 0

    def warn(self, message: str) -> None:
        self.warnings.append(message)


class Codec(ABC):
    """One corpus format. Subclasses set ``name`` and ``description`` and implement read/write."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: whether ``path`` for read/write is a folder (True) or a single file (False)
    folder: ClassVar[bool] = False

    @abstractmethod
    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        """Yield the documents stored at ``path``."""

    @abstractmethod
    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        """Store ``docs`` at ``path`` (created if missing)."""


#: corpus formats by name; the built-ins register when ``clinideid.formats`` is imported, plug-ins through
#: the ``clinideid.formats`` entry-point group
FORMATS: Registry[type[Codec]] = Registry(
    "corpus format",
    "clinideid.formats",
    ["clinideid.formats"],
    error=UnknownFormatError,
    listing="available formats",
)


def register(cls: type[Codec]) -> type[Codec]:
    """Class decorator adding a codec to the registry under ``cls.name``."""
    return FORMATS.add(cls.name, cls)


def available_formats() -> list[str]:
    return FORMATS.names()


def get_codec(name: str) -> Codec:
    return FORMATS.get(name)()


def read_corpus(
    path: str | Path, fmt: str, *, report: ReadReport | None = None, **options: Any
) -> list[Document]:
    """All documents of the corpus at ``path`` in format ``fmt``."""
    path = Path(path)
    if not path.exists():
        raise FormatError("path does not exist", path=str(path))
    return list(get_codec(fmt).read(path, report=report, **options))


def write_corpus(docs: Iterable[Document], path: str | Path, fmt: str, **options: Any) -> None:
    get_codec(fmt).write(docs, Path(path), **options)
