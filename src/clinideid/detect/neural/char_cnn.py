"""A character CNN token encoder: convolutions of several widths over a token's characters, max-pooled.

Each convolution is "full" (``width - 1`` zeros on both sides), so a token shorter than the widest filter
still gets a value from every filter; positions that cover only padding are left out of the max, so the
output of a token never depends on the longest token of its batch. Padded tokens give zeros.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class CharCNN(nn.Module):
    """Characters of each token (B, T, C) -> one vector per token (``len(widths) * filters``)."""

    def __init__(
        self, n_chars: int, char_dim: int = 25, widths: Sequence[int] = (2, 3, 4), filters: int = 25
    ):
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.widths = list(widths)
        self.convs = nn.ModuleList(nn.Conv1d(char_dim, filters, w, padding=w - 1) for w in self.widths)
        self.out_dim = len(self.widths) * filters

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        b, t, c = chars.shape
        flat = chars.view(b * t, c)
        lengths = (flat != 0).sum(1)
        out = torch.zeros(b * t, self.out_dim, device=chars.device, dtype=self.embed.weight.dtype)
        real = lengths > 0
        if bool(real.any()):
            emb = self.embed(flat[real]).transpose(1, 2)  # (N, dim, C)
            n_real = lengths[real].unsqueeze(1)
            pooled = []
            for width, conv in zip(self.widths, self.convs, strict=True):
                h = conv(emb)  # (N, filters, C + width - 1); position j covers characters j - width + 1 .. j
                covers = torch.arange(h.size(2), device=h.device).unsqueeze(0) < n_real + width - 1
                h = h.masked_fill(~covers.unsqueeze(1), torch.finfo(h.dtype).min)
                pooled.append(h.max(dim=2).values)
            out[real] = torch.cat(pooled, dim=1)
        return out.view(b, t, self.out_dim)
