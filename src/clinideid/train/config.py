"""The training configuration: a YAML file validated by pydantic, with clear errors.

Example (every key is optional; these are the defaults for a CRF)::

    model: crf
    language: es            # word lists for gazetteer features; default: the corpus scheme's language
    label_scheme: BIOES     # or BIO
    unit: line              # sequences the CRF reads: line, or window (sliding token windows)
    window_size: 200        # unit: window only
    window_overlap: 20
    features:
      window: 2             # neighbour tokens on each side
      affixes: 4            # prefixes and suffixes of 1..4 characters
      gazetteers: [first_names, surnames, cities, countries, hospitals]
      rules: false          # true: labels of rule-engine spans as features (the hybrid feature set)
    c1: [0.05, 0.1, 0.2]    # L1 grid; the best (c1, c2) on dev is kept
    c2: [0.01, 0.05]        # L2 grid
    max_iterations: 150
    min_freq: 1             # drop features seen fewer times (compact model)
    workers: 1              # grid points trained in parallel (processes)
    dev_fraction: 0.2       # held-out share of the training documents when no dev corpus is given

For ``model: neural`` the keys ``label_scheme``, ``window_size``, ``window_overlap`` and ``dev_fraction``
apply too, and a ``neural:`` section holds the network and training settings
(``clinideid.detect.neural.config.NeuralConfig``: blocks char/word/affix/context/attention, sizes, dropout,
windows, optimizer, epochs...).

For ``model: transformer`` the keys ``label_scheme`` and ``dev_fraction`` apply, and a ``transformer:``
section holds the encoder and fine-tuning settings (``TransformerConfig``)::

    model: transformer
    transformer:
      encoder: models/bert-base-spanish   # a local Hugging Face encoder folder (never downloaded)
      max_subtokens: 256                  # sub-tokens per window, special tokens included
      overlap: 32                         # words shared by consecutive windows
      lr: 5.0e-5                          # linear warm-up over `warmup` of the steps, then linear decay
      epochs: 5
      crf: false                          # true: a CRF head instead of the linear (softmax) one
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from clinideid.detect.features import DEFAULT_GAZETTEERS, GAZETTEER_LISTS, FeatureConfig
from clinideid.detect.neural.config import NeuralConfig
from clinideid.errors import ConfigError


class FeaturesSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    window: int = Field(2, ge=0, le=5)
    affixes: int = Field(4, ge=0, le=6)
    gazetteers: list[str] = Field(default_factory=lambda: list(DEFAULT_GAZETTEERS))
    rules: bool | dict[str, Any] = False
    field_words: int = Field(2, ge=1, le=5)
    # language-independent evidence (clinideid.detect.evidence): word_classes, word_frequency, names_any,
    # line_shape, repetition, rule_context
    evidence: list[str] = Field(default_factory=list)

    @field_validator("evidence")
    @classmethod
    def _known_evidence(cls, v: list[str]) -> list[str]:
        from clinideid.detect.evidence import GROUPS

        unknown = [g for g in v if g not in GROUPS]
        if unknown:
            raise ValueError(f"unknown evidence group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
        return v

    @field_validator("gazetteers")
    @classmethod
    def _known_gazetteers(cls, v: list[str]) -> list[str]:
        unknown = [g for g in v if g not in GAZETTEER_LISTS]
        if unknown:
            raise ValueError(
                f"unknown gazetteer(s) {', '.join(unknown)}; known: {', '.join(GAZETTEER_LISTS)}"
            )
        return v

    @field_validator("rules")
    @classmethod
    def _rules_spec(cls, v: bool | dict[str, Any]) -> bool | dict[str, Any]:
        if isinstance(v, dict) and "type" not in v:
            raise ValueError("a rules detector spec needs a 'type' (e.g. {type: rules, language: es})")
        return v


class TransformerConfig(BaseModel):
    """Settings of the transformer tagger (``clinideid.detect.transformer``); torch-free so configs validate."""

    model_config = ConfigDict(extra="forbid")

    encoder: str | None = None  # local directory of a Hugging Face encoder; ``--encoder`` fills it
    max_subtokens: int = Field(256, ge=8, le=8192)  # per window, special tokens included
    overlap: int = Field(32, ge=0, le=2048)  # words shared by consecutive windows
    lr: float = Field(5e-5, gt=0)
    head_lr: float | None = Field(None, gt=0)  # classifier and CRF; default: lr, and 100 x lr for the CRF
    warmup: float = Field(0.1, ge=0, lt=1)  # share of the steps with a linear warm-up, then linear decay
    weight_decay: float = Field(0.01, ge=0)
    epochs: int = Field(5, ge=1, le=1000)
    batch_size: int = Field(8, ge=1, le=1024)  # windows per step
    patience: int = Field(2, ge=1)  # early stopping: epochs without dev strict F1 gain
    clip: float = Field(1.0, gt=0)
    crf: bool = False
    freeze_encoder: bool = False  # train the head only (fast baseline, or an encoder too large to tune)
    dropout: float = Field(0.1, ge=0, lt=1)  # before the head; the encoder keeps its own dropout
    threads: int | None = Field(None, ge=1, le=256)


class TrainConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: Literal["crf", "neural", "transformer"] = "crf"
    language: str | None = None
    # one model for documents of several languages: word lists, rules and evidence follow each document's
    # own language (model: crf)
    multilingual: bool = False
    label_scheme: Literal["BIO", "BIOES"] = "BIOES"
    unit: Literal["line", "window"] = "line"
    window_size: int = Field(200, ge=8, le=5000)
    window_overlap: int = Field(20, ge=0)
    features: FeaturesSection = Field(default_factory=FeaturesSection)
    c1: list[float] = Field(default_factory=lambda: [0.05, 0.1, 0.2], min_length=1)
    c2: list[float] = Field(default_factory=lambda: [0.01, 0.05], min_length=1)
    max_iterations: int = Field(150, ge=1, le=10_000)  # l2sgd: epochs
    # CRFsuite's training algorithm: L-BFGS (c1 and c2 grid) or stochastic gradient descent with L2 (c2 grid
    # only; an order of magnitude faster on large corpora, about as accurate)
    algorithm: Literal["lbfgs", "l2sgd"] = "lbfgs"
    min_freq: float = Field(1, ge=0)
    possible_transitions: bool = True
    workers: int = Field(1, ge=1, le=64)
    dev_fraction: float = Field(0.2, gt=0, lt=1)
    neural: NeuralConfig = Field(default_factory=NeuralConfig)  # model: neural only
    transformer: TransformerConfig = Field(default_factory=TransformerConfig)  # model: transformer only

    @field_validator("c1", "c2")
    @classmethod
    def _non_negative(cls, v: list[float]) -> list[float]:
        if any(x < 0 for x in v):
            raise ValueError("regularisation coefficients must be >= 0")
        return v

    @field_validator("window_overlap")
    @classmethod
    def _overlap_below_size(cls, v: int, info: Any) -> int:
        size = info.data.get("window_size")
        if size is not None and v >= size:
            raise ValueError(f"window_overlap ({v}) must be smaller than window_size ({size})")
        return v

    def feature_config(self, language: str | None) -> FeatureConfig:
        """The feature settings, with ``language`` for the word lists and a rules spec when enabled."""
        if self.multilingual:
            if self.language:
                raise ConfigError("multilingual: true reads each document's language; leave 'language' unset")
            rules = self.features.rules
            return FeatureConfig(
                window=self.features.window,
                affixes=self.features.affixes,
                gazetteers=tuple(self.features.gazetteers),
                rules={"type": "rules"}
                if rules is True
                else (dict(rules) if isinstance(rules, dict) else None),
                field_words=self.features.field_words,
                multilingual=True,
                evidence=tuple(self.features.evidence),
            )
        lang = self.language or language
        rules = self.features.rules
        if rules is True:
            if not lang:
                raise ConfigError("rule features need a language: set 'language' in the training config")
            rules_spec: dict[str, Any] | None = {"type": "rules", "language": lang}
        elif isinstance(rules, dict):
            rules_spec = dict(rules)
        else:
            rules_spec = None
        return FeatureConfig(
            window=self.features.window,
            affixes=self.features.affixes,
            language=lang,
            gazetteers=tuple(self.features.gazetteers) if lang else (),
            rules=rules_spec,
            field_words=self.features.field_words,
            evidence=tuple(self.features.evidence) if lang else (),
        )


def _format_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def parse_train_config(data: dict[str, Any] | None, origin: str = "training config") -> TrainConfig:
    """A ``TrainConfig`` from a mapping (``None`` gives the defaults); ``ConfigError`` names bad keys."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{origin} must be a YAML mapping of options, got {type(data).__name__}")
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{origin} is invalid: {_format_errors(exc)}") from None


def load_train_config(path: str | Path | None) -> TrainConfig:
    """The training config in the YAML file at ``path`` (defaults when ``path`` is None)."""
    if path is None:
        return TrainConfig()
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"training config {p} does not exist")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        raise ConfigError(f"training config {p} is not valid YAML{where}") from None
    return parse_train_config(data, origin=f"training config {p}")
