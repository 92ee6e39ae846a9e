"""JSONL records: every field but the id is de-identified (or dropped), not only the note's text.

A record such as ``{"id": …, "text": …, "patient_name": …, "metadata": {"ward": …}}`` carries PHI outside
its text field. By default each string (and integer) value anywhere in the record is de-identified together
with the note (see ``Deidentifier.deidentify_with_fields``); ``keep`` lists fields to pass through verbatim,
``drop_others`` removes every field that is neither the text, an id, the language nor kept. Gold
annotations (``entities``, ``spans``) are dropped: their offsets point into the original text.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from clinideid.batch.inputs import ID_FIELDS
from clinideid.errors import InputError

#: fields written back untouched: the record id (or its keyed hash) and the language code
PASS_THROUGH = (*ID_FIELDS, "language")
GOLD_FIELDS = ("entities", "spans")
#: deeper nesting is refused rather than walked
MAX_FIELD_DEPTH = 32

Path_ = tuple[str | int, ...]


@dataclass
class FieldPolicy:
    """Which record fields (top-level names) are kept verbatim, and whether the others are dropped."""

    keep: frozenset[str] = field(default_factory=frozenset)
    drop_others: bool = False


def _leaves(value: Any, path: Path_, depth: int = 0) -> Iterator[tuple[Path_, str]]:
    if depth > MAX_FIELD_DEPTH:
        raise InputError(f"fields nested deeper than {MAX_FIELD_DEPTH} levels")
    if isinstance(value, str):
        if value.strip():
            yield path, value
    elif isinstance(value, bool) or value is None or isinstance(value, float):
        return
    elif isinstance(value, int):
        yield path, str(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, str(k)), depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i), depth + 1)


def field_label(path: Path_) -> str:
    """A human label for a field path, used as its cue: ``("metadata", "patient_name")`` → ``patient name``."""
    names = [p for p in path if isinstance(p, str)]
    return (names[-1] if names else "field").replace("_", " ").replace("-", " ").strip() or "field"


def dotted(path: Path_) -> str:
    return ".".join(str(p) for p in path)


def fields_to_deidentify(record: dict, text_field: str, policy: FieldPolicy) -> list[tuple[Path_, str]]:
    """``(path, value)`` of every value to de-identify, in record order."""
    out: list[tuple[Path_, str]] = []
    for key, value in record.items():
        if key == text_field or key in PASS_THROUGH or key in GOLD_FIELDS or key in policy.keep:
            continue
        if policy.drop_others:
            continue
        out.extend(_leaves(value, (key,)))
    return out


def rebuild_record(
    record: dict,
    text_field: str,
    new_text: str,
    new_values: list[tuple[Path_, str, str]],
    policy: FieldPolicy,
    output_id: str | None = None,
) -> dict:
    """The record to write: new text and values; dropped and gold fields removed; ids replaced by
    ``output_id`` when given (outputs named by keyed hash)."""
    out: dict = {}
    for key, value in record.items():
        if key in GOLD_FIELDS:
            continue
        if key == text_field:
            out[key] = new_text
        elif key in PASS_THROUGH:
            out[key] = output_id if (output_id is not None and key in ID_FIELDS) else value
        elif key in policy.keep:
            out[key] = value
        elif not policy.drop_others:
            out[key] = copy.deepcopy(value)
    for path, old, new in new_values:
        if new != old:
            _set(out, path, new)
    return out


def _set(container: Any, path: Path_, value: str) -> None:
    for step in path[:-1]:
        container = container[step]
    container[path[-1]] = value
