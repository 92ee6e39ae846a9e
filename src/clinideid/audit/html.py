"""``audit.html``: the audit section as a self-contained page, plots embedded as SVG (matplotlib).

Without matplotlib (extra ``service``) the plots become tables. No text of any document is in it: counts, labels, detector names, risk scores and display ids.
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _svg(figure: Any) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "clinideid-audit"}):  # the same page for the same numbers
        figure.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buf.getvalue()
    return svg[svg.find("<svg") :]


def _bar(title: str, counts: Mapping[str, int | float]) -> str:
    """A horizontal bar chart as inline SVG; a table when matplotlib (extra ``service``) is missing."""
    try:
        import matplotlib
    except ImportError:
        return f"<h3>{html.escape(title)}</h3>" + _table(list(counts.items()), ("", "count"))

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, max(1.5, 0.28 * len(counts) + 0.8)))
    names = list(counts)
    ax.barh(names, [counts[n] for n in names], color="#4c72b0")
    ax.invert_yaxis()
    ax.set_title(title)
    svg = _svg(fig)
    plt.close(fig)
    return svg


def _table(rows: list[tuple[Any, ...]], header: tuple[str, ...]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_audit_html(audit: Mapping[str, Any], title: str = "clinideid residual-risk audit") -> str:
    """The page for one run's ``audit`` section."""
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        "<p>A second, independent pass over the de-identified output flags what may still be PHI "
        "(surrogates inserted by the run are not scanned). Flags refer to offsets in report.jsonl, never text.</p>",
        _table(
            [
                ("documents audited", audit.get("documents_audited")),
                ("flags", audit.get("flags")),
                (
                    f"documents with risk >= {audit.get('risk_threshold')}",
                    audit.get("documents_over_threshold"),
                ),
                ("mean risk", audit.get("risk_mean")),
                ("spans replaced", audit.get("spans")),
                ("spans found by several detectors", audit.get("detector_agreement", {}).get("share")),
            ],
            ("measure", "value"),
        ),
        "<h2>Documents to review first</h2>",
        _table(
            [(d["id"], d["risk"], d["flags"]) for d in audit.get("review_first", [])],
            ("document", "risk", "flags"),
        ),
        "<h2>Plots</h2>",
        _bar("Per-document risk (documents per risk bin)", audit.get("risk_histogram") or {"none": 0}),
    ]
    for key, name in (
        ("spans_per_label", "Spans per label"),
        ("spans_per_detector", "Spans per detector"),
        ("flags_per_kind", "Residual flags per kind"),
    ):
        if audit.get(key):
            parts.append(_bar(name, audit[key]))
    pairs = audit.get("detector_agreement", {}).get("pairs", {})
    if pairs:
        parts.append(_bar("Detector overlap (spans found by both)", pairs))
    if audit.get("operator_fallbacks"):
        parts.append("<h2>Operator fallbacks</h2>")
        parts.append(_table(sorted(audit["operator_fallbacks"].items()), ("fallback", "spans")))
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}svg{max-width:100%;height:auto}"
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n"
    )


def write_audit_html(path: Path, audit: Mapping[str, Any], tmp_dir: Path | None = None) -> None:
    """Write ``audit.html`` atomically (a temporary file in ``tmp_dir``, by default beside it, then a
    rename)."""
    from clinideid.files import write_atomic

    write_atomic(path, render_audit_html(audit).encode("utf-8"), tmp_dir or path.parent)
