"""Training data: read a corpus, put its labels in the label set a model is trained on, split it.

``label_set="canonical"`` maps the corpus's native labels onto canonical ones with the scheme's mapping
(``load_mapping("meddocan")``); ``label_set="native"`` keeps them (e.g. MEDDOCAN subtask 1 types).
Splits and subsets are deterministic for a given seed and independent of file order.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from clinideid.document import Document, relabel
from clinideid.errors import ConfigError, InputError
from clinideid.labels import load_mapping

log = logging.getLogger(__name__)

LABEL_SETS = ("canonical", "native")


def to_label_set(docs: Sequence[Document], scheme: str | None, label_set: str) -> list[Document]:
    """``docs`` with labels mapped to canonical ones (``label_set="canonical"``) or kept (``"native"``)."""
    if label_set not in LABEL_SETS:
        raise ConfigError(f"unknown label set {label_set!r}; choose one of {', '.join(LABEL_SETS)}")
    if label_set == "native" or scheme in (None, "canonical"):
        return list(docs)
    mapping = load_mapping(scheme)
    return [relabel(d, mapping) for d in docs]


def read_training_corpus(
    path: str | Path, fmt: str, scheme: str | None = None, label_set: str = "canonical"
) -> list[Document]:
    """Documents of the corpus at ``path`` with labels in ``label_set``; an empty corpus is an error."""
    from clinideid.formats import read_corpus

    docs = unique_ids(read_corpus(path, fmt))
    if not docs:
        raise InputError(f"corpus {path} ({fmt}) holds no documents")
    if not any(d.spans for d in docs):
        raise InputError(f"corpus {path} ({fmt}) holds no annotated spans; a tagger cannot learn from it")
    return to_label_set(docs, scheme, label_set)


def unique_ids(docs: Sequence[Document]) -> list[Document]:
    """``docs`` with repeated ids made unique (``id#2``, ``id#3``...): no document is lost or merged.

    Some corpora repeat ids (EDS-Pseudo has a few repeated ``note_id``); evaluation pairs documents by id.
    """
    seen: dict[str, int] = {}
    out: list[Document] = []
    renamed = 0
    for d in docs:
        n = seen.get(d.id, 0) + 1
        seen[d.id] = n
        if n > 1:
            renamed += 1
            d = replace(d, id=f"{d.id}#{n}", metadata={**d.metadata, "duplicate_of": d.id})
        out.append(d)
    if renamed:
        log.info("%d repeated document ids made unique with a #N suffix", renamed)
    return out


def _group(doc: Document) -> str:
    return str(doc.metadata.get("duplicate_of", doc.id))


def _shuffled_groups(docs: Sequence[Document], seed: int) -> list[str]:
    """Document groups (an id with its repeats) in a seeded order that ignores the input order."""
    groups = sorted({_group(d) for d in docs})
    random.Random(seed).shuffle(groups)
    return groups


def _take(docs: Sequence[Document], groups: Sequence[str], n_docs: int) -> set[str]:
    """Whole groups, in order, until at least ``n_docs`` documents are taken."""
    sizes: dict[str, int] = {}
    for d in docs:
        sizes[_group(d)] = sizes.get(_group(d), 0) + 1
    taken: set[str] = set()
    count = 0
    for g in groups:
        if count >= n_docs:
            break
        taken.add(g)
        count += sizes[g]
    return taken


def holdout_split(
    docs: Sequence[Document], fraction: float, seed: int
) -> tuple[list[Document], list[Document]]:
    """``(train, held_out)``: a deterministic ``fraction`` of the documents held out (at least one).

    Repeats of a document (same original id, see ``unique_ids``) stay on one side, so no text is in both.
    """
    if not 0 < fraction < 1:
        raise ConfigError(f"held-out fraction must be in (0, 1), got {fraction}")
    groups = _shuffled_groups(docs, seed)
    if len(groups) < 2:
        raise InputError("at least two documents are needed to hold some out for development")
    held = _take(docs, groups[:-1], max(1, round(len(docs) * fraction)))
    return [d for d in docs if _group(d) not in held], [d for d in docs if _group(d) in held]


def subset(docs: Sequence[Document], fraction: float, seed: int) -> list[Document]:
    """A deterministic ``fraction`` of ``docs``; subsets of growing fractions are nested (same seed)."""
    if not 0 < fraction <= 1:
        raise ConfigError(f"subset fraction must be in (0, 1], got {fraction}")
    keep = _take(docs, _shuffled_groups(docs, seed), max(1, round(len(docs) * fraction)))
    return [d for d in docs if _group(d) in keep]


def describe(docs: Sequence[Document]) -> dict[str, int]:
    return {"documents": len(docs), "spans": sum(len(d.spans) for d in docs)}


def corpus_language(docs: Sequence[Document], scheme: str | None) -> str | None:
    """The language of a corpus: the documents' own, else the label scheme's."""
    langs = {d.language for d in docs if d.language}
    if len(langs) == 1:
        return langs.pop()
    if scheme and scheme != "canonical":
        try:
            return load_mapping(scheme).language
        except ConfigError:
            return None
    return None
