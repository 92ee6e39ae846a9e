"""Pre-trained word vectors kept at inference for words outside the trained vocabulary (``keep_vectors``).

Without it, pre-trained vectors only initialise the rows of the training vocabulary, and a test word the
training documents never showed becomes ``<unk>`` even when the vectors know it. With ``keep_vectors``, the
model also stores a frozen copy of the vectors of the ``keep_vectors_top`` most frequent words of the vectors
file that are NOT in the training vocabulary (file order: word2vec and fastText write the most frequent
words first), as a float16 table: at most ``keep_vectors_top * word_dim * 2`` bytes (100,000 words of
dimension 100: 20 MB), plus the word list.

Design: a second, frozen table behind the trainable one, not a summed or concatenated table. A word of the
training vocabulary keeps its id and its trainable row, so training is unchanged for every word seen in
training (with ``word_min_count: 1``, every training word); only words outside the vocabulary change, from
``<unk>`` to ids after the vocabulary that read the frozen table (``WordEmbedding``). The frozen vectors stay
in the pre-trained space, while the trained rows moved during training: they are closest to it with
``freeze_vectors`` or few epochs; the network still gets a word-specific signal instead of one shared
``<unk>``.

fastText ``.bin`` vectors: the table holds each kept word's full fastText vector (its sub-words included),
computed at training time with gensim; inference needs neither gensim nor the ``.bin``. Composing vectors of
words outside the table from character n-grams at inference is not supported: it needs fastText's n-gram
bucket matrix (2,000,000 x dim by default: 400 MB in float16 at dimension 100), far beyond a bounded
table; such words stay ``<unk>``.
"""

from __future__ import annotations

import logging
from collections.abc import Container, Iterator
from pathlib import Path

import torch

from clinideid.detect.neural.embeddings import iter_text_vectors, load_fasttext_keyed_vectors
from clinideid.detect.neural.vocab import normalize_word
from clinideid.errors import ConfigError, InputError

log = logging.getLogger(__name__)


def _ranked_vectors(p: Path) -> Iterator[tuple[str, list[float]]]:
    """``(normalised key, vector)`` of the vectors at ``p``, most frequent first."""
    if p.suffix == ".bin":
        kv = load_fasttext_keyed_vectors(p)
        for word in kv.index_to_key:
            yield normalize_word(word), kv.get_vector(word).tolist()
    else:
        yield from iter_text_vectors(p)


def frequent_vectors(
    path: str | Path, limit: int, skip: Container[str], dim: int
) -> tuple[list[str], torch.Tensor]:
    """The ``limit`` most frequent words of the vectors at ``path`` not in ``skip``, and their float16 table.

    Keys are normalised like the vocabulary; the first vector of a key wins. Text files are read only as
    far as needed.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"word vectors file {p} does not exist")
    words: list[str] = []
    rows: list[list[float]] = []
    seen: set[str] = set()
    for key, vec in _ranked_vectors(p):
        if len(words) >= limit:
            break
        if key in seen or key in skip:
            continue
        if len(vec) != dim:
            raise ConfigError(
                f"pre-trained vectors have dimension {len(vec)} but the word embedding has {dim}; "
                f"set word_dim: {len(vec)} in the neural config"
            )
        seen.add(key)
        words.append(key)
        rows.append(vec)
    table = torch.tensor(rows, dtype=torch.float32).half() if rows else torch.zeros(0, dim).half()
    log.info("kept %d pre-trained vectors for words outside the vocabulary", len(words))
    return words, table
