"""Location surrogates: cities, countries, regions, hospitals and organisations from the language's lists;
streets with their type words and number shape kept; zip codes of the same length, plausible per country."""

from __future__ import annotations

import re
from functools import cache
from typing import ClassVar

from clinideid.transform.surrogates.base import SurrogateGenerator, SurrogateRequest, pick_distinct
from clinideid.transform.surrogates.lists import list_language, surrogate_values
from clinideid.transform.surrogates.names import _lang_for
from clinideid.transform.textcase import apply_case, case_pattern, is_cyrillic, normalize, reshape


def _keep_case(original: str, value: str) -> str:
    """An all-upper or all-lower original imposes its case; otherwise the list's own spelling is kept."""
    pattern = case_pattern(original)
    return apply_case(value, pattern) if pattern in ("upper", "lower") else value


class ListGenerator(SurrogateGenerator):
    """A keyed choice from one word list of the document's language (script-aware)."""

    list_name: ClassVar[str] = ""

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        lang = _lang_for(req.value, req.language)
        pool = surrogate_values(lang, self.list_name)
        norm = normalize(req.value)
        choice = pick_distinct(req.rng(self.list_name, norm, attempt), pool, req.value)
        return _keep_case(req.value, choice)


class CityGenerator(ListGenerator):
    labels = ("CITY", "LOCATION_OTHER")
    list_name = "cities"


class CountryGenerator(ListGenerator):
    labels = ("COUNTRY",)
    list_name = "countries"


US_STATE_CODES = (
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA",
    "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK",
    "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
)  # fmt: skip


class StateGenerator(ListGenerator):
    """Regions from the language's list; a two-letter code ("MA") becomes another US state code."""

    labels = ("STATE",)
    list_name = "states"

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        code = req.value.strip().rstrip(".")
        if len(code) == 2 and code.isalpha() and code.isascii():
            new = pick_distinct(req.rng("state_code", code.upper(), attempt), US_STATE_CODES, code)
            new = new if code.isupper() else new.lower() if code.islower() else new.title()
            return req.value.replace(code, new, 1)
        return super().generate(req, attempt)


class HospitalGenerator(ListGenerator):
    labels = ("HOSPITAL",)
    list_name = "hospitals"


class OrganizationGenerator(ListGenerator):
    labels = ("ORGANIZATION",)
    list_name = "organizations"


class ProfessionGenerator(ListGenerator):
    labels = ("PROFESSION",)
    list_name = "professions"


# --- streets ------------------------------------------------------------------------------------------------

_STREET_TOKEN = re.compile(r"[^\W\d_]+(?:['’.][^\W\d_]+)*\.?|\d+|.", re.DOTALL)
_EXTRA_TYPES = frozenset(
    {"st", "rd", "ave", "av", "dr", "ln", "blvd", "ct", "pl", "sq", "hwy", "pkwy", "c", "cl", "avda", "pza",
     "ps", "bd", "bld", "v", "vle", "str", "ул", "улица", "пр", "пр-т", "проспект", "пер", "переулок", "ш",
     "шоссе", "пл", "площадь", "наб", "набережная", "б-р", "бульвар", "д", "дом", "кв", "корп", "стр",
     "apt", "apto", "piso", "puerta", "no", "nº", "n", "num", "bis", "ter", "hausnummer"}
)  # fmt: skip
_CONNECTORS = frozenset(
    {"de", "del", "la", "las", "los", "el", "of", "the", "di", "della", "dei", "delle", "du", "des", "le",
     "d", "l", "y", "e", "et", "and", "am", "an", "der", "im", "zum", "zur"}
)  # fmt: skip
_DE_SUFFIXES = (
    "straße",
    "strasse",
    "str.",
    "weg",
    "platz",
    "gasse",
    "allee",
    "ring",
    "damm",
    "ufer",
    "steig",
)
_STREET_TEMPLATES = {
    "en": "{name} Street",
    "es": "Calle {name}",
    "it": "Via {name}",
    "fr": "rue {name}",
    "de": "{name}straße",
    "ru": "улица {name}",
}


@cache
def _street_types(lang: str) -> frozenset[str]:
    """Street type words: the single-word entries of the language's street list (which lists types such
    as "Calle", "Avenue", "rue"), except in Russian, whose list holds street names."""
    if lang == "ru":
        return _EXTRA_TYPES
    singles = {
        normalize(v).rstrip(".")
        for v in surrogate_values(lang, "streets")
        if " " not in v.strip() and _de_suffix(v, all_suffixes=True) is None  # "Goethestraße" is a name
    }
    return frozenset(singles | _EXTRA_TYPES)


def _street_name_pool(lang: str) -> tuple[str, ...]:
    if lang == "ru":  # Russian street lists hold the names themselves ("Садовая", "Ленина")
        types = _street_types(lang)
        names = tuple(v for v in surrogate_values(lang, "streets") if normalize(v).rstrip(".") not in types)
        if names:
            return names
    return surrogate_values(lang, "surnames")


class StreetGenerator(SurrogateGenerator):
    """Street type words ("Calle", "Avenue", "rue", "-straße") and connectors kept, the name replaced by a
    keyed name, house numbers replaced digit by digit."""

    labels = ("STREET",)

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        text = req.value
        lang = (
            _lang_for(text, req.language) if any(c.isalpha() for c in text) else list_language(req.language)
        )
        types = _street_types(lang)
        tokens = [(m.start(), m.end(), m.group()) for m in _STREET_TOKEN.finditer(text)]
        out: list[str] = []
        name_run: list[str] = []
        numbers = req.rng("street_number", normalize(text), attempt)
        replaced = False
        seen_number = False  # floor/door designations after the house number ("4º B", "2º dcha") are kept

        def flush() -> None:
            nonlocal replaced
            if name_run:
                replaced = True
                out.append(self._name(req, "".join(name_run).strip(), lang, attempt))
                trailing = "".join(name_run)[len("".join(name_run).rstrip()) :]
                out.append(trailing)
                name_run.clear()

        for _, _, tok in tokens:
            norm = normalize(tok).rstrip(".")
            if tok[0].isdigit():
                flush()
                out.append(reshape(tok, numbers))
                replaced = seen_number = True
            elif tok[0].isalpha():
                if seen_number and not name_run and (len(tok) <= 4 or not tok[0].isupper()):
                    out.append(tok)
                elif norm in types or (tok.islower() and norm in _CONNECTORS and not name_run):
                    flush()
                    out.append(tok)
                elif (suffix := _de_suffix(tok, all_suffixes=lang == "de")) is not None:
                    flush()
                    stem = self._name(req, tok[: -len(suffix)], lang, attempt).replace(" ", "-")
                    out.append(stem + suffix)
                    replaced = True
                else:
                    name_run.append(tok)
            elif name_run and tok.isspace():
                name_run.append(tok)
            else:
                flush()
                out.append(tok)
        flush()
        result = "".join(out)
        if not replaced:  # only type words ("Broadway"): a whole new street
            name = self._name(req, text, lang, attempt)
            result = _keep_case(text, _STREET_TEMPLATES.get(lang, _STREET_TEMPLATES["en"]).format(name=name))
        return result

    @staticmethod
    def _name(req: SurrogateRequest, original: str, lang: str, attempt: int) -> str:
        choice = pick_distinct(
            req.rng("street", normalize(original), attempt), _street_name_pool(lang), original
        )
        if is_cyrillic(choice) != is_cyrillic(original) and lang != "ru":
            choice = pick_distinct(
                req.rng("street", normalize(original), attempt), _street_name_pool("en"), original
            )
        return _keep_case(original, choice)


def _de_suffix(word: str, *, all_suffixes: bool) -> str | None:
    """The German street-type suffix of a compound ("Goethestraße"); outside German texts only the
    unambiguous "-straße"/"-strasse"."""
    low = word.lower()
    for suffix in _DE_SUFFIXES if all_suffixes else _DE_SUFFIXES[:2]:
        if low.endswith(suffix) and len(low) > len(suffix) + 2:
            return word[-len(suffix) :]
    return None


# --- zip codes ----------------------------------------------------------------------------------------------

#: (number of digits, allowed first-two-digit range) of a plausible postal code per language
_ZIP_RULES: dict[str, tuple[int, int, int]] = {
    "es": (5, 1, 52),  # province codes 01-52
    "fr": (5, 1, 95),  # départements 01-95 (20 is Corsica's 2A/2B, avoided)
    "de": (5, 1, 99),
    "it": (5, 0, 98),
    "en": (5, 1, 99),  # US: 00501-99950, 000 prefixes unused
    "ru": (6, 10, 69),  # Russian indexes start with 1-6
}


class ZipGenerator(SurrogateGenerator):
    labels = ("ZIP",)

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        text = req.value
        rng = req.rng("zip", normalize(text), attempt)
        lang = list_language(req.language)
        rule = _ZIP_RULES.get(lang)
        main = re.match(r"\s*(\d+)", text)
        if rule is None or main is None or len(main.group(1)) != rule[0] or not text.strip().isascii():
            return reshape(text, rng, keep_leading_nonzero=False)
        n_digits, low, high = rule
        while True:
            head = rng.randint(low, high)
            if not (lang == "fr" and head == 20):
                break
        new_main = f"{head:02d}" + "".join(rng.digit() for _ in range(n_digits - 2))
        rest = reshape(text[main.end() :], rng, keep_leading_nonzero=False)
        return text[: main.start(1)] + new_main + rest
