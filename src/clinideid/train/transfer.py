"""Continued training: start a neural tagger from another model's weights (e.g. another language's corpus).

The new model keeps the source's network (its blocks and sizes; the training settings — optimiser, learning
rate, epochs, dropout, cross-view training — come from the new config). Its vocabularies are the source's,
in the same order, followed by what the new corpus adds (words, characters, affixes, tags), so every source
id keeps its meaning; each weight tensor is copied into the leading slice of the new one and the rows of
new items start from the new model's random initialisation. Labels are compared by name: both corpora must
be read onto the same label set (canonical labels, the default), which is how a Spanish MEDDOCAN model
continues on French EDS-Pseudo although the two corpora annotate different types.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import torch

from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.tagger import NeuralModel, Vocabs
from clinideid.detect.neural.vocab import Vocab
from clinideid.errors import ConfigError

log = logging.getLogger(__name__)

#: NeuralConfig fields that define the network (taken from the source model)
ARCHITECTURE_FIELDS = (
    "char",
    "word",
    "affix",
    "context",
    "attention",
    "rules",
    "charlm",
    "charlm_proj",
    "char_dim",
    "char_hidden",
    "max_token_chars",
    "word_dim",
    "affix_n",
    "affix_dim",
    "affix_hidden",
    "context_n",
    "context_proj",
    "context_hidden",
    "attention_dim",
    "lstm_layers",
    "lstm_hidden",
    "affix_kind",
    "context_rnn",
    "char_encoder",
    "char_cnn_widths",
    "char_cnn_filters",
    "casing",
    "casing_dim",
    "stack_proj",
    "head",
    "windows",
    "sentences_per_window",
)


def continued_config(source: NeuralConfig, target: NeuralConfig) -> NeuralConfig:
    """The target's training settings on the source's network."""
    arch = {f: getattr(source, f) for f in ARCHITECTURE_FIELDS}
    changed = sorted(
        f for f in ARCHITECTURE_FIELDS if f in target.model_fields_set and arch[f] != getattr(target, f)
    )
    if changed:
        log.warning(
            "continued training keeps the source network; ignoring %s from the config", ", ".join(changed)
        )
    update = {**arch, "vectors": None, "keep_vectors": False, "quantize": False}
    merged = target.model_copy(update=update)
    return NeuralConfig.model_validate(merged.model_dump())  # re-validate the combination (e.g. cvt)


def extend_vocab(source: Vocab, new: Vocab) -> Vocab:
    """The source's items in order, then the new items it lacks."""
    out = Vocab(source.to_list())
    for item in new.to_list():
        out.add(item)
    return out


def extend_vocabs(source: Vocabs, new: Vocabs) -> Vocabs:
    tags = list(source.tags) + [t for t in new.tags if t not in source.tags]
    return Vocabs(
        extend_vocab(source.words, new.words),
        extend_vocab(source.chars, new.chars),
        extend_vocab(source.prefixes, new.prefixes),
        extend_vocab(source.suffixes, new.suffixes),
        tags,
    )


def copy_leading(target: torch.Tensor, source: torch.Tensor, name: str) -> None:
    """``target[:s0, :s1, ...] = source`` (every source dimension must fit in the target's)."""
    if target.dim() != source.dim() or any(s > t for s, t in zip(source.shape, target.shape, strict=True)):
        raise ConfigError(
            f"the source model's weight {name} {tuple(source.shape)} does not fit the new network "
            f"{tuple(target.shape)}"
        )
    target[tuple(slice(0, s) for s in source.shape)] = source


def transfer_weights(source: NeuralModel, target: NeuralModel) -> int:
    """Copy the source network's weights into ``target`` (vocabularies extended as above); returns the count.

    Tensors the source lacks (e.g. cross-view heads the source was trained without) keep their
    initialisation.
    """
    src = source.module.state_dict()
    copied = 0
    with torch.no_grad():
        for name, tensor in target.module.state_dict().items():
            if name in src:
                copy_leading(tensor, src[name], name)
                copied += 1
    return copied


def check_compatible(source: NeuralModel, label_scheme: str, label_set: str) -> None:
    meta = source.metadata
    assert meta is not None
    if meta.label_scheme != label_scheme:
        raise ConfigError(
            f"the source model tags with {meta.label_scheme} but the config asks for {label_scheme}; "
            f"set label_scheme: {meta.label_scheme}"
        )
    if meta.label_set != label_set:
        raise ConfigError(
            f"the source model uses {meta.label_set!r} labels but this corpus is read as {label_set!r}; "
            "continued training needs one label set (use canonical labels for both)"
        )


def source_charlm_paths(source: NeuralModel) -> dict[str, str]:
    """Where the source model's character LMs are (absolute paths)."""
    from clinideid.detect.neural.token_features import CharLMFeatures

    for f in source.featurizers:
        if isinstance(f, CharLMFeatures):
            return {"forward": str(f.paths[0].resolve()), "backward": str(f.paths[1].resolve())}
    raise ConfigError("the source model's config names character LMs but none is loaded")


def source_labels(source: NeuralModel) -> Sequence[str]:
    return list(source.metadata.labels) if source.metadata is not None else []
