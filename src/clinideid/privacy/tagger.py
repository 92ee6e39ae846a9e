"""A small, fast BiLSTM-CRF over fixed token vectors: the probe a data recipient trains.

It reads precomputed vectors (word embeddings, perturbed embeddings or released private
representations), so the same probe measures how much de-identification signal each kind of shared
data keeps. Tags are binary BIO (see ``data``); the score is the binary token F1 (a token is PHI or not).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from clinideid.detect.neural.crf import CRF

N_TAGS = 3


def pad(batch: Sequence[np.ndarray | torch.Tensor], dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T, dim) zero-padded float tensor and its (B, T) mask."""
    t_max = max(len(x) for x in batch)
    out = torch.zeros(len(batch), t_max, dim)
    mask = torch.zeros(len(batch), t_max, dtype=torch.bool)
    for i, x in enumerate(batch):
        out[i, : len(x)] = torch.as_tensor(x, dtype=torch.float32)
        mask[i, : len(x)] = True
    return out, mask


def pad_tags(tags: Sequence[Sequence[int]]) -> torch.Tensor:
    t_max = max(len(t) for t in tags)
    out = torch.zeros(len(tags), t_max, dtype=torch.long)
    for i, t in enumerate(tags):
        out[i, : len(t)] = torch.as_tensor(t, dtype=torch.long)
    return out


class DeidHead(nn.Module):
    """BiLSTM then per-tag emissions and the project's CRF layer."""

    def __init__(self, input_dim: int, hidden: int = 64) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, N_TAGS)
        self.crf = CRF(N_TAGS)

    def emissions(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.lstm(x)[0])

    def loss(self, x: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.crf(self.emissions(x), tags, mask)

    def decode(self, x: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        return self.crf.viterbi(self.emissions(x), mask)


@dataclass(frozen=True)
class TokenScores:
    precision: float
    recall: float
    f1: float

    def to_dict(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


def token_scores(gold: Sequence[Sequence[int]], pred: Sequence[Sequence[int]]) -> TokenScores:
    """Binary token precision, recall and F1 (a token is PHI when its tag is B or I)."""
    tp = fp = fn = 0
    for g_seq, p_seq in zip(gold, pred, strict=True):
        for g, p in zip(g_seq, p_seq, strict=True):
            tp += g > 0 and p > 0
            fp += g == 0 and p > 0
            fn += g > 0 and p == 0
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return TokenScores(precision, recall, f1)


def train_probe(
    inputs: Sequence[np.ndarray],
    tags: Sequence[Sequence[int]],
    *,
    epochs: int = 3,
    hidden: int = 64,
    batch_size: int = 32,
    lr: float = 0.005,
    seed: int = 1,
) -> DeidHead:
    """A ``DeidHead`` trained on fixed vectors ``inputs`` (one (T, D) array per sequence)."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    dim = int(inputs[0].shape[1])
    model = DeidHead(dim, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    order = list(range(len(inputs)))
    model.train()
    for _ in range(epochs):
        rng.shuffle(order)
        for b in range(0, len(order), batch_size):
            idx = order[b : b + batch_size]
            x, mask = pad([inputs[i] for i in idx], dim)
            loss = model.loss(x, pad_tags([tags[i] for i in idx]), mask)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
    return model


@torch.no_grad()
def predict(model: DeidHead, inputs: Sequence[np.ndarray], batch_size: int = 64) -> list[list[int]]:
    model.eval()
    dim = int(inputs[0].shape[1])
    out: list[list[int]] = []
    for b in range(0, len(inputs), batch_size):
        x, mask = pad(inputs[b : b + batch_size], dim)
        out.extend(model.decode(x, mask))
    return out
