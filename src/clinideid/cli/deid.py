"""``clinideid deid``."""
