"""One analysis per document, shared by every detector of a pipeline.

A pipeline runs several detectors over the same text: a hybrid runs the rule engine, the neural tagger
marks the same rule hits as its input, the CRF and the taggers tokenise the text. Each of those is computed
once per document and kept in a ``DocAnalysis`` while the pipeline works
on that document (``Deidentifier.detect`` opens it with ``analysing(doc)``). The document analysed is the
one the detectors read: its visible text, without invisible characters (``clinideid.text.invisible``). A detector asks for what it
needs through the helpers below (``tokens_of``, ``rule_findings``); outside a pipeline (a detector called
on its own) they compute directly, so every detector still works alone.

The analysis lives only while its document is processed (a context variable, so threads and nested
pipelines do not see each other's), holds nothing but derived values of that document, and is never
written anywhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from clinideid.document import Document
from clinideid.text.tokenize import Token, tokenize

T = TypeVar("T")

#: what a detector may declare it reads (``Detector.needs``), for documentation and tests
ANALYSES = ("tokens", "rule_findings")


class DocAnalysis:
    """Lazily computed, cached views of one document's text."""

    __slots__ = ("_cache", "doc", "hits", "misses")

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self._cache: dict[Hashable, Any] = {}
        self.hits = 0
        self.misses = 0

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value stored under ``key``, computed by ``compute()`` the first time."""
        try:
            value = self._cache[key]
        except KeyError:
            self.misses += 1
            value = self._cache[key] = compute()
            return value
        self.hits += 1
        return value

    @property
    def tokens(self) -> list[Token]:
        return self.cached("tokens", lambda: tokenize(self.doc.text))


_CURRENT: ContextVar[dict[int, DocAnalysis] | None] = ContextVar("clinideid_doc_analysis", default=None)


@contextlib.contextmanager
def analysing(*docs: Document) -> Iterator[DocAnalysis]:
    """Make the analyses of ``docs`` (one per document: a batch may be open at once) available to the
    detectors called inside the block; yields the first document's."""
    if not docs:
        raise ValueError("analysing() needs at least one document")
    open_now = dict(_CURRENT.get() or {})
    analyses = [DocAnalysis(d) for d in docs]
    for a in analyses:
        open_now[id(a.doc)] = a
    token = _CURRENT.set(open_now)
    try:
        yield analyses[0]
    finally:
        _CURRENT.reset(token)


def analysis_of(doc: Document) -> DocAnalysis | None:
    """The open analysis of ``doc`` (the very same document object, or an open one with the same text)."""
    open_now = _CURRENT.get()
    if not open_now:
        return None
    analysis = open_now.get(id(doc))
    if analysis is not None and analysis.doc is doc:
        return analysis
    for candidate in open_now.values():  # a detector that rebuilt the Document (same text, new object)
        if candidate.doc.text == doc.text:
            return candidate
    return None


def tokens_of(doc: Document) -> list[Token]:
    """``tokenize(doc.text)``, computed once per document inside a pipeline."""
    analysis = analysis_of(doc)
    return analysis.tokens if analysis is not None else tokenize(doc.text)


def shared(doc: Document, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, shared by every caller asking with the same ``key`` for this document."""
    analysis = analysis_of(doc)
    return analysis.cached(key, compute) if analysis is not None else compute()


__all__ = ["ANALYSES", "DocAnalysis", "analysing", "analysis_of", "shared", "tokens_of"]
