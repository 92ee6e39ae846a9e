"""Which of clinideid's languages a document is written in, to route it to that language's pipeline.

The guess comes from py3langid (langid.py's naive Bayes model over byte n-grams, shipped inside the package)
restricted to ``SUPPORTED``, with its probabilities normalised over those six languages. It was chosen by
``benchmarks/language_id.py`` (numbers in docs/benchmarks.md, "Language identification"): on 30-character
clinical snippets it is right 86-87 % of the time as written, lowercased or uppercased (the frequent-word
guesser it replaced: 46 %), 93 % at 60 characters and 98 % from 120 on, in well under a millisecond per
snippet.

Confidence: the probability of the chosen language. Below ``MIN_CONFIDENCE`` (0.5) the guess is still used
but flagged: on the benchmark's snippets of at most 60 characters, guesses under 0.5 were right 47 % of the
time and the others 98 %; a higher threshold mostly flags right answers. Text without a single letter (only
numbers, dates, punctuation), or with none of the model's letter sequences, cannot be judged at all: the
caller's default language is used and the guess says so.

The library's model covers 97 languages in an LZMA file that takes seconds to unpack; the six-language part
this module needs is kept, after the first load, in clinideid's cache folder (``clinideid.cache``) and loads
from there in a fraction of a second. Any problem with that copy falls back to the library's own file.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import tempfile
import threading
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from clinideid.cache import cache_dir
from clinideid.text.invisible import visible_text

log = logging.getLogger(__name__)

SUPPORTED = ("en", "es", "it", "ru", "fr", "de")
MIN_CONFIDENCE = 0.5
SAMPLE_CHARS = 3_000  # more adds time, not accuracy (the benchmark's whole notes: as accurate as uncut)

_LETTER = regex.compile(r"\p{L}")
_LOCK = threading.Lock()
_IDENTIFIER: Any = None


@dataclass(frozen=True)
class LanguageGuess:
    """A language of ``SUPPORTED`` and how sure the guess is.

    ``confidence`` is the probability of ``language`` among ``SUPPORTED``, or None when the text had nothing
    to judge by and ``language`` is the caller's default.
    """

    language: str
    confidence: float | None

    @property
    def determined(self) -> bool:
        return self.confidence is not None

    @property
    def reliable(self) -> bool:
        return self.confidence is not None and self.confidence >= MIN_CONFIDENCE

    def warning(self) -> str | None:
        """What a document's report says about an unreliable guess (never any of the text)."""
        if self.confidence is None:
            return (
                f"language could not be determined (nothing in the text to judge by); processed as "
                f"{self.language!r}, the default: pass --language or a language field if that is wrong"
            )
        if self.confidence < MIN_CONFIDENCE:
            return (
                f"language guessed as {self.language!r} with low confidence ({self.confidence:.2f} < "
                f"{MIN_CONFIDENCE}); pass --language or a language field if that is wrong"
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        confidence = None if self.confidence is None else round(self.confidence, 3)
        return {"confidence": confidence, "reliable": self.reliable}


def identify_language(text: str, default: str = "en") -> LanguageGuess:
    """The most likely of ``SUPPORTED`` for ``text`` with its probability, or ``default`` (confidence None)
    when the text gives nothing to judge by; words are read as a reader sees them, without invisible
    characters inside."""
    sample = visible_text(text[:SAMPLE_CHARS])
    if not _LETTER.search(sample):
        return LanguageGuess(default, None)
    language, probability = _identifier().classify(sample)
    if probability < 1 / len(SUPPORTED) + 1e-6:  # every language equally likely: the model saw nothing
        return LanguageGuess(default, None)
    return LanguageGuess(language, float(probability))


def _identifier() -> Any:
    global _IDENTIFIER
    if _IDENTIFIER is None:
        with _LOCK:
            if _IDENTIFIER is None:
                _IDENTIFIER = _load()
    return _IDENTIFIER


def _load() -> Any:
    from py3langid import __version__
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    path = _cache_path(__version__)
    if path is not None:
        try:
            import numpy as np

            with np.load(path, allow_pickle=False) as data:
                if sorted(data["classes"].tolist()) != sorted(SUPPORTED):
                    raise ValueError("a model for other languages")
                return LanguageIdentifier(
                    data["ptc"],
                    data["pc"],
                    data["classes"].tolist(),
                    _uint_array(data["nextmove"]),
                    data["output"].tolist(),
                    norm_probs=True,
                    tk_row=_uint_array(data["row"]),
                )
        except FileNotFoundError:
            pass
        except Exception as exc:
            log.debug("language model cache ignored (%s)", exc.__class__.__name__)
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(SUPPORTED))
    if path is not None:
        _save(identifier, path)
    return identifier


def _uint_array(values: Any) -> array:
    """A numpy array of unsigned integers as the stdlib array py3langid walks its automaton with."""
    import numpy as np

    out = array("I")
    out.frombytes(memoryview(np.ascontiguousarray(values, dtype=np.uint32)).cast("B"))
    return out


def _cache_path(version: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / "langid" / f"py3langid-{version}-{'-'.join(SUPPORTED)}.npz"


def _save(identifier: Any, path: Path) -> None:
    """Write the six-language model atomically (readers see it whole or not at all); failures are silent."""
    import numpy as np

    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        ptc=np.asarray(identifier.nb_ptc),
        pc=np.asarray(identifier.nb_pc),
        classes=np.array(identifier.nb_classes),
        nextmove=np.frombuffer(identifier.tk_nextmove, dtype=f"u{identifier.tk_nextmove.itemsize}"),
        row=np.frombuffer(identifier.tk_row, dtype=f"u{identifier.tk_row.itemsize}"),
        output=np.asarray(identifier.tk_output, dtype=np.int32),
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(buffer.getvalue())
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    except OSError as exc:
        log.debug("language model cache not written (%s)", exc.__class__.__name__)
