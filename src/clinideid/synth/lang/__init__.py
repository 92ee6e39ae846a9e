"""One module per language: templates (clinideid's own text), formats, distractors, abbreviations."""

from __future__ import annotations

from clinideid.synth.lang import de, en, es, fr, it, ru
from clinideid.synth.profile import LanguageProfile

PROFILES: dict[str, LanguageProfile] = {m.PROFILE.code: m.PROFILE for m in (de, en, es, fr, it, ru)}
