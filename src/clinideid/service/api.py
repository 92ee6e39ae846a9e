"""The ``/v1`` endpoints: de-identify and detect documents, batch jobs, listings."""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import FileResponse

from clinideid.errors import ClinideidError, InputError
from clinideid.service.checks import (
    check_language,
    check_models,
    check_operators,
    invalid,
    pipeline_error,
)
from clinideid.service.headers import AUDIT_CSP, attachment
from clinideid.service.schemas import BatchOut, DeidRequest, DocumentIn, JobFromPath
from clinideid.service.tenancy import caller_of
from clinideid.service.work import DocumentsTask

router = APIRouter(prefix="/v1")


def overrides_of(
    operators: dict[str, Any] | None, scope: str | None, models: list[str] | None = None
) -> dict:
    """Pipeline overrides (as ``clinideid deid --operator/--scope/--model`` builds them)."""
    out: dict[str, Any] = {}
    if operators:
        out["operators"] = {
            label: spec.model_dump() if hasattr(spec, "model_dump") else dict(spec)
            for label, spec in operators.items()
        }
    if scope:
        out["scope"] = scope
    if models:
        out["models"] = list(models)
    return out


def _documents(body: DeidRequest) -> list[DocumentIn]:
    if (body.text is None) == (body.documents is None):
        raise HTTPException(422, "give either `text` (one document) or `documents` (a batch)")
    docs = [DocumentIn(text=body.text)] if body.text is not None else list(body.documents or [])
    return docs


def _check_sizes(request: Request, docs: list[DocumentIn]) -> None:
    settings = request.app.state.settings
    if len(docs) > settings.max_batch_documents:
        raise HTTPException(413, f"at most {settings.max_batch_documents} documents per request")
    for i, doc in enumerate(docs):
        if len(doc.text) > settings.max_document_chars:
            field = "text" if len(docs) == 1 else f"documents[{i}].text"
            raise invalid(field, f"is over {settings.max_document_chars} characters", 413)


def _check_fields(body: DeidRequest) -> None:
    """The pipeline fields of a request, each named in its error (before any pipeline is built)."""
    check_language(body.language, "language")
    for i, doc in enumerate(body.documents or ()):
        check_language(doc.language, f"documents[{i}].language", auto=False)
    check_operators(overrides_of(body.operators, None).get("operators"))
    check_models(body.models)


def _run_documents(request: Request, body: DeidRequest, mode: Literal["detect", "deidentify"]):
    docs = _documents(body)
    _check_sizes(request, docs)
    engine = request.app.state.engine
    overrides = overrides_of(body.operators, body.scope, body.models)
    engine.pipeline(body.language, overrides)  # a bad language or override is a 422 before any work
    task = DocumentsTask(
        mode,
        tuple((d.id, d.text, d.language, d.patient_id) for d in docs),
        body.language,
        overrides,
        body.patient_id,
        bool(body.audit),
    )
    return engine, task


def _single_or_batch(body: DeidRequest, out: BatchOut) -> dict[str, Any]:
    if body.text is not None:
        if out.errors:
            raise HTTPException(422, out.errors[0]["error"])
        return out.documents[0]
    return out.model_dump()


@router.post("/deidentify", summary="De-identify one document (`text`) or a batch (`documents`)")
async def deidentify(request: Request, body: DeidRequest) -> dict[str, Any]:
    _check_fields(body)
    try:
        engine, work = _run_documents(request, body, "deidentify")
    except ClinideidError as exc:
        raise pipeline_error(exc) from None
    return _single_or_batch(body, await engine.compute(work))


@router.post("/detect", summary="Detect PHI spans in one document (`text`) or a batch (`documents`)")
async def detect(request: Request, body: DeidRequest) -> dict[str, Any]:
    _check_fields(body)
    try:
        engine, work = _run_documents(request, body, "detect")
    except ClinideidError as exc:
        raise pipeline_error(exc) from None
    return _single_or_batch(body, await engine.compute(work))


@router.get("/models", summary="Packaged models")
def models() -> dict[str, Any]:
    from clinideid.models import load_metadata, packaged_models, resolve_model_path

    out = []
    for name in packaged_models():
        meta = load_metadata(resolve_model_path(name))
        out.append({"name": name, "type": meta.model_type, "language": getattr(meta, "language", None)})
    return {"models": out}


@router.get("/pipelines", summary="Languages, detectors and operators this server offers")
def pipelines(request: Request) -> dict[str, Any]:
    from clinideid.config import default_config
    from clinideid.detect.base import DETECTORS
    from clinideid.text.language import SUPPORTED
    from clinideid.transform.base import OPERATORS

    langs = {}
    for lang in SUPPORTED:
        cfg = default_config(lang)
        langs[lang] = {
            "detectors": [d.get("type") for d in cfg.detectors],
            "scope": cfg.scope,
            "operators": {label: spec.operator for label, spec in cfg.operators.items()},
        }
    return {
        "default_language": request.app.state.settings.language,
        "languages": langs,
        "operators": OPERATORS.names(),
        "detectors": DETECTORS.names(),
        "scopes": ["document", "patient", "corpus"],
    }


# -- jobs ---------------------------------------------------------------------------------------------------
def _job_options(language: str | None, scope: str | None, operators: str | dict | None) -> dict[str, Any]:
    """A job's options, checked here (the job process would only fail later, with a message in its log)."""
    if isinstance(operators, str) and operators.strip():
        try:
            operators = json.loads(operators)
        except json.JSONDecodeError:
            operators = None
        if not isinstance(operators, dict) or not all(isinstance(v, dict) for v in operators.values()):
            raise invalid("operators", "must be a JSON object {LABEL: {operator, options}}")
    if scope not in (None, "", "document", "patient", "corpus"):
        raise invalid("scope", "must be document, patient or corpus")
    check_language(language or None, "language")
    check_operators(operators or None)
    for label, spec in (operators or {}).items():  # the job gets them as `--operator LABEL=OP:key=value,...`
        for key, value in (spec.get("options") or {}).items():
            if not key.isidentifier() or not isinstance(value, str | int | float | bool) or "," in str(value):
                raise invalid(
                    f"operators.{label}.options", "of a job must be names with numbers, booleans or strings "
                    "without commas"
                )  # fmt: skip
    return {"language": language or None, "scope": scope or None, **overrides_of(operators or None, None)}


def _jobs_call(fn, *args):
    try:
        return fn(*args)
    except InputError as exc:
        raise HTTPException(404, str(exc)) from None
    except ClinideidError as exc:
        raise HTTPException(409, str(exc)) from None


@router.post("/jobs", status_code=202, summary="Start a batch job on an uploaded JSONL file")
async def create_job(
    request: Request,
    file: UploadFile = File(..., description='JSONL: one {"id", "text", ...} record per line'),
    language: str | None = Form(None),
    scope: str | None = Form(None),
    operators: str | None = Form(None, description='JSON: {LABEL: {"operator": ..., "options": {...}}}'),
) -> dict[str, Any]:
    data = await file.read()
    options = _job_options(language, scope, operators)
    return _jobs_call(request.app.state.jobs.create, data, options, caller_of(request))


@router.post(
    "/jobs/from-path", status_code=202, summary="Start a batch job on a JSONL file in the input root"
)
def create_job_from_path(request: Request, body: JobFromPath) -> dict[str, Any]:
    jobs = request.app.state.jobs
    path = _jobs_call(jobs.resolve_input, body.path)
    options = _job_options(
        body.language, body.scope, {k: v.model_dump() for k, v in (body.operators or {}).items()}
    )
    return _jobs_call(jobs.create, path, options, caller_of(request))


@router.get("/jobs", summary="The caller's jobs with their status (an admin's: every job)")
def list_jobs(request: Request) -> dict[str, Any]:
    return {"jobs": request.app.state.jobs.list(caller_of(request))}


@router.get("/jobs/{job_id}", summary="A job's status and progress")
def job_status(request: Request, job_id: str) -> dict[str, Any]:
    return _jobs_call(request.app.state.jobs.status, job_id, caller_of(request))


@router.post("/jobs/{job_id}/resume", status_code=202, summary="Resume an interrupted or failed job")
def resume_job(request: Request, job_id: str) -> dict[str, Any]:
    jobs = request.app.state.jobs
    _jobs_call(jobs.start, job_id, True, caller_of(request))
    return jobs.status(job_id, caller_of(request))


@router.post("/jobs/{job_id}/cancel", summary="Stop a job after its current document")
def cancel_job(request: Request, job_id: str) -> dict[str, Any]:
    jobs = request.app.state.jobs
    _jobs_call(jobs.cancel, job_id, caller_of(request))
    return jobs.status(job_id, caller_of(request))


@router.get("/jobs/{job_id}/{part}", summary="Download a job's result (JSONL), report, summary or audit page")
def job_file(
    request: Request, job_id: str, part: Literal["result", "report", "summary", "audit"]
) -> FileResponse:
    path = _jobs_call(request.app.state.jobs.result_file, job_id, part, caller_of(request))
    media = {"result": "application/x-ndjson", "report": "application/x-ndjson", "summary": "application/json",
             "audit": "text/html"}[part]  # fmt: skip
    filename = {"result": f"{job_id}.jsonl", "report": "report.jsonl", "summary": "summary.json",
                "audit": "audit.html"}[part]  # fmt: skip
    headers = {"Content-Disposition": attachment(filename)}
    if part == "audit":
        headers["Content-Security-Policy"] = AUDIT_CSP
    return FileResponse(path, media_type=media, headers=headers)
