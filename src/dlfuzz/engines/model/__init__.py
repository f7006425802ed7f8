"""The model engine: seeds, mutation rules (LEMON, DLJSFuzzer), guidance.

Models are IR values (``dlfuzz.ir.Model``: a checked graph plus numpy weights), so every
mutation rule is a pure function from a model to a new, checked model that raises
``dlfuzz.errors.Rejected`` when it does not apply; the engine chains rules for higher-order
mutants and steers the choice of seed and rule with the papers' heuristics.
"""
