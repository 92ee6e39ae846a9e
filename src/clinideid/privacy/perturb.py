"""Perturbation baselines for sharing training data: what a tagger still learns when PHI is obscured.

Three families, after the literature on private de-identification training data:

* ``random_phi_vectors``: each PHI token's embedding replaced by a random vector (input level);
* ``gaussian_noise``: additive Gaussian noise on every token embedding (input level);
* ``NeighbourOperator`` / ``neighbour_pseudonymize``: each PHI token replaced, in the text, by one of its
  N nearest neighbours (cosine) in a word-embedding space, chosen with a keyed random stream. The result
  is a corpus like any other (spans moved to the new offsets), so any tagger can train on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from clinideid.detect.neural.vocab import normalize_word
from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.privacy.data import WordVectors
from clinideid.privacy.pseudonymize import Pseudonymizer
from clinideid.text import tokenize
from clinideid.transform.base import Operator, OperatorContext
from clinideid.transform.keys import KeyedRandom, require_key


def random_phi_vectors(
    vectors: np.ndarray, phi_mask: np.ndarray, rng: np.random.Generator, scale: np.ndarray | float = 1.0
) -> np.ndarray:
    """``vectors`` (T, D) with the rows where ``phi_mask`` is true replaced by N(0, scale²) draws."""
    out = vectors.copy()
    n = int(np.count_nonzero(phi_mask))
    if n:
        out[phi_mask] = rng.normal(0.0, 1.0, size=(n, vectors.shape[1])).astype(vectors.dtype) * scale
    return out


def gaussian_noise(vectors: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``vectors`` plus N(0, sigma²) noise on every value."""
    if sigma < 0:
        raise ConfigError("noise sigma must be zero or more")
    return vectors + rng.normal(0.0, sigma, size=vectors.shape).astype(vectors.dtype)


class NeighbourTable:
    """The ``n`` nearest neighbours (cosine, the word itself excluded) of words in a vector space."""

    def __init__(self, vectors: WordVectors, n: int, candidates: int | None = None) -> None:
        if n < 1:
            raise ConfigError("the number of neighbours must be at least 1")
        limit = len(vectors.words) if candidates is None else min(candidates, len(vectors.words))
        if n >= limit:
            raise ConfigError(
                f"asked for {n} neighbours but the vector space has only {limit} candidate words"
            )
        self.vectors = vectors
        self.n = n
        m = vectors.matrix[:limit]
        # substitutes are words or numbers: punctuation never replaces a PHI token
        self._eligible = np.array([any(c.isalnum() for c in w) for w in vectors.words[:limit]], dtype=bool)
        if int(self._eligible.sum()) <= n:
            raise ConfigError(f"asked for {n} neighbours but the vector space has fewer candidate words")
        self._unit = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-8)
        self._cache: dict[str, tuple[str, ...]] = {}

    def neighbours(self, word: str) -> tuple[str, ...]:
        """The ``n`` nearest words of ``word`` (normalised); a word outside the space gets ``n`` words
        spread over the vocabulary (deterministic), so an unknown PHI token never stays in clear."""
        found = self._cache.get(word)
        if found is not None:
            return found
        i = self.vectors.index.get(word)
        if i is None or i >= self._unit.shape[0]:
            eligible = np.flatnonzero(self._eligible)
            step = max(1, len(eligible) // self.n)
            result = tuple(self.vectors.words[j] for j in eligible[: step * self.n : step])
        else:
            sims = self._unit @ self._unit[i]
            sims[i] = -np.inf
            sims[~self._eligible] = -np.inf
            top = np.argpartition(-sims, self.n)[: self.n]
            top = top[np.argsort(-sims[top], kind="stable")]
            result = tuple(self.vectors.words[j] for j in top)
        self._cache[word] = result
        return result


def _cased_like(word: str, original: str) -> str:
    if original.isupper() and len(original) > 1:
        return word.upper()
    if original[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


class NeighbourOperator(Operator):
    """Each word or number token of a span replaced by one of its N nearest embedding neighbours (keyed
    choice per occurrence); punctuation and spacing inside the span stay."""

    name = "neighbour"
    needs_key = True

    def __init__(self, table: NeighbourTable) -> None:
        self.table = table

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        key = require_key(ctx.key, self.name)
        text = ctx.span_text(span)
        rng = KeyedRandom(key, "neighbour", ctx.scope_id, span.start, span.end)
        pieces: list[str] = []
        cursor = 0
        replaced_end = -1
        for tok in tokenize(text):
            if not any(c.isalnum() for c in tok.text):
                continue  # punctuation inside a span stays (a date keeps its separators)
            pieces.append(text[cursor : tok.start])
            if tok.start == replaced_end:
                pieces.append(" ")  # two glued tokens ("12B") would otherwise merge into one new word
            word = rng.choice(self.table.neighbours(normalize_word(tok.text)))
            # vector keys write every digit as 0: draw real digits, or "0000" would betray the substitution
            word = "".join(rng.digit() if c == "0" else c for c in word)
            pieces.append(_cased_like(word, tok.text))
            cursor = replaced_end = tok.end
        pieces.append(text[cursor:])
        out = "".join(pieces)
        return out if out.strip() else "x"


def neighbour_pseudonymize(
    docs: Iterable[Document], table: NeighbourTable, key: bytes, on_error: str = "raise"
) -> Iterator[Document]:
    """``docs`` with every gold span's tokens replaced by embedding neighbours, spans moved and verified."""
    pseudo = Pseudonymizer(key, operator=NeighbourOperator(table))
    yield from pseudo.corpus(docs, on_error=on_error)


def phi_mask(tags: Sequence[int]) -> np.ndarray:
    """Boolean mask of the PHI positions of a tag sequence (B or I)."""
    return np.asarray(tags) > 0
