"""Torch CPU threads for the duration of a tagging call.

Small recurrent networks gain little from several intra-op threads, and on a machine whose cores are busy
with other processes, extra threads spin-wait on each other and inference slows down by one or two orders
of magnitude. Learned detectors therefore set their thread count explicitly while they tag.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """``torch.set_num_threads(n)`` for the duration (nothing when ``n`` is None)."""
    if n is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
