"""Error-feedback constraints (DLLens §III-C): what a library's error message implies.

Used at run time (the API engine learns constraints from rejected intended-valid inputs)
and offline (``specgen.refine``), so it lives in the runtime package. Call
``errorfeedback.engine.constraints_from_error``; the rules are grouped by what they read (``ranks``, ``dtypes``, ``shapes``, ``sizes``).
"""
