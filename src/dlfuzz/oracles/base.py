"""What oracles share: the context they judge in, and the Finding constructor."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.cases import ApiCase, Finding, Outcome
from dlfuzz.oracles.reference import Judge
from dlfuzz.oracles.signature import make_signature

Item = tuple[ApiCase, dict[str, Outcome]]


@dataclass
class OracleContext:
    """Facts about the backends of a campaign plus the reference judge."""

    judge: Judge
    library_of: dict[str, str]
    compiled: dict[str, bool]
    stats: Counter[str] = field(default_factory=Counter)
    # The engine's spec check for violate-mode inputs: the constraints a case breaks
    # (None when the engine cannot tell). A boundary finding needs exactly the one the
    # input was made to break, also after reduction shrank it.
    broken: Callable[[Any], list[str] | None] | None = None
    # Whether an API case must give the same bits when run again (None: unknown, so
    # the determinism oracle leaves API cases alone); random APIs such as dropout do not.
    deterministic: Callable[[Any], bool] | None = None
    # Where the constraint a violate-mode case breaks comes from (the engine's
    # ``constraint_source``); a boundary finding carries it as ``constraint_source``.
    constraint_source: Callable[[Any], str] | None = None

    def eager_sibling(self, backend: str) -> str | None:
        """The eager backend of the same library as a compiled one (torch for torch-compile)."""
        lib = self.library_of.get(backend)
        for other, other_lib in self.library_of.items():
            if other_lib == lib and not self.compiled.get(other, False) and other != backend:
                return other
        return None


class Oracle:
    """Judges cases from their outcomes. ``check`` (or ``check_many``) is the hook."""

    name = "oracle"
    #: The kinds of case (``case.kind``) this oracle judges; the campaign hands it no
    #: other. Programs have their own oracles, so the default is API calls and models.
    case_kinds: tuple[str, ...] = ("api", "graph")

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        raise NotImplementedError

    def check_many(self, items: Sequence[Item], ctx: OracleContext) -> list[list[Finding]]:
        return [self.check(case, outcomes, ctx) for case, outcomes in items]


def finding(oracle: str, symptom: str, case: ApiCase, backend: str, stage: str, message: str,
            signature_message: str | None = None, **details: Any) -> Finding:
    """A Finding with its signature computed the one way dedup expects."""
    sig_msg = message if signature_message is None else signature_message
    return Finding(
        oracle=oracle, symptom=symptom, api=case.api, guilty_backend=backend, stage=stage,
        message=message, signature=make_signature(symptom, stage, backend, case.api, sig_msg),
        case_id=case.id, details=tuple(sorted(details.items())))


def input_dtypes(case: ApiCase) -> str:
    return ",".join(sorted({t.dtype for t in case.tensors})) or "-"
