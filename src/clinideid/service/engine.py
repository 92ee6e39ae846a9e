"""Pipelines for the service, built once per configuration, and computing under a time limit.

Requests compute in a small thread pool (``workers``); at most ``queue`` more wait. A request that runs past
the time limit gets 504 while its thread finishes in the background, still holding its slot, so abandoned
work cannot pile up beyond ``workers + queue``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from fastapi import HTTPException

from clinideid.pipeline import MultilingualDeidentifier
from clinideid.service.settings import ServiceSettings

T = TypeVar("T")

#: pipelines kept built (one per language + overrides combination)
CACHE_SIZE = 16


class Engine:
    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self._pool = self._new_pool()
        self._slots = threading.BoundedSemaphore(settings.workers + settings.queue)
        self._cache: OrderedDict[str, MultilingualDeidentifier] = OrderedDict()
        self._lock = threading.Lock()

    def _new_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=self.settings.workers, thread_name_prefix="clinideid-req")

    def open(self) -> None:
        """(Re)start the request pool: an application can be started again after a shutdown."""
        if self._pool._shutdown:
            self._pool = self._new_pool()

    def pipeline(self, language: str | None, overrides: dict[str, Any] | None) -> MultilingualDeidentifier:
        """The pipeline for this language and these overrides (``ConfigError`` when they are invalid)."""
        lang = language or self.settings.language
        cache_key = json.dumps([lang, overrides or {}], sort_keys=True)
        with self._lock:
            deid = self._cache.get(cache_key)
            if deid is not None:
                self._cache.move_to_end(cache_key)
                return deid
        deid = MultilingualDeidentifier(lang, self.settings.key, None, overrides or None)
        with self._lock:
            self._cache[cache_key] = deid
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return deid

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` in the pool under the time limit: 503 when the queue is full, 504 past the limit."""
        if not self._slots.acquire(blocking=False):
            raise HTTPException(503, "the server is busy; retry later", headers={"Retry-After": "1"})

        def task() -> T:
            try:
                return fn()
            finally:
                self._slots.release()

        try:
            future = self._pool.submit(task)
        except RuntimeError:
            self._slots.release()
            raise HTTPException(503, "the server is shutting down") from None
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.settings.time_limit)
        except TimeoutError:
            raise HTTPException(
                504, f"the request ran past the time limit of {self.settings.time_limit:g} s"
            ) from None

    def warm(self) -> None:
        """Build the default pipeline now (``/ready`` answers once this is done)."""
        lang = self.settings.language if self.settings.language != "auto" else "en"
        self.pipeline(lang, None).build_all()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
