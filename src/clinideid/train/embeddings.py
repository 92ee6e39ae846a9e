"""Training word embeddings on unannotated clinical text (word2vec skip-gram via gensim).

Texts are tokenized with ``clinideid.text.tokenize`` and words normalised like the neural tagger's
vocabulary (``normalize_word``: lower case, digits as 0), so every vector key is a key the tagger looks up.
The vectors are written in word2vec text format, which ``load_vectors`` (and the ``vectors`` setting of the
neural config) reads. gensim is an optional dependency (``pip install gensim``); a single worker thread and
an explicit seed make a run reproducible.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clinideid.detect.neural.vocab import normalize_word
from clinideid.document import Document
from clinideid.errors import ConfigError, InputError
from clinideid.text import tokenize

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddingStats:
    documents: int
    tokens: int
    vocabulary: int
    dim: int


def _gensim_word2vec() -> Any:
    try:
        from gensim.models import Word2Vec
    except ImportError:
        raise ConfigError("training word embeddings needs gensim: pip install gensim") from None
    return Word2Vec


def document_lines(docs: Iterable[Document]) -> Iterator[list[str]]:
    """Normalised token lists, one per non-empty line of each document (skip-gram contexts stay local)."""
    for doc in docs:
        for line in doc.text.splitlines():
            words = [normalize_word(t.text) for t in tokenize(line)]
            if words:
                yield words


def train_word2vec(
    docs: Iterable[Document],
    out: str | Path,
    *,
    dim: int = 100,
    window: int = 5,
    min_count: int = 2,
    epochs: int = 5,
    seed: int = 1,
    workers: int = 1,
) -> EmbeddingStats:
    """Train skip-gram vectors on ``docs`` and write them to ``out`` (word2vec text format)."""
    if dim < 1 or window < 1 or min_count < 1 or epochs < 1 or workers < 1:
        raise ConfigError("dim, window, min_count, epochs and workers must all be positive")
    word2vec = _gensim_word2vec()
    docs = list(docs)
    sentences = list(document_lines(docs))
    n_tokens = sum(len(s) for s in sentences)
    if not n_tokens:
        raise InputError("the corpus holds no text to train word embeddings on")
    model = word2vec(
        sentences=sentences,
        vector_size=dim,
        window=window,
        min_count=min_count,
        sg=1,
        epochs=epochs,
        seed=seed,
        workers=workers,
    )
    if len(model.wv) == 0:
        raise InputError(f"no word occurs at least {min_count} times; lower min_count or give more text")
    out_path = Path(out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    model.wv.save_word2vec_format(str(out_path), binary=False)
    log.info("wrote %d vectors of dimension %d", len(model.wv), dim)
    return EmbeddingStats(len(docs), n_tokens, len(model.wv), dim)
