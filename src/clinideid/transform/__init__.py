"""Replacement of detected PHI: operators, surrogates and date strategies."""
