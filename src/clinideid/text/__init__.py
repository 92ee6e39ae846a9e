"""Offset-preserving text processing: tokenizer, sentence splitter, model windows."""

from clinideid.text.sentences import split_sentences
from clinideid.text.tokenize import Token, tokenize, tokens_in_span
from clinideid.text.windows import Window, sentence_windows, sliding_windows

__all__ = [
    "Token",
    "Window",
    "sentence_windows",
    "sliding_windows",
    "split_sentences",
    "tokenize",
    "tokens_in_span",
]
