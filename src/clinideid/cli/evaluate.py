"""``clinideid evaluate``."""
