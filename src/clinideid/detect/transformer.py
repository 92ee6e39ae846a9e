"""Transformer token classification: a local Hugging Face encoder with a linear or CRF head.

Words are ``clinideid.text.tokenize`` tokens. A fast tokenizer reads them with ``is_split_into_words=True``
and its ``word_ids()`` put each word's label on the word's *first* sub-token (the others are ignored in the
loss, ``-100``) and read predictions back from there. A word the tokenizer maps to no sub-token (possible
with odd characters such as a zero-width space) is labelled ``O`` and shifts nothing.

Long documents are read in windows of at most ``max_subtokens`` sub-tokens (special tokens included) that
overlap by ``overlap`` words; every word is *owned* by one window, the one where it sits farthest from an
edge (the rule of ``clinideid.text.windows``), and takes its label and score from there.

Heads: linear (softmax; cross-entropy on first sub-tokens) or CRF (``clinideid.detect.neural.crf.CRF`` over
the word-level sequence gathered from the first sub-tokens). A span's score is the mean probability of its
words' chosen labels (softmax, or CRF marginals).

A model is a directory (``clinideid.models``): ``model.json`` (type ``transformer``, label scheme, labels,
the training config with its ``transformer`` section), ``head.pt.gz`` (head weights and tag list, loaded
with ``torch.load(weights_only=True)``) and ``encoder/`` (the fine-tuned encoder and its tokenizer, written
by ``save_pretrained``). Encoders are only ever loaded from local folders (``local_files_only=True``).

``transformers`` is an optional dependency (``clinideid[transformers]``): this module imports without it
and says how to install it when a model is built or loaded.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from pydantic import ValidationError
from torch import nn
from torch.nn import functional as F

from clinideid.analysis import tokens_of
from clinideid.detect.base import register_detector
from clinideid.detect.crf import EncodeStats, encode_spans, labels_to_spans
from clinideid.detect.learned import LearnedTaggerDetector, check_tagger_options
from clinideid.detect.neural.crf import CRF
from clinideid.detect.neural.tagger import length_batches, merge_window_probs
from clinideid.detect.torch_threads import torch_threads as _threads
from clinideid.document import Document, Span
from clinideid.errors import ConfigError, ModelError
from clinideid.models import ModelMetadata, load_metadata, read_weights, resolve_model_path, save_model
from clinideid.text import Token, Window, tokenize
from clinideid.text.windows import assign_ownership, merge_window_labels
from clinideid.train.config import TransformerConfig

log = logging.getLogger(__name__)

MODEL_TYPE = "transformer"
HEAD_FILE = "head.pt"
ENCODER_DIR = "encoder"
SCHEMES = ("BIO", "BIOES")
IGNORE = -100  # label of sub-tokens the loss skips (continuations, special tokens)
#: model types whose position ids start after the padding index (two positions fewer usable)
_OFFSET_POSITIONS = {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "data2vec-text"}
INSTALL_HINT = "install clinideid[transformers] (pip install transformers)"


def require_transformers() -> Any:
    """The ``transformers`` module, or a ``ModelError`` saying how to install it."""
    try:
        import transformers
    except ImportError:
        raise ModelError(f"the transformer tagger needs the transformers package: {INSTALL_HINT}") from None
    return transformers


@contextlib.contextmanager
def _quiet(transformers: Any) -> Iterator[None]:
    """No progress bars from transformers while loading (they would land in CLI output)."""
    tl = transformers.utils.logging
    was_enabled = tl.is_progress_bar_enabled()
    tl.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            tl.enable_progress_bar()


# -- encoder and tokenizer --------------------------------------------------------------------------------


def check_encoder_dir(path: str | Path) -> Path:
    """``path`` as a local encoder folder; a hub name or a missing folder is a ``ModelError``."""
    p = Path(path)
    if not p.is_dir():
        raise ModelError(
            f"encoder {str(path)!r} is not a local directory: give the folder of a Hugging Face encoder "
            "(config.json, weights and tokenizer files, as written by save_pretrained); clinideid never "
            "downloads models"
        )
    if not (p / "config.json").is_file():
        raise ModelError(
            f"encoder directory {p} has no config.json: give the folder a Hugging Face model was saved in "
            "with save_pretrained"
        )
    return p


def load_tokenizer(path: str | Path) -> Any:
    """The fast tokenizer saved in ``path`` (byte-level/sentencepiece ones with ``add_prefix_space``)."""
    tr = require_transformers()
    p = check_encoder_dir(path)
    with _quiet(tr):
        try:
            tok = tr.AutoTokenizer.from_pretrained(str(p), local_files_only=True)
            # tokenizers that take add_prefix_space (RoBERTa, XLM-R, DeBERTa...) need it to read words as
            # they are read inside a sentence, after a space
            params = inspect.signature(type(tok).__init__).parameters
            if "add_prefix_space" in params and not getattr(tok, "add_prefix_space", True):
                tok = tr.AutoTokenizer.from_pretrained(str(p), local_files_only=True, add_prefix_space=True)
        except Exception as exc:  # transformers raises OSError, ValueError, KeyError... on a bad folder
            raise ModelError(
                f"encoder directory {p}: the tokenizer cannot be loaded ({type(exc).__name__}); the folder "
                "needs the tokenizer files saved with save_pretrained (tokenizer.json)"
            ) from None
    if not getattr(tok, "is_fast", False):
        raise ModelError(
            f"encoder directory {p}: the tokenizer is not a fast (Rust) tokenizer; the transformer tagger "
            "needs one (a tokenizer.json) to map words to sub-tokens"
        )
    return tok


def load_encoder(path: str | Path) -> nn.Module:
    """The encoder (``AutoModel``) saved in ``path``; encoder-decoder models are refused."""
    tr = require_transformers()
    p = check_encoder_dir(path)
    with _quiet(tr):
        try:
            config = tr.AutoConfig.from_pretrained(str(p), local_files_only=True)
            if getattr(config, "is_encoder_decoder", False):
                raise ModelError(
                    f"encoder directory {p} holds an encoder-decoder model ({config.model_type}); "
                    "give an encoder (BERT, RoBERTa, XLM-R, DeBERTa...)"
                )
            encoder = tr.AutoModel.from_pretrained(str(p), local_files_only=True)
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(
                f"encoder directory {p}: the model cannot be loaded ({type(exc).__name__}); it needs "
                "config.json and weights saved with save_pretrained"
            ) from None
    if not isinstance(getattr(encoder.config, "hidden_size", None), int):
        raise ModelError(f"encoder directory {p}: its config has no hidden_size; give a text encoder")
    return encoder.float()  # half-precision checkpoints load as such: fine-tune and run in float32 on CPU


def position_limit(encoder: nn.Module, tokenizer: Any) -> int | None:
    """The longest input the encoder and tokenizer accept (None when neither says)."""
    limits = []
    cfg = encoder.config  # type: ignore[attr-defined]
    n_pos = getattr(cfg, "max_position_embeddings", None)
    if isinstance(n_pos, int) and n_pos > 0:
        limits.append(n_pos - 2 if cfg.model_type in _OFFSET_POSITIONS else n_pos)
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    return min(limits) if limits else None


# -- words, sub-tokens and windows ------------------------------------------------------------------------


def align_labels(word_ids: Sequence[int | None], word_tags: Sequence[int]) -> list[int]:
    """Sub-token labels: each word's tag on its first sub-token, ``IGNORE`` on the others and on specials."""
    out = []
    seen: set[int] = set()
    for w in word_ids:
        if w is None or w in seen:
            out.append(IGNORE)
        else:
            seen.add(w)
            out.append(word_tags[w])
    return out


def first_subtokens(word_ids: Sequence[int | None]) -> tuple[list[int], list[int]]:
    """Positions of each word's first sub-token and the (window-relative) words they belong to."""
    positions: list[int] = []
    words: list[int] = []
    seen: set[int] = set()
    for pos, w in enumerate(word_ids):
        if w is not None and w not in seen:
            seen.add(w)
            positions.append(pos)
            words.append(w)
    return positions, words


def subtoken_counts(tokenizer: Any, words: Sequence[str]) -> list[int]:
    """How many sub-tokens the tokenizer gives each word (0 for words it drops)."""
    counts = [0] * len(words)
    if not words:
        return counts
    enc = tokenizer(list(words), is_split_into_words=True, add_special_tokens=False, verbose=False)
    for w in enc.word_ids():
        if w is not None:
            counts[w] += 1
    return counts


def subtoken_windows(counts: Sequence[int], budget: int, overlap: int) -> list[Window]:
    """Word windows holding at most ``budget`` sub-tokens each, consecutive ones sharing ``overlap`` words.

    A word longer than the budget is a window of its own (the encoder reads its first sub-tokens). The
    overlap shrinks when its words would take more than half the budget, so every window moves forward.
    Ownership is the rule of ``clinideid.text.windows``: a shared word belongs to the window where it is
    farthest from an edge.
    """
    if budget < 1:
        raise ConfigError(f"a window must hold at least one sub-token besides the special ones, got {budget}")
    if overlap < 0:
        raise ConfigError(f"window overlap must be >= 0 words, got {overlap}")
    n = len(counts)
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end, total = start, 0
        while end < n and (end == start or total + counts[end] <= budget):
            total += counts[end]
            end += 1
        if spans and end <= spans[-1][1]:  # the overlap left no room: start after the previous window
            start = spans[-1][1]
            continue
        spans.append((start, end))
        if end >= n:
            break
        k, shared = 0, 0
        while k < overlap and end - k - 1 > start and shared + counts[end - k - 1] <= budget // 2:
            shared += counts[end - k - 1]
            k += 1
        start = end - k
    return assign_ownership(spans)


@dataclass
class Example:
    """One window as encoder input: sub-token ids, first sub-token positions, sub-token labels (training)."""

    input_ids: list[int]
    first: list[int]  # position of the first sub-token of each word that has one
    words: list[int]  # the window-relative index of each of those words
    labels: list[int] | None = None  # sub-token aligned, IGNORE except on first sub-tokens

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass
class Batch:
    input_ids: torch.Tensor  # (B, S)
    attention_mask: torch.Tensor  # (B, S)
    first: torch.Tensor  # (B, W) first sub-token positions, 0 on padding
    word_mask: torch.Tensor  # (B, W) left-aligned
    tags: torch.Tensor | None = None  # (B, W) word tags, 0 on padding


def collate(examples: Sequence[Example], pad_id: int) -> Batch:
    s = max(len(e) for e in examples)
    w = max(len(e.first) for e in examples)
    ids = torch.full((len(examples), s), pad_id, dtype=torch.long)
    attention = torch.zeros((len(examples), s), dtype=torch.long)
    first = torch.zeros((len(examples), w), dtype=torch.long)
    word_mask = torch.zeros((len(examples), w), dtype=torch.bool)
    tags = torch.zeros((len(examples), w), dtype=torch.long) if examples[0].labels is not None else None
    for b, e in enumerate(examples):
        ids[b, : len(e)] = torch.tensor(e.input_ids, dtype=torch.long)
        attention[b, : len(e)] = 1
        first[b, : len(e.first)] = torch.tensor(e.first, dtype=torch.long)
        word_mask[b, : len(e.first)] = True
        if tags is not None and e.labels is not None:
            tags[b, : len(e.first)] = torch.tensor([e.labels[p] for p in e.first], dtype=torch.long)
    return Batch(ids, attention, first, word_mask, tags)


# -- the network ------------------------------------------------------------------------------------------


class TransformerTaggerModule(nn.Module):
    """Encoder, dropout, linear emissions over first sub-tokens, and an optional CRF."""

    def __init__(self, encoder: nn.Module, n_tags: int, *, dropout: float = 0.1, crf: bool = False) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(encoder.config.hidden_size, n_tags)  # type: ignore[attr-defined]
        self.crf = CRF(n_tags) if crf else None

    def head_state(self) -> dict[str, Any]:
        return {
            "classifier": self.classifier.state_dict(),
            "crf": self.crf.state_dict() if self.crf is not None else None,
        }

    def emissions(self, batch: Batch) -> torch.Tensor:
        """Word-level tag scores (B, W, K) read at each word's first sub-token."""
        hidden = self.encoder(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask
        ).last_hidden_state
        index = batch.first.unsqueeze(2).expand(-1, -1, hidden.size(2))
        return self.classifier(self.dropout(hidden.gather(1, index)))

    def loss(self, batch: Batch) -> torch.Tensor:
        assert batch.tags is not None
        em = self.emissions(batch)
        if self.crf is not None:
            return self.crf(em, batch.tags, batch.word_mask)
        return F.cross_entropy(em[batch.word_mask], batch.tags[batch.word_mask])

    def decode(self, batch: Batch) -> tuple[list[list[int]], list[list[float]]]:
        """Best tags and their probabilities (softmax, or CRF marginals) per window, at real length."""
        em = self.emissions(batch)
        lengths = batch.word_mask.long().sum(1).tolist()
        if self.crf is not None:
            paths = self.crf.viterbi(em, batch.word_mask)
            marg = self.crf.marginals(em, batch.word_mask)
            probs = [
                marg[b, torch.arange(len(p)), torch.tensor(p, dtype=torch.long)].tolist() if p else []
                for b, p in enumerate(paths)
            ]
            return paths, probs
        best, idx = em.softmax(-1).max(-1)
        return (
            [row[:n] for row, n in zip(idx.tolist(), lengths, strict=True)],
            [row[:n] for row, n in zip(best.tolist(), lengths, strict=True)],
        )


# -- the model --------------------------------------------------------------------------------------------


class TransformerModel:
    """A tokenizer, a tagging network and its tags, reading documents in sub-token windows."""

    def __init__(
        self,
        config: TransformerConfig,
        tags: Sequence[str],
        tokenizer: Any,
        module: TransformerTaggerModule,
        *,
        metadata: ModelMetadata | None = None,
        batch_size: int = 16,
        threads: int | None = None,
    ) -> None:
        self.config = config
        self.tags = list(tags)
        self.tokenizer = tokenizer
        self.module = module
        self.metadata = metadata
        self.batch_size = batch_size
        self.threads = threads
        self._lock = threading.Lock()
        limit = position_limit(module.encoder, tokenizer)
        self.max_length = config.max_subtokens if limit is None else min(config.max_subtokens, limit)
        if self.max_length < config.max_subtokens:
            log.warning(
                "max_subtokens %d is more than the encoder reads; windows hold %d sub-tokens",
                config.max_subtokens,
                self.max_length,
            )
        self.budget = self.max_length - tokenizer.num_special_tokens_to_add(pair=False)
        if self.budget < 1:
            raise ConfigError(f"max_subtokens {self.max_length} leaves no room besides the special tokens")
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else 0

    @property
    def name(self) -> str:
        return self.metadata.name if self.metadata is not None else MODEL_TYPE

    @classmethod
    def from_encoder(
        cls, config: TransformerConfig, tags: Sequence[str], *, batch_size: int = 16
    ) -> TransformerModel:
        """A new tagger on the pre-trained encoder ``config.encoder`` (head randomly initialised)."""
        if not config.encoder:
            raise ConfigError(
                "model: transformer needs an encoder: pass --encoder PATH or set transformer.encoder in the "
                "training config to a local Hugging Face model folder"
            )
        tokenizer = load_tokenizer(config.encoder)
        encoder = load_encoder(config.encoder)
        module = TransformerTaggerModule(encoder, len(tags), dropout=config.dropout, crf=config.crf)
        return cls(config, tags, tokenizer, module, batch_size=batch_size, threads=config.threads)

    # -- encoding ---------------------------------------------------------------------------------------

    def windows(self, words: Sequence[str]) -> list[Window]:
        return subtoken_windows(subtoken_counts(self.tokenizer, words), self.budget, self.config.overlap)

    def encode_windows(
        self, windows: Sequence[Sequence[str]], tags: Sequence[Sequence[int]] | None = None
    ) -> list[Example]:
        """Encoder inputs of word windows (one tokenizer call for all), with aligned labels when given."""
        if not windows:
            return []
        enc = self.tokenizer(
            [list(w) for w in windows],
            is_split_into_words=True,
            truncation=True,
            max_length=self.max_length,
            verbose=False,
        )
        out = []
        for k in range(len(windows)):
            word_ids = enc.word_ids(k)
            first, words = first_subtokens(word_ids)
            labels = None if tags is None else align_labels(word_ids, tags[k])
            out.append(Example(list(enc["input_ids"][k]), first, words, labels))
        return out

    def training_examples(self, docs: Sequence[Document], scheme: str) -> tuple[list[Example], EncodeStats]:
        """Windows of the annotated documents with their labels, and what encoding the spans approximated."""
        tag_index = {t: i for i, t in enumerate(self.tags)}
        stats = EncodeStats()
        words_w: list[list[str]] = []
        tags_w: list[list[int]] = []
        for doc in docs:
            tokens = tokenize(doc.text)
            labels, st = encode_spans(tokens, doc.spans, scheme)
            stats.add(st)
            words = [t.text for t in tokens]
            for w in self.windows(words):
                words_w.append(words[w.start : w.end])
                tags_w.append([tag_index.get(lab, 0) for lab in labels[w.start : w.end]])
        examples = [e for e in self.encode_windows(words_w, tags_w) if e.first]
        return examples, stats

    # -- inference --------------------------------------------------------------------------------------

    def predict_examples(self, examples: Sequence[Example]) -> list[tuple[list[int], list[float]]]:
        """Tag ids and probabilities of each example's words, batched by length under inference mode."""
        out: list[tuple[list[int], list[float]]] = [([], []) for _ in examples]
        todo = [i for i, e in enumerate(examples) if e.first]
        with self._lock, _threads(self.threads), torch.inference_mode():
            self.module.eval()
            for batch in length_batches([len(examples[i]) for i in todo], self.batch_size):
                idx = [todo[b] for b in batch]
                paths, probs = self.module.decode(collate([examples[i] for i in idx], self.pad_id))
                for i, path, p in zip(idx, paths, probs, strict=True):
                    out[i] = (path, p)
        return out

    def tag_documents(self, docs: Sequence[Document]) -> list[tuple[list[Token], list[str], list[float]]]:
        """Tokens, predicted labels and label probabilities of each document, windows batched across them."""
        per_doc: list[tuple[list[Token], list[Window]]] = []
        words_w: list[list[str]] = []
        for doc in docs:
            tokens = tokens_of(doc)
            words = [t.text for t in tokens]
            wins = self.windows(words)
            per_doc.append((tokens, wins))
            words_w.extend(words[w.start : w.end] for w in wins)
        examples = self.encode_windows(words_w)
        predicted = self.predict_examples(examples)
        out = []
        k = 0
        for tokens, wins in per_doc:
            labels_w, probs_w = [], []
            for w in wins:
                labels = ["O"] * len(w)  # words without a sub-token stay O
                probs = [1.0] * len(w)
                path, p = predicted[k]
                for word, tag, prob in zip(examples[k].words, path, p, strict=True):
                    labels[word], probs[word] = self.tags[tag], prob
                labels_w.append(labels)
                probs_w.append(probs)
                k += 1
            out.append(
                (
                    tokens,
                    merge_window_labels(len(tokens), wins, labels_w),
                    merge_window_probs(len(tokens), wins, probs_w),
                )
            )
        return out

    def predict_spans(self, docs: Sequence[Document]) -> list[list[Span]]:
        return [labels_to_spans(t, lab, p) for t, lab, p in self.tag_documents(docs)]

    # -- artifacts --------------------------------------------------------------------------------------

    def head_bytes(self) -> bytes:
        buf = io.BytesIO()
        torch.save({**self.module.head_state(), "tags": list(self.tags)}, buf)
        return buf.getvalue()

    def save(
        self,
        directory: str | Path,
        metadata: ModelMetadata,
        *,
        extra_files: Mapping[str, bytes | str] | None = None,
    ) -> Path:
        """Write the model directory: ``encoder/`` (encoder and tokenizer), head weights, ``model.json``."""
        target = Path(directory) / ENCODER_DIR
        target.mkdir(parents=True, exist_ok=True)
        tr = require_transformers()
        with _quiet(tr):
            self.module.encoder.save_pretrained(str(target))  # type: ignore[operator]
            self.tokenizer.save_pretrained(str(target))
        extra = dict(metadata.model_extra or {}).get("encoder") or {}
        meta = metadata.model_copy(update={"weights": HEAD_FILE, "encoder": {**extra, "dir": ENCODER_DIR}})
        self.metadata = meta
        return save_model(directory, meta, self.head_bytes(), extra_files=extra_files)

    @classmethod
    def load(
        cls, name_or_path: str | Path, *, batch_size: int = 16, threads: int | None = None
    ) -> TransformerModel:
        path = resolve_model_path(name_or_path)
        meta = load_metadata(path, model_type=MODEL_TYPE, label_schemes=SCHEMES)
        try:
            config = TransformerConfig.model_validate(meta.training_config.get("transformer", {}))
        except ValidationError as exc:
            raise ModelError(
                f"{path}: training_config.transformer cannot be used by this clinideid ({exc.error_count()} "
                "invalid settings); re-train the model"
            ) from None
        enc_info = (meta.model_extra or {}).get("encoder") or {}
        enc_dir = str(enc_info.get("dir", ENCODER_DIR)) if isinstance(enc_info, dict) else ""
        if not enc_dir or Path(enc_dir).name != enc_dir:
            raise ModelError(f"{path}/model.json: field 'encoder.dir' must be a plain folder name")
        if not (path / enc_dir).is_dir():
            raise ModelError(
                f"encoder folder {path / enc_dir} named in model.json is missing; copy the whole model directory"
            )
        head = _read_head(path, meta)
        tags = head["tags"]
        check_tags(tags, meta, path)
        tokenizer = load_tokenizer(path / enc_dir)
        encoder = load_encoder(path / enc_dir)
        module = TransformerTaggerModule(encoder, len(tags), dropout=config.dropout, crf=config.crf)
        try:
            module.classifier.load_state_dict(head["classifier"])
            if module.crf is not None:
                if head.get("crf") is None:
                    raise RuntimeError("no CRF weights")
                module.crf.load_state_dict(head["crf"])
        except (RuntimeError, TypeError):
            raise ModelError(
                f"{path}: the head weights do not match the encoder and the head its training config "
                "describes (hidden size, tag count or CRF); re-train the model"
            ) from None
        module.eval()
        return cls(config, tags, tokenizer, module, metadata=meta, batch_size=batch_size, threads=threads)


def _read_head(path: Path, meta: ModelMetadata) -> dict[str, Any]:
    try:
        blob = torch.load(io.BytesIO(read_weights(path, meta)), map_location="cpu", weights_only=True)
        if not isinstance(blob, dict) or not isinstance(blob.get("tags"), list) or "classifier" not in blob:
            raise ValueError("unexpected content")
    except ModelError:
        raise
    except Exception as exc:  # torch raises many kinds on a corrupt file
        raise ModelError(
            f"{path}: head weights cannot be read ({type(exc).__name__}); the model is corrupt"
        ) from None
    return blob


def check_tags(tags: Sequence[str], meta: ModelMetadata, path: Path) -> None:
    """The head's tags must be ``O`` plus tags of the scheme over the labels in ``model.json``."""
    prefixes = {"B", "I"} if meta.label_scheme == "BIO" else {"B", "I", "E", "S"}
    labels = set(meta.labels)
    bad = [
        t
        for t in tags
        if t != "O" and (t.partition("-")[0] not in prefixes or t.partition("-")[2] not in labels)
    ]
    if not tags or tags[0] != "O" or bad:
        raise ModelError(
            f"{path}: the head's tags do not match the labels and label_scheme in model.json; the model is "
            "corrupt or was edited: re-train it"
        )


@register_detector("transformer")
class TransformerDetector(LearnedTaggerDetector):
    """Spans from a saved transformer model.

    ``labels="canonical"`` (default) maps a native-label model onto canonical labels through its scheme's
    mapping; ``labels="model"`` keeps the model's labels. ``min_score`` drops spans whose mean label
    probability is lower; ``batch_size`` is the number of windows per inference batch; ``threads`` sets
    torch's CPU threads while tagging (default: torch's own setting).
    """

    needs = ("tokens",)

    kind = "transformer"

    def __init__(
        self,
        model: str | Path,
        name: str | None = None,
        labels: str = "canonical",
        min_score: float = 0.0,
        batch_size: int = 16,
        threads: int | None = None,
    ) -> None:
        super().__init__(name)
        check_tagger_options(self.kind, labels, batch_size, threads)
        model_obj = TransformerModel.load(model, batch_size=batch_size, threads=threads)
        self._attach(model_obj, str(model), labels, min_score, batch_size, threads)
