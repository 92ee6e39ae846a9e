"""The ``"hybrid"`` detector: a rule detector and learned detectors, combined by a strategy.

Strategies:

- ``rules_first``: every rule span, plus the model spans that overlap no rule span;
- ``model_first``: every model span, plus the rule spans that overlap no model span;
- ``union``: all spans, overlapping ones merged (``resolve_spans(policy="union")``, recall first);
- ``per_label``: for each label, the source that did best on dev (``rules``, ``model`` or ``union``),
  learned by ``fit_per_label(dev_docs)`` and kept in the detector's config (``to_config()``); labels not
  seen on dev use ``default``. A config may also name ``none`` for a label (or as the default): the
  detector reports nothing of it (a model used only for the labels it is precise on).

With several learned detectors, their spans are first resolved among themselves (longest span wins).
Spans keep the ``source`` of the detector that found them (merged union spans name both). A CRF trained
with rule features is handed the rule spans already computed instead of running the rules twice.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clinideid.detect import crf as _crf  # noqa: F401  (registers "crf", the usual learned model)
from clinideid.detect.base import Detector, build_detector, register_detector
from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.resolve import resolve_spans

log = logging.getLogger(__name__)

STRATEGIES = ("rules_first", "model_first", "union", "per_label")
SOURCES = ("rules", "model", "union")  # what fit_per_label chooses among
CONFIG_SOURCES = (*SOURCES, "none")


def _build(spec: Any, what: str) -> Detector:
    if isinstance(spec, Detector):
        return spec
    if isinstance(spec, str | Path):  # a model path or shipped model name
        return build_detector({"type": "crf", "model": str(spec)})
    if isinstance(spec, Mapping):
        return build_detector(dict(spec))
    raise ConfigError(
        f"hybrid detector: {what} must be a detector spec (a mapping with 'type') or a model name"
    )


def _spec_of(spec: Any) -> Any:
    if isinstance(spec, Detector):  # exact when the detector can describe itself, else type and name
        to_config = getattr(spec, "to_config", None)
        return to_config() if callable(to_config) else {"type": spec.type_name, "name": spec.name}
    if isinstance(spec, Path):
        return str(spec)
    return dict(spec) if isinstance(spec, Mapping) else spec


def _without_overlaps(extra: Sequence[Span], base: Sequence[Span]) -> list[Span]:
    """Spans of ``extra`` that overlap no span of ``base`` (both sorted by start)."""
    import bisect

    ranges = sorted((s.start, s.end) for s in base)
    starts = [a for a, _ in ranges]
    max_end_before: list[int] = []
    m = -1
    for _, b in ranges:
        m = max(m, b)
        max_end_before.append(m)
    out = []
    for s in extra:
        k = bisect.bisect_left(starts, s.end)  # base spans starting before s ends: indices < k
        if k and max_end_before[k - 1] > s.start:
            continue
        out.append(s)
    return out


def _with_rule_attributes(model_spans: Sequence[Span], rule_spans: Sequence[Span]) -> list[Span]:
    """Model spans with the attributes of a rule span of the same label over the same text (the role of a
    date the rules read from its field label, "birth" or "admission", which date operators use)."""
    from dataclasses import replace

    by_key = {(r.start, r.end, r.label): r.attributes for r in rule_spans if r.attributes}
    if not by_key:
        return list(model_spans)
    out = []
    for s in model_spans:
        extra = by_key.get((s.start, s.end, s.label))
        out.append(replace(s, attributes={**extra, **s.attributes}) if extra else s)
    return out


def _union_per_label(rule_spans: Sequence[Span], model_spans: Sequence[Span]) -> list[Span]:
    """For each label, the union of that label's rule and model spans (overlaps merged within a label)."""
    by_label: dict[str, list[Span]] = {}
    for s in [*rule_spans, *model_spans]:
        by_label.setdefault(s.label, []).append(s)
    out: list[Span] = []
    for spans in by_label.values():
        out.extend(resolve_spans(spans, policy="union").kept)
    return out


@register_detector("hybrid")
class HybridDetector(Detector):
    """Rules and learned models together (see the module docstring)."""

    needs = ("rule_findings",)

    def __init__(
        self,
        rules: Mapping[str, Any] | Detector | None = None,
        models: Sequence[Mapping[str, Any] | str | Detector] | Mapping[str, Any] | str = (),
        strategy: str = "rules_first",
        per_label: Mapping[str, str] | None = None,
        default: str = "union",
        language: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name)
        if strategy not in STRATEGIES:
            raise ConfigError(
                f"hybrid detector: unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}"
            )
        if default not in CONFIG_SOURCES:
            raise ConfigError(
                f"hybrid detector: default must be one of {', '.join(CONFIG_SOURCES)}, got {default!r}"
            )
        bad = {k: v for k, v in (per_label or {}).items() if v not in CONFIG_SOURCES}
        if bad:
            raise ConfigError(
                f"hybrid detector: per_label sources must be one of {', '.join(CONFIG_SOURCES)}; bad: "
                + ", ".join(f"{k}={v}" for k, v in bad.items())
            )
        if rules is None:
            if not language:
                raise ConfigError("hybrid detector: give a rules spec or a language for the default rules")
            rules = {"type": "rules", "language": language}
        model_specs = [models] if isinstance(models, str | Path | Mapping | Detector) else list(models)
        if not model_specs:
            raise ConfigError("hybrid detector: give at least one learned model (models: [...])")
        self._rules_spec = _spec_of(rules)
        self._model_specs = [_spec_of(m) for m in model_specs]
        self.rules = _build(rules, "rules")
        self.models = [_build(m, "each model") for m in model_specs]
        self.strategy = strategy
        self.per_label: dict[str, str] = dict(per_label or {})
        self.default = default

    # -- sources --------------------------------------------------------------------------------------------

    def source_spans(self, doc: Document) -> tuple[list[Span], list[Span]]:
        """``(rule spans, model spans)`` for ``doc`` before combination."""
        return self.source_spans_batch([doc])[0]

    def source_spans_batch(self, docs: Sequence[Document]) -> list[tuple[list[Span], list[Span]]]:
        """``source_spans`` of several documents; each learned model reads them in one batch."""
        rule_spans = [list(self.rules.detect_one(doc)) for doc in docs]
        found: list[list[Span]] = [[] for _ in docs]
        for model in self.models:
            if getattr(model, "uses_rules", False):  # feature models reuse the rule hits just computed
                for i, doc in enumerate(docs):
                    found[i].extend(model.detect_one(doc, rule_spans=rule_spans[i]))  # type: ignore[call-arg]
            else:
                for i, spans in enumerate(model.detect(docs)):
                    found[i].extend(spans)
        if len(self.models) > 1:
            found = [resolve_spans(f, policy="longest").kept for f in found]
        return list(zip(rule_spans, found, strict=True))

    def combine(
        self, rule_spans: Sequence[Span], model_spans: Sequence[Span], strategy: str | None = None
    ) -> list[Span]:
        strategy = strategy or self.strategy
        if strategy == "rules_first":
            return sorted(
                [*rule_spans, *_without_overlaps(model_spans, rule_spans)], key=lambda s: (s.start, s.end)
            )
        if strategy == "model_first":
            return sorted(
                [*model_spans, *_without_overlaps(rule_spans, model_spans)], key=lambda s: (s.start, s.end)
            )
        if strategy == "union":
            return resolve_spans([*rule_spans, *model_spans], policy="union").kept
        return self._per_label(rule_spans, model_spans)

    def _per_label(self, rule_spans: Sequence[Span], model_spans: Sequence[Span]) -> list[Span]:
        def choice(label: str) -> str:
            return self.per_label.get(label, self.default)

        rules = [s for s in rule_spans if choice(s.label) in ("rules", "union")]
        models = _with_rule_attributes(
            [s for s in model_spans if choice(s.label) in ("model", "union")], rule_spans
        )
        return resolve_spans(_union_per_label(rules, models), policy="union").kept

    def detect_one(self, doc: Document) -> list[Span]:
        rule_spans, model_spans = self.source_spans(doc)
        return self.combine(rule_spans, model_spans)

    def detect(self, docs: Sequence[Document]) -> list[list[Span]]:
        return [self.combine(r, m) for r, m in self.source_spans_batch(docs)]

    # -- learning the per-label choice -------------------------------------------------------------------------

    def score_sources(self, dev_docs: Sequence[Document]) -> dict[str, dict[str, float]]:
        """Strict F1 of each source (``rules``, ``model``, ``union``) on each gold label of ``dev_docs``.

        A source is scored on each label's spans alone (``union``: that label's rule and model spans
        merged). ``dev_docs`` carry gold spans with canonical labels.
        """
        from clinideid.evaluate import evaluate

        sources = self.source_spans_batch(dev_docs)
        candidates = {
            "rules": [r for r, _ in sources],
            "model": [m for _, m in sources],
            "union": [_union_per_label(r, m) for r, m in sources],
        }
        per_source = {
            src: evaluate(
                dev_docs, [d.with_spans(sp) for d, sp in zip(dev_docs, spans, strict=True)], modes=["strict"]
            )["strict"].per_label()
            for src, spans in candidates.items()
        }
        gold_labels = sorted({s.label for d in dev_docs for s in d.spans})
        return {
            label: {src: per_source[src][label].f1 if label in per_source[src] else 0.0 for src in SOURCES}
            for label in gold_labels
        }

    def fit_per_label(
        self, dev_docs: Sequence[Document], scores: Mapping[str, Mapping[str, float]] | None = None
    ) -> dict[str, str]:
        """Choose, for each gold label of ``dev_docs``, the source with the best strict F1 on it.

        ``scores`` are ``score_sources(dev_docs)`` when already computed. Ties prefer ``rules``, then
        ``model`` (fewer spans from fewer sources). Sets the strategy to ``per_label`` and returns the
        choice (also in ``to_config()``).
        """
        if scores is None:
            scores = self.score_sources(dev_docs)
        choice: dict[str, str] = {}
        for label, by_source in scores.items():
            choice[label] = max(SOURCES, key=lambda s: (by_source[s], -SOURCES.index(s)))
            log.info(
                "per-label %s: %s (F1 rules %.3f, model %.3f, union %.3f)",
                label,
                choice[label],
                by_source["rules"],
                by_source["model"],
                by_source["union"],
            )
        self.per_label = choice
        self.strategy = "per_label"
        return dict(choice)

    def to_config(self) -> dict[str, Any]:
        """The detector spec (for a pipeline YAML), including a learned per-label choice."""
        spec: dict[str, Any] = {
            "type": "hybrid",
            "name": self.name,
            "rules": self._rules_spec,
            "models": self._model_specs,
            "strategy": self.strategy,
            "default": self.default,
        }
        if self.per_label:
            spec["per_label"] = dict(self.per_label)
        return spec
