"""The residual-risk audit: flags by offset, surrogates excluded, no text in summary or page."""

import json
from pathlib import Path

from typer.testing import CliRunner

from clinideid.audit import audit_document, scan, summarize
from clinideid.audit.html import render_audit_html
from clinideid.cli import _register_commands, app

_register_commands()

TEXT = "Seen by Dr. Quentin Harrowgate on 03/04/2021, MRN 48291057, phone (217) 555-0143. BP stable."


def _covered(flags, start: int, end: int) -> bool:
    return any(f.start < end and start < f.end for f in flags)


def test_scan_flags_names_ids_dates_and_phones_but_not_common_words():
    flags = scan(TEXT, "en")
    for piece in ("Harrowgate", "03/04/2021", "48291057", "(217) 555-0143"):
        start = TEXT.index(piece)
        assert _covered(flags, start, start + len(piece)), piece
    stable = TEXT.index("stable")
    assert not _covered(flags, stable, stable + len("stable"))
    assert all(f.score > 0 and f.end > f.start for f in flags)


def test_protected_ranges_the_run_inserted_are_not_flagged():
    start = TEXT.index("Quentin Harrowgate")
    end = start + len("Quentin Harrowgate")
    flags = scan(TEXT, "en", [(start, end)])
    assert not _covered(flags, start, end)


def test_audit_document_ranks_flags_and_keeps_no_text():
    audit = audit_document(TEXT, "en", [])
    assert audit["risk"] > 0
    scores = [f["score"] for f in audit["flags"]]
    assert scores == sorted(scores, reverse=True)
    assert set(audit["flags"][0]) == {"start", "end", "kind", "score"}
    assert "Harrowgate" not in json.dumps(audit)
    assert audit_document("", "en", [])["risk"] == 0.0


def test_summary_aggregates_agreement_fallbacks_and_review_order():
    reports = [
        {
            "id": "a",
            "replacements": [
                {"label": "DATE", "source": "rules+crf", "operator": "date_shift", "note": None},
                {"label": "PATIENT", "source": "crf", "operator": "tag", "note": "surrogate failed"},
            ],
            "audit": audit_document(TEXT, "en", []),
        },
        {"id": "b", "replacements": [], "audit": audit_document("Nothing here.", "en", [])},
    ]
    audit = summarize(reports)
    assert audit["documents_audited"] == 2
    assert audit["spans_per_detector"] == {"crf": 2, "rules": 1}
    assert audit["detector_agreement"]["pairs"] == {"crf+rules": 1}
    assert audit["operator_fallbacks"] == {"tag: surrogate failed": 1}
    assert audit["review_first"][0]["id"] == "a"
    assert sum(audit["risk_histogram"].values()) == 2
    page = render_audit_html(audit)
    assert "<svg" in page and "Harrowgate" not in page


def test_deid_writes_audit_section_and_page_without_text(tmp_path: Path):
    src, out = tmp_path / "notes", tmp_path / "out"
    src.mkdir()
    (src / "n1.txt").write_text("Patient John Miller, MRN 4829105, seen 11/02/2023 by Dr. Thompson.\n")
    res = CliRunner().invoke(
        app, ["deid", str(src), "-o", str(out), "--ephemeral-key", "--no-progress"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["audit"]["documents_audited"] == 1
    assert summary["audit"]["spans"] == sum(summary["spans_per_label"].values())
    report = json.loads((out / "report.jsonl").read_text().splitlines()[0])
    assert "flags" in report["audit"] and "risk" in report["audit"]
    page = (out / "audit.html").read_text()
    assert "<svg" in page
    for secret in ("Miller", "4829105", "Thompson"):
        assert secret not in page and secret not in (out / "summary.json").read_text()


def test_evaluate_reports_true_leaks_the_audit_flagged(tmp_path: Path):
    text = "Seen by Dr. Quentin Harrowgate on 03/04/2021 for chest pain, MRN 48291057."
    spans = [
        {"start": text.index("Quentin"), "end": text.index(" on"), "label": "DOCTOR"},
        {"start": text.index("03/04"), "end": text.index(" for"), "label": "DATE"},
        {"start": text.index("4829"), "end": len(text) - 1, "label": "MEDICALRECORD"},
    ]
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "g1", "text": text, "language": "en", "spans": spans}) + "\n")
    system = tmp_path / "system.jsonl"  # the system found only the date: two true leaks
    system.write_text(json.dumps({"id": "g1", "text": text, "language": "en", "spans": spans[1:2]}) + "\n")
    out = tmp_path / "scores.json"
    res = CliRunner().invoke(
        app,
        [
            "evaluate",
            "--gold",
            str(gold),
            "--system",
            str(system),
            "--format",
            "jsonl",
            "--audit",
            "--json",
            str(out),
        ],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    found = json.loads(out.read_text())["residual_audit"]
    assert found["true_leaks"] == 2 and found["leaks_flagged"] == 2
    assert "2 of 2 true leaks flagged" in res.output and "Harrowgate" not in res.output


def test_scan_flags_postcodes_codes_cued_numbers_and_region_codes():
    text = (
        "Lives in Rockport, FL, moved from Winnipeg R2V 0L7. Car plate KRT 4471, bed C-12, и/б № 6619. "
        "Signed J. Smith, MD. BUN 132, QRS 108. Patient: Ann Achison MRN: 1."
    )
    flags = scan(text, "en")
    for piece in ("FL", "R2V 0L7", "KRT 4471", "C-12", "6619"):
        start = text.index(piece)
        assert _covered(flags, start, start + len(piece)), piece
    for piece in ("MD", "BUN 132", "QRS 108", "MRN"):
        start = text.index(piece)
        assert not any(
            f.kind in ("region_code", "id") for f in flags if f.start < start + len(piece) and start < f.end
        ), piece


def test_identifiers_and_addresses_are_read_whole_from_where_they_can_start():
    """Each identifier or address pattern reads a run once, from its first possible start (linear time):
    what it flags is the whole identifier or address, also inside a longer run of word characters."""
    cases = {
        "ref é-AB12345 x": [("AB12345", "id")],
        "ref __-x-AB12345/ y": [("x-AB12345", "id")],
        "code 12-ab-34567/ z": [("12-ab-34567", "id")],
        "lab-lab-lab-12ab": [("lab-lab-lab-12ab", "id")],
        "mail anna.lee+x@clinic.example.org.": [("anna.lee+x@clinic.example.org", "email_url")],
        "a@b.de+c@d.org": [("a@b.de", "email_url"), ("+c@d.org", "email_url")],
        "Müller-Lüdenscheid.de": [("Müller-Lüdenscheid.de", "email_url")],
        "at www.x.com/a?b=1": [("www.x.com/a?b=1", "email_url")],
        # an address's part before "@" is read back at most 64 characters (the longest one allowed)
        "x" * 70 + "@host.org": [("x" * 64 + "@host.org", "email_url")],
    }
    for text, expected in cases.items():
        flags = [(text[f.start : f.end], f.kind) for f in scan(text, "en") if f.kind in ("id", "email_url")]
        assert flags == expected, text
