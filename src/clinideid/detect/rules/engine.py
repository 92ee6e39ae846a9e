"""The rule engine: ordered, iterative passes over a text whose earlier findings are masked out.

Each pass runs all its rules on the *masked* text: every character of a span found by an earlier pass is
replaced by a mask character (one private-use character per character, encoding the span's label; see
``masking``), so offsets never move. A later pass therefore cannot re-label what an earlier one decided
(the patient-name pass cannot take a hospital name; a name found as the patient's stays the patient's),
and rules can be written for the text that is left. Within a pass, overlapping candidates are resolved by rule ``priority``, then length, then rule
order. Names from rules marked ``propagate`` are then searched in the rest of the text (``propagate``)
before the next pass. Finally, adjacent spans of the pack's ``merge_adjacent`` labels are joined.

Rules never see the raw text: they see a copy with typographic hyphens and spaces made plain, one character
for one (``normalize``), so offsets found in it are offsets in the original. Every step below stays linear
in the length of the text (the packs keep their own patterns linear; ``tests/test_rules_linear_time.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache

from clinideid.detect.rules.compiler import CompiledPack, CompiledPass
from clinideid.detect.rules.masking import UNMASKED_RUN, is_masked, mask, prepare
from clinideid.detect.rules.matchers import Matcher
from clinideid.detect.rules.normalize import normalize_for_matching
from clinideid.detect.rules.propagate import Seed, find_variants
from clinideid.errors import ConfigError
from clinideid.text.style import CaseRegions, case_regions

#: labels of names and places, which grow to the whole hyphenated word they sit in
COMPOUND_LABELS = frozenset(
    {"PATIENT", "DOCTOR", "PERSON", "CITY", "STREET", "HOSPITAL", "ORGANIZATION", "LOCATION_OTHER", "STATE"}
)
_EDGE_PUNCT = " \t\r\n\f\v,;:(-–—/"


@dataclass(frozen=True, slots=True)
class Found:
    """One span the engine found (``safe`` ones are masked but not reported)."""

    start: int
    end: int
    label: str | None
    score: float
    rule_id: str
    pass_name: str
    safe: bool = False
    propagated: bool = False
    #: (group id, date role) of a form-field value (``fields`` rules)
    detail: tuple[str, str | None] | None = None


def _compound_start(text: str, start: int, floor: int) -> int:
    """Where the hyphenated word that ``start`` lies in begins ("Notre-Dame-de-Grâce" from "Grâce")."""
    while start - 2 >= floor and text[start - 1] == "-" and text[start - 2].isalpha():
        start -= 1
        while start - 1 >= floor and text[start - 1].isalpha():
            start -= 1
    return start


def _compound_end(text: str, end: int, ceiling: int) -> int:
    while end + 1 < ceiling and text[end] == "-" and text[end + 1].isalpha():
        end += 1
        while end < ceiling and text[end].isalpha():
            end += 1
    return end


def _whole_compounds(spans: list[Found], text: str) -> list[Found]:
    """Name and place spans grown to the whole hyphenated word they are part of.

    A list hit inside a compound ("Grâce" of "Notre-Dame-de-Grâce", "Saint" of "Saint-Luc") names only a
    piece of it; the rest of the compound is the same name. Never over a neighbouring span.
    """
    out: list[Found] = []
    for i, f in enumerate(spans):
        if f.label not in COMPOUND_LABELS or not text[f.start : f.end].replace("-", "").isalpha():
            out.append(f)
            continue
        floor = out[-1].end if out else 0
        ceiling = spans[i + 1].start if i + 1 < len(spans) else len(text)
        start, end = _compound_start(text, f.start, floor), _compound_end(text, f.end, ceiling)
        out.append(f if (start, end) == (f.start, f.end) else replace(f, start=start, end=end))
    return out


def _trim(text: str, s: int, e: int, chars: str) -> tuple[int, int]:
    while s < e and text[s] in chars:
        s += 1
    while e > s and text[e - 1] in chars:
        e -= 1
    return s, e


def _common_words(language: str | None) -> Mapping[str, float] | None:
    """The pack language's word frequencies (None for a pack without language or lists)."""
    if not language:
        return None
    from clinideid.resources import available_languages, word_zipf

    code = language.split("-")[0].lower()
    if code not in available_languages():
        return None
    return word_zipf(code) or None


class RuleEngine:
    """Runs a compiled pack (optionally only some of its passes) over texts."""

    def __init__(self, pack: CompiledPack, passes: Sequence[str] | None = None) -> None:
        self.pack = pack
        if passes is None:
            self.passes: tuple[CompiledPass, ...] = pack.passes
        else:
            unknown = [p for p in passes if p not in pack.pass_names]
            if unknown:
                raise ConfigError(
                    f"rule pack {pack.origin} has no pass(es) {', '.join(unknown)}; "
                    f"its passes: {', '.join(pack.pass_names)}"
                )
            wanted = set(passes)
            self.passes = tuple(p for p in pack.passes if p.name in wanted)
        self._common_words = _common_words(pack.language)

    # -- one candidate -> accepted pieces -------------------------------------------------------------
    def _pieces(self, m: Matcher, s: int, e: int, masked: str, text: str) -> Iterator[tuple[int, int, float]]:
        segment = masked[s:e]
        if not is_masked(segment):
            ranges = [_trim(text, s, e, " \t\r\n\f\v")]
        else:
            ranges = [
                _trim(text, s + r.start(), s + r.end(), _EDGE_PUNCT) for r in UNMASKED_RUN.finditer(segment)
            ]
        allow = self.pack.allowlist
        for a, b in ranges:
            length = b - a
            if length < m.min_length or length > m.max_length:
                continue
            piece = text[a:b]
            if not any(ch.isalnum() for ch in piece):
                continue
            if m.use_allowlist and allow is not None and allow.contains(piece):
                continue
            score = m.score
            if m.context is not None:
                if m.context.present(text, a, b):
                    if not m.context_required:
                        score = min(1.0, score + m.boost)
                elif m.context_required:
                    continue
            if m.not_context is not None and m.not_context.present(text, a, b):
                continue
            yield a, b, score

    def _run_pass(self, p: CompiledPass, masked: str, text: str) -> list[Found]:
        hits = []
        for order, m in enumerate(p.matchers):
            if m.trigger is not None and m.trigger.search(masked) is None:
                continue
            for cand in m.candidates(masked):
                s, e, label = cand[0], cand[1], cand[2]
                detail = cand[3] if len(cand) > 3 else None
                for a, b, score in self._pieces(m, s, e, masked, text):
                    hits.append((-m.priority, -(b - a), order, a, b, label, score, m, detail))
        hits.sort(key=lambda h: h[:4])
        # one byte per character: 1 where an accepted span lies (a candidate is checked and marked in
        # time proportional to its length, whatever the number of spans already taken)
        taken = bytearray(len(text)) if hits else b""
        chosen: list[Found] = []
        for _, _, _, a, b, label, score, m, detail in hits:
            if taken.find(1, a, b) != -1:
                continue
            taken[a:b] = b"\x01" * (b - a)
            safe = m.safe or label is None
            chosen.append(Found(a, b, label, score, m.rule_id, p.name, safe=safe, detail=detail))
        return chosen

    def _propagate(
        self, p: CompiledPass, chosen: list[Found], masked: str, text: str, regions: Callable[[], CaseRegions]
    ) -> list[Found]:
        by_id = {m.rule_id: m for m in p.matchers}
        seeds = []
        for f in sorted(chosen, key=lambda f: f.start):
            m = by_id[f.rule_id]
            if m.propagate is None or f.safe or f.label is None:
                continue
            if m.propagate_labels is not None and f.label not in m.propagate_labels:
                continue
            seeds.append(Seed(text[f.start : f.end], f.label, f.score, f.rule_id, m.propagate))
        if not seeds:
            return []
        out = []
        for s, e, seed in find_variants(
            seeds,
            masked,
            connectors=self.pack.connectors,
            allowlist=self.pack.allowlist,
            common_words=self._common_words,
            regions=regions,
        ):
            score = round(seed.score * seed.spec.score_factor, 4)
            out.append(Found(s, e, seed.label, score, f"{seed.rule_id}+propagated", p.name, propagated=True))
        return out

    def run(self, text: str) -> list[Found]:
        """Every span found in ``text`` (safe ones excluded), in reading order, non-overlapping.

        Offsets are offsets in ``text``; the rules read its normalised copy (same length)."""
        text = normalize_for_matching(text)
        masked = prepare(text)
        found: list[Found] = []
        regions = cache(lambda: case_regions(text))  # case style per block: once per run, when needed
        for p in self.passes:
            chosen = self._run_pass(p, masked, text)
            if not chosen:
                continue
            masked = mask(masked, ((f.start, f.end, None if f.safe else f.label) for f in chosen))
            extra = self._propagate(p, chosen, masked, text, regions)
            if extra:
                masked = mask(masked, ((f.start, f.end, f.label) for f in extra))
                chosen.extend(extra)
            found.extend(chosen)
        kept = sorted((f for f in found if not f.safe), key=lambda f: f.start)
        return self._merge_adjacent(_whole_compounds(kept, text), text)

    def _merge_adjacent(self, spans: list[Found], text: str) -> list[Found]:
        labels = self.pack.merge_labels
        if not labels or len(spans) < 2:
            return spans
        out: list[Found] = [spans[0]]
        for f in spans[1:]:
            prev = out[-1]
            if (
                f.label == prev.label
                and f.label in labels
                and self.pack.merge_gap.fullmatch(text, prev.end, f.start) is not None
            ):
                out[-1] = replace(
                    prev,
                    end=f.end,
                    score=max(prev.score, f.score),
                    propagated=prev.propagated and f.propagated,
                )
            else:
                out.append(f)
        return out
