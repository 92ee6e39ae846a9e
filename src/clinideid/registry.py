"""One registry mechanism for every pluggable kind: detectors, operators, corpus formats, date strategies.

Each kind has a ``Registry``: built-in entries register themselves with a decorator when their module is
imported (modules are imported only when an entry is asked for, so a rules-only pipeline never imports
torch), and other packages add entries through Python entry points, without patching clinideid::

    # pyproject.toml of a plug-in package
    [project.entry-points."clinideid.detectors"]
    hospital_ids = "hospital_plugin.detectors:HospitalIdDetector"

The entry point's object is registered under the entry point's name (a module may be named instead: it
then registers its entries itself when imported). Groups: ``clinideid.detectors``, ``clinideid.operators``,
``clinideid.formats``, ``clinideid.date_strategies``, ``clinideid.postprocess``. A built-in name cannot be
replaced by a plug-in.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Generic, TypeVar

from clinideid.errors import ConfigError
from clinideid.extras import missing_extra

log = logging.getLogger(__name__)

T = TypeVar("T")


class Registry(Generic[T]):
    """Named entries of one kind, filled by decorators, lazily imported built-ins and entry points."""

    def __init__(
        self,
        kind: str,
        group: str,
        builtin_modules: Iterable[str] | Mapping[str, str] = (),
        error: type[Exception] = ConfigError,
        listing: str = "available",
    ) -> None:
        self.kind = kind
        self._listing = listing
        self.group = group
        #: name -> module for built-ins registered on import (a plain list: modules imported all at once)
        self._builtin: dict[str, str] = dict(builtin_modules) if isinstance(builtin_modules, Mapping) else {}
        self._modules: list[str] = [] if isinstance(builtin_modules, Mapping) else list(builtin_modules)
        self._error = error
        self._entries: dict[str, T] = {}
        self._plugins_loaded = False
        self._builtins_loaded = False
        self._plugin_names: set[str] = set()

    # -- filling ----------------------------------------------------------------------------------------
    def add(self, name: str, entry: T) -> T:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} needs a non-empty name")
        self._entries[name] = entry
        return entry

    def register(self, name: str | None = None, *, attribute: str = "name") -> Callable[[T], T]:
        """Decorator: register the decorated object under ``name`` (default: its ``attribute``)."""

        def deco(entry: T) -> T:
            key = name if name is not None else getattr(entry, attribute)
            return self.add(key, entry)

        return deco

    # -- reading ----------------------------------------------------------------------------------------
    def get(self, name: str) -> T:
        """The entry ``name``; a clear error listing what exists otherwise."""
        entry = self._find(name)
        if entry is None:
            raise self._error(f"unknown {self.kind} {name!r}; {self._listing}: {', '.join(self.names())}")
        return entry

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def names(self) -> list[str]:
        """Every available name: built-ins and plug-ins (importing them all)."""
        self._load_all_builtins()
        self._load_plugins()
        return sorted(self._entries)

    def _find(self, name: str) -> T | None:
        if not isinstance(name, str):
            return None
        if name in self._entries:
            return self._entries[name]
        module = self._builtin.get(name)
        if module is not None:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:  # an optional dependency (torch...): say which extra
                error = missing_extra(exc, f"the {name!r} {self.kind}")
                if error is None:
                    raise
                raise error from None
        else:
            self._load_all_builtins()
        if name not in self._entries:
            self._load_plugins()
        return self._entries.get(name)

    def _load_all_builtins(self) -> None:
        if self._builtins_loaded:
            return
        for module in self._modules:
            importlib.import_module(module)
        for name, module in self._builtin.items():
            try:
                importlib.import_module(module)
            except ImportError as exc:  # an optional dependency is missing: that type stays unavailable
                log.debug("%s %r unavailable: %s", self.kind, name, exc)
        self._builtins_loaded = True

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        self._load_all_builtins()
        builtin = set(self._entries)
        for ep in metadata.entry_points(group=self.group):
            if ep.name in builtin:
                log.warning(
                    "%s plug-in %r ignored: a built-in %s has that name", self.kind, ep.name, self.kind
                )
                continue
            try:
                loaded = ep.load()
            except Exception as exc:
                log.warning("%s plug-in %r could not be loaded: %s", self.kind, ep.name, exc)
                continue
            if ep.name not in self._entries and not _is_module(loaded):
                self.add(ep.name, loaded)
                self._plugin_names.add(ep.name)

    def reset_plugins(self) -> None:
        """Forget loaded plug-ins (tests; a process that installed a plug-in after start-up)."""
        for name in self._plugin_names:
            self._entries.pop(name, None)
        self._plugin_names.clear()
        self._plugins_loaded = False


def _is_module(obj: object) -> bool:
    import types

    return isinstance(obj, types.ModuleType)


__all__ = ["Registry"]
