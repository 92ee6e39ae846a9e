"""The review page (static HTML + vanilla JS) and its ``/v1/review`` API.

Every route reads, lists and exports only the documents the caller may see (``tenancy``): another tenant's
document answers 404, as one that does not exist.
"""

from __future__ import annotations

import io
import json
import zipfile
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from clinideid.document import Document, Span
from clinideid.errors import ClinideidError
from clinideid.evaluate.agreement import agreement
from clinideid.resolve import resolve_spans
from clinideid.service.checks import check_language, invalid, public_error
from clinideid.service.headers import AUDIT_CSP, REVIEW_CSP, attachment
from clinideid.service.review.db import ReviewStore
from clinideid.service.tenancy import Caller, caller_of
from clinideid.transform.apply import apply_operators

REVIEWER_PATTERN = r"^[\w.@ -]+$"
#: a reviewer's name as a query parameter (the same rule as in a correction)
ReviewerQuery = Annotated[str, Query(min_length=1, max_length=80, pattern=REVIEWER_PATTERN)]


def _canonical_label(label: str) -> str:
    from clinideid.labels import canonical

    tax = canonical()
    if label not in tax.labels and label not in tax.categories:
        raise ValueError("must be a canonical label (GET /v1/review/labels lists them)")
    return label


Label = Annotated[str, Field(max_length=40), AfterValidator(_canonical_label)]


class SpanIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    start: int = Field(ge=0)
    end: int = Field(gt=0)
    label: Label
    source: str = Field("detector", max_length=80)
    explanation: str | None = Field(None, max_length=200)


class ReviewDocIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=200)
    text: str
    language: str | None = None
    spans: list[SpanIn] | None = Field(None, description="detected spans; none: the server detects")


class ReviewDocsIn(BaseModel):
    documents: list[ReviewDocIn]


class CorrectionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reviewer: str = Field(min_length=1, max_length=80, pattern=REVIEWER_PATTERN)
    action: Literal["accept", "reject", "relabel", "add"]
    start: int = Field(ge=0)
    end: int = Field(gt=0)
    label: Label | None = None


def _store(request: Request) -> ReviewStore:
    return request.app.state.review


def _doc(request: Request, doc_id: int):
    doc = _store(request).document(doc_id, caller_of(request))
    if doc is None:
        raise HTTPException(404, "no such review document")
    return doc


def _static(name: str) -> str:
    return resources.files("clinideid.service").joinpath("static", name).read_text("utf-8")


def review_api() -> APIRouter:
    router = APIRouter(prefix="/v1/review", tags=["review"])

    @router.post("/documents", status_code=201, summary="Add documents for review (detected by the server)")
    async def add_documents(request: Request, body: ReviewDocsIn) -> dict[str, Any]:
        engine = request.app.state.engine
        settings = request.app.state.settings
        if len(body.documents) > settings.max_batch_documents:
            raise HTTPException(413, f"at most {settings.max_batch_documents} documents per request")
        for i, d in enumerate(body.documents):
            check_language(d.language, f"documents[{i}].language", auto=False)
            if any(sp.end > len(d.text) or sp.start >= sp.end for sp in d.spans or ()):
                raise invalid(f"documents[{i}].spans", "has a span outside the text or with end <= start")
        owner = caller_of(request).owner

        def work() -> list[dict[str, Any]]:
            out = []
            deid = engine.pipeline(None, None)
            for i, d in enumerate(body.documents):
                doc = Document(d.id, d.text, d.language)
                lang = deid.language_of(doc)
                if d.spans is None:
                    found, _ = deid.pipeline(lang).detect(Document(d.id, d.text, lang))
                    spans = [{"start": s.start, "end": s.end, "label": s.label, "source": s.source,
                              "explanation": s.explanation} for s in found]  # fmt: skip
                else:
                    spans = [sp.model_dump() for sp in d.spans]
                try:
                    new_id = _store(request).add_document(d.id, d.text, lang, spans, owner)
                except ValueError:
                    raise invalid(
                        f"documents[{i}].id", "is the id of a review document you have", 409
                    ) from None
                out.append({"id": new_id, "display_id": d.id, "detected": len(spans)})
            return out

        return {"documents": await engine.run(work)}

    @router.post("/import-job/{job_id}", status_code=201, summary="Review a finished job's documents")
    def import_job(request: Request, job_id: str) -> dict[str, Any]:
        """Each input record with the spans the job replaced (from its report), under ``<job>/<id>``."""
        from clinideid.service.api import _jobs_call
        from clinideid.service.jobs import INPUT_NAME

        jobs = request.app.state.jobs
        caller = caller_of(request)
        report_path = _jobs_call(jobs.result_file, job_id, "report", caller)
        owner = jobs.owner(job_id, caller)  # the documents stay with the job's owner
        reports: dict[str, dict[str, Any]] = {}
        for line in report_path.read_text("utf-8").splitlines():
            rep = json.loads(line)
            reports.setdefault(rep["id"], rep)
        added = []
        store = _store(request)
        for line in (jobs.folder(job_id, caller) / INPUT_NAME).read_text("utf-8").splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                doc_id, text = str(record["id"]), record["text"]
            except (ValueError, KeyError, TypeError):
                continue  # the job reported this line as failed; nothing to review
            rep = reports.get(doc_id)
            if rep is None or not isinstance(text, str):
                continue
            spans = [{"start": r["start"], "end": r["end"], "label": r["label"], "source": r["source"],
                      "explanation": r.get("explanation")} for r in rep.get("replacements", ())]  # fmt: skip
            try:
                new_id = store.add_document(
                    f"{job_id}/{doc_id}", text, rep.get("language") or "en", spans, owner
                )
            except ValueError:
                continue  # imported before
            added.append({"id": new_id, "display_id": f"{job_id}/{doc_id}", "detected": len(spans)})
        return {"documents": added}

    @router.get("/documents", summary="The caller's documents under review, with status (an admin's: all)")
    def list_documents(request: Request) -> dict[str, Any]:
        return {"documents": _store(request).documents(caller_of(request))}

    @router.get("/documents/{doc_id}", summary="A document with its spans as a reviewer sees them")
    def get_document(request: Request, doc_id: int, reviewer: ReviewerQuery | None = None) -> dict[str, Any]:
        doc = _doc(request, doc_id)
        spans = _store(request).spans_for(doc_id, reviewer)
        return {"id": doc.id, "display_id": doc.display_id, "language": doc.language, "text": doc.text,
                "spans": [s.to_dict() for s in spans]}  # fmt: skip

    @router.post("/documents/{doc_id}/corrections", status_code=201, summary="Record a reviewer's decision")
    def add_correction(request: Request, doc_id: int, body: CorrectionIn) -> dict[str, Any]:
        _doc(request, doc_id)
        try:
            _store(request).correct(
                doc_id, body.reviewer, body.action, body.start, body.end, body.label, caller_of(request)
            )
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        return {"spans": [s.to_dict() for s in _store(request).spans_for(doc_id, body.reviewer)]}

    @router.get("/documents/{doc_id}/corrections", summary="Every correction of a document (all reviewers)")
    def list_corrections(request: Request, doc_id: int) -> dict[str, Any]:
        _doc(request, doc_id)
        return {"corrections": _store(request).corrections(doc_id)}

    @router.post("/documents/{doc_id}/apply", summary="Re-run replacement with a reviewer's corrected spans")
    async def apply(request: Request, doc_id: int, reviewer: ReviewerQuery) -> dict[str, Any]:
        doc = _doc(request, doc_id)
        spans = [
            Span(a, b, label, source="review")
            for a, b, label in _store(request).final_spans(doc_id, reviewer)
        ]
        engine = request.app.state.engine

        def work() -> dict[str, Any]:
            pipeline = engine.pipeline(doc.language, None).pipeline(doc.language)
            kept = resolve_spans(spans, "longest").kept
            document = Document(doc.display_id, doc.text, doc.language)
            try:
                text, reps = apply_operators(
                    document, kept, pipeline.operator_for,
                    {"key": request.app.state.settings.key, "scope_id": pipeline.scope_id(document, None)},
                )  # fmt: skip
            except ClinideidError as exc:
                raise HTTPException(422, public_error(exc)) from None
            return {"id": doc.id, "text": text, "replacements": [r.to_dict() for r in reps]}

        return await engine.run(work)

    @router.get("/export", summary="Corrected annotations of the caller's documents (JSONL or a BRAT zip)")
    def export(
        request: Request, reviewer: ReviewerQuery, format: Literal["jsonl", "brat"] = "jsonl"
    ) -> Response:
        store = _store(request)
        caller = caller_of(request)
        docs = store.documents(caller)
        if format == "jsonl":
            lines = []
            for d in docs:
                doc = store.document(d["id"], caller)
                spans = [
                    {"start": a, "end": b, "label": lab} for a, b, lab in store.final_spans(d["id"], reviewer)
                ]
                lines.append(json.dumps({"id": doc.display_id, "text": doc.text, "language": doc.language,
                                         "spans": spans, "reviewer": reviewer}, ensure_ascii=False))  # fmt: skip
            return Response("\n".join(lines) + ("\n" if lines else ""), media_type="application/x-ndjson",
                            headers={"Content-Disposition": attachment("review.jsonl")})  # fmt: skip
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for d in docs:
                doc = store.document(d["id"], caller)
                name = f"{d['id']:06d}"
                ann = [f"T{i}\t{lab} {a} {b}\t{doc.text[a:b].replace(chr(10), ' ')}"
                       for i, (a, b, lab) in enumerate(store.final_spans(d["id"], reviewer), 1)]  # fmt: skip
                zf.writestr(f"{name}.txt", doc.text)
                zf.writestr(f"{name}.ann", "\n".join(ann) + ("\n" if ann else ""))
        return Response(buf.getvalue(), media_type="application/zip",
                        headers={"Content-Disposition": attachment("review-brat.zip")})  # fmt: skip

    @router.get("/labels", summary="Labels a reviewer can choose, with their category")
    def labels() -> dict[str, Any]:
        from clinideid.labels import canonical

        tax = canonical()
        return {"labels": [{"label": lab, "category": tax.category_of(lab)} for lab in tax.labels]}

    @router.get("/agreement", summary="Inter-annotator agreement between reviewers of the caller's documents")
    def iaa(request: Request) -> dict[str, Any]:
        return review_agreement(_store(request), caller_of(request))

    return router


def review_agreement(store: ReviewStore, caller: Caller) -> dict[str, Any]:
    """Agreement between the reviewers of the documents ``caller`` may see that two or more corrected."""
    texts: dict[str, str] = {}
    annotations: dict[str, dict[str, list[tuple[int, int, str]]]] = {}
    for d in store.documents(caller):
        doc = store.document(d["id"], caller)
        texts[doc.display_id] = doc.text
        for reviewer in d["reviewers"]:
            annotations.setdefault(reviewer, {})[doc.display_id] = store.final_spans(d["id"], reviewer)
    return agreement(annotations, texts)


def mount_review(app: FastAPI, protected: list) -> None:
    """The review API (protected), the page and its static files (no data in them), a job's audit page."""
    app.state.review = ReviewStore(app.state.settings.review_db)
    app.include_router(review_api(), dependencies=protected)
    static = resources.files("clinideid.service").joinpath("static")
    app.mount("/review/static", StaticFiles(directory=str(static)), name="review-static")

    @app.get("/review", response_class=HTMLResponse, include_in_schema=False)
    def review_page() -> HTMLResponse:
        return HTMLResponse(_static("review.html"), headers={"Content-Security-Policy": REVIEW_CSP})

    page = APIRouter(dependencies=protected)

    @page.get("/review/jobs/{job_id}/audit", summary="A job's audit page, viewable from the review page")
    def job_audit(request: Request, job_id: str) -> FileResponse:
        from clinideid.service.api import _jobs_call

        path = _jobs_call(request.app.state.jobs.result_file, job_id, "audit", caller_of(request))
        return FileResponse(path, media_type="text/html", headers={"Content-Security-Policy": AUDIT_CSP})

    app.include_router(page)
