"""Additive (Bahdanau) attention of each token over the window's token representations.

The query is the token's BiLSTM output ``h_i``; keys and values are the concatenated token representations
``x_j`` (characters, word, affixes, context). ``e_ij = v . tanh(W h_i + U x_j)``, softmax over the real
tokens ``j``, ``c_i = sum_j a_ij x_j``; the output merges ``[h_i; c_i]`` through a tanh layer of the BiLSTM
output's size.
"""

from __future__ import annotations

import torch
from torch import nn


class AdditiveAttention(nn.Module):
    def __init__(self, query_dim: int, value_dim: int, attn_dim: int = 32) -> None:
        super().__init__()
        self.w_query = nn.Linear(query_dim, attn_dim, bias=False)
        self.w_key = nn.Linear(value_dim, attn_dim)
        self.v = nn.Linear(attn_dim, 1, bias=False)
        self.merge = nn.Linear(query_dim + value_dim, query_dim)
        self.out_dim = query_dim

    def forward(self, h: torch.Tensor, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``h`` (B, T, Q), ``x`` (B, T, V), ``mask`` (B, T) -> (B, T, Q)."""
        scores = self.v(torch.tanh(self.w_query(h).unsqueeze(2) + self.w_key(x).unsqueeze(1))).squeeze(3)
        scores = scores.masked_fill(~mask.unsqueeze(1), torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=2)  # (B, T_query, T_key)
        context = torch.bmm(weights, x)
        return torch.tanh(self.merge(torch.cat([h, context], dim=2)))
