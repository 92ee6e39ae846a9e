"""The surrogate generator contract: one generator per PHI type, keyed and deterministic.

A generator turns the original text of a span into a surrogate of the same type and format. Every
choice it makes comes from ``SurrogateRequest.rng(family, normalised value)``, i.e. from
``HMAC(key, scope, family, normalised value)``: the same key, scope and value always give the same
surrogate; the *family* (``first_name``, ``surname``, ``city``, ``id``...) is shared by labels that can
name the same thing (a patient's surname and a relative's surname), so they stay consistent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from clinideid.document import Span
from clinideid.transform.base import OperatorContext
from clinideid.transform.keys import KeyedRandom
from clinideid.transform.textcase import normalize


class SurrogateUnavailable(Exception):
    """No surrogate distinct from the original could be made (the operator falls back to a tag)."""


@dataclass(frozen=True)
class SurrogateRequest:
    """One span to replace: its text, label, context, the operator's options and the secret key."""

    value: str
    label: str
    span: Span
    ctx: OperatorContext
    key: bytes
    options: Mapping[str, Any]

    @property
    def language(self) -> str:
        return (self.ctx.language or "en").lower().replace("_", "-").split("-")[0]

    def rng(self, family: str, value: str, *extra: object) -> KeyedRandom:
        """The keyed random stream for ``value`` in ``family`` within this request's scope."""
        return KeyedRandom(self.key, "surrogate", self.ctx.scope_id, family, value, *extra)

    def option(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)


def pick_distinct(rng: KeyedRandom, pool: Sequence[str], original: str, tries: int = 64) -> str:
    """A keyed choice from ``pool`` whose normalised form differs from ``original``'s."""
    banned = normalize(original)
    for _ in range(tries):
        choice = rng.choice(pool)
        if normalize(choice) != banned:
            return choice
    raise SurrogateUnavailable


class SurrogateGenerator(ABC):
    """Makes surrogates for the labels it lists."""

    labels: ClassVar[tuple[str, ...]] = ()
    #: whether the surrogate may equal the original by design (sex kept, ages under 90 kept, a date whose
    #: shift stays within its precision)
    may_keep: ClassVar[bool] = False

    @abstractmethod
    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        """The surrogate for ``req.value``; ``attempt`` > 0 asks for another one (the last equalled the
        original)."""
