"""Synthetic clinical notes with gold PHI spans, in six languages.

``generate("it", 200, seed=7)`` returns annotated ``Document``s: discharge letters, progress and nursing
notes, radiology and lab reports, referral letters, forms and emergency notes, written in several styles
(normal, upper case, lower case, telegraphic, missing spaces, rebuilt from tokens, OCR noise). PHI values
come from the packaged word lists and each country's formats; eponyms, drugs, scores and vital signs appear
as unannotated distractors. The templates are clinideid's own text. Used to train detectors for languages
without an annotated corpus and to test pipelines (``clinideid synth``).
"""

from clinideid.synth.generator import DOC_TYPES, LANGUAGES, generate, generate_notes, generate_one
from clinideid.synth.segments import SynthNote
from clinideid.synth.styles import STYLES

__all__ = ["DOC_TYPES", "LANGUAGES", "STYLES", "SynthNote", "generate", "generate_notes", "generate_one"]
