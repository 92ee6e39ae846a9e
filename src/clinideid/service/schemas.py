"""Request and response bodies of the REST API (pydantic; shown in the OpenAPI description)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class OperatorSpec(BaseModel):
    operator: str = Field(description="an operator name (GET /v1/pipelines lists them)")
    options: dict[str, Any] = Field(default_factory=dict)


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field("doc", min_length=1, max_length=200, description="a display id, echoed in the result")
    text: str
    language: str | None = Field(None, description="en, de, it, ru, es, fr; none: the request's or auto")
    patient_id: str | None = Field(None, max_length=200, description="scope of surrogates with scope=patient")


class DeidRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str | None = Field(None, description="one document (or use `documents`)")
    documents: list[DocumentIn] | None = None
    language: str | None = None
    operators: dict[str, OperatorSpec] | None = Field(None, description="per-label operator overrides")
    scope: Literal["document", "patient", "corpus"] | None = None
    patient_id: str | None = Field(None, max_length=200)
    models: list[str] | None = Field(None, description="packaged model names to use with the rules")
    audit: bool = Field(True, description="add the residual-risk audit of each output")


class SpanOut(BaseModel):
    start: int
    end: int
    label: str
    source: str
    score: float | None = None
    explanation: str | None = None


class DetectResult(BaseModel):
    id: str
    language: str
    spans: list[SpanOut]


class DeidResult(BaseModel):
    id: str
    language: str
    text: str
    replacements: list[dict[str, Any]]
    audit: dict[str, Any] | None = None


class BatchOut(BaseModel):
    documents: list[dict[str, Any]]
    errors: list[dict[str, str]] = Field(default_factory=list)


class JobFromPath(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="a JSONL file inside the server's input root")
    language: str | None = None
    operators: dict[str, OperatorSpec] | None = None
    scope: Literal["document", "patient", "corpus"] | None = None
