"""Offline extraction of per-library API specs (TensorJSFuzz §3.1, DLLens §III-B/C).

``docstrings`` (type hints and relational sentences of parameter docs), ``validation``
(constraints from the Python checks of an API's source), ``feedback`` (constraints from
error messages) and ``refine`` (the error-feedback loop) are library-neutral; the
``<lib>_apis`` modules enumerate each library's APIs and combine them. Run
``python -m dlfuzz.engines.api.extraction {torch,tf,jax}`` to regenerate a spec file.
"""
