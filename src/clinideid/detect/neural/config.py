"""The neural tagger's settings (torch-free, so training configs validate without importing torch).

Every block can be switched on or off; the baseline is characters + words + BiLSTM + CRF.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class NeuralConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # blocks
    char: bool = True
    word: bool = True
    affix: bool = False
    context: bool = False
    attention: bool = False
    # a rule detector's spans as token inputs (hybrid): true = the rule packs of the training language,
    # or a detector spec such as {"type": "rules", "language": "es"}; resolved to a spec when training
    rules: bool | dict[str, Any] = False
    # contextual string embeddings: {forward: DIR, backward: DIR}, character LMs from `clinideid pretrain-lm`
    # (a trained model keeps copies of both inside its directory)
    charlm: dict[str, str] | None = None
    charlm_proj: int = Field(0, ge=0, le=2048)  # > 0: a linear re-projection of the LM states to this size
    # block sizes
    char_dim: int = Field(25, ge=1, le=512)
    char_hidden: int = Field(25, ge=1, le=512)
    max_token_chars: int = Field(20, ge=1, le=200)
    word_dim: int = Field(100, ge=1, le=1024)
    word_min_count: int = Field(1, ge=1)
    vectors: str | None = None  # word2vec/GloVe text or fastText .bin file to initialise word embeddings
    freeze_vectors: bool = False
    # keep a frozen float16 copy of the vectors of the keep_vectors_top most frequent words outside the
    # training vocabulary, looked up at inference (clinideid.detect.neural.frozen_vectors)
    keep_vectors: bool = False
    keep_vectors_top: int = Field(100_000, ge=1, le=5_000_000)
    affix_n: int = Field(3, ge=1, le=6)
    affix_min_count: int = Field(20, ge=1)
    affix_dim: int = Field(20, ge=1, le=256)
    affix_hidden: int = Field(25, ge=1, le=256)
    context_n: int = Field(10, ge=1, le=50)
    context_proj: int = Field(64, ge=1, le=512)
    context_hidden: int = Field(50, ge=1, le=512)
    attention_dim: int = Field(32, ge=1, le=512)
    lstm_layers: int = Field(1, ge=1, le=2)
    lstm_hidden: int = Field(100, ge=1, le=1024)
    # regularisation
    dropout: float = Field(0.5, ge=0, lt=1)
    locked_dropout: bool = True  # one dropout mask per sequence (variational) instead of per token
    word_dropout: float = Field(0.05, ge=0, lt=1)  # share of known words replaced by <unk> in training
    # windows the tagger reads
    windows: Literal["sliding", "sentences"] = "sliding"
    sentences_per_window: int = Field(1, ge=1, le=50)
    # training
    optimizer: Literal["sgd", "adam"] = "adam"
    lr: float = Field(0.005, gt=0)  # 0.005 suits Adam (MEDDOCAN dev); SGD usually wants ~0.015
    momentum: float = Field(0.9, ge=0, lt=1)  # SGD only
    lr_decay: float = Field(0.5, gt=0, le=1)  # LR factor after anneal_patience epochs without dev gain
    anneal_patience: int = Field(2, ge=1)
    patience: int = Field(5, ge=1)  # early stopping: epochs without dev strict F1 gain
    epochs: int = Field(30, ge=1, le=1000)
    batch_size: int = Field(16, ge=1, le=1024)
    clip: float = Field(5.0, gt=0)
    class_weighting: bool = False  # add an inverse-sqrt-frequency weighted token loss to the CRF loss
    # Cross-View Training (semi-supervised): auxiliary heads over restricted views of the token BiLSTM,
    # trained on unlabelled windows to match the primary (CRF) head's predictions
    cvt: bool = False
    cvt_views: list[Literal["forward", "backward", "future", "past"]] = Field(
        default_factory=lambda: ["forward", "backward", "future", "past"], min_length=1
    )
    cvt_hidden: int = Field(50, ge=1, le=1024)
    cvt_weight: float = Field(1.0, gt=0)
    unlabelled_ratio: int = Field(1, ge=1, le=16)  # unlabelled batches after each labelled batch
    threads: int | None = Field(None, ge=1, le=256)
    quantize: bool = False  # dynamic int8 quantisation of LSTM/linear layers at inference

    @model_validator(mode="after")
    def _some_input(self) -> NeuralConfig:
        if not (self.char or self.word or self.affix):
            raise ValueError("enable at least one of char, word, affix: the tagger needs token inputs")
        if self.vectors and not self.word:
            raise ValueError("vectors are given but the word block is off (set word: true)")
        if self.keep_vectors and not self.vectors:
            raise ValueError("keep_vectors needs pre-trained vectors (set vectors: PATH)")
        if self.cvt:
            blocks = (
                ("affix", self.affix),
                ("context", self.context),
                ("rules", self.rules),
                ("charlm", self.charlm),
            )
            wide = [n for n, on in blocks if on]
            if wide:
                raise ValueError(
                    f"cvt needs token-local inputs, but {', '.join(wide)} read(s) neighbouring tokens: an "
                    "auxiliary view would see the side it must not; switch them off for cvt"
                )
            if self.lstm_layers != 1:
                raise ValueError("cvt reads the views from a one-layer token BiLSTM; set lstm_layers: 1")
        return self

    @field_validator("charlm")
    @classmethod
    def _both_directions(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v is not None and set(v) != {"forward", "backward"}:
            raise ValueError("charlm needs exactly two keys: forward and backward (character LM directories)")
        return v
