"""``clinideid stats``."""
