"""One module per case kind, each a ``CaseKind`` (``dlfuzz.cases.kind``): how triage, bug
folders, oracles and the report treat cases of that kind.

Reached only through ``dlfuzz.cases.kind_of`` (the ``CASE_KINDS`` registry, lazily), so
triage and the oracles never import a kind and no import cycle forms. A kind may use
triage's generic helpers (reproducer pieces, reduction passes).
"""
