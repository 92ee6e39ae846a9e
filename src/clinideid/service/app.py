"""The FastAPI application: ``create_app(settings)``; ``clinideid serve`` runs it with uvicorn."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from clinideid.errors import ClinideidError
from clinideid.service import presidio
from clinideid.service.api import router as api_router
from clinideid.service.checks import check_language, pipeline_error
from clinideid.service.engine import Engine
from clinideid.service.headers import SecurityHeaders, docs_page
from clinideid.service.jobs import JobManager
from clinideid.service.security import Guard, check_token
from clinideid.service.settings import ServiceSettings
from clinideid.service.tenancy import Caller, Callers
from clinideid.service.work import AnalyzeTask, AnonymizeTask

log = logging.getLogger(__name__)

#: where FastAPI puts a request field in an error's ``loc`` (the rest are field names or caller's keys)
_LOC_ROOTS = frozenset({"body", "query", "path", "header", "cookie"})


def require_caller(request: Request) -> Caller:
    """Dependency of every protected route: the caller (its tenant and role), kept in ``request.state``."""
    settings = request.app.state.settings
    caller = check_token(request, request.app.state.callers, bool(settings.tokens))
    request.state.caller = caller
    return caller


def _field_names(spec: Any) -> set[str]:
    """Every property and parameter name of the API's description: the names a ``loc`` may show."""
    names: set[str] = set()
    if isinstance(spec, dict):
        names.update(spec.get("properties", {}) if isinstance(spec.get("properties"), dict) else ())
        if spec.get("in") in _LOC_ROOTS and isinstance(spec.get("name"), str):
            names.add(spec["name"])
        for value in spec.values():
            names |= _field_names(value)
    elif isinstance(spec, list):
        for value in spec:
            names |= _field_names(value)
    return names


def _safe_loc(loc: Any, known: set[str]) -> list[Any]:
    """An error's location with every key the caller chose (a dict key, an unknown field) shown as ``*``."""
    return [p if isinstance(p, int) or p in _LOC_ROOTS or p in known else "*" for p in loc]


def _presidio_router() -> APIRouter:
    router = APIRouter(tags=["presidio-compatible"])

    @router.post("/analyze", summary="Presidio analyzer: find PII entities")
    async def analyze(request: Request, body: presidio.AnalyzeRequest) -> list[dict[str, Any]]:
        settings = request.app.state.settings
        if len(body.text) > settings.max_document_chars:
            raise HTTPException(413, f"text is over {settings.max_document_chars} characters")
        engine: Engine = request.app.state.engine
        check_language(body.language, "language")
        try:
            engine.pipeline(body.language, None)  # a bad language is a 422 before any work
        except ClinideidError as exc:
            raise pipeline_error(exc) from None
        return await engine.compute(AnalyzeTask(body))

    @router.post("/anonymize", summary="Presidio anonymizer: replace the given analyzer results")
    async def anonymize(request: Request, body: presidio.AnonymizeRequest) -> dict[str, Any]:
        settings = request.app.state.settings
        if len(body.text) > settings.max_document_chars:
            raise HTTPException(413, f"text is over {settings.max_document_chars} characters")
        engine: Engine = request.app.state.engine
        language = str((body.model_extra or {}).get("language") or "en")
        check_language(language, "language", auto=False)
        return await engine.compute(AnonymizeTask(body, language))

    @router.get("/supportedentities", summary="Presidio: entity types this server can return")
    def supported() -> list[str]:
        return sorted(set(presidio.PRESIDIO_TYPES.values()))

    return router


def create_app(settings: ServiceSettings, *, review: bool = True) -> FastAPI:
    """The application; its state holds the settings, the pipeline engine and the job manager."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.engine.open()
        app.state.engine.warm()
        app.state.ready = True
        try:
            yield
        finally:
            app.state.jobs.close()
            app.state.engine.close()

    app = FastAPI(
        title="clinideid",
        summary="De-identification of clinical notes: REST API, Presidio-compatible endpoints, review page",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    app.state.settings = settings
    app.state.callers = Callers(settings)
    app.state.engine = Engine(settings)
    app.state.jobs = JobManager(settings)
    app.state.ready = False
    known_fields: set[str] = set()

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's default echoes the offending input (which may be document text) and its location names
        # the caller's own keys (an operator's label, an entity type): neither is repeated
        if not known_fields:
            known_fields.update(_field_names(app.openapi()))
        errors = [
            {"loc": _safe_loc(e.get("loc", ()), known_fields), "msg": e.get("msg"), "type": e.get("type")}
            for e in exc.errors()
        ]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return docs_page(get_swagger_ui_html(openapi_url=app.openapi_url, title=f"{app.title} - API"))

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return docs_page(get_redoc_html(openapi_url=app.openapi_url, title=f"{app.title} - API"))

    @app.get("/health", tags=["probes"])
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/ready", tags=["probes"])
    def ready(request: Request) -> JSONResponse:
        ok = bool(request.app.state.ready)
        return JSONResponse({"ready": ok}, status_code=200 if ok else 503)

    protected = [Depends(require_caller)]
    app.include_router(api_router, dependencies=protected)
    app.include_router(_presidio_router(), dependencies=protected)
    if review:
        from clinideid.service.review.routes import mount_review

        mount_review(app, protected)
    app.add_middleware(Guard, max_bytes=settings.max_request_bytes, routes=app.router.routes)
    app.add_middleware(SecurityHeaders)  # outermost: the guard's own answers get the headers too
    return app
