"""The operator contract.

An operator turns one resolved span into its replacement text. Operators are pure given the span, the
``OperatorContext`` (document, all resolved spans of the document, key, scope, language, options) — so
the same inputs always give the same output, on any machine, without a stored mapping table.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.registry import Registry
from clinideid.text.invisible import visible_text


@dataclass(frozen=True)
class OperatorContext:
    """Everything an operator may look at besides the span itself."""

    document: Document
    spans: Sequence[Span]  # all resolved spans of the document, in reading order
    key: bytes | None = None  # secret key for keyed operators; None for unkeyed ones
    scope_id: str = ""  # the surrogate scope: document id, patient id, or a corpus-wide constant
    language: str = "en"
    options: Mapping[str, Any] = field(default_factory=dict)
    #: per-document values operators derive from the context (numbering, a date anchor), computed once
    cache: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def span_text(self, span: Span) -> str:
        """The span's text as a reader sees it: without the invisible characters a span may hold
        (``clinideid.text.invisible``), so "Jo\u200bhn" gets the surrogate, hash or number of "John"
        and no hidden character is carried into a replacement."""
        return visible_text(self.document.span_text(span))


@dataclass(frozen=True)
class Outcome:
    """A replacement text, the operator that actually produced it, and why when it is a fallback."""

    text: str
    operator: str
    note: str | None = None


class Operator(ABC):
    """Replaces a span. ``name`` is how configs refer to it (``redact``, ``tag``, ``surrogate``...)."""

    name: ClassVar[str] = ""
    #: whether the operator needs a secret key (surrogates, keyed hash)
    needs_key: ClassVar[bool] = False

    @abstractmethod
    def replace(self, span: Span, ctx: OperatorContext) -> str:
        """The replacement text for ``span``."""

    def apply(self, span: Span, ctx: OperatorContext) -> Outcome:
        """The replacement and the operator that produced it: what the pipeline calls. An operator with
        a fallback overrides this to say when (and why) the fallback replaced the span."""
        return Outcome(self.replace(span, ctx), self.name)


#: operators by name; the built-ins register when ``clinideid.transform.operators`` is imported, plug-ins
#: through the ``clinideid.operators`` entry-point group
OPERATORS: Registry[Callable[..., Operator]] = Registry(
    "operator", "clinideid.operators", ["clinideid.transform.operators", "clinideid.transform.date_roles"]
)


def register_operator(cls: type[Operator]) -> type[Operator]:
    return OPERATORS.add(cls.name, cls)


def available_operators() -> list[str]:
    return OPERATORS.names()


def build_operator(name: str, **options: Any) -> Operator:
    factory = OPERATORS.get(name)
    try:
        return factory(**options)
    except TypeError as exc:
        raise ConfigError(f"bad options for operator {name!r}: {exc}") from None
