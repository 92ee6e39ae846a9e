"""Keyed, deterministic, format-preserving surrogates: one generator per PHI type.

``generate_surrogate(label, value, span, ctx, options)`` picks the generator for the label and retries
with the next HMAC counter until the surrogate differs from the original (except where keeping it is the
point: sex, ages under 90, a year-only date). No mapping table is stored anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clinideid.document import Span
from clinideid.transform.base import OperatorContext
from clinideid.transform.keys import require_key
from clinideid.transform.surrogates.base import (
    SurrogateGenerator,
    SurrogateRequest,
    SurrogateUnavailable,
    pick_distinct,
)
from clinideid.transform.surrogates.contact import EmailGenerator, IpGenerator, PhoneGenerator, UrlGenerator
from clinideid.transform.surrogates.identifiers import IdentifierGenerator
from clinideid.transform.surrogates.locations import (
    CityGenerator,
    CountryGenerator,
    HospitalGenerator,
    OrganizationGenerator,
    ProfessionGenerator,
    StateGenerator,
    StreetGenerator,
    ZipGenerator,
)
from clinideid.transform.surrogates.misc import AgeGenerator, DateGenerator, SexGenerator, ShapeGenerator
from clinideid.transform.surrogates.names import NameGenerator
from clinideid.transform.textcase import normalize

__all__ = [
    "GENERATORS",
    "SurrogateGenerator",
    "SurrogateRequest",
    "SurrogateUnavailable",
    "generate_surrogate",
    "generator_for",
    "pick_distinct",
]

MAX_ATTEMPTS = 16

_FALLBACK = ShapeGenerator()
GENERATORS: dict[str, SurrogateGenerator] = {}
for _cls in (
    NameGenerator, CityGenerator, CountryGenerator, StateGenerator, HospitalGenerator, OrganizationGenerator,
    ProfessionGenerator, StreetGenerator, ZipGenerator, PhoneGenerator, EmailGenerator, UrlGenerator,
    IpGenerator, IdentifierGenerator, DateGenerator, AgeGenerator, SexGenerator, ShapeGenerator,
):  # fmt: skip
    _gen = _cls()
    for _label in _cls.labels:
        GENERATORS[_label] = _gen


def generator_for(label: str) -> SurrogateGenerator:
    """The generator of a canonical label; labels without one keep their shape (``ShapeGenerator``)."""
    return GENERATORS.get(label, _FALLBACK)


def generate_surrogate(
    label: str,
    value: str,
    span: Span,
    ctx: OperatorContext,
    options: Mapping[str, Any] | None = None,
) -> str:
    """The keyed surrogate of ``value``; raises ``SurrogateUnavailable`` when none can be made."""
    key = require_key(ctx.key, "surrogate")
    req = SurrogateRequest(value, label, span, ctx, key, {**ctx.options, **(options or {})})
    generator = generator_for(label)
    original = normalize(value)
    for attempt in range(MAX_ATTEMPTS):
        surrogate = generator.generate(req, attempt)
        if generator.may_keep or normalize(surrogate) != original or (surrogate != value and not original):
            return surrogate
    raise SurrogateUnavailable
