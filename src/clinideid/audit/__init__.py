"""Residual-risk audit: a second, independent high-recall pass over de-identified output.

``residual.scan`` flags what may still be PHI in an output text (rare capitalised words, ID-, phone- and
date-shaped digit runs, ages, names from the packaged lists) outside the replacements the run inserted;
``summary.summarize`` turns per-document audits and reports into the ``audit`` section of ``summary.json``;
``html.write_audit_html`` renders ``audit.html``. Flags carry offsets, kinds and scores, never text.
"""

from clinideid.audit.residual import Flag, audit_document, scan
from clinideid.audit.summary import summarize

__all__ = ["Flag", "audit_document", "scan", "summarize"]
