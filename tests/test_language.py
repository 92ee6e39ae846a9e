"""Language identification: short, lowercase and uppercase notes, undeterminable text, the model cache."""

from __future__ import annotations

import numpy as np
import pytest

from clinideid.text import language as language_module
from clinideid.text.language import MIN_CONFIDENCE, SUPPORTED, identify_language
from language_fixtures import SHORT_NOTES

CASES = [(lang, text) for lang, texts in SHORT_NOTES.items() for text in texts]


@pytest.mark.parametrize("lang, text", CASES)
def test_short_lowercase_notes_are_identified_with_confidence(lang, text):
    for variant in (text, text.upper(), text.capitalize()):
        guess = identify_language(variant)
        assert guess.language == lang
        assert guess.reliable and guess.confidence is not None and guess.confidence >= MIN_CONFIDENCE
        assert guess.warning() is None


def test_every_supported_language_is_covered():
    assert set(SHORT_NOTES) == set(SUPPORTED)


@pytest.mark.parametrize("text", ["12/03/2019 45 120/80", "  0171 4402985 ", "—", "", "ok", "x"])
def test_text_without_evidence_falls_back_to_the_default_with_a_warning(text):
    guess = identify_language(text, default="es")
    assert guess.language == "es" and guess.confidence is None
    assert not guess.determined and not guess.reliable
    warning = guess.warning()
    assert warning is not None and "'es'" in warning and "--language" in warning
    assert guess.to_dict() == {"confidence": None, "reliable": False}


def test_a_weak_guess_is_kept_but_flagged_without_the_text():
    text = "bp 120/80 hr 72"  # abbreviations and numbers: every language is about as likely
    guess = identify_language(text)
    assert guess.determined and guess.language in SUPPORTED
    assert guess.confidence is not None and guess.confidence < MIN_CONFIDENCE and not guess.reliable
    warning = guess.warning()
    assert warning is not None and "low confidence" in warning and f"{guess.language!r}" in warning
    assert "120" not in warning and "bp" not in warning


def test_the_six_language_model_is_cached_and_a_broken_copy_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("CLINIDEID_CACHE_DIR", str(tmp_path))
    from py3langid import __version__

    path = language_module._cache_path(__version__)
    assert path is not None and path.is_relative_to(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a model")
    monkeypatch.setattr(language_module, "_IDENTIFIER", None)
    rebuilt = language_module._identifier()  # from the library's own file; the copy is written anew
    with np.load(path) as data:
        assert data["classes"].tolist() == rebuilt.nb_classes and sorted(rebuilt.nb_classes) == sorted(
            SUPPORTED
        )
    monkeypatch.setattr(language_module, "_IDENTIFIER", None)
    cached = language_module._identifier()
    assert cached is not rebuilt
    for _lang, text in [*CASES[::3], ("", "bp 120/80 hr 72")]:
        assert cached.classify(text) == rebuilt.classify(text)


def test_no_cache_when_caching_is_off(monkeypatch):
    monkeypatch.setenv("CLINIDEID_CACHE_DIR", "off")
    assert language_module._cache_path("0") is None
