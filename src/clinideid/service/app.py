"""The FastAPI application: ``create_app(settings)``; ``clinideid serve`` runs it with uvicorn."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from clinideid.errors import ClinideidError
from clinideid.service import presidio
from clinideid.service.api import router as api_router
from clinideid.service.engine import Engine
from clinideid.service.jobs import JobManager
from clinideid.service.security import Guard, check_token
from clinideid.service.settings import ServiceSettings
from clinideid.service.work import AnalyzeTask, AnonymizeTask

log = logging.getLogger(__name__)


def require_caller(request: Request) -> str:
    """Dependency of every protected route: the caller's identity (``loopback`` or a token prefix)."""
    caller = check_token(request, request.app.state.settings)
    request.state.caller = caller
    return caller


def _presidio_router() -> APIRouter:
    router = APIRouter(tags=["presidio-compatible"])

    @router.post("/analyze", summary="Presidio analyzer: find PII entities")
    async def analyze(request: Request, body: presidio.AnalyzeRequest) -> list[dict[str, Any]]:
        settings = request.app.state.settings
        if len(body.text) > settings.max_document_chars:
            raise HTTPException(413, f"text is over {settings.max_document_chars} characters")
        engine: Engine = request.app.state.engine
        try:
            engine.pipeline(body.language, None)  # a bad language is a 422 before any work
        except ClinideidError as exc:
            raise HTTPException(422, str(exc)) from None
        return await engine.compute(AnalyzeTask(body))

    @router.post("/anonymize", summary="Presidio anonymizer: replace the given analyzer results")
    async def anonymize(request: Request, body: presidio.AnonymizeRequest) -> dict[str, Any]:
        settings = request.app.state.settings
        if len(body.text) > settings.max_document_chars:
            raise HTTPException(413, f"text is over {settings.max_document_chars} characters")
        engine: Engine = request.app.state.engine
        language = str((body.model_extra or {}).get("language") or "en")
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
    )
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    app.state.settings = settings
    app.state.engine = Engine(settings)
    app.state.jobs = JobManager(settings)
    app.state.ready = False

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's default echoes the offending input, which may be document text
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")} for e in exc.errors()
        ]
        return JSONResponse({"detail": errors}, status_code=422)

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
    app.add_middleware(Guard, max_bytes=settings.max_request_bytes)
    return app
