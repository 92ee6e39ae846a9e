"""Session set-up shared by every test module."""

from __future__ import annotations

import os
import tempfile

# the rule-pattern cache goes to a folder of this test session, never to the user's cache
os.environ.setdefault("CLINIDEID_CACHE_DIR", tempfile.mkdtemp(prefix="clinideid-test-cache-"))
