"""Code block mutation operators (MoCo §III-C): AR, RG and BC, plus context fitting.

* API replacement (AR): the block's API becomes one of its functionally similar APIs,
  chosen by roulette over the similarity tau, among those that accept the slot's incoming
  rank. Parameters with the same name keep their values, required ones the new API
  lacks are drawn inside their legal range.
* Random generation (RG): one parameter gets a new value inside its legal range.
* Boundary checking (BC): one parameter gets a value just outside its legal range; the
  program must then raise (a negative node).

Context parameters (``in_channels`` of a torch Conv2d, ``in_features`` of a Linear) are
not mutated: they are set from the activation shape the parent program recorded at the
slot, so a mutant fits its place (MoCo's "context-appropriate code blocks").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dlfuzz.engines.program.template import Block, Raw


@dataclass(frozen=True)
class Mutant:
    block: Block
    operator: str  # AR | RG | BC | keep
    param: str = ""
    value: Any = None
    klass: str = ""


class Knowledge:
    """The knowledge base and similarity table of one library, behind one small face.

    Wraps ``knowledge`` and ``similarity`` (P-KB's modules); tests may pass another
    object with the same methods.
    """

    def __init__(self, library: str) -> None:
        from dlfuzz.engines.program import knowledge

        self.library = library
        self.kb = knowledge
        self.specs = knowledge.load_kb(library)

    def spec(self, api: str) -> Any:
        return self.specs.get(api)

    def similar(self, api: str) -> list[tuple[str, float]]:
        try:
            from dlfuzz.engines.program.similarity import similar
        except ImportError:  # the similarity table is not built: every known API, tau 1
            return [(a, 1.0) for a in self.specs if a != api]
        return [(a, t) for a, t in similar(self.library, api) if a in self.specs]

    def roulette(self, rng: Any, candidates: list[tuple[str, float]]) -> str | None:
        if not candidates:
            return None
        try:
            from dlfuzz.engines.program.similarity import roulette
        except ImportError:
            pass  # no similarity module: the plain weighted pick below
        else:
            return roulette(rng, candidates)
        weights = [max(t, 0.0) for _, t in candidates]
        total = sum(weights)
        if total <= 0:
            return candidates[int(rng.integers(len(candidates)))][0]
        point, acc = float(rng.random()) * total, 0.0
        for (api, _), w in zip(candidates, weights, strict=True):
            acc += w
            if point < acc:
                return api
        return candidates[-1][0]

    def accepts_rank(self, api: str, rank: int) -> bool:
        return bool(self.kb.accepts_rank(self.library, api, rank))

    def output_rank(self, api: str, rank: int, values: dict[str, Any]) -> int | None:
        return self.kb.output_rank(self.library, api, rank, values)

    def context_params(self, api: str) -> dict[str, str]:
        return dict(self.kb.context_params(self.library, api))

    def fixed_params(self, api: str) -> frozenset[str]:
        return frozenset(self.kb.fixed_params(self.library, api))

    def random_value(self, rng: Any, api: str, param: str, values: dict[str, Any]) -> Any:
        return self.kb.random_value(rng, self.specs[api], param, values)

    def boundary_value(self, rng: Any, api: str, param: str) -> Any:
        return self.kb.boundary_value(rng, self.specs[api], param)

    def value_class(self, api: str, param: str, value: Any) -> str:
        return str(self.kb.value_class(self.specs[api], param, value))

    def arity(self, api: str) -> int:
        return int(self.kb.context(self.library, api).get("arity", 1))

    def returns_tensor(self, api: str) -> bool:
        """False for layers returning a tuple (torch RNNs: output and state), which a
        slot of one tensor cannot take without glue code the template does not have."""
        return self.kb.context(self.library, api).get("returns", "tensor") == "tensor"


def fit_context(kb: Knowledge, block: Block, shape: tuple[int, ...]) -> Block:
    """Set the block's context parameters from the slot's incoming activation shape."""
    match = kb.context_params(block.api)
    if not match:
        return block
    values = block.values()
    for param, axis in match.items():
        try:
            dim = shape[int(axis)]
        except (IndexError, ValueError):
            continue
        if dim >= 0:
            values[param] = dim
    return block.with_args(values)


def _mutable(kb: Knowledge, api: str) -> list[str]:
    spec = kb.spec(api)
    if spec is None:
        return []
    skip = set(kb.context_params(api)) | kb.fixed_params(api)
    return [p.name for p in spec.params if p.name not in skip and not p.tensor_like]


def random_generation(kb: Knowledge, rng: Any, block: Block) -> Mutant | None:
    """RG: one parameter, a new value inside its legal range."""
    params = _mutable(kb, block.api)
    values = _plain(block.values())
    for k in rng.permutation(len(params)):
        param = params[int(k)]
        value = kb.random_value(rng, block.api, param, values)
        if value is None or (param in values and value == values[param]):
            continue
        mutated = block.with_args({**block.values(), param: value})
        return Mutant(mutated, "RG", param, value,
                      f"RG:{block.api}:{param}:{kb.value_class(block.api, param, value)}")
    return None


def api_replacement(kb: Knowledge, rng: Any, block: Block, rank: int) -> Mutant | None:
    """AR: a similar API (roulette over tau) that accepts the slot's rank."""
    candidates = [(a, t) for a, t in kb.similar(block.api)
                  if a != block.api and kb.arity(a) == 1 and kb.returns_tensor(a)
                  and kb.accepts_rank(a, rank)]
    new_api = kb.roulette(rng, candidates)
    if new_api is None:
        return None
    spec = kb.spec(new_api)
    old = block.values()
    values: dict[str, Any] = {}
    for p in spec.params:
        if p.tensor_like:
            continue
        if p.name in old:
            values[p.name] = old[p.name]
        elif not p.optional:
            drawn = kb.random_value(rng, new_api, p.name, _plain(values))
            if drawn is None:
                return None
            values[p.name] = drawn
    if kb.output_rank(new_api, rank, _plain(values)) is None:
        return None
    return Mutant(block.with_args(values, api=new_api), "AR", "", new_api, f"AR:{new_api}")


def boundary_check(kb: Knowledge, rng: Any, block: Block) -> Mutant | None:
    """BC: one parameter just outside its legal range (a negative node)."""
    params = _mutable(kb, block.api)
    for k in rng.permutation(len(params)):
        param = params[int(k)]
        value = kb.boundary_value(rng, block.api, param)
        if value is None:
            continue
        return Mutant(block.with_args({**block.values(), param: value}), "BC", param, value,
                      f"BC:{block.api}:{param}")
    return None


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """Values the knowledge base can evaluate: literal ones only (no source text)."""
    return {k: v for k, v in values.items() if not isinstance(v, Raw) and not k.startswith("#")}
