"""Evidence that does not depend on tidy writing: OCR letter/digit confusions read as what the word says,
the case style of each block, common-word frequencies, and names followed in lower-case notes.
Every example is invented for this file."""

from __future__ import annotations

import pytest

from clinideid.detect.rules import RuleDetector
from clinideid.detect.rules.normalize import fold_ocr_confusions, normalize_for_matching
from clinideid.document import Document
from clinideid.resources import is_common_word, word_zipf
from clinideid.text.style import case_regions, case_style

# ---- OCR confusions ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("noisy", "read"),
    [
        ("Смирн0ва", "Смирнова"),
        ("3олотарёв", "Золотарёв"),
        ("Г6УЗ", "ГБУЗ"),
        ("Ярославская 0бл.", "Ярославская Обл."),
        ("посёлок Светл0", "посёлок Светло"),
        ("8-903-1З4-22-О7", "8-903-134-22-07"),
        ("J0anna Pr1ce", "Joanna Prlce"),
        ("tel 555 O12 3456", "tel 555 012 3456"),
    ],
)
def test_ocr_confusions_are_read_as_their_word_says(noisy, read):
    assert fold_ocr_confusions(noisy) == read
    assert len(normalize_for_matching(noisy)) == len(noisy)


@pytest.mark.parametrize(
    "kept",
    [
        "vitamin B12",
        "SpO2 96% on O2",
        "4at score 2",
        "1st, 2nd and 10th",
        "pT2N0M0",
        "H2O2",
        "COVID19",
        "5mg 3x daily",
        "RSSMRA85T10A562S",  # a codice fiscale: its letters between digits are no OCR errors
        "Y0123456Z",
        "T0",
    ],
)
def test_tokens_that_mix_letters_and_digits_on_purpose_stay(kept):
    assert normalize_for_matching(kept) == kept


def test_russian_ocr_note_is_detected_through_the_folded_copy():
    detector = RuleDetector(language="ru")
    text = "Ф.И.О.: Смирн0ва Ольга Петровна\nАдрес: г. М0сква, ул. Садовая, д. 3\nВрач: 3олотарёв"
    doc = Document("t", text, language="ru")
    found = {text[s.start : s.end] for s in detector.detect_one(doc)}
    assert any("Смирн0ва" in f for f in found)
    assert any("М0сква" in f for f in found)
    assert any("3олотарёв" in f for f in found)


# ---- case style ------------------------------------------------------------------------------------------


def test_case_style_per_block():
    lower = "pt seen this am, afebrile, tolerating diet. plan: mobilise with physio, review bloods tomorrow."
    upper = "PT SEEN THIS AM, AFEBRILE, TOLERATING DIET. PLAN: MOBILISE WITH PHYSIO, REVIEW BLOODS."
    mixed = "Patient seen this morning. Afebrile and tolerating diet. Plan: mobilise with Physio."
    text = f"{mixed}\n\n{lower}\n\n{upper}"
    regions = case_regions(text)
    assert regions.style_at(5) == "mixed"
    assert regions.style_at(len(mixed) + 5) == "lower"
    assert regions.style_at(len(text) - 3) == "upper"
    assert regions.uncased_at(len(text) - 3)
    assert not regions.uncased_at(0)
    assert case_style("ok") is None  # too short to tell


def test_short_blocks_take_the_style_of_the_whole_text():
    text = "bp 120/80\n\nlives alone, independent with adls, daughter visits daily and does shopping for her"
    assert case_regions(text).style_at(2) == "lower"


# ---- word frequencies ------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "de", "it", "ru", "es", "fr"])
def test_every_language_has_word_frequencies(language):
    table = word_zipf(language)
    assert len(table) > 10_000
    assert all(z >= 3.0 for z in list(table.values())[:1000])


def test_common_and_rare_words():
    assert is_common_word("en", "Hope") and is_common_word("en", "BILL", 5.0)
    assert not is_common_word("en", "Vrettakos")
    assert is_common_word("de", "Weiß")
    assert is_common_word("ru", "король")


# ---- lower-case notes ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def en() -> RuleDetector:
    return RuleDetector(language="en")


def _found(detector: RuleDetector, text: str) -> list[str]:
    doc = Document("t", text, language="en")
    return [text[s.start : s.end] for s in detector.detect_one(doc)]


def test_rare_surname_after_lowercase_title_is_a_name(en):
    text = "day 3 post op, wound clean and dry (mr vrettakos). mobilising with frame, pain controlled."
    assert "vrettakos" in " ".join(_found(en, text))


def test_mitral_regurgitation_is_not_a_title(en):
    text = "echo today shows mr moderate, lv function preserved. mr severe on previous study, now improved."
    assert not any(w in " ".join(_found(en, text)) for w in ("moderate", "severe"))


def test_a_relative_named_once_is_followed_in_a_lowercase_note(en):
    text = (
        "lives w wife odalys (77) in a bungalow, independent with adls.\n"
        "odalys has copd herself and is unsure she can manage. sw referral made, odalys aware."
    )
    found = _found(en, text)
    assert found.count("odalys") == 3


def test_very_common_words_are_not_followed_in_lower_case(en):
    text = (
        "son mark (52) visited this afternoon and took washing home.\n"
        "pressure area check: no mark on sacrum, heels intact. will mark wound margins at next dressing."
    )
    found = _found(en, text)
    assert found.count("mark") == 1


def test_capitalised_text_still_needs_capitals_for_propagation(en):
    text = "Seen with her husband Mr Lindqvist today. He says the dog, a lindqvist terrier, is fine."
    found = _found(en, text)
    assert "Lindqvist" in " ".join(found) and "lindqvist" not in found
