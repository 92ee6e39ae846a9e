"""Language-independent evidence for a token, as feature strings a multilingual tagger can share.

A word model trained on several languages learns each language's words separately; what carries over is
evidence that means the same thing everywhere. Each group below names such evidence with the same feature
in every language, so that "the word before is a kinship word" learned from "daughter" also fires on
"Tochter", "figlia" or "дочь":

- ``word_classes``: the token (and its neighbours at -2, -1, +1) is a kinship word, a title, a staff role, a
  month, a weekday or a number word (``resources/<lang>/{kinship,titles,staff_roles,...}.txt``);
- ``word_frequency``: how common the word is in the document's language (wordfreq's Zipf scale, bucketed):
  a rare capitalised word is more likely a name than a frequent one;
- ``names_any``: the word is a first name or surname in the lists of *any* supported language (names travel:
  a Somali name in a German note);
- ``line_shape``: the token's line is a row of numbers (vital signs, drips: a negative cue for dates and
  phones) or a table row (columns separated by tabs or runs of spaces);
- ``repetition``: how often the word occurs in the document (names recur a few times, common words often);
- ``rule_context``: the word lies, somewhere else in the document, inside a span the rules took as a name or
  a place (a name found once with a cue is evidence for its other, cue-less mentions);
- ``measurement``: a number in a clinical measurement: after a vital-sign, ventilator or lab abbreviation
  ("HR 90-105", "PS 12/5", "АД 120/80") or before a unit ("14 mg", "6 ml/h"): a negative cue for dates,
  streets and phone numbers in number-dense notes.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence
from functools import cache

from clinideid.document import Span
from clinideid.errors import ConfigError
from clinideid.text import Token

GROUPS = (
    "word_classes",
    "word_frequency",
    "names_any",
    "line_shape",
    "repetition",
    "rule_context",
    "measurement",
)

#: abbreviations a clinical measurement follows, in the languages supported (case-folded): vital signs,
#: ventilator settings, common lab values
MEASURES = frozenset(
    [
        "hr",
        "bp",
        "rr",
        "sbp",
        "dbp",
        "map",
        "cvp",
        "spo2",
        "sao2",
        "sat",
        "sats",
        "fio2",
        "etco2",
        "ps",
        "psv",
        "peep",
        "cpap",
        "bipap",
        "ipap",
        "epap",
        "pip",
        "pplat",
        "vt",
        "tv",
        "mv",
        "ve",
        "ie",
        "gcs",
        "temp",
        "t°",
        "pulse",
        "pain",
        "nrs",
        "vas",
        "fc",
        "fr",
        "ta",
        "pa",
        "pas",
        "pad",
        "sv",
        "hf",
        "af",
        "bz",
        "rr/min",
        "ад",
        "чсс",
        "чдд",
        "сад",
        "дад",
        "т°",
        "сат",
        "hb",
        "hgb",
        "hct",
        "wbc",
        "plt",
        "na",
        "k",
        "cl",
        "cr",
        "crea",
        "inr",
        "ptt",
        "aptt",
        "ph",
        "po2",
        "pco2",
        "pao2",
        "paco2",
        "hco3",
        "be",
        "lac",
        "glu",
        "gluc",
        "bg",
        "bs",
        "crp",
        "pct",
        "egfr",
        "bun",
        "alt",
        "ast",
        "ggt",
        "ldh",
        "ck",
        "ckmb",
        "trop",
        "tni",
        "tnt",
        "bnp",
        "ntprobnp",
    ]
)
#: tokens of one number, range or ratio looked back over for its measurement ("90", "-", "105")
MAX_NUMBER_TOKENS = 6
#: units a clinical measurement ends with (case-folded)
UNITS = frozenset(
    [
        "mg",
        "mcg",
        "µg",
        "ug",
        "g",
        "kg",
        "ml",
        "l",
        "dl",
        "mmhg",
        "cmh2o",
        "bpm",
        "/min",
        "x/min",
        "min",
        "%",
        "mmol",
        "mmol/l",
        "mg/dl",
        "meq",
        "iu",
        "ui",
        "u",
        "units",
        "unités",
        "einheiten",
        "unità",
        "ie",
        "°c",
        "c°",
        "cm",
        "mm",
        "h",
        "/h",
        "ml/h",
        "mg/h",
        "mcg/kg/min",
        "µg/kg/min",
        "gamma",
        "мг",
        "мл",
        "мкг",
        "ед",
        "мм",
        "рт",
        "л/мин",
        "уд/мин",
        "°с",
    ]
)

#: word-class lists (``resources/<lang>/<list>.txt``) and the class name they give a token
WORD_CLASSES = {
    "kinship": "KIN",
    "titles": "TITLE",
    "staff_roles": "ROLE",
    "months": "MONTH",
    "weekdays": "WDAY",
    "number_words": "NUMW",
}
#: neighbours whose word class a token also sees
CLASS_OFFSETS = (-2, -1, 1)
_NAME_CATEGORIES = {"NAME": "NAME", "LOCATION": "LOC"}


def check_groups(groups: Sequence[str]) -> tuple[str, ...]:
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise ConfigError(f"unknown feature group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
    return tuple(groups)


@cache
def _word_classes(language: str) -> dict[str, tuple[str, ...]]:
    from clinideid.resources import available_lists, load_list

    have = set(available_lists(language))
    out: dict[str, list[str]] = {}
    for list_name, cls in WORD_CLASSES.items():
        if list_name not in have:
            continue
        for entry in load_list(language, list_name):
            out.setdefault(entry.casefold(), []).append(cls)
    return {w: tuple(c) for w, c in out.items()}


@cache
def _names_any() -> frozenset[str]:
    from clinideid.resources import available_languages, available_lists, load_list

    words: set[str] = set()
    for lang in available_languages():
        for name in ("first_names_female", "first_names_male", "surnames"):
            if name in available_lists(lang):
                words.update(e.casefold() for e in load_list(lang, name) if " " not in e)
    return frozenset(words)


def _zipf_bucket(zipf: float) -> str:
    if zipf <= 0.0:
        return "0"
    return str(min(int(zipf), 5)) if zipf >= 2.0 else "1"


def _repetition_bucket(count: int) -> str:
    return "1" if count == 1 else "2" if count <= 3 else "4" if count <= 9 else "10"


def _lines(text: str, tokens: Sequence[Token]) -> list[int]:
    """The line number of each token."""
    out: list[int] = []
    line = 0
    for i, tok in enumerate(tokens):
        if i and "\n" in text[tokens[i - 1].end : tok.start]:
            line += 1
        out.append(line)
    return out


def _line_shapes(text: str, tokens: Sequence[Token], lines: Sequence[int]) -> dict[int, list[str]]:
    """``numrow`` for lines of at least four words, half of them holding digits; ``tabrow`` for lines laid
    out in columns (a tab, or two runs of three spaces)."""
    members: dict[int, list[int]] = {}
    for i, line in enumerate(lines):
        members.setdefault(line, []).append(i)
    shapes: dict[int, list[str]] = {}
    for line, idx in members.items():
        words = [tokens[i].text for i in idx if tokens[i].text.strip(".,:;()/-")]
        marks = []
        if len(words) >= 4 and 2 * sum(any(c.isdigit() for c in w) for w in words) >= len(words):
            marks.append("numrow")
        span = text[tokens[idx[0]].start : tokens[idx[-1]].end]
        if "\t" in span or span.count("   ") >= 2:
            marks.append("tabrow")
        if marks:
            shapes[line] = marks
    return shapes


def _rule_context(
    tokens: Sequence[Token], words: Sequence[str], rule_spans: Sequence[Span]
) -> dict[str, set]:
    """Word -> the categories (NAME, LOC) of rule spans that hold it somewhere in the document."""
    from clinideid.labels import canonical

    tax = canonical()
    ends = [t.end for t in tokens]
    found: dict[str, set[str]] = {}
    for span in rule_spans:
        category = tax.category_of(span.label) if span.label in tax else None
        mark = _NAME_CATEGORIES.get(category or "")
        if mark is None:
            continue
        i = bisect.bisect_right(ends, span.start)
        while i < len(tokens) and tokens[i].start < span.end:
            if len(words[i]) > 1 and words[i][0].isalpha():
                found.setdefault(words[i], set()).add(mark)
            i += 1
    return found


def evidence_features(
    text: str,
    tokens: Sequence[Token],
    language: str,
    groups: Sequence[str],
    rule_spans: Sequence[Span] = (),
) -> list[list[str]]:
    """The feature strings of ``groups`` for every token of a document in ``language``."""
    n = len(tokens)
    out: list[list[str]] = [[] for _ in range(n)]
    if not n or not groups:
        return out
    words = [t.text.casefold().strip(".") for t in tokens]
    if "word_classes" in groups:
        classes = _word_classes(language)
        token_classes = [classes.get(w, ()) for w in words]
        for i in range(n):
            out[i].extend("lx=" + c for c in token_classes[i])
            for off in CLASS_OFFSETS:
                j = i + off
                if 0 <= j < n:
                    out[i].extend(f"lx{off:+d}={c}" for c in token_classes[j])
    alpha = [bool(w) and w[0].isalpha() for w in words]
    if "word_frequency" in groups:
        from clinideid.resources import word_zipf

        zipf = word_zipf(language)
        for i in range(n):
            if alpha[i]:
                out[i].append("zf=" + _zipf_bucket(zipf.get(words[i], 0.0)))
    if "names_any" in groups:
        names = _names_any()
        for i in range(n):
            if alpha[i] and len(words[i]) > 1 and words[i] in names:
                out[i].append("name_any")
    if "line_shape" in groups:
        lines = _lines(text, tokens)
        shapes = _line_shapes(text, tokens, lines)
        for i in range(n):
            out[i].extend(shapes.get(lines[i], ()))
    if "repetition" in groups:
        counts = Counter(words)
        for i in range(n):
            if alpha[i]:
                out[i].append("rep=" + _repetition_bucket(counts[words[i]]))
    if "measurement" in groups:
        for i in range(n):
            if not any(c.isdigit() for c in words[i]):
                continue
            j = i - 1  # the word before the number, over the rest of a range or ratio ("HR 90-105", "12/5")
            while j >= 0 and i - j <= MAX_NUMBER_TOKENS and not alpha[j]:
                j -= 1
            if j >= 0 and (words[j] in MEASURES or (j > 0 and words[j - 1] in MEASURES)):
                out[i].append("meas_before")
            if i + 1 < n and words[i + 1] in UNITS:
                out[i].append("unit_after")
    if "rule_context" in groups:
        context = _rule_context(tokens, words, rule_spans)
        for i in range(n):
            out[i].extend("rdoc=" + c for c in sorted(context.get(words[i], ())))
    return out
