"""Deep affix features: each token's first and last ``n`` characters, embedded and read by a small BiLSTM.

``kind`` picks the affixes read: ``both`` (default), ``prefix`` only (as CEDI) or ``suffix`` only.

Only affixes seen at least ``min_count`` times in training get their own embedding (rare ones share the
unknown vector), so the block learns productive morphology (name endings, date words) instead of memorising.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import torch
from torch import nn

from clinideid.detect.neural.vocab import Vocab


def prefix(token: str, n: int = 3) -> str:
    return token[:n].lower()


def suffix(token: str, n: int = 3) -> str:
    return token[-n:].lower()


def build_affix_vocabs(
    sequences: Iterable[Sequence[str]], n: int = 3, min_count: int = 20
) -> tuple[Vocab, Vocab]:
    """Prefix and suffix vocabularies of the affixes seen at least ``min_count`` times."""
    pre: Counter[str] = Counter()
    suf: Counter[str] = Counter()
    for tokens in sequences:
        for tok in tokens:
            pre[prefix(tok, n)] += 1
            suf[suffix(tok, n)] += 1
    return Vocab.from_counts(pre, min_count), Vocab.from_counts(suf, min_count)


class AffixBiLSTM(nn.Module):
    """Prefix and/or suffix ids (B, T) -> a BiLSTM over the token sequence (B, T, 2 * hidden)."""

    def __init__(
        self, n_prefixes: int, n_suffixes: int, dim: int = 20, hidden: int = 25, kind: str = "both"
    ) -> None:
        super().__init__()
        if kind not in ("both", "prefix", "suffix"):
            raise ValueError(f"unknown affix kind {kind!r}; choose both, prefix or suffix")
        self.kind = kind
        self.prefix = nn.Embedding(n_prefixes, dim, padding_idx=0) if kind != "suffix" else None
        self.suffix = nn.Embedding(n_suffixes, dim, padding_idx=0) if kind != "prefix" else None
        n_inputs = 2 if kind == "both" else 1
        self.lstm = nn.LSTM(n_inputs * dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden

    def forward(self, prefixes: torch.Tensor, suffixes: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        parts = []
        if self.prefix is not None:
            parts.append(self.prefix(prefixes))
        if self.suffix is not None:
            parts.append(self.suffix(suffixes))
        return run_packed(self.lstm, torch.cat(parts, dim=2), mask)


def run_packed(lstm: nn.Module, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """An RNN over left-aligned padded sequences: padding neither feeds nor changes the real positions."""
    lengths = mask.long().sum(1).clamp(min=1).cpu()
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, _ = lstm(packed)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
    return out
