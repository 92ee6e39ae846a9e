"""Character language models (Flair-style): the network, the character vocabulary, and model artifacts.

A ``CharLM`` reads characters one at a time (``direction="forward"``: left to right; ``"backward"``: the
text reversed) through an embedding, an LSTM (1-2 layers), dropout and a linear decoder that predicts the
next character. Every document is read after a boundary symbol, so the state after the boundary is the
"start of a document" state. The LSTM output at each position (before dropout) is what the contextual
string embeddings use (``clinideid.lm.embedder``).

A model is a directory (``clinideid.models``): ``model.json`` (type ``charlm``; its ``labels`` are the
characters the model predicts, its ``training_config`` holds the network config and the direction) and
``charlm.pt.gz`` (state dict, character list, config and direction, loaded with
``torch.load(weights_only=True)``: no pickled code).
"""

from __future__ import annotations

import io
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from torch import nn

from clinideid.errors import ConfigError, ModelError
from clinideid.models import (
    FORMAT_VERSION,
    ModelMetadata,
    TrainingData,
    load_metadata,
    now_iso,
    package_versions,
    read_weights,
    resolve_model_path,
    save_model,
)

MODEL_TYPE = "charlm"
WEIGHTS_FILE = "charlm.pt"
LABEL_SCHEME = "chars"
#: the vocabulary kind written with a model; embedders only pair models of the same kind
VOCAB_TYPE = "char"
DIRECTIONS = ("forward", "backward")

Direction = Literal["forward", "backward"]
State = tuple[torch.Tensor, torch.Tensor]


class CharVocab:
    """Characters seen often enough in training, after three specials: padding, unknown and boundary.

    The boundary symbol starts every document (and separates documents in training streams); it is not a
    character, so no text can contain it.
    """

    PAD, UNK, BOUNDARY = 0, 1, 2
    SPECIALS = ("<pad>", "<unk>", "<boundary>")
    kind = VOCAB_TYPE

    def __init__(self, chars: Iterable[str]) -> None:
        chars = list(chars)
        for c in chars:
            if not isinstance(c, str) or len(c) != 1:
                raise ModelError(
                    "a character vocabulary entry is not a single character; the model is corrupt"
                )
        if len(set(chars)) != len(chars):
            raise ModelError("the character vocabulary has duplicate entries; the model is corrupt")
        self.chars = chars
        self.index = {c: i + len(self.SPECIALS) for i, c in enumerate(chars)}

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int = 1) -> CharVocab:
        """Characters seen at least ``min_count`` times in ``texts``, in code point order."""
        if min_count < 1:
            raise ConfigError(f"min_count must be at least 1, got {min_count}")
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(text)
        return cls(sorted(c for c, n in counts.items() if n >= min_count))

    def __len__(self) -> int:
        return len(self.SPECIALS) + len(self.chars)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharVocab) and self.chars == other.chars

    __hash__ = None  # type: ignore[assignment]

    def encode(self, text: str) -> list[int]:
        """Ids of the characters of ``text`` (unknown characters -> ``UNK``)."""
        get = self.index.get
        unk = self.UNK
        return [get(c, unk) for c in text]

    def to_list(self) -> list[str]:
        return list(self.chars)


class CharLMConfig(BaseModel):
    """The network's shape (saved with the model)."""

    model_config = ConfigDict(extra="forbid")

    embedding_dim: int = Field(32, ge=1, le=1024, description="character embedding size")
    hidden_size: int = Field(256, ge=1, le=8192, description="LSTM state size (the embedding dim per LM)")
    layers: int = Field(1, ge=1, le=2, description="LSTM layers")
    dropout: float = Field(0.1, ge=0.0, lt=1.0, description="dropout on the LSTM output (training only)")


class CharLMModule(nn.Module):
    """Embedding -> LSTM -> dropout -> linear decoder over the character vocabulary (time-major)."""

    def __init__(self, n_chars: int, config: CharLMConfig) -> None:
        super().__init__()
        self.embedding = nn.Embedding(n_chars, config.embedding_dim, padding_idx=CharVocab.PAD)
        self.rnn = nn.LSTM(
            config.embedding_dim,
            config.hidden_size,
            num_layers=config.layers,
            dropout=config.dropout if config.layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(config.dropout)
        self.decoder = nn.Linear(config.hidden_size, n_chars)

    def forward(self, ids: torch.Tensor, state: State | None = None) -> tuple[torch.Tensor, State]:
        """LSTM outputs ``(T, B, H)`` for ids ``(T, B)`` and the state after the last step."""
        output, new_state = self.rnn(self.embedding(ids), state)
        return output, new_state

    def logits(self, output: torch.Tensor) -> torch.Tensor:
        """Next-character scores ``(T, B, V)`` from LSTM outputs."""
        return self.decoder(self.dropout(output))


def check_direction(direction: str) -> Direction:
    if direction not in DIRECTIONS:
        raise ConfigError(f"unknown direction {direction!r}; choose forward or backward")
    return direction  # type: ignore[return-value]


class CharLM:
    """A character language model: vocabulary, network, direction (and metadata once saved/loaded)."""

    def __init__(
        self,
        vocab: CharVocab,
        config: CharLMConfig | None = None,
        direction: str = "forward",
        module: CharLMModule | None = None,
        *,
        metadata: ModelMetadata | None = None,
    ) -> None:
        self.vocab = vocab
        self.config = config or CharLMConfig()
        self.direction = check_direction(direction)
        self.module = module if module is not None else CharLMModule(len(vocab), self.config)
        self.metadata = metadata
        self._lock = threading.Lock()

    @property
    def hidden_size(self) -> int:
        return self.config.hidden_size

    @property
    def name(self) -> str:
        return self.metadata.name if self.metadata is not None else f"charlm-{self.direction}"

    def oriented(self, text: str) -> str:
        """``text`` in the order this model reads it."""
        return text if self.direction == "forward" else text[::-1]

    def encode_document(self, text: str) -> list[int]:
        """Boundary id, then the ids of ``text`` in reading order (reversed for a backward model)."""
        return [CharVocab.BOUNDARY, *self.vocab.encode(self.oriented(text))]

    @torch.inference_mode()
    def states(self, sequence: str) -> torch.Tensor:
        """LSTM outputs ``(len(sequence) + 1, H)`` after reading the boundary then ``sequence`` as given.

        Row ``k`` is the state after reading ``k`` characters of ``sequence`` (row 0: the boundary only).
        No reversal happens here: this is the reference the embedder's offsets are checked against.
        """
        ids = torch.tensor([CharVocab.BOUNDARY, *self.vocab.encode(sequence)], dtype=torch.long)
        with self._lock:
            was_training = self.module.training
            self.module.eval()
            try:
                out, _ = self.module(ids.unsqueeze(1))
            finally:
                self.module.train(was_training)
        return out[:, 0, :].clone()

    # -- artifacts --------------------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        torch.save(
            {
                "state_dict": self.module.state_dict(),
                "chars": self.vocab.to_list(),
                "vocab_type": VOCAB_TYPE,
                "config": self.config.model_dump(),
                "direction": self.direction,
            },
            buf,
        )
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, *, metadata: ModelMetadata | None = None) -> CharLM:
        where = metadata.name if metadata is not None else "character LM"
        try:
            blob = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
            chars = blob["chars"]
            vocab_type = blob["vocab_type"]
            raw_config = blob["config"]
            direction = blob["direction"]
            state = blob["state_dict"]
        except Exception as exc:  # torch raises many kinds on a corrupt file
            raise ModelError(
                f"{where}: weights cannot be read ({type(exc).__name__}); the model is corrupt"
            ) from None
        if vocab_type != VOCAB_TYPE:
            raise ModelError(
                f"{where}: vocabulary type {vocab_type!r} is not supported (expected {VOCAB_TYPE!r})"
            )
        if direction not in DIRECTIONS:
            raise ModelError(
                f"{where}: direction {direction!r} is not forward or backward; the model is corrupt"
            )
        try:
            config = CharLMConfig.model_validate(raw_config)
        except ValidationError as exc:
            raise ModelError(
                f"{where}: the network config cannot be used by this clinideid ({exc.error_count()} invalid "
                "settings); re-train the model"
            ) from None
        vocab = CharVocab(chars)
        module = CharLMModule(len(vocab), config)
        try:
            module.load_state_dict(state)
        except (RuntimeError, TypeError, KeyError):
            raise ModelError(
                f"{where}: the weights do not match the network its config describes; the model is corrupt"
            ) from None
        module.eval()
        return cls(vocab, config, direction, module, metadata=metadata)

    @classmethod
    def load(cls, name_or_path: str | Path) -> CharLM:
        """A saved character LM (a model directory or a shipped model name)."""
        path = resolve_model_path(name_or_path)
        meta = load_metadata(path, model_type=MODEL_TYPE, label_schemes=(LABEL_SCHEME,))
        model = cls.from_bytes(read_weights(path, meta), metadata=meta)
        saved_direction = meta.training_config.get("direction")
        if saved_direction != model.direction:
            raise ModelError(
                f"{path}: model.json says direction {saved_direction!r} but the weights are a "
                f"{model.direction} model; the model directory is inconsistent"
            )
        return model

    def build_metadata(
        self,
        *,
        name: str,
        language: str | None = None,
        training_config: dict[str, Any] | None = None,
        training_data: TrainingData | None = None,
        dev_metrics: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> ModelMetadata:
        """``model.json`` content for this model (network config and direction always included)."""
        cfg = dict(training_config or {})
        cfg.update(
            {"charlm": self.config.model_dump(), "direction": self.direction, "vocab_type": VOCAB_TYPE}
        )
        return ModelMetadata(
            format_version=FORMAT_VERSION,
            model_type=MODEL_TYPE,
            name=name,
            weights=WEIGHTS_FILE,
            label_scheme=LABEL_SCHEME,
            labels=self.vocab.to_list() or [CharVocab.SPECIALS[CharVocab.UNK]],
            label_set=LABEL_SCHEME,
            language=language,
            training_config=cfg,
            training_data=training_data or TrainingData(),
            versions=package_versions("torch"),
            dev_metrics=dev_metrics or {},
            created=now_iso(),
            seed=seed,
        )

    def save(
        self,
        directory: str | Path,
        metadata: ModelMetadata | None = None,
        *,
        extra_files: dict[str, bytes | str] | None = None,
    ) -> Path:
        """Write the model directory (``metadata`` defaults to a minimal one named after the directory)."""
        meta = metadata or self.metadata or self.build_metadata(name=Path(directory).resolve().name)
        out = save_model(directory, meta, self.to_bytes(), extra_files=extra_files)
        self.metadata = load_metadata(out, model_type=MODEL_TYPE)
        return out


def layout_streams(ids: Sequence[int] | torch.Tensor, batch_size: int) -> torch.Tensor:
    """A 1-D id sequence cut into ``batch_size`` parallel streams: ``(L, batch_size)``, trailing ids dropped.

    Stream ``b`` holds the ``b``-th consecutive ``L``-long piece, the standard LM batching.
    """
    data = ids if isinstance(ids, torch.Tensor) else torch.tensor(list(ids), dtype=torch.long)
    length = data.numel() // batch_size
    return data[: length * batch_size].view(batch_size, length).t().contiguous()
