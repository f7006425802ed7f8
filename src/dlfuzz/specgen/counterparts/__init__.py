"""Offline counterpart discovery and validation (DLLens §III-A).

``python -m dlfuzz.specgen.counterparts validate|candidates|stats`` builds candidates
(same-name matches, compositions, compiled modes, float64 precision, the TF.js table of
``tfjs``), validates them in sandboxed workers and writes
``engines/api/data/counterparts/<library>.json``, which the API engine reads through
``dlfuzz.engines.api.counterparts`` (the model, the compositions and the worker-side
runners stay there).
"""
