"""Score each language's default pipeline on the challenge notes (en, de, it, ru), by label and by style.

Usage (from the repository root)::

    .venv/bin/python benchmarks/challenge.py                          # en de it ru, plain text report
    .venv/bin/python benchmarks/challenge.py --markdown               # tables as in docs/benchmarks.md
    .venv/bin/python benchmarks/challenge.py --languages de --json challenge.json
    .venv/bin/python benchmarks/challenge.py --languages es --corpus-dir /path/to/corpora  # es/fr: own corpus

The challenge notes (``../shared/corpora/challenge/<lang>.jsonl``; read its README.md and GUIDELINES.md) are
fictitious clinical documents in many writing styles with canonical gold labels. They are a development
and regression set: never train shipped models on them, and never write rules that name their values.

For each language, ``Deidentifier.for_language(lang, key)`` (a fixed test key; only detection is used:
``Deidentifier.detect``) runs over every note, and this script reports:

- token-level binary precision/recall/F1: a gold PHI token counts as found when any detected span touches
  it, whatever the labels (``evaluate(..., level="binary")``, mode ``token_binary``; the same figures as
  ``clinideid evaluate --pipeline <lang> --corpus <file> --format jsonl --level binary``);
- entity strict P/R/F1 at binary level (same offsets, labels ignored);
- per gold label: token recall (binary) and strict recall (same offsets, any label), plus strict recall
  with the same label (subcategory level);
- per style group (see ``style_groups``): token P/R over the notes of that group;
- a leak list: each gold span that no detected span overlaps at all, with its label, the note's style
  groups, the note id and a guessed reason. The text of spans and notes is PHI-like and is never printed
  unless ``--show-text`` is given (for local debugging only; do not keep such logs);
- throughput: characters per second of CPU time (and of wall time), one thread
  (``torch.set_num_threads(1)`` when torch is loaded), best of ``--repeat`` passes over the notes,
  pipeline loading and one warm-up call excluded.

The script always exits 0 when it could score (missed targets are not failures).

The figures on the other corpora stay where they are and are not recomputed here: MEDDOCAN dev
(``benchmarks/rules_meddocan.py``, ``benchmarks/deid_corpora.py --corpus meddocan``), EDS-Pseudo held-out
(``benchmarks/rules_eds_pseudo.py``, ``benchmarks/deid_corpora.py --corpus eds``) and Presidio synthetic
(``benchmarks/rules_presidio.py``, ``benchmarks/deid_corpora.py --corpus presidio``); see docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from clinideid.document import Document, Span
from clinideid.evaluate import evaluate
from clinideid.formats import ReadReport, read_corpus
from clinideid.pipeline import Deidentifier

DEFAULT_CORPUS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "challenge"
CHALLENGE_LANGUAGES = ("en", "de", "it", "ru")
#: languages with no challenge notes: accepted only with an explicit --corpus-dir holding <lang>.jsonl
EXTRA_LANGUAGES = ("es", "fr")
#: a fixed, random-looking key: the default pipelines need one for their keyed operators (unused here)
TEST_KEY = hashlib.sha256(b"benchmark").digest()
#: labels the challenge guidelines never annotate; such system spans still count (as the CLI counts them)
UNANNOTATED_LABELS = frozenset({"SEX", "FAMILY"})

# ---- style groups ------------------------------------------------------------------------------------------

STYLE_GROUPS = ("capitals", "lowercase", "ocr/missing-spaces", "letter", "form", "other")

#: group -> regular expressions searched (case-insensitively) in ``metadata.style``; the style strings are in
#: the note's language, so each group lists its cue words in English, German, Italian and Russian
_STYLE_CUES: dict[str, tuple[str, ...]] = {
    "capitals": (
        r"\bin capitals\b",
        r"\ball caps\b",
        r"gro(ß|ss)buchstaben",
        r"\bversalien",
        r"\bmaiuscol",
        r"заглавн",
        r"прописн",
    ),
    "lowercase": (r"\blower ?case\b", r"kleingeschrieben", r"kleinbuchstaben", r"\bminuscol", r"строчн"),
    "ocr/missing-spaces": (
        r"\bocr\b",
        r"\bscann",
        r"eingescannt",
        r"gescannt",
        r"scansionat",
        r"отсканирован",
        r"missing spaces",
        r"leerzeichen",
        r"spazi mancanti",
        r"parole attaccate",
        r"incollat",
        r"ricostruito da token",
        r"rebuilt from tokens",
        r"без пробел",
        r"пропущенные пробел",
        r"слипш",
    ),
    "letter": (
        r"\bletter",
        r"\w+brief\b|briefkopf",  # Arztbrief, Entlassbrief, Briefkopf (not English "brief")
        r"schreiben\b",  # Zuweisungsschreiben
        r"\banrede\b",
        r"\blettera\b",
        r"caro collega",
        r"письм",
    ),
    "form": (
        # forms and certificates, header blocks, labelled fields, structured layouts and tables
        r"\bforms?\b",
        r"\bheaders?\b",
        r"letterhead",
        r"\bstructur",
        r"\bfields\b",
        r"\btables?\b",
        r"\bcertificate",
        r"\bprescription",
        r"formular",
        r"kopf",  # Briefkopf, Kopfblock, Formularkopf, Faxkopfzeile
        r"\bfelder",
        r"block\b",  # Adressblock, Personalien-Block, Stempelblock, header block
        r"strukturiert",
        r"tabelle",
        r"bescheinigung",
        r"\brezept",
        r"intestazion",
        r"intestat",
        r"\bcampi\b",
        r"\bmodulo\b",
        r"strutturat",
        r"\btabell",
        r"certificat",
        r"\bricetta",
        r"(?<![\w-])форм[аеу]\b",  # not "чат-форме" (a chat window), not "формы фамилий" (word forms)
        r"шапк",
        r"колонтитул",
        r"структур",
        r"\bпол(?:я|ями|ях)\b",
        r"бланк",
        r"таблиц",
        r"справк",
        r"рецепт",
    ),
}
#: a cue right after one of these words (within two words) is negated: "without header", "ohne Kopfdaten"
_NEGATION = re.compile(r"(?<!\w)(?:without|no|ohne|keine?|senza|né|без|нет)\s+(?:\S+\s+)?$", re.I)


def style_groups(style: str) -> tuple[str, ...]:
    """The style groups of a note from its free-text ``metadata.style`` (several may apply).

    ``capitals``: entirely in capitals. ``lowercase``: entirely in lowercase. ``ocr/missing-spaces``:
    scanned/OCR noise, missing spaces or glued words, text rebuilt from tokens. ``letter``: letters
    (Brief, lettera; letterhead, salutation). ``form``: forms, certificates and prescriptions, header
    blocks, labelled fields, structured layouts, tables.
    ``other``: none of these. A cue preceded by a negation ("without header", "senza intestazione",
    "ohne Kopfdaten") does not count.
    """
    groups = []
    for group, cues in _STYLE_CUES.items():
        for cue in cues:
            # the negation is looked for before the word holding the cue ("ohne Personalienkopf")
            if any(
                not _NEGATION.search(re.sub(r"[\w-]*$", "", style[: m.start()]))
                for m in re.finditer(cue, style, re.I)
            ):
                groups.append(group)
                break
    return tuple(groups) or ("other",)


def case_check(doc: Document, groups: Sequence[str]) -> str | None:
    """A warning when a note grouped as capitals/lowercase does not look like it (share of letters)."""
    letters = [c for c in doc.text if c.isalpha()]
    if not letters:
        return None
    upper = sum(c.isupper() for c in letters) / len(letters)
    if "capitals" in groups and upper < 0.95:
        return f"{doc.id}: grouped as capitals but only {upper:.0%} of its letters are capitals"
    if "lowercase" in groups and upper > 0.05:
        return f"{doc.id}: grouped as lowercase but {upper:.0%} of its letters are capitals"
    return None


# ---- reasons for a missed span (never quoting PHI) ---------------------------------------------------------

#: labels of proper names, written with capitals in ordinary text
PROPER_NAME_LABELS = frozenset(
    {"PATIENT", "DOCTOR", "HOSPITAL", "ORGANIZATION", "STREET", "CITY", "STATE", "COUNTRY", "LOCATION_OTHER"}
)
#: labels whose text is words, where a digit glued to letters hints at OCR noise ("J0HN", "Mi1ano")
OCR_PRONE_LABELS = frozenset({"PATIENT", "DOCTOR", "CITY", "STATE", "COUNTRY", "PROFESSION"})
PERSON_LABELS = frozenset({"PATIENT", "DOCTOR", "USERNAME"})
NUMBER_LABELS = frozenset(
    {
        "AGE", "ZIP", "PHONE", "FAX", "SSN", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT", "LICENSE",
        "VEHICLE", "DEVICE", "BIOID", "IDNUM", "IPADDR",
    }
)  # fmt: skip
#: titles and role words written before names (compared case-insensitively, trailing dot ignored); only
#: words from this list are ever quoted in a reason
_TITLE_WORDS = """
    dr doctor mr mrs ms miss mx prof sir madam nurse rn np pa pt patient son daughter wife husband
    frau herr fr hr med prim oa oä ass ärztin arzt patientin pat dipl ing mag dres sr
    sig sig.ra sigra signor signora sig.na dott dott.ssa dottssa prof.ssa pz paziente inf
    г-н г-жа господин госпожа врач доктор проф пациент пациентка больной больная б-ной м/с медсестра
"""
TITLES = frozenset(_TITLE_WORDS.split())
_WORD_BEFORE = re.compile(r"(\S+)\s*$")
_FIELD_LABEL = re.compile(r"((?:[^\W\d_][^\s:|=#№]*[ \t]){0,2}[^\W\d_][^\s:|=#№]*)[ \t]*([:=#№])[ \t]*$")


def short_shape(text: str, limit: int = 24) -> str:
    """Letters as X/x, digits as d, other characters kept, runs collapsed: "12.03.2020" -> "d.d.d"."""
    out: list[str] = []
    for ch in text:
        c = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        c = " " if c.isspace() else c
        if not out or out[-1] != c:
            out.append(c)
    shape = "".join(out)
    return shape if len(shape) <= limit else shape[: limit - 1] + "…"


def _overlaps_any(start: int, end: int, spans: Iterable[Span]) -> bool:
    return any(s.start < end and start < s.end for s in spans)


def _field_label(text: str, start: int, gold: Sequence[Span]) -> str | None:
    """The field label right before ``start`` on its line ("MRN:") or ending the line above, or None.

    Returns "" when there is a label but it overlaps a gold span (it would quote PHI).
    """
    line_start = text.rfind("\n", 0, start) + 1
    prefix = text[line_start:start]
    base = line_start
    if not prefix.strip() and line_start > 0:  # "Patient:" alone on the line above
        prev_start = text.rfind("\n", 0, line_start - 1) + 1
        prefix = text[prev_start : line_start - 1].rstrip()
        base = prev_start
        if not prefix.endswith(":"):
            return None
        prefix += " "
    m = _FIELD_LABEL.search(prefix)
    if not m:
        return None
    a, b = base + m.start(1), base + m.end(2)
    if _overlaps_any(a, b, gold):
        return ""
    label = prefix[m.start(1) : m.end(2)]  # as written, spacing kept
    return label if len(label) <= 30 else ""


def guess_reasons(
    doc: Document, span: Span, groups: Sequence[str], system: Sequence[Span], gold: Sequence[Span]
) -> list[str]:
    """Short guesses why ``span`` was missed, from its shape and context; never the span's text."""
    text = doc.text
    s = text[span.start : span.end]
    letters = [c for c in s if c.isalpha()]
    reasons: list[str] = []
    wordy = span.label not in NUMBER_LABELS  # case says little about an ID such as "123-45-A"
    if wordy and len(letters) >= 2 and all(c.isupper() for c in letters):
        reasons.append("in capitals" + (" (capitals note)" if "capitals" in groups else ""))
    elif len(letters) >= 2 and all(c.islower() for c in letters) and span.label in PROPER_NAME_LABELS:
        reasons.append("in lowercase" + (" (lowercase note)" if "lowercase" in groups else ""))
    before = text[span.start - 1] if span.start else ""
    after = text[span.end] if span.end < len(text) else ""
    if before.isalnum() or after.isalnum():
        reasons.append("glued to adjacent text (missing space)")
    if span.label in OCR_PRONE_LABELS and re.search(r"[^\W\d_]\d|\d[^\W\d_]", s):
        reasons.append("digits inside a word (OCR?)")
    if "\n" in s:
        reasons.append("crosses a line break")
    m = _WORD_BEFORE.search(text[max(0, span.start - 40) : span.start])
    word = m.group(1).lower().rstrip(".:,") if m else ""
    if word in TITLES:  # only words of this fixed list are quoted
        reasons.append(f"after title/role word '{word}'")
    else:
        label = _field_label(text, span.start, gold)
        if label:
            reasons.append(f"after field label '{label}'")
        elif label == "":
            reasons.append("after a field label")
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    if "|" in line or "\t" in line:
        reasons.append("in a table row")
    if span.label in PERSON_LABELS and len(s.split()) == 1:
        reasons.append("one-word name")
    if span.label == "DATE":
        if letters:
            reasons.append("date with words")
        elif re.fullmatch(r"'?\d{2,4}", s):
            reasons.append("year alone")
        elif re.fullmatch(r"\d{1,2}[./-]\d{1,2}\.?", s):
            reasons.append("day and month, no year")
        else:
            reasons.append("numeric date")
    elif span.label in NUMBER_LABELS and not letters and len(reasons) == 0:
        reasons.append("bare number, no cue found")
    key = s.casefold()
    found = {text[x.start : x.end].casefold() for x in system}
    if key in found:
        reasons.append("same text detected elsewhere in this note")
    if any(0 <= span.start - x.end <= 2 or 0 <= x.start - span.end <= 2 for x in system):
        reasons.append("next to a detected span (boundary)")
    if not reasons:
        reasons.append("no cue found")
    return reasons


# ---- running and scoring -----------------------------------------------------------------------------------


def _no_sentences(_doc_id: str, _text: str) -> int:
    return 1  # the leak score is not used for sub-scores: skip sentence splitting


def _p_r_f(result: Any) -> dict[str, float | int]:
    total, micro = result.total, result.micro
    return {
        "precision": round(micro.precision, 4),
        "recall": round(micro.recall, 4),
        "f1": round(micro.f1, 4),
        "tp": total.tp,
        "fp": total.fp,
        "fn": total.fn,
    }


def set_one_thread() -> bool:
    """``torch.set_num_threads(1)`` when torch has been imported; whether it was."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    torch.set_num_threads(1)
    return True


def detect_all(
    deid: Deidentifier, gold: Sequence[Document], language: str, repeat: int = 3
) -> tuple[list[Document], dict]:
    """System documents (gold texts with detected spans) and timings (best of ``repeat`` passes)."""
    deid.detect(Document("warm-up", "Warm-up text 12/03/2020, Dr. Warm.", language))
    best_cpu = best_wall = float("inf")
    system: list[Document] = []
    dropped = 0
    for _ in range(max(1, repeat)):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        system, dropped = [], 0
        for doc in gold:
            spans, n = deid.detect(Document(doc.id, doc.text, doc.language or language, doc.metadata))
            dropped += n
            system.append(doc.with_spans(spans))
        best_cpu = min(best_cpu, time.process_time() - cpu0)
        best_wall = min(best_wall, time.perf_counter() - wall0)
    chars = sum(len(d.text) for d in gold)
    return system, {
        "characters": chars,
        "passes": max(1, repeat),
        "cpu_seconds": round(best_cpu, 3),
        "wall_seconds": round(best_wall, 3),
        "chars_per_cpu_second": round(chars / best_cpu) if best_cpu else None,
        "chars_per_wall_second": round(chars / best_wall) if best_wall else None,
        "spans_dropped_by_resolution": dropped,
    }


def score_language(language: str, corpus: Path, show_text: bool, repeat: int = 3) -> dict[str, Any]:
    read_report = ReadReport()
    gold = read_corpus(corpus, "jsonl", report=read_report)
    groups = {d.id: style_groups(str(d.metadata.get("style", ""))) for d in gold}
    t0 = time.perf_counter()
    deid = Deidentifier.for_language(language, TEST_KEY)
    load_seconds = time.perf_counter() - t0
    torch_one_thread = set_one_thread()
    system, timing = detect_all(deid, gold, language, repeat)
    timing["pipeline_load_seconds"] = round(load_seconds, 3)
    timing["torch_threads_set_to_1"] = torch_one_thread

    # whole corpus, binary level: token_binary (and token, identical at this level) and strict
    main = evaluate(gold, system, level="binary", modes=["token_binary", "strict"])
    sub = evaluate(gold, system, level="subcategory", modes=["strict"], sentence_counter=_no_sentences)
    sub_strict = sub.results["strict"].per_label()

    labels = Counter(s.label for d in gold for s in d.spans)
    per_label: dict[str, dict[str, Any]] = {}
    for label in sorted(labels, key=lambda lab: (-labels[lab], lab)):
        only = [d.with_spans(s for s in d.spans if s.label == label) for d in gold]
        rep = evaluate(
            only, system, level="binary", modes=["token_binary", "strict"], sentence_counter=_no_sentences
        )
        tok, strict = rep.results["token_binary"].total, rep.results["strict"].total
        same = sub_strict.get(label)
        per_label[label] = {
            "spans": labels[label],
            "gold_tokens": tok.tp + tok.fn,
            "token_recall": round(tok.recall, 4),
            "strict_recall": round(strict.recall, 4),
            "strict_recall_same_label": round(same.recall, 4) if same is not None else 0.0,
        }

    per_group: dict[str, dict[str, Any]] = {}
    sys_by_id = {d.id: d for d in system}
    for group in STYLE_GROUPS:
        members = [d for d in gold if group in groups[d.id]]
        if not members:
            continue
        rep = evaluate(
            members,
            [sys_by_id[d.id] for d in members],
            level="binary",
            modes=["token_binary"],
            sentence_counter=_no_sentences,
        )
        per_group[group] = {
            "notes": len(members),
            "gold_spans": sum(len(d.spans) for d in members),
            **_p_r_f(rep.results["token_binary"]),
        }

    leaks: list[dict[str, Any]] = []
    partial = 0
    for doc in gold:
        found = sys_by_id[doc.id].spans
        for span in doc.spans:
            chars = set(range(span.start, span.end))
            covered = {i for x in found for i in range(max(span.start, x.start), min(span.end, x.end))}
            if covered:
                uncovered = chars - covered
                partial += any(not doc.text[i].isspace() for i in uncovered)
                continue
            entry: dict[str, Any] = {
                "document": doc.id,
                "start": span.start,
                "end": span.end,
                "label": span.label,
                "style_groups": list(groups[doc.id]),
                "reasons": guess_reasons(doc, span, groups[doc.id], found, doc.spans),
                "shape": short_shape(doc.text[span.start : span.end]),
            }
            if show_text:
                entry["text"] = doc.text[span.start : span.end]
            leaks.append(entry)

    unannotated = Counter(s.label for d in system for s in d.spans if s.label in UNANNOTATED_LABELS)
    checks = [w for d in gold if (w := case_check(d, groups[d.id]))]
    return {
        "language": language,
        "corpus": str(corpus),
        "notes": len(gold),
        "characters": timing["characters"],
        "gold_spans": sum(len(d.spans) for d in gold),
        "system_spans": sum(len(d.spans) for d in system),
        "read_warnings": len(read_report.warnings),
        "token_binary": _p_r_f(main.results["token_binary"]),
        "entity_strict_binary": _p_r_f(main.results["strict"]),
        "leak_score": main.leaks.score.to_dict(),
        "per_label": per_label,
        "per_style_group": per_group,
        "missed_spans": len(leaks),
        "partially_found_spans": partial,
        "leaks": leaks,
        "system_spans_of_unannotated_labels": dict(sorted(unannotated.items())),
        "style_groups": {d.id: list(groups[d.id]) for d in gold},
        "other_notes": {d.id: str(d.metadata.get("style", "")) for d in gold if groups[d.id] == ("other",)},
        "style_case_warnings": checks,
        "throughput": timing,
    }


# ---- output ------------------------------------------------------------------------------------------------


def table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join([fmt.format(*header), *(fmt.format(*r) for r in rows)])


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def report(results: list[dict[str, Any]], markdown: bool, wall: float) -> str:
    langs = [r["language"] for r in results]
    by = {r["language"]: r for r in results}
    out: list[str] = []

    def section(title: str) -> None:
        out.append(("\n### " if markdown else "\n== ") + title + ("" if markdown else " ==") + "\n")

    section("Token binary and entity strict (binary level), default pipelines")
    rows = []
    for r in results:
        t, e, th = r["token_binary"], r["entity_strict_binary"], r["throughput"]
        rows.append(
            [
                r["language"],
                str(r["notes"]),
                f"{r['characters']:,}",
                str(r["gold_spans"]),
                _f(t["precision"]),
                _f(t["recall"]),
                _f(t["f1"]),
                _f(e["precision"]),
                _f(e["recall"]),
                _f(e["f1"]),
                str(r["missed_spans"]),
                f"{th['chars_per_cpu_second']:,}" if th["chars_per_cpu_second"] else "—",
            ]
        )
    header = ["lang", "notes", "chars", "gold spans", "token P", "token R", "token F1"]
    header += ["entity P", "entity R", "entity F1", "missed spans", "chars/s/core"]
    out.append(table(header, rows, markdown))

    section("Recall per gold label: token (binary) / strict (same offsets, any label)")
    labels: Counter[str] = Counter()
    for r in results:
        labels.update({lab: v["spans"] for lab, v in r["per_label"].items()})
    rows = []
    for lab in sorted(labels, key=lambda x: (-labels[x], x)):
        cells = [lab, "/".join(str(by[g]["per_label"].get(lab, {}).get("spans", 0)) for g in langs)]
        for key in ("token_recall", "strict_recall"):
            for g in langs:
                v = by[g]["per_label"].get(lab)
                cells.append(_f(v[key]) if v else "—")
        rows.append(cells)
    header = ["label", "spans " + "/".join(langs)]
    header += [f"token R {g}" for g in langs] + [f"strict R {g}" for g in langs]
    out.append(table(header, rows, markdown))

    section("Token binary P/R per style group")
    rows = []
    for group in STYLE_GROUPS:
        if not any(group in by[g]["per_style_group"] for g in langs):
            continue
        stats = {g: by[g]["per_style_group"].get(group) for g in langs}
        cells = [
            group,
            "/".join(str(v["notes"]) if v else "0" for v in stats.values()),
            "/".join(str(v["gold_spans"]) if v else "—" for v in stats.values()),
        ]
        for key, denominator in (("precision", "fp"), ("recall", "fn")):
            for v in stats.values():  # "—": no note, or no token on that side (P: none found, R: no PHI)
                cells.append(_f(v[key]) if v and v["tp"] + v[denominator] else "—")
        rows.append(cells)
    header = ["style group", "notes " + "/".join(langs), "gold spans " + "/".join(langs)]
    header += [f"token P {g}" for g in langs] + [f"token R {g}" for g in langs]
    out.append(table(header, rows, markdown))

    section("Missed spans (no overlap with any detected span): guessed reasons")
    reasons: dict[str, Counter[str]] = {g: Counter() for g in langs}
    for g in langs:
        for leak in by[g]["leaks"]:
            reasons[g].update({_reason_kind(x) for x in leak["reasons"]})
    every = Counter()
    for c in reasons.values():
        every.update(c)
    rows = [[k] + [str(reasons[g].get(k, 0)) for g in langs] for k, _ in every.most_common()]
    rows.append(
        ["**missed spans**" if markdown else "missed spans"] + [str(by[g]["missed_spans"]) for g in langs]
    )
    rows.append(["partially found spans"] + [str(by[g]["partially_found_spans"]) for g in langs])
    out.append(table(["reason (a span may have several)", *langs], rows, markdown))

    section("Throughput (one thread, best of the timed passes; pipeline load and warm-up excluded)")
    rows = []
    for r in results:
        th = r["throughput"]
        rows.append(
            [
                r["language"],
                f"{r['characters']:,}",
                f"{th['cpu_seconds']:.2f}",
                f"{th['wall_seconds']:.2f}",
                f"{th['chars_per_cpu_second']:,}" if th["chars_per_cpu_second"] else "—",
                f"{th['chars_per_wall_second']:,}" if th["chars_per_wall_second"] else "—",
                f"{th['pipeline_load_seconds']:.2f}",
            ]
        )
    header = ["lang", "chars", "CPU s", "wall s", "chars/s (CPU)", "chars/s (wall)", "load s"]
    out.append(table(header, rows, markdown))

    notes = []
    for r in results:
        if r["other_notes"]:
            notes.append(
                f"{r['language']}: {len(r['other_notes'])} note(s) in style group 'other': "
                + ", ".join(r["other_notes"])
            )
        if r["system_spans_of_unannotated_labels"]:
            notes.append(
                f"{r['language']}: system spans with labels the guidelines never annotate (scored as FP): "
                + ", ".join(f"{k}={v}" for k, v in r["system_spans_of_unannotated_labels"].items())
            )
        notes.extend(f"{r['language']}: style check: {w}" for w in r["style_case_warnings"])
        if r["read_warnings"]:
            notes.append(f"{r['language']}: {r['read_warnings']} corpus read warning(s) (span boundaries)")
    if notes:
        section("Notes")
        out.extend(("- " if markdown else "") + n for n in notes)
    out.append(f"\nwall time: {wall:.1f} s")
    return "\n".join(out)


def _reason_kind(reason: str) -> str:
    """A reason without its quoted word, for counting: "after field label 'MRN:'" -> "after field label"."""
    kind = reason.split(" '")[0]
    return "after a field label" if kind == "after field label" else kind


def leak_list(results: list[dict[str, Any]], markdown: bool) -> str:
    out = []
    for r in results:
        out.append(
            ("\n#### " if markdown else "\n-- ")
            + f"{r['language']}: {r['missed_spans']} missed spans (label, style groups, note, reasons)"
            + ("" if markdown else " --")
        )
        for leak in r["leaks"]:
            line = (
                f"{leak['label']:<14} [{', '.join(leak['style_groups'])}] {leak['document']} "
                f"{leak['start']}-{leak['end']}: {'; '.join(leak['reasons'])}; shape {leak['shape']}"
            )
            if "text" in leak:
                line += f"  TEXT={leak['text']!r}"
            out.append(("- " if markdown else "  ") + line)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--languages",
        nargs="+",
        default=list(CHALLENGE_LANGUAGES),
        choices=[*CHALLENGE_LANGUAGES, *EXTRA_LANGUAGES],
        help="languages to score (es/fr only with --corpus-dir)",
    )
    ap.add_argument(
        "--corpus-dir", type=Path, help=f"folder with <lang>.jsonl (default: {DEFAULT_CORPUS_DIR})"
    )
    ap.add_argument("--repeat", type=int, default=3, help="timed passes per language (best is reported)")
    ap.add_argument("--json", type=Path, help="write every number (and the leak list) to this JSON file")
    ap.add_argument("--markdown", action="store_true", help="print tables as in docs/benchmarks.md")
    ap.add_argument(
        "--no-leak-list", action="store_true", help="print only the reason counts of missed spans"
    )
    ap.add_argument(
        "--show-text",
        action="store_true",
        help="print the text of missed spans: PHI-like, local debugging only; never keep such logs",
    )
    args = ap.parse_args(argv)
    extra = [g for g in args.languages if g in EXTRA_LANGUAGES]
    if extra and args.corpus_dir is None:
        ap.error(f"no challenge notes for {', '.join(extra)}: pass --corpus-dir with <lang>.jsonl files")
    corpus_dir = args.corpus_dir or DEFAULT_CORPUS_DIR
    missing = [g for g in args.languages if not (corpus_dir / f"{g}.jsonl").is_file()]
    if missing:
        ap.error(f"no {', '.join(f'{g}.jsonl' for g in missing)} in {corpus_dir}; pass --corpus-dir")

    started = time.perf_counter()
    results = []
    for lang in dict.fromkeys(args.languages):
        print(f"scoring {lang} ...", file=sys.stderr, flush=True)
        results.append(score_language(lang, corpus_dir / f"{lang}.jsonl", args.show_text, args.repeat))
    wall = time.perf_counter() - started
    print(report(results, args.markdown, wall))
    if not args.no_leak_list:
        print(leak_list(results, args.markdown))
    if args.json:
        payload = {"wall_seconds": round(wall, 1), "show_text": args.show_text, "languages": results}
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False), "utf-8")
        print(f"\nJSON written to {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
