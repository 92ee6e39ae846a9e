"""The review store (SQLAlchemy, SQLite by default): documents, detected spans, reviewers' corrections.

A correction targets a span by its offsets: ``accept``, ``reject``, ``relabel`` (a new label) or ``add``
(a span the detectors missed). A reviewer's annotation of a document is the detected spans with that
reviewer's latest decision on each offset range applied, plus the spans they added. Every correction is
kept with its reviewer and time, so the history stays auditable.

Every document belongs to the tenant that added it (``owner``: a tenant name or a keyed hash of the token,
see ``clinideid.service.tenancy``); every read takes the caller and shows only what it may see. Display ids
are unique per owner. A database from before owners were recorded is migrated when opened: its documents
get no owner and are visible to admins only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    DateTime,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from clinideid.errors import ConfigError
from clinideid.service.tenancy import Caller

ACTIONS = ("accept", "reject", "relabel", "add")


class Base(DeclarativeBase):
    pass


class ReviewDocument(Base):
    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("owner", "display_id", name="uq_documents_owner_display_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    display_id: Mapped[str] = mapped_column(String(200))
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
        _add_owners(self.engine)
        Base.metadata.create_all(self.engine)
        self.session: sessionmaker[Session] = sessionmaker(self.engine, expire_on_commit=False)

    # -- documents -----------------------------------------------------------------------------------------
    def add_document(
        self, display_id: str, text: str, language: str, spans: Iterable[dict[str, Any]], owner: str | None
    ) -> int:
        """Store a document of ``owner`` with its detected spans (``ValueError`` when the owner has the id)."""
        with self.session.begin() as s:
            same = select(ReviewDocument.id).where(ReviewDocument.display_id == display_id, _owned_by(owner))
            if s.scalar(same) is not None:
                raise ValueError("a review document with this id exists")
            doc = ReviewDocument(
                owner=owner, display_id=display_id, language=language, text=text, created=datetime.now(UTC)
            )
            s.add(doc)
            s.flush()
            for sp in spans:
                s.add(DetectedSpan(document_id=doc.id, start=sp["start"], end=sp["end"], label=sp["label"],
                                   source=sp.get("source", "detector"), explanation=sp.get("explanation")))  # fmt: skip
            return doc.id

    def document(self, doc_id: int, caller: Caller) -> ReviewDocument | None:
        """The document, or ``None`` when it does not exist or ``caller`` may not see it."""
        with self.session() as s:
            doc = s.get(ReviewDocument, doc_id)
        return doc if doc is not None and caller.sees(doc.owner) else None

    def documents(self, caller: Caller) -> list[dict[str, Any]]:
        """The documents ``caller`` may see (an admin: every document), with their review status."""
        with self.session() as s:
            q = select(ReviewDocument).order_by(ReviewDocument.id)
            if not caller.admin:
                q = q.where(ReviewDocument.owner == caller.owner)
            docs = s.scalars(q).all()
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
        self, doc_id: int, reviewer: str, action: str, start: int, end: int, label: str | None, caller: Caller
    ) -> None:
        if action not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
        doc = self.document(doc_id, caller)
        if doc is None:
            raise LookupError("no such document")
        if not (0 <= start < end <= len(doc.text)):
            raise ValueError("the span lies outside the document")
        if action in ("relabel", "add") and not label:
            raise ValueError(f"{action} needs a label")
        with self.session.begin() as s:
            s.add(Correction(document_id=doc_id, reviewer=reviewer, action=action, start=start, end=end,
                             label=label, created=datetime.now(UTC)))  # fmt: skip

    def corrections(self, doc_id: int) -> list[dict[str, Any]]:
        """Every correction of a document (check the caller may see it first)."""
        with self.session() as s:
            q = select(Correction).where(Correction.document_id == doc_id).order_by(Correction.id)
            return [
                {"document": c.document_id, "reviewer": c.reviewer, "action": c.action, "start": c.start,
                 "end": c.end, "label": c.label, "time": c.created.isoformat()}
                for c in s.scalars(q)
            ]  # fmt: skip

    def spans_for(self, doc_id: int, reviewer: str | None) -> list[ReviewedSpan]:
        """Detected spans with ``reviewer``'s decisions, plus the spans they added (by start); check the caller
        may see the document first."""
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


def _owned_by(owner: str | None):
    return ReviewDocument.owner.is_(None) if owner is None else ReviewDocument.owner == owner


def _add_owners(engine: Engine) -> None:
    """Migrate a database from before owners: add ``owner`` (empty: admins only), unique ids per owner.

    SQLite cannot change a table's constraints in place: the table is rebuilt in one transaction, as SQLite
    documents (a new table, the rows copied, the old one dropped, the new one renamed; ids are kept).
    """
    schema = inspect(engine)
    if not schema.has_table("documents") or "owner" in {c["name"] for c in schema.get_columns("documents")}:
        return
    if engine.dialect.name != "sqlite":
        raise ConfigError(
            "the review database predates document owners: add a nullable column `owner` VARCHAR(100) to "
            "`documents` and replace the unique constraint on `display_id` by one on (`owner`, `display_id`)"
        )
    new = ReviewDocument.__table__.to_metadata(MetaData(), name="documents_new")
    names = "id, display_id, language, text, created"
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE IF EXISTS documents_new"))  # left by a migration that was cut short
        new.create(conn)
        conn.execute(text(f"INSERT INTO documents_new ({names}, owner) SELECT {names}, NULL FROM documents"))
        conn.execute(text("DROP TABLE documents"))
        conn.execute(text("ALTER TABLE documents_new RENAME TO documents"))
