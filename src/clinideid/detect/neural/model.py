"""The configurable BiLSTM-CRF network.

token inputs (chars, word, affixes, casing, document-level token features) -> [stack re-projection] ->
[n-gram context] -> BiLSTM (0-2 layers) -> [attention] -> CRF or softmax head; with Cross-View Training,
auxiliary heads read restricted views of the first BiLSTM layer. Padding never changes the outputs of real
tokens: every block masks or packs its inputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

from clinideid.detect.neural.affix import AffixBiLSTM, run_packed
from clinideid.detect.neural.attention import AdditiveAttention
from clinideid.detect.neural.casing import N_CASING_IDS
from clinideid.detect.neural.char_cnn import CharCNN
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
    casing: torch.Tensor | None = None  # (B, T) casing ids (casing.token_casing), with the casing input


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


def reverse_padded(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Each left-aligned sequence of ``x`` (B, T, D) reversed within its length; padding stays in place."""
    t = x.size(1)
    lengths = mask.long().sum(1, keepdim=True)
    pos = torch.arange(t, device=x.device).unsqueeze(0)
    idx = torch.where(pos < lengths, lengths - 1 - pos, pos)
    return x.gather(1, idx.unsqueeze(2).expand_as(x))


class DirectionalLSTM(nn.Module):
    """A bidirectional LSTM layer whose two directions read different inputs.

    The forward direction reads the token-local inputs and the forward character LM's states (each has read
    the text up to the token's end), the backward direction the token-local inputs and the backward LM's
    states (from the token's start on). So the forward half of the output at t depends on the text up to
    token t only, the backward half on the text from token t on: Cross-View Training's restricted views
    stay restricted with contextual string embeddings. The input ``x`` is laid out
    ``[local | forward LM | backward LM]``.
    """

    def __init__(self, local_dim: int, fwd_dim: int, bwd_dim: int, hidden: int) -> None:
        super().__init__()
        self.local_dim, self.fwd_dim = local_dim, fwd_dim
        self.fwd = nn.LSTM(local_dim + fwd_dim, hidden, batch_first=True)
        self.bwd = nn.LSTM(local_dim + bwd_dim, hidden, batch_first=True)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        split = self.local_dim + self.fwd_dim
        fwd_in = x[..., :split]
        bwd_in = torch.cat([x[..., : self.local_dim], x[..., split:]], dim=2)
        h_fwd = run_packed(self.fwd, fwd_in, mask)
        h_bwd = reverse_padded(run_packed(self.bwd, reverse_padded(bwd_in, mask), mask), mask)
        return torch.cat([h_fwd, h_bwd], dim=2)


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
        charlm_forward_dim: int | None = None,
    ) -> None:
        """``charlm_forward_dim``: the forward LM's share of the ``charlm`` features (the first columns)."""
        super().__init__()
        self.config = config
        dim = 0
        self.char: CharBiLSTM | CharCNN | None = None
        self.word = self.affix = self.context = self.attention = None
        if config.char:
            if config.char_encoder == "cnn":
                self.char = CharCNN(n_chars, config.char_dim, config.char_cnn_widths, config.char_cnn_filters)
            else:
                self.char = CharBiLSTM(n_chars, config.char_dim, config.char_hidden)
            dim += self.char.out_dim
        if config.word:
            self.word = WordEmbedding(
                n_words, config.word_dim, freeze=config.freeze_vectors, n_frozen=n_frozen_words
            )
            dim += self.word.out_dim
        if config.affix:
            self.affix = AffixBiLSTM(
                n_prefixes, n_suffixes, config.affix_dim, config.affix_hidden, kind=config.affix_kind
            )
            dim += self.affix.out_dim
        self.casing: nn.Embedding | None = None
        if config.casing:
            self.casing = nn.Embedding(N_CASING_IDS, config.casing_dim, padding_idx=0)
            dim += config.casing_dim
        local_dim = dim  # the token-local inputs come first in the token representation
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
        self.stack_proj: nn.Linear | None = None
        if config.stack_proj:
            self.stack_proj = nn.Linear(dim, config.stack_proj)
            dim = config.stack_proj
        pick = SequenceDropoutRates(config)
        self.dropout = SequenceDropout(pick.input, config.locked_dropout)
        self.out_dropout = SequenceDropout(pick.output, config.locked_dropout)
        if config.context:
            self.context = NgramContext(
                dim, config.context_n, config.context_proj, config.context_hidden, rnn=config.context_rnn
            )
            dim += self.context.out_dim
        # the BiLSTM: one nn.LSTM of 1-2 layers, or (Cross-View Training reading the first of two layers,
        # or with character LMs) a first layer and an upper layer, so the views can read the first one
        self.lstm: nn.Module | None = None
        self.lstm_upper: nn.LSTM | None = None
        self.layer_dropout = nn.Dropout(pick.recurrent)
        hidden, layers = config.lstm_hidden, config.lstm_layers
        directional = config.cvt and bool(config.charlm) and layers > 0
        if layers == 0:
            out_dim = dim
        elif directional or (config.cvt and layers == 2):
            if directional:
                lm_dim = next(d for name, d in self.feature_dims if name == "charlm")
                fwd_dim = charlm_forward_dim if charlm_forward_dim is not None else lm_dim // 2
                self.lstm = DirectionalLSTM(local_dim, fwd_dim, lm_dim - fwd_dim, hidden)
                if local_dim + lm_dim != dim:
                    raise ValueError("cvt with charlm needs the LM states last in the token representation")
            else:
                self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
            if layers == 2:
                self.lstm_upper = nn.LSTM(2 * hidden, hidden, batch_first=True, bidirectional=True)
            out_dim = 2 * hidden
        else:
            self.lstm = nn.LSTM(
                dim,
                hidden,
                num_layers=layers,
                batch_first=True,
                bidirectional=True,
                dropout=pick.recurrent if layers > 1 else 0.0,
            )
            out_dim = 2 * hidden
        if config.attention:
            self.attention = AdditiveAttention(out_dim, dim, config.attention_dim)
        self.emit = nn.Linear(out_dim, n_tags)
        self.crf = CRF(n_tags) if config.head == "crf" else None
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
        if self.casing is not None:
            if batch.casing is None:
                raise ValueError("this network reads casing ids (Batch.casing)")
            parts.append(self.casing(batch.casing))
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
        """The BiLSTM's input ``x`` (B, T, D) and output ``h`` (B, T, 2 * hidden; forward half first).

        Without a BiLSTM (``lstm_layers: 0``) ``h`` is ``x``.
        """
        x, _, h = self.encode_layers(batch)
        return x, h

    def encode_layers(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``x``, the first BiLSTM layer's output and the last layer's output (the same with one layer)."""
        x = self.dropout(self.token_inputs(batch))
        if self.stack_proj is not None:
            x = self.stack_proj(x)
        if self.context is not None:
            x = torch.cat([x, self.context(x, batch.mask)], dim=2)
        if self.lstm is None:
            return x, x, x
        if isinstance(self.lstm, DirectionalLSTM):
            first = self.lstm(x, batch.mask)
        else:
            first = run_packed(self.lstm, x, batch.mask)
        if self.lstm_upper is None:
            return x, first, first
        return x, first, run_packed(self.lstm_upper, self.layer_dropout(first), batch.mask)

    def emissions(self, batch: Batch) -> torch.Tensor:
        """Per-token tag scores (B, T, n_tags)."""
        x, h = self.encode(batch)
        if self.lstm is None:  # x had its dropout already
            return self.emit(h)
        if self.attention is not None:
            h = self.attention(h, x, batch.mask)
        return self.emit(self.out_dropout(h))

    def tag_marginals(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each token's distribution over tags (B, T, n_tags): CRF marginals, or the softmax head's."""
        if self.crf is not None:
            return self.crf.marginals(emissions, mask)
        return torch.softmax(emissions, dim=-1) * mask.unsqueeze(2).to(emissions.dtype)

    @contextmanager
    def dropout_rate(self, p: float | None) -> Iterator[None]:
        """Every token-representation and BiLSTM-output dropout at rate ``p`` inside the block (``None``:
        unchanged); Cross-View Training's noisier student on unlabelled batches."""
        drops = [m for m in self.modules() if isinstance(m, SequenceDropout)]
        previous = [m.p for m in drops]
        if p is not None:
            for m in drops:
                m.p = p
        try:
            yield
        finally:
            for m, old in zip(drops, previous, strict=True):
                m.p = old

    def view_states(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        """The restricted views of Cross-View Training, from the first BiLSTM layer's output ``h``.

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
        _, first, _ = self.encode_layers(batch)
        views = self.view_states(self.out_dropout(first))
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
        """Negative log-likelihood (mean over windows; CRF or per-token softmax), plus a weighted token loss
        when ``class_weights``."""
        if batch.tags is None:
            raise ValueError("a training batch needs tags")
        em = self.emissions(batch)
        if self.crf is not None:
            loss = self.crf(em, batch.tags, batch.mask)
        else:
            tokens = nn.functional.cross_entropy(em[batch.mask], batch.tags[batch.mask], reduction="sum")
            loss = tokens / em.size(0)
        if class_weights is not None:
            ce = nn.functional.cross_entropy(em[batch.mask], batch.tags[batch.mask], weight=class_weights)
            loss = loss + ce
        return loss

    def decode(self, batch: Batch) -> tuple[list[list[int]], list[list[float]]]:
        """Best tag ids per window and each chosen tag's marginal probability."""
        em = self.emissions(batch)
        lengths = batch.mask.long().sum(1).tolist()
        if self.crf is not None:
            paths = self.crf.viterbi(em, batch.mask)
            marg = self.crf.marginals(em, batch.mask)
        else:
            marg = torch.softmax(em, dim=-1)
            best = marg.argmax(dim=-1)
            paths = [best[b, :n].tolist() for b, n in enumerate(lengths)]
        probs = []
        for b, path in enumerate(paths):
            idx = torch.tensor(path, dtype=torch.long)
            probs.append(marg[b, torch.arange(len(path)), idx].tolist())
        return paths, probs


class SequenceDropoutRates:
    """The input / between-layer / output dropout rates of a config (each defaults to ``dropout``)."""

    def __init__(self, config: NeuralConfig) -> None:
        def rate(p: float | None) -> float:
            return config.dropout if p is None else p

        self.input = rate(config.input_dropout)
        self.recurrent = rate(config.recurrent_dropout)
        self.output = rate(config.output_dropout)
