"""Rule packs: validation errors that name the file and the rule, includes and extension, packaged packs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from clinideid.detect.rules import RuleDetector, RuleEngine, available_packs, compile_pack
from clinideid.errors import ConfigError


def write_pack(tmp_path: Path, body: str, name: str = "pack.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), "utf-8")
    return path


def pack_with_rule(rule: str) -> str:
    return "name: bad\npasses:\n  - name: ids\n    rules:\n" + textwrap.indent(
        textwrap.dedent(rule), "      "
    )


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            "- {id: broken, kind: regex, label: IDNUM, pattern: '(\\d+'}",
            r"rule 'broken': invalid regular expression",
        ),
        (
            "- {id: wrong_label, kind: regex, label: NAME_OF_PET, pattern: x}",
            r"rule 'wrong_label': unknown label 'NAME_OF_PET'",
        ),
        (
            "- {id: no_check, kind: regex, label: IDNUM, pattern: x, validator: mod11}",
            r"rule 'no_check': unknown validator 'mod11'",
        ),
        (
            "- {id: undefined, kind: regex, label: IDNUM, pattern: '{{NOPE}}'}",
            r"rule 'undefined': unknown definition \{\{NOPE\}\}",
        ),
        ("- {id: unlabelled, kind: regex, pattern: x}", r"rule 'unlabelled'.*needs a 'label'"),
        ("- {id: typo, kind: regex, label: IDNUM, patern: x}", r"rule 'typo', field 'patern'"),
        ("- {id: what, kind: magic, label: IDNUM}", r"rule 'what'.*kind"),
        (
            "- {id: bad_group, kind: regex, label: IDNUM, pattern: '(\\d)', group: v}",
            r"rule 'bad_group': 'group' 'v'",
        ),
        ("- {id: cue_less, kind: context_name, label: DOCTOR}", r"rule 'cue_less'.*cues"),
        ("- {id: empty, kind: gazetteer, label: CITY}", r"rule 'empty'.*needs 'lists'"),
        (
            "- {id: nolist, kind: gazetteer, label: CITY, lists: [no_such_list]}",
            r"rule 'nolist'.*no_such_list",
        ),
        ("- {id: 'bad id!', kind: regex, label: IDNUM, pattern: x}", r"field 'id'"),
        (
            "- {id: flags, kind: regex, label: IDNUM, pattern: x, flags: [FUZZY]}",
            r"rule 'flags'.*unknown regex flag",
        ),
        ("- {id: ctx, kind: regex, label: IDNUM, pattern: x, context: {window: 3}}", r"rule 'ctx'.*before"),
    ],
)
def test_invalid_rules_give_clear_errors_naming_file_pass_and_rule(tmp_path, rule, message):
    path = write_pack(tmp_path, pack_with_rule(rule))
    with pytest.raises(ConfigError, match=message) as info:
        compile_pack(path)
    assert str(path) in str(info.value)


def test_duplicate_rule_ids_and_bad_yaml(tmp_path):
    dup = write_pack(
        tmp_path,
        pack_with_rule(
            """
            - {id: same, kind: regex, label: IDNUM, pattern: x}
            - {id: same, kind: regex, label: IDNUM, pattern: y}
            """
        ),
    )
    with pytest.raises(ConfigError, match="rule id 'same' is used twice"):
        compile_pack(dup)
    broken = write_pack(tmp_path, "name: x\npasses:\n  - name: a\n    rules: [MR #1]\n", "broken.yaml")
    with pytest.raises(ConfigError, match=r"not valid YAML at line 5.*quote values"):
        compile_pack(broken)
    with pytest.raises(ConfigError, match="does not exist"):
        compile_pack(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="unknown rule pack 'klingon'"):
        compile_pack("klingon")


def test_include_cycle_is_reported(tmp_path):
    write_pack(tmp_path, "name: a\ninclude: [b.yaml]\n", "a.yaml")
    write_pack(tmp_path, "name: b\ninclude: [a.yaml]\n", "b.yaml")
    with pytest.raises(ConfigError, match="includes itself"):
        compile_pack(tmp_path / "a.yaml")


def test_user_pack_extends_a_packaged_one(tmp_path):
    path = write_pack(
        tmp_path,
        """
        name: hospital_x
        include: [es]
        definitions:
          HX_ID: 'HX-\\d{6}'
        passes:
          - name: identifiers
            disable: [dni]
            rules:
              - {id: hx_number, kind: regex, label: MEDICALRECORD, pattern: '{{HX_ID}}'}
          - name: wards
            after: identifiers
            rules:
              - {id: ward, kind: regex, label: LOCATION_OTHER, pattern: 'Planta \\d+[A-Z]'}
        """,
    )
    pack = compile_pack(path)
    assert pack.pass_names.index("wards") == pack.pass_names.index("identifiers") + 1
    ids = pack.rule_ids()
    assert "hospital_x/identifiers/hx_number" in ids and "es/identifiers/dni" not in ids
    assert "es/identifiers/nie" in ids and "common/contact/email" in ids
    det = RuleDetector(pack=path)
    from clinideid.document import Document

    spans = det.detect_one(Document("d", "Ingresa en Planta 3B con HX-123456. DNI: 12345678Z."))
    assert {(s.label, s.text, s.explanation) for s in spans} == {
        ("LOCATION_OTHER", "Planta 3B", "hospital_x/wards/ward"),
        ("MEDICALRECORD", "HX-123456", "hospital_x/identifiers/hx_number"),
        ("IDNUM", "12345678Z", "es/fields/form/dni"),
    }


def test_extension_errors(tmp_path):
    disable = write_pack(
        tmp_path, "name: u\ninclude: [es]\npasses:\n  - name: identifiers\n    disable: [nothing_like_it]\n"
    )
    with pytest.raises(ConfigError, match="cannot disable unknown rule"):
        compile_pack(disable)
    order = write_pack(tmp_path, "name: u\ninclude: [common]\norder: [contact, dates]\n", "o.yaml")
    with pytest.raises(ConfigError, match="'order' must list every pass"):
        compile_pack(order)
    anchor = write_pack(
        tmp_path, "name: u\ninclude: [common]\npasses:\n  - name: new\n    before: nowhere\n", "a.yaml"
    )
    with pytest.raises(ConfigError, match="no pass 'nowhere'"):
        compile_pack(anchor)


@pytest.mark.parametrize("name", sorted(available_packs()))
def test_packaged_packs_compile_with_documented_rule_ids(name):
    pack = compile_pack(name)
    assert pack.passes
    for rule_id in pack.rule_ids():
        assert rule_id.count("/") == 2


def test_es_and_en_pass_order_is_documented_order():
    assert compile_pack("es").pass_names[:6] == [
        "contact",
        "domains",
        "fields",
        "locations",
        "identifiers",
        "patient_names",
    ]
    en = compile_pack("en").pass_names
    assert en.index("patient_names") < en.index("other_names") < en.index("birth_dates") < en.index("dates")


def test_engine_runs_on_empty_and_odd_text():
    engine = RuleEngine(compile_pack("es"))
    assert engine.run("") == []
    assert engine.run("\x00\x01 \ue000\ue0ff ") == []
