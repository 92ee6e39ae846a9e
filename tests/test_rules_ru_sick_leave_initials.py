"""Russian rules: sick-leave certificate numbers and initials written without dots ("ИИ Иванов").

All examples are invented for these tests.
"""

from __future__ import annotations

import hashlib

import pytest

from clinideid.detect.rules import RuleDetector
from clinideid.document import Document
from clinideid.pipeline import Deidentifier


@pytest.fixture(scope="module")
def detector() -> RuleDetector:
    return RuleDetector(language="ru")


def found(detector: RuleDetector, text: str) -> dict[str, tuple[str, str | None]]:
    return {
        text[s.start : s.end]: (s.label, s.explanation)
        for s in detector.detect_one(Document("t", text, language="ru"))
    }


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("Листок нетрудоспособности № 910012345678 открыт с 01.02.2024.", "910012345678"),
        ("ЛИСТОК НЕТРУДОСПОСОБНОСТИ №910012345678", "910012345678"),
        ("Электронный листок нетрудоспособности 910012345678 продлён.", "910012345678"),
        ("ЭЛН 9100 1234 5678 закрыт к труду.", "9100 1234 5678"),
        ("ЛН (электронный) № 910-012-345-678", "910-012-345-678"),
        ("Больничный лист: 910012345678", "910012345678"),
        ("Выдан больничного листа номер 910012345678.", "910012345678"),
        ("б/л 910012345678 открыт", "910012345678"),
        ("ЛН открыт № 910012345678", "910012345678"),
    ],
)
def test_sick_leave_numbers(detector: RuleDetector, text: str, number: str) -> None:
    spans = found(detector, text)
    assert spans.get(number) == ("IDNUM", "ru/identifiers/sick_leave")


@pytest.mark.parametrize(
    "text",
    [
        "Показан ЛН, выдан по месту наблюдения.",
        "Листок нетрудоспособности не выдавался.",
        "ЛН 12 дней, далее к труду.",  # not a 12-digit number
        "Столбец ЛНПВ 123456789012345 (лабораторный код)",  # neither the cue nor the length
    ],
)
def test_sick_leave_negatives(detector: RuleDetector, text: str) -> None:
    assert not any(expl == "ru/identifiers/sick_leave" for _, expl in found(detector, text).values())


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Осмотрен: ИИ Иванов, терапевт.", "ИИ Иванов"),
        ("Консультация: ЕВ Петрова.", "ЕВ Петрова"),
        ("Согласовано с АС Кузнецовой по телефону.", "АС Кузнецовой"),
        ("Дежурный ОП Смирнов сообщил.", "ОП Смирнов"),
    ],
)
def test_initials_without_dots_before_a_surname(detector: RuleDetector, text: str, name: str) -> None:
    assert name in found(detector, text)


@pytest.mark.parametrize(
    "text",
    [
        "КТ Смирнов не проводил.",  # a study abbreviation, not initials
        "АД Петров измерял утром 130/80.",
        "ЛН Иванов закрыт.",
        "Препарат ОК Регулон.",  # not a surname shape
        "ФК Ивановой II",
    ],
)
def test_abbreviations_before_a_surname_are_not_initials(detector: RuleDetector, text: str) -> None:
    assert not any(
        expl == "ru/other_names/two_capitals_surname" for _, expl in found(detector, text).values()
    )


def test_undotted_initials_keep_their_shape_in_the_surrogate() -> None:
    deid = Deidentifier.for_language("ru", hashlib.sha256(b"initials-test").digest())
    for text, name in [
        ("Осмотрен: ИИ Иванов, терапевт.", "ИИ Иванов"),
        ("Лечащий врач Петрова ЕВ.", "Петрова ЕВ"),
    ]:
        out = deid.deidentify(Document("t", text, language="ru")).text
        start = text.index(name)
        replaced = out[start : start + len(out) - len(text) + len(name)]
        words = replaced.split()
        initials = next(w for w in words if w.isupper())
        surname = next(w for w in words if not w.isupper())
        assert len(initials) == 2 and surname[0].isupper() and surname[1:].islower(), replaced
        assert surname not in name
