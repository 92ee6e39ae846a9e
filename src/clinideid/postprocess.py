"""Post-processing steps: what the pipeline does to the resolved spans before the operators replace them.

The pipeline config lists the steps by name, in order (``postprocess:`` in ``config/<lang>.yaml``); each
is a small function ``step(spans, context) -> spans`` over the resolved spans of one document (in reading
order, offsets into ``context.text``), registered in ``STEPS`` by name. Plug-in packages add steps through
the entry-point group ``clinideid.postprocess``. The built-in steps:

- ``trim_role_words``: title, role and kinship words at the edges of a name span are not the name
  ("Tochter Anna Berger" -> "Anna Berger", "DR SMITH" -> "SMITH"); a span that is only one such word
  is dropped.
- ``propagate_mentions``: a name or place found once marks its other mentions in the document (and the
  mentions found in the patient's other documents, ``context.known``), whatever detector found it
  (``clinideid.mentions``).
- ``merge_adjacent_names``: consecutive spans of one name label separated only by spaces become one span,
  so a name is replaced as one ("Christine" + "JALONNET").
- ``drop_measurements``: a span of digits and separators only that reads as a clinical measurement is
  dropped: it follows a vital-sign, ventilator or lab abbreviation ("HR 88-107", "PS 12/5", "АД 120/80";
  ``clinideid.detect.evidence.MEASURES``) or comes before a unit ("14 mg", "6 ml/h"). A date with a year
  ("12/05/2021") and anything with a letter are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import regex

from clinideid.document import Span, sort_spans
from clinideid.labels import canonical
from clinideid.mentions import (
    Mention,
    RoleWords,
    Token,
    find_mentions,
    role_words,
    tokenize,
)
from clinideid.registry import Registry

#: the steps the packaged configs run, in order
DEFAULT_STEPS = ("drop_measurements", "trim_role_words", "propagate_mentions", "merge_adjacent_names")
#: name labels whose spans lose their title, role and kinship words
TRIMMED_LABELS = frozenset({"PATIENT", "DOCTOR", "PERSON"})
#: the source of the spans ``propagate_mentions`` adds
PROPAGATED = "propagate_mentions"
_EDGE_PUNCTUATION = frozenset(",;:-–()")
_HYPHENS = frozenset("-‐")


@dataclass(frozen=True)
class StepContext:
    """What a step may read besides the spans: the document's text (as the detectors read it), its
    language, and names and places found in other documents of the same patient."""

    text: str
    language: str
    known: Sequence[Mention] = ()


Step = Callable[[list[Span], StepContext], list[Span]]

STEPS: Registry[Step] = Registry("post-processing step", "clinideid.postprocess", listing="known")


def run_steps(names: Sequence[str], spans: list[Span], context: StepContext) -> list[Span]:
    """``spans`` after each named step in turn (unknown names: ``ConfigError`` naming the known ones)."""
    for name in names:
        spans = sort_spans(STEPS.get(name)(spans, context))
    return spans


def check_steps(names: Sequence[str]) -> None:
    """``ConfigError`` for a name that is not a registered step."""
    for name in names:
        STEPS.get(name)


# -- the steps -----------------------------------------------------------------------------------------------


#: a span made only of a number, range or ratio ("88-107", "12/5", "14"), without a year
_MEASURE_VALUE = regex.compile(r"\d{1,4}(?:[.,]\d+)?(?:[ ]?[-/:x][ ]?\d{1,4}(?:[.,]\d+)?)?")
_YEAR = regex.compile(r"(?:19|20)\d\d")
#: the words before a measurement value (the last one or two count), and the unit after it
_WORD_BEFORE = regex.compile(r"([^\W\d_][\w°/]*)[ \t:=]*(?:(?i:from|de|von|da|от|с)[ \t]+)?$")
_WORD_AFTER = regex.compile(r"^[ \t]*([%°\w/]+)")


@STEPS.register("drop_measurements")
def drop_measurements(spans: list[Span], context: StepContext) -> list[Span]:
    from clinideid.detect.evidence import MEASURES, UNITS

    text = context.text
    out = []
    for span in spans:
        value = text[span.start : span.end]
        if _MEASURE_VALUE.fullmatch(value) and not _YEAR.search(value):
            before = _WORD_BEFORE.search(text, max(0, span.start - 24), span.start)
            after = _WORD_AFTER.match(text[span.end : span.end + 16])
            if (before and before.group(1).casefold() in MEASURES) or (
                after and after.group(1).casefold() in UNITS
            ):
                continue
        out.append(span)
    return out


@STEPS.register("merge_adjacent_names")
def merge_adjacent_names(spans: list[Span], context: StepContext) -> list[Span]:
    """Join consecutive spans of the same NAME-category label separated only by spaces or tabs."""
    text = context.text
    tax = canonical()
    out: list[Span] = []
    for span in spans:
        prev = out[-1] if out else None
        joinable = (
            prev is not None
            and prev.label == span.label
            and span.label in tax
            and tax.category_of(span.label) == "NAME"
            and prev.end <= span.start
            and not text[prev.end : span.start].strip(" \t")
            and not prev.fragments
            and not span.fragments
        )
        if joinable and prev is not None:
            scores = [s for s in (prev.score, span.score) if s is not None]
            out[-1] = prev.with_(
                end=span.end,
                text=None,
                score=min(scores) if scores else None,
                explanation=f"{prev.explanation} + {span.explanation}",
            )
        else:
            out.append(span)
    return out


@STEPS.register("trim_role_words")
def trim_role_words(spans: list[Span], context: StepContext) -> list[Span]:
    """Name spans without the title, role and kinship words at their edges; a span that is only one such
    word ("DR", "Tochter") is dropped. Of a span made only of such words ("Herr Freund") the last one
    stays: a word after a title is a name even when it is also a role word."""
    roles = role_words(context.language)
    out = []
    for span in spans:
        if span.label not in TRIMMED_LABELS or span.fragments:
            out.append(span)
            continue
        bounds = _trimmed(context.text, span, roles)
        if bounds is None:
            continue
        start, end = bounds
        if (start, end) == (span.start, span.end):
            out.append(span)
        else:
            out.append(span.with_(start=start, end=end, text=None))
    return out


def _trimmed(text: str, span: Span, roles: RoleWords) -> tuple[int, int] | None:
    """The span's bounds without the role words at its edges; None when it is one role word alone."""
    tokens = tokenize(text[span.start : span.end], span.start)
    if not tokens:
        return span.start, span.end
    lo, hi = 0, len(tokens)  # the kept tokens: tokens[lo:hi]
    removed = 0
    while lo < hi:
        n = roles.match_at(tokens[:hi], lo)
        if not n or (lo + n < hi and tokens[lo + n].text in _HYPHENS):  # "Dame-Marie" is one name
            break
        lo += n
        removed += 1
        while lo < hi and (tokens[lo].text == "." or tokens[lo].text in _EDGE_PUNCTUATION):
            lo += 1
    if removed and not any(t.is_word for t in tokens[lo:hi]):
        if removed == 1:
            return None  # one title, role or kinship word alone is no name
        lo = _last_entry(tokens, hi, roles)  # "Herr Freund": the word after the title is the name
    while hi > lo:
        end = hi - 1
        while end > lo and tokens[end].text in _EDGE_PUNCTUATION | {"."}:
            end -= 1
        n = roles.match_before(tokens, end) if end > lo else 0
        if not n or end - n + 1 <= lo or not any(t.is_word for t in tokens[lo : end - n + 1]):
            break
        if tokens[end - n].text in _HYPHENS:  # "Notre-Dame" is one name
            break
        hi = end - n + 1
        while hi > lo and tokens[hi - 1].text in _EDGE_PUNCTUATION:
            hi -= 1
    return tokens[lo].start, tokens[hi - 1].end


def _last_entry(tokens: Sequence[Token], hi: int, roles: RoleWords) -> int:
    """Index of the first token of the last role entry before ``hi`` (trailing punctuation skipped)."""
    end = hi - 1
    while end > 0 and not tokens[end].is_word:
        end -= 1
    return end - max(roles.match_before(tokens, end), 1) + 1


@STEPS.register("propagate_mentions")
def propagate_mentions(spans: list[Span], context: StepContext) -> list[Span]:
    """``spans`` plus every other mention of their names and places (and of ``context.known``)."""
    own: dict[Mention, str] = {}
    for span in sort_spans(spans):
        mention = None if span.fragments else Mention.of(span.label, context.text[span.start : span.end])
        if mention is not None and mention not in own:
            own[mention] = f"the text of a span found by {span.source} ({span.explanation})"
    own_mentions = [(m, origin) for m, origin in sorted(own.items())]
    known = [(m, "found in another document of the patient") for m in context.known]
    found = find_mentions(context.text, spans, [*own_mentions, *known], context.language)
    if not found:
        return spans
    added = [
        Span(f.start, f.end, f.label, source=PROPAGATED, explanation=f"{PROPAGATED}: {f.origin}")
        for f in found
    ]
    return [*spans, *added]
