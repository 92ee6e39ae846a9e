"""Tiny random Hugging Face encoders for transformer tagger tests (built locally, nothing downloaded).

``make_encoder`` builds a WordPiece tokenizer with the ``tokenizers`` library over a vocabulary made
deterministically from a few texts (``corpus_vocab``: frequent words, given word pieces, every character as
a word start and as a ``##`` continuation), wraps it as a fast tokenizer, and saves it with a randomly
initialised 2-layer BERT (hidden size 32, 2 heads) into a folder, as ``save_pretrained`` would for a real
encoder. (The ``tokenizers`` WordPiece *trainer* is not deterministic from run to run, hence the vocabulary.)
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _normalize(text: str) -> str:
    """What the BERT normalizer does with the options used here: lowercase, strip accents."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")


def corpus_vocab(texts: Iterable[str], pieces: Iterable[str] = (), min_count: int = 2) -> list[str]:
    """Words seen ``min_count`` times, ``pieces`` (as starts and ``##`` continuations), all characters."""
    counts: Counter[str] = Counter()
    chars: set[str] = set()
    for text in texts:
        norm = _normalize(text)
        counts.update(re.findall(r"\w+|[^\w\s]", norm))
        chars.update(c for c in norm if not c.isspace())
    words = sorted(w for w, n in counts.items() if n >= min_count and len(w) > 1)
    vocab = words + sorted(set(pieces)) + sorted(f"##{p}" for p in set(pieces))
    vocab += sorted(chars) + sorted(f"##{c}" for c in chars)
    return list(dict.fromkeys(vocab))


def make_tokenizer(vocab: list[str]):
    """A fast BERT-style WordPiece tokenizer over ``vocab`` (special tokens added in front)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    ids = {w: i for i, w in enumerate(dict.fromkeys(SPECIALS + vocab))}
    tok = Tokenizer(models.WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )


def make_encoder(
    path: Path,
    texts: Iterable[str] = (),
    *,
    vocab: list[str] | None = None,
    pieces: Iterable[str] = (),
    max_positions: int = 128,
    seed: int = 0,
) -> Path:
    """Save a tiny random BERT encoder and its tokenizer (over ``vocab`` or ``texts``) in ``path``."""
    import torch
    from transformers import BertConfig, BertModel

    tokenizer = make_tokenizer(vocab if vocab is not None else corpus_vocab(texts, pieces))
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(seed)
    path.mkdir(parents=True, exist_ok=True)
    BertModel(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


def make_roberta_encoder(path: Path, texts: Iterable[str], *, max_positions: int = 66) -> Path:
    """A tiny random RoBERTa with a byte-level BPE tokenizer (vocab.json + merges.txt) in ``path``."""
    import json

    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaModel

    path.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe.train_from_iterator(list(texts), vocab_size=300, special_tokens=specials, show_progress=False)
    bpe.save_model(str(path))
    (path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "RobertaTokenizer"}))
    config = RobertaConfig(
        vocab_size=bpe.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        pad_token_id=1,
    )
    torch.manual_seed(0)
    RobertaModel(config).save_pretrained(str(path))
    return path
