"""The multilingual notes model: one CRF for every language, trained on documents grouped by writing set.

The shipped default detector of each language is a feature CRF trained on realistic clinical documents of
all six languages together (``notes`` corpus layout: ``<lang>.jsonl``, one document per line, the writing
set in the id: ``en-ua017`` belongs to set ``ua``). Words and their lists follow each document's language;
rule hits, word classes, word frequency, layout and the document's own repetitions are evidence that means
the same in every language, so what the model learns from English forms helps on German ones.

Generalisation is measured by holding out whole writing sets, never random documents: documents of one set
share authors, templates and patients, and a model validated on its own set's siblings looks better than
it is on a new site. ``set_folds`` holds out, in fold ``k``, the ``k``-th set of every language at once, so
that ``max(sets per language)`` models give one held-out prediction for every document.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clinideid.detect.evidence import GROUPS as EVIDENCE_GROUPS
from clinideid.document import Document
from clinideid.errors import InputError
from clinideid.models import TrainingData
from clinideid.train.config import TrainConfig, parse_train_config

#: languages with notes
LANGUAGES = ("en", "de", "it", "ru", "es", "fr")

#: the training configuration of the shipped model (see clinideid.train.config for every key)
NOTES_CONFIG: dict[str, Any] = {
    "model": "crf",
    "multilingual": True,
    # BIO: half the tags of BIOES, as accurate here, and the tagger's cost grows with the square of the tags
    "label_scheme": "BIO",
    "unit": "line",
    "features": {
        "window": 2,
        "affixes": 4,
        "gazetteers": ["first_names", "surnames", "cities", "countries", "hospitals"],
        "rules": True,
        "evidence": list(EVIDENCE_GROUPS),  # every language-independent evidence group
    },
    # SGD with L2: as accurate as L-BFGS here in a tenth of the time (one fold: 2 min instead of 30)
    "algorithm": "l2sgd",
    "c2": [0.1],
    "max_iterations": 15,
    # features seen fewer than 3 times dropped: a model a fifth of the size, as accurate along the
    # precision/recall curve (held-out notes)
    "min_freq": 3,
}
#: share of the training documents also scored as "dev" in ``model.json``: the single grid point needs no
#: choice, so every document trains and these scores are a training fit, not held-out figures (the held-out
#: ones come from ``benchmarks/generalisation.py``)
DEV_SHARE = 0.1

_SET = re.compile(r"^[a-z]{2}-([a-z]+)\d")


def writing_set(doc: Document) -> str:
    """The writing set of a notes document, from its id (``en-ua017`` -> ``ua``)."""
    m = _SET.match(doc.id)
    if m is None:
        raise InputError(f"document id {doc.id!r} does not name a writing set (expected like 'en-ua017')")
    return m.group(1)


def read_notes(corpus_dir: Path, languages: Sequence[str] = LANGUAGES) -> dict[str, list[Document]]:
    """The notes of each language (``<corpus_dir>/<lang>.jsonl``), each document tagged with its language."""
    from clinideid.formats import read_corpus

    out: dict[str, list[Document]] = {}
    for lang in languages:
        path = Path(corpus_dir) / f"{lang}.jsonl"
        if not path.is_file():
            raise InputError(f"no {path.name} in {corpus_dir}")
        out[lang] = [
            d if d.language == lang else Document(d.id, d.text, lang, d.metadata, d.spans)
            for d in read_corpus(path, "jsonl")
        ]
    return out


def set_folds(notes: Mapping[str, Sequence[Document]]) -> list[dict[str, str]]:
    """For each fold, the writing set held out in each language (fold ``k``: every language's ``k``-th set,
    cycling through the languages with fewer sets)."""
    sets = {lang: sorted({writing_set(d) for d in docs}) for lang, docs in notes.items()}
    n_folds = max(len(s) for s in sets.values())
    return [{lang: s[k % len(s)] for lang, s in sets.items()} for k in range(n_folds)]


def first_fold_holding_out(folds: Sequence[Mapping[str, str]], lang: str, set_name: str) -> int:
    """The first fold whose model never saw ``set_name`` of ``lang``: its predictions are that set's."""
    return next(k for k, held in enumerate(folds) if held[lang] == set_name)


def notes_train_config(**overrides: Any) -> TrainConfig:
    return parse_train_config({**NOTES_CONFIG, **overrides})


def train_notes_model(
    docs: Sequence[Document],
    out_dir: Path,
    name: str,
    *,
    seed: int = 1,
    config: TrainConfig | None = None,
    data: TrainingData | None = None,
) -> Any:
    """Train the notes CRF on all of ``docs`` into ``out_dir`` (a seeded ``DEV_SHARE`` sample of them scored as
    a training fit)."""
    from clinideid.train.crf import train_crf

    docs = list(docs)
    sample = random.Random(seed).sample(docs, max(1, int(len(docs) * DEV_SHARE)))
    return train_crf(
        docs,
        sample,
        config or notes_train_config(),
        out_dir=out_dir,
        name=name,
        seed=seed,
        label_set="canonical",
        training_data=data,
    )
