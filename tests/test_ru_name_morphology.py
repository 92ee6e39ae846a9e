"""Russian name surrogates agree in case and gender with the name they replace; families stay one family."""

from __future__ import annotations

import hashlib

import pytest

from clinideid.document import Document, Span
from clinideid.transform.base import OperatorContext
from clinideid.transform.surrogates import generate_surrogate, ru_morph

pymorphy3 = pytest.importorskip("pymorphy3")
MORPH = pymorphy3.MorphAnalyzer(lang="ru")
KEY = hashlib.sha256(b"ru-morphology-tests").digest()


def replace_all(text: str, names: list[str], label: str = "PERSON") -> list[str]:
    """The surrogate of each name (found in ``text`` in order), with one context for the document."""
    spans, pos = [], 0
    for name in names:
        start = text.index(name, pos)
        spans.append(Span(start, start + len(name), label))
        pos = start + len(name)
    doc = Document("d", text, language="ru", spans=tuple(spans))
    ctx = OperatorContext(document=doc, spans=doc.spans, key=KEY, scope_id="patient-1", language="ru")
    return [generate_surrogate(s.label, doc.span_text(s), s, ctx) for s in spans]


def tags(word: str, tag: str) -> list[object]:
    return [p.tag for p in MORPH.parse(word) if tag in p.tag and "sing" in p.tag]


def has_form(word: str, tag: str, gender: str, case: str) -> bool:
    return any(case in t and (gender in t or "ms-f" in t) for t in tags(word, tag))


@pytest.mark.parametrize(
    ("sentence", "name", "gender", "case"),
    [
        ("Пациентка Петрова Анна Сергеевна поступила.", "Петрова Анна Сергеевна", "femn", "nomn"),
        ("Со слов Петровой Анны Сергеевны, боли давно.", "Петровой Анны Сергеевны", "femn", "gent"),
        ("Направлена к Петровой Анне Сергеевне.", "Петровой Анне Сергеевне", "femn", "datv"),
        ("Осмотрели Петрову Анну Сергеевну.", "Петрову Анну Сергеевну", "femn", "accs"),
        ("Осмотрена врачом Петровой Анной Сергеевной.", "Петровой Анной Сергеевной", "femn", "ablt"),
        ("Сообщено о Петровой Анне Сергеевне.", "Петровой Анне Сергеевне", "femn", "loct"),
        ("Пациент Смирнов Олег Игоревич поступил.", "Смирнов Олег Игоревич", "masc", "nomn"),
        ("Со слов Смирнова Олега Игоревича, боли давно.", "Смирнова Олега Игоревича", "masc", "gent"),
        ("Направлен к Смирнову Олегу Игоревичу.", "Смирнову Олегу Игоревичу", "masc", "datv"),
        ("Осмотрен врачом Смирновым Олегом Игоревичем.", "Смирновым Олегом Игоревичем", "masc", "ablt"),
        ("Сообщено о Смирнове Олеге Игоревиче.", "Смирнове Олеге Игоревиче", "masc", "loct"),
    ],
)
def test_full_names_take_the_case_and_gender_of_the_original(sentence, name, gender, case) -> None:
    (new,) = replace_all(sentence, [name])
    surname, first, patronymic = new.split()
    assert new != name
    assert has_form(surname, "Surn", gender, case), new
    assert has_form(first, "Name", gender, case), new
    assert has_form(patronymic, "Patr", gender, case), new


def test_the_word_before_a_lone_surname_decides_its_case() -> None:
    (new,) = replace_all("Осмотрена врачом Петровой А.В. в приёмном отделении.", ["Петровой А.В."])
    surname = new.split()[0]
    assert has_form(surname, "Surn", "femn", "ablt") and surname.endswith("ой")
    (new,) = replace_all("Передан под наблюдение к Кузнецову.", ["Кузнецову"])
    assert has_form(new, "Surn", "masc", "datv") and new.endswith("у")


def test_relatives_share_one_surrogate_family() -> None:
    text = "Пациент Иванов Сергей. Жена Иванова Мария. Выписка выдана Ивановым С.П. Звонила Ивановой."
    he, she, him_ablt, her_gent = replace_all(
        text, ["Иванов Сергей", "Иванова Мария", "Ивановым С.П.", "Ивановой"]
    )
    roots = {ru_morph.lemma(w.split()[0], "surname") for w in (he, she, him_ablt, her_gent)}
    assert len(roots) == 1 and roots != {"иванов"}
    assert has_form(she.split()[0], "Surn", "femn", "nomn")
    assert has_form(him_ablt.split()[0], "Surn", "masc", "ablt")
    # a first name in another case keys on its nominative: the same person keeps the same first name
    (a, b) = replace_all("Мария пришла. Позвонили Марии.", ["Мария", "Марии"])
    assert ru_morph.lemma(a, "first") == ru_morph.lemma(b, "first") != "мария"


def test_declension_class_is_kept_and_indeclinable_names_stay_put() -> None:
    (new,) = replace_all("Врач: Достоевская Анна Ивановна.", ["Достоевская Анна Ивановна"])
    assert new.split()[0].endswith(("ская", "цкая"))
    assert ru_morph.inflect("Черных", "surname", ("femn", "datv")) == "Черных"


def test_name_form_reads_all_parts_together() -> None:
    # "Марии" alone may be genitive, dative or locative; with "Ивановны" only the genitive remains
    assert ru_morph.name_form([("Марии", "first"), ("Ивановны", "patronymic")]) == ("femn", "gent")
    colon = ru_morph.context_before("Лечащий врач: Иванова", len("Лечащий врач: "))
    assert ru_morph.name_form([("Иванова", "surname")], colon) == ("femn", "nomn")


def test_gender_comes_from_the_whole_name_when_the_first_name_is_unknown() -> None:
    # "Лейсан" is not in the dictionary (its guess is masculine); surname and patronymic are feminine
    (new,) = replace_all("Пациентка Габдуллина Лейсан Ринатовна.", ["Габдуллина Лейсан Ринатовна"])
    surname, first, patronymic = new.split()
    assert has_form(first, "Name", "femn", "nomn"), new
    assert has_form(surname, "Surn", "femn", "nomn") and patronymic.endswith("на")


def test_a_zero_scanned_for_o_does_not_break_the_name() -> None:
    (new,) = replace_all("Уход — дочь Смирн0ва Ирина, тел.", ["Смирн0ва Ирина"])
    assert "0" not in new and len(new.split()) == 2 and new.split()[0] != "Смирнова"
