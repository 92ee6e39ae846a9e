"""Attacks on shared training data and a pass/fail audit.

* ``adversary_attack``: a fresh Siamese adversary retrained on the frozen representation: can it tell a
  sequence's own word embeddings from the same sequence with its PHI swapped? Accuracy near 0.5 means the
  representation hides the PHI from this attacker.
* ``lookup_attack``: known plaintext. The attacker holds the text of some sequences and their released
  representations, averages each known word's representations, and names the tokens of other sequences by
  nearest average (cosine): top-1 and top-10 hit rates, against chance.
* ``discriminator_attack``: for pseudonymised corpora, a classifier telling original from pseudonymised
  sequences (near 0.5: the surrogates read like real text).

Each result carries a Wilson 95% interval; an attack passes when the interval's upper bound is at most
its threshold (the conservative reading: a small test set cannot pass by luck). Reports never contain
text: only counts, rates and settings.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from clinideid.document import Document
from clinideid.errors import InputError
from clinideid.privacy.data import TokenSequence, WordVectors, sequences_from_documents
from clinideid.privacy.representation import EmbeddingAdversary, SequenceEncoder, swap_phi
from clinideid.privacy.tagger import pad

Represent = Callable[[Sequence[str]], np.ndarray]


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% with the default ``z``)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class AttackResult:
    """One attack's success rate, its interval, the chance level and the verdict."""

    attack: str
    metric: str
    value: float
    successes: int
    n: int
    ci_low: float
    ci_high: float
    chance: float
    threshold: float
    passed: bool
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def make(
        cls, attack: str, metric: str, successes: int, n: int, chance: float, threshold: float, **extra: Any
    ) -> AttackResult:
        lo, hi = wilson_interval(successes, n)
        value = successes / n if n else float("nan")
        return cls(
            attack, metric, value, successes, n, lo, hi, chance, threshold, n > 0 and hi <= threshold, extra
        )


@dataclass
class AuditReport:
    results: list[AttackResult]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": "PASS" if self.passed else "FAIL",
            "passed": self.passed,
            "settings": self.settings,
            "attacks": [asdict(r) for r in self.results],
        }

    def to_markdown(self) -> str:
        lines = [
            f"# Privacy audit: {'PASS' if self.passed else 'FAIL'}",
            "",
            "An attack passes when the upper bound of its Wilson 95% interval is at most its threshold.",
            "",
            "| attack | metric | value | 95% CI | chance | threshold | verdict |",
            "|---|---|---:|---|---:|---:|---|",
        ]
        for r in self.results:
            lines.append(
                f"| {r.attack} | {r.metric} | {r.value:.3f} (n={r.n}) | {r.ci_low:.3f}–{r.ci_high:.3f} | "
                f"{r.chance:.3f} | {r.threshold:.3f} | {'pass' if r.passed else 'FAIL'} |"
            )
        return "\n".join(lines) + "\n"


def split_by_document(
    seqs: Sequence[TokenSequence], fraction: float, seed: int
) -> tuple[list[TokenSequence], list[TokenSequence]]:
    """Sequences split by source document (no document on both sides)."""
    docs = sorted({s.doc for s in seqs})
    random.Random(seed).shuffle(docs)
    first = set(docs[: max(1, int(len(docs) * fraction))])
    return [s for s in seqs if s.doc in first], [s for s in seqs if s.doc not in first]


def _fit_and_count(
    model: nn.Module,
    logits: Callable[[list], torch.Tensor],
    train: list,
    test: list,
    epochs: int,
    rng: random.Random,
) -> int:
    """Train a binary attacker (Adam, BCE on ``logits`` of a batch; each example's label is its last item) and
    count its correct predictions on ``test``."""
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    bce = nn.functional.binary_cross_entropy_with_logits
    for _ in range(epochs):
        rng.shuffle(train)
        for k in range(0, len(train), 32):
            chunk = train[k : k + 32]
            loss = bce(logits(chunk), torch.tensor([c[-1] for c in chunk]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    correct = 0
    with torch.no_grad():
        for k in range(0, len(test), 64):
            chunk = test[k : k + 64]
            correct += int(((logits(chunk) > 0).float() == torch.tensor([c[-1] for c in chunk])).sum())
    return correct


def _pair_data(
    seqs: Sequence[TokenSequence], represent: Represent, vectors: WordVectors, rng: random.Random
) -> list[tuple[np.ndarray, np.ndarray, float]]:
    out = []
    for s in seqs:
        r = represent(s.words)
        out.append((r, vectors.embed(s.words), 1.0))
        out.append((represent(s.words), vectors.embed(swap_phi(s, vectors.words, rng)), 0.0))
    return out


def adversary_attack(
    seqs: Sequence[TokenSequence],
    represent: Represent,
    vectors: WordVectors,
    *,
    threshold: float = 0.6,
    epochs: int = 5,
    hidden: int = 32,
    max_sequences: int = 2000,
    seed: int = 1,
) -> AttackResult:
    """Retrain a fresh ``EmbeddingAdversary`` on the frozen representation; held-out accuracy."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    phi = [s for s in seqs if any(s.tags)]
    if len(phi) < 4:
        raise InputError("the adversary attack needs at least 4 sequences with PHI")
    rng.shuffle(phi)
    phi = phi[:max_sequences]
    train_seqs, test_seqs = split_by_document(phi, 0.7, seed)
    if not test_seqs or not train_seqs:
        train_seqs, test_seqs = phi[: len(phi) * 7 // 10], phi[len(phi) * 7 // 10 :]
    train = _pair_data(train_seqs, represent, vectors, rng)
    test = _pair_data(test_seqs, represent, vectors, rng)
    rep_dim = train[0][0].shape[1]
    adv = EmbeddingAdversary(rep_dim, vectors.dim, hidden)

    def logits(chunk: list) -> torch.Tensor:
        r, mask = pad([c[0] for c in chunk], rep_dim)
        e, _ = pad([c[1] for c in chunk], vectors.dim)
        return adv(r, e, mask)

    correct = _fit_and_count(adv, logits, train, test, epochs, rng)
    return AttackResult.make(
        "retrained adversary", "accuracy", correct, len(test), 0.5, threshold, train_pairs=len(train)
    )


def lookup_attack(
    seqs: Sequence[TokenSequence],
    represent: Represent,
    *,
    threshold: float = 0.1,
    top10_threshold: float = 0.3,
    known_fraction: float = 0.5,
    max_targets: int = 2000,
    phi_only: bool = True,
    seed: int = 1,
) -> tuple[AttackResult, AttackResult]:
    """Known-plaintext nearest-representation lookup: top-1 and top-10 hit rates on the unknown part."""
    known, unknown = split_by_document(seqs, known_fraction, seed)
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, int] = defaultdict(int)
    for s in known:
        reps = represent(s.words)
        for w, v in zip(s.words, reps, strict=True):
            sums[w] = sums[w] + v if w in sums else v.astype(np.float64).copy()
            counts[w] += 1
    if len(sums) < 2:
        raise InputError("the lookup attack needs at least 2 distinct known words")
    words = list(sums)
    cent = np.stack([sums[w] / counts[w] for w in words])
    cent /= np.maximum(np.linalg.norm(cent, axis=1, keepdims=True), 1e-12)
    index = {w: i for i, w in enumerate(words)}
    targets: list[tuple[int, np.ndarray]] = []
    rng = random.Random(seed)
    for s in unknown:
        reps = represent(s.words)
        for w, t, v in zip(s.words, s.tags, reps, strict=True):
            if w in index and (t > 0 or not phi_only):
                targets.append((index[w], v))
    rng.shuffle(targets)
    targets = targets[:max_targets]
    hit1 = hit10 = 0
    if targets:
        q = np.stack([v for _, v in targets]).astype(np.float64)
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        sims = q @ cent.T
        truth = np.array([i for i, _ in targets])
        true_sim = sims[np.arange(len(truth)), truth]
        rank = (sims > true_sim[:, None]).sum(1)  # ties count in the attacker's favour
        hit1, hit10 = int((rank < 1).sum()), int((rank < 10).sum())
    n_words = len(words)
    what = "PHI tokens" if phi_only else "tokens"
    return (
        AttackResult.make("lookup", "top-1 hit rate", hit1, len(targets), 1 / n_words, threshold,
                          known_words=n_words, targets=what),
        AttackResult.make("lookup", "top-10 hit rate", hit10, len(targets), min(1.0, 10 / n_words),
                          top10_threshold, known_words=n_words, targets=what),
    )  # fmt: skip


class _Discriminator(nn.Module):
    def __init__(self, dim: int, hidden: int = 32) -> None:
        super().__init__()
        self.enc = SequenceEncoder(dim, hidden)
        self.out = nn.Linear(2 * hidden, 1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.out(self.enc(x, mask)).squeeze(1)


def discriminator_attack(
    original: Sequence[Document],
    pseudonymized: Sequence[Document],
    vectors: WordVectors,
    *,
    label_scheme: str | None = None,
    threshold: float = 0.6,
    epochs: int = 3,
    max_sequences: int = 4000,
    seed: int = 1,
) -> AttackResult:
    """A BiLSTM classifier over word vectors telling original from pseudonymised sequences (with PHI).

    Documents are matched by position; training and test sets are split by document, so the classifier
    never sees the other version of a test sequence.
    """
    if len(original) != len(pseudonymized):
        raise InputError("the original and pseudonymised corpora differ in their number of documents")
    rng = random.Random(seed)
    torch.manual_seed(seed)
    orig = [s for s in sequences_from_documents(original, label_scheme) if any(s.tags)]
    pseu = [s for s in sequences_from_documents(pseudonymized, label_scheme) if any(s.tags)]
    data = [(s, 0.0) for s in orig] + [(s, 1.0) for s in pseu]
    rng.shuffle(data)
    data = data[:max_sequences]
    docs = sorted({s.doc for s, _ in data})
    rng.shuffle(docs)
    train_docs = set(docs[: int(len(docs) * 0.7)])
    train = [(vectors.embed(s.words), y) for s, y in data if s.doc in train_docs]
    test = [(vectors.embed(s.words), y) for s, y in data if s.doc not in train_docs]
    if not train or not test:
        raise InputError("the discriminator needs sequences with PHI in at least 2 documents")
    model = _Discriminator(vectors.dim)

    def logits(chunk: list) -> torch.Tensor:
        x, mask = pad([c[0] for c in chunk], vectors.dim)
        return model(x, mask)

    correct = _fit_and_count(model, logits, train, test, epochs, rng)
    majority = max(sum(y for _, y in test), len(test) - sum(y for _, y in test)) / len(test)
    return AttackResult.make("discriminator", "accuracy", correct, len(test), majority, threshold)
