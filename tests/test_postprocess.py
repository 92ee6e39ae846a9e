"""Post-processing steps: role words trimmed from names, found names and places marked everywhere, the
``postprocess:`` list of the pipeline config. Every name and place here is invented."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinideid.config import default_config, load_config, parse_config
from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.mentions import Mention
from clinideid.pipeline import Deidentifier
from clinideid.postprocess import (
    DEFAULT_STEPS,
    STEPS,
    StepContext,
    propagate_mentions,
    run_steps,
    trim_role_words,
)

KEY = bytes(range(32))


def span_at(text: str, fragment: str, label: str, source: str = "crf", nth: int = 0) -> Span:
    """A span over the ``nth`` occurrence of ``fragment`` (as a learned detector would report it)."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(fragment, start + 1)
    return Span(start, start + len(fragment), label, source=source, score=0.9, explanation="model")


def marked(text: str, spans: list[Span]) -> list[tuple[str, str]]:
    return [(text[s.start : s.end], s.label) for s in sorted(spans, key=lambda s: s.start)]


def propagated(text: str, spans: list[Span], language: str = "en", known=()) -> list[tuple[str, str]]:
    out = propagate_mentions(spans, StepContext(text, language, tuple(known)))
    return marked(text, [s for s in out if s.source == "propagate_mentions"])


# -- propagate_mentions --------------------------------------------------------------------------------------


def test_a_surname_found_once_is_marked_in_capitals_and_after_a_relative():
    text = (
        "Patient John Harris, 71, seen today.\n"
        "Accompanied by daughter KAREN HARRIS, who will drive him home.\n"
        "HARRIS family history: none. Harris's wife called."
    )
    spans = [span_at(text, "John Harris", "PATIENT"), span_at(text, "KAREN", "PERSON")]
    assert propagated(text, spans) == [("HARRIS", "PATIENT"), ("HARRIS", "PATIENT"), ("Harris", "PATIENT")]


def test_a_whole_name_is_found_in_any_case_across_line_breaks_and_whole_words_only():
    text = (
        "Referred by Adaeze Okonkwo.\nADAEZE\nOKONKWO phoned; adaeze okonkwo agreed.\n"
        "Okonkwoville clinic; Okonkwo-Ibe family."
    )
    spans = [span_at(text, "Adaeze Okonkwo", "DOCTOR")]
    assert propagated(text, spans) == [
        ("ADAEZE\nOKONKWO", "DOCTOR"),
        ("adaeze okonkwo", "DOCTOR"),
        ("Okonkwo", "DOCTOR"),  # a hyphen ends a word; "Okonkwoville" is another word
    ]


def test_a_rare_word_the_note_writes_in_lower_case_in_running_text_is_not_a_name_there():
    # "Okonkwo" in a mixed-case note is found in capitals; were it also written "okonkwo" in running
    # text, that would show it to be a word of the note's language (as "cathéter" below), so it is not
    # searched on its own
    text = "Seen with Adaeze Okonkwo. OKONKWO called. The okonkwo was refilled."
    spans = [span_at(text, "Adaeze Okonkwo", "PATIENT")]
    assert propagated(text, spans) == []


def test_lowercase_notes_mark_relatives_and_staff_again_but_not_common_words():
    text = (
        "lives w son kofi and his wife, son will call tomorrow.\n"
        "kofi will drive her to clinic. seen by rn abena, abena to phone daughter."
    )
    spans = [span_at(text, "kofi", "PATIENT"), span_at(text, "abena", "DOCTOR")]
    assert propagated(text, spans) == [("kofi", "PATIENT"), ("abena", "DOCTOR")]


def test_a_name_part_that_is_a_common_word_is_marked_only_where_it_reads_as_a_name():
    text = (
        "Discussed with Will Turner today. The patient will drive home. Will attends the ward round; "
        "later the nurse spoke to Will again. Dr. Will reviewed the chart."
    )
    spans = [span_at(text, "Will Turner", "DOCTOR")]
    found = propagated(text, spans)
    # "Will" capitalised at the start of a sentence could be the verb; mid-sentence and after a title it
    # is the name; "will drive" is the word
    assert found == [("Will", "DOCTOR"), ("Will", "DOCTOR")]
    starts = [s.start for s in propagate_mentions(spans, StepContext(text, "en")) if s.source != "crf"]
    assert text.index("will drive") not in starts


def test_a_very_common_word_is_not_searched_in_a_block_written_in_capitals():
    text = "PT SEEN BY MAY OKAFOR. PLAN: MAY NEED REVIEW. OKAFOR TO CALL."
    spans = [span_at(text, "MAY OKAFOR", "DOCTOR")]
    assert propagated(text, spans) == [("OKAFOR", "DOCTOR")]


def test_the_strongest_label_wins_and_found_spans_are_left_alone():
    text = "Seen by Harris. Patient John Harris. Harris again on 12/03/2024."
    spans = [
        span_at(text, "Harris", "DOCTOR"),
        span_at(text, "John Harris", "PATIENT"),
        span_at(text, "12/03/2024", "DATE"),
    ]
    out = propagate_mentions(spans, StepContext(text, "en"))
    assert [s for s in out if s.source == "crf"] == spans  # what resolution decided stands
    assert propagated(text, spans) == [("Harris", "PATIENT")]


def test_words_detectors_took_for_names_do_not_spread():
    # a common word of the language, an abbreviation in capitals, and a rare word the note writes in
    # lower case elsewhere: each was one detector's mistake, marked once and no more
    text = (
        "Examen clinique normal. Examen complet demain.\nFEVG 55 %. Contrôle FEVG à 3 mois.\n"
        "Cathéter retiré ; pas de nouveau cathéter."
    )
    spans = [
        span_at(text, "Examen clinique", "PERSON"),
        span_at(text, "FEVG", "PERSON"),
        span_at(text, "Cathéter", "PERSON"),
    ]
    assert propagated(text, spans, "fr") == []


def test_places_are_marked_and_streets_also_without_their_number():
    text = "Lives at 14 Quarry Hill Lane, Thornbury. Moved from Thornbury to QUARRY HILL LANE in May."
    spans = [span_at(text, "14 Quarry Hill Lane", "STREET"), span_at(text, "Thornbury", "CITY")]
    assert propagated(text, spans) == [("Thornbury", "CITY"), ("QUARRY HILL LANE", "STREET")]


def test_mentions_from_other_documents_of_the_patient_are_marked():
    text = "Okonkwo reports less pain. Follow-up with Dr. Adeyemi."
    known = [Mention("PATIENT", "Chidi Okonkwo"), Mention("DOCTOR", "Funmi Adeyemi")]
    assert propagated(text, [], known=known) == [("Okonkwo", "PATIENT"), ("Adeyemi", "DOCTOR")]
    spans = propagate_mentions([], StepContext(text, "en", tuple(known)))
    assert all("another document" in (s.explanation or "") for s in spans)  # says why, holds no text


@pytest.mark.parametrize(
    ("language", "text", "name"),
    [
        ("de", "Besuch der Tochter Anna Wernicke-Hollweg. Frau Wernicke-Hollweg ruft an.", "Anna Wernicke-Hollweg"),
        ("it", "Presente la moglie Lucia Ferrandino. La sig.ra Ferrandino chiede un colloquio.", "Lucia Ferrandino"),
        ("es", "Acompañado por su hija Lucía Quintanilla. Quintanilla firma el consentimiento.", "Lucía Quintanilla"),
        ("fr", "Accompagnée de son fils Paul Vanderbeke. M. Vanderbeke sera rappelé.", "Paul Vanderbeke"),
        ("ru", "Со слов дочери Анны Зябликовой. Зябликова просит позвонить Зябликову.", "Анны Зябликовой"),
    ],
)  # fmt: skip
def test_names_are_propagated_in_every_language(language: str, text: str, name: str):
    spans = [span_at(text, name, "PATIENT")]
    found = propagated(text, spans, language)
    assert found and all(label == "PATIENT" for _, label in found)


# -- drop_measurements -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value", "kept"),
    [
        ("HR 88-107 overnight", "88-107", False),
        ("PS 12/5, PEEP 8", "12/5", False),
        ("АД 120/80 мм", "120/80", False),
        ("propofol 20 mg/h", "20", False),
        ("BP FROM 118 TO 146", "118", False),
        ("Extubated 12/5 at noon", "12/5", True),
        ("PS weaned on 12/5/2021", "12/5/2021", True),
        ("Room 14, bed 2", "14", True),
    ],
)
def test_measurements_are_dropped_and_other_numbers_kept(text: str, value: str, kept: bool):
    start = text.index(value)
    span = Span(start, start + len(value), "DATE", source="x")
    out = STEPS.get("drop_measurements")([span], StepContext(text, "en"))
    assert (out == [span]) is kept


# -- trim_role_words -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "name", "want"),
    [
        ("en", "Seen by DR SMITH today.", "DR SMITH", "SMITH"),
        ("en", "Reviewed with Dr. Jane Okafor.", "Dr. Jane Okafor", "Jane Okafor"),
        ("en", "Signed: Priya Raman, RN", "Priya Raman, RN", "Priya Raman"),
        ("en", "Contact: daughter Karen Harris", "daughter Karen Harris", "Karen Harris"),
        ("de", "Besuch: Tochter Anna Berger", "Tochter Anna Berger", "Anna Berger"),
        ("de", "gez. Prof. Dr. med. Hans Wernicke", "Prof. Dr. med. Hans Wernicke", "Hans Wernicke"),
        ("it", "Presente la moglie Maria Ferrandino", "moglie Maria Ferrandino", "Maria Ferrandino"),
        ("it", "Firmato Dott.ssa Lucia Bellandi", "Dott.ssa Lucia Bellandi", "Lucia Bellandi"),
        ("ru", "Со слов: дочь Анна Зябликова", "дочь Анна Зябликова", "Анна Зябликова"),
        ("ru", "Осмотрен врачом Ивановой", "врачом Ивановой", "Ивановой"),
        ("es", "Acompañado por hijo Pedro Quintanilla", "hijo Pedro Quintanilla", "Pedro Quintanilla"),
        ("es", "Firma: Dra. Lucía Quintanilla", "Dra. Lucía Quintanilla", "Lucía Quintanilla"),
        ("fr", "Présent : fils Paul Vanderbeke", "fils Paul Vanderbeke", "Paul Vanderbeke"),
        ("fr", "Vu par Mme Claire Vanderbeke", "Mme Claire Vanderbeke", "Claire Vanderbeke"),
    ],
)  # fmt: skip
def test_role_words_are_trimmed_from_name_spans(language: str, text: str, name: str, want: str):
    spans = [span_at(text, name, "PERSON")]
    (out,) = trim_role_words(spans, StepContext(text, language))
    assert text[out.start : out.end] == want
    assert out.label == "PERSON" and out.source == "crf"


def test_a_span_that_is_only_a_role_word_is_dropped_and_a_word_after_a_title_stays():
    text = "Seen by DR at 10:00. Herr Freund came. Sister Nurse. Tochter."
    spans = [
        span_at(text, "DR", "DOCTOR"),
        span_at(text, "Herr Freund", "PATIENT"),
        span_at(text, "Tochter", "PERSON"),
        span_at(text, "Tochter", "FAMILY"),  # a relation word is what FAMILY marks: kept as it is
    ]
    out = trim_role_words(spans, StepContext(text, "de"))
    assert marked(text, out) == [("Freund", "PATIENT"), ("Tochter", "FAMILY")]


def test_other_labels_plain_names_and_hyphenated_role_words_are_untouched():
    text = "Dr. Jane Okafor at Hospital Clinic Dr on 12/03/2024; Paroisse Notre-Dame; Sister-Anne Okoye"
    spans = [
        span_at(text, "Jane Okafor", "DOCTOR"),
        span_at(text, "Hospital Clinic Dr", "STREET"),
        span_at(text, "Paroisse Notre-Dame", "PERSON"),
        span_at(text, "Sister-Anne Okoye", "PERSON"),
    ]
    assert trim_role_words(spans, StepContext(text, "en")) == spans


# -- the pipeline and its config -----------------------------------------------------------------------------


def test_default_configs_list_the_steps_in_order():
    for language in ("en", "de", "it", "ru", "es", "fr"):
        assert default_config(language).postprocess == list(DEFAULT_STEPS)
    assert set(DEFAULT_STEPS) <= set(STEPS.names())


def test_unknown_step_names_are_a_config_error_naming_the_known_ones():
    data = default_config("en").model_dump()
    data["postprocess"] = ["trim_role_words", "propagate_everything"]
    with pytest.raises(ConfigError) as info:
        parse_config(data)
    message = str(info.value)
    assert "propagate_everything" in message
    assert all(name in message for name in DEFAULT_STEPS)
    with pytest.raises(ConfigError):
        run_steps(["propagate_everything"], [], StepContext("", "en"))


def test_the_merge_flag_of_earlier_configs_still_works():
    data = default_config("en").model_dump()
    del data["postprocess"]
    data["merge_adjacent_names"] = False
    assert parse_config(data).postprocess == [s for s in DEFAULT_STEPS if s != "merge_adjacent_names"]
    data["merge_adjacent_names"] = True
    assert parse_config(data).postprocess == list(DEFAULT_STEPS)


PACK = """
name: ward_list
language: en
passes:
  - name: names
    rules:
      - id: daughter
        kind: regex
        label: PATIENT
        pattern: 'daughter (?P<v>[A-Z][a-z]+ [A-Z][a-z]+)'
        group: v
"""


@pytest.mark.parametrize("steps", [list(DEFAULT_STEPS), []])
def test_any_detector_gets_its_mentions_marked_through_the_config(tmp_path: Path, steps: list[str]):
    # a detector that finds a name once and does not propagate it (a user's pack without propagation)
    (tmp_path / "pack.yaml").write_text(PACK, encoding="utf-8")
    config = tmp_path / "pipeline.yaml"
    config.write_text(
        f"language: en\ndetectors: [{{type: rules, pack: {tmp_path / 'pack.yaml'}}}]\npostprocess: {steps}\n",
        encoding="utf-8",
    )
    pipeline = Deidentifier(load_config(config), KEY)
    text = "Visited by daughter Ngozi Abernathy-Oke.\nABERNATHY phoned; Ngozi will return."
    spans, _ = pipeline.detect(Document("d1", text, "en"))
    found = [text[s.start : s.end] for s in spans]
    if steps:
        assert found == ["Ngozi Abernathy", "ABERNATHY", "Ngozi"]
        assert "Abernathy" not in pipeline.deidentify_text(text).replace("ABERNATHY", "Abernathy")
    else:
        assert found == ["Ngozi Abernathy"]
