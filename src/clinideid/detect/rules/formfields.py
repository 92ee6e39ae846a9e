"""The ``fields`` rule kind: the form fields of a field table (``fieldtable``), wherever they stand on a line.

How a line is read:

1. **Labels.** A table label followed by ``:`` or ``=`` (and maybe a number mark: "MRN #:", "Policy No.:")
   is a label at the start of a line, after a separator (``|``, tab, ``;``, ``,``, a dash, two spaces,
   an earlier finding), when written with a capital, or anywhere after another field of the same line.
   A *bare* label ("DOB", "born", "admitted", "Geb.") needs no colon, but only counts when a value of
   its kind's shape follows ("DOB 11 June 1949", "born 3/4/1950"). In a table, a cell that holds a
   label has its value in the next cell ("DOB | 3/4/1950"); a header row (above a "|---|" rule, or with
   two labels side by side) makes the cells below each label values of its kind, read more strictly.
2. **Values.** A label's value starts after its separator and ends at the next label of the line (of any
   kind, PHI or not), at the line end, or at a ``|``, tab, ``;``, two spaces or a spaced dash; a comma
   ends it too unless the kind allows one (an address "48, route d'Arlon"; a name "Smith, John").
3. **Shapes.** The value is then read by its shape, which also checks it: a date must parse as a date
   (``transform.dates.parse_date``), a phone number holds 6+ digits, an identifier 3+ letters or digits
   with a digit, a name is made of name words (titles, kinship and role words are left out; in a note in
   lower case or capitals, words must be known names or rare words), an address is split into street,
   postcode, town, region and country. "unknown", "n/a", "keine" ... are never values.

Labels are proposed as spans without a label: the engine masks them as known non-PHI, so a later pass
cannot take "State" or "Ward" for a name. Each value span carries its group (and a date's role).
Everything is linear in the text: labels are looked up from each ``:`` over a bounded window and found
by one regex for bare labels, each value reads a bounded stretch, and lines are found by bisection.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import pairwise
from typing import Any

import regex

from clinideid.detect.rules.fieldtable import FieldTable, Group, label_key
from clinideid.detect.rules.matchers import Matcher

#: shapes that check a value well enough for a label without a colon
STRICT_SHAPES = frozenset({"date", "phone", "id", "number", "age", "zip", "email", "token"})
#: the longest stretch before a ':' read for a label, and the longest value region
MAX_LABEL_CHARS = 48
MAX_VALUE_CHARS = 200
#: a word at least this frequent (Zipf) is a word of the language, not a name, in a lower-case line
COMMON_ZIPF = 3.5
#: a word of the language at least this frequent right before a label makes another label ("Drug Name:")
COMPOUND_LABEL_ZIPF = 3.0
#: a function word ("for", "with", "и") ends a profession or a place in lower case
FUNCTION_ZIPF = 5.0

_COLON = regex.compile(r"[:=]")
_WORD_START = regex.compile(r"(?<![\p{L}\p{N}\-/'’])\p{L}[\p{L}\p{M}.'’]*")
_MASKED = regex.compile("[\ue000-\ue0ff]")
_NEWLINE = regex.compile(r"\n")
_CELL_SEP = regex.compile(r"[|\t]")
_SUB_LABEL = regex.compile(r"(?<=\p{L})[ \t]*:(?=[ \t])")
_PART_POSTCODE = regex.compile(r"(?<![\p{L}\p{N}])(?:\d{5}|\d{2}[ ]\d{3})(?![\p{L}\p{N}])")
_CONTACT_SHAPES = frozenset({"phone", "email", "token", "id", "date"})
_CONTACT_AFTER = regex.compile(r"[.]?[ \t]*[:(+\d]")
_GARBLED_DATE = regex.compile(r"\d{1,6}[./\-](?:\d{1,2}[./\-])?(?:19|20)\d\d(?![\p{L}\p{N}])")
#: kinds whose labels also head columns of other things ("Probe", "Auftrag", "Sitzung"): no column tables
_NO_COLUMN = frozenset({"IDNUM"})
_CLOCK = regex.compile(r"\d{1,2}[:.h]\d{2}(?::\d{2})?(?:[ ]?[-–][ ]?\d{1,2}[:.h]\d{2})?")
_MEASURE = regex.compile(
    r"\d{1,4}[.,]\d{1,3}(?:[ ]?[\-–][ ]?\d{1,4}(?:[.,]\d{1,3})?)?|\d{1,4}[ ]?[\-–][ ]?\d{1,4}[.,]\d{1,3}"
)
_WORD_SHAPES = frozenset({"name", "place", "address", "words"})
_TABLE_RULE = regex.compile(r"[ \t]*\|?[ \t]*:?-{3,}[ \t|:+\-]*")
# where a value ends whatever its kind
_HARD_END = regex.compile(r"[|\t;•·]|(?<!,)[ ]{2,}|[ ]*-{2,}|[ ]+[–—][ ]+")
_SENTENCE_STOP = regex.compile(
    r"(?:(?<=\d)|(?<=(?<!\p{L})\p{Ll}{4,40})|(?<=\p{L}{4}))\.(?=[ \t]{2}|[ \t]*$)"
    r"|(?<=\d)\.(?=[ \t]+\p{L}\p{L})|(?<=(?<!\p{L})\p{Ll}{4,40})\.(?=[ \t])"
)
_LAST_WORD = regex.compile(r"\p{L}+$")
_SENTENCE_END = regex.compile(r"\p{Ll}{3}[.!?][ ]+\p{L}")
_COMMA_END = regex.compile(r"[,(\[]")
_START_OK = regex.compile(r"[ \t\-*•·>]*(?:\d{1,2}[.)][ \t]*)?")
_SEPARATOR_BEFORE = frozenset("|;,\t–—(/[•·")
_BARE_TAIL = regex.compile(r"[ \t]*(?:(?:#|№|[Nn][oOrR]\.|[Nn][º°]\.?)[ \t]*)?")
_COLON_AFTER = regex.compile(r"[ \t]*[:=]")
_BARE_GAP = regex.compile(r"[ \t]*(?:[\-–][ \t]+)?")
_WORD = regex.compile(r"\S+")
#: words of a name value, digits glued to a name word split off ("Quackenbush000", "000Quackenbush")
_NAME_TOKEN = regex.compile(
    r"(?<![\p{L}\p{M}\p{N}])\d+(?=\p{L}{3})"
    r"|\p{L}[\p{L}\p{M}'’\-]{2,}(?=\d+(?![\p{L}\p{N}]))"
    r"|[^\s,;:()\[\]/|\"“”«»]+|[,;:()\[\]/|\"“”«»]"
)
_NAME_WORD = regex.compile(r"\p{L}[\p{L}\p{M}'’\-]*\.?|\p{Lu}\.(?:\p{Lu}\.)*")
_ROMAN = regex.compile(r"[IVX]{1,4}")
_GLUED_WORD = regex.compile(r"(?<=\d)\.\p{L}{2,}$")
_PAREN_ID = regex.compile(r"[ \t]*\((?=[\p{L}\p{N}\-/]*\d)([\p{L}\p{N}][\p{L}\p{N}\-/]{3,30})\)")
#: a number right after a name, behind a number mark: that person's identifier
_NUMBER_AFTER_NAME = regex.compile(
    r"[ \t]*,?[ \t]*(?:N[°ºo]\.?|n[°º]|№|#)[ \t]*(\d(?:[ ]?\d){5,20})(?![\p{L}\p{N}])"
)
_PAREN_NAME = regex.compile(r"[ \t]*\(([\p{L}][\p{L}\p{M}'’\-., ]{1,50})\)")
_NAME_SUFFIX = regex.compile(r"(?:Jr|Sr|Jun|Sen|II|III|IV)\.?")
_QUOTES = frozenset('"“”«»„')
#: a nickname after a name: ' (goes by "Kay")', ' "Sonny"', " («Саша»)"
_NICKNAME = regex.compile(r"[ \t]*\(?[\p{L} ]{0,20}?[\"“«„]([\p{L}][\p{L}\-' ]{1,30})[\"”»“]")
#: an age right after a name in a list of people ("Jane Roe, 72, 0171 ...")
_AGE_AFTER = regex.compile(
    r"(?:,[ ]?|[ ]?\()(\d{1,3})(?:[ ]?(?:y|yo|yrs?|J\.?|a|anni|ans|años|лет))?(?=[ ]*(?:,|\)|$|[ ]{2}))"
    r"|[ ](\d{1,3})(?=(?:[ ]?(?:y/o|yo|yrs?|y|J\.?|a|anni|ans|años|лет|г\.?))?[ ]?[MFmfWwЖжМм](?![\p{L}])"
    r"|[ ]?(?:y/o|yo|yrs?|J\.|anni|ans|años|лет)(?![\p{L}]))"
)
_LETTER = regex.compile(r"\p{L}")
_DIGIT = regex.compile(r"\d")
_PHONE = regex.compile(
    r"(?:\+|00)?[ ]?(?:\(\d{1,5}\)[ .\-/]?)?\d(?:\d|[ .\-/](?=\d)|[ ]?\((?=\d)|\)[ ]?(?=\d)){4,30}"
    r"(?:[ ]?(?:x|ext\.?|poste|Durchwahl|DW|доб\.?)[ ]?\d{1,5})?(?!\d)"
)
_ID_TOKEN = regex.compile(r"[\p{L}\p{N}][\p{L}\p{N}\-/._:]*")
_NUMBER_MARK = regex.compile(r"(?:#|№|[Nn][oOrR]\.?(?=[ \t]*\d)|[Nn][º°]\.?)[ \t]*")
_POSTCODE = (
    r"(?:[A-Z]{1,2}-)?\d{4,6}(?:-\d{4})?|\d{3}[ ]\d{2}|\d{2}[ ]\d{3}|\d{2}-\d{3}"
    r"|[A-Z]{1,2}\d[A-Z\d]?[ ]?\d[A-Z]{2}|[A-Z]\d[A-Z][ ]?\d[A-Z]\d|[A-Z]\d[\dW][ ]?[A-Z\d]{4}"
)
_ZIP = regex.compile(rf"(?:{_POSTCODE})(?![\p{{L}}\p{{N}}])")
#: a postcode after a postcode label: any short code with digits ("7591538", "C1009AAP", "E-28935")
_ZIP_FIELD = regex.compile(
    r"(?:[A-Z]{1,3}[\- ]?)?\d[\d \-]{1,8}\d[A-Z]{0,3}(?![\p{L}\p{N}])|[A-Z]\d{4}[A-Z]{0,3}(?![\p{L}\p{N}])"
)
_ZIP_FIRST = regex.compile(rf"(?P<zip>{_POSTCODE})[ ]+(?P<rest>\p{{L}}[^\d]{{0,60}})")
_ZIP_LAST = regex.compile(rf"(?P<rest>\p{{L}}[^\d]{{0,60}}?)[ ]+(?P<zip>{_POSTCODE})")
_REGION_CODE = regex.compile(r"\p{Lu}{2,3}")
#: the parts of an address or a place: between commas, parentheses and spaced dashes
_ADDRESS_PART = regex.compile(r"(?:[^,()\[\]\-–—]|(?<![ ])[\-–—]|[\-–—](?![ ]))+")
_NAME_GAP_WORD = regex.compile(r"\p{L}[\p{L}\p{M}'’\-]+")
#: a postcode inside a street part, after the street words ("... Belleville 75020 Paris", "... 47 626 Saint-Denis")
_INNER_POSTCODE = regex.compile(r"(?<=\p{L}[ ,]{1,3})(?:\d{5}|\d{2}[ ]\d{3})(?![\p{N}])")
_DATE_TOKEN = regex.compile(r"\d{1,4}[./\-]\d{1,2}[./\-]\d{2,4}")
_HOUSE_PART = regex.compile(
    r"\d{0,4}[ ]?[ºª°]?[ ]?[A-Za-z]{0,2}\.?|\d{1,4}[ºª]?(?:[ \-/]\d{1,4}[ºª]?[A-Za-z]?)?"
)
_SLASH_STREET = regex.compile(r"\p{L}{1,2}/\.?[ ]?\p{L}")
#: a capitalised word ending a sentence before another ("Villa. Servicio de Urología")
_CAPITAL_SENTENCE_END = regex.compile(r"(?<![\p{L}])(\p{Lu}\p{Ll}{3,40})\.(?=[ \t]+\p{Lu}\p{Ll})")
#: what may stand between a name and the address written after it ("Dr. Ann Roe. Calle Mayor 3, Madrid")
_ADDRESS_AFTER_NAME = regex.compile(r"[ \t]*[.,]?[ \t]+")
_AFTER_FUNCTION_WORD = regex.compile(r"[ \t,]*\p{L}+[ \t]+(?=[\p{Lu}\d])")
_HOUSE_NUMBER_AFTER = regex.compile(r"\p{L}{3,}\.?[ ]\d{1,3}[a-zA-Z]?$")
_HOUSE_NUMBER_BEFORE = regex.compile(r"\d{1,3}[a-zA-Z]?,?[ ]\p{L}{3,}")
_HOUSE_NUMBER = regex.compile(r"\d{1,5}[A-Za-z]?(?:[\-/]\d{1,4}[A-Za-z]?)?")
_AGE = regex.compile(
    r"\d{1,3}(?![\d:]|[/.,]\d)(?:[.,]5)?(?:(?:[Yy](?:rs?|\.?o\.?)?|[Jj]\.?|[Aa](?:\.|nni)?|[Mm]os?|лет|г\.?)(?![\p{L}]))?"
)
#: letters a scan reads for digits, in a value that must be a date or a number
_OCR_DIGITS = str.maketrans("OoDQlIi|SZB", "00001111528")
_OCR_TOKEN = regex.compile(r"(?<![\p{L}])(?=[\dOoDQlIi|SZB]*\d)[\dOoDQlIi|SZB]+(?![\p{L}])")
_OCR_DATE = regex.compile(r"[\dOoDQlIi|SZB]{1,4}[./\-][\dOoDQlIi|SZB]{1,2}[./\-][\dOoDQlIi|SZB]{2,4}")
_OCR_PHONE = regex.compile(r"[+(]?[\dOoQlIiSZB][\dOoQlIiSZB ()./\-]{5,24}(?![\p{L}])")
_DECIMAL = regex.compile(r"\d{1,3}[.,]\d{1,3}")
#: words of departments and specialties ("Dermatology", "Kardiologie", "кардиолог"): never a name word
_SPECIALTY = regex.compile(
    r"(?i).{2,}(?:olog(?:y|ist|ie|ia|ía|ue|o|a|ische|isch|en|e)|iatr(?:y|ics|ie|ia|ía|ist)|ология|олог|иатр(?:ия)?)"
)
_EMAIL = regex.compile(r"[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)+")
_TOKEN_TRIM = ".,;:)]}>\"'"


@dataclass(slots=True)
class _Hit:
    start: int  # the label
    end: int
    value: int  # where its value starts
    group: Group
    colon: bool
    line: int = 0
    ok: bool = True
    column: bool = False  # a cell under a header label: no label of its own


def _first_word_key(form: str) -> str:
    """The key under which ``_bare_matches`` finds a bare label: its first word, case-folded, no dots."""
    word = _WORD_START.search(form)
    return word.group().casefold().replace(".", "") if word else form.casefold()


def _form_regex(form: str, case_sensitive: bool) -> str:
    """A label as written in the table, as a regex: dots optional, spaces flexible, any case."""
    out: list[str] = []
    for part in regex.split(r"(\s+|\.)", form.strip()):
        if not part:
            continue
        if part.isspace():
            out.append(r"[ \t]*" if out and out[-1].startswith(r"(?:\.") else r"[ \t]+")
        elif part == ".":
            out.append(r"(?:\.[ \t]?)?")
        elif case_sensitive:
            out.append(regex.escape(part))
        else:
            first, rest = part[0], part[1:]
            lo, up = first.lower(), first.upper()
            head = (
                f"[{regex.escape(lo)}{regex.escape(up)}]"
                if lo != up and len(lo) == len(up) == 1
                else regex.escape(first)
            )
            out.append(head + (f"(?i:{regex.escape(rest)})" if rest else ""))
    return "".join(out)


class FormFieldMatcher(Matcher):
    """Finds the fields of one ``FieldTable``; see the module docstring."""

    kind = "fields"

    def __init__(
        self,
        table: FieldTable,
        *,
        language: str | None,
        connectors: frozenset[str] = frozenset(),
        allowlist: Any = None,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.table = table
        #: the pack's allow-list (eponyms, drugs, clinical words): never a name word unless a known name
        self.allowlist = allowlist
        self.language = (language or table.language or "en").split("-")[0].lower()
        self.connectors = frozenset(c.casefold() for c in connectors) | table.connectors
        self._label_words = table.label_words
        self._exact_words = frozenset(e.rsplit(" ", 1)[-1] for e in table.exact)
        forms = [(f, False) for f in table.bare_forms] + [(e, True) for e in table.exact]
        forms.sort(key=lambda fc: -len(fc[0]))
        self._bare = (
            regex.compile(
                r"(?<![\p{L}\p{N}])(?<![\p{L}\p{N}][\-/'’])(?:"
                + "|".join(_form_regex(f, c) for f, c in forms)
                + r")(?![\p{L}])"
            )
            if forms
            else None
        )
        self._bare_firsts = frozenset(_first_word_key(f) for f, c in forms if not c)
        self._exact_firsts = frozenset(f.split()[0] for f, c in forms if c)
        self._word_keys: dict[str, str] = {}
        self._address_words = table.street_words | table.house_words | table.city_words | table.region_words
        #: abbreviations of the table whose dot ends no sentence ("обл.", "корп.", "Prov.")
        self._abbreviations = (
            table.street_words | table.house_words | table.city_words | table.region_words | table.titles
        )
        self._then_words = {
            words: regex.compile(
                r"[ \t]*,?[ \t]*(?:" + "|".join(_form_regex(w, False) for w in words) + r")(?![\p{L}])[ \t]*"
            )
            for grp in table.groups
            for words, _ in grp.then
        }
        aliases = sorted(table.alias_words, key=len, reverse=True)
        self._alias = (
            regex.compile(
                r"[ \t]*,?[ \t]*\(?[ \t]*(?:"
                + "|".join(_form_regex(a, False) for a in aliases)
                + r")[ \t]*[:.]?[ \t]*"
            )
            if aliases
            else None
        )
        #: single-word labels that end a name ("Thomas Whitaker Sex M", "Ann Lee DOB 3/4/1950")
        self._name_stops = frozenset(
            k
            for k, g in table.labels.items()
            if " " not in k and (g.kind is None or g.shape in ("date", "id"))
        ) | frozenset(label_key(e) for e in table.exact)
        self.propagate_labels = frozenset(g.kind for g in table.groups if g.propagate and g.kind)

    # -- word knowledge of the language (loaded on first use) -------------------------------------------------
    @cached_property
    def _zipf(self) -> Mapping[str, float]:
        from clinideid.resources import available_languages, word_zipf

        return word_zipf(self.language) if self.language in available_languages() else {}

    @cached_property
    def _names(self) -> Any:
        from clinideid.resources import available_languages, available_lists, load_gazetteer

        if self.language not in available_languages():
            return None
        wanted = [
            n
            for n in ("first_names_female", "first_names_male", "surnames", "patronymics")
            if n in available_lists(self.language)
        ]
        return load_gazetteer(self.language, wanted) if wanted else None

    @cached_property
    def _first_names(self) -> Any:
        from clinideid.resources import available_languages, available_lists, load_gazetteer

        if self.language not in available_languages():
            return None
        wanted = [
            n for n in ("first_names_female", "first_names_male") if n in available_lists(self.language)
        ]
        return load_gazetteer(self.language, wanted) if wanted else None

    @cached_property
    def _places(self) -> Any:
        from clinideid.resources import available_languages, available_lists, load_gazetteer

        if self.language not in available_languages():
            return None
        wanted = [n for n in ("countries", "cities", "states") if n in available_lists(self.language)]
        return load_gazetteer(self.language, wanted) if wanted else None

    @cached_property
    def _known_places(self) -> Any:
        """Every place and organisation the word lists know (towns, hospitals, companies...)."""
        from clinideid.resources import available_languages, available_lists, load_gazetteer

        if self.language not in available_languages():
            return None
        names = ("countries", "states", "cities", "hospitals", "organizations")
        wanted = [n for n in names if n in available_lists(self.language)]
        return load_gazetteer(self.language, wanted) if wanted else None

    def _generic(self, value: str) -> bool:
        """Whether ``value`` is made of common words only ("Notaufnahme", "Innere Medizin", "Emergency
        Department"): a kind of place, not the name of one. Words with digits, acronyms and places or
        organisations of the word lists are names."""
        limit = self.table.generic_zipf
        if limit <= 0:
            return False
        known = self._known_places
        if known is not None and known.lookup(value) is not None:
            return False
        words = [w.strip(".,'’()") for w in value.split()]
        content = [
            w for w in words if w and w.casefold() not in self.connectors and not self._function_word(w)
        ]
        if not content:
            return True
        for w in content:
            if _ROMAN.fullmatch(w):
                continue  # "Innere Medizin II"
            if not w.isalpha() or (w.isupper() and len(w) >= 2):
                return False
            if self._zipf_of(w) < limit and not _SPECIALTY.fullmatch(w):
                return False
        return True

    def _function_word(self, word: str) -> bool:
        """A function word of the table's language ("for", "with", "im", "и"): it ends a profession, a
        place or a street; without such a list, a short frequent word."""
        if self.table.function_words:
            return word.casefold() in self.table.function_words
        return len(word) <= 5 and self._zipf_of(word) >= FUNCTION_ZIPF

    def _zipf_of(self, word: str) -> float:
        return self._zipf.get(word.casefold().strip(".'’"), 0.0)

    def _in_name_lists(self, word: str) -> bool:
        names = self._names
        return names is not None and names.contains(word.strip(".'’"))

    def _known_name(self, word: str) -> bool:
        names = self._names
        w = word.strip(".'’")
        if names is not None and names.contains(w):
            return True
        return len(w) >= 3 and self._zipf_of(w) < COMMON_ZIPF

    # -- labels ---------------------------------------------------------------------------------------------
    def _lookup(self, sub: str) -> Group | None:
        table = self.table
        g = table.exact.get(sub)
        if g is not None:
            return g
        key = label_key(sub)
        g = table.labels.get(key) or table.glued.get(key.replace(" ", ""))
        if g is not None:
            return g
        if key.endswith("#"):
            g = table.labels.get(key[:-1].rstrip())
            if g is not None:
                return g
        head, _, last = key.rpartition(" ")
        if head and last in table.number_marks:
            return table.labels.get(head)
        if "/" in sub:
            # "Father/Guardian", "Tel/Fax": a label the table has, then another word for the same thing
            first = label_key(sub.split("/", 1)[0])
            if first and " " not in first.strip():
                return table.labels.get(first)
        return None

    def _colon_hit(self, text: str, colon: int, floor: int) -> _Hit | None:
        lo = max(floor, colon - MAX_LABEL_CHARS)
        window = text[lo:colon].rstrip(" \t")
        if not window or not (window[-1].isalnum() or window[-1] in ".#)'’"):
            return None
        last = window.rsplit(None, 1)[-1]
        last_key = label_key(last).rsplit(" ", 1)[-1]
        if (
            last_key not in self._label_words
            and last_key.rstrip("#") not in self._label_words
            and last_key not in self.table.glued
            and last_key not in self.table.number_marks
            and last not in self._exact_words
        ):
            return None
        n = len(window)
        for p in range(n):
            ch = window[p]
            if not (ch.isalnum() or ch in "#№"):
                continue
            prev = window[p - 1] if p else (text[lo - 1] if lo > floor else " ")
            if prev.isalnum() or (prev in "-/'’" and (p >= 2 and window[p - 2].isalnum())):
                continue  # inside a word or a compound ("post-BD:")
            g = self._lookup(window[p:])
            if g is not None:
                return _Hit(lo + p, lo + n, colon + 1, g, True)
        return None

    def _bare_matches(self, text: str) -> Iterator[Any]:
        """Matches of the bare-label regex, tried only where a word that starts a bare label stands (one
        cheap scan over the words instead of the whole alternation at every position)."""
        firsts, exact_firsts, pattern = self._bare_firsts, self._exact_firsts, self._bare
        keys = self._word_keys
        next_free = 0
        for w in _WORD_START.finditer(text):
            start = w.start()
            if start < next_free:
                continue
            word = w.group()
            key = keys.get(word)
            if key is None:
                if len(keys) > 100_000:
                    keys.clear()
                key = keys[word] = word.casefold().replace(".", "")
            if key not in firsts and word not in exact_firsts:
                continue
            m = pattern.match(text, start)
            if m is not None:
                next_free = m.end()
                yield m

    def _cell_hits(self, text: str) -> Iterator[_Hit]:
        """Fields of tables. A label that fills a cell has its value in the next cell ("Patient | Ann Lee |
        DOB | 3/4/1950", "DOB<tab>3/4/1950"): the cell separator works as its colon. A header row (a row
        above a "|---|" rule, or one with two labels side by side) names columns: the cells below a label,
        in the rows of as many cells that follow, are values of its kind."""
        line_end = -1
        seps: list[int] = []
        columns: list[Group | None] | None = None
        for m in _CELL_SEP.finditer(text):
            c = m.start()
            if c > line_end:
                if seps:
                    found, columns = self._row_hits(text, seps, line_end, columns)
                    yield from found
                line_start = text.rfind("\n", 0, c) + 1
                if line_start != line_end + 1:
                    columns = None  # a line that is no table row came between
                line_end = text.find("\n", c)
                if line_end < 0:
                    line_end = len(text)
                seps = [line_start - 1]  # where the line starts, less one
            seps.append(c)
        if seps:
            yield from self._row_hits(text, seps, line_end, columns)[0]

    def _row_hits(
        self, text: str, seps: list[int], line_end: int, columns: list[Group | None] | None
    ) -> tuple[list[_Hit], list[Group | None] | None]:
        """The fields of one table row and the columns the rows below it have; ``seps``: where the line
        starts (less one), then its cell separators; ``columns``: the groups of the header row above."""
        cells: list[tuple[int, int]] = []
        for k, start in enumerate(seps):
            a, b = start + 1, seps[k + 1] if k + 1 < len(seps) else line_end
            while a < b and text[a] in " \t":
                a += 1
            while b > a and text[b - 1] in " \t":
                b -= 1
            cells.append((a, b))
        if _TABLE_RULE.fullmatch(text, seps[0] + 1, line_end) is not None:
            return [], columns  # the rule under a header row
        groups: list[Group | None] = []
        for a, b in cells:
            g = None
            if 0 < b - a <= MAX_LABEL_CHARS and text[b - 1] not in ":=" and text[a].isalpha():
                g = self._lookup(text[a:b])
            groups.append(g)
        nxt = text.find("\n", line_end + 1)
        header = _TABLE_RULE.fullmatch(text, line_end + 1, len(text) if nxt < 0 else nxt) is not None or any(
            x is not None and y is not None for x, y in pairwise(groups)
        )
        if header:
            return [], groups if any(g is not None and g.kind is not None for g in groups) else None
        if columns is not None and len(columns) == len(cells):
            hits = [
                _Hit(a, a, a, g, True, column=True)
                for (a, b), g in zip(cells, columns, strict=True)
                if g is not None and g.kind is not None and g.kind not in _NO_COLUMN and b > a
            ]
            return hits, columns
        hits = [
            _Hit(a, b, seps[k + 1] + 1, g, True)
            for k, ((a, b), g) in enumerate(zip(cells[:-1], groups, strict=False))
            if g is not None
        ]
        return hits, None

    def _hits(self, text: str) -> list[_Hit]:
        hits: list[_Hit] = []
        floor = 0
        for m in _COLON.finditer(text):
            c = m.start()
            nl = text.rfind("\n", floor, c)
            start = max(floor, nl + 1)
            h = self._colon_hit(text, c, start)
            if h is not None:
                hits.append(h)
            floor = c + 1
        hits.extend(self._cell_hits(text))
        if self._bare is not None:
            for m in self._bare_matches(text):
                form = m.group()
                g = self.table.bare.get(label_key(form))
                if g is None:
                    g = self.table.exact.get(form)
                    if g is None or g.shape not in STRICT_SHAPES:
                        continue  # an exact label of a name needs its colon ("cc: ...", not "20 cc")
                tail = _BARE_TAIL.match(text, m.end())
                end = tail.end() if tail else m.end()
                if _COLON_AFTER.match(text, end):
                    continue  # a label with a colon: found above
                gap = _BARE_GAP.match(text, end)
                hits.append(_Hit(m.start(), end, gap.end() if gap else end, g, False))
        hits.sort(key=lambda h: (h.start, not h.colon, -h.end))
        kept: list[_Hit] = []
        for h in hits:
            if kept and h.start < kept[-1].end:
                continue
            if kept and not h.colon and kept[-1].colon and not text[kept[-1].value : h.start].strip():
                continue  # "Codice STP: STP1200301000077": the value, not another label
            kept.append(h)
        return kept

    def _position_ok(self, text: str, h: _Hit, line_start: int, line_has_field: bool) -> bool:
        """Whether a label with a colon stands where a form puts labels (see the module docstring)."""
        if line_has_field:
            return True
        if h.start - line_start <= 24 and _START_OK.fullmatch(text, line_start, h.start):
            return True
        before = text[max(line_start, h.start - 24) : h.start]
        if before.endswith("  ") or before.endswith("\t"):
            return True
        stripped = before.rstrip(" ")
        if stripped and (stripped[-1] in _SEPARATOR_BEFORE or _MASKED.match(stripped[-1]) is not None):
            return True
        if not text[h.start].isupper():
            return False
        # "x Patient: ..." is a field; "Drug Name: ..." is another label that ends in a label word (a word of
        # the language before it), "...Radio1ogy Name: ..." a scan that lost a line break
        words = stripped.split()
        if not words or stripped != before.rstrip() or not words[-1][:1].isupper():
            return True
        prev = words[-1].strip(".,;:()")
        return not (prev.isalpha() and self._zipf_of(prev) >= COMPOUND_LABEL_ZIPF)

    # -- the matcher ----------------------------------------------------------------------------------------
    def candidates(self, masked: str) -> Iterator[tuple]:
        hits = self._hits(masked)
        if not hits:
            return
        newlines = [m.start() for m in _NEWLINE.finditer(masked)]
        for h in hits:
            h.line = bisect.bisect_left(newlines, h.start)
        i = 0
        n = len(hits)
        while i < n:
            j = i
            while j < n and hits[j].line == hits[i].line:
                j += 1
            line = hits[i].line
            line_start = newlines[line - 1] + 1 if line > 0 else 0
            line_end = newlines[line] if line < len(newlines) else len(masked)
            yield from self._line(masked, hits[i:j], line_start, line_end)
            i = j

    def _line(self, text: str, hits: list[_Hit], line_start: int, line_end: int) -> Iterator[tuple]:
        caps_line = not any(ch.islower() for ch in text[line_start:line_end])
        line_lower = not any(ch.isupper() for ch in text[line_start:line_end])
        last_field: _Hit | None = None
        for h in hits:
            # after another field of the line, unless prose came between ("Plan: ... ask md re: npwt")
            after_field = (
                last_field is not None
                and last_field.group.kind is not None
                and h.start - last_field.value <= MAX_VALUE_CHARS
                and _SENTENCE_END.search(text, last_field.value, h.start) is None
            )
            h.ok = self._position_ok(text, h, line_start, after_field) if h.colon and not h.column else True
            if h.ok and h.colon:
                last_field = h
        out: list[tuple] = []
        next_start = line_end
        for h in reversed(hits):
            if not h.ok:
                continue
            end = min(next_start, h.value + MAX_VALUE_CHARS)
            # the case of the value decides how names are read: in lower case or capitals, name words
            # must be known names or rare words
            case = (not any(ch.isupper() for ch in text[h.value : end]), caps_line, line_lower)
            values = self._values(text, h, end, case) if h.value < end else []
            if not h.colon and not values and not self._value_taken(text, h.value, end):
                continue
            if values is None:
                # a value the label's kind does not accept: leave the label to the later passes, whose
                # cue rules may still read the value
                next_start = h.start
                continue
            if h.end > h.start:
                out.append((h.start, h.end, None))
            detail = (h.group.id, h.group.role)
            out.extend((s, e, label, detail) for s, e, label in values)
            out.extend(self._then(text, h.group, values, end, case))
            next_start = h.start
        yield from out

    def _value_taken(self, text: str, s: int, end: int) -> bool:
        """Whether the value after a label was found by an earlier pass ("тел. ▒▒▒▒": a phone rule took it):
        the label is a label all the same, and ends the field before it."""
        while s < end and text[s] in " \t":
            s += 1
        return s < end and _MASKED.match(text, s) is not None

    def _then(
        self, text: str, g: Group, values: list[tuple[int, int, str]], end: int, case: tuple[bool, bool, bool]
    ) -> list[tuple]:
        """A second value right after the first, brought by a word ("nato a Pavia il 3/4/1950", "born
        3/4/1950 in Leeds", "né le 3/4/1950 à Lyon"): the group says which words bring which group."""
        if not g.then or not values:
            return []
        pos = max(e for _, e, _ in values)
        for words, target in g.then:
            m = self._then_words[words].match(text, pos, end)
            if m is None:
                continue
            group = self.table.group(target)
            if group is None:
                continue
            hit = _Hit(m.start(), m.end(), m.end(), group, False)
            found = self._values(text, hit, end, case) or []
            return [(s, e, label, (group.id, group.role)) for s, e, label in found]
        return []

    # -- values ---------------------------------------------------------------------------------------------
    def _values(
        self, text: str, h: _Hit, end: int, case: tuple[bool, bool, bool]
    ) -> list[tuple[int, int, str]] | None:
        """The value spans of the field ``h`` in ``[h.value, end)``: ``[]`` for no value ("unknown",
        nothing, a value an earlier pass took), ``None`` for a value the kind does not accept. ``case``:
        (the value in lower case, the line in capitals)."""
        g = h.group
        if g.kind is None:
            return []
        s = h.value
        while s < end and text[s] in " \t":
            s += 1
        mask = _MASKED.search(text, s, end)
        if mask is not None:
            end = mask.start()
        hard = _HARD_END.search(text, s, end)
        while (
            hard is not None
            and hard.group().strip() == ""
            and self._goes_on_after_gap(g, text, hard.end(), end)
        ):
            hard = _HARD_END.search(text, hard.end(), end)  # "Adrian  Muñoz Hernández": a gap in a name
        if hard is not None:
            end = hard.start()
        if g.shape == "words":
            sub = _SUB_LABEL.search(text, s, end)
            if sub is not None:
                end = sub.start()  # "Laboratorio: Biometría hemática: ...": a label of another form
        while end > s and text[end - 1] in " \t":
            end -= 1
        if end <= s:
            return []
        first = _COMMA_END.search(text, s, end)
        head = text[s : first.start() if first else end].strip(" \t.:")
        whole = label_key(text[s:end])
        if label_key(head) in self.table.null_values or whole in self.table.null_values:
            return []
        if whole in self.table.labels or text[s:end] in self.table.exact:
            return []  # another label ("Name | DOB | MRN": a header row), not a value
        shape = g.shape
        if (
            h.column
            and shape in _WORD_SHAPES
            and g.kind != "PROFESSION"
            and not (text[s].isupper() or (shape == "address" and text[s].isdigit()))
        ):
            return None  # a column of words in lower case ("deltoide sx" under "Sede"): not names
        if shape == "name" and (text[s].isdigit() or text[s] in "+("):
            # a name field holding a number or a date ("Contact: 0171 ...", "Signed: 03/04/2024")
            date = self._date_value(text, s, end)
            if date is not None:
                return [(date[0], date[1], "DATE")]
            phone = self._phone_value(text, s, end)
            return [(phone[0], phone[1], "PHONE")] if phone is not None else None
        strict = not h.colon or h.column  # a cell under a header is weaker evidence than "Label: value"
        if shape == "name":
            named = replace(g, lenient=False) if h.column and g.lenient else g
            # a value in lower case on a line that has capitals: only names the lists know ("Médico: urologia")
            strict = strict or (case[0] and not case[2])
            found = self._name_values(text, s, end, named, case, strict=strict)
        elif shape == "date":
            found = self._date_value(text, s, end, garbled=h.colon and not h.column)
        elif shape == "phone":
            found = self._phone_value(text, s, end)
        elif shape == "id":
            found = self._id_value(text, s, end, strict=strict)
            if h.column and found is not None and found[1] < end:
                found = None  # an identifier fills its cell: "DDD 2019 implantiert" describes
        elif shape == "number":
            found = self._number_value(text, s, end, strict=strict)
        elif shape == "age":
            found = self._regex_value(_AGE, text, s, end)
        elif shape == "zip":
            found = self._regex_value(_ZIP if not h.colon else _ZIP_FIELD, text, s, end)
        elif shape == "email":
            found = self._regex_value(_EMAIL, text, s, end)
        elif shape == "token":
            found = self._token_value(text, s, end, g.kind)
        elif shape in ("place", "address"):
            return self._place_values(text, s, end, g, case[2]) or None
        elif g.kind in ("HOSPITAL", "ORGANIZATION") and self._starts_with_title(text, s, end):
            # "Zuweisung: Dr. med. Olena Lebid, HNO-Praxis": a person where a place was expected
            doctor = Group(g.id, "DOCTOR", None, "name", 5, False, True)
            found = self._name_values(text, s, end, doctor, case, strict=False)
        elif g.kind in ("HOSPITAL", "ORGANIZATION"):
            found = self._org_values(text, s, end, g)
        elif g.kind == "PROFESSION":
            found = self._profession_values(text, s, end, g)
        else:
            found = self._words_value(text, s, end, g)
        if found is None:
            if g.fallback is not None and h.colon and text[s].isupper():
                # "Born: Leeds": a field whose value is of another kind than its label says
                return (
                    self._place_values(
                        text, s, end, Group(g.id, g.fallback, None, "place", 5, False, False), case[2]
                    )
                    or None
                )
            return None
        if isinstance(found, list):
            return found
        return [(found[0], found[1], g.kind)]  # type: ignore[list-item]

    def _starts_with_title(self, text: str, s: int, end: int) -> bool:
        m = _WORD.match(text, s, end)
        return m is not None and label_key(m.group()) in self.table.titles and m.group()[:1].isupper()

    def _goes_on_after_gap(self, g: Group, text: str, pos: int, end: int) -> bool:
        """Whether a value goes on after a run of spaces: a name written as a name label's value ("Adrian
        Muñoz"), digits of an identifier ("08 08  53412"), a house number of an address ("Bergamin  12")."""
        m = _WORD.match(text, pos, end)
        if m is None:
            return False
        w = m.group().rstrip(".,")
        if label_key(w) in self.table.labels:
            return False
        if g.shape == "name":
            if not (len(w) >= 2 and w[:1].isupper() and _NAME_GAP_WORD.fullmatch(w) is not None):
                return False
            # a name label's value, or a surname the lists know ("Jose Antonio  Contreras Ibáñez")
            return g.lenient or (self._in_name_lists(w) and self._zipf_of(w) < self.table.name_goes_on_zipf)
        if g.shape == "id":
            return w.isdigit()
        if g.shape == "address":
            return w[:1].isdigit() and len(w) <= 5
        return False

    def _not_value(self, value: str) -> bool:
        key = label_key(value)
        if not key or key in self.table.null_values:
            return True
        return any(key == nv or key.startswith(nv + " ") for nv in self.table.not_values)

    def _regex_value(self, pattern: Any, text: str, s: int, end: int) -> tuple[int, int] | None:
        m = pattern.match(text, s, end)
        if m is None or m.end() == s:
            return None
        after = text[m.end() : m.end() + 1]
        if after and (after.isalnum() and text[m.end() - 1].isalnum()):
            return None
        return m.start(), m.end()

    def _date_value(self, text: str, s: int, end: int, *, garbled: bool = False) -> tuple[int, int] | None:
        """A date (or partial date) at the start of ``[s, end)``. ``garbled``: after a date label with a
        colon, digits and date separators ending with a year are a date typed wrong ("26708/2017")."""
        from clinideid.transform.calendar_names import lookup_month, lookup_weekday
        from clinideid.transform.dates import parse_date

        words = [(m.start(), m.end()) for m in _WORD.finditer(text, s, min(end, s + 60))]
        if len(words) > 1 and lookup_weekday(text[words[0][0] : words[0][1]].strip(".,"), self.language):
            words = words[1:]  # "Montag, 12.03.2024": the weekday stays outside the date
            s = words[0][0]
        for k in range(min(len(words), 6), 0, -1):
            a, b = s, words[k - 1][1]
            while b > a and text[b - 1] in ",.;:)":
                b -= 1
            candidate = text[a:b]
            if "(" in candidate or not _DIGIT.search(candidate):
                continue
            parts = candidate.split()
            if (
                len(parts) > 1
                and label_key(parts[-1]) in self.table.year_words
                and len(parts[-1]) <= 2
                and text[b : b + 1] == "."
            ):
                b += 1  # "5 марта 2023 г."
                candidate = text[a:b]
            if (
                not _DIGIT.search(parts[-1])
                and lookup_month(parts[-1].strip(".,"), self.language) is None
                and label_key(parts[-1]) not in self.table.year_words
            ):
                continue  # "3/4/1950 in": the date ends before the connector
            first = parts[0].strip(".,")
            if (
                not first[:1].isdigit()
                and not _OCR_DATE.fullmatch(candidate)
                and (
                    lookup_month(first, self.language) is None
                    and lookup_weekday(first, self.language) is None
                )
            ):
                return None  # "FEV1 2.41 L" is no date
            if _DECIMAL.fullmatch(candidate):
                continue  # "12.5", "2.41": a measurement
            parsed = parse_date(candidate, self.language)
            if parsed is None and sum(c.isdigit() for c in candidate) >= 3:
                # a scan that read digits as letters ("O7/l2/2Ol5", "16 Feb 196l"): read the tokens that
                # hold a digit as digits
                fixed = _OCR_TOKEN.sub(lambda t: t.group().translate(_OCR_DIGITS), candidate)
                if fixed != candidate:
                    parsed = parse_date(fixed, self.language)
            if parsed is not None and parsed.precision != "time" and not parsed.has_time:
                return a, b  # a clock time after the date is not part of it
        if garbled:
            m = _GARBLED_DATE.match(text, s, end)
            if m is not None:
                return m.start(), m.end()
        return None

    def _phone_value(self, text: str, s: int, end: int) -> tuple[int, int] | None:
        """A phone number at the start of the value (after at most a short word: "mob 0171 ..."), with
        6 to 22 digits; a scan's letters for digits ("O7700 9OO 4l2") are read as digits."""
        cut = _COMMA_END.search(text, s, end)
        end = cut.start() if cut and cut.start() > s else end
        seg = text[s:end]
        found = self._phone_in(seg)
        if found is None and _OCR_PHONE.match(seg):
            found = self._phone_in(seg.translate(_OCR_DIGITS))  # same length: offsets still hold
        return None if found is None else (s + found[0], s + found[1])

    @staticmethod
    def _phone_in(seg: str) -> tuple[int, int] | None:
        m = _PHONE.search(seg)
        if m is None or _DIGIT.search(seg, 0, m.start()):
            return None
        if m.start() > 16 or _LETTER.search(seg, m.start(), m.start() + 1):
            return None
        a, b = m.start(), m.end()
        while seg[a] == " ":
            a += 1
        digits = sum(ch.isdigit() for ch in seg[a:b])
        if digits < 6 or digits > 22:
            return None
        return a, b

    def _id_value(self, text: str, s: int, end: int, *, strict: bool) -> tuple[int, int] | None:
        cut = _COMMA_END.search(text, s, end)
        end = cut.start() if cut and cut.start() > s else end
        mark = _NUMBER_MARK.match(text, s, end)
        if mark is not None:
            s = mark.end()
        toks: list[tuple[int, int]] = []
        pos = s
        while pos < end and len(toks) < 8:
            m = _ID_TOKEN.match(text, pos, end)
            if m is None:
                break
            tok = _GLUED_WORD.sub("", m.group()).rstrip(".:")  # "P0781486.RTW": a new sentence glued on
            if toks and _DATE_TOKEN.fullmatch(tok):
                break  # "Dossier N° 9281973 15/02/1963": a date after the number
            if not (_DIGIT.search(tok) or (len(tok) <= 3 and tok.isupper())):
                break
            if toks and text[toks[-1][1] : m.start()] not in (" ", "-"):
                break
            toks.append((m.start(), m.start() + len(tok)))
            pos = m.end()
            if pos < end and text[pos] == " ":
                pos += 1
        while toks and not _DIGIT.search(text[toks[-1][0] : toks[-1][1]]):
            toks.pop()
        if not toks:
            return None
        a, b = toks[0][0], toks[-1][1]
        value = text[a:b]
        if _MEASURE.fullmatch(value) or _CLOCK.fullmatch(value):
            return None  # "3.5-5.0", "14:30": a measure or a time, not an identifier
        alnum = sum(ch.isalnum() for ch in value)
        if alnum < (4 if strict else 3):
            return None
        return a, b

    def _number_value(self, text: str, s: int, end: int, *, strict: bool) -> tuple[int, int] | None:
        """A room, bed or bay: one token with a digit ("4117-2", "12B"), maybe after a short word in
        capitals ("ED 4"). Without a colon the number must end its phrase ("bed 12.", not "bed 30 degrees")."""
        m = _ID_TOKEN.match(text, s, end)
        if m is None:
            return None
        a = m.start()
        tok = m.group().rstrip(".:,")
        if not _DIGIT.search(tok) and tok.isupper() and len(tok) <= 4 and text[m.end() : m.end() + 1] == " ":
            m = _ID_TOKEN.match(text, m.end() + 1, end)
            if m is None:
                return None
            tok = text[a : m.end()].rstrip(".:,")
        if not _DIGIT.search(tok) or len(tok) > 12:
            return None
        b = a + len(tok)
        if strict:
            after = text[b : b + 3]
            if after[:1] == "%" or (after[:1] == " " and after[1:2].isalnum() and not after[1:2].isupper()):
                return None
        return a, b

    def _token_value(self, text: str, s: int, end: int, kind: str | None) -> tuple[int, int] | None:
        m = _WORD.match(text, s, end)
        if m is None:
            return None
        tok = m.group().rstrip(_TOKEN_TRIM)
        if len(tok) < 2 or self._not_value(tok) or label_key(tok) in self.table.titles:
            return None
        if kind == "IPADDR" and not regex.fullmatch(r"[0-9A-Fa-f.:]+", tok):
            return None
        if kind == "URL" and "." not in tok and "/" not in tok:
            return None
        return m.start(), m.start() + len(tok)

    # -- names ----------------------------------------------------------------------------------------------
    def _name_values(
        self, text: str, s: int, end: int, g: Group, case: tuple[bool, bool, bool], *, strict: bool
    ) -> list[tuple[int, int, str]] | None:
        toks = [(m.start(), m.end()) for m in _NAME_TOKEN.finditer(text, s, end)]
        lower_line, caps_line = case[0], case[1]
        out: list[tuple[int, int, str]] = []
        i = 0
        while i < len(toks):
            start = i
            i, span = self._one_name(text, toks, i, g, lower_line, caps_line, strict)
            if out and span is not None:
                # a later item of a list is a name and nothing else ("Oak Street Surgery", "RDCS"), with
                # a title or of two words at least
                ends_item = i >= len(toks) or text[toks[i][0] : toks[i][1]] in ",;/&"
                titled = label_key(text[toks[start][0] : toks[start][1]]) in self.table.titles
                if not ends_item or not (titled or len(text[span[0] : span[1]].split()) >= 2):
                    break
            if span is not None:
                out.append((span[0], span[1], g.kind))  # type: ignore[arg-type]
                out.extend(self._after_name(text, span[1], end, g))
            if not g.many or span is None or out[-1][2] not in (g.kind, "AGE"):
                break
            if text[span[1] : span[1] + 1] == "." and not text[span[1] - 2 : span[1] - 1].isupper():
                break  # the sentence ends with the name: what follows is no other name of the list
            # another name after ',', ';', '/', 'and', '&'
            while i < len(toks) and (
                text[toks[i][0] : toks[i][1]] in ",;/&"
                or text[toks[i][0] : toks[i][1]].casefold() in ("and", "und", "e", "et", "y", "и")
            ):
                i += 1
        return out or None

    def _starts_name(
        self, text: str, toks: list[tuple[int, int]], i: int, g: Group, lower_line: bool, caps_line: bool
    ) -> bool:
        """Whether the capitalised connector at ``i`` starts a name ("De la Cruz Lorenzo"): connectors,
        then a name word."""
        if not text[toks[i][0] : toks[i][1]][:1].isupper():
            return False
        j = i + 1
        while j < len(toks) and j < i + 3 and text[toks[j][0] : toks[j][1]].casefold() in self.connectors:
            j += 1
        return j < len(toks) and self._name_word(
            text[toks[j][0] : toks[j][1]], lower_line, caps_line, False, g.lenient
        )

    def _name_goes_on(self, w: str, lower_line: bool, caps_line: bool, nxt: str = "") -> bool:
        """A capitalised word after name words that is still part of the name: a suffix ("Jr."), or a word
        that is not a frequent word of the language ("Thi Mai Nguyen", "Sabine Will")."""
        if _NAME_SUFFIX.fullmatch(w):
            return True
        if lower_line or caps_line or not w[:1].isupper() or _NAME_WORD.fullmatch(w) is None:
            return False
        key = label_key(w)
        if key in self.table.labels or key in self.table.skip_words or key in self.table.credentials:
            return False
        if key in self.table.titles or key in self._address_words or _SPECIALTY.fullmatch(w) is not None:
            return False
        if self._zipf_of(w) < self.table.name_goes_on_zipf or self._in_name_lists(w):
            return True
        # a frequent word between name words ("Beatriz Puerto Hernández"): a known surname must follow
        return (
            bool(nxt)
            and nxt[:1].isupper()
            and label_key(nxt) not in self.table.labels
            and (self._in_name_lists(nxt.rstrip(".,")))
        )

    def _given_name_word(self, w: str, caps_line: bool) -> bool:
        """A word after "Surname," that may be a given name: capitalised (or in capitals), not a label,
        title, kinship or clinical word, and not among the most frequent words."""
        if not w[:1].isupper() or _NAME_WORD.fullmatch(w) is None:
            return False
        key = label_key(w)
        if key in self.table.labels or key in self.table.skip_words or key in self.table.titles:
            return False
        if _SPECIALTY.fullmatch(w) is not None:
            return False
        return self._zipf_of(w) < self.table.name_goes_on_zipf

    def _surname_part(self, text: str, words: list[tuple[int, int]]) -> bool:
        """Whether the name words so far may be the surname of a "Surname, Given" name: one word (beside
        connectors: "Van Houten"), or up to three in capitals ("DELA CRUZ-WEBER")."""
        real = [text[x:y] for x, y in words if text[x:y].casefold() not in self.connectors]
        return len(real) == 1 or (1 <= len(real) <= 3 and all(w.isupper() for w in real))

    def _surname_after(
        self, text: str, words: list[tuple[int, int]], w: str, lower_line: bool, caps_line: bool
    ) -> bool:
        """A capitalised word right after a known first name that starts the name is its surname ("Olga
        Penner"), unless it is a function word or a label."""
        if not words or lower_line or caps_line or not w[:1].isupper() or _NAME_WORD.fullmatch(w) is None:
            return False
        if label_key(w) in self._name_stops or label_key(w) in self.table.skip_words:
            return False
        if len(words) != 1:
            return False
        first = self._first_names
        prev = text[words[0][0] : words[0][1]].strip(".'’")
        return first is not None and first.contains(prev) and self._zipf_of(w) < FUNCTION_ZIPF

    def _after_name(self, text: str, b: int, end: int, g: Group) -> list[tuple[int, int, str]]:
        """A nickname, another name or an age right after a name: ' (goes by "Kay")', ' aka Janet Roe',
        ' (née Smith)', ' (NGUYEN, Van Bao)', ', 72', ' 45F'."""
        kind = g.kind or "PATIENT"
        m = _NICKNAME.match(text, b, min(end + 2, b + 60))
        if m is not None:
            return [(m.start(1), m.end(1), kind)]
        m = _AGE_AFTER.match(text, b, end)
        if m is not None:
            k = 1 if m.group(1) else 2  # "Jane Roe, 72", "Jane Roe 45F"
            if int(m.group(k)) <= 120:
                return [(m.start(k), m.end(k), "AGE")]
        m = _NUMBER_AFTER_NAME.match(text, b, end)
        if m is not None:
            return [(m.start(1), m.end(1), "IDNUM")]  # "Assuré : Pierre Martin N° 402 654 803 958 12"
        address = self._address_after_name(text, b, end)
        if address:
            return address
        alias = self._alias.match(text, b, end) if self._alias is not None else None
        if alias is not None:
            span = self._name_run(text, alias.end(), min(end, alias.end() + 60))
            if span is not None:
                return [(span[0], span[1], kind)]
        m = _PAREN_NAME.match(text, b, min(end + 1, b + 60))
        if m is not None:
            inner = m.group(1)
            words = regex.split(r"[ ,]+", inner.strip())
            lower = not any(ch.isupper() for ch in inner)
            caps = not any(ch.islower() for ch in inner)
            if 1 <= len(words) <= 4 and all(
                w.casefold() in self.connectors or self._name_word(w, lower, caps) for w in words if w
            ):
                return [(m.start(1), m.end(1), kind)]  # "Nguyễn Văn Bảo (NGUYEN, Van Bao)"
        return []

    def _address_after_name(self, text: str, b: int, end: int) -> list[tuple[int, int, str]]:
        """The address written after a name in the same field, when it starts with a street word ("Remitido
        por: Dra. Ana Roe C/ Mayor 15, 4º A 28804 Alcalá"): it must hold a house number or a postcode."""
        m = _ADDRESS_AFTER_NAME.match(text, b, end)
        if m is None:
            return []
        part = _ADDRESS_PART.match(text, m.end(), end)
        if part is None:
            return []
        words = part.group().split()
        if not words or not words[0][:1].isupper():
            return []
        if label_key(words[0]) not in self.table.street_words and not _SLASH_STREET.match(part.group()):
            return []  # the street word comes first ("Servicio de ..., Av. X" is a department)
        street = Group("address", "STREET", None, "address", 10, False, False)
        stop = _CAPITAL_SENTENCE_END.search(text, m.end(), end)
        while stop is not None and label_key(stop.group(1)) in self._abbreviations:
            stop = _CAPITAL_SENTENCE_END.search(text, stop.end(), end)  # "Avda. Campanar"
        found = self._place_values(text, m.end(), stop.start() + len(stop.group(1)) if stop else end, street)
        if not any(lbl == "ZIP" or _DIGIT.search(text, x, y) for x, y, lbl in found):
            return []  # "Dr Ann Lee, Oak Street Surgery": a practice, not an address
        return found

    def _name_run(self, text: str, s: int, end: int) -> tuple[int, int] | None:
        """The capitalised name words at ``s`` (at most four), e.g. after "aka" or "née"."""
        words: list[tuple[int, int]] = []
        for m in _NAME_TOKEN.finditer(text, s, end):
            w = m.group()
            if words and w.casefold() in self.connectors:
                continue
            if not w[:1].isupper() or not self._given_name_word(w, False):
                break
            words.append(m.span())
            if len(words) == 4:
                break
        return (words[0][0], words[-1][1]) if words else None

    def _name_word(
        self, word: str, lower_line: bool, caps_line: bool, strict: bool = False, lenient: bool = False
    ) -> bool:
        if _NAME_WORD.fullmatch(word) is None:
            return False
        key = label_key(word)
        if (
            key in self._name_stops
            or key in self.table.credentials
            or key in self.table.titles
            or (key in self.table.skip_words and not lenient)
            or (key in self._address_words and not lenient)
            or _SPECIALTY.fullmatch(word) is not None
        ):
            return False
        letters = word.rstrip(".")
        if not letters[0].isupper() and not letters[0].islower():
            return True  # a script without case (Chinese, Arabic, ...)
        if len(letters) == 1:
            return letters.isupper() or lower_line
        if (
            not lenient
            and self.allowlist is not None
            and self.allowlist.contains(letters)
            and not self._in_name_lists(letters)
        ):
            return False
        if lenient and not lower_line and letters[0].isupper():
            return True  # a name label: any capitalised word ("Apellidos: Pasos Garcia")
        if lower_line or caps_line:
            if strict:
                return self._names is not None and self._names.contains(letters)
            return self._known_name(letters)
        if not letters[0].isupper():
            return False
        # a capitalised word of the language ("Re: Follow up", "Thomas Whitaker Presented With ...")
        return self._in_name_lists(letters) or self._zipf_of(letters) < self.table.name_zipf

    def _one_name(
        self,
        text: str,
        toks: list[tuple[int, int]],
        i: int,
        g: Group,
        lower_line: bool,
        caps_line: bool,
        strict: bool,
    ) -> tuple[int, tuple[int, int] | None]:
        table = self.table
        n = len(toks)
        titled = False
        lenient = g.lenient
        while i < n:
            key = label_key(text[toks[i][0] : toks[i][1]])
            if key in table.titles or (key in table.skip_words and not lenient):
                titled = titled or key in table.titles
                i += 1
                continue
            break
        words: list[tuple[int, int]] = []
        pending: list[tuple[int, int]] = []  # connectors waiting for the next name word
        count = 0  # name words, connectors not counted ("Jose Luis Del Castillo Pardo de Vera")
        while i < n and count < g.max_words:
            a, b = toks[i]
            w = text[a:b]
            if w == "," and not pending and self._surname_part(text, words):
                j, after = i + 1, []
                while j < n and len(after) < 3:
                    wa = text[toks[j][0] : toks[j][1]]
                    # given names after "SURNAME," ("NGUYEN, HONG THI", "XIONG, PA NHIA")
                    nxt = text[toks[j + 1][0] : toks[j + 1][1]] if j + 1 < n else ""
                    given = self._name_word(wa, lower_line, caps_line, strict, lenient) or (
                        not strict
                        and self._given_name_word(wa, caps_line)
                        and (
                            label_key(wa) not in self.table.credentials
                            or _NAME_WORD.fullmatch(nxt) is not None
                        )
                    )
                    if not given:
                        break
                    after.append(toks[j])
                    j += 1
                rest_ok = j == n or text[toks[j][0] : toks[j][1]] in "(;/,"
                if after and rest_ok:
                    words.extend(after)
                    i = j
                break
            if w.casefold() in self.connectors and (
                words or pending or self._starts_name(text, toks, i, g, lower_line, caps_line)
            ):
                pending.append((a, b))  # "van der Berg", and "De Miguel Rivera" at the start
                i += 1
                continue
            if w in _QUOTES and words:
                pending.append((a, b))  # 'Delroy "Bigga" McFarlane'
                i += 1
                continue
            if not (
                self._name_word(w, lower_line, caps_line, strict, lenient)
                or self._surname_after(text, words, w, lower_line, caps_line)
                or (
                    words
                    and self._name_goes_on(
                        w, lower_line, caps_line, text[toks[i + 1][0] : toks[i + 1][1]] if i + 1 < n else ""
                    )
                )
            ):
                break
            if len(w) == 1 and text[b : b + 1] == "/":
                break  # "C/ Irunlarrea": a street, not an initial
            if (
                words
                and label_key(w) in table.street_words
                and any(_DIGIT.search(text, x, y) for x, y in toks[i + 1 : i + 8])
            ):
                break  # "Josep Rubio Palau Paseo de Gracia 12": the address after the name
            words.extend(pending)
            pending = []
            words.append((a, b))
            count += 1
            i += 1
            if w.endswith(".") and len(w.replace(".", "")) >= 3 and label_key(w) not in self._abbreviations:
                break  # "Gabriel Maldonado Fonseca. Cátedra de ...": the sentence ends with the name
        if not words:
            return i + 1, None
        a, b = words[0][0], words[-1][1]
        if (
            b > a
            and text[b - 1] == "."
            and not (b - a >= 2 and text[b - 2].isupper() and (b - a == 2 or not text[b - 3].isalpha()))
        ):
            b -= 1
        value = text[a:b]
        if not any(len(text[x:y].rstrip(".")) >= 2 for x, y in words) or self._not_value(value):
            return i, None
        if label_key(value) in table.labels:
            return i, None
        if g.require_known and not titled and not any(self._in_name_lists(text[x:y]) for x, y in words):
            return i, None  # "Betreff: Verlegungsbericht Intensivstation"
        if len(words) == 1 and not titled and not lenient:
            lone = value.rstrip(".")
            if not self._in_name_lists(lone) and (
                self._zipf_of(lone) >= self.table.lone_name_zipf or (lone.isupper() and not caps_line)
            ):
                return i, None  # "Re: Referral", "Ordering provider: SICU attending"
        return i, (a, b)

    # -- words and places -----------------------------------------------------------------------------------
    def _cut_sentence(self, text: str, s: int, end: int) -> int:
        """Where a sentence ends in ``[s, end)``: a '.' after a digit or a word of 4+ letters (not "St."),
        before a space or the end."""
        pos = s
        while True:
            m = _SENTENCE_STOP.search(text, pos, end)
            if m is None:
                return end
            word = _LAST_WORD.search(text, max(s, m.start() - 20), m.start())
            if word is None or label_key(word.group()) not in self._abbreviations:
                return m.start()
            pos = m.end()  # "корп. 2", "просп. Мира": an abbreviation of the table, not a sentence end

    def _marker(self, part: str) -> tuple[str, int] | None:
        """What an address part is by its marker words ("г. Москва", "ул. Ленина", "д. 5", "Московская
        обл.", "Hauptstraße 5", "Apt 4B"): (kind, where the name starts), kind CITY, STATE, STREET or HOUSE."""
        table = self.table
        words = part.split()
        if not words:
            return None
        first, last = label_key(words[0]), label_key(words[-1])
        if first in table.house_words or self._house_part(words):
            return "HOUSE", 0  # "kv. 12", "2ºA", "B", "3 C"
        if _SLASH_STREET.match(part):
            return "STREET", 0  # "C/ Mayor 3"
        if first in table.city_words and len(words) > 1:
            return "CITY", len(part) - len(part[len(words[0]) :].lstrip())
        if first in table.region_words or last in table.region_words:
            return "STATE", 0
        for w in words:
            key = label_key(w)
            if key in table.street_words or any(
                len(key) >= len(sfx) + 3 and key.endswith(sfx) for sfx in table.street_suffixes
            ):
                return "STREET", 0
        return None

    def _split_street(self, text: str, a: int, b: int) -> list[tuple[int, int, str]]:
        """A street part that goes on with a postcode and a town without a comma ("21 rue Belleville 75020
        Paris", "255 Rue Pierre Charlot Paris 75015"): street, then town and postcode."""
        m = _INNER_POSTCODE.search(text, a, b)
        if m is None or not _LETTER.search(text, a, m.start()):
            return [(a, b, "STREET")]
        head_end = m.start()
        while head_end > a and text[head_end - 1] in " \t,":
            head_end -= 1
        out: list[tuple[int, int, str]] = []
        # a known town right before the postcode ("... Charlot Paris 75015")
        words = list(_WORD.finditer(text, a, head_end))
        if len(words) >= 3 and self._places is not None:
            last = words[-1]
            if self._places.lookup(last.group()) == "cities" and not _DIGIT.search(last.group()):
                head_end2 = last.start()
                while head_end2 > a and text[head_end2 - 1] in " \t,":
                    head_end2 -= 1
                out = [(a, head_end2, "STREET"), (last.start(), last.end(), "CITY")]
        if not out:
            out = [(a, head_end, "STREET")]
        out.append((m.start(), m.end(), "ZIP"))
        rest = m.end()
        while rest < b and text[rest] in " \t":
            rest += 1
        if rest < b:
            town = self._classify_words(text, rest, b, True)
            if town:
                out.extend(town)
        return out

    def _house_then_postcode(self, text: str, a: int, b: int) -> list[tuple[int, int, str]] | None:
        """A floor or door, then the postcode and town, in one part ("4.º A 28804 Alcalá de Henares",
        "6o A. 37007 Salamanca"): the house part, the postcode and the town; None when the part is not so."""
        m = _PART_POSTCODE.search(text, a, b)
        if m is None:
            return None
        head = text[a : m.start()].rstrip(" \t,.")
        if not head or not self._house_part(head.split()):
            return None
        out = [(a, a + len(head), "STREET"), (m.start(), m.end(), "ZIP")]
        rest = m.end()
        while rest < b and text[rest] in " \t":
            rest += 1
        if rest < b:
            out.extend(self._classify_words(text, rest, b, True) or [])
        return out

    def _house_part(self, words: list[str]) -> bool:
        """A floor, door or flat written short ("2ºB", "3 C", "P1 2B", "A-6", "4 izq."): at most three
        words, each with a digit, of at most two letters, or a house word of the table."""
        if not words or len(words) > 3:
            return False
        digit = False
        for w in words:
            core = w.strip(".,")
            if _DIGIT.search(core):
                digit = True
                if len(core) > 6 or sum(ch.isdigit() for ch in core) > 4:
                    return False  # "53703": a postcode, not a flat
            elif not (len(core) == 1 or core.islower() or label_key(w) in self.table.house_words):
                return False  # "GE", "WI": a region code
        return digit or len(words) == 1

    def _marked_address(
        self, text: str, parts: list[tuple[int, int]], in_paren: set[int]
    ) -> list[tuple[int, int, str]] | None:
        """An address whose parts carry marker words (any order: "г. Москва, ул. Ленина, д. 5, кв. 12"),
        or None when no part has one."""
        marks = [None if i in in_paren else self._marker(text[a:b]) for i, (a, b) in enumerate(parts)]
        if not any(marks):
            return None
        for i in range(len(marks) - 1):
            nxt = marks[i + 1]
            if marks[i] is None and nxt is not None and nxt[0] == "HOUSE" and i == 0:
                marks[i] = ("STREET", 0)  # "Carrer Dr. Antic Roca, 38"
        if (
            len(marks) > 1
            and marks[1] is None
            and _HOUSE_NUMBER.fullmatch(text[parts[0][0] : parts[0][1]])
            and _LETTER.search(text, parts[1][0], parts[1][1])
            and 1 not in in_paren
        ):
            marks[1] = ("STREET", 0)  # "48, route d'Arlon": the number, then its street
        out: list[tuple[int, int, str]] = []
        for i, ((a, b), mark) in enumerate(zip(parts, marks, strict=True)):
            cut = self._cut_prose(text, a, b)
            stop = cut < b
            if stop:
                rest = _AFTER_FUNCTION_WORD.match(text, cut, b)
                head = text[a:cut]
                if rest is not None and self._places is not None and self._places.lookup(head) == "cities":
                    # "residente a Lecco in Via Volta 12": the town, then the street
                    out.append((a, cut, "CITY"))
                    a, stop = rest.end(), False
                    mark = self._marker(text[a:b])
                else:
                    b = cut  # prose after the address ("45 kingfisher rd with wife")
            part = text[a:b]
            last = out[-1][2] if out else None
            if not part or self._not_value(part):
                break
            if _ZIP.fullmatch(part):
                out.append((a, b, "ZIP"))
            elif (mark is None or mark[0] == "HOUSE") and (
                _ZIP_FIRST.fullmatch(part) or _ZIP_LAST.fullmatch(part)
            ):
                have_city = any(lbl == "CITY" for _, _, lbl in out)
                out.extend(self._classify_part(text, a, b, have_city) or [])
            elif mark is not None and mark[0] == "CITY":
                out.append((a + mark[1], b, "CITY"))
            elif mark is not None and mark[0] == "STATE":
                out.append((a, b, "STATE"))
            elif mark is not None and mark[0] == "STREET":
                street = self._split_street(text, a, b)
                if last == "STREET" and _HOUSE_NUMBER.fullmatch(text[out[-1][0] : out[-1][1]]):
                    out[-1] = (out[-1][0], street[0][1], "STREET")  # "48, route d'Arlon"
                    out.extend(street[1:])
                else:
                    out.extend(street)
            elif last == "STREET" and (inner := self._house_then_postcode(text, a, b)) is not None:
                out[-1] = (out[-1][0], inner[0][1], "STREET")  # "..., 4.º A 28804 Alcalá de Henares"
                out.extend(inner[1:])
            elif (mark is not None and mark[0] == "HOUSE") or (
                _DIGIT.search(part) and len(part.split()) <= 3
            ):
                if last == "STREET":
                    out[-1] = (out[-1][0], b, "STREET")  # "ул. Ленина, д. 5, кв. 12"
                else:
                    out.append((a, b, "STREET"))
            else:
                have_city = any(lbl == "CITY" for _, _, lbl in out)
                classified = self._classify_part(text, a, b, have_city, known_only=i in in_paren)
                if not classified:
                    break
                out.extend(classified)
            if stop:
                break
        return out or None

    def _care_of(self, part: str) -> bool:
        """An address part naming who the mail goes through ("c/o figlia", "presso il figlio")."""
        words = part.split()
        return (
            bool(words)
            and not _DIGIT.search(part)
            and self._marker(part) is None
            and all(w.islower() or label_key(w) in self.table.skip_words for w in words)
        )

    def _cut_prose(self, text: str, a: int, b: int) -> int:
        """The end of ``[a, b)`` before the first lower-case function word after the first word; a
        connector of place names ("of", "in") cuts only between a town and an address after it ("Lecco
        in Via Volta 12"), not inside a street name ("12 Avenue of the Americas")."""
        for k, m in enumerate(_WORD.finditer(text, a, b)):
            w = m.group()
            if not (k and w.islower() and self._function_word(w)):
                continue
            if w in self.connectors and (
                _DIGIT.search(text, a, m.start())
                or not _DIGIT.search(text, m.end(), b)
                or self._places is None
                or self._places.lookup(text[a : m.start()].strip(" ,")) != "cities"
            ):
                continue
            end = m.start()
            while end > a and text[end - 1] in " \t,":
                end -= 1
            return end
        return b

    def _org_values(self, text: str, s: int, end: int, g: Group) -> list[tuple[int, int, str]] | None:
        """An organisation or a hospital, then maybe its town after a comma ("Avalon General Hospital,
        St. John's, NL"); a company form after a comma stays in the name ("Acme Plumbing, Inc.")."""
        end = self._cut_sentence(text, s, end)
        found = self._words_value(text, s, end, g)
        if found is None:
            return None
        a, b = found
        if (
            text[b : b + 1] == "."
            and label_key(text[a : b + 1].rsplit(None, 1)[-1]) in self.table.company_forms
        ):
            b += 1  # "Edilizia Rossi S.r.l."
        out: list[tuple[int, int, str]] = [(a, b, g.kind or "ORGANIZATION")]
        ident = _PAREN_ID.match(text, b, end)
        if ident is not None and sum(ch.isalnum() for ch in ident.group(1)) >= 5:
            out.append((ident.start(1), ident.end(1), "IDNUM"))  # "Krankenkasse: X (K270417574)"
        pos = b
        have_city = False
        while pos < end and text[pos] == ",":
            m = regex.compile(r",[ ]?([^,()\[\]]{1,60})").match(text, pos, end)
            if m is None:
                break
            pa, pb = m.start(1), m.end(1)
            while pb > pa and text[pb - 1] in " \t.":
                pb -= 1
            if label_key(text[pa:pb]) in self.table.company_forms:
                out[0] = (out[0][0], pb + (1 if text[pb : pb + 1] == "." else 0), out[0][2])
                pos = m.end()
                continue
            if text[pa : pa + 1].islower():
                job = text[pa:pb]
                if (
                    g.kind == "ORGANIZATION"
                    and len(job.split()) <= 3
                    and not _DIGIT.search(job)
                    and not self._not_value(job)
                    and not any(self._function_word(w) for w in job.split())
                ):
                    out.append((pa, pb, "PROFESSION"))  # "Место работы: ООО «Ромашка», бухгалтер"
                break
            classified = self._classify_part(text, pa, pb, have_city, known_only=True)
            if not classified or classified[-1][1] < pb:
                # a capitalised part the lists do not know: the name goes on ("Acme Corp, Harbour
                # Division"), or it names the town ("Kestrel Logistics Ltd, Ballycoolin")
                part = text[pa:pb]
                if (
                    len(part.split()) > 4
                    or _DIGIT.search(part)
                    or self._generic(part)
                    or any(label_key(w) in self.table.labels for w in part.split())
                    or not all(w[:1].isupper() or w.casefold() in self.connectors for w in part.split())
                ):
                    break
                kind = "CITY" if len(part.split()) == 1 and not out[1:] else out[-1][2]
                out.append((pa, pb, kind))
                pos = m.end()
                continue
            out.extend(classified)
            have_city = have_city or any(lbl == "CITY" for _, _, lbl in classified)
            pos = m.end()
        return out

    def _profession_values(self, text: str, s: int, end: int, g: Group) -> list[tuple[int, int, str]] | None:
        """A profession, then maybe where it is exercised after a comma ("nurse, Lakeshore Care Home")."""
        found = self._words_value(text, s, end, g)
        if found is None:
            return None
        out = [(found[0], found[1], "PROFESSION")]
        m = regex.compile(r",[ ]?(\p{Lu}[^,;()\[\]]{1,60})").match(text, found[1], end)
        if m is not None:
            org = Group(g.id, "ORGANIZATION", None, "words", 6, False, False)
            tail = self._words_value(text, m.start(1), m.end(1), org)
            if tail is not None and all(
                w[:1].isupper() or w.casefold() in self.connectors for w in text[tail[0] : tail[1]].split()
            ):
                out.append((tail[0], tail[1], "ORGANIZATION"))
        return out

    def _words_value(self, text: str, s: int, end: int, g: Group) -> tuple[int, int] | None:
        cut = _COMMA_END.search(text, s, end)
        end = cut.start() if cut and cut.start() > s else end
        end = self._cut_sentence(text, s, end)
        toks = [(m.start(), m.end()) for m in _WORD.finditer(text, s, end)]
        while toks and label_key(text[toks[0][0] : toks[0][1]]) in self.table.skip_words:
            toks.pop(0)
        if not toks:
            return None
        lower = not any(ch.isupper() for ch in text[s:end])
        if g.kind == "PROFESSION" or lower:
            for k in range(1, len(toks)):
                w = text[toks[k][0] : toks[k][1]]
                if g.kind == "PROFESSION" and _DIGIT.search(w):
                    toks = toks[:k]  # "слесарь-ремонтник 4 разряда"
                    break
                # "Bank of ..." but "Koch im ...", and "Etui- und Kassettenerzeugerin"
                keep = g.kind != "PROFESSION" and w.casefold() in self.connectors
                keep = keep or text[toks[k - 1][1] - 1] == "-"
                if w.islower() and not keep and self._function_word(w):
                    toks = toks[:k]
                    break
        elif not (text[toks[0][0]].isupper() or text[toks[0][0]].isdigit()):
            return None
        if len(toks) > g.max_words:
            return None
        a, b = toks[0][0], toks[-1][1]
        while b > a and text[b - 1] in _TOKEN_TRIM:
            b -= 1
        value = text[a:b]
        if not _LETTER.search(value) or self._not_value(value):
            return None
        if (
            g.kind == "HOSPITAL"
            and len(toks) == 1
            and ((value.isupper() and len(value) <= 5) or _SPECIALTY.fullmatch(value) is not None)
        ):
            return None  # "MICU", "OPD", "Pneumologie": a unit or a specialty, not the name of a place
        if g.kind in ("HOSPITAL", "ORGANIZATION", "LOCATION_OTHER") and self._generic(value):
            return None
        if g.kind != "LOCATION_OTHER" and sum(ch.isdigit() for ch in value) > len(value) // 2:
            return None
        return a, b

    def _place_part(self, text: str, a: int, b: int, lower: bool) -> tuple[int, int] | None:
        """The place words at the start of ``[a, b)`` ("Leeds on 3/4" -> "Leeds")."""
        toks = [(m.start(), m.end()) for m in _WORD.finditer(text, a, b)]
        kept: list[tuple[int, int]] = []
        pending: list[tuple[int, int]] = []
        for x, y in toks:
            w = text[x:y].rstrip(_TOKEN_TRIM)
            if not w:
                break
            if kept and w.casefold() in self.connectors:
                pending.append((x, y))
                continue
            label = self.table.labels.get(label_key(w)) if kept else None
            if _DIGIT.search(w) or (
                label is not None
                and label.shape in _CONTACT_SHAPES
                and _CONTACT_AFTER.match(text, x + len(w), min(len(text), y + 4)) is not None
            ):
                break  # "Valencia Tel 96 ...": a contact label without its colon ends the place
            if lower:
                if self._function_word(w):
                    break
            elif not w[0].isupper():
                break
            kept.extend(pending)
            pending = []
            kept.append((x, x + len(w)))
            if len(kept) > 5:
                return None
            if text[x + len(w) : y].startswith(".") and len(w) >= 5:
                break  # "Graz, Steiermark. Die Mutter ...": the sentence ends here
        if not kept or all(
            self._function_word(text[x:y]) or text[x:y].casefold() in self.connectors for x, y in kept
        ):
            return None  # "La coruña": an article is no place
        return kept[0][0], kept[-1][1]

    def _classify_part(
        self, text: str, a: int, b: int, have_city: bool, known_only: bool = False
    ) -> list[tuple[int, int, str]] | None:
        """A part of an address or after a place: postcode, town, region, country. ``known_only``: words
        must be a place the word lists know (or a region code after a town)."""
        part = text[a:b]
        if _ZIP.fullmatch(part):
            return [(a, b, "ZIP")]
        m = _ZIP_FIRST.fullmatch(part)
        if m is not None:
            out = [(a + m.start("zip"), a + m.end("zip"), "ZIP")]
            rest = self._classify_words(text, a + m.start("rest"), b, False)  # "20121 Milano MI"
            return out + (rest or [])
        m = _ZIP_LAST.fullmatch(part)
        if m is not None:
            head = self._classify_words(text, a + m.start("rest"), a + m.end("rest"), have_city, known_only)
            return [*(head or []), (a + m.start("zip"), a + m.end("zip"), "ZIP")]
        return self._classify_words(text, a, b, have_city, known_only)

    def _classify_words(
        self, text: str, a: int, b: int, have_city: bool, known_only: bool = False
    ) -> list[tuple[int, int, str]] | None:
        part = text[a:b]
        if not any(ch.isupper() for ch in part) and any(ch.isupper() for ch in text[max(0, a - 80) : a]):
            known_only = True  # a word in lower case after capitalised address parts ("..., тел.")
        if _DIGIT.search(part) or not (part[:1].isupper() or not any(ch.isupper() for ch in text[a:b])):
            return None
        words = part.split()
        if not words or len(words) > 5:
            return None
        places = self._places
        found = places.lookup(part) if places is not None else None
        if found is None and label_key(part) in self.table.countries:
            found = "countries"
        if found == "countries":
            return [(a, b, "COUNTRY")]
        if found == "states" or (_REGION_CODE.fullmatch(part) and have_city):
            return [(a, b, "STATE")]
        if found == "cities":
            return [(a, b, "CITY")]
        if known_only:
            return None
        if len(words) >= 2 and _REGION_CODE.fullmatch(words[-1]) and not have_city:
            cut = a + part.rindex(words[-1])
            city = self._place_part(text, a, cut, False)
            out = [(city[0], city[1], "CITY")] if city else []
            return [*out, (cut, b, "STATE")]
        span = self._place_part(text, a, b, not any(ch.isupper() for ch in part))
        if span is None:
            return None
        return [(span[0], span[1], "STATE" if have_city else "CITY")]

    def _place_values(
        self, text: str, s: int, end: int, g: Group, line_lower: bool = False
    ) -> list[tuple[int, int, str]]:
        """An address or a place: comma-separated parts, the first of the group's kind, then postcode,
        town, region and country parts recognised by their shape and the word lists."""
        end = self._cut_sentence(text, s, end)
        lead = _WORD.match(text, s, end)
        while lead is not None and lead.group().islower() and self._function_word(lead.group()):
            s = lead.end()  # "проживает в г. Москва"
            while s < end and text[s] in " \t":
                s += 1
            lead = _WORD.match(text, s, end)
        parts: list[tuple[int, int]] = []
        in_paren: set[int] = set()  # parts written in parentheses: only known places ("Solothurn (WG)")
        for m in _ADDRESS_PART.finditer(text[s:end]):
            a, b = s + m.start(), s + m.end()
            while a < b and text[a] in " \t":
                a += 1
            while b > a and text[b - 1] in " \t.":
                b -= 1
            if text[b : b + 1] == "." and label_key(text[a:b].rsplit(None, 1)[-1] if b > a else "") in (
                self._address_words
            ):
                b += 1  # "Московская обл."
            if b > a:
                if m.start() > 0 and text[s + m.start() - 1] in "([":
                    in_paren.add(len(parts))
                parts.append((a, b))
        if not parts:
            return []
        out: list[tuple[int, int, str]] = []
        k = 0
        a, b = parts[0]
        if g.shape == "address":
            while len(parts) > k + 1 and self._care_of(text[a:b]):
                k += 1  # "c/o figlia, Via Po 3": who the mail goes through, not where
                a, b = parts[k]
            marked = self._marked_address(text, parts[k:], {i - k for i in in_paren})
            if marked is not None:
                return marked
            town = self._places.lookup(text[a:b]) if self._places is not None else None
            if town == "cities" and len(parts) > k + 1:
                # "Residenza: Milano (MI), Via Roma 12": the town first, then the street
                out.append((a, b, "CITY"))
                for i in range(k + 1, len(parts)):
                    pa, pb = parts[i]
                    part = text[pa:pb]
                    if i in in_paren and _REGION_CODE.fullmatch(part):
                        out.append((pa, pb, "STATE"))
                    elif _DIGIT.search(part) and not any(lbl == "STREET" for _, _, lbl in out):
                        out.append((pa, pb, "STREET"))
                    else:
                        classified = self._classify_part(text, pa, pb, True, known_only=True)
                        if not classified:
                            break
                        out.extend(classified)
                return out
            if _HOUSE_NUMBER.fullmatch(text[a:b]) and len(parts) > 1:
                b = parts[1][1]  # "48, route d'Arlon"
                k = 1
            cut = self._cut_prose(text, a, b)
            if cut < b:
                rest = _AFTER_FUNCTION_WORD.match(text, cut, b)
                head = text[a:cut]
                town = self._places.lookup(head) if self._places is not None else None
                if rest is not None and town == "cities" and _DIGIT.search(text, rest.end(), b):
                    # "residente a Lecco in Via Volta 12": the town, then the street
                    street = Group(g.id, "STREET", None, "address", g.max_words, False, False)
                    return [(a, cut, "CITY"), *self._place_values(text, rest.end(), end, street)]
                b = cut
                parts = parts[: k + 1]  # prose after the street ("45 kingfisher rd with wife")
            first = text[a:b]
            if not _LETTER.search(first) or len(first.split()) > g.max_words or self._not_value(first):
                return []
            if _ZIP.fullmatch(first):
                out.append((a, b, "ZIP"))
            elif (
                not _DIGIT.search(first)
                and self._places is not None
                and self._places.lookup(first) == "cities"
            ):
                out.append((a, b, "CITY"))  # "residente a Rapallo"
            elif self.table.postcode_first and _ZIP_FIRST.fullmatch(first):
                out.extend(self._classify_part(text, a, b, False) or [(a, b, "STREET")])  # "20121 Milano"
            else:
                out.append((a, b, "STREET"))  # "3318 Coast Meridian Rd" starts like "80331 München"
        else:
            words = text[a:b].split()
            if len(words) > 1 and label_key(words[0]) in self.table.city_words:
                a = a + len(text[a:b]) - len(text[a:b][len(words[0]) :].lstrip())  # "г. Саратов"
            lower = not any(ch.isupper() for ch in text[a:b])
            first = text[a:b]
            known = self._places.lookup(first) if self._places is not None else None
            if lower and not line_lower and known is None and _LETTER.search(first):
                return []  # "Provenienza: ambulatorio": a word, not a place name
            if _ZIP.fullmatch(first):
                out.append((a, b, "ZIP"))  # "Localidad: 45003"
            elif _ZIP_FIRST.fullmatch(first) or _ZIP_LAST.fullmatch(first):
                out.extend(self._classify_part(text, a, b, False) or [])
            elif (_HOUSE_NUMBER_AFTER.search(first) or _HOUSE_NUMBER_BEFORE.match(first)) and not any(
                self._function_word(w) for w in first.split()
            ):
                # "Wohnort: Lindengasse 7, 8010 Graz": an address where a town was expected
                return self._place_values(
                    text, s, end, Group(g.id, "STREET", None, "address", 10, False, False)
                )
            else:
                span = self._place_part(text, a, b, lower)
                if (
                    span is None
                    or self._not_value(text[span[0] : span[1]])
                    or self._generic(text[span[0] : span[1]])
                ):
                    return []
                known = self._places.lookup(text[span[0] : span[1]]) if self._places is not None else None
                kind = g.kind or "CITY"
                if known == "countries" or (known == "states" and kind != "CITY"):
                    kind = "COUNTRY" if known == "countries" else "STATE"  # "lebt in Portugal"
                out.append((span[0], span[1], kind))
                if span[1] < b:
                    return out  # the part went on with something else: stop there
        have_city = any(lbl == "CITY" for _, _, lbl in out)
        for i in range(k + 1, len(parts)):
            a, b = parts[i]
            if self._not_value(text[a:b]):
                break
            part = text[a:b]
            if (
                out
                and out[-1][2] == "STREET"
                and _DIGIT.search(part)
                and len(part.split()) <= 4
                and not (_ZIP.fullmatch(part) or _ZIP_FIRST.fullmatch(part) or _ZIP_LAST.fullmatch(part))
            ):
                out[-1] = (out[-1][0], b, "STREET")  # "..., Apt 2C", "..., 3rd floor"
                continue
            known_only = g.shape != "address" or i in in_paren
            if i in in_paren and have_city and _REGION_CODE.fullmatch(part):
                out.append((a, b, "STATE"))  # "Sestri Levante (GE)"
                continue
            classified = self._classify_part(text, a, b, have_city, known_only)
            if not classified:
                break
            out.extend(classified)
            have_city = have_city or any(lbl == "CITY" for _, _, lbl in classified)
        return out
