"""Render documents from a language's templates: pick blocks, fill slots, apply a style, join."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Sequence

from clinideid.errors import ConfigError
from clinideid.synth.lang import PROFILES
from clinideid.synth.profile import LanguageProfile
from clinideid.synth.segments import DISTRACTOR, LITERAL, PHI, Segment, SynthNote, assemble
from clinideid.synth.styles import STYLES, apply_style
from clinideid.synth.values import Case

DOC_TYPES: tuple[str, ...] = ("discharge", "progress", "report", "referral", "form", "ed")
LANGUAGES: tuple[str, ...] = tuple(sorted(PROFILES))

_SLOT = re.compile(r"\{(?:(g|dg):([^|}]*)\|([^}]*)|(\w+))\}")
_RANGE = re.compile(r"\[(\d+)-(\d+)\]")


def _distractor(profile: LanguageProfile, kind: str, rng: random.Random) -> str:
    pattern = rng.choice(profile.distractors[kind])
    return _RANGE.sub(lambda m: str(rng.randint(int(m.group(1)), int(m.group(2)))), pattern)


def render(template: str, case: Case, profile: LanguageProfile, rng: random.Random) -> list[Segment]:
    """The segments of one template: literal text, ``{slot}`` values, ``{g:..|..}`` agreement words."""
    out: list[Segment] = []
    pos = 0
    for m in _SLOT.finditer(template):
        if m.start() > pos:
            out.append(Segment(template[pos : m.start()]))
        pos = m.end()
        if m.group(1):
            female = case.patient.female if m.group(1) == "g" else case.doctors[0].female
            out.append(Segment(m.group(3) if female else m.group(2)))
            continue
        name = m.group(4)
        if name in profile.distractors:
            out.append(Segment(_distractor(profile, name, rng), DISTRACTOR, tag=name))
            continue
        text, label = case.slot(name)
        out.append(Segment(text, PHI, label) if label else Segment(text))
    if pos < len(template):
        out.append(Segment(template[pos:]))
    return out


def _check(values: Iterable[str] | None, allowed: Sequence[str], what: str) -> tuple[str, ...]:
    if values is None:
        return tuple(allowed)
    chosen = tuple(dict.fromkeys(v.strip() for v in values if v.strip()))
    bad = [v for v in chosen if v not in allowed]
    if bad or not chosen:
        raise ConfigError(
            f"unknown {what} {', '.join(bad) or '(none given)'}; choose from {', '.join(allowed)}"
        )
    return chosen


def profile_for(language: str) -> LanguageProfile:
    code = (language or "").strip().lower().replace("_", "-").split("-")[0]
    if code not in PROFILES:
        raise ConfigError(
            f"no synthetic-note templates for language {language!r}; available: {', '.join(LANGUAGES)}"
        )
    return PROFILES[code]


def generate_one(language: str, seed: int, index: int, doc_type: str, style: str) -> SynthNote:
    """Document ``index`` of the stream for ``(language, seed)``, of ``doc_type`` in ``style``."""
    profile = profile_for(language)
    rng = random.Random(f"clinideid-synth/{profile.code}/{seed}/{index}")
    case = Case(profile, rng)
    segments: list[Segment] = []
    for block in profile.templates[doc_type]:
        template = rng.choice(block)
        if not template:
            continue
        if segments and not segments[-1].text.endswith("\n"):
            segments.append(Segment("\n"))
        segments.extend(render(template, case, profile, rng))
    segments = _merge_literals(segments)
    segments = apply_style(style, segments, rng, profile.abbreviations, profile.code)
    metadata = {
        "type": doc_type,
        "style": style,
        "seed": seed,
        "index": index,
        "generator": "clinideid.synth",
    }
    return assemble(segments, f"synth-{profile.code}-{seed}-{index:06d}", profile.code, metadata)


def _merge_literals(segments: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for seg in segments:
        if out and seg.kind == LITERAL and out[-1].kind == LITERAL:
            out[-1] = Segment(out[-1].text + seg.text)
        else:
            out.append(seg)
    return out


def generate_notes(
    language: str,
    count: int,
    seed: int = 0,
    *,
    types: Iterable[str] | None = None,
    styles: Iterable[str] | None = None,
    start: int = 0,
) -> Iterator[SynthNote]:
    """``count`` notes for ``language``, reproducible from ``seed``.

    Styles and types are taken in turn (every pair appears within ``len(styles) * len(types)`` notes), so a
    modest sample covers them all; the contents of each note come from its own random stream.
    """
    profile = profile_for(language)
    type_list = _check(types, DOC_TYPES, "document type(s)")
    style_list = _check(styles, STYLES, "style(s)")
    if count < 0:
        raise ConfigError("count must be zero or more")
    for index in range(start, start + count):
        style = style_list[(index + seed) % len(style_list)]
        doc_type = type_list[(index // len(style_list) + seed) % len(type_list)]
        yield generate_one(profile.code, seed, index, doc_type, style)


def generate(
    language: str,
    count: int,
    seed: int = 0,
    *,
    types: Iterable[str] | None = None,
    styles: Iterable[str] | None = None,
) -> list:
    """``generate_notes`` as a list of documents (gold spans included)."""
    return [n.document for n in generate_notes(language, count, seed, types=types, styles=styles)]
