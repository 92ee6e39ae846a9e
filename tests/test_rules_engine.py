"""The rule engine: passes, masking, propagation, allow-list, validators, context, triggers, merging."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from clinideid.detect import build_detector
from clinideid.detect.rules import MASK, RuleDetector, RuleEngine, compile_pack, mask, mask_char
from clinideid.detect.rules.fastre import compile_fast, engine_of, translate
from clinideid.document import Document
from clinideid.errors import ConfigError, InputError


def write_pack(tmp_path: Path, body: str, name: str = "pack.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), "utf-8")
    return path


def found(pack: Path | str, text: str, passes=None) -> list[tuple[str, str, str]]:
    engine = RuleEngine(compile_pack(pack), passes)
    return [(f.label, text[f.start : f.end], f.rule_id) for f in engine.run(text)]


# -- masking ------------------------------------------------------------------------------------------


def test_mask_keeps_length_and_offsets():
    text = "Dr. Ana Pérez vive en Madrid."
    masked = mask(text, [(4, 13, "DOCTOR"), (22, 28, "CITY")])
    assert len(masked) == len(text)
    assert masked[:4] == text[:4] and masked[13:22] == text[13:22] and masked[28:] == text[28:]
    assert set(masked[4:13]) == {mask_char("DOCTOR")}
    assert set(masked[22:28]) == {mask_char("CITY")}
    assert mask_char("DOCTOR") != mask_char("CITY") and mask_char(None) == MASK


TWO_PASSES = """
name: order_test
language: es
passes:
  - name: places
    rules:
      - id: paris
        kind: gazetteer
        label: CITY
        words: [Paris]
  - name: names
    rules:
      - id: doctor
        kind: context_name
        label: DOCTOR
        cues: [Dr]
        max_words: 3
"""


def test_pass_order_decides_the_label(tmp_path):
    text = "Visto por el Dr. Paris Hilton ayer."
    # the place pass takes "Paris"; the title is then followed by a masked word, so no name is found
    places_first = found(write_pack(tmp_path, TWO_PASSES), text)
    assert places_first == [("CITY", "Paris", "order_test/places/paris")]
    names_first = found(write_pack(tmp_path, TWO_PASSES + "order: [names, places]\n", "b.yaml"), text)
    assert names_first == [("DOCTOR", "Paris Hilton", "order_test/names/doctor")]


def test_passes_subset_and_unknown_pass(tmp_path):
    path = write_pack(tmp_path, TWO_PASSES)
    assert found(path, "Dr. Paris Hilton", passes=["places"]) == [
        ("CITY", "Paris", "order_test/places/paris")
    ]
    with pytest.raises(ConfigError, match="no pass"):
        RuleEngine(compile_pack(path), ["nope"])


def test_masked_text_keeps_offsets_for_later_passes(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: offsets
        passes:
          - name: first
            rules:
              - {id: year, kind: regex, label: DATE, pattern: '20\\d\\d'}
          - name: second
            rules:
              - {id: digits, kind: regex, label: IDNUM, pattern: '\\d+'}
        """,
    )
    text = "Ingreso 2019, cama 4312, año 2020."
    out = found(pack, text)
    assert out == [
        ("DATE", "2019", "offsets/first/year"),
        ("IDNUM", "4312", "offsets/second/digits"),
        ("DATE", "2020", "offsets/first/year"),
    ]


def test_rules_can_anchor_on_what_earlier_passes_found(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: anchors
        passes:
          - name: cities
            rules:
              - {id: city, kind: gazetteer, label: CITY, words: [Alcalá de Henares]}
          - name: provinces
            rules:
              - id: province
                kind: regex
                label: STATE
                pattern: '{{MASKED_CITY}}[ \\t]*\\((?P<v>\\p{Lu}\\p{Ll}+)\\)'
                group: v
        """,
    )
    assert found(pack, "Vive en Alcalá de Henares (Madrid). Tumor (Wilms).") == [
        ("CITY", "Alcalá de Henares", "anchors/cities/city"),
        ("STATE", "Madrid", "anchors/provinces/province"),
    ]


def test_input_with_private_use_characters_is_not_taken_for_masks(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: pua
        passes:
          - name: a
            rules:
              - {id: n, kind: regex, label: IDNUM, pattern: '{{MASKED}}\\d+'}
        """,
    )
    assert found(pack, f"x{MASK}123") == []


# -- propagation --------------------------------------------------------------------------------------

FORM = """
name: prop
language: es
lists:
  name_connectors: [de, del, la]
passes:
  - name: patient_names
    rules:
      - id: field_nombre
        kind: field
        label: PATIENT
        keys: [Nombre, Apellidos]
        line_start: true
        propagate: true
  - name: other_names
    rules:
      - id: doctor
        kind: context_name
        label: DOCTOR
        cues: [Médico]
        max_words: 4
"""


def test_propagation_finds_the_name_everywhere(tmp_path):
    text = (
        "Nombre: Ernesto\nApellidos: Rivera Bueno\n"
        "El Sr. Rivera acude. Firma E. Rivera. RIVERA BUENO, ERNESTO. El dolor es bueno.\n"
    )
    out = found(write_pack(tmp_path, FORM), text)
    names = [(label, t) for label, t, _ in out]
    assert ("PATIENT", "Rivera") in names
    assert ("PATIENT", "E. Rivera") in names  # initials taken with the surname
    assert ("PATIENT", "RIVERA BUENO") in names  # full name, any case
    assert ("PATIENT", "ERNESTO") in names
    assert all(t.lower() != "bueno" or t[0].isupper() for _, t in names)  # "bueno" (good) is not a name
    assert sum(1 for *_, rule in out if rule.endswith("+propagated")) >= 4


def test_propagation_keeps_roles_and_skips_other_peoples_names(tmp_path):
    text = "Nombre: Sancha\nApellidos: Machado Iglesias\nMédico: Isabel Iglesias Lodares\nSra. Iglesias."
    out = found(write_pack(tmp_path, FORM), text)
    assert ("DOCTOR", "Isabel Iglesias Lodares", "prop/other_names/doctor") in out
    assert ("PATIENT", "Iglesias", "prop/patient_names/field_nombre+propagated") in out  # "Sra. Iglesias"


# -- allow-list, validators, context, triggers --------------------------------------------------------


def test_allowlist_suppresses_word_list_hits_but_not_context_cues(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: allow
        allowlist:
          words: [Parkinson, Crohn]
        passes:
          - name: names
            rules:
              - {id: title, kind: context_name, label: DOCTOR, cues: [Dr], max_words: 2}
              - {id: surnames, kind: gazetteer, label: PERSON, words: [Parkinson, Crohn, Lopez]}
        """,
    )
    text = "Enfermedad de Parkinson y de Crohn. Lopez. Visto por el Dr. Parkinson."
    assert found(pack, text) == [
        ("PERSON", "Lopez", "allow/names/surnames"),
        ("DOCTOR", "Parkinson", "allow/names/title"),
    ]


def test_validators_reject_invalid_identifiers(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: ids
        passes:
          - name: identifiers
            rules:
              - {id: dni, kind: regex, label: IDNUM, pattern: '\\d{8}-?[A-Z]', validator: es_dni}
              - {id: card, kind: regex, label: ACCOUNT, pattern: '(?:\\d[ -]?){15}\\d', validator: luhn}
        """,
    )
    text = "DNI 12345678Z y 12345678A; tarjeta 4111 1111 1111 1111, otra 4111 1111 1111 1112."
    out = [(label, t) for label, t, _ in found(pack, text)]
    assert out == [("IDNUM", "12345678Z"), ("ACCOUNT", "4111 1111 1111 1111")]


def test_context_words_required_and_excluded(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: ctx
        passes:
          - name: ids
            rules:
              - id: mrn
                kind: regex
                label: MEDICALRECORD
                pattern: '\\d{6,8}'
                context: {before: [MRN, record], window: 3, unit: tokens}
                not_context: {after: [mg], window: 5}
        """,
    )
    text = "MRN: 1234567. Dose 2500000 units. Record 7654321 mg. Other 5555555."
    assert [t for _, t, _ in found(pack, text)] == ["1234567"]


def test_optional_context_boosts_the_score(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: boost
        passes:
          - name: ids
            rules:
              - id: n
                kind: regex
                label: IDNUM
                score: 0.5
                boost: 0.3
                context_required: false
                pattern: '\\d{5}'
                context: {before: [ID], window: 5}
        """,
    )
    engine = RuleEngine(compile_pack(pack))
    scores = {f.start: f.score for f in engine.run("ID 12345 and 54321")}
    assert scores == {3: pytest.approx(0.8), 13: pytest.approx(0.5)}


def test_trigger_skips_a_rule(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: trig
        passes:
          - name: a
            rules:
              - {id: n, kind: regex, label: IDNUM, pattern: '\\d{4}', trigger: 'ID:'}
        """,
    )
    assert found(pack, "code 1234") == []
    assert [t for _, t, _ in found(pack, "ID: 1234")] == ["1234"]


def test_adjacent_name_spans_merge(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: merge
        merge_adjacent: {labels: [PERSON]}
        passes:
          - name: a
            rules:
              - {id: first, kind: gazetteer, label: PERSON, words: [Laura]}
              - {id: last, kind: gazetteer, label: PERSON, words: [Carvalho]}
        """,
    )
    assert found(pack, "Laura Carvalho llegó.") == [("PERSON", "Laura Carvalho", "merge/a/first")]


def test_gazetteer_extension_and_list_labels(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: gaz
        lists:
          firsts: [Laura, May]
          towns: [Springfield]
          nations: [Uruguay]
        allowlist: {words: [May]}
        passes:
          - name: names
            rules:
              - id: first_last
                kind: gazetteer
                label: PERSON
                lists: [firsts]
                extend_right: '[ \\t]+\\p{Lu}\\p{Ll}+'
                require_extension: true
          - name: places
            rules:
              - {id: places, kind: gazetteer, list_labels: {towns: CITY, nations: COUNTRY}}
        """,
    )
    text = "Laura Carvalho lives in Springfield, Uruguay. May Day. Laura left."
    assert found(pack, text) == [
        ("PERSON", "Laura Carvalho", "gaz/names/first_last"),
        ("CITY", "Springfield", "gaz/places/places"),
        ("COUNTRY", "Uruguay", "gaz/places/places"),
    ]


def test_safe_rules_mask_without_reporting(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: safe
        passes:
          - name: non_phi
            rules:
              - {id: eponym, kind: regex, safe: true, pattern: '[Ss]igno de \\p{Lu}\\p{Ll}+'}
          - name: names
            rules:
              - {id: surname, kind: gazetteer, label: PERSON, words: [Murphy]}
        """,
    )
    assert found(pack, "Signo de Murphy positivo; la Sra. Murphy.") == [
        ("PERSON", "Murphy", "safe/names/surname")
    ]


def test_field_rule_trims_and_stops(tmp_path):
    pack = write_pack(
        tmp_path,
        """
        name: fields
        passes:
          - name: a
            rules:
              - {id: edad, kind: field, label: AGE, keys: [Edad], value: '\\d+(?:[ \\t]*años)?'}
              - {id: sexo, kind: field, label: SEX, keys: [Sexo], value: word}
              - {id: dom, kind: field, label: STREET, keys: [Domicilio], line_start: true, stop: ['[ \\t]{2,}']}
        """,
    )
    text = "Edad: 70 años Sexo: H.\nDomicilio:  Calle Mayor 3, 2º B.   CP: 28001\nEl domicilio: no consta"
    assert [(label, t) for label, t, _ in found(pack, text)] == [
        ("AGE", "70 años"),
        ("SEX", "H"),
        ("STREET", "Calle Mayor 3, 2º B"),
    ]


# -- the detector ---------------------------------------------------------------------------------------


def test_detector_is_registered_and_returns_spans():
    det = build_detector({"type": "rules", "language": "es", "name": "reglas"})
    assert isinstance(det, RuleDetector)
    doc = Document("d1", "Nombre: Ana\nFecha de nacimiento: 03/04/1950.\n")
    spans = det.detect([doc])[0]
    assert {(s.label, s.text) for s in spans} == {("PATIENT", "Ana"), ("DATE", "03/04/1950")}
    for s in spans:
        assert s.source == "reglas" and 0 < s.score <= 1 and s.explanation.startswith("es/")
        assert doc.text[s.start : s.end] == s.text
    assert doc.with_spans(spans).spans  # valid spans for the document


def test_detector_picks_the_pack_from_the_document_language():
    det = RuleDetector()
    assert det.detect_one(Document("d", "Patient: John Miller", language="en-US"))[0].label == "PATIENT"
    with pytest.raises(InputError, match="no language"):
        det.detect_one(Document("d", "texto"))
    with pytest.raises(InputError, match="no rule pack"):
        det.detect_one(Document("d", "texte", language="xx"))
    with pytest.raises(ConfigError, match="no rule pack"):
        RuleDetector(language="xx")


# -- regex engines --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?<![\p{L}\p{N}])\p{Lu}[\p{Ll}\p{M}]+",
        r"[^\p{L}\s]+",
        r"\P{L}+",
        r"\d{1,2}(?<=(?<!\d)(?:0?[1-9]|[12]\d|3[01]))/\d{4}",
    ],
)
def test_fast_compilation_finds_the_same_matches(pattern):
    import regex

    text = "Ánimo, Ñandú y Émile: 12/2019 31/2020 45/2020 — naïve Zoë über 3,5 ºC"
    fast = compile_fast(pattern, calibrate=True)
    slow = regex.compile(pattern, regex.V0)
    assert [m.span() for m in fast.finditer(text)] == [m.span() for m in slow.finditer(text)]


def test_translate_spells_out_properties_only_where_it_can():
    assert translate(r"\p{Lu}x") is not None and "\\p" not in translate(r"\p{Lu}x")
    assert translate(r"[\P{L}]") is None  # a negated property inside a class
    assert translate(r"\p{Greek}") is None
    assert engine_of(compile_fast(r"(?<=a+)b")) == "regex"  # variable-width lookbehind: regex module


def test_detector_pickles_for_worker_processes():
    import pickle

    det = RuleDetector(language="es")
    doc = Document("d", "Nombre: Ana\nNHC: 1234567.")
    before = det.detect_one(doc)
    again = pickle.loads(pickle.dumps(det))
    assert again.detect_one(doc) == before
