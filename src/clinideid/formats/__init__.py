"""Corpus codecs, registered by name. See ``base`` for the contract.

Built-in formats: ``brat``, ``i2b2`` (2014 / MEDDOCAN XML), ``i2b2_2006``, ``conll``, ``jsonl``,
``presidio``, ``physionet`` and ``text``. ``repair`` finds and fixes span offsets that do not fit.
"""

from clinideid.formats import brat, conll, i2b2, i2b2_2006, jsonl, physionet, presidio, text  # noqa: F401
from clinideid.formats.base import (
    Codec,
    ReadReport,
    available_formats,
    get_codec,
    read_corpus,
    register,
    write_corpus,
)
from clinideid.formats.repair import Problem, RepairResult, check_spans, repair_spans

__all__ = [
    "Codec",
    "Problem",
    "ReadReport",
    "RepairResult",
    "available_formats",
    "check_spans",
    "get_codec",
    "read_corpus",
    "register",
    "repair_spans",
    "write_corpus",
]
