"""Pipeline configuration: pydantic models, YAML in, validated, with clear errors.

A pipeline config says which detectors run (as registry specs), how their spans are resolved, which
operator replaces each label, and the surrogate scope. Packaged defaults live in ``config/<language>.yaml``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from clinideid.errors import ConfigError
from clinideid.labels import canonical
from clinideid.postprocess import DEFAULT_STEPS, check_steps
from clinideid.resolve import POLICIES
from clinideid.text.language import SUPPORTED


class OperatorSpec(BaseModel):
    """An operator by registered name, with its options."""

    model_config = ConfigDict(extra="forbid")
    operator: str
    options: dict[str, Any] = Field(default_factory=dict)


class ResolutionSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    policy: str = "longest"
    priority: list[str] = Field(default_factory=list)

    @field_validator("policy")
    @classmethod
    def _known_policy(cls, v: str) -> str:
        if v not in POLICIES:
            raise ValueError(f"unknown policy {v!r}; choose one of {', '.join(POLICIES)}")
        return v


class PipelineConfig(BaseModel):
    """A whole de-identification pipeline."""

    model_config = ConfigDict(extra="forbid")
    language: str
    detectors: list[dict[str, Any]]
    resolution: ResolutionSpec = Field(default_factory=ResolutionSpec)
    #: keys: a canonical label, a category, or "default"; values: operator specs (or a bare operator name)
    operators: dict[str, OperatorSpec] = Field(
        default_factory=lambda: {"default": OperatorSpec(operator="surrogate")}
    )
    scope: Literal["document", "patient", "corpus"] = "patient"
    min_score: float = Field(default=0.0, ge=0.0, le=1.0)
    #: what is done to the resolved spans before the operators, in order: registered step names
    #: (``clinideid.postprocess``: trim_role_words, propagate_mentions, merge_adjacent_names, plug-ins)
    postprocess: list[str] = Field(default_factory=lambda: list(DEFAULT_STEPS))
    #: long documents are detected in chunks of about this many characters (bounded memory)
    max_chunk_chars: int = Field(default=100_000, ge=1_000)

    @field_validator("language")
    @classmethod
    def _known_language(cls, v: str) -> str:
        if v not in SUPPORTED:
            raise ValueError(f"unsupported language {v!r}; supported: {', '.join(SUPPORTED)}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _merge_flag(cls, data: Any) -> Any:
        """``merge_adjacent_names: false`` (the flag of earlier configs) leaves that step out."""
        if isinstance(data, dict) and "merge_adjacent_names" in data:
            data = dict(data)
            merge = data.pop("merge_adjacent_names")
            if merge is False:
                steps = data.get("postprocess", DEFAULT_STEPS)
                if isinstance(steps, list | tuple):
                    data["postprocess"] = [s for s in steps if s != "merge_adjacent_names"]
        return data

    @field_validator("postprocess")
    @classmethod
    def _known_steps(cls, v: list[str]) -> list[str]:
        try:
            check_steps(v)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return v

    @field_validator("detectors")
    @classmethod
    def _detectors_have_type(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not v:
            raise ValueError("at least one detector is needed")
        for i, spec in enumerate(v):
            if not isinstance(spec, dict) or "type" not in spec:
                raise ValueError(f"detector #{i + 1} needs a 'type' (e.g. type: rules)")
        return v

    @field_validator("operators", mode="before")
    @classmethod
    def _bare_operator_names(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: ({"operator": s} if isinstance(s, str) else s) for k, s in v.items()}
        return v

    @field_validator("operators")
    @classmethod
    def _known_operator_keys(cls, v: dict[str, OperatorSpec]) -> dict[str, OperatorSpec]:
        tax = canonical()
        allowed = set(tax.labels) | set(tax.categories) | {"default"}
        bad = sorted(set(v) - allowed)
        if bad:
            raise ValueError(
                f"operators for unknown labels {', '.join(bad)}; use canonical labels, categories or 'default'"
            )
        return v

    def operator_for(self, label: str) -> OperatorSpec:
        """The operator spec for a canonical label: by label, then its category, then 'default'."""
        if label in self.operators:
            return self.operators[label]
        tax = canonical()
        if label in tax and tax.category_of(label) in self.operators:
            return self.operators[tax.category_of(label)]
        if "default" in self.operators:
            return self.operators["default"]
        raise ConfigError(f"no operator configured for label {label!r} and no 'default' operator")


def _format_validation_error(exc: ValidationError, origin: str) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    return f"invalid pipeline config {origin}: " + "; ".join(parts)


def parse_config(data: Any, origin: str = "<config>") -> PipelineConfig:
    if not isinstance(data, dict):
        raise ConfigError(f"pipeline config {origin} must be a mapping (YAML keys: language, detectors, ...)")
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, origin)) from None


def load_config(path: str | Path) -> PipelineConfig:
    """A pipeline config from a YAML file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"pipeline config file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"pipeline config {path} is not valid YAML: {exc}") from None
    return parse_config(data, str(path))


#: packaged pipelines of every language, by name: ``config/<lang>.yaml`` is "default"; the others are
#: ``config/<lang>-<name>.yaml``
PIPELINES = ("default", "rules")


def default_config(language: str, pipeline: str = "default") -> PipelineConfig:
    """A packaged pipeline for ``language``: ``default`` (the measured best: rules and the shipped learned
    model) or ``rules`` (the rule packs alone, for users who want no model)."""
    if language not in SUPPORTED:
        raise ConfigError(f"no default pipeline for language {language!r}; supported: {', '.join(SUPPORTED)}")
    if pipeline not in PIPELINES:
        raise ConfigError(f"no packaged pipeline {pipeline!r}; choose one of {', '.join(PIPELINES)}")
    name = language if pipeline == "default" else f"{language}-{pipeline}"
    res = resources.files("clinideid").joinpath("config", f"{name}.yaml")
    return parse_config(yaml.safe_load(res.read_text("utf-8")), f"{pipeline} config for {language}")
