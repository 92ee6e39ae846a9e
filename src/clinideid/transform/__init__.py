"""Replacement of detected PHI: operators, surrogates and date strategies.

``apply_operators(doc, spans, operator_for_label, ctx_kwargs)`` replaces a document's resolved spans;
operators are built by name with ``build_operator`` (``redact``, ``tag``, ``numbered_tag``, ``mask``,
``hash``, ``surrogate``, ``keep``, ``date_shift``, ``date_generalize``, ``age``). Keyed operators need a
secret key from ``load_key`` (``--key-file``) or ``ephemeral_key`` (``--ephemeral-key``).
"""

from clinideid.transform.apply import Replacement, apply_operators, summarize
from clinideid.transform.base import (
    Operator,
    OperatorContext,
    Outcome,
    available_operators,
    build_operator,
    register_operator,
)
from clinideid.transform.dates import (
    DateOptions,
    ParsedDate,
    date_offset,
    parse_date,
    shift_date,
    shift_date_text,
)
from clinideid.transform.keys import ephemeral_key, generate_key, load_key, save_key, scope_for

__all__ = [
    "DateOptions",
    "Operator",
    "OperatorContext",
    "Outcome",
    "ParsedDate",
    "Replacement",
    "apply_operators",
    "available_operators",
    "build_operator",
    "date_offset",
    "ephemeral_key",
    "generate_key",
    "load_key",
    "parse_date",
    "register_operator",
    "save_key",
    "scope_for",
    "shift_date",
    "shift_date_text",
    "summarize",
]
