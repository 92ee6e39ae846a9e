"""``RuleDetector``: the rule engine behind the detector contract, registered as ``"rules"``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from clinideid.analysis import shared
from clinideid.detect.base import Detector, register_detector
from clinideid.detect.rules.compiler import CompiledPack, compile_pack
from clinideid.detect.rules.engine import Found, RuleEngine
from clinideid.detect.rules.loader import available_packs
from clinideid.document import Document, Span
from clinideid.errors import ConfigError, InputError


@register_detector("rules")
class RuleDetector(Detector):
    """Finds PHI with a rule pack: ordered passes of regex, form-field, cue+name and word-list rules.

    ``language`` picks a packaged pack (``"es"``, ``"en"``, ...); ``pack`` is a pack name or the path of a
    YAML pack file (which may ``include`` a packaged pack and extend it); with neither, each document's
    ``language`` picks the pack. ``passes`` runs only the named passes (in the pack's order).

    Example (config): ``{type: rules, language: es}`` or ``{type: rules, pack: my_rules.yaml}``.
    """

    needs = ("rule_findings",)

    def __init__(
        self,
        language: str | None = None,
        pack: str | Path | None = None,
        passes: Sequence[str] | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name)
        self.language = language
        self.pack_ref = str(pack) if pack is not None else None
        self.passes = list(passes) if passes is not None else None
        self._engines: dict[str, RuleEngine] = {}
        self._fixed_ref: str | None = None
        if self.pack_ref is not None or language is not None:
            self._fixed_ref = self.pack_ref or _pack_for_language(language, ConfigError)
            self._engine(self._fixed_ref)  # fail early on a bad pack

    def __getstate__(self) -> dict:
        # compiled packs hold closures and big tables: workers (batch runner) recompile them from the
        # pack reference instead of receiving them pickled
        state = dict(self.__dict__)
        state["_engines"] = {}
        return state

    def _engine(self, ref: str) -> RuleEngine:
        engine = self._engines.get(ref)
        if engine is None:
            engine = RuleEngine(compile_pack(ref), self.passes)
            self._engines[ref] = engine
        return engine

    def pack_for(self, doc: Document) -> CompiledPack:
        return self._engine(self._ref_for(doc)).pack

    def _ref_for(self, doc: Document) -> str:
        if self._fixed_ref is not None:
            return self._fixed_ref
        if not doc.language:
            raise InputError(
                f"document {doc.id!r} has no language and the rules detector was given none; "
                "set language: (e.g. es) or pack: in the detector config"
            )
        return _pack_for_language(doc.language)

    def detect_one(self, doc: Document) -> list[Span]:
        ref = self._ref_for(doc)
        engine = self._engine(ref)
        text = doc.text
        # inside a pipeline the engine runs once per document, whoever asks (hybrid, neural rule inputs)
        findings = shared(doc, ("rule_findings", ref, tuple(self.passes or ())), lambda: engine.run(text))
        return [_span(f, text, self.name) for f in findings if f.label is not None]


#: date roles a span may carry (``transform.date_roles``); a form's discharge date is one of the "other" dates
_SPAN_ROLES = {"birth": "birth", "admission": "admission", "discharge": "other", "other": "other"}


def _span(f: Found, text: str, source: str) -> Span:
    """The span of one finding; a form-field value names its group in the explanation
    (``en/fields/form/birth_date``) and a date's role in ``attributes["date_role"]``."""
    explanation = f.rule_id
    attributes = {}
    if f.detail is not None:
        group, role = f.detail
        explanation = f"{f.rule_id}/{group}"
        if role in _SPAN_ROLES and f.label == "DATE":
            attributes["date_role"] = _SPAN_ROLES[role]
    return Span(
        f.start,
        f.end,
        f.label,
        text=text[f.start : f.end],
        source=source,
        score=f.score,
        explanation=explanation,
        attributes=attributes,
    )


def _pack_for_language(language: str | None, error: type[Exception] = InputError) -> str:
    code = (language or "").strip().replace("_", "-").split("-")[0].lower()
    packs = available_packs()
    if code not in packs or code == "common":
        raise error(
            f"no rule pack for language {language!r}; packaged packs: "
            f"{', '.join(p for p in packs if p != 'common')}, or pass pack: with a YAML file"
        )
    return code
