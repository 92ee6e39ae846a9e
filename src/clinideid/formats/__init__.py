"""Corpus codecs, registered by name. See ``base`` for the contract."""

from clinideid.formats.base import (
    Codec,
    ReadReport,
    available_formats,
    get_codec,
    read_corpus,
    register,
    write_corpus,
)

__all__ = ["Codec", "ReadReport", "available_formats", "get_codec", "read_corpus", "register", "write_corpus"]
