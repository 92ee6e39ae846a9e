"""Dense per-token features computed over a whole document, before the document is cut into windows.

A featurizer sees the document's full text and tokens, so its features do not depend on window edges
(a rule that needs a whole line, a language model that reads the whole note). The network concatenates
the features of every featurizer to the token representation (``Batch.features``).

- ``RuleMarks``: the spans a rule detector finds, as a multi-hot ``B-``/``I-`` vector over the canonical
  labels (the hybrid input of the neural tagger, like the CRF's rule features). The label list is the
  canonical taxonomy, not the rules' current output, so the input size does not change when a rule pack does.
- ``CharLMFeatures``: contextual string embeddings from a forward and a backward character language model
  (``clinideid.lm``), trained on unlabelled text with ``clinideid pretrain-lm``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import torch

from clinideid.document import Document
from clinideid.text import Token


class TokenFeaturizer(Protocol):
    """Computes a ``(len(tokens), dim)`` float tensor for a document."""

    name: str
    dim: int

    def features(self, doc: Document, tokens: Sequence[Token]) -> torch.Tensor: ...


def rule_mark_names() -> list[str]:
    """``B-LABEL`` and ``I-LABEL`` for every canonical label, in taxonomy order."""
    from clinideid.labels import canonical

    names = canonical().labels
    return [f"{p}-{n}" for n in names for p in ("B", "I")]


class RuleMarks:
    """Multi-hot marks of a rule detector's spans over the tokens (``B-`` on the first token of a span)."""

    name = "rules"

    def __init__(self, spec: dict[str, Any]) -> None:
        from clinideid.detect.base import build_detector

        self.spec = dict(spec)
        self.detector = build_detector(dict(spec))
        self.marks = rule_mark_names()
        self.index = {m: i for i, m in enumerate(self.marks)}
        self.dim = len(self.marks)

    def fingerprint(self) -> str:
        """A short hash of the detector's spec (stored with a model, to notice a changed set-up)."""
        return hashlib.sha256(json.dumps(self.spec, sort_keys=True).encode("utf-8")).hexdigest()[:16]

    def features(self, doc: Document, tokens: Sequence[Token]) -> torch.Tensor:
        from clinideid.detect.features import mark_tokens

        out = torch.zeros(len(tokens), self.dim)
        if not tokens:
            return out
        spans = self.detector.detect_one(doc)
        marks = mark_tokens(tokens, [(s.start, s.end, s.label) for s in spans])
        for i, token_marks in enumerate(marks):
            for m in token_marks:
                j = self.index.get(m)
                if j is not None:  # labels outside the canonical taxonomy carry no input
                    out[i, j] = 1.0
        return out


class CharLMFeatures:
    """Contextual string embeddings of each token (forward LM state after it, backward LM state before it)."""

    name = "charlm"

    def __init__(self, forward: str | Path, backward: str | Path) -> None:
        from clinideid.lm.embedder import load_embedder

        self.paths = (Path(forward), Path(backward))
        self.embedder = load_embedder(forward, backward)
        self.dim = self.embedder.dim
        self.forward_dim = self.embedder.forward_lm.hidden_size  # the forward LM's states come first

    def features(self, doc: Document, tokens: Sequence[Token]) -> torch.Tensor:
        return self.embedder.token_embeddings(doc.text, tokens)

    def features_batch(
        self, docs: Sequence[Document], tokens: Sequence[Sequence[Token]]
    ) -> list[torch.Tensor]:
        return list(self.embedder.token_embeddings_batch([d.text for d in docs], tokens))


def build_featurizers(
    rules: dict[str, Any] | None,
    charlm: dict[str, str] | None = None,
    base: Path | None = None,
) -> list[TokenFeaturizer]:
    """The featurizers a neural config asks for, in a fixed order (the input layout depends on it).

    Relative character-LM paths are resolved against ``base`` (a model directory that holds its LMs).
    """
    featurizers: list[TokenFeaturizer] = []
    if rules:
        featurizers.append(RuleMarks(rules))
    if charlm:

        def where(p: str) -> Path:
            path = Path(p)
            return base / path if base is not None and not path.is_absolute() else path

        featurizers.append(CharLMFeatures(where(charlm["forward"]), where(charlm["backward"])))
    return featurizers


def documents_features(
    featurizers: Sequence[TokenFeaturizer], docs: Sequence[Document], tokens: Sequence[Sequence[Token]]
) -> list[torch.Tensor | None]:
    """``document_features`` of many documents, batched where a featurizer can (language models)."""
    if not featurizers:
        return [None] * len(docs)
    parts: list[list[torch.Tensor]] = []
    for f in featurizers:
        batch = getattr(f, "features_batch", None)
        if callable(batch):
            parts.append(batch(docs, tokens))
        else:
            parts.append([f.features(d, t) for d, t in zip(docs, tokens, strict=True)])
    return [torch.cat([p[i] for p in parts], dim=1) for i in range(len(docs))]


def document_features(
    featurizers: Sequence[TokenFeaturizer], doc: Document, tokens: Sequence[Token]
) -> torch.Tensor | None:
    """All featurizers' features of ``doc``, concatenated; ``None`` when there are none."""
    if not featurizers:
        return None
    return torch.cat([f.features(doc, tokens) for f in featurizers], dim=1)
