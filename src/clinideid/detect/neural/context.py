"""CEDI-style n-gram context embeddings, sentence-free.

For each token, a forward RNN reads the ``n`` preceding tokens then the token, and a backward RNN reads the
``n`` following tokens (farthest first) then the token; the two final states, concatenated, describe the
token's local context whatever the sentence segmentation. Positions outside the sequence read as zero
vectors.

All windows of a batch are built at once with ``unfold`` over the zero-padded sequence and run as one big
batch of short sequences (only real tokens' windows are run), so the block costs two RNN calls per batch,
not one per token. Inputs are first projected to a small dimension, which keeps those calls cheap. The
inputs are the tagger's own token representations (characters, words, affixes...), not separate
embeddings; the cell is a GRU (default) or an LSTM (``rnn="lstm"``, as CEDI).
"""

from __future__ import annotations

import torch
from torch import nn


class NgramContext(nn.Module):
    """Token representations (B, T, D) -> n-gram context embeddings (B, T, 2 * hidden)."""

    def __init__(
        self, in_dim: int, n: int = 10, proj_dim: int = 64, hidden: int = 50, rnn: str = "gru"
    ) -> None:
        super().__init__()
        if rnn not in ("gru", "lstm"):
            raise ValueError(f"unknown context cell {rnn!r}; choose gru or lstm")
        self.n = n
        self.proj = nn.Linear(in_dim, proj_dim)
        cell = nn.GRU if rnn == "gru" else nn.LSTM
        self.fwd = cell(proj_dim, hidden, batch_first=True)
        self.bwd = cell(proj_dim, hidden, batch_first=True)
        self.out_dim = 2 * hidden

    def windows(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Forward and backward windows (B, T, n + 1, D) for every position (the token last in both)."""
        n, t = self.n, x.size(1)
        x = x * mask.unsqueeze(2).to(x.dtype)  # padding reads like the outside of the sequence
        padded = nn.functional.pad(x, (0, 0, n, n))  # (B, T + 2n, D)
        win = padded.unfold(1, n + 1, 1).transpose(2, 3)  # (B, T + n, n + 1, D)
        fwd = win[:, :t]  # tokens i-n .. i
        bwd = win[:, n : n + t].flip(2)  # tokens i+n .. i
        return fwd, bwd

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        fwd, bwd = self.windows(torch.tanh(self.proj(x)), mask)
        flat_mask = mask.reshape(b * t)
        out = x.new_zeros(b * t, self.out_dim)
        if bool(flat_mask.any()):
            f = fwd.reshape(b * t, self.n + 1, -1)[flat_mask]
            r = bwd.reshape(b * t, self.n + 1, -1)[flat_mask]
            hf = _final_state(self.fwd(f)[1])
            hb = _final_state(self.bwd(r)[1])
            out[flat_mask] = torch.cat([hf[-1], hb[-1]], dim=1)
        return out.view(b, t, self.out_dim)


def _final_state(state: torch.Tensor | tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """The hidden state of a GRU's ``h_n`` or of an LSTM's ``(h_n, c_n)``."""
    return state[0] if isinstance(state, tuple) else state
