"""The configurable BiLSTM-CRF network.

token inputs (chars, word, affixes, document-level token features) -> [n-gram context] -> BiLSTM (1-2
layers) -> [attention] -> CRF; with Cross-View Training, auxiliary heads read restricted views of the BiLSTM.
Padding never changes the outputs of real tokens: every block masks or packs its inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from clinideid.detect.neural.affix import AffixBiLSTM, run_packed
from clinideid.detect.neural.attention import AdditiveAttention
from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.context import NgramContext
from clinideid.detect.neural.crf import CRF
from clinideid.detect.neural.embeddings import CharBiLSTM, WordEmbedding


@dataclass
class Batch:
    """Padded tensors of a batch of windows; ``mask`` is true on real tokens (left-aligned)."""

    words: torch.Tensor  # (B, T)
    chars: torch.Tensor  # (B, T, C)
    prefixes: torch.Tensor  # (B, T)
    suffixes: torch.Tensor  # (B, T)
    mask: torch.Tensor  # (B, T) bool
    tags: torch.Tensor | None = None  # (B, T)
    features: torch.Tensor | None = None  # (B, T, F) document-level token features (token_features)


class SequenceDropout(nn.Module):
    """Dropout; ``locked`` uses one mask per sequence across all its tokens (variational dropout)."""

    def __init__(self, p: float, locked: bool) -> None:
        super().__init__()
        self.p = p
        self.locked = locked

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        if not self.locked:
            return nn.functional.dropout(x, self.p, True)
        keep = x.new_empty(x.size(0), 1, x.size(2)).bernoulli_(1 - self.p) / (1 - self.p)
        return x * keep


class NeuralTaggerModule(nn.Module):
    def __init__(
        self,
        config: NeuralConfig,
        *,
        n_words: int,
        n_frozen_words: int = 0,
        n_chars: int,
        n_prefixes: int,
        n_suffixes: int,
        n_tags: int,
        feature_dims: Sequence[tuple[str, int]] = (),
    ) -> None:
        super().__init__()
        self.config = config
        dim = 0
        self.char = self.word = self.affix = self.context = self.attention = None
        if config.char:
            self.char = CharBiLSTM(n_chars, config.char_dim, config.char_hidden)
            dim += self.char.out_dim
        if config.word:
            self.word = WordEmbedding(
                n_words, config.word_dim, freeze=config.freeze_vectors, n_frozen=n_frozen_words
            )
            dim += self.word.out_dim
        if config.affix:
            self.affix = AffixBiLSTM(n_prefixes, n_suffixes, config.affix_dim, config.affix_hidden)
            dim += self.affix.out_dim
        # document-level token features (token_features), in featurizer order; the character-LM states can
        # go through a linear re-projection (charlm_proj) before joining the token representation
        self.feature_dims = [(name, d) for name, d in feature_dims]
        self.n_features = sum(d for _, d in self.feature_dims)
        self.charlm_proj: nn.Linear | None = None
        for name, d in self.feature_dims:
            if name == "charlm" and config.charlm_proj:
                self.charlm_proj = nn.Linear(d, config.charlm_proj)
                dim += config.charlm_proj
            else:
                dim += d
        self.dropout = SequenceDropout(config.dropout, config.locked_dropout)
        if config.context:
            self.context = NgramContext(dim, config.context_n, config.context_proj, config.context_hidden)
            dim += self.context.out_dim
        self.lstm = nn.LSTM(
            dim,
            config.lstm_hidden,
            num_layers=config.lstm_layers,
            batch_first=True,
            bidirectional=True,
            dropout=config.dropout if config.lstm_layers > 1 else 0.0,
        )
        out_dim = 2 * config.lstm_hidden
        if config.attention:
            self.attention = AdditiveAttention(out_dim, dim, config.attention_dim)
        self.emit = nn.Linear(out_dim, n_tags)
        self.crf = CRF(n_tags)
        self.cvt_heads: nn.ModuleDict | None = None
        if config.cvt:
            self.cvt_heads = nn.ModuleDict(
                {
                    f"{view}_head": nn.Sequential(
                        nn.Linear(config.lstm_hidden, config.cvt_hidden),
                        nn.ReLU(),
                        nn.Linear(config.cvt_hidden, n_tags),
                    )
                    for view in config.cvt_views
                }
            )

    def token_inputs(self, batch: Batch) -> torch.Tensor:
        """The concatenated token representation (before the context block)."""
        parts = []
        if self.char is not None:
            parts.append(self.char(batch.chars))
        if self.word is not None:
            words = batch.words
            p = self.config.word_dropout
            if self.training and p > 0:
                drop = (torch.rand(words.shape, device=words.device) < p) & batch.mask
                words = words.masked_fill(drop, 1)
            parts.append(self.word(words))
        if self.affix is not None:
            parts.append(self.affix(batch.prefixes, batch.suffixes, batch.mask))
        if self.n_features:
            if batch.features is None or batch.features.size(2) != self.n_features:
                raise ValueError(f"this network needs {self.n_features} token features per token")
            parts.extend(self.feature_parts(batch.features))
        return torch.cat(parts, dim=2)

    def feature_parts(self, features: torch.Tensor) -> list[torch.Tensor]:
        """The featurizers' slices of ``features``, the character-LM one re-projected when configured."""
        if self.charlm_proj is None:
            return [features]
        parts, at = [], 0
        for name, d in self.feature_dims:
            block = features[..., at : at + d]
            parts.append(self.charlm_proj(block) if name == "charlm" else block)
            at += d
        return parts

    def encode(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The BiLSTM's input ``x`` (B, T, D) and output ``h`` (B, T, 2 * hidden; forward half first)."""
        x = self.dropout(self.token_inputs(batch))
        if self.context is not None:
            x = torch.cat([x, self.context(x, batch.mask)], dim=2)
        return x, run_packed(self.lstm, x, batch.mask)

    def emissions(self, batch: Batch) -> torch.Tensor:
        """Per-token tag scores (B, T, n_tags)."""
        x, h = self.encode(batch)
        if self.attention is not None:
            h = self.attention(h, x, batch.mask)
        return self.emit(self.dropout(h))

    def view_states(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        """The restricted views of Cross-View Training, from a one-layer BiLSTM's output ``h``.

        ``forward``: the forward state at t (tokens <= t); ``backward``: the backward state at t (tokens >= t);
        ``future``: the forward state at t-1 (tokens < t, the token itself unseen); ``past``: the backward
        state at t+1 (tokens > t). Outside the sequence the state is zero (padding outputs of a packed RNN
        are zero, so the last real token's ``past`` view is zero too).
        """
        size = self.config.lstm_hidden
        fwd, bwd = h[..., :size], h[..., size:]
        zero = h.new_zeros(h.size(0), 1, size)
        return {
            "forward": fwd,
            "backward": bwd,
            "future": torch.cat([zero, fwd[:, :-1]], dim=1),
            "past": torch.cat([bwd[:, 1:], zero], dim=1),
        }

    def auxiliary_logits(self, batch: Batch) -> dict[str, torch.Tensor]:
        """Tag scores (B, T, n_tags) of every CVT auxiliary head."""
        if self.cvt_heads is None:
            raise ValueError("this network has no cross-view training heads (cvt is off)")
        _, h = self.encode(batch)
        views = self.view_states(self.dropout(h))
        # ModuleDict keys carry a suffix: "forward" is an nn.Module attribute and cannot name a submodule
        return {
            key.removesuffix("_head"): head(views[key.removesuffix("_head")])
            for key, head in self.cvt_heads.items()
        }

    def cvt_loss(self, batch: Batch, teacher: torch.Tensor) -> torch.Tensor:
        """Mean over heads of KL(teacher || head) on real tokens; ``teacher`` (B, T, n_tags) is constant."""
        mask = batch.mask
        losses = []
        for logits in self.auxiliary_logits(batch).values():
            log_q = nn.functional.log_softmax(logits[mask], dim=-1)
            losses.append(nn.functional.kl_div(log_q, teacher[mask], reduction="batchmean"))
        return torch.stack(losses).mean()

    def loss(self, batch: Batch, class_weights: torch.Tensor | None = None) -> torch.Tensor:
        """CRF negative log-likelihood (mean over windows), plus a weighted token loss when ``class_weights``."""
        if batch.tags is None:
            raise ValueError("a training batch needs tags")
        em = self.emissions(batch)
        loss = self.crf(em, batch.tags, batch.mask)
        if class_weights is not None:
            ce = nn.functional.cross_entropy(em[batch.mask], batch.tags[batch.mask], weight=class_weights)
            loss = loss + ce
        return loss

    def decode(self, batch: Batch) -> tuple[list[list[int]], list[list[float]]]:
        """Best tag ids per window and each chosen tag's marginal probability."""
        em = self.emissions(batch)
        paths = self.crf.viterbi(em, batch.mask)
        marg = self.crf.marginals(em, batch.mask)
        probs = []
        for b, path in enumerate(paths):
            idx = torch.tensor(path, dtype=torch.long)
            probs.append(marg[b, torch.arange(len(path)), idx].tolist())
        return paths, probs
