"""Vocabularies: strings to ids, with padding (0) and unknown (1), serialisable as plain lists."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

PAD = "<pad>"
UNK = "<unk>"
_DIGITS = re.compile(r"\d")


def normalize_word(word: str) -> str:
    """The word-embedding key of a token: lower-cased, digits as ``0`` (dates and IDs share shapes)."""
    return _DIGITS.sub("0", word.lower())


class Vocab:
    """An id for each known string; id 0 is padding, id 1 anything unknown."""

    def __init__(self, items: Iterable[str] = ()) -> None:
        self.itos: list[str] = [PAD, UNK]
        self.stoi: dict[str, int] = {PAD: 0, UNK: 1}
        for item in items:
            self.add(item)

    def add(self, item: str) -> int:
        idx = self.stoi.get(item)
        if idx is None:
            idx = self.stoi[item] = len(self.itos)
            self.itos.append(item)
        return idx

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, item: str) -> bool:
        return item in self.stoi

    def get(self, item: str) -> int:
        return self.stoi.get(item, 1)

    def encode(self, items: Sequence[str]) -> list[int]:
        return [self.stoi.get(x, 1) for x in items]

    @classmethod
    def from_counts(cls, counts: Counter[str], min_count: int = 1, max_size: int | None = None) -> Vocab:
        """Items seen at least ``min_count`` times, most frequent first (ties alphabetical: deterministic)."""
        ranked = sorted((c for c in counts.items() if c[1] >= min_count), key=lambda kv: (-kv[1], kv[0]))
        if max_size is not None:
            ranked = ranked[:max_size]
        return cls(k for k, _ in ranked)

    def to_list(self) -> list[str]:
        return list(self.itos[2:])

    @classmethod
    def from_list(cls, items: Sequence[str]) -> Vocab:
        return cls(items)
