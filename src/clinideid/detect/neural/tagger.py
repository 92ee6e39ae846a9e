"""The neural tagger as a usable model: vocabularies + network, windows, batched inference, artifacts.

Documents are tokenized with ``clinideid.text.tokenize`` and read in windows: sentence-free sliding windows
with overlap (default) or groups of N sentences; overlapping predictions merge by window ownership
(``merge_window_labels``). Inference runs under ``torch.inference_mode`` on batches of windows of similar
length (length bucketing keeps padding small), optionally with dynamic int8 quantisation of the LSTM and
linear layers. Spans come from BIO/BIOES labels through the CRF tagger's ``decode_labels`` /
``labels_to_spans``; each span's score is the mean CRF marginal probability of its tokens' labels.

A model is a directory (``clinideid.models``): ``model.json`` (type ``neural``, label scheme, labels, the
training config with its ``neural`` section) and ``model.pt.gz`` (state dict and vocabularies, loaded with
``torch.load(weights_only=True)``: no pickled code). A model trained with ``keep_vectors`` also holds the
words of its frozen pre-trained table (``frozen_words``) and the table itself (a float16 buffer).
"""

from __future__ import annotations

import io
import logging
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from pydantic import ValidationError
from torch import nn

from clinideid.analysis import tokens_of
from clinideid.detect.base import register_detector
from clinideid.detect.crf import labels_to_spans
from clinideid.detect.learned import LearnedTaggerDetector, check_tagger_options
from clinideid.detect.neural.affix import prefix, suffix
from clinideid.detect.neural.casing import token_casing
from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.model import Batch, NeuralTaggerModule
from clinideid.detect.neural.token_features import (
    CharLMFeatures,
    TokenFeaturizer,
    build_featurizers,
    document_features,
    documents_features,
)
from clinideid.detect.neural.vocab import Vocab, normalize_word
from clinideid.detect.torch_threads import torch_threads
from clinideid.document import Document, Span
from clinideid.errors import ConfigError, ModelError
from clinideid.models import ModelMetadata, load_metadata, read_weights, resolve_model_path
from clinideid.text import Token, Window, sentence_windows, sliding_windows, split_sentences
from clinideid.text.windows import merge_window_labels

log = logging.getLogger(__name__)

MODEL_TYPE = "neural"
WEIGHTS_FILE = "model.pt"
SCHEMES = ("BIO", "BIOES")


@dataclass
class Vocabs:
    """The vocabularies; ``frozen_words`` are the words of the frozen pre-trained table (``keep_vectors``),
    whose ids follow the word vocabulary's."""

    words: Vocab
    chars: Vocab
    prefixes: Vocab
    suffixes: Vocab
    tags: list[str]
    frozen_words: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        start = len(self.words)
        self._frozen_ids = {w: start + k for k, w in enumerate(self.frozen_words)}

    def word_id(self, word: str) -> int:
        """The id of a normalised word: its vocabulary id, else its frozen-table id, else unknown (1)."""
        idx = self.words.stoi.get(word)
        if idx is None:
            return self._frozen_ids.get(word, 1)
        return idx

    def to_dict(self) -> dict[str, list[str]]:
        out = {
            "words": self.words.to_list(),
            "chars": self.chars.to_list(),
            "prefixes": self.prefixes.to_list(),
            "suffixes": self.suffixes.to_list(),
            "tags": list(self.tags),
        }
        if self.frozen_words:
            out["frozen_words"] = list(self.frozen_words)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Vocabs:
        return cls(
            Vocab.from_list(data["words"]),
            Vocab.from_list(data["chars"]),
            Vocab.from_list(data["prefixes"]),
            Vocab.from_list(data["suffixes"]),
            list(data["tags"]),
            list(data.get("frozen_words", [])),
        )


@dataclass(frozen=True)
class PreparedDocuments:
    """Documents tokenized, with their token features (rule marks, LM embeddings) already computed.

    The featurizers are frozen while the tagger trains, so the dev set is prepared once and tagged after
    every epoch without running the rules or the language models again.
    """

    docs: Sequence[Document]
    tokens: list[list[Token]]
    features: list[torch.Tensor | None]


@dataclass
class Example:
    """One window's encoded tokens (and gold tag ids in training)."""

    words: list[int]
    chars: list[list[int]]
    prefixes: list[int]
    suffixes: list[int]
    tags: list[int] | None = None
    features: torch.Tensor | None = None  # (len, F) slice of the document's token features
    casing: list[int] | None = None  # casing ids, when the network reads them

    def __len__(self) -> int:
        return len(self.words)


def clip_chars(token: str, n: int) -> str:
    """At most ``n`` characters of a long token, keeping its start and its end (affix-like signal)."""
    if len(token) <= n:
        return token
    head = (n + 1) // 2
    return token[:head] + token[len(token) - (n - head) :]


def encode_tokens(
    texts: Sequence[str],
    vocabs: Vocabs,
    config: NeuralConfig,
    tags: Sequence[str] | None = None,
    features: torch.Tensor | None = None,
) -> Example:
    tag_index = {t: i for i, t in enumerate(vocabs.tags)}
    return Example(
        words=[vocabs.word_id(normalize_word(t)) for t in texts],
        chars=[vocabs.chars.encode(clip_chars(t, config.max_token_chars)) for t in texts],
        prefixes=[vocabs.prefixes.get(prefix(t, config.affix_n)) for t in texts],
        suffixes=[vocabs.suffixes.get(suffix(t, config.affix_n)) for t in texts],
        tags=None if tags is None else [tag_index.get(t, 0) for t in tags],
        features=features,
        casing=[token_casing(t) for t in texts] if config.casing else None,
    )


def collate(examples: Sequence[Example]) -> Batch:
    """Pad a list of examples into a ``Batch`` (left-aligned, zeros after each sequence)."""
    t = max(len(e) for e in examples)
    c = max((len(ch) for e in examples for ch in e.chars), default=1) or 1

    def pad(rows: list[list[int]]) -> torch.Tensor:
        return torch.tensor([r + [0] * (t - len(r)) for r in rows], dtype=torch.long)

    empty = [0] * c
    chars = [[ch + [0] * (c - len(ch)) for ch in e.chars] + [empty] * (t - len(e)) for e in examples]
    tags = None
    if examples[0].tags is not None:
        tags = pad([e.tags or [] for e in examples])
    features = None
    if examples[0].features is not None:
        features = nn.utils.rnn.pad_sequence(
            [e.features for e in examples if e.features is not None], batch_first=True
        )
    return Batch(
        words=pad([e.words for e in examples]),
        chars=torch.tensor(chars, dtype=torch.long),
        prefixes=pad([e.prefixes for e in examples]),
        suffixes=pad([e.suffixes for e in examples]),
        mask=torch.arange(t).unsqueeze(0) < torch.tensor([len(e) for e in examples]).unsqueeze(1),
        tags=tags,
        features=features,
        casing=None if examples[0].casing is None else pad([e.casing or [] for e in examples]),
    )


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (length bucketing), in a deterministic order."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    return [order[k : k + batch_size] for k in range(0, len(order), batch_size)]


def document_windows(
    text: str,
    tokens: Sequence[Token],
    mode: str = "sliding",
    size: int = 200,
    overlap: int = 20,
    sentences: int = 1,
) -> list[Window]:
    """The token windows the tagger reads in a document."""
    if mode == "sliding":
        return sliding_windows(len(tokens), size, overlap)
    if mode == "sentences":
        return sentence_windows(tokens, split_sentences(text), sentences, max_tokens=size)
    raise ConfigError(f"unknown window mode {mode!r}; choose sliding or sentences")


def rules_spec(config: NeuralConfig) -> dict[str, Any] | None:
    """The rule detector spec of a config whose ``rules`` was resolved (``True`` needs a language first)."""
    if config.rules is True:
        raise ConfigError(
            "neural.rules: true needs the training language to pick the rule packs; give a detector spec "
            "such as {type: rules, language: es}"
        )
    return dict(config.rules) if config.rules else None


def config_featurizers(config: NeuralConfig, base: Path | None = None) -> list[TokenFeaturizer]:
    """The featurizers of a config; relative character-LM paths are inside the model directory ``base``."""
    return build_featurizers(rules_spec(config), config.charlm, base)


def build_module(
    config: NeuralConfig, vocabs: Vocabs, featurizers: Sequence[TokenFeaturizer] = ()
) -> NeuralTaggerModule:
    return NeuralTaggerModule(
        config,
        n_words=len(vocabs.words),
        n_frozen_words=len(vocabs.frozen_words),
        n_chars=len(vocabs.chars),
        n_prefixes=len(vocabs.prefixes),
        n_suffixes=len(vocabs.suffixes),
        n_tags=len(vocabs.tags),
        feature_dims=[(f.name, f.dim) for f in featurizers],
        charlm_forward_dim=next((f.forward_dim for f in featurizers if isinstance(f, CharLMFeatures)), None),
    )


def quantize_dynamic(module: nn.Module) -> nn.Module:
    """Dynamic int8 quantisation of LSTM, GRU and linear layers (CPU inference only)."""
    with warnings.catch_warnings():  # torch.ao quantisation is deprecated in favour of torchao, still works
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        from torch.ao.quantization import quantize_dynamic as _quantize

        return _quantize(module, {nn.LSTM, nn.GRU, nn.Linear}, dtype=torch.qint8)


class NeuralModel:
    """A trained network with its vocabularies and window settings."""

    def __init__(
        self,
        config: NeuralConfig,
        vocabs: Vocabs,
        module: NeuralTaggerModule | None = None,
        *,
        metadata: ModelMetadata | None = None,
        window_size: int = 200,
        window_overlap: int = 20,
        batch_size: int = 32,
        featurizers: Sequence[TokenFeaturizer] | None = None,
        threads: int | None = None,
    ) -> None:
        self.config = config
        self.vocabs = vocabs
        self.featurizers = list(featurizers) if featurizers is not None else config_featurizers(config)
        self.module = module if module is not None else build_module(config, vocabs, self.featurizers)
        self.metadata = metadata
        self.window_size = window_size
        self.window_overlap = window_overlap
        self.batch_size = batch_size
        self.threads = threads  # torch threads while tagging (None: leave torch's setting)
        self._infer: nn.Module = self.module
        self._lock = threading.Lock()
        if config.quantize:
            self.quantize()

    @property
    def name(self) -> str:
        return self.metadata.name if self.metadata is not None else "neural"

    def quantize(self) -> None:
        """Use a dynamically int8-quantised copy of the network for inference."""
        self._infer = quantize_dynamic(self.module)
        self._infer.eval()

    # -- encoding ---------------------------------------------------------------------------------------

    def windows(self, text: str, tokens: Sequence[Token]) -> list[Window]:
        return document_windows(
            text,
            tokens,
            self.config.windows,
            self.window_size,
            self.window_overlap,
            self.config.sentences_per_window,
        )

    def encode(
        self,
        texts: Sequence[str],
        tags: Sequence[str] | None = None,
        features: torch.Tensor | None = None,
    ) -> Example:
        return encode_tokens(texts, self.vocabs, self.config, tags, features)

    def document_features(self, doc: Document, tokens: Sequence[Token]) -> torch.Tensor | None:
        """The featurizers' ``(len(tokens), F)`` features of a whole document (``None`` without any)."""
        return document_features(self.featurizers, doc, tokens)

    def documents_features(
        self, docs: Sequence[Document], tokens: Sequence[Sequence[Token]]
    ) -> list[torch.Tensor | None]:
        """``document_features`` of several documents (language models read them in batches)."""
        return documents_features(self.featurizers, docs, tokens)

    def encode_document(
        self,
        doc: Document,
        tokens: Sequence[Token],
        labels: Sequence[str] | None = None,
        features: torch.Tensor | None = None,
    ) -> tuple[list[Window], list[Example]]:
        """The windows of a document and their encoded examples (with gold tags when ``labels``).

        ``features`` are the document's token features when already computed (``documents_features``).
        """
        wins = self.windows(doc.text, tokens)
        feats = (
            features if features is not None or not self.featurizers else self.document_features(doc, tokens)
        )
        texts = [t.text for t in tokens]
        examples = [
            self.encode(
                texts[w.start : w.end],
                None if labels is None else labels[w.start : w.end],
                None if feats is None else feats[w.start : w.end],
            )
            for w in wins
        ]
        return wins, examples

    # -- inference --------------------------------------------------------------------------------------

    def prepare(self, docs: Sequence[Document]) -> PreparedDocuments:
        """``docs`` tokenized with their token features, for repeated tagging (see ``PreparedDocuments``)."""
        with self._lock, torch_threads(self.threads):
            tokens = [tokens_of(doc) for doc in docs]
            return PreparedDocuments(docs, tokens, self.documents_features(docs, tokens))

    def tag_documents(
        self, docs: Sequence[Document] | PreparedDocuments
    ) -> list[tuple[list[Token], list[str], list[float]]]:
        """Tokens, predicted labels and label marginals of each document, windows batched across documents."""
        prepared = docs if isinstance(docs, PreparedDocuments) else self.prepare(docs)
        with self._lock, torch_threads(self.threads):
            return self._tag_documents(prepared)

    def _tag_documents(self, prepared: PreparedDocuments) -> list[tuple[list[Token], list[str], list[float]]]:
        docs, all_tokens, all_features = prepared.docs, prepared.tokens, prepared.features
        per_doc: list[tuple[list[Token], list[Window]]] = []
        examples: list[Example] = []
        owners: list[tuple[int, int]] = []  # (doc index, window index)
        for d, doc in enumerate(docs):
            tokens = all_tokens[d]
            wins, doc_examples = self.encode_document(doc, tokens, features=all_features[d])
            per_doc.append((tokens, wins))
            examples.extend(doc_examples)
            owners.extend((d, w_idx) for w_idx in range(len(wins)))
        paths: list[list[int]] = [[] for _ in examples]
        probs: list[list[float]] = [[] for _ in examples]
        with torch.inference_mode():
            self._infer.eval()
            for idx in length_batches([len(e) for e in examples], self.batch_size):
                got, pr = self._infer.decode(collate([examples[i] for i in idx]))
                for i, path, p in zip(idx, got, pr, strict=True):
                    paths[i], probs[i] = path, p
        by_doc: list[list[tuple[list[str], list[float]]]] = [[] for _ in docs]
        for (d, _), path, p in zip(owners, paths, probs, strict=True):
            by_doc[d].append(([self.vocabs.tags[k] for k in path], p))
        out = []
        for (tokens, wins), preds in zip(per_doc, by_doc, strict=True):
            labels = merge_window_labels(len(tokens), wins, [lab for lab, _ in preds])
            tok_probs = merge_window_probs(len(tokens), wins, [p for _, p in preds])
            out.append((tokens, labels, tok_probs))
        return out

    def predict_spans(self, docs: Sequence[Document] | PreparedDocuments) -> list[list[Span]]:
        return [labels_to_spans(t, lab, p) for t, lab, p in self.tag_documents(docs)]

    # -- artifacts --------------------------------------------------------------------------------------

    def to_bytes(self, half: bool = False) -> bytes:
        """The weights and vocabularies; ``half`` stores floating-point weights as float16 (half the size,
        loaded back as float32: predictions may differ in rare near-ties, so score the saved model)."""
        state = self.module.state_dict()
        if half:
            state = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
        buf = io.BytesIO()
        torch.save({"state_dict": state, "vocabs": self.vocabs.to_dict()}, buf)
        return buf.getvalue()

    @classmethod
    def from_bytes(
        cls,
        data: bytes,
        config: NeuralConfig,
        *,
        metadata: ModelMetadata | None = None,
        base: Path | None = None,
        **kwargs: Any,
    ) -> NeuralModel:
        """A model from ``to_bytes`` output; ``base`` is the model directory (it holds its character LMs)."""
        where = metadata.name if metadata is not None else "neural model"
        try:
            blob = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
            vocabs = Vocabs.from_dict(blob["vocabs"])
            state = {  # the frozen pre-trained table stays float16
                k: v.float() if v.is_floating_point() and k != "word.frozen" else v
                for k, v in blob["state_dict"].items()
            }
        except Exception as exc:  # torch raises many kinds on a corrupt file
            raise ModelError(
                f"{where}: weights cannot be read ({type(exc).__name__}); the model is corrupt"
            ) from None
        featurizers = config_featurizers(config, base)
        module = build_module(config, vocabs, featurizers)
        try:
            module.load_state_dict(state)
        except RuntimeError:
            raise ModelError(
                f"{where}: the weights do not match the network its training config describes "
                "(different blocks or sizes); re-train the model"
            ) from None
        module.eval()
        return cls(config, vocabs, module, metadata=metadata, featurizers=featurizers, **kwargs)

    @classmethod
    def load(
        cls,
        name_or_path: str | Path,
        *,
        quantize: bool | None = None,
        batch_size: int = 32,
        threads: int | None = None,
    ) -> NeuralModel:
        path = resolve_model_path(name_or_path)
        meta = load_metadata(path, model_type=MODEL_TYPE, label_schemes=SCHEMES)
        cfg = meta.training_config
        try:
            config = NeuralConfig.model_validate(cfg.get("neural", {}))
        except ValidationError as exc:
            raise ModelError(
                f"{path}: training_config.neural cannot be used by this clinideid ({exc.error_count()} "
                "invalid settings); re-train the model"
            ) from None
        if quantize is not None:
            config = config.model_copy(update={"quantize": quantize})
        return cls.from_bytes(
            read_weights(path, meta),
            config,
            metadata=meta,
            base=path,
            window_size=int(cfg.get("window_size", 200)),
            window_overlap=int(cfg.get("window_overlap", 20)),
            batch_size=batch_size,
            threads=threads,
        )


def merge_window_probs(
    n_tokens: int, windows: Sequence[Window], probs: Sequence[Sequence[float]]
) -> list[float]:
    """Per-token probabilities taken from each token's owning window (like ``merge_window_labels``)."""
    out = [1.0] * n_tokens
    for w, p in zip(windows, probs, strict=True):
        for i in range(w.own_start, w.own_end):
            out[i] = p[i - w.start]
    return out


@register_detector("neural")
class NeuralDetector(LearnedTaggerDetector):
    """Spans from a saved neural model.

    ``labels="canonical"`` (default) maps a native-label model onto canonical labels through its scheme's
    mapping; ``labels="model"`` keeps the model's labels. ``min_score`` drops spans whose mean marginal
    probability is lower; ``quantize`` runs a dynamically int8-quantised network (faster on CPU);
    ``batch_size`` is the number of windows per inference batch; ``threads`` the torch CPU threads while
    tagging (default 1: a small BiLSTM gains little from more, and loses a lot on a busy machine; run
    several processes to use more cores; ``null`` leaves torch's own setting).
    """

    needs = ("tokens", "rule_findings")

    kind = "neural"

    def __init__(
        self,
        model: str | Path,
        name: str | None = None,
        labels: str = "canonical",
        min_score: float = 0.0,
        quantize: bool = False,
        batch_size: int = 32,
        threads: int | None = 1,
    ) -> None:
        super().__init__(name)
        check_tagger_options(self.kind, labels, batch_size, threads)
        model_obj = NeuralModel.load(model, quantize=quantize, batch_size=batch_size, threads=threads)
        self._attach(model_obj, str(model), labels, min_score, batch_size, threads)
        self.quantize = quantize

    def to_config(self) -> dict[str, Any]:
        return {**super().to_config(), "quantize": self.quantize}
