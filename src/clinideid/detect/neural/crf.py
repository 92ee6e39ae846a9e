"""A linear-chain CRF layer: masked log-likelihood for padded batches and Viterbi decoding.

Masks are left-aligned (``mask[b, :len_b]`` true): padding after a sequence never changes its score.
"""

from __future__ import annotations

import torch
from torch import nn


class CRF(nn.Module):
    """Transition scores between ``n_tags`` tags, with start and end scores."""

    def __init__(self, n_tags: int) -> None:
        super().__init__()
        self.n_tags = n_tags
        self.transitions = nn.Parameter(torch.zeros(n_tags, n_tags))  # [from, to]
        self.start = nn.Parameter(torch.zeros(n_tags))
        self.end = nn.Parameter(torch.zeros(n_tags))
        nn.init.uniform_(self.transitions, -0.1, 0.1)

    def log_likelihood(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Per-sequence log p(tags | emissions): ``emissions`` (B, T, K), ``tags`` (B, T), ``mask`` (B, T)."""
        return self._score(emissions, tags, mask) - self._log_partition(emissions, mask)

    def _score(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        maskf = mask.to(emissions.dtype)
        emit = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # (B, T)
        score = self.start[tags[:, 0]] + (emit * maskf).sum(1)
        trans = self.transitions[tags[:, :-1], tags[:, 1:]]  # (B, T-1)
        score = score + (trans * maskf[:, 1:]).sum(1)
        last = mask.long().sum(1).clamp(min=1) - 1
        return score + self.end[tags.gather(1, last.unsqueeze(1)).squeeze(1)]

    def _log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        alpha = self.start + emissions[:, 0]  # (B, K)
        for t in range(1, emissions.size(1)):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + self.transitions + emissions[:, t].unsqueeze(1), dim=1)
            alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
        return torch.logsumexp(alpha + self.end, dim=1)

    def forward(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean negative log-likelihood over the batch (the training loss)."""
        return -self.log_likelihood(emissions, tags, mask).mean()

    def marginals(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Per-token tag marginal probabilities (B, T, K) by forward-backward."""
        b, t_len, k = emissions.shape
        alphas = []
        alpha = self.start + emissions[:, 0]
        alphas.append(alpha)
        for t in range(1, t_len):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + self.transitions + emissions[:, t].unsqueeze(1), dim=1)
            alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
            alphas.append(alpha)
        lengths = mask.long().sum(1)
        beta = self.end.expand(b, k)
        betas = [beta] * t_len
        for t in range(t_len - 2, -1, -1):
            nxt = torch.logsumexp(self.transitions + (emissions[:, t + 1] + beta).unsqueeze(1), dim=2)
            # positions at or after the last real token keep the end scores
            is_inner = (t < lengths - 1).unsqueeze(1)
            beta = torch.where(is_inner, nxt, self.end.expand(b, k))
            betas[t] = beta
        log_z = torch.logsumexp(alphas[-1] + self.end, dim=1)
        post = torch.stack([a + bt for a, bt in zip(alphas, betas, strict=True)], dim=1)
        return torch.exp(post - log_z.view(b, 1, 1)) * mask.unsqueeze(2)

    def viterbi(self, emissions: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """The best tag sequence of each batch item (lists of its real length)."""
        b, t_len, _ = emissions.shape
        score = self.start + emissions[:, 0]
        history = []
        for t in range(1, t_len):
            cand = score.unsqueeze(2) + self.transitions  # (B, K_from, K_to)
            best, idx = cand.max(dim=1)
            nxt = best + emissions[:, t]
            keep = mask[:, t].unsqueeze(1)
            score = torch.where(keep, nxt, score)
            # padded steps point back to the same tag, so backtracking passes through them unchanged
            ident = torch.arange(self.n_tags, device=emissions.device).expand(b, -1)
            history.append(torch.where(keep, idx, ident))
        score = score + self.end
        best_last = score.argmax(dim=1)
        lengths = mask.long().sum(1).tolist()
        path = [best_last]
        for idx in reversed(history):
            path.append(idx.gather(1, path[-1].unsqueeze(1)).squeeze(1))
        path.reverse()
        full = torch.stack(path, dim=1).tolist()
        return [row[:n] for row, n in zip(full, lengths, strict=True)]
