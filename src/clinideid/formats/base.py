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


_REGISTRY: dict[str, type[Codec]] = {}


def register(cls: type[Codec]) -> type[Codec]:
    """Class decorator adding a codec to the registry under ``cls.name``."""
    _REGISTRY[cls.name] = cls
    return cls


def available_formats() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def get_codec(name: str) -> Codec:
    _load_builtin()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise UnknownFormatError(
            f"unknown corpus format {name!r}; available formats: {', '.join(sorted(_REGISTRY))}"
        ) from None


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


def _load_builtin() -> None:
    # importing the package registers the built-in codecs
    import clinideid.formats  # noqa: F401
