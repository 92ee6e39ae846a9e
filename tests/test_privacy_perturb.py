"""Perturbation baselines: PHI vectors, noise, nearest-neighbour substitution; token sequences."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from clinideid.detect.neural.vocab import normalize_word
from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.privacy.data import WordVectors, sequences_from_documents
from clinideid.privacy.perturb import (
    NeighbourTable,
    gaussian_noise,
    neighbour_pseudonymize,
    phi_mask,
    random_phi_vectors,
)
from clinideid.text import tokenize
from privacy_fixtures import synth_notes, vectors_for

KEY = hashlib.sha256(b"perturb key").digest()


def test_sequences_tag_phi_tokens_bio_and_split_lines() -> None:
    doc = Document("d", "Seen by Mr John Smith\non 2020-01-02 today", "en", {},
                   (Span(11, 21, "PATIENT"), Span(25, 35, "DATE")))  # fmt: skip
    seqs = sequences_from_documents([doc])
    assert [s.words for s in seqs] == [("seen", "by", "mr", "john", "smith"),
                                       ("on", "0000", "-", "00", "-", "00", "today")]  # fmt: skip
    assert [s.tags for s in seqs] == [(0, 0, 0, 1, 2), (0, 1, 2, 2, 2, 2, 0)]
    short = sequences_from_documents([doc], max_len=3)
    assert max(len(s.words) for s in short) == 3 and short[1].tags[0] == 1  # a cut inside PHI starts with B


def test_random_phi_vectors_touch_only_phi_rows() -> None:
    rng = np.random.default_rng(0)
    x = np.ones((5, 4), np.float32)
    mask = phi_mask([0, 1, 2, 0, 1])
    out = random_phi_vectors(x, mask, rng)
    assert np.array_equal(out[~mask], x[~mask])
    assert not np.allclose(out[mask], 1.0)


def test_gaussian_noise_has_the_asked_spread() -> None:
    x = np.zeros((2000, 50), np.float32)
    out = gaussian_noise(x, 0.5, np.random.default_rng(1))
    assert abs(float(out.std()) - 0.5) < 0.01
    with pytest.raises(ConfigError):
        gaussian_noise(x, -1.0, np.random.default_rng(1))


def test_neighbour_table_returns_nearest_by_cosine() -> None:
    angles = np.linspace(0, np.pi / 2, 10)
    mat = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    table = NeighbourTable(WordVectors([f"w{i}" for i in range(10)], mat), n=2)
    assert set(table.neighbours("w5")) == {"w4", "w6"}
    assert table.neighbours("w0")[0] == "w1"
    assert len(table.neighbours("unknown")) == 2 and "unknown" not in table.neighbours("unknown")
    with pytest.raises(ConfigError):
        NeighbourTable(WordVectors(["a", "b"], mat[:2]), n=5)


def test_neighbour_pseudonymisation_replaces_phi_tokens_keyed() -> None:
    docs = synth_notes(6)
    vectors = vectors_for(docs)
    table = NeighbourTable(vectors, n=5)
    out = list(neighbour_pseudonymize(docs, table, KEY))
    again = list(neighbour_pseudonymize(docs, table, KEY))
    other = list(neighbour_pseudonymize(docs, table, hashlib.sha256(b"other").digest()))
    assert [d.text for d in out] == [d.text for d in again]
    assert [d.text for d in out] != [d.text for d in other]
    for orig, new in zip(docs, out, strict=True):
        assert len(new.spans) == len(orig.spans)
        for a, b in zip(orig.spans, new.spans, strict=True):
            old_words = [normalize_word(t.text) for t in tokenize(orig.span_text(a)) if t.text.isalnum()]
            allowed = {
                normalize_word(t.text) for w in old_words for n in table.neighbours(w) for t in tokenize(n)
            }
            new_words = [normalize_word(t.text) for t in tokenize(new.span_text(b)) if t.text.isalnum()]
            assert new_words and set(new_words) <= allowed | {"x"}
