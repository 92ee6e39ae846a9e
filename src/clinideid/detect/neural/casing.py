"""The casing class of a token, an input of BiLSTM-CRF baselines (a learned embedding per class).

The word embedding reads lower-cased, digit-normalised words, so the casing of a token is lost there;
this one id per token gives it back cheaply. Id 0 is padding.
"""

from __future__ import annotations

CASING_CLASSES = (
    "numeric",  # only digits
    "contains_digit",  # some digits among other characters
    "all_lower",
    "all_upper",
    "initial_upper",  # an upper-case first letter, the other letters lower case
    "mixed",  # other mixes of upper and lower case
    "other",  # no letter and no digit (punctuation, symbols)
)
_INDEX = {name: i + 1 for i, name in enumerate(CASING_CLASSES)}
N_CASING_IDS = len(CASING_CLASSES) + 1


def casing_class(token: str) -> str:
    if token.isdigit():
        return "numeric"
    if any(c.isdigit() for c in token):
        return "contains_digit"
    letters = [c for c in token if c.isalpha()]
    if not letters:
        return "other"
    if all(c.islower() for c in letters):
        return "all_lower"
    if all(c.isupper() for c in letters):
        return "all_upper"
    if letters[0].isupper() and token[0] == letters[0] and all(c.islower() for c in letters[1:]):
        return "initial_upper"
    return "mixed"


def token_casing(token: str) -> int:
    """The casing id (1..7) of a token."""
    return _INDEX[casing_class(token)]
