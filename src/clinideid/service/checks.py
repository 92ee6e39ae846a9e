"""Request fields checked before a pipeline is built, and the messages errors may carry back.

An error names the field (``documents[2].language``), never repeats its value: a caller's value may be text
of a document, and an error message ends up in clients' logs. A key is named in a field path only once it is
known to be one of the server's own names (a canonical label or category).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import HTTPException

from clinideid.errors import ClinideidError, ConfigError, InputError, SpanError
from clinideid.text.language import SUPPORTED

log = logging.getLogger(__name__)

PIPELINE_FIELDS = "`language`, `operators`, `scope` and `models`"


def invalid(field: str, problem: str, status: int = 422) -> HTTPException:
    return HTTPException(status, f"`{field}` {problem}")


def check_language(value: Any, field: str, *, auto: bool = True) -> None:
    """``value`` is None (the default), a supported language, or (where ``auto``) ``auto``."""
    if value is None or value in SUPPORTED or (auto and value == "auto"):
        return
    raise invalid(field, f"must be {'auto or ' if auto else ''}one of {', '.join(SUPPORTED)}")


def check_operators(operators: Mapping[str, Any] | None, field: str = "operators") -> None:
    """Every key a canonical label, a category or ``default``; every operator known, with valid options."""
    if not operators:
        return
    from clinideid.labels import canonical
    from clinideid.transform.base import OPERATORS, build_operator

    tax = canonical()
    labels = set(tax.labels) | set(tax.categories) | {"default"}
    names = set(OPERATORS.names())
    for label, spec in operators.items():
        if label not in labels:
            raise invalid(
                field,
                "has a key that is not a canonical label, a category or 'default' "
                "(GET /v1/review/labels lists the labels)",
            )
        name = spec.get("operator") if isinstance(spec, Mapping) else None
        if name not in names:
            raise invalid(
                f"{field}.{label}.operator", "is not an operator of this server (GET /v1/pipelines)"
            )
        options = spec.get("options") or {}
        try:
            build_operator(name, **options)
        except Exception:  # the message may quote an option's value
            raise invalid(
                f"{field}.{label}.options", f"are not valid options of the operator {name}"
            ) from None


def check_models(models: Iterable[str] | None) -> None:
    if not models:
        return
    from clinideid.models import packaged_models

    known = set(packaged_models())
    for i, name in enumerate(models):
        if name not in known:
            raise invalid(f"models[{i}]", "is not a packaged model (GET /v1/models lists them)")


def pipeline_error(exc: ClinideidError) -> HTTPException:
    """A 422 for a pipeline that the checked fields still could not build (the message is not relayed)."""
    log.warning("a request's pipeline could not be built: %s", type(exc).__name__)
    return HTTPException(
        422, f"the pipeline could not be built from {PIPELINE_FIELDS}; GET /v1/pipelines lists what works"
    )


def public_error(exc: ClinideidError) -> str:
    """What a client is told about one document's failure: the kind of problem, never the message."""
    if isinstance(exc, ConfigError):
        what = f"the pipeline does not apply to this document (check {PIPELINE_FIELDS})"
    elif isinstance(exc, SpanError):
        what = "a field or span of the document is not valid"
    elif isinstance(exc, InputError):
        what = "the document could not be read"
    else:
        what = "the document could not be processed"
    return f"{what} ({type(exc).__name__})"
