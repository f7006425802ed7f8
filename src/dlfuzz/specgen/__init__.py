"""Offline generation of the API engine's data files: per-library API specs and counterparts.

Everything here runs before a campaign, never during one: it enumerates a library's APIs
(signatures, docstrings, the Python or JavaScript checks of their source, hand hint tables
kept as data files under ``hints/``), refines constraints by running generated inputs, and
validates counterpart candidates, then writes ``engines/api/data/*.json``. It may import
``dlfuzz.engines.api`` (spec format, constraints, counterpart model, error-feedback rules);
the runtime (``engines/api``, ``campaign``, ``dlfuzz run``) never imports ``specgen``.
"""
