"""A disk cache of compiled rule patterns, so a pipeline starts in a fraction of a second.

Rule packs spell Unicode classes out for Python's ``re`` (see ``fastre``), and ``re`` spends seconds
optimising those big classes when a pack is compiled: most of a pipeline's start-up. The result of that work,
the engine's code (a list of integers), depends only on the pattern, the flags and the interpreter, so it is
kept on disk: one JSON file per pack, ``<cache dir>/rules/<pack>-<interpreter tag>.json``, a mapping from a hash
of (pattern, flags) to what ``re`` built, plus which engine a calibrated pattern runs on (the choice between
``re`` and ``regex`` is made once, then reused: the same pack behaves the same on every start).

Entries are validated by their key (an edited pattern simply misses) and the file is rewritten atomically
when a compile missed, keeping only the entries that compile used. The cache holds pack patterns only, never document text. Its
folder is ``$CLINIDEID_CACHE_DIR`` or the user cache folder (``$XDG_CACHE_HOME/clinideid``, else
``~/.cache/clinideid``); ``CLINIDEID_CACHE_DIR=off`` turns it off. Any problem with the cache (unreadable,
corrupt, not writable, another interpreter's file) falls back to compiling, with no error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from clinideid.cache import cache_dir

log = logging.getLogger(__name__)

try:  # CPython's regular-expression internals; any other interpreter compiles normally
    import _sre
    from re import _compiler as _re_compiler
    from re import _parser as _re_parser

    _SUPPORTED = sys.implementation.name == "cpython"
except ImportError:  # pragma: no cover - other interpreters
    _SUPPORTED = False

_FORMAT = 1
_TAG = f"{sys.implementation.cache_tag}-sre{getattr(_sre, 'MAGIC', 0) if _SUPPORTED else 0}-v{_FORMAT}"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


class PatternStore:
    """The cached compile results of one pack: read once, written back when they changed."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._entries: dict[str, tuple] = {}
        self._used: set[str] = set()
        self._changed = False
        if path is not None:
            self._entries = _read(path)

    @staticmethod
    def key(pattern: str, flags: int, kind: str) -> str:
        return hashlib.sha256(f"{kind}\0{flags}\0{pattern}".encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def choice(self, key: str) -> str | None:
        """A remembered engine choice (``"re"`` / ``"regex"``) for ``key``."""
        entry = self._entries.get(key)
        if entry is None or entry[0] != "choice":
            return None
        self._used.add(key)
        return entry[1]

    def remember_choice(self, key: str, engine: str) -> None:
        self._entries[key] = ("choice", engine)
        self._used.add(key)
        self._changed = True

    def compile_re(self, pattern: str, flags: int) -> re.Pattern:
        """``re.compile(pattern, flags)``, from cached code when there is some."""
        if not _SUPPORTED:
            return re.compile(pattern, flags)
        key = self.key(pattern, flags, "re")
        entry = self._entries.get(key)
        if entry is not None and entry[0] == "no-re":  # ``re`` cannot run it (``regex`` will)
            self._used.add(key)
            raise re.error("pattern needs the regex module (cached)")
        if entry is not None and entry[0] == "re":
            try:
                compiled = _sre.compile(pattern, *entry[1:])
                self._used.add(key)
                return compiled
            except Exception:
                pass
        try:
            parsed = _re_parser.parse(pattern, flags)
            code = _re_compiler._code(parsed, flags)
            groupindex = dict(parsed.state.groupdict)
            indexgroup = [None] * parsed.state.groups
            for name, i in groupindex.items():
                indexgroup[i] = name
            entry = (
                "re",
                flags | parsed.state.flags,
                code,
                parsed.state.groups - 1,
                groupindex,
                tuple(indexgroup),
            )
            compiled = _sre.compile(pattern, *entry[1:])
        except re.error:
            self._entries[key] = ("no-re",)
            self._used.add(key)
            self._changed = True
            raise
        except Exception:
            return re.compile(pattern, flags)
        self._entries[key] = entry
        self._used.add(key)
        self._changed = True
        return compiled

    def save(self) -> None:
        """Write the entries used in this compile back, atomically, when a compile missed."""
        if self.path is None:
            return
        if not self._changed:
            return
        # a changed pack: keep what this compile used (an edited pattern's old entry goes)
        entries = {k: v for k, v in self._entries.items() if k in self._used}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump({"format": _FORMAT, "tag": _TAG, "entries": entries}, fh, separators=(",", ":"))
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        except OSError as exc:
            log.debug("rule pattern cache not written (%s)", exc.__class__.__name__)


def _read(path: Path) -> dict[str, tuple]:
    try:
        with path.open("r", encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return {}
    except Exception as exc:
        log.debug("rule pattern cache ignored (%s)", exc.__class__.__name__)
        return {}
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("tag") != _TAG:
        return {}
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return {}
    out: dict[str, tuple] = {}
    for key, entry in entries.items():
        if isinstance(entry, list) and entry and entry[0] == "re" and len(entry) == 6:
            _, flags, code, groups, groupindex, indexgroup = entry
            out[key] = ("re", flags, code, groups, groupindex, tuple(indexgroup))
        elif isinstance(entry, list) and len(entry) == 2 and entry[0] == "choice":
            out[key] = ("choice", entry[1])
        elif entry == ["no-re"]:
            out[key] = ("no-re",)
    return out


_CURRENT: ContextVar[PatternStore | None] = ContextVar("clinideid_pattern_store", default=None)


def current_store() -> PatternStore | None:
    return _CURRENT.get()


@contextlib.contextmanager
def pattern_store(pack_name: str) -> Iterator[PatternStore]:
    """The store of ``pack_name`` for the compiles inside the ``with`` block, saved at its end."""
    folder = cache_dir()
    path = None
    if folder is not None and _SUPPORTED:
        path = folder / "rules" / f"{_SAFE_NAME.sub('_', pack_name)[:80]}-{_TAG}.json"
    store = PatternStore(path)
    token = _CURRENT.set(store)
    try:
        yield store
    finally:
        _CURRENT.reset(token)
    store.save()


def compile_with_store(pattern: str, flags: int) -> Any:
    """``re.compile`` through the current store when a pack compile has one."""
    store = _CURRENT.get()
    return store.compile_re(pattern, flags) if store is not None else re.compile(pattern, flags)


__all__ = ["PatternStore", "cache_dir", "compile_with_store", "current_store", "pattern_store"]
