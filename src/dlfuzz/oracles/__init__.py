"""Oracles: look at one case and its outcomes, return findings."""
