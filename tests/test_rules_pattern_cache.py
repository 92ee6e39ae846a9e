"""The disk cache of compiled rule patterns: same matches as a fresh compile, and never in the way."""

from __future__ import annotations

import json
import re

import pytest

from clinideid.detect.rules import RuleDetector
from clinideid.detect.rules.codecache import PatternStore, cache_dir, pattern_store
from clinideid.detect.rules.compiler import compile_merged
from clinideid.detect.rules.fastre import compile_fast
from clinideid.detect.rules.loader import load_merged_pack
from clinideid.document import Document

TEXT = (
    "Patient: John Smith, DOB 01/02/1950, MRN 1234567. Seen by Dr. Okafor at St. Mary's Hospital, "
    "12 Elm Street, Springfield. Phone (555) 201-4433. Wife Maria called."
)


def _found(pack) -> list[tuple[int, int, str]]:
    from clinideid.detect.rules.engine import RuleEngine

    return [(f.start, f.end, f.label) for f in RuleEngine(pack).run(TEXT)]


def test_a_warm_cache_gives_the_same_pack(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINIDEID_CACHE_DIR", str(tmp_path))
    merged = load_merged_pack("en")
    with pattern_store("en-test") as cold:
        first = compile_merged(merged)
    files = list((tmp_path / "rules").glob("en-test-*.json"))
    assert len(files) == 1
    before = files[0].stat().st_mtime_ns
    with pattern_store("en-test") as warm:
        second = compile_merged(merged)
    assert cold.path == warm.path
    assert files[0].stat().st_mtime_ns == before  # nothing changed: not rewritten
    assert _found(first) == _found(second) and _found(first)


def test_cached_code_matches_like_re(tmp_path):
    path = tmp_path / "p.json"
    pattern = r"(?P<d>\d{2})/(?P<m>\d{2})/(?:\d{4})(?![0-9])"
    store = PatternStore(path)
    fresh = store.compile_re(pattern, re.IGNORECASE)
    store.save()
    cached = PatternStore(path).compile_re(pattern, re.IGNORECASE)
    text = "seen 01/02/1950 and 3/4/99, 11/12/2020x"
    assert [m.groupdict() for m in fresh.finditer(text)] == [m.groupdict() for m in cached.finditer(text)]
    assert cached.groupindex == fresh.groupindex and cached.flags == fresh.flags


def test_a_pattern_re_cannot_run_is_remembered_and_still_compiles(tmp_path):
    path = tmp_path / "p.json"
    variable_lookbehind = r"(?<=Dr\.?[ ]{1,3})\p{Lu}\w+"
    with pattern_store("x") as store:
        store.path = path
        compiled = compile_fast(variable_lookbehind)
    assert compiled.search("seen by Dr.  Okafor").group() == "Okafor"
    entries = json.loads(path.read_text())["entries"]
    assert ["no-re"] in entries.values()


@pytest.mark.parametrize("content", [b"\x00\xff not json", b'{"format": 99}', b'{"format":1,"tag":"x"}'])
def test_a_corrupt_or_foreign_cache_file_is_a_cold_cache(tmp_path, monkeypatch, content):
    monkeypatch.setenv("CLINIDEID_CACHE_DIR", str(tmp_path))
    (tmp_path / "rules").mkdir()
    with pattern_store("es") as probe:
        pass
    probe.path.write_bytes(content)
    with pattern_store("es"):
        pack = compile_merged(load_merged_pack("es"))
    assert pack.passes
    assert json.loads(probe.path.read_text())["entries"]  # rewritten with good entries


def test_cache_off_and_unwritable_folders_never_fail(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINIDEID_CACHE_DIR", "off")
    assert cache_dir() is None
    with pattern_store("es") as store:
        compile_merged(load_merged_pack("es"))
    assert store.path is None
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CLINIDEID_CACHE_DIR", str(blocker))
    with pattern_store("es"):
        pack = compile_merged(load_merged_pack("es"))
    assert pack.passes


def test_detector_output_is_the_same_with_and_without_cache(tmp_path, monkeypatch):
    from clinideid.detect.rules.compiler import _compile_cached

    doc = Document("t", TEXT, language="en")
    monkeypatch.setenv("CLINIDEID_CACHE_DIR", "off")
    _compile_cached.cache_clear()
    without = [(s.start, s.end, s.label) for s in RuleDetector(language="en").detect_one(doc)]
    monkeypatch.setenv("CLINIDEID_CACHE_DIR", str(tmp_path))
    for _ in range(2):  # cold, then warm
        _compile_cached.cache_clear()
        with_cache = [(s.start, s.end, s.label) for s in RuleDetector(language="en").detect_one(doc)]
        assert with_cache == without
    _compile_cached.cache_clear()
