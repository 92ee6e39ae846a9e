"""The one registry mechanism: built-ins on demand, plug-ins through entry points, clear errors."""

from __future__ import annotations

import sys
import textwrap

import pytest

from clinideid.detect.base import DETECTORS, available_detectors, build_detector
from clinideid.document import Document
from clinideid.errors import ConfigError, UnknownFormatError
from clinideid.formats.base import FORMATS, available_formats, get_codec
from clinideid.registry import Registry
from clinideid.transform.base import OPERATORS, available_operators, build_operator
from clinideid.transform.generalize import DATE_STRATEGIES, available_strategies

PLUGIN_MODULE = textwrap.dedent(
    '''
    """A plug-in package as a hospital would ship it."""
    import re

    from clinideid.detect.base import Detector
    from clinideid.document import Span
    from clinideid.transform.base import Operator


    class WardCodeDetector(Detector):
        """Finds this hospital's ward codes ("WX-1234")."""

        def detect_one(self, doc):
            return [
                Span(m.start(), m.end(), "LOCATION_OTHER", text=m.group(), source=self.name)
                for m in re.finditer(r"WX-\\d{4}", doc.text)
            ]


    class Stars(Operator):
        name = "stars"

        def replace(self, span, ctx):
            return "*" * (span.end - span.start)
    '''
)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """An installed distribution with entry points in three groups (one broken, one shadowing a built-in)."""
    (tmp_path / "ward_plugin.py").write_text(PLUGIN_MODULE)
    info = tmp_path / "ward_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ward-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[clinideid.detectors]\n"
        "ward_codes = ward_plugin:WardCodeDetector\n"
        "broken = ward_plugin_missing:Nothing\n"
        "rules = ward_plugin:WardCodeDetector\n"
        "[clinideid.operators]\n"
        "stars = ward_plugin:Stars\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for registry in (DETECTORS, OPERATORS, FORMATS):
        registry.reset_plugins()
    yield
    sys.modules.pop("ward_plugin", None)
    for registry in (DETECTORS, OPERATORS, FORMATS):
        registry.reset_plugins()


def test_plugins_are_found_through_entry_points(plugin, caplog):
    detector = build_detector({"type": "ward_codes", "name": "wards"})
    spans = detector.detect_one(Document("d", "Moved to WX-1234 today.", "en"))
    assert [(s.text, s.label, s.source) for s in spans] == [("WX-1234", "LOCATION_OTHER", "wards")]
    assert "ward_codes" in available_detectors()
    assert "stars" in available_operators()
    assert type(build_operator("stars")).__name__ == "Stars"


def test_a_broken_plugin_or_one_shadowing_a_builtin_is_skipped(plugin, caplog):
    names = available_detectors()
    assert "broken" not in names
    assert type(build_detector({"type": "rules", "language": "en"})).__name__ == "RuleDetector"
    assert any("broken" in r.getMessage() for r in caplog.records)
    assert any("built-in" in r.getMessage() for r in caplog.records)


def test_builtins_of_every_kind_are_listed():
    assert {"rules", "crf", "hybrid", "neural", "transformer"} <= set(available_detectors())
    assert {"surrogate", "redact", "date_shift", "keep"} <= set(available_operators())
    assert {"brat", "jsonl", "conll", "i2b2"} <= set(available_formats())
    assert available_strategies() and set(available_strategies()) == set(DATE_STRATEGIES.names())


def test_unknown_names_get_clear_errors_listing_what_exists():
    with pytest.raises(ConfigError, match=r"unknown detector type 'nope'; available: .*rules"):
        build_detector({"type": "nope"})
    with pytest.raises(ConfigError, match="unknown operator 'nope'"):
        build_operator("nope")
    with pytest.raises(UnknownFormatError, match="unknown corpus format 'nope'"):
        get_codec("nope")


def test_a_registry_of_its_own():
    reg: Registry[int] = Registry("widget", "clinideid.test_widgets")

    @reg.register("one")
    def one() -> int:
        return 1

    reg.add("two", 2)
    assert reg.get("one")() == 1 and reg.get("two") == 2
    assert "two" in reg and "three" not in reg
    assert reg.names() == ["one", "two"]
    with pytest.raises(ConfigError, match=r"unknown widget 'three'; available: one, two"):
        reg.get("three")
