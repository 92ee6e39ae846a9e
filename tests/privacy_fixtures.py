"""Toy data for the privacy tests: synthetic notes, random word vectors, random token sequences."""

from __future__ import annotations

import random

import numpy as np

from clinideid.detect.neural.vocab import normalize_word
from clinideid.document import Document
from clinideid.privacy.data import TokenSequence, WordVectors
from clinideid.synth import generate
from clinideid.text import tokenize


def synth_notes(n: int = 12, seed: int = 5) -> list[Document]:
    return generate("en", n, seed=seed, styles=["normal"])


def vectors_for(docs: list[Document], dim: int = 16, seed: int = 0) -> WordVectors:
    """Random vectors for every word of ``docs`` (normalised keys, first-seen order)."""
    words: dict[str, None] = {}
    for d in docs:
        for t in tokenize(d.text):
            words.setdefault(normalize_word(t.text), None)
    rng = np.random.default_rng(seed)
    return WordVectors(list(words), rng.normal(size=(len(words), dim)).astype(np.float32))


def toy_sequences(
    n: int = 600, vocab: int = 120, length: int = 8, seed: int = 0
) -> tuple[list[TokenSequence], WordVectors]:
    """Random sequences with about a third of the tokens PHI (words ``w0..``), 10 sequences a document."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    seqs = []
    for i in range(n):
        tags = [1 if rng.random() < 0.33 else 0 for _ in range(length)]
        tags[rng.randrange(length)] = 1
        bio = [0 if t == 0 else (2 if j and tags[j - 1] else 1) for j, t in enumerate(tags)]
        seqs.append(TokenSequence(tuple(rng.choice(words) for _ in range(length)), tuple(bio), i // 10))
    mat = np.random.default_rng(seed).normal(size=(vocab, 16)).astype(np.float32)
    return seqs, WordVectors(words, mat)
