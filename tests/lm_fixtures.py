"""Small generated clinical-like texts and tiny character LMs for the ``lm`` tests."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from clinideid.lm.charlm import CharLM, CharLMConfig, CharVocab

NAMES = ("Ana", "Luis", "Marta", "Pedro", "Sofía", "Jorge")
CITIES = ("Madrid", "Sevilla", "Bilbao", "Valencia")


def generated_notes(n: int, seed: int = 0) -> list[str]:
    """``n`` short notes with a regular structure (a character LM can learn it in seconds)."""
    rng = random.Random(seed)
    notes = []
    for _ in range(n):
        lines = [
            f"Paciente {rng.choice(NAMES)} de {rng.randint(20, 90)} años, natural de {rng.choice(CITIES)}.",
            f"Ingresa el {rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/20{rng.randint(10, 23)} por dolor.",
            "Se pauta tratamiento y se cita en consulta.",
        ]
        notes.append("\n".join(lines) + "\n")
    return notes


def tiny_lm(
    direction: str, texts: list[str] | None = None, *, hidden: int = 12, layers: int = 1, seed: int = 0
) -> CharLM:
    """A randomly initialised character LM (weights drawn from a seeded generator)."""
    torch.manual_seed(seed)
    vocab = CharVocab.build(texts or generated_notes(5))
    config = CharLMConfig(embedding_dim=6, hidden_size=hidden, layers=layers, dropout=0.0)
    lm = CharLM(vocab, config, direction)
    with torch.no_grad():  # larger weights than the default init: states differ visibly between positions
        for p in lm.module.parameters():
            p.uniform_(-0.8, 0.8)
    lm.module.eval()
    return lm


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Tiny LSTMs run fastest on one thread; two OpenMP threads on a busy 2-core machine crawl."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
