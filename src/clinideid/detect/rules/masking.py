"""Masks: how a pass hides what earlier passes found, keeping every offset in place.

Each character of a found span is replaced by one private-use character that encodes the span's label
(U+E001 + the label's position in the canonical taxonomy; U+E000 for ``safe`` spans). Rules can so
anchor on earlier findings: ``{{MASKED}}`` is any masked run, ``{{MASKED_CITY}}`` a run masked as a city
("Alcalá de Henares (Madrid)": a capitalised word in parentheses right after a city is a province).
Characters of that range already in the input are replaced by U+E100 first, so they never count as masks.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import regex

from clinideid.labels import canonical

MASK = "\ue000"  # the mask of ``safe`` spans (known non-PHI) and the start of the mask range
MASK_LAST = "\ue0ff"
_INPUT_SUBSTITUTE = "\ue100"
UNMASKED_RUN = regex.compile("[^\ue000-\ue0ff]+")
_MASK_CHARS = regex.compile("[\ue000-\ue0ff]")


@cache
def _label_chars() -> dict[str, str]:
    return {label: chr(0xE001 + i) for i, label in enumerate(canonical().labels)}


def mask_char(label: str | None) -> str:
    """The mask character of ``label`` (``MASK`` for None / unknown labels)."""
    if label is None:
        return MASK
    return _label_chars().get(label, MASK)


def is_masked(segment: str) -> bool:
    return _MASK_CHARS.search(segment) is not None


def prepare(text: str) -> str:
    """``text`` with any character of the mask range replaced, so only real masks are masks."""
    return _MASK_CHARS.sub(_INPUT_SUBSTITUTE, text) if is_masked(text) else text


def mask(text: str, spans: Iterable[tuple[int, int, str | None]]) -> str:
    """``text`` with each ``(start, end, label)`` replaced by as many mask characters (offsets unchanged)."""
    pieces = []
    last = 0
    for s, e, label in sorted(spans, key=lambda t: (t[0], t[1])):
        s = max(s, last)
        if e <= s:
            continue
        pieces.append(text[last:s])
        pieces.append(mask_char(label) * (e - s))
        last = e
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def mask_definitions() -> dict[str, str]:
    """``MASKED`` and ``MASKED_<LABEL>`` regex fragments for pack definitions."""
    # each starts only at the first character of a masked run, so a pattern beginning with one is tried
    # once per earlier finding, not once per masked character
    defs = {"MASKED": "(?<![\\ue000-\\ue0ff])[\\ue000-\\ue0ff]+"}
    for label, ch in _label_chars().items():
        code = f"\\u{ord(ch):04x}"
        defs[f"MASKED_{label}"] = f"(?<!{code}){code}+"
    return defs
