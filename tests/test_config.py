from pathlib import Path

import pytest

from clinideid.config import default_config, load_config, parse_config
from clinideid.errors import ConfigError
from clinideid.text.language import SUPPORTED


@pytest.mark.parametrize("language", SUPPORTED)
def test_default_configs_validate(language):
    cfg = default_config(language)
    assert cfg.language == language
    assert cfg.detectors and cfg.detectors[0]["type"] in ("rules", "hybrid")
    if cfg.detectors[0]["type"] == "hybrid":  # languages with a shipped model combine it with the rules
        assert cfg.detectors[0]["language"] == language and cfg.detectors[0]["models"]
    assert cfg.operator_for("DATE").operator == "date_shift"
    assert cfg.operator_for("PATIENT").operator == "surrogate"


def test_operator_lookup_by_label_category_default():
    cfg = parse_config(
        {
            "language": "en",
            "detectors": [{"type": "rules", "language": "en"}],
            "operators": {"default": "tag", "NAME": "surrogate", "DOCTOR": "keep"},
        }
    )
    assert cfg.operator_for("DOCTOR").operator == "keep"
    assert cfg.operator_for("PATIENT").operator == "surrogate"
    assert cfg.operator_for("PHONE").operator == "tag"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"language": "xx", "detectors": [{"type": "rules"}]}, "unsupported language"),
        ({"language": "en", "detectors": []}, "at least one detector"),
        ({"language": "en", "detectors": [{"name": "x"}]}, "needs a 'type'"),
        (
            {"language": "en", "detectors": [{"type": "rules"}], "operators": {"NAMES": "tag"}},
            "unknown labels",
        ),
        (
            {"language": "en", "detectors": [{"type": "rules"}], "resolution": {"policy": "x"}},
            "unknown policy",
        ),
        ({"language": "en", "detectors": [{"type": "rules"}], "bogus": 1}, "bogus"),
        (["not", "a", "mapping"], "must be a mapping"),
    ],
)
def test_bad_configs_have_clear_errors(data, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


def test_load_config_file_errors(tmp_path: Path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("language: [unclosed", "utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    good = tmp_path / "good.yaml"
    good.write_text("language: es\ndetectors:\n  - type: rules\n    language: es\n", "utf-8")
    assert load_config(good).language == "es"
    with pytest.raises(ConfigError, match="no default pipeline"):
        default_config("xx")
