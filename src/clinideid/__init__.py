"""clinideid: de-identification of clinical free text."""

from clinideid.document import Document, Span
from clinideid.errors import ClinideidError

__version__ = "0.1.0"
__all__ = ["ClinideidError", "Document", "Span", "__version__"]
