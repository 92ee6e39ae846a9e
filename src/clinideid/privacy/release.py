"""Shareable releases: private representations and labels of a corpus, with no text.

A release folder holds ``representations.npz`` (``vectors``: all token representations, float16;
``offsets``: where each sequence starts) and ``labels.json`` (the tag names and one tag list per
sequence, plus the model's settings). No words, document ids or offsets into documents are written, and
the sequence order is shuffled by default so documents cannot be stitched back together by position.
Representations include the model's Gaussian noise, drawn from a fresh random seed unless one is given
(a known seed lets the noise be subtracted: give one only for experiments).
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from clinideid.errors import InputError
from clinideid.privacy.data import TAGS, TokenSequence
from clinideid.privacy.io import write_dir_atomic
from clinideid.privacy.representation import PrivateModel

RELEASE_FORMAT = "clinideid-private-release/1"


def represent_all(
    model: PrivateModel, seqs: Sequence[TokenSequence], seed: int | None = None
) -> list[np.ndarray]:
    """Noisy representations of ``seqs`` (one (T, size) array each)."""
    gen = torch.Generator().manual_seed(secrets.randbits(63) if seed is None else seed)
    return [model.represent(s.words, noise=True, generator=gen) for s in seqs]


def write_release(
    model: PrivateModel,
    seqs: Sequence[TokenSequence],
    out: str | Path,
    *,
    seed: int | None = None,
    shuffle: bool = True,
) -> dict[str, object]:
    """Write a release folder for ``seqs``; returns its summary (counts and settings only)."""
    if not seqs:
        raise InputError("nothing to release: the corpus has no tokens")
    order = list(range(len(seqs)))
    if shuffle:
        random.Random(secrets.randbits(63) if seed is None else seed).shuffle(order)
    ordered = [seqs[i] for i in order]
    reps = represent_all(model, ordered, seed)
    lengths = np.array([len(r) for r in reps], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    summary = {
        "format": RELEASE_FORMAT,
        "sequences": len(ordered),
        "tokens": int(offsets[-1]),
        "size": model.config.size,
        "sigma": model.encoder.sigma,
        "model": {k: v for k, v in asdict(model.config).items() if k in ("size", "kind", "method", "lam")},
    }

    def write(tmp: Path) -> None:
        np.savez_compressed(tmp / "representations.npz", vectors=np.concatenate(reps).astype(np.float16),
                            offsets=offsets)  # fmt: skip
        labels = {**summary, "tags": list(TAGS), "labels": [list(s.tags) for s in ordered]}
        (tmp / "labels.json").write_text(json.dumps(labels), encoding="utf-8")

    write_dir_atomic(Path(out), write)
    return summary


def read_release(path: str | Path) -> tuple[list[np.ndarray], list[list[int]]]:
    """The per-sequence representations and tag lists of a release folder."""
    p = Path(path)
    if not (p / "labels.json").is_file() or not (p / "representations.npz").is_file():
        raise InputError(f"{p} is not a release folder (representations.npz and labels.json expected)")
    labels = json.loads((p / "labels.json").read_text(encoding="utf-8"))
    if labels.get("format") != RELEASE_FORMAT:
        raise InputError(f"{p}: unknown release format {labels.get('format')!r}")
    with np.load(p / "representations.npz") as z:
        vectors, offsets = z["vectors"].astype(np.float32), z["offsets"]
    seqs = [vectors[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    tags = labels["labels"]
    if len(seqs) != len(tags) or any(len(a) != len(t) for a, t in zip(seqs, tags, strict=True)):
        raise InputError(f"{p}: representations and labels do not line up")
    return seqs, tags
