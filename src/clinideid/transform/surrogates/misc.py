"""Surrogates that transform rather than replace: dates (keyed shift), ages (over 89 aggregated), sex
(kept), user names and anything unrecognised (shape kept)."""

from __future__ import annotations

from clinideid.transform.ages import DEFAULT_THRESHOLD, aggregate_age
from clinideid.transform.dates import DateOptions, date_offset, shift_date_text
from clinideid.transform.surrogates.base import SurrogateGenerator, SurrogateRequest, SurrogateUnavailable
from clinideid.transform.textcase import normalize, reshape


def date_options(req: SurrogateRequest) -> DateOptions:
    return DateOptions(
        order=req.option("date_order"),
        pivot=int(req.option("pivot", 30)),
        reference_year=int(req.option("reference_year", 2000)),
    )


class DateGenerator(SurrogateGenerator):
    """Every date of a scope moves by the scope's keyed offset, in its own format (see ``dates``)."""

    labels = ("DATE",)
    may_keep = True  # a year-only date may stay in its year

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        days = date_offset(
            req.key,
            req.ctx.scope_id,
            min_days=int(req.option("min_days", 30)),
            max_days=int(req.option("max_days", 365)),
            direction=req.option("direction", "both"),
        )
        shifted = shift_date_text(req.value, days, req.language, date_options(req))
        if shifted is None:
            raise SurrogateUnavailable
        return shifted


class AgeGenerator(SurrogateGenerator):
    """Ages up to the threshold (89) are kept; older ones become the localised "90+"."""

    labels = ("AGE",)
    may_keep = True

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        threshold = int(req.option("age_threshold", DEFAULT_THRESHOLD))
        aggregated = aggregate_age(
            req.value, req.language, threshold=threshold, phrases=req.option("age_phrases")
        )
        return req.value if aggregated is None else aggregated


class SexGenerator(SurrogateGenerator):
    """Sex is kept: it is needed clinically and is not a HIPAA identifier."""

    labels = ("SEX",)
    may_keep = True

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        return req.value


class ShapeGenerator(SurrogateGenerator):
    """Letters and digits replaced keyed, keeping class, case, length and separators (user names, and any
    label without a dedicated generator)."""

    labels = ("USERNAME", "OTHER_PHI")

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        return reshape(req.value, req.rng("shape", normalize(req.value), attempt))
