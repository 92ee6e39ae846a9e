"""Token sequences for the privacy models: normalised words, binary PHI tags, and word-vector lookup.

A sequence is one line of a document cut into pieces of at most ``max_len`` tokens. Tags are binary BIO
(``O``/``B``/``I`` of one PHI class): a token is PHI when it overlaps a gold span whose canonical label
HIPAA Safe Harbor requires removing, the unit of the binary HIPAA token F1 used in the literature.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clinideid.detect.neural.embeddings import iter_text_vectors
from clinideid.detect.neural.vocab import normalize_word
from clinideid.document import Document
from clinideid.errors import InputError
from clinideid.labels import LabelMapping, is_hipaa_label, load_mapping
from clinideid.text import tokenize

TAGS = ("O", "B", "I")


@dataclass(frozen=True)
class TokenSequence:
    """Normalised words and their tag ids (0 O, 1 B, 2 I); ``doc`` is the index of the source document."""

    words: tuple[str, ...]
    tags: tuple[int, ...]
    doc: int


def sequences_from_documents(
    docs: Iterable[Document], label_scheme: str | LabelMapping | None = None, max_len: int = 50
) -> list[TokenSequence]:
    """One ``TokenSequence`` per line piece of every document (empty lines skipped)."""
    mapping = load_mapping(label_scheme) if isinstance(label_scheme, str) else label_scheme
    out: list[TokenSequence] = []
    for d_index, doc in enumerate(docs):
        phi = [s for s in doc.spans if is_hipaa_label(mapping(s.label) if mapping else s.label)]
        tokens = tokenize(doc.text)
        flags = [0] * len(tokens)
        starts = np.array([t.start for t in tokens], dtype=np.int64)
        ends = np.array([t.end for t in tokens], dtype=np.int64)
        for s in phi:
            for a, b in s.pieces:
                lo = int(np.searchsorted(ends, a, side="right"))
                hi = int(np.searchsorted(starts, b, side="left"))
                for i in range(lo, hi):
                    flags[i] = 1 if i == lo or flags[i - 1] == 0 else 2
                if lo < hi:
                    flags[lo] = 1
        # line breaks end sequences
        line_of = np.cumsum([0] + [doc.text.count("\n", tokens[i - 1].end, tokens[i].start)
                                  for i in range(1, len(tokens))]) if tokens else []  # fmt: skip
        i = 0
        while i < len(tokens):
            j = i
            while j < len(tokens) and line_of[j] == line_of[i] and j - i < max_len:
                j += 1
            tags = list(flags[i:j])
            if tags and tags[0] == 2:
                tags[0] = 1
            out.append(
                TokenSequence(tuple(normalize_word(t.text) for t in tokens[i:j]), tuple(tags), d_index)
            )
            i = j
    return out


class WordVectors:
    """A word-vector table: ``words`` (normalised keys, first occurrence wins) and a float32 matrix.

    Unknown words map to a zero vector (row ``unk``, the last row).
    """

    def __init__(self, words: Sequence[str], matrix: np.ndarray) -> None:
        if len(words) != matrix.shape[0]:
            raise InputError("word list and vector matrix differ in length")
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.matrix = np.vstack([matrix.astype(np.float32), np.zeros((1, matrix.shape[1]), np.float32)])
        self.unk = len(self.words)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @classmethod
    def load(cls, path: str | Path, limit: int | None = None) -> WordVectors:
        """Vectors from a word2vec/GloVe text file (as ``clinideid train-embeddings`` writes)."""
        p = Path(path)
        if not p.is_file():
            raise InputError(f"word vectors file {p} does not exist")
        words: list[str] = []
        rows: list[list[float]] = []
        seen: set[str] = set()
        for key, vec in iter_text_vectors(p):
            if key in seen:
                continue
            seen.add(key)
            words.append(key)
            rows.append(vec)
            if limit is not None and len(words) >= limit:
                break
        if not rows:
            raise InputError(f"word vectors file {p} holds no vectors")
        return cls(words, np.asarray(rows, dtype=np.float32))

    def ids(self, words: Sequence[str]) -> np.ndarray:
        return np.array([self.index.get(w, self.unk) for w in words], dtype=np.int64)

    def embed(self, words: Sequence[str]) -> np.ndarray:
        """The (T, dim) vectors of ``words``."""
        return self.matrix[self.ids(words)]
