"""Review of detected PHI by people: documents, their spans, reviewers' corrections (SQLite)."""
