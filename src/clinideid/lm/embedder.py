"""Contextual string embeddings (Akbik et al. 2018, Flair) from a forward and a backward character LM.

For a token ``[start, end)`` of a text the embedding is the concatenation of

- the forward LM's state after reading the text up to and including the character at ``end - 1``, and
- the backward LM's state after reading the text reversed from its end down to and including the
  character at ``start`` (its state "before the token's first character" in text order).

Each LM reads the whole document after a boundary symbol, in chunks of ``chunk_len`` characters with the
LSTM state carried from chunk to chunk, so a document of any length takes bounded memory; only the states
at token boundaries are kept. Several documents are read together (sorted by length, padded at the end:
an LSTM reading left to right never sees the padding before a real character, so nothing leaks).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import torch

from clinideid.errors import InputError, ModelError
from clinideid.lm.charlm import CharLM, CharVocab
from clinideid.text import Token


class ContextualStringEmbedder:
    """Token embeddings of dimension ``forward_lm.hidden_size + backward_lm.hidden_size``."""

    def __init__(
        self,
        forward_lm: CharLM,
        backward_lm: CharLM,
        *,
        chunk_len: int = 1000,
        batch_size: int = 16,
    ) -> None:
        if forward_lm.direction != "forward":
            raise ModelError(
                f"the first model ({forward_lm.name}) must be a forward LM, not {forward_lm.direction}"
            )
        if backward_lm.direction != "backward":
            raise ModelError(
                f"the second model ({backward_lm.name}) must be a backward LM, not {backward_lm.direction}"
            )
        if chunk_len < 1 or batch_size < 1:
            raise ValueError("chunk_len and batch_size must be positive")
        self.forward_lm = forward_lm
        self.backward_lm = backward_lm
        self.chunk_len = chunk_len
        self.batch_size = batch_size
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self.forward_lm.hidden_size + self.backward_lm.hidden_size

    def token_embeddings(self, text: str, tokens: Sequence[Token]) -> torch.Tensor:
        """``(len(tokens), dim)`` embeddings of the tokens of one text."""
        return self.token_embeddings_batch([text], [tokens])[0]

    def token_embeddings_batch(
        self, texts: Sequence[str], tokens_list: Sequence[Sequence[Token]]
    ) -> list[torch.Tensor]:
        """The embeddings of each text's tokens, texts read ``batch_size`` at a time."""
        if len(texts) != len(tokens_list):
            raise InputError(f"{len(texts)} texts but {len(tokens_list)} token lists")
        fwd_pos: list[list[int]] = []
        bwd_pos: list[list[int]] = []
        for d, (text, tokens) in enumerate(zip(texts, tokens_list, strict=True)):
            n = len(text)
            for k, t in enumerate(tokens):
                if not 0 <= t.start < t.end <= n:
                    raise InputError(
                        f"document {d}: token {k} has offsets [{t.start}, {t.end}) outside the text "
                        f"(length {n}) or is empty"
                    )
            # position p of a reading = state after the boundary and p characters
            fwd_pos.append([t.end for t in tokens])
            bwd_pos.append([n - t.start for t in tokens])
        with self._lock, torch.inference_mode():
            fwd = self._states(self.forward_lm, texts, fwd_pos)
            bwd = self._states(self.backward_lm, texts, bwd_pos)
        return [torch.cat([f, b], dim=1) for f, b in zip(fwd, bwd, strict=True)]

    def _states(
        self, lm: CharLM, texts: Sequence[str], positions: Sequence[Sequence[int]]
    ) -> list[torch.Tensor]:
        """For each text, ``lm``'s states at ``positions`` of its reading (boundary + oriented text)."""
        out: list[torch.Tensor] = [torch.empty(0, lm.hidden_size) for _ in texts]
        order = sorted((i for i in range(len(texts)) if positions[i]), key=lambda i: (len(texts[i]), i))
        module = lm.module
        was_training = module.training
        module.eval()
        try:
            for b in range(0, len(order), self.batch_size):
                group = order[b : b + self.batch_size]
                ids = [lm.encode_document(texts[i]) for i in group]
                for i, got in zip(group, self._read(lm, ids, [positions[i] for i in group]), strict=True):
                    out[i] = got
        finally:
            module.train(was_training)
        return out

    def _read(self, lm: CharLM, ids: list[list[int]], positions: list[Sequence[int]]) -> list[torch.Tensor]:
        """Read a padded batch chunk by chunk, keeping the outputs at the wanted positions."""
        length = max(len(x) for x in ids)
        batch = torch.full((length, len(ids)), CharVocab.PAD, dtype=torch.long)
        for j, x in enumerate(ids):
            batch[: len(x), j] = torch.tensor(x, dtype=torch.long)
        # (chunk index, row in chunk, column) for each wanted state, kept in token order per document
        wanted = [torch.as_tensor(list(p), dtype=torch.long) for p in positions]
        results = [torch.empty(len(p), lm.hidden_size) for p in positions]
        state = None
        for c0 in range(0, length, self.chunk_len):
            c1 = min(c0 + self.chunk_len, length)
            output, state = lm.module(batch[c0:c1], state)
            for j, pos in enumerate(wanted):
                hit = (pos >= c0) & (pos < c1)
                if hit.any():
                    results[j][hit] = output[pos[hit] - c0, j]
        return results


def load_embedder(
    forward_path: str | Path, backward_path: str | Path, *, chunk_len: int = 1000, batch_size: int = 16
) -> ContextualStringEmbedder:
    """An embedder from two saved character LMs: a forward and a backward one with the same vocabulary kind."""
    fwd = CharLM.load(forward_path)
    bwd = CharLM.load(backward_path)
    if fwd.direction != "forward":
        raise ModelError(
            f"{forward_path} is a {fwd.direction} character LM; give the forward model first, the backward second"
        )
    if bwd.direction != "backward":
        raise ModelError(
            f"{backward_path} is a {bwd.direction} character LM; give the forward model first, the backward second"
        )
    if fwd.vocab.kind != bwd.vocab.kind:
        raise ModelError(
            f"{forward_path} and {backward_path} use different vocabulary types ({fwd.vocab.kind}, {bwd.vocab.kind})"
        )
    lang_f = fwd.metadata.language if fwd.metadata else None
    lang_b = bwd.metadata.language if bwd.metadata else None
    if lang_f and lang_b and lang_f != lang_b:
        raise ModelError(
            f"{forward_path} is a {lang_f!r} model but {backward_path} is a {lang_b!r} one; pair models of one language"
        )
    return ContextualStringEmbedder(fwd, bwd, chunk_len=chunk_len, batch_size=batch_size)
