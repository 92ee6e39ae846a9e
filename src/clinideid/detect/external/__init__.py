"""Adapters for general-purpose NER libraries: Natasha (Russian), spaCy and Stanza pipelines.

Each adapter is a detector type (``natasha``, ``spacy``, ``stanza``) that runs the library's named-entity
recogniser and maps its entity types (PER, LOC, ORG, ...) onto canonical labels. The libraries are optional
extras (``pip install 'clinideid[natasha]'``, ``[spacy]``, ``[stanza]``); a missing one is a clear
``ModelError`` naming the extra. None of them downloads anything at run time: Natasha ships its models in
its package, spaCy loads an installed pipeline package or a local directory, Stanza a local model folder.

Such models find people, places and organisations, not dates or identifiers: use them inside the
``hybrid`` detector (``models: [{type: natasha}]``) beside the rules, or alone to compare.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from functools import cache
from types import ModuleType

from clinideid.document import Span
from clinideid.errors import ConfigError, ModelError
from clinideid.extras import missing_extra
from clinideid.labels import canonical

#: library entity types -> canonical labels (the union of Natasha's, spaCy's OntoNotes/WikiNER and
#: Stanza's schemes); types not listed are dropped. ``LOC`` is refined by the language's place lists.
DEFAULT_LABELS: dict[str, str] = {
    "PER": "PERSON",
    "PERSON": "PERSON",
    "LOC": "LOCATION",
    "GPE": "LOCATION",
    "FAC": "LOCATION_OTHER",
    "ORG": "ORGANIZATION",
}
#: the pseudo-label ``LOCATION``: COUNTRY or STATE when the place is in that list, else ``CITY``
LOCATION = "LOCATION"


def require(module: str, what: str) -> ModuleType:
    """Import ``module`` (a library or one of its parts); a missing one is a ``ModelError`` naming the extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".")[0]
        error = missing_extra(ModuleNotFoundError(name=top), what)
        if error is None:  # pragma: no cover - every adapter's library is in EXTRAS
            raise
        raise error from exc


def label_map(labels: Mapping[str, str | None] | None) -> dict[str, str]:
    """``DEFAULT_LABELS`` updated by ``labels`` (a ``None`` value drops that type), labels checked."""
    merged: dict[str, str | None] = {**DEFAULT_LABELS, **dict(labels or {})}
    out: dict[str, str] = {}
    for kind, label in merged.items():
        if label is None:
            continue
        if label != LOCATION and label not in canonical():
            raise ConfigError(f"NER label map: {label!r} (for {kind!r}) is not a canonical label")
        out[str(kind)] = label
    return out


@cache
def _places(language: str) -> tuple[frozenset[str], frozenset[str]]:
    """Normalised country and state names (all case forms the lists hold) of ``language``."""
    from clinideid.resources import available_languages, load_list, normalize

    lang = language.lower().split("-")[0]
    if lang not in available_languages():
        return frozenset(), frozenset()
    return tuple(  # type: ignore[return-value]
        frozenset(normalize(e) for e in load_list(lang, name)) for name in ("countries", "states")
    )


def place_label(text: str, language: str) -> str:
    """COUNTRY, STATE or CITY for a place name found by a model."""
    from clinideid.resources import normalize

    countries, states = _places(language)
    key = normalize(text)
    if key in countries:
        return "COUNTRY"
    if key in states:
        return "STATE"
    return "CITY"


def make_spans(
    text: str,
    found: Iterable[tuple[int, int, str, float | None]],
    labels: Mapping[str, str],
    *,
    source: str,
    model: str,
    language: str,
) -> list[Span]:
    """Spans from a library's ``(start, end, type, score)`` entities: mapped labels, trimmed offsets.

    Entity types with no label are dropped; offsets are trimmed of surrounding white space and checked
    against ``text``; the explanation names the model and the library's type (``natasha:PER``).
    """
    spans: list[Span] = []
    for start, end, kind, score in found:
        label = labels.get(kind)
        if label is None or not 0 <= start < end <= len(text):
            continue
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end <= start:
            continue
        if label == LOCATION:
            label = place_label(text[start:end], language)
        spans.append(Span(start, end, label, source=source, score=score, explanation=f"{model}:{kind}"))
    return sorted(spans, key=lambda s: (s.start, s.end))


def check_model_dir(path: str, what: str) -> None:
    """A clear error when a local model directory is missing (nothing is downloaded at run time)."""
    from pathlib import Path

    if not Path(path).expanduser().is_dir():
        raise ModelError(
            f"{what}: no model directory at the given path; download the model once with the library's own "
            "tool and pass its folder (nothing is downloaded at run time)"
        )


__all__ = ["DEFAULT_LABELS", "check_model_dir", "label_map", "make_spans", "place_label", "require"]
