"""Cases and what crosses a process boundary with them: values only.

One module per case kind (``api``, ``grad``, ``graph``, ``program``, ``train``) plus the shared values
(``core``) and the ``CaseKind`` protocol with its registry lookup (``kind``). This package
is the bottom floor: it imports nothing of dlfuzz but ``errors`` (and the registry, lazily,
when a kind is looked up).
"""

from dlfuzz.cases.api import ApiCase
from dlfuzz.cases.core import (
    COMPLEX_DTYPES,
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    OUTPUT_TOO_LARGE,
    STATUSES,
    Call,
    DType,
    Finding,
    Outcome,
    Ref,
    Tensor,
    dtype_name,
)
from dlfuzz.cases.grad import GradCase
from dlfuzz.cases.graph import GraphCase
from dlfuzz.cases.kind import CaseKind, Expectation, Reduction, TriageTools, kind_of
from dlfuzz.cases.program import PROGRAM_LIBRARIES, ProgramCase
from dlfuzz.cases.train import TrainCase

__all__ = [
    "COMPLEX_DTYPES", "DTYPES", "FLOAT_DTYPES", "INT_DTYPES", "OUTPUT_TOO_LARGE",
    "PROGRAM_LIBRARIES", "STATUSES",
    "ApiCase", "Call", "CaseKind", "DType", "Expectation", "Finding", "GradCase", "GraphCase",
    "Outcome",
    "ProgramCase", "Reduction", "Ref", "Tensor", "TrainCase", "TriageTools", "dtype_name",
    "kind_of",
]
