"""Triage: raw findings -> confirmed, deduplicated, reduced bugs with reproducers."""
