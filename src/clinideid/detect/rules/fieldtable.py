"""Form-field tables: the labels a form writes in one language, and what kind of PHI each label's value is.

A table is YAML data (``fields/<lang>.yaml``, or a file of the user's): groups of labels ("DOB", "Date of
birth", "Geb.") mapped to the canonical label of their value (``DATE`` with a role, ``PATIENT``, ``CITY``,
...) or to ``none`` (labels whose value is never PHI: "Sex", "Diagnosis"; they still end the value of the
field before them), plus the words a value is checked against (titles, kinship and role words, "unknown").
``formfields`` turns a compiled table into the matcher of ``kind: fields`` rules; ``packs/README.md``
documents the format for table authors.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinideid.detect.rules.loader import YamlKind, read_yaml_file
from clinideid.errors import ConfigError

TABLES_PACKAGE = "clinideid.detect.rules"
TABLES_DIR = "fields"
NOT_PHI = "none"
ROLES = ("birth", "admission", "discharge", "other")
SHAPES = (
    "name",
    "date",
    "phone",
    "id",
    "number",
    "token",
    "email",
    "words",
    "place",
    "address",
    "zip",
    "age",
)

#: the shape of a value when the group does not say (by canonical label)
DEFAULT_SHAPES: dict[str, str] = {
    "PATIENT": "name",
    "DOCTOR": "name",
    "PERSON": "name",
    "DATE": "date",
    "PHONE": "phone",
    "FAX": "phone",
    "EMAIL": "email",
    "URL": "token",
    "IPADDR": "token",
    "USERNAME": "token",
    "SSN": "id",
    "MEDICALRECORD": "id",
    "HEALTHPLAN": "id",
    "ACCOUNT": "id",
    "LICENSE": "id",
    "IDNUM": "id",
    "DEVICE": "id",
    "VEHICLE": "id",
    "BIOID": "id",
    "STREET": "address",
    "CITY": "place",
    "STATE": "place",
    "COUNTRY": "place",
    "ZIP": "zip",
    "AGE": "age",
    "LOCATION_OTHER": "number",
}
NAME_LABELS = frozenset({"PATIENT", "DOCTOR", "PERSON"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ThenSpec(_Strict):
    words: list[str] = Field(min_length=1)
    group: str


class FieldGroup(_Strict):
    """Labels whose value is one kind of PHI (or ``none``)."""

    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-]+$", min_length=1, max_length=60)]
    kind: str
    description: str | None = None
    #: DATE only: what the date is (birth dates get their own treatment downstream)
    role: Literal["birth", "admission", "discharge", "other"] | None = None
    #: labels followed by ':' or '=' (case, accents, dots and the spacing inside a label may vary)
    labels: list[str] = Field(default_factory=list)
    #: labels that also work without ':' ("DOB 11 June 1949", "born 3/4/1950"); the value must then have
    #: the kind's shape. ``true``: every label of the group
    bare: bool | list[str] = False
    #: labels matched only in the case written ("ID", "CC"), with or without ':'
    exact: list[str] = Field(default_factory=list)
    #: how the value is read and checked; default by kind (see ``DEFAULT_SHAPES``; else ``words``)
    shape: Literal[SHAPES] | None = None  # type: ignore[valid-type]
    #: the most words a ``words``/``place``/``name`` value may have (a longer one is prose, not a value)
    max_words: int | None = Field(None, ge=1, le=20)
    #: several names in one value ("cc: Dr A Lee, Dr B Roe")
    many: bool = False
    #: a name here needs a title or a word the name lists know (a letter's subject line is often a topic)
    require_known: bool = False
    #: the label says the value is a name ("Surname:", "Apellidos:"): any capitalised words are its words,
    #: known or not, common or not
    lenient: bool = False
    #: a second value brought by a word right after this one: ``{words: [il], group: birth_date}`` reads
    #: "nato a Pavia il 3/4/1950" as a birth place, then a birth date
    then: list[ThenSpec] = Field(default_factory=list)
    #: the kind of a value that does not have the group's shape ("Born: Leeds" is a place of birth)
    fallback: Literal["CITY", "COUNTRY", "HOSPITAL", "ORGANIZATION", "LOCATION_OTHER"] | None = None
    #: search the names found here in the rest of the document (default: true for names)
    propagate: bool | None = None

    @model_validator(mode="after")
    def _has_labels(self) -> FieldGroup:
        bare = self.bare if isinstance(self.bare, list) else []
        if not self.labels and not bare and not self.exact:
            raise ValueError("a field group needs 'labels', 'bare' or 'exact'")
        if self.role is not None and self.kind != "DATE":
            raise ValueError("'role' is only for kind DATE")
        return self


class FieldTableFile(_Strict):
    """One table file as written by its author."""

    language: str | None = None
    description: str | None = None
    include: list[str] = Field(default_factory=list)
    #: a capitalised word is a name word when the name lists know it or it is rarer than this (Zipf); in a
    #: language that capitalises its nouns (German) keep it low
    name_zipf: float = Field(4.5, ge=0, le=8)
    #: a capitalised word after name words goes on with the name unless it is at least this frequent
    name_goes_on_zipf: float = Field(6.0, ge=0, le=8)
    #: a name of one word, with no title before it, must be a known name or rarer than this (0: known only)
    lone_name_zipf: float = Field(3.0, ge=0, le=8)
    #: a place or organisation value made only of words at least this frequent is generic ("Notaufnahme",
    #: "Emergency Department"), not a name (0: no such check)
    generic_zipf: float = Field(0, ge=0, le=8)
    #: stripped from the start of a name value ("Dr", "Mrs", "Herr", "Sig.ra")
    titles: list[str] = Field(default_factory=list)
    #: stripped from the start of a name or word value: kinship and role words, "retired", "former"
    skip_words: list[str] = Field(default_factory=list)
    #: a value that is one of these is no PHI ("unknown", "n/a", "keine", "нет")
    null_values: list[str] = Field(default_factory=list)
    #: a value that starts with one of these is no PHI (national bodies: "NHS", "Medicare")
    not_values: list[str] = Field(default_factory=list)
    #: end a name value ("MD", "RN", "PhD")
    credentials: list[str] = Field(default_factory=list)
    #: may stand inside a name ("van", "de la")
    connectors: list[str] = Field(default_factory=list)
    #: a word before a ':' that means "number" ("No", "Nr", "#"): "Policy No:" is the label "Policy"
    number_marks: list[str] = Field(default_factory=list)
    #: addresses write the postcode before the town ("80331 München", "20121 Milano"), not a house number
    postcode_first: bool = False
    #: short or other names of countries the packaged country list may lack ("UK", "USA", "BRD")
    countries: list[str] = Field(default_factory=list)
    #: legal forms that end a company name after a comma ("Inc.", "GmbH", "S.p.A.", "ООО")
    company_forms: list[str] = Field(default_factory=list)
    #: prepositions, conjunctions, articles, pronouns, auxiliaries: prose, not a profession or a place
    function_words: list[str] = Field(default_factory=list)
    #: words that bring another name of the same person after a name ("aka", "née", "geb.", "dit")
    alias_words: list[str] = Field(default_factory=list)
    #: address parts by their marker words, in any order ("г. Москва, ул. Ленина, д. 5, кв. 12"): a street
    #: ("ул.", "Via", "rue", "Street"; ``street_suffixes`` end a street word: "-straße"), a house or flat
    #: ("д.", "кв.", "Apt"), a town ("г.", "пос."), a region ("обл.", "County")
    street_words: list[str] = Field(default_factory=list)
    street_suffixes: list[str] = Field(default_factory=list)
    house_words: list[str] = Field(default_factory=list)
    city_words: list[str] = Field(default_factory=list)
    region_words: list[str] = Field(default_factory=list)
    #: a word after a year that belongs to the date ("г.", "года")
    year_words: list[str] = Field(default_factory=list)
    fields: list[FieldGroup] = Field(default_factory=list)


# ---- label keys ---------------------------------------------------------------------------------------------

_KEY_DROP = regex.compile(r"[.]")
_KEY_SPACE = regex.compile(r"[\s\-_/\\]+")


@lru_cache(maxsize=65536)
def label_key(text: str) -> str:
    """The form under which labels are compared: no accents, case-folded, no dots, '-', '/' and runs of
    spaces as one space ("D.O.B." = "dob", "Fall-Nr." = "fall nr", "Nº" = "N°" = "no")."""
    decomposed = unicodedata.normalize("NFKD", text)
    # accents and invisible format characters (a byte-order mark, zero-width spaces) go
    plain = "".join(c for c in decomposed if not unicodedata.combining(c) and unicodedata.category(c) != "Cf")
    plain = plain.casefold().replace("’", "'").replace("°", "o")
    plain = _KEY_DROP.sub("", plain)
    return _KEY_SPACE.sub(" ", plain).strip()


# ---- compiled table -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """One compiled field group."""

    id: str
    kind: str | None  # canonical label, or None for ``none``
    role: str | None
    shape: str
    max_words: int
    many: bool
    propagate: bool
    fallback: str | None = None
    require_known: bool = False
    lenient: bool = False
    #: (words, group id) pairs: see ``FieldGroup.then``
    then: tuple[tuple[tuple[str, ...], str], ...] = ()


@dataclass(frozen=True)
class FieldTable:
    """A table with its includes merged, ready for the matcher."""

    origin: str
    language: str | None
    groups: tuple[Group, ...]
    #: label key -> group (labels followed by ':')
    labels: dict[str, Group]
    #: label key -> group, for labels that also work without ':'
    bare: dict[str, Group]
    #: exact spelling -> group
    exact: dict[str, Group]
    #: the labels of ``bare`` as written in the table (the matcher searches for them in the text)
    bare_forms: tuple[str, ...]
    titles: frozenset[str]
    skip_words: frozenset[str]
    null_values: frozenset[str]
    not_values: tuple[str, ...]
    credentials: frozenset[str]
    connectors: frozenset[str]
    number_marks: frozenset[str]
    countries: frozenset[str]
    company_forms: frozenset[str]
    function_words: frozenset[str]
    alias_words: tuple[str, ...]
    street_words: frozenset[str]
    street_suffixes: tuple[str, ...]
    house_words: frozenset[str]
    city_words: frozenset[str]
    region_words: frozenset[str]
    year_words: frozenset[str]
    #: label keys without their spaces ("visitno", "fallnr"): labels a scan or a typist glued together
    glued: dict[str, Group]
    name_zipf: float = 4.5
    name_goes_on_zipf: float = 6.0
    lone_name_zipf: float = 3.0
    generic_zipf: float = 0.0
    postcode_first: bool = False

    def group(self, group_id: str) -> Group | None:
        """The group ``group_id`` (None if the table has none)."""
        for g in self.groups:
            if g.id == group_id:
                return g
        return None

    @property
    def label_words(self) -> frozenset[str]:
        """The last word of every label key (a cheap first check before a label lookup)."""
        return frozenset(k.rsplit(" ", 1)[-1] for k in (*self.labels, *self.bare))


def _default_max_words(kind: str | None, shape: str) -> int:
    if shape == "name":
        return 6
    if shape in ("place", "address"):
        return 10
    if kind == "PROFESSION":
        return 6
    return 8


def _group(spec: FieldGroup, where: str) -> Group:
    from clinideid.labels import canonical

    kind: str | None = spec.kind
    if spec.kind == NOT_PHI:
        kind = None
    elif spec.kind not in canonical():
        raise ConfigError(
            f"{where}, group {spec.id!r}: unknown kind {spec.kind!r}; use a canonical label "
            f"({', '.join(canonical().labels)}) or {NOT_PHI!r}"
        )
    shape = spec.shape or (DEFAULT_SHAPES.get(kind, "words") if kind else "words")
    propagate = spec.propagate if spec.propagate is not None else kind in NAME_LABELS
    return Group(
        id=spec.id,
        kind=kind,
        role=spec.role,
        shape=shape,
        max_words=spec.max_words or _default_max_words(kind, shape),
        many=spec.many,
        propagate=bool(propagate) and kind is not None,
        fallback=spec.fallback,
        require_known=spec.require_known,
        lenient=spec.lenient,
        then=tuple((tuple(t.words), t.group) for t in spec.then),
    )


def available_tables() -> list[str]:
    """Names of the packaged field tables."""
    folder = resources.files(TABLES_PACKAGE).joinpath(TABLES_DIR)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def _read(ref: str, base: Path | None) -> tuple[FieldTableFile, str, Path | None, str]:
    kind = YamlKind(
        "field table", TABLES_DIR, available_tables, "'fields'", FieldTableFile, origin_prefix="fields/"
    )
    return read_yaml_file(ref, base, kind)


def _files(ref: str, base: Path | None, stack: tuple[str, ...]) -> list[tuple[FieldTableFile, str]]:
    """The table ``ref`` and everything it includes, included ones first."""
    spec, origin, folder, key = _read(ref, base)
    if key in stack:
        raise ConfigError(f"field table {origin} includes itself: {' -> '.join((*stack, key))}")
    out: list[tuple[FieldTableFile, str]] = []
    for inc in spec.include:
        out.extend(_files(inc, folder, (*stack, key)))
    out.append((spec, origin))
    return out


def build_table(refs: list[str], base: Path | None = None) -> FieldTable:
    """One table from the tables ``refs`` (names or paths, relative to ``base``) and their includes.

    A group with the id of an earlier group replaces it; word lists add up."""
    files: list[tuple[FieldTableFile, str]] = []
    for ref in refs:
        files.extend(_files(ref, base, ()))
    groups: dict[str, tuple[FieldGroup, str]] = {}
    words: dict[str, set[str]] = {
        k: set()
        for k in (
            "titles",
            "skip_words",
            "null_values",
            "not_values",
            "credentials",
            "connectors",
            "number_marks",
            "countries",
            "company_forms",
            "function_words",
            "alias_words",
            "street_words",
            "street_suffixes",
            "house_words",
            "city_words",
            "region_words",
            "year_words",
        )
    }
    language = None
    postcode_first = False
    zipf = {"name_zipf": 4.5, "name_goes_on_zipf": 6.0, "lone_name_zipf": 3.0, "generic_zipf": 0.0}
    for spec, origin in files:
        language = spec.language or language
        for k in zipf:
            if k in spec.model_fields_set:
                zipf[k] = getattr(spec, k)
        if "postcode_first" in spec.model_fields_set:
            postcode_first = spec.postcode_first
        for g in spec.fields:
            groups.pop(g.id, None)
            groups[g.id] = (g, origin)
        for k, bucket in words.items():
            bucket.update(getattr(spec, k))
    origin = files[-1][1] if files else "fields"
    for spec_group, where in groups.values():
        for t in spec_group.then:
            if t.group not in groups:
                raise ConfigError(
                    f"field table {where}, group {spec_group.id!r}: 'then' names unknown group {t.group!r}"
                )
    compiled: list[Group] = []
    labels: dict[str, Group] = {}
    bare: dict[str, Group] = {}
    exact: dict[str, Group] = {}
    bare_forms: dict[str, None] = {}
    # later groups win a label written in two groups (a language table over the common one)
    for spec_group, where in groups.values():
        g = _group(spec_group, f"field table {where}")
        compiled.append(g)
        bare_list = spec_group.labels if spec_group.bare is True else (spec_group.bare or [])
        for label in [*spec_group.labels, *bare_list]:
            key = label_key(label)
            if not key:
                raise ConfigError(f"field table {where}, group {g.id!r}: empty label {label!r}")
            labels[key] = g
        for label in bare_list:
            bare[label_key(label)] = g
            bare_forms[label.strip()] = None
        for label in spec_group.exact:
            exact[label.strip()] = g
    return FieldTable(
        origin=origin,
        language=language,
        groups=tuple(compiled),
        labels=labels,
        bare=bare,
        exact=exact,
        bare_forms=tuple(bare_forms),
        titles=frozenset(label_key(w) for w in words["titles"]),
        skip_words=frozenset(label_key(w) for w in words["skip_words"]),
        null_values=frozenset(label_key(w) for w in words["null_values"]),
        not_values=tuple(sorted({label_key(w) for w in words["not_values"]}, key=len, reverse=True)),
        credentials=frozenset(label_key(w) for w in words["credentials"]),
        connectors=frozenset(w.casefold() for w in words["connectors"]),
        number_marks=frozenset(label_key(w) for w in words["number_marks"]),
        countries=frozenset(label_key(w) for w in words["countries"]),
        company_forms=frozenset(label_key(w) for w in words["company_forms"]),
        function_words=frozenset(w.casefold() for w in words["function_words"]),
        alias_words=tuple(sorted(words["alias_words"])),
        street_words=frozenset(label_key(w) for w in words["street_words"]),
        street_suffixes=tuple(sorted({label_key(w) for w in words["street_suffixes"]})),
        house_words=frozenset(label_key(w) for w in words["house_words"]),
        city_words=frozenset(label_key(w) for w in words["city_words"]),
        region_words=frozenset(label_key(w) for w in words["region_words"]),
        year_words=frozenset(label_key(w) for w in words["year_words"]),
        glued={k.replace(" ", ""): g for k, g in labels.items() if " " in k},
        postcode_first=postcode_first,
        **zipf,
    )


@lru_cache(maxsize=32)
def packaged_table(*refs: str) -> FieldTable:
    """``build_table`` for packaged table names, cached."""
    return build_table(list(refs))
