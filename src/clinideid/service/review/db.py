"""The review store (SQLAlchemy, SQLite by default): documents, detected spans, reviewers' corrections.

A correction targets a span by its offsets: ``accept``, ``reject``, ``relabel`` (a new label) or ``add``
(a span the detectors missed). A reviewer's annotation of a document is the detected spans with that
reviewer's latest decision on each offset range applied, plus the spans they added. Every correction is
kept with its reviewer and time, so the history stays auditable.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text, create_engine, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

ACTIONS = ("accept", "reject", "relabel", "add")


class Base(DeclarativeBase):
    pass


class ReviewDocument(Base):
    __tablename__ = "documents"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    display_id: Mapped[str] = mapped_column(String(200), unique=True)
    language: Mapped[str] = mapped_column(String(8))
    text: Mapped[str] = mapped_column(Text)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DetectedSpan(Base):
    __tablename__ = "detected_spans"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"), index=True)
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    label: Mapped[str] = mapped_column(String(40))
    source: Mapped[str] = mapped_column(String(80))
    explanation: Mapped[str | None] = mapped_column(String(200), nullable=True)


class Correction(Base):
    __tablename__ = "corrections"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"), index=True)
    reviewer: Mapped[str] = mapped_column(String(80), index=True)
    action: Mapped[str] = mapped_column(String(10))
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    label: Mapped[str | None] = mapped_column(String(40), nullable=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))


@dataclass(frozen=True)
class ReviewedSpan:
    start: int
    end: int
    label: str
    source: str
    status: str  # pending, accepted, rejected, relabelled, added
    detected_label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "label": self.label, "source": self.source,
                "status": self.status, "detected_label": self.detected_label}  # fmt: skip


class ReviewStore:
    def __init__(self, path: Path | str) -> None:
        url = path if isinstance(path, str) and "://" in path else f"sqlite:///{path}"
        self.engine = create_engine(
            url, connect_args={"check_same_thread": False} if url.startswith("sqlite") else {}
        )
        Base.metadata.create_all(self.engine)
        self.session: sessionmaker[Session] = sessionmaker(self.engine, expire_on_commit=False)

    # -- documents -----------------------------------------------------------------------------------------
    def add_document(self, display_id: str, text: str, language: str, spans: Iterable[dict[str, Any]]) -> int:
        """Store a document with its detected spans (``ValueError`` when the id exists)."""
        with self.session.begin() as s:
            if s.scalar(select(ReviewDocument.id).where(ReviewDocument.display_id == display_id)) is not None:
                raise ValueError(f"a review document with id {display_id!r} exists")
            doc = ReviewDocument(
                display_id=display_id, language=language, text=text, created=datetime.now(UTC)
            )
            s.add(doc)
            s.flush()
            for sp in spans:
                s.add(DetectedSpan(document_id=doc.id, start=sp["start"], end=sp["end"], label=sp["label"],
                                   source=sp.get("source", "detector"), explanation=sp.get("explanation")))  # fmt: skip
            return doc.id

    def document(self, doc_id: int) -> ReviewDocument | None:
        with self.session() as s:
            return s.get(ReviewDocument, doc_id)

    def documents(self) -> list[dict[str, Any]]:
        with self.session() as s:
            docs = s.scalars(select(ReviewDocument).order_by(ReviewDocument.id)).all()
            n_spans = dict(
                s.execute(
                    select(DetectedSpan.document_id, func.count()).group_by(DetectedSpan.document_id)
                ).all()
            )
            reviewers: dict[int, set[str]] = {}
            for doc_id, reviewer in s.execute(select(Correction.document_id, Correction.reviewer).distinct()):
                reviewers.setdefault(doc_id, set()).add(reviewer)
        return [
            {"id": d.id, "display_id": d.display_id, "language": d.language, "chars": len(d.text),
             "detected": n_spans.get(d.id, 0), "reviewers": sorted(reviewers.get(d.id, ())),
             "status": "reviewed" if reviewers.get(d.id) else "new"}
            for d in docs
        ]  # fmt: skip

    # -- corrections ---------------------------------------------------------------------------------------
    def correct(
        self, doc_id: int, reviewer: str, action: str, start: int, end: int, label: str | None
    ) -> None:
        if action not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
        doc = self.document(doc_id)
        if doc is None:
            raise LookupError("no such document")
        if not (0 <= start < end <= len(doc.text)):
            raise ValueError("the span lies outside the document")
        if action in ("relabel", "add") and not label:
            raise ValueError(f"{action} needs a label")
        with self.session.begin() as s:
            s.add(Correction(document_id=doc_id, reviewer=reviewer, action=action, start=start, end=end,
                             label=label, created=datetime.now(UTC)))  # fmt: skip

    def corrections(self, doc_id: int | None = None) -> list[dict[str, Any]]:
        with self.session() as s:
            q = select(Correction).order_by(Correction.id)
            if doc_id is not None:
                q = q.where(Correction.document_id == doc_id)
            return [
                {"document": c.document_id, "reviewer": c.reviewer, "action": c.action, "start": c.start,
                 "end": c.end, "label": c.label, "time": c.created.isoformat()}
                for c in s.scalars(q)
            ]  # fmt: skip

    def reviewers(self) -> list[str]:
        with self.session() as s:
            return sorted(s.scalars(select(Correction.reviewer).distinct()))

    def spans_for(self, doc_id: int, reviewer: str | None) -> list[ReviewedSpan]:
        """Detected spans with ``reviewer``'s decisions, plus the spans they added (by start)."""
        with self.session() as s:
            detected = s.scalars(select(DetectedSpan).where(DetectedSpan.document_id == doc_id)).all()
            corrections = (
                s.scalars(
                    select(Correction)
                    .where(Correction.document_id == doc_id, Correction.reviewer == reviewer)
                    .order_by(Correction.id)
                ).all()
                if reviewer
                else []
            )
        last: dict[tuple[int, int], Correction] = {}
        for c in corrections:
            last[(c.start, c.end)] = c
        out: list[ReviewedSpan] = []
        seen: set[tuple[int, int]] = set()
        for d in detected:
            key = (d.start, d.end)
            seen.add(key)
            c = last.get(key)
            if c is None:
                out.append(ReviewedSpan(d.start, d.end, d.label, d.source, "pending", d.label))
            elif c.action == "reject":
                out.append(ReviewedSpan(d.start, d.end, d.label, d.source, "rejected", d.label))
            elif c.action in ("relabel", "add") and c.label and c.label != d.label:
                out.append(ReviewedSpan(d.start, d.end, c.label, d.source, "relabelled", d.label))
            else:
                out.append(ReviewedSpan(d.start, d.end, d.label, d.source, "accepted", d.label))
        for key, c in last.items():
            if key in seen or c.action == "reject":
                continue
            if c.label:
                out.append(ReviewedSpan(c.start, c.end, c.label, f"reviewer:{reviewer}", "added"))
        return sorted(out, key=lambda sp: (sp.start, sp.end))

    def final_spans(self, doc_id: int, reviewer: str | None) -> list[tuple[int, int, str]]:
        """What ``reviewer`` says is PHI in the document (rejected spans left out)."""
        return [
            (sp.start, sp.end, sp.label) for sp in self.spans_for(doc_id, reviewer) if sp.status != "rejected"
        ]
