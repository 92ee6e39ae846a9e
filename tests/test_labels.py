from pathlib import Path

import pytest

from clinideid.errors import ConfigError, LabelError
from clinideid.labels import (
    available_schemes,
    canonical,
    is_hipaa_label,
    load_mapping,
    project_label,
)


def test_canonical_taxonomy_has_i2b2_2014_categories():
    tax = canonical()
    for cat in ["NAME", "PROFESSION", "LOCATION", "AGE", "DATE", "CONTACT", "ID"]:
        assert cat in tax.categories
    assert tax.category_of("MEDICALRECORD") == "ID"
    assert tax.from_i2b2("LOCATION", "OTHER") == "LOCATION_OTHER"
    assert tax.to_i2b2("LOCATION_OTHER") == ("LOCATION", "OTHER")
    assert tax.from_i2b2("DATE", None) == "DATE"
    assert is_hipaa_label("PATIENT") and not is_hipaa_label("DOCTOR")


def test_meddocan_mapping_covers_29_guideline_types():
    m = load_mapping("meddocan")
    assert len(m.mapping) == 29
    assert m("NOMBRE_SUJETO_ASISTENCIA") == "PATIENT"
    assert m("TERRITORIO") == "CITY"


@pytest.mark.parametrize("scheme", ["meddocan", "i2b2_2006", "eds_pseudo", "presidio_synth", "canonical"])
def test_packaged_schemes_load(scheme):
    assert scheme in available_schemes()
    m = load_mapping(scheme)
    assert all(v in canonical() for v in m.mapping.values())


def test_unknown_label_is_clear_error_or_fallback():
    m = load_mapping("meddocan")
    with pytest.raises(LabelError, match="not in the 'meddocan' mapping"):
        m("NOT_A_LABEL")
    assert m.with_fallback("OTHER_PHI")("NOT_A_LABEL") == "OTHER_PHI"


def test_user_mapping_file(tmp_path: Path):
    f = tmp_path / "mine.yaml"
    f.write_text("scheme: mine\nmapping:\n  Person: PERSON\n  When: DATE\n", "utf-8")
    m = load_mapping(f)
    assert m.scheme == "mine" and m("When") == "DATE"
    bad = tmp_path / "bad.yaml"
    bad.write_text("scheme: bad\nmapping:\n  Person: HUMAN\n", "utf-8")
    with pytest.raises(ConfigError, match="unknown canonical labels: HUMAN"):
        load_mapping(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_mapping(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="unknown label scheme"):
        load_mapping("nope")


def test_project_label_levels():
    assert project_label("PATIENT", "category") == "NAME"
    assert project_label("PATIENT", "binary") == "PHI"
    assert project_label("NOMBRE_SUJETO_ASISTENCIA", "category") == "NOMBRE_SUJETO_ASISTENCIA"
    with pytest.raises(ConfigError):
        project_label("PATIENT", "bogus")
