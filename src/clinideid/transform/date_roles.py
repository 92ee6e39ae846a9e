"""What a date is in its note — a birth date, the admission date, or another date — and the
``date_by_role`` operator that treats each role with its own operator.

A date's role comes, in this order, from the span's ``attributes["date_role"]`` (set by a detector, a
gold corpus or the user), from the rule that found it (the rule packs' ``birth_dates`` pass: explanation
``<pack>/birth_dates/<rule>``), or from a cue on its line before it ("Дата рождения:", "DOB", "geb.",
"nato il", "fecha de nacimiento", "né le"; "Дата поступления", "Aufnahme am", "ricoverato il",
"admitted on", "ingresó el", "admis le") or right after it ("1956 г.р."). Birth dates then get an age
band while other dates keep their own strategy (a shift, a year...), and ``relative`` dates count from
the admission date the note itself gives when no metadata names one.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from clinideid.document import Span, sort_spans
from clinideid.errors import ConfigError
from clinideid.transform.base import Operator, OperatorContext, Outcome, build_operator, register_operator
from clinideid.transform.dates import DateOptions, parse_date

ROLES = ("birth", "admission", "other")
ROLE_ATTRIBUTE = "date_role"

_BIRTH_BEFORE = re.compile(
    r"(?:date\s+of\s+birth|birth\s*date|\bd\.?o\.?b\.?|\bborn(?:\s+on)?|\bb\."
    r"|geburtsdatum|\bgeb(?:oren)?\.?(?:\s+am)?"
    r"|data\s+di\s+nascita|\bnat[oa]\s+(?:a\s+[^\n,;]{1,40}?\s+)?il|\bnascita"
    r"|дата\s+рождения|\bд\.\s?р\.|год\s+рождения|родил(?:ся|ась)|\bрожд\.?"
    r"|fecha\s+de\s+nacimiento|\bf\.?\s?nac\.?|\bnacid[oa](?:\s+el)?|\bnacimiento"
    r"|date\s+de\s+naissance|\bn[ée]e?\s+le|\bddn)"
    r"[\s:.\-–—]*(?:\([^)\n]{0,12}\)[\s:]*)?$",
    re.IGNORECASE,
)
_BIRTH_AFTER = re.compile(r"^\s*(?:г\.?\s?р\.?|года\s+рождения)", re.IGNORECASE)
_ADMISSION_BEFORE = re.compile(
    r"(?:date\s+of\s+admission|admission\s+date|admitted(?:\s+on)?|admission"
    r"|aufnahme(?:datum)?(?:\s+am)?|aufgenommen(?:\s+am)?|station[äa]re\s+aufnahme(?:\s+am)?"
    r"|data\s+(?:di|del)\s+ricovero|ricoverat[oa](?:\s+il)?|ricovero(?:\s+il|\s+del)?|ingresso(?:\s+il)?"
    r"|дата\s+поступления|поступил[аи]?|госпитализирован[аы]?|дата\s+госпитализации"
    r"|fecha\s+de\s+ingreso|ingres[óo](?:\s+el)?|ingreso"
    r"|date\s+d'entr[ée]e|admis(?:e)?\s+le|entr[ée]e?\s+le|hospitalis[ée]e?\s+le)"
    r"[\s:.\-–—]*$",
    re.IGNORECASE,
)
#: how far back on the line a cue may stand ("Aufnahme am Montag, den 12.03.")
CUE_WINDOW = 40


def _line_before(text: str, start: int) -> str:
    line_start = text.rfind("\n", max(0, start - CUE_WINDOW), start) + 1
    return text[max(line_start, start - CUE_WINDOW) : start]


def date_role(span: Span, text: str) -> str:
    """``birth``, ``admission`` or ``other`` for a DATE span of ``text`` (see the module docstring)."""
    given = span.attributes.get(ROLE_ATTRIBUTE) if span.attributes else None
    if given in ROLES:
        return str(given)
    if span.explanation and "/birth_dates/" in span.explanation:
        return "birth"
    before = _line_before(text, span.start)
    if _BIRTH_BEFORE.search(before) or _BIRTH_AFTER.match(text[span.end : span.end + 20]):
        return "birth"
    if _ADMISSION_BEFORE.search(before):
        return "admission"
    return "other"


def admission_date(
    ctx: OperatorContext, labels: Sequence[str] = ("DATE",), options: DateOptions | None = None
) -> dt.date | None:
    """The first day-precision date of the document whose role is ``admission`` (cached per document)."""
    marker = ("admission_date", tuple(labels), options)
    if marker in ctx.cache:
        return ctx.cache[marker]
    found: dt.date | None = None
    text = ctx.document.text
    for span in sort_spans(ctx.spans):
        if span.label in labels and date_role(span, text) == "admission":
            parsed = parse_date(ctx.span_text(span), ctx.language, options)
            if parsed is not None and parsed.precision == "day":
                found = parsed.value
                break
    ctx.cache[marker] = found
    return found


DEFAULT_ROLES: dict[str, Any] = {
    "birth": {"operator": "date_generalize", "strategy": "age_group"},
    "default": {"operator": "date_shift"},
}


def _build(role: str, spec: Any) -> Operator:
    if isinstance(spec, str):
        spec = {"operator": spec}
    if not isinstance(spec, Mapping) or not isinstance(spec.get("operator"), str):
        raise ConfigError(f"date_by_role: the {role!r} role needs an operator spec ({{operator: name, ...}})")
    options = {k: v for k, v in spec.items() if k != "operator"}
    if spec["operator"] == "date_by_role":
        raise ConfigError("date_by_role: a role cannot use date_by_role itself")
    return build_operator(spec["operator"], **options)


@register_operator
class DateByRoleOperator(Operator):
    """Each date by its role: ``roles`` maps ``birth``, ``admission``, ``other`` (and ``default`` for the
    roles not named) to an operator spec. Default: birth dates become age bands, every other date is
    shifted. Example::

        operators:
          DATE:
            operator: date_by_role
            roles:
              birth: {operator: date_generalize, strategy: age_group, band: 5}
              default: {operator: date_generalize, strategy: relative}
    """

    name = "date_by_role"

    def __init__(self, roles: Mapping[str, Any] | None = None) -> None:
        specs = dict(DEFAULT_ROLES if roles is None else roles)
        unknown = sorted(set(specs) - {*ROLES, "default"})
        if unknown:
            raise ConfigError(f"date_by_role: unknown roles {unknown}; known: {', '.join(ROLES)}, default")
        if "default" not in specs and set(ROLES) - set(specs):
            raise ConfigError("date_by_role: give an operator for every role or a 'default' one")
        default = specs.get("default")
        self.operators: dict[str, Operator] = {role: _build(role, specs.get(role, default)) for role in ROLES}
        self.needs_key = any(op.needs_key for op in self.operators.values())  # type: ignore[misc]

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        return self.apply(span, ctx).text

    def apply(self, span: Span, ctx: OperatorContext) -> Outcome:
        role = date_role(span, ctx.document.text)
        return self.operators[role].apply(span, ctx)


__all__ = ["ROLES", "DateByRoleOperator", "admission_date", "date_role"]
