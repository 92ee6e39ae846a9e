"""Batch de-identification: reading inputs robustly, running the pipeline, writing outputs and a summary."""
