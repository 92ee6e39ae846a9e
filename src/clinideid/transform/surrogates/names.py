"""Person-name surrogates built per name *part*, so every written variant of a name maps consistently.

"John Smith", "J. Smith", "Mr Smith", "SMITH" and "Smith, John" become "Peter Jones", "P. Jones",
"Mr Jones", "JONES" and "Jones, Peter": the first name is keyed by its own normalised form, the surname by
its own; an initial becomes the initial of the surrogate of the full first name written elsewhere in the
document with the same surname (else a keyed letter); titles and particles are kept; each part keeps its
case pattern (UPPER / Title / lower). The surrogate first name has the gender of the original, found in
the first-name lists. Russian names keep patronymics (Иванович -> Петрович), and each part takes the case
and gender of the name it replaces ("врачом Петровой" -> "врачом Смирновой"; see ``ru_morph``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from clinideid.transform.base import OperatorContext
from clinideid.transform.keys import KeyedRandom
from clinideid.transform.surrogates import ru_morph
from clinideid.transform.surrogates.base import (
    SurrogateGenerator,
    SurrogateRequest,
    SurrogateUnavailable,
    pick_distinct,
)
from clinideid.transform.surrogates.lists import LIST_LANGUAGES, list_language, membership, surrogate_values
from clinideid.transform.textcase import (
    CYRILLIC_LOWER,
    LATIN_LOWER,
    apply_case,
    case_pattern,
    is_cyrillic,
    normalize,
    strip_accents,
)

NAME_LABELS = ("PATIENT", "DOCTOR", "PERSON", "FAMILY")

TITLES = frozenset(
    {
        "mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame", "rev", "nurse",
        "sr", "sra", "srta", "dna", "don", "dona", "dra", "lic", "lcdo", "lcda",
        "sig", "sigra", "sig.ra", "signor", "signora", "dott", "dottssa", "dott.ssa", "dottor", "dottore",
        "dottoressa", "prof.ssa", "mme", "mlle", "mr.", "pr", "docteur", "monsieur", "madame",
        "herr", "frau", "hr", "fr", "doktor",
        "г-н", "г-жа", "гн", "гжа", "госпожа", "господин", "д-р", "др", "проф", "тов",
    }
)  # fmt: skip
FEMALE_TITLES = frozenset(
    {"mrs", "ms", "miss", "dame", "sra", "srta", "dna", "dona", "dra", "sigra", "sig.ra", "signora",
     "dottssa", "dott.ssa", "dottoressa", "prof.ssa", "mme", "mlle", "madame", "frau", "fr", "г-жа", "гжа",
     "госпожа"}
)  # fmt: skip
PARTICLES = frozenset(
    {"de", "del", "della", "la", "las", "los", "le", "van", "von", "der", "den", "ter", "ten", "di", "da",
     "dos", "das", "du", "des", "y", "e", "bin", "ibn", "al", "el", "zu", "af", "av"}
)  # fmt: skip

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_PATRONYMIC = re.compile(r"(ович|евич|ич|овна|евна|ична|инична)$", re.IGNORECASE)
#: a patronymic in any case ("Ивановича", "Петровичем", "Ивановны", "Ильиничной")
_PATRONYMIC_ANY = re.compile(
    r"(?:ович|евич|ьич|ич)(?:а|у|ем|е)?$|(?:овн|евн|ичн)(?:а|ы|е|у|ой|ою)$", re.IGNORECASE
)
_RU_FEMININE_SURNAME = re.compile(r"(ов|ев|ёв|ин|ын)а$|(ск|цк)ая$", re.IGNORECASE)

Role = Literal["first", "surname", "patronymic", "initial", "title", "particle"]


@dataclass
class _Unit:
    """A word, a hyphenated compound ("Jean-Pierre") or an initial, with its position in the text."""

    start: int
    end: int
    words: list[tuple[int, int]]  # the letter runs inside the unit
    text: str
    role: Role | None = None


@dataclass
class ParsedName:
    text: str
    units: list[_Unit] = field(default_factory=list)

    def words(self, role: Role) -> list[str]:
        return [u.text for u in self.units if u.role == role]


#: one-letter abbreviations that are titles in a language ("D. José", "M. Dupont"), not initials
SHORT_TITLES = {"es": frozenset({"d"}), "fr": frozenset({"m"})}


def _is_title(unit: _Unit, text: str, language: str) -> bool:
    norm = normalize(unit.text)
    if len(norm) == 1:
        return norm in SHORT_TITLES.get(language, frozenset()) and text[unit.end : unit.end + 1] == "."
    return norm in TITLES


def _units(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    for m in _WORD.finditer(text):
        if units and text[units[-1].end : m.start()] in ("-", "‐") and units[-1].role is None:
            last = units[-1]
            last.end = m.end()
            last.words.append((m.start(), m.end()))
            last.text = text[last.start : last.end]
            continue
        units.append(_Unit(m.start(), m.end(), [(m.start(), m.end())], m.group()))
    return units


def _lang_for(word: str, language: str) -> str:
    """The list language for a word: its script decides between Russian and the document's language."""
    cyr = is_cyrillic(word)
    lang = list_language(language)
    if cyr and lang != "ru":
        return "ru"
    if not cyr and lang == "ru":
        return "en"
    return lang


@cache
def _first_names(lang: str) -> tuple[frozenset[str], frozenset[str]]:
    return membership(lang, "first_names_female"), membership(lang, "first_names_male")


def _is_first_name(norm: str, lang: str) -> bool:
    female, male = _first_names(lang)
    return norm in female or norm in male


def _is_surname(norm: str, lang: str) -> bool:
    return norm in membership(lang, "surnames")


def _only_surname(word: str, lang: str) -> bool:
    """A word the lists (or, in Russian, the dictionary) know as a surname and not as a first name."""
    norm = normalize(word)
    if _is_surname(norm, lang) and not _is_first_name(norm, lang):
        return True
    return lang == "ru" and bool(ru_morph.forms(word, "surname")) and not ru_morph.forms(word, "first")


def _only_first_name(word: str, lang: str) -> bool:
    norm = normalize(word)
    if _is_first_name(norm, lang) and not _is_surname(norm, lang):
        return True
    return lang == "ru" and bool(ru_morph.forms(word, "first")) and not ru_morph.forms(word, "surname")


def gender_of(first_name: str, language: str) -> Literal["female", "male"] | None:
    """The gender of a first name according to the lists (document language first, then all others)."""
    norm = normalize(first_name)
    lang = _lang_for(first_name, language)
    for candidate in (lang, *[x for x in LIST_LANGUAGES if x != lang]):
        if is_cyrillic(first_name) != (candidate == "ru"):
            continue
        female, male = _first_names(candidate)
        in_f, in_m = norm in female, norm in male
        if in_f != in_m:
            return "female" if in_f else "male"
        if in_f and in_m:
            return None
    return None


def _undotted_initials(unit: _Unit, units: Sequence[_Unit]) -> bool:
    """Two Cyrillic capitals beside a word with lowercase letters ("Петрова ЕВ", "ИИ Иванов")."""
    text = unit.text
    if len(units) < 2 or len(unit.words) != 1 or len(text) != 2 or not text.isupper() or not is_cyrillic(text):
        return False
    return any(u is not unit and any(c.islower() for c in u.text) for u in units)


def parse_name(text: str, language: str = "en") -> ParsedName:
    """Split a written name into titles, particles, initials, first names, surnames and patronymics."""
    parsed = ParsedName(text, _units(text))
    units = parsed.units
    lang = list_language(language)
    for i, unit in enumerate(units):
        norm = normalize(unit.text)
        if _is_title(unit, text, lang) and i < len(units) - 1:
            unit.role = "title"
        elif len(unit.words) == 1 and unit.end - unit.start == 1:
            unit.role = "initial"
        elif _undotted_initials(unit, units):
            unit.role = "initial"  # "Иванов ИИ", "ИИ Иванов": two initials written without dots
        elif norm in PARTICLES and unit.text.islower() and 0 < i < len(units) - 1:
            unit.role = "particle"
        elif is_cyrillic(unit.text) and len(unit.text) > 5 and _PATRONYMIC_ANY.search(unit.text):
            unit.role = "patronymic"
    names = [u for u in units if u.role is None]
    if not names:
        return parsed
    comma = text.find(",")
    if comma != -1 and any(u.end <= comma for u in names) and any(u.start > comma for u in names):
        for u in names:  # "Smith, John"
            u.role = "surname" if u.end <= comma else "first"
        return parsed
    patronymic = next((u for u in units if u.role == "patronymic"), None)
    if patronymic is not None:  # "Иванов Иван Иванович" / "Иван Иванович Иванов"
        before = [u for u in names if u.end <= patronymic.start]
        given = before[-1] if before else None
        for u in names:
            u.role = "first" if u is given else "surname"
        return parsed
    if len(names) == 1:
        (only,) = names
        has_prefix = any(u.role in ("title", "initial") for u in units)
        norm = normalize(only.text)
        wlang = _lang_for(only.text, lang)
        is_first = _is_first_name(norm, wlang) and not _is_surname(norm, wlang)
        only.role = "first" if (is_first and not has_prefix) else "surname"
        return parsed
    first, last = names[0], names[-1]
    fl, ll = _lang_for(first.text, lang), _lang_for(last.text, lang)
    reversed_order = _only_surname(first.text, fl) and _only_first_name(last.text, ll)
    if reversed_order:  # "Smith John", "Иванов Иван"
        for u in names:
            u.role = "first" if u is last else "surname"
        return parsed
    first.role = "first"
    for u in names[1:]:
        ul = _lang_for(u.text, lang)
        middle = (
            u is not last and _is_first_name(normalize(u.text), ul) and not _is_surname(normalize(u.text), ul)
        )
        u.role = "first" if middle else "surname"
    return parsed


# --- per-part surrogates ----------------------------------------------------------------------------------


def _pick_inflected(
    rng: KeyedRandom, pool: Sequence[str], original: str, role: str, form: ru_morph.Form
) -> str | None:
    """A keyed choice from ``pool`` (not ``original``) put into ``form``; ``None`` if none inflects.

    Names the dictionary knows are preferred (their endings are certain); after 32 tries any name that
    inflects will do."""
    banned = normalize(original)
    for attempt in range(64):
        choice = rng.choice(pool)
        if normalize(choice) == banned:
            continue
        out = ru_morph.inflect(choice, role, form, known_only=attempt < 32)
        if out is not None:
            return out
    return None


def _ru_first_name(word: str, req: SurrogateRequest, form: ru_morph.Form) -> str | None:
    lemma = ru_morph.lemma(word, "first")
    if lemma is None:
        return None
    gender = form[0]  # read from all parts of the name: "Мамедова Севиль Рауфовна" is a woman
    pool = surrogate_values("ru", "first_names_female" if gender == "femn" else "first_names_male")
    out = _pick_inflected(req.rng("first_name", normalize(lemma)), pool, lemma, "first", (gender, form[1]))
    return None if out is None else apply_case(out, case_pattern(word))


def first_name_surrogate(word: str, req: SurrogateRequest, form: ru_morph.Form | None = None) -> str:
    """The keyed surrogate of one first name, same gender and case pattern (and, in Russian, the case of
    ``form``: "Марии" -> "Анны", keyed by the nominative so "Мария" -> "Анна")."""
    if form is not None and is_cyrillic(word):
        done = _ru_first_name(word, req, form)
        if done is not None:
            return done
    norm = normalize(word)
    lang = _lang_for(word, req.language)
    gender = gender_of(word, req.language)
    if gender is None:
        gender = "female" if req.rng("gender", norm).randbelow(2) else "male"
    pool = surrogate_values(lang, f"first_names_{gender}")
    return apply_case(pick_distinct(req.rng("first_name", norm), pool, word), case_pattern(word))


def _ru_masculine_base(norm: str) -> tuple[str, bool]:
    """("иванов", True) for "иванова": the masculine form a feminine surname is keyed by."""
    m = _RU_FEMININE_SURNAME.search(norm)
    if m is None:
        return norm, False
    if m.group(1):
        return norm[:-1], True
    return norm[:-2] + "ий", True


def _ru_feminine(surname: str) -> str:
    if re.search(r"(ов|ев|ёв|ин|ын)$", surname):
        return surname + "а"
    if re.search(r"(ск|цк)ий$", surname):
        return surname[:-2] + "ая"
    return surname


def _ru_surname(word: str, req: SurrogateRequest, form: ru_morph.Form) -> str | None:
    lemma = ru_morph.lemma(word, "surname")
    if lemma is None:
        return None
    pool = ru_morph.same_class(surrogate_values("ru", "surnames"), lemma)
    out = _pick_inflected(req.rng("surname", normalize(lemma)), pool, lemma, "surname", form)
    return None if out is None else apply_case(out, case_pattern(word))


def surname_surrogate(word: str, req: SurrogateRequest, form: ru_morph.Form | None = None) -> str:
    """The keyed surrogate of one surname. Russian surnames are keyed by their masculine nominative, so a
    family ("Иванов", "Иванова", "Ивановым") keeps one surrogate root, and take the gender and case of
    ``form`` ("Петровой" -> "Смирновой")."""
    if form is not None and is_cyrillic(word):
        done = _ru_surname(word, req, form)
        if done is not None:
            return done
    norm = normalize(word)
    lang = _lang_for(word, req.language)
    feminine = False
    if lang == "ru":
        norm, feminine = _ru_masculine_base(norm)
    pool = surrogate_values(lang, "surnames")
    choice = pick_distinct(req.rng("surname", norm), pool, norm)
    if feminine:
        choice = _ru_feminine(choice)
    return apply_case(choice, case_pattern(word))


def _patronymic_base(norm: str) -> tuple[str, bool]:
    m = _PATRONYMIC.search(norm)
    assert m is not None
    return norm[: m.start()], m.group(1).endswith("на")


def patronymic_surrogate(word: str, req: SurrogateRequest, form: ru_morph.Form | None = None) -> str:
    """Иванович -> Петрович and Ивановна -> Петровна: keyed by the father's name both carry; in the case
    of ``form`` ("Ивановны" -> "Петровны", "Ивановичем" -> "Петровичем")."""
    pool = [p for p in surrogate_values("ru", "patronymics") if p.endswith("ич")]
    if not pool:
        raise SurrogateUnavailable
    lemma = ru_morph.lemma(word, "patronymic") if form is not None else None
    if lemma is not None and _PATRONYMIC.search(lemma):
        father = _patronymic_base(normalize(lemma))[0]
        gender = "femn" if re.search(r"(овн|евн|ичн)", normalize(word)) else form[0]  # type: ignore[index]
        out = _pick_inflected(req.rng("patronymic", father), pool, lemma, "patronymic", (gender, form[1]))  # type: ignore[index]
        if out is not None:
            return apply_case(out, case_pattern(word))
    if not _PATRONYMIC.search(normalize(word)):
        raise SurrogateUnavailable
    father, female = _patronymic_base(normalize(word))
    choice = pick_distinct(req.rng("patronymic", father), pool, normalize(word)[: len(father)] + "ич")
    if female:
        choice = re.sub(r"ич$", "на", choice) if re.search(r"(ов|ев)ич$", choice) else choice[:-2] + "ична"
    return apply_case(choice, case_pattern(word))


def initial_surrogate(letter: str, req: SurrogateRequest) -> str:
    """A keyed letter for an initial with no full first name to follow (same script and case)."""
    alphabet = CYRILLIC_LOWER if is_cyrillic(letter) else LATIN_LOWER
    norm = strip_accents(letter).lower()
    rng = req.rng("initial", norm)
    for _ in range(64):
        choice = rng.choice(alphabet)
        if choice != norm:
            return choice.upper() if letter.isupper() else choice
    raise SurrogateUnavailable


# --- initials resolved against the document's other names ------------------------------------------------

_CACHE: list[tuple[OperatorContext, dict[tuple[str, str], set[str]]]] = []


def _document_first_names(ctx: OperatorContext) -> dict[tuple[str, str], set[str]]:
    """(normalised surname, initial) -> full first names written with that surname in the document."""
    cached = _CACHE[0] if _CACHE else None  # one snapshot: safe across threads
    if cached is not None and cached[0] is ctx:
        return cached[1]
    table: dict[tuple[str, str], set[str]] = {}
    for span in ctx.spans:
        if span.label not in NAME_LABELS:
            continue
        parsed = parse_name(ctx.span_text(span), ctx.language)
        firsts = parsed.words("first")
        for surname in parsed.words("surname"):
            for first in firsts:
                initial = strip_accents(first[0]).lower()
                table.setdefault((_surname_key(surname, ctx.language), initial), set()).add(first)
    _CACHE[:] = [(ctx, table)]
    return table


_ROLE_CACHE: list[tuple[OperatorContext, dict[str, Role]]] = []


def _document_roles(ctx: OperatorContext) -> dict[str, Role]:
    """Normalised name word -> its role ("first"/"surname") where the document writes it in a full name.

    A lone "JOHN" or "Miller" elsewhere in the note then keeps the role it has in "John Miller", so it maps
    to the same surrogate part.
    """
    cached = _ROLE_CACHE[0] if _ROLE_CACHE else None
    if cached is not None and cached[0] is ctx:
        return cached[1]
    roles: dict[str, Role] = {}
    for span in ctx.spans:
        if span.label not in NAME_LABELS:
            continue
        parsed = parse_name(ctx.span_text(span), ctx.language)
        if len([u for u in parsed.units if u.role in ("first", "surname")]) < 2:
            continue
        for role in ("first", "surname"):
            for word in parsed.words(role):
                roles.setdefault(normalize(word), role)
    _ROLE_CACHE[:] = [(ctx, roles)]
    return roles


def _surname_key(word: str, language: str) -> str:
    norm = normalize(word)
    if not is_cyrillic(word):
        return norm
    lemma = ru_morph.lemma(word, "surname")
    return normalize(lemma) if lemma is not None else _ru_masculine_base(norm)[0]


def _resolve_initial(letter: str, surnames: Sequence[str], req: SurrogateRequest) -> str:
    table = _document_first_names(req.ctx)
    norm_letter = strip_accents(letter).lower()
    candidates: dict[str, str] = {}
    for surname in surnames:
        for first in table.get((_surname_key(surname, req.language), norm_letter), ()):
            candidates.setdefault(normalize(first), first)
    if len(candidates) == 1:
        (first,) = candidates.values()
        new = first_name_surrogate(first, req)[0]
        return new.upper() if letter.isupper() else new.lower()
    return initial_surrogate(letter, req)


# --- the generator ------------------------------------------------------------------------------------------


def _russian_form(parsed: ParsedName, req: SurrogateRequest) -> ru_morph.Form | None:
    """The (gender, case) of a Cyrillic name, read from its parts and the word before it."""
    parts = [(u.text, u.role) for u in parsed.units if u.role in ru_morph.ROLE_TAGS and is_cyrillic(u.text)]
    if not parts:
        return None
    context = ru_morph.context_before(req.ctx.document.text, req.span.start)
    return ru_morph.name_form(parts, context)


#: a zero scanned for the letter "о" inside a Cyrillic word ("Смирн0ва")
_OCR_ZERO = re.compile(r"(?<=[а-яёА-ЯЁ])0(?=[а-яёА-ЯЁ])")


def surrogate_name(text: str, req: SurrogateRequest) -> str:
    """``text`` with every name part replaced by its keyed surrogate; everything else kept."""
    text = _OCR_ZERO.sub(lambda m: "О" if text[m.start() - 1].isupper() else "о", text)
    parsed = parse_name(text, req.language)
    named = [u for u in parsed.units if u.role in ("first", "surname")]
    if len(named) == 1:
        known = _document_roles(req.ctx).get(normalize(named[0].text))
        if known is not None:
            named[0].role = known
    surnames = parsed.words("surname")
    form = _russian_form(parsed, req)
    replacements: list[tuple[int, int, str]] = []
    for unit in parsed.units:
        if unit.role in ("title", "particle", None):
            continue
        for a, b in unit.words:
            word = text[a:b]
            if unit.role == "first":
                new = first_name_surrogate(word, req, form)
            elif unit.role == "surname":
                new = surname_surrogate(word, req, form)
            elif unit.role == "patronymic":
                new = patronymic_surrogate(word, req, form)
            else:  # one initial, or two written together without dots ("ЕВ")
                new = "".join(_resolve_initial(letter, surnames, req) for letter in word)
            replacements.append((a, b, new))
    if not replacements:
        raise SurrogateUnavailable
    out, pos = [], 0
    for a, b, new in replacements:
        out += [text[pos:a], new]
        pos = b
    out.append(text[pos:])
    return "".join(out)


class NameGenerator(SurrogateGenerator):
    labels = NAME_LABELS

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        return surrogate_name(req.value, req)
