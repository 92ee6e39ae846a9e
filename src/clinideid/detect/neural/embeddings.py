"""Token representations from characters and words.

- ``CharBiLSTM``: a BiLSTM over each token's characters; the final states of both directions, concatenated.
- ``WordEmbedding``: an embedding table over normalised words (``vocab.normalize_word``), optionally
  initialised from pre-trained vectors; words missing from the table map to the unknown vector, unless the
  model keeps a frozen table of pre-trained vectors for words outside its vocabulary (``keep_vectors``,
  see ``clinideid.detect.neural.frozen_vectors``).
- ``load_vectors``: word2vec/GloVe text files (a ``count dim`` header line is optional) or fastText ``.bin``
  files (through gensim, an optional dependency; fastText vectors also cover out-of-vocabulary words from
  their character n-grams, used when the table is built).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn

from clinideid.detect.neural.vocab import Vocab, normalize_word
from clinideid.errors import ConfigError, InputError

log = logging.getLogger(__name__)

#: a lookup of a word's vector (``None`` when unknown) and the vectors' dimension
Vectors = tuple[Callable[[str], list[float] | None], int]


class CharBiLSTM(nn.Module):
    """Characters of each token -> one vector per token (``2 * hidden``)."""

    def __init__(self, n_chars: int, char_dim: int = 25, hidden: int = 25) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.lstm = nn.LSTM(char_dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        """``chars`` (B, T, C) of char ids (0 = padding) -> (B, T, out_dim); padded tokens give zeros."""
        b, t, c = chars.shape
        flat = chars.view(b * t, c)
        lengths = (flat != 0).sum(1)
        out = torch.zeros(b * t, self.out_dim, device=chars.device, dtype=self.embed.weight.dtype)
        real = lengths > 0
        if bool(real.any()):
            emb = self.embed(flat[real])
            packed = nn.utils.rnn.pack_padded_sequence(
                emb, lengths[real].cpu(), batch_first=True, enforce_sorted=False
            )
            _, (h, _) = self.lstm(packed)
            out[real] = torch.cat([h[0], h[1]], dim=1)
        return out.view(b, t, self.out_dim)


class WordEmbedding(nn.Module):
    """An embedding table over a word vocabulary (id 0 padding, id 1 unknown).

    With ``n_frozen`` > 0, ids ``n_words .. n_words + n_frozen - 1`` read a frozen float16 table of
    pre-trained vectors (the buffer ``frozen``, saved with the weights; no gradient, no optimiser state).
    """

    def __init__(self, n_words: int, dim: int = 100, freeze: bool = False, n_frozen: int = 0) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_words, dim, padding_idx=0)
        self.embed.weight.requires_grad_(not freeze)
        self.out_dim = dim
        self.n_words = n_words
        self.frozen: torch.Tensor | None
        self.register_buffer("frozen", torch.zeros(n_frozen, dim, dtype=torch.float16) if n_frozen else None)

    def forward(self, words: torch.Tensor) -> torch.Tensor:
        if self.frozen is None:
            return self.embed(words)
        outside = words >= self.n_words
        out = self.embed(words.masked_fill(outside, 1))
        if not bool(outside.any()):
            return out
        pre = nn.functional.embedding((words - self.n_words).clamp(min=0), self.frozen).to(out.dtype)
        return torch.where(outside.unsqueeze(-1), pre, out)

    @torch.no_grad()
    def load_pretrained(self, vocab: Vocab, vectors: Vectors) -> int:
        """Copy pre-trained vectors into the table for every vocabulary word they cover; returns that count."""
        lookup, dim = vectors
        if dim != self.out_dim:
            raise ConfigError(
                f"pre-trained vectors have dimension {dim} but the word embedding has {self.out_dim}; "
                f"set word_dim: {dim} in the neural config"
            )
        found = 0
        for idx, word in enumerate(vocab.itos[2:], start=2):
            vec = lookup(word)
            if vec is not None:
                self.embed.weight[idx] = torch.tensor(vec, dtype=self.embed.weight.dtype)
                found += 1
        return found


def load_vectors(path: str | Path) -> Vectors:
    """Word vectors from a word2vec/GloVe text file or a fastText ``.bin`` file at ``path``.

    Keys are normalised like the vocabulary (lower case, digits as 0); the first vector of a key wins.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"word vectors file {p} does not exist")
    if p.suffix == ".bin":
        return _load_fasttext_bin(p)
    return _load_text_vectors(p)


def _load_text_vectors(p: Path) -> Vectors:
    table: dict[str, list[float]] = {}
    dim = 0
    for key, vec in iter_text_vectors(p):
        dim = len(vec)
        table.setdefault(key, vec)
    if not table:
        raise InputError(f"word vectors file {p} holds no vectors")
    log.info("loaded %d word vectors of dimension %d", len(table), dim)
    return table.get, dim


def iter_text_vectors(p: Path) -> Iterator[tuple[str, list[float]]]:
    """``(normalised key, vector)`` of each line of a word2vec/GloVe text file, in file order."""
    dim = 0
    try:
        with p.open(encoding="utf-8", errors="strict") as fh:
            for lineno, line in enumerate(fh, start=1):
                parts = line.rstrip("\n").rstrip().split(" ")
                if lineno == 1 and len(parts) == 2 and all(x.isdigit() for x in parts):
                    continue  # word2vec header: count and dimension
                if len(parts) < 2:
                    continue
                try:
                    vec = [float(x) for x in parts[1:]]
                except ValueError:
                    raise InputError(
                        f"word vectors file {p}, line {lineno}: values are not numbers (expected "
                        "'word v1 v2 ...' per line)"
                    ) from None
                if dim == 0:
                    dim = len(vec)
                elif len(vec) != dim:
                    raise InputError(
                        f"word vectors file {p}, line {lineno}: {len(vec)} values where the file's vectors "
                        f"have {dim}"
                    )
                yield normalize_word(parts[0]), vec
    except UnicodeDecodeError:
        raise InputError(
            f"word vectors file {p} is not UTF-8 text; give a word2vec/GloVe text file or a fastText .bin"
        ) from None


def load_fasttext_keyed_vectors(p: Path) -> Any:
    """gensim's ``FastTextKeyedVectors`` of a fastText ``.bin`` file (needs gensim)."""
    try:
        from gensim.models.fasttext import load_facebook_vectors
    except ImportError:
        raise ConfigError("fastText .bin vectors need gensim: pip install gensim") from None
    try:
        return load_facebook_vectors(str(p))
    except Exception as exc:  # gensim raises many kinds on a bad file
        raise InputError(f"{p} is not a fastText .bin model ({type(exc).__name__})") from None


def _load_fasttext_bin(p: Path) -> Vectors:
    kv = load_fasttext_keyed_vectors(p)

    def lookup(word: str) -> list[float] | None:
        try:
            return kv[word].tolist()  # fastText composes unseen words from character n-grams
        except KeyError:
            return None

    return lookup, int(kv.vector_size)
