"""The built-in operators, chosen per label in the config: ``redact``, ``tag``, ``numbered_tag``, ``mask``,
``hash``, ``surrogate``, ``keep``, ``date_shift``, ``date_generalize`` and ``age``.

Operators that can fail on a span (a date that does not parse, a surrogate that cannot be made) fall back
to a configured simpler operator (``tag`` by default) and say so in the ``Outcome``'s note, so the report
counts them and the PHI is never left in clear.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import string
from collections.abc import Mapping
from typing import Any

from clinideid.document import Span, sort_spans
from clinideid.errors import ConfigError
from clinideid.labels import project_label
from clinideid.transform.ages import DEFAULT_THRESHOLD, aggregate_age
from clinideid.transform.base import Operator, OperatorContext, Outcome, build_operator, register_operator
from clinideid.transform.date_roles import admission_date, date_role
from clinideid.transform.dates import DateOptions, date_offset, parse_anchor, parse_date, shift_date
from clinideid.transform.generalize import GeneralizeContext, Generalizer, build_generalizer
from clinideid.transform.keys import keyed_digest, require_key
from clinideid.transform.surrogates import SurrogateUnavailable, generate_surrogate
from clinideid.transform.textcase import normalize

log = logging.getLogger(__name__)

TAG_LEVELS = ("subcategory", "category")
FALLBACK_OPERATORS = ("tag", "numbered_tag", "redact", "mask", "hash")
SURROGATE_OPTIONS = frozenset(
    {
        "min_days",
        "max_days",
        "direction",
        "date_order",
        "pivot",
        "reference_year",
        "age_threshold",
        "age_phrases",
    }
)


def _check_level(level: str) -> str:
    if level not in TAG_LEVELS:
        raise ConfigError(f"tag level must be one of {', '.join(TAG_LEVELS)}, got {level!r}")
    return level


#: a plain format spec (``03d``, ``>8``, ``.2f``): no nested fields, width and precision of 3 digits at most
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[+\- ]?#?0?\d{0,3}[,_]?(?:\.\d{1,3})?[bcdoxXeEfFgGns%]?")

#: the placeholders of the date_generalize strategies' templates, with sample values of the right type
GENERALIZE_TEMPLATE_FIELDS: dict[str, dict[str, object]] = {
    "quarter": {"q": 1, "year": 2000},
    "age_group": {"lo": 40, "hi": 49},
    "relative": {"unit": "day", "n": "+1"},
}
DICTIONARY_TEMPLATE_FIELDS: dict[str, object] = {"year": 2000, "quarter": 1, "month": 1}
AGE_PHRASE_FIELDS: dict[str, object] = {"n": 90}


def check_template(template: object, what: str = "replacement template", **fields: object) -> str:
    """``template`` if it only uses the placeholders ``fields`` (given with sample values), else
    ``ConfigError`` naming the allowed ones.

    Checked with ``string.Formatter().parse``: no attribute access (``{label.__class__}``), indexing
    (``{label[0]}``), positional fields (``{}``, ``{0}``), conversions (``!r``) or nested fields in a
    format spec, which could reach object internals; a plain spec (``{n:03d}``) is allowed.
    """
    allowed = ", ".join(f"{{{name}}}" for name in fields)
    hint = f"it may only use {allowed}"
    if not isinstance(template, str):
        raise ConfigError(f"{what} must be a string; {hint}, got {type(template).__name__}")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        raise ConfigError(
            f"bad {what} {template!r}: unbalanced braces (write a literal brace as '{{{{' or '}}}}'); {hint}"
        ) from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in fields:
            raise ConfigError(
                f"bad {what} {template!r}: placeholder {{{name}}} is not allowed; {hint} (no attribute "
                "access, indexing or positional fields)"
            )
        if conversion is not None:
            raise ConfigError(f"bad {what} {template!r}: conversion !{conversion} is not allowed; {hint}")
        if spec and ("{" in spec or "}" in spec or not _FORMAT_SPEC.fullmatch(spec)):
            raise ConfigError(
                f"bad {what} {template!r}: format spec {spec!r} of {{{name}}} is not allowed (no nested "
                "fields; width and precision up to 3 digits); " + hint
            )
    try:
        template.format(**fields)
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        raise ConfigError(f"bad {what} {template!r} ({type(exc).__name__}); {hint}") from None
    return template


def _check_template(template: str, **fields: object) -> str:
    return check_template(template, "replacement template", **fields)


def _check_generalize_templates(strategy: str, options: Mapping[str, Any]) -> None:
    """The format-string options of a date strategy only use that strategy's placeholders."""
    fields = GENERALIZE_TEMPLATE_FIELDS.get(strategy)
    if fields is not None and options.get("template") is not None:
        check_template(options["template"], f"date_generalize {strategy} template", **fields)
    entries = options.get("entries") if strategy == "dictionary" else None
    if isinstance(entries, Mapping):
        for month, template in entries.items():
            check_template(template, f"date dictionary entry {month!r}", **DICTIONARY_TEMPLATE_FIELDS)


def _check_age_phrases(phrases: Mapping[str, Mapping[str, str]] | None) -> None:
    if phrases is None:
        return
    if not isinstance(phrases, Mapping) or not all(isinstance(v, Mapping) for v in phrases.values()):
        raise ConfigError('age phrases must map languages to {"bare": ..., "unit": ...} templates')
    for lang, entry in phrases.items():
        for kind, template in entry.items():
            check_template(template, f"age phrase {lang}.{kind}", **AGE_PHRASE_FIELDS)


class _WithFallback(Operator):
    """Holds the fallback operator used when this operator cannot handle a span, and counts its uses."""

    def __init__(self, fallback: str = "tag", fallback_options: Mapping[str, Any] | None = None) -> None:
        if fallback not in FALLBACK_OPERATORS:
            raise ConfigError(
                f"fallback operator must be one of {', '.join(FALLBACK_OPERATORS)}, got {fallback!r}"
            )
        self.fallback: Operator = build_operator(fallback, **dict(fallback_options or {}))
        self.fallback_count = 0

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        return self.apply(span, ctx).text

    def _fall_back(self, span: Span, ctx: OperatorContext, why: str) -> Outcome:
        self.fallback_count += 1
        log.debug("%s fell back to %s for a %s span at %d-%d: %s", self.name, self.fallback.name, span.label,
                  span.start, span.end, why)  # fmt: skip
        return Outcome(self.fallback.replace(span, ctx), self.fallback.name, f"{self.name}: {why}")


# --- simple operators ---------------------------------------------------------------------------------------


@register_operator
class KeepOperator(Operator):
    """Leaves the span as it is (e.g. for labels a use case may keep, such as SEX)."""

    name = "keep"

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        return ctx.document.span_text(span)  # as written, invisible characters included


@register_operator
class RedactOperator(Operator):
    """Removes the span. ``keep_whitespace``: keep the span's line breaks and spaces (layout stays)."""

    name = "redact"

    def __init__(self, keep_whitespace: bool = False) -> None:
        self.keep_whitespace = bool(keep_whitespace)

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        if not self.keep_whitespace:
            return ""
        return "".join(c for c in ctx.span_text(span) if c.isspace())


@register_operator
class TagOperator(Operator):
    """Replaces the span by its label: ``[NAME]``, ``[DATE]``. ``template`` may use {label} (at ``level``),
    {category} and {subcategory}; ``level`` is ``category`` (default) or ``subcategory``."""

    name = "tag"

    def __init__(self, template: str = "[{label}]", level: str = "category") -> None:
        self.level = _check_level(level)
        self.template = _check_template(template, label="", category="", subcategory="")

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        return self.template.format(
            label=project_label(span.label, self.level),
            category=project_label(span.label, "category"),
            subcategory=span.label,
        )


@register_operator
class NumberedTagOperator(Operator):
    """``[PATIENT-1]``, ``[PATIENT-2]``: the same normalised value gets the same number within a document;
    numbers follow first appearance among the document's spans of that label (computed from ``ctx.spans``
    only, so the operator stays pure)."""

    name = "numbered_tag"

    def __init__(self, template: str = "[{label}-{n}]", level: str = "subcategory") -> None:
        self.level = _check_level(level)
        self.template = _check_template(template, label="", n=1)

    def _numbers(self, ctx: OperatorContext) -> dict[tuple[str, str], int]:
        cached = ctx.cache.get(("numbered_tag", self.level))
        if cached is not None:
            return cached
        numbers: dict[tuple[str, str], int] = {}
        counters: dict[str, int] = {}
        for span in sort_spans(ctx.spans):
            label = project_label(span.label, self.level)
            key = (label, normalize(ctx.span_text(span)))
            if key not in numbers:
                counters[label] = counters.get(label, 0) + 1
                numbers[key] = counters[label]
        ctx.cache[("numbered_tag", self.level)] = numbers
        return numbers

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        label = project_label(span.label, self.level)
        key = (label, normalize(ctx.span_text(span)))
        numbers = self._numbers(ctx)
        if key not in numbers:  # a span that is not among ctx.spans: number it after the others
            return self.template.format(label=label, n=1 + sum(1 for lab, _ in numbers if lab == label))
        return self.template.format(label=label, n=numbers[key])


@register_operator
class MaskOperator(Operator):
    """Each character becomes ``char`` (default ``*``), keeping the length; line breaks are kept.
    ``keep_separators``: keep every character that is not a letter or digit ("***-**-****")."""

    name = "mask"

    def __init__(self, char: str = "*", keep_separators: bool = False) -> None:
        if not isinstance(char, str) or len(char) != 1:
            raise ConfigError(f"mask char must be a single character, got {char!r}")
        self.char = char
        self.keep_separators = bool(keep_separators)

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        return "".join(
            c if c in "\r\n" or (self.keep_separators and not c.isalnum()) else self.char
            for c in ctx.span_text(span)
        )


@register_operator
class HashOperator(Operator):
    """A keyed pseudonym: HMAC-SHA256(key, scope + label + normalised value), truncated to ``length`` hex
    digits, in ``template`` (``[PATIENT:3f9a2c1b]``). The same value in the same scope always hashes alike;
    without the key the value cannot be recovered or guessed by hashing candidates."""

    name = "hash"
    needs_key = True

    def __init__(
        self, length: int = 8, template: str = "[{label}:{digest}]", level: str = "subcategory"
    ) -> None:
        if not isinstance(length, int) or not 4 <= length <= 64:
            raise ConfigError(f"hash length must be an integer within 4-64, got {length!r}")
        self.length = length
        self.level = _check_level(level)
        self.template = _check_template(template, label="", digest="")

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        key = require_key(ctx.key, self.name)
        label = project_label(span.label, self.level)
        digest = keyed_digest(key, "hash", ctx.scope_id, label, normalize(ctx.span_text(span))).hex()
        return self.template.format(label=label, digest=digest[: self.length])


# --- surrogates, dates, ages --------------------------------------------------------------------------------


@register_operator
class SurrogateOperator(_WithFallback):
    """A realistic, keyed, format-preserving replacement from the label's surrogate generator.

    Options are passed to the generators: ``min_days``/``max_days``/``direction``/``date_order``/``pivot``
    for dates, ``age_threshold``/``age_phrases`` for ages.
    """

    name = "surrogate"
    needs_key = True

    def __init__(
        self, fallback: str = "tag", fallback_options: Mapping[str, Any] | None = None, **options: Any
    ) -> None:
        super().__init__(fallback, fallback_options)
        unknown = sorted(set(options) - SURROGATE_OPTIONS)
        if unknown:
            raise ConfigError(
                f"unknown surrogate options {unknown}; known: {', '.join(sorted(SURROGATE_OPTIONS))}"
            )
        self.options = dict(options)
        if "min_days" in self.options or "max_days" in self.options:
            _check_shift_range(int(self.options.get("min_days", 30)), int(self.options.get("max_days", 365)))
        DateOptions(order=self.options.get("date_order"), pivot=int(self.options.get("pivot", 30)))

    def apply(self, span: Span, ctx: OperatorContext) -> Outcome:
        require_key(ctx.key, self.name)
        try:
            text = generate_surrogate(span.label, ctx.span_text(span), span, ctx, self.options)
        except SurrogateUnavailable:
            return self._fall_back(span, ctx, "no surrogate could be made")
        return Outcome(text, self.name)


def _check_shift_range(min_days: int, max_days: int) -> None:
    if not 1 <= min_days <= max_days:
        raise ConfigError(f"date shift needs 1 <= min_days <= max_days, got {min_days} and {max_days}")


@register_operator
class DateShiftOperator(_WithFallback):
    """Moves every date of a scope by the scope's keyed offset (±``min_days``-``max_days``, never 0), in
    its original format. Unparseable dates go to the fallback operator and are counted."""

    name = "date_shift"
    needs_key = True

    def __init__(
        self,
        min_days: int = 30,
        max_days: int = 365,
        direction: str = "both",
        date_order: str | None = None,
        pivot: int = 30,
        fallback: str = "tag",
        fallback_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(fallback, fallback_options)
        _check_shift_range(min_days, max_days)
        if direction not in ("both", "past", "future"):
            raise ConfigError(f"date shift direction must be both, past or future, got {direction!r}")
        self.min_days, self.max_days, self.direction = min_days, max_days, direction
        self.date_options = DateOptions(order=date_order, pivot=pivot)  # type: ignore[arg-type]

    def apply(self, span: Span, ctx: OperatorContext) -> Outcome:
        key = require_key(ctx.key, self.name)
        parsed = parse_date(ctx.span_text(span), ctx.language, self.date_options)
        if parsed is None:
            return self._fall_back(span, ctx, "unparseable date")
        days = date_offset(key, ctx.scope_id, min_days=self.min_days, max_days=self.max_days,
                           direction=self.direction)  # type: ignore[arg-type]  # fmt: skip
        shifted = shift_date(parsed, days)
        if shifted is None:
            return self._fall_back(span, ctx, "shifted date is off the calendar")
        return Outcome(shifted, self.name)


@register_operator
class DateGeneralizeOperator(_WithFallback):
    """Replaces dates by a coarser expression: ``strategy`` is ``year``, ``quarter``, ``age_group``,
    ``relative`` or ``dictionary`` (see ``generalize``). Strategy options: ``band``/``top`` (age_group),
    ``template`` (quarter, age_group, relative), ``entries`` (dictionary).

    ``age_group`` applies to birth dates only (``date_roles.date_role``: the birth-date rules or a cue such
    as "DOB", "Дата рождения"); other dates get the ``other_dates`` strategy (default ``year``; ``None``:
    the fallback). Ages are measured at ``reference_date`` (ISO), else the document's
    ``metadata[reference_field]`` or ``metadata[anchor_field]``, else the admission date the note gives.
    ``relative`` counts from ``metadata[anchor_field]`` (default ``admission_date``), else the admission
    date the note gives ("Дата поступления: ...", "admitted on ..."), else the first day-precision date
    among the document's ``anchor_labels`` spans. ``interval`` needs the key (see ``generalize``).
    """

    name = "date_generalize"

    def __init__(
        self,
        strategy: str = "year",
        date_order: str | None = None,
        pivot: int = 30,
        reference_date: str | None = None,
        reference_field: str = "reference_date",
        anchor_field: str = "admission_date",
        anchor_labels: tuple[str, ...] | list[str] = ("DATE",),
        other_dates: str | None = "year",
        fallback: str = "tag",
        fallback_options: Mapping[str, Any] | None = None,
        **strategy_options: Any,
    ) -> None:
        super().__init__(fallback, fallback_options)
        _check_generalize_templates(strategy, strategy_options)
        self.strategy: Generalizer = build_generalizer(strategy, **strategy_options)
        #: what age_group does with a date that is not a birth date
        self.other_dates: Generalizer | None = None
        if strategy == "age_group" and other_dates is not None:
            if other_dates == "age_group":
                raise ConfigError("other_dates cannot be age_group: only birth dates become age bands")
            self.other_dates = build_generalizer(other_dates)
        self.needs_key = getattr(self.strategy, "needs_key", False)  # type: ignore[misc]
        self.date_options = DateOptions(order=date_order, pivot=pivot)  # type: ignore[arg-type]
        self.reference_date: dt.date | None = None
        if reference_date is not None:
            self.reference_date = parse_anchor(reference_date)
            if self.reference_date is None:
                raise ConfigError(f"reference_date must be an ISO date (YYYY-MM-DD), got {reference_date!r}")
        self.reference_field, self.anchor_field = reference_field, anchor_field
        self.anchor_labels = tuple(anchor_labels)

    def _anchor(self, ctx: OperatorContext) -> dt.date | None:
        marker = ("date_anchor", self.anchor_field, self.anchor_labels, self.date_options)
        if marker in ctx.cache:
            return ctx.cache[marker]
        anchor = parse_anchor(ctx.document.metadata.get(self.anchor_field), ctx.language, self.date_options)
        if anchor is None:
            anchor = admission_date(ctx, self.anchor_labels, self.date_options)
        if anchor is None:
            for span in sort_spans(ctx.spans):
                if span.label in self.anchor_labels:
                    parsed = parse_date(ctx.span_text(span), ctx.language, self.date_options)
                    if parsed is not None and parsed.precision == "day":
                        anchor = parsed.value
                        break
        ctx.cache[marker] = anchor
        return anchor

    def _reference(self, ctx: OperatorContext) -> dt.date | None:
        if self.reference_date is not None:
            return self.reference_date
        meta = ctx.document.metadata
        for field in (self.reference_field, self.anchor_field):
            found = parse_anchor(meta.get(field), ctx.language, self.date_options)
            if found is not None:
                return found
        return admission_date(ctx, self.anchor_labels, self.date_options)

    def apply(self, span: Span, ctx: OperatorContext) -> Outcome:
        parsed = parse_date(ctx.span_text(span), ctx.language, self.date_options)
        if parsed is None:
            return self._fall_back(span, ctx, "unparseable date")
        strategy = self.strategy
        if strategy.name == "age_group" and date_role(span, ctx.document.text) != "birth":
            if self.other_dates is None:
                return self._fall_back(span, ctx, "not a birth date (age_group)")
            strategy = self.other_dates
        gctx = GeneralizeContext(
            language=ctx.language,
            reference_date=self._reference(ctx) if strategy.name == "age_group" else None,
            anchor=self._anchor(ctx) if strategy.name == "relative" else None,
            key=require_key(ctx.key, self.name) if getattr(strategy, "needs_key", False) else None,
        )
        text = strategy.generalize(parsed, gctx)
        if text is None:
            return self._fall_back(span, ctx, f"date cannot be generalised by {strategy.name!r}")
        return Outcome(text, self.name)


@register_operator
class AgeOperator(Operator):
    """Keeps ages up to ``threshold`` (89) and aggregates older ones into the localised "90+" ("90 o más
    años", "90 лет и старше"). ``phrases``: ``{language: {"bare": ..., "unit": ...}}`` overrides."""

    name = "age"

    def __init__(
        self, threshold: int = DEFAULT_THRESHOLD, phrases: Mapping[str, Mapping[str, str]] | None = None
    ) -> None:
        if not isinstance(threshold, int) or not 0 < threshold < 150:
            raise ConfigError(f"age threshold must be an integer within 1-149, got {threshold!r}")
        _check_age_phrases(phrases)
        self.threshold, self.phrases = threshold, phrases

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        text = ctx.span_text(span)
        aggregated = aggregate_age(text, ctx.language, threshold=self.threshold, phrases=self.phrases)
        return text if aggregated is None else aggregated
