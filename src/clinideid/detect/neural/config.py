"""The neural tagger's settings (torch-free, so training configs validate without importing torch).

Every block can be switched on or off; the baseline is characters + words + BiLSTM + CRF. The architecture
options of the published clinical de-identification taggers are settings too (docs/learned_models.md):
prefix-only deep affixes and an LSTM n-gram context encoder (CEDI), a character CNN and Cross-View Training
from the first of two BiLSTM layers (CVT networks), no BiLSTM / a softmax head / a re-projection of the
stacked embeddings (embedding-stack ablations), a casing feature, Nadam and separate dropouts (BiLSTM-CRF
baselines). Every default keeps the network of earlier versions, so their models load unchanged.
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
    # > 0: a linear re-projection of the whole stacked token representation (every token input) to this size
    stack_proj: int = Field(0, ge=0, le=4096)
    casing: bool = False  # a learned embedding of each token's casing class (token_casing)
    casing_dim: int = Field(8, ge=1, le=64)
    # block sizes
    char_encoder: Literal["lstm", "cnn"] = "lstm"  # BiLSTM final states or max-pooled convolutions
    char_dim: int = Field(25, ge=1, le=512)
    char_hidden: int = Field(25, ge=1, le=512)  # char BiLSTM hidden size per direction
    char_cnn_widths: list[int] = Field(default_factory=lambda: [2, 3, 4], min_length=1, max_length=8)
    char_cnn_filters: int = Field(25, ge=1, le=512)  # filters per width
    max_token_chars: int = Field(20, ge=1, le=200)
    word_dim: int = Field(100, ge=1, le=1024)
    word_min_count: int = Field(1, ge=1)
    vectors: str | None = None  # word2vec/GloVe text or fastText .bin file to initialise word embeddings
    freeze_vectors: bool = False
    # keep a frozen float16 copy of the vectors of the keep_vectors_top most frequent words outside the
    # training vocabulary, looked up at inference (clinideid.detect.neural.frozen_vectors)
    keep_vectors: bool = False
    keep_vectors_top: int = Field(100_000, ge=1, le=5_000_000)
    affix_kind: Literal["both", "prefix", "suffix"] = "both"  # which affixes the deep affix block reads
    affix_n: int = Field(3, ge=1, le=6)
    affix_min_count: int = Field(20, ge=1)
    affix_dim: int = Field(20, ge=1, le=256)
    affix_hidden: int = Field(25, ge=1, le=256)
    context_n: int = Field(10, ge=1, le=50)
    context_proj: int = Field(64, ge=1, le=512)
    context_hidden: int = Field(50, ge=1, le=512)
    context_rnn: Literal["gru", "lstm"] = "gru"  # the recurrent cell of the n-gram context encoder
    attention_dim: int = Field(32, ge=1, le=512)
    lstm_layers: int = Field(1, ge=0, le=2)  # 0: no BiLSTM, the token representation goes to the head
    lstm_hidden: int = Field(100, ge=1, le=1024)
    head: Literal["crf", "softmax"] = "crf"  # softmax: independent per-token tags, cross-entropy loss
    # regularisation
    dropout: float = Field(0.5, ge=0, lt=1)
    # separate rates; None takes `dropout`: on the token representation (the BiLSTM input), between the two
    # BiLSTM layers (lstm_layers 2), and on the BiLSTM output (the head's input)
    input_dropout: float | None = Field(None, ge=0, lt=1)
    recurrent_dropout: float | None = Field(None, ge=0, lt=1)
    output_dropout: float | None = Field(None, ge=0, lt=1)
    locked_dropout: bool = True  # one dropout mask per sequence (variational) instead of per token
    word_dropout: float = Field(0.05, ge=0, lt=1)  # share of known words replaced by <unk> in training
    # windows the tagger reads
    windows: Literal["sliding", "sentences"] = "sliding"
    sentences_per_window: int = Field(1, ge=1, le=50)
    # training
    optimizer: Literal["sgd", "adam", "nadam"] = "adam"
    lr: float = Field(0.005, gt=0)  # 0.005 suits Adam (MEDDOCAN dev); SGD usually wants ~0.015
    momentum: float = Field(0.9, ge=0, lt=1)  # SGD only
    weight_decay: float = Field(0.0, ge=0, lt=1)  # L2 penalty of the optimiser
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
    # dropout rate while the auxiliary heads learn on unlabelled batches (None: the labelled rates)
    cvt_unlabelled_dropout: float | None = Field(None, ge=0, lt=1)
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
        if self.lstm_layers == 0:
            if self.attention:
                raise ValueError("attention queries the BiLSTM output; it needs lstm_layers >= 1")
            if self.cvt:
                raise ValueError("cvt reads its views from the BiLSTM; it needs lstm_layers >= 1")
        if self.cvt:
            blocks = (
                ("affix", self.affix),
                ("context", self.context),
                ("rules", self.rules),
            )
            wide = [n for n, on in blocks if on]
            if wide:
                raise ValueError(
                    f"cvt needs token-local inputs, but {', '.join(wide)} read(s) neighbouring tokens: an "
                    "auxiliary view would see the side it must not; switch them off for cvt"
                )
            if self.charlm and (self.charlm_proj or self.stack_proj):
                # each BiLSTM direction reads only its own LM's states (see model.DirectionalLSTM); a
                # projection mixing both LMs would hand the forward direction the text after the token
                raise ValueError(
                    "cvt with charlm keeps the two LMs apart: set charlm_proj: 0 and stack_proj: 0"
                )
        return self

    @field_validator("charlm")
    @classmethod
    def _both_directions(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v is not None and set(v) != {"forward", "backward"}:
            raise ValueError("charlm needs exactly two keys: forward and backward (character LM directories)")
        return v
