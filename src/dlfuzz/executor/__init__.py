"""Sandboxed execution: one long-lived worker process per backend."""
