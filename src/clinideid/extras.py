"""Optional dependencies: which pip extra installs each, and the error that says so.

``pip install clinideid`` is enough for rules and CRF pipelines (the default pipelines of en, de, fr, it and
ru). Learned neural detectors need PyTorch (``clinideid[neural]``), transformer detectors also need
``transformers`` and fastText/word2vec vectors need ``gensim``. Those modules are imported only when such a
detector or command is used, so a missing one surfaces as this clear error, never at ``import clinideid``.
"""

from __future__ import annotations

from clinideid.errors import ModelError

#: top-level module -> the extra that installs it
EXTRAS = {
    "torch": "neural",
    "transformers": "transformers",
    "gensim": "embeddings",
    "natasha": "natasha",
    "spacy": "spacy",
    "stanza": "stanza",
    "fastapi": "service",
    "uvicorn": "service",
    "multipart": "service",
    "python_multipart": "service",
    "safetensors": "privacy",
    **dict.fromkeys(("docx", "pypdfium2", "PIL", "striprtf", "odf", "lxml"), "documents"),
}


def missing_extra(exc: ModuleNotFoundError, what: str) -> ModelError | None:
    """A ``ModelError`` naming the extra to install when ``exc`` is about an optional dependency."""
    module = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return None
    return ModelError(
        f"{what} needs {module}, which is not installed; install it with: pip install 'clinideid[{extra}]' "
        "(rules and CRF pipelines, such as the default en, de, fr, it and ru ones, work without it)"
    )
