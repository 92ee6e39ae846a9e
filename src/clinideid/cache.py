"""The folder of clinideid's disk caches: compiled rule patterns, the language model's six-language part.

``$CLINIDEID_CACHE_DIR`` or the user cache folder (``$XDG_CACHE_HOME/clinideid``, else
``~/.cache/clinideid``); ``CLINIDEID_CACHE_DIR=off`` turns every cache off. Caches hold derived data only,
never document text.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off."""
    configured = os.environ.get("CLINIDEID_CACHE_DIR")
    if configured is not None:
        if configured.strip().lower() in ("", "off", "0", "false", "no"):
            return None
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "clinideid"
