"""Windows over a token sequence: the units models read.

Two ways, as the literature uses them:

- ``sliding_windows``: sentence-free windows of ``size`` tokens that overlap by ``overlap`` tokens;
- ``sentence_windows``: groups of ``n`` consecutive sentences (a window never cuts a sentence, but a
  sentence longer than ``max_tokens`` is itself cut into sliding windows).

Each window says which of its tokens it *owns* (``own_start``..``own_end``): every token of the sequence is
owned by exactly one window, the one where it sits farthest from an edge, so predictions on overlaps
merge deterministically by taking each token's label from its owner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clinideid.errors import ConfigError
from clinideid.text.tokenize import Token, tokens_in_span


@dataclass(frozen=True, slots=True)
class Window:
    start: int  # first token index (inclusive)
    end: int  # last token index (exclusive)
    own_start: int
    own_end: int

    def __len__(self) -> int:
        return self.end - self.start


def sliding_windows(n_tokens: int, size: int, overlap: int = 0) -> list[Window]:
    """Windows of ``size`` tokens stepping by ``size - overlap`` over ``n_tokens`` tokens."""
    if size <= 0:
        raise ConfigError(f"window size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise ConfigError(f"window overlap must be in [0, size), got {overlap} for size {size}")
    if n_tokens == 0:
        return []
    step = size - overlap
    starts = list(range(0, max(n_tokens - overlap, 1), step))
    spans = [(s, min(s + size, n_tokens)) for s in starts]
    # the last window reaches the end; drop windows that only repeat what the previous one covers
    if spans[-1][1] < n_tokens:
        spans.append((max(n_tokens - size, 0), n_tokens))
    dedup: list[tuple[int, int]] = []
    for s, e in spans:
        if dedup and e <= dedup[-1][1]:
            continue
        dedup.append((s, e))
    return assign_ownership(dedup)


def assign_ownership(spans: Sequence[tuple[int, int]]) -> list[Window]:
    """Windows over ``spans`` (ordered, overlapping ranges): each shared item goes to the window where it
    is farther from an edge (the midpoint of the overlap)."""
    windows: list[Window] = []
    for k, (s, e) in enumerate(spans):
        own_s = s if k == 0 else (s + spans[k - 1][1] + 1) // 2
        own_e = e if k == len(spans) - 1 else (spans[k + 1][0] + e + 1) // 2
        own_s = max(own_s, windows[-1].own_end if windows else s)
        windows.append(Window(s, e, own_s, max(own_s, own_e)))
    return windows


def sentence_windows(
    tokens: Sequence[Token],
    sentences: Sequence[tuple[int, int]],
    n: int = 1,
    max_tokens: int = 512,
) -> list[Window]:
    """Windows of ``n`` consecutive sentences (character ranges in ``sentences``) over ``tokens``."""
    if n <= 0:
        raise ConfigError(f"sentences per window must be positive, got {n}")
    ranges: list[tuple[int, int]] = []
    covered = 0
    for a, b in sentences:
        i, j = tokens_in_span(tokens, a, b)
        i = max(i, covered)
        if j > i:
            ranges.append((i, j))
            covered = j
    if covered < len(tokens):  # tokens outside any sentence form their own unit
        ranges.append((covered, len(tokens)))
    windows: list[tuple[int, int]] = []
    for k in range(0, len(ranges), n):
        group = ranges[k : k + n]
        s, e = group[0][0], group[-1][1]
        if e - s <= max_tokens:
            windows.append((s, e))
        else:
            windows.extend((s + w.start, s + w.end) for w in sliding_windows(e - s, max_tokens, 0))
    return [Window(s, e, s, e) for s, e in windows]


def merge_window_labels(
    n_tokens: int, windows: Sequence[Window], labels: Sequence[Sequence[str]]
) -> list[str]:
    """Per-token labels for the whole sequence from per-window predictions, using window ownership."""
    out = ["O"] * n_tokens
    for w, labs in zip(windows, labels, strict=True):
        if len(labs) != len(w):
            raise ConfigError(f"window {w.start}-{w.end} has {len(w)} tokens but {len(labs)} labels")
        for i in range(w.own_start, w.own_end):
            out[i] = labs[i - w.start]
    return out
