"""``ProgramEngine``: MoCo, the program-level engine (engine name ``program``).

Seeds (the built-in ones, or user files) are disassembled into a template and blocks
(``template.py``); a derivation tree per seed is grown level by level (``tree.py``):
the programs of a level are proposed together, run by the campaign's sandboxed workers,
and only once every one of them is back does the next level get derived from the
survivors, fitted to the activation shapes they recorded. A tree that is complete (every
slot filled) or dead (no survivor) starts over as a new round with fresh random choices.
Each program is written to ``<campaign>/programs/<node>.py`` (readable, runnable) with an
``index.jsonl`` line saying where it sits in the tree and how it ended.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import Finding, Outcome, ProgramCase
from dlfuzz.engines.base import Engine
from dlfuzz.engines.program.assemble import assemble, decode_shapes
from dlfuzz.engines.program.mutate import (
    Knowledge,
    api_replacement,
    boundary_check,
    fit_context,
    random_generation,
)
from dlfuzz.engines.program.settings import ProgramEngineSettings
from dlfuzz.engines.program.template import Block, disassemble, name_positionals
from dlfuzz.engines.program.tree import FAILED, GENERATION, OK, PENDING, Node, Seed, prune
from dlfuzz.errors import UsageError
from dlfuzz.libraries import LIBRARIES
from dlfuzz.oracles.program import is_generation_failure

SEED_DIR = Path(__file__).resolve().parent / "seeds"
def program_library(backend_library: str) -> str:
    """``keras-tf`` -> ``keras``; ``torch`` -> ``torch``."""
    return next((lib.name for lib in LIBRARIES if backend_library in lib.program_backends),
                backend_library)


def load_seed(item: str) -> tuple[str, str, str]:
    """(name, library, source) of a built-in seed name or a seed file path."""
    path = Path(item)
    if item.endswith(".py") or path.is_file():
        if not path.is_file():
            raise UsageError(f"--seed-program {item}: no such file")
        source = path.read_text()
        library = "keras" if re.search(r"^\s*(import keras|from keras)", source, re.M) \
            else "torch"
        return path.stem, library, source
    try:
        from dlfuzz.engines.program.seeds import SEEDS, seed_source
    except ImportError:  # the seed table is not there: the files are
        pass
    else:
        if item not in SEEDS:
            raise UsageError(f"--seed-program {item!r}: unknown seed; built-in seeds: "
                             f"{', '.join(sorted(SEEDS))} (or give a .py file)")
        return item, SEEDS[item].library, seed_source(item)
    file = SEED_DIR / f"{item}.py"
    if not file.is_file():
        known = ", ".join(sorted(p.stem for p in SEED_DIR.glob("*_*.py")))
        raise UsageError(f"--seed-program {item!r}: unknown seed; built-in seeds: {known}")
    return item, ("keras" if item.startswith("keras") else "torch"), file.read_text()


def builtin_seeds() -> list[str]:
    try:
        from dlfuzz.engines.program.seeds import SEEDS
        return sorted(SEEDS)
    except ImportError:
        return sorted(p.stem for p in SEED_DIR.glob("*_*.py"))


class _Tree:
    """One seed's derivation tree and where its growth stands."""

    def __init__(self, seed: Seed) -> None:
        self.seed = seed
        self.round = 0
        self.level = 0
        self.root: Node | None = None
        self.queue: list[Node] = []
        self.waiting: dict[str, Node] = {}
        self.finished: list[Node] = []
        self.failure = ""  # why the bare template failed, if it did


class ProgramEngine(Engine):
    """Proposes ``ProgramCase`` objects, level by level of MoCo's derivation trees."""

    name = "program"
    case_kind = "program"
    settings_class = ProgramEngineSettings

    def __init__(self, seed: int = 0, libraries: Sequence[str] = ("torch",),
                 apis: Iterable[str] | None = None, seed_programs: Sequence[str] = (),
                 times_mt: int = 4, knowledge: Mapping[str, Any] | None = None,
                 program_data: str = "") -> None:
        if times_mt < 1:
            raise UsageError(f"--times-mt {times_mt}: give at least 1")
        self.libraries = tuple(dict.fromkeys(program_library(lib) for lib in libraries))
        self.times_mt = times_mt
        self.rng = np.random.default_rng(seed)
        self.knowledge: dict[str, Any] = dict(knowledge or {})
        items = list(seed_programs) or [s for s in builtin_seeds()
                                        if load_seed(s)[1] in self.libraries]
        self.trees: list[_Tree] = []
        misfits: list[str] = []
        for item in items:
            name, library, source = load_seed(item)
            if library not in self.libraries:
                raise UsageError(f"--seed-program {item}: a {library} program, but no backend "
                                 f"of the campaign runs {library} programs (backends for "
                                 f"{', '.join(self.libraries)})")
            if program_data:  # the user's data set instead of the synthetic one
                from dlfuzz.engines.program.datasets import use_dataset

                try:
                    source = use_dataset(name, source, program_data)
                except UsageError as exc:
                    if seed_programs:  # a seed the user chose must take the data
                        raise
                    misfits.append(f"{name}: {exc}")
                    continue
            self.trees.append(_Tree(self._seed(name, library, source, item)))
        if not self.trees:
            why = "; ".join(misfits[:3])
            raise UsageError("no seed program for the chosen backends" +
                             (f" takes --program-data {program_data} ({why})" if misfits
                              else "; give --seed-program"))
        self.nodes: dict[str, _Tree] = {}
        self.stats: dict[str, int] = {"programs": 0, "ran": 0, "failed": 0,
                                      "generation_failures": 0, "negative_rejected": 0,
                                      "negative_accepted": 0, "rounds": 0}
        self.covered: set[str] = set()
        self.program_dir: Path | None = None
        self._serial = 0
        self._turn = 0
        self._unsupported: frozenset[str] | None = None

    # ---- set-up ---------------------------------------------------------------------
    def kb(self, library: str) -> Any:
        if library not in self.knowledge:
            self.knowledge[library] = Knowledge(library)
        return self.knowledge[library]

    def _seed(self, name: str, library: str, source: str, origin: str) -> Seed:
        template, blocks = disassemble(source, library, origin=origin)
        kb = self.kb(library)
        named = []
        for b in blocks:
            spec = kb.spec(b.api)
            named.append(name_positionals(b, [p.name for p in spec.params]) if spec else b)
        return Seed(name, library, template, tuple(named))

    def keep_programs(self, directory: Path) -> None:
        """Write every program proposed from now on under ``directory``."""
        self.program_dir = Path(directory)
        self.program_dir.mkdir(parents=True, exist_ok=True)
        # A resumed campaign: node ids go on from the last one, no program is overwritten.
        serials = [int(m.group(1)) for p in self.program_dir.glob("*.py")
                   if (m := re.search(r"-n(\d+)$", p.stem))]
        self._serial = max([self._serial, *serials])

    # ---- Engine protocol ------------------------------------------------------------
    def propose(self, n: int) -> list[ProgramCase]:
        out: list[ProgramCase] = []
        idle = 0
        while len(out) < n and idle < len(self.trees):
            tree = self.trees[self._turn % len(self.trees)]
            self._turn += 1
            if not tree.queue and not tree.waiting:
                self._advance(tree)
            if not tree.queue:
                idle += 1
                continue
            idle = 0
            node = tree.queue.pop(0)
            tree.waiting[node.id] = node
            self.nodes[node.id] = tree
            out.append(self._case(tree, node))
        dead = [t for t in self.trees if t.root is not None and t.root.state not in (OK, PENDING)]
        if not out and len(dead) == len(self.trees):
            raise UsageError("no seed program can be fuzzed: their templates (the seed without "
                             "its hidden layers) do not run: " + "; ".join(
                                 f"{t.seed.name}: {t.failure}" for t in dead))
        return out

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        tree = self.nodes.pop(getattr(case, "node", ""), None)
        if tree is None:
            return
        node = tree.waiting.pop(case.node)
        ran = [o for b, o in outcomes.items() if b not in self.unsupported_backends(case)]
        self.stats["programs"] += 1
        if node.negative:
            accepted = any(o.ok for o in ran)
            self.stats["negative_accepted" if accepted else "negative_rejected"] += 1
            node.state = OK if accepted else FAILED
        elif ran and all(o.ok for o in ran) and findings:
            node.state = FAILED  # a finding: its children would only repeat it
            self.stats["ran"] += 1
        elif ran and all(o.ok for o in ran):
            node.state = OK
            self.stats["ran"] += 1
            first = ran[0]
            if len(first.outputs) > 3:
                node.shapes = decode_shapes(first.outputs[3].to_numpy().tolist())
            self.covered.update(b.api for b in node.blocks if b is not None)
        else:
            failed = [o for o in ran if not o.ok]
            own = bool(failed) and all(is_generation_failure(o) for o in failed)
            node.state = GENERATION if own else FAILED
            self.stats["generation_failures" if own else "failed"] += 1
        if node is tree.root and node.state != OK:
            tree.failure = "; ".join(f"{o.backend}: {o.status} {o.exc_type}: {o.message[:200]}"
                                     for o in ran if not o.ok) or "no backend ran it"
        if node.operator != "probe":
            tree.finished.append(node)
        self._log(node, tree, ran)

    # ---- the tree -------------------------------------------------------------------
    def _advance(self, tree: _Tree) -> None:
        """Derive the next level of ``tree`` (all of the current one has come back)."""
        seed = tree.seed
        if tree.root is None:  # the bare template: runs first, records slot-0 shapes
            tree.root = Node(self._next_id(tree), 0, (None,) * len(seed.blocks))
            tree.queue.append(tree.root)
            return
        if tree.root.state != OK:
            return  # the template itself does not run: this seed is dead
        parents = prune(tree.finished, self.rng) if tree.level else [tree.root]
        tree.finished = []
        if tree.level >= len(seed.blocks) or not parents:
            self.stats["rounds"] += 1
            tree.round += 1
            tree.level = 0
            parents = [tree.root]
        children = self._derive(tree, parents, tree.level)
        tree.level += 1
        # The bare template once more: the same program at every level, whose time the
        # performance oracle follows across the worker's life.
        tree.queue.append(Node(self._next_id(tree), 0, (None,) * len(seed.blocks),
                               operator="probe", klass="probe"))
        tree.queue.extend(children)

    def _derive(self, tree: _Tree, parents: Sequence[Node], slot: int) -> list[Node]:
        seed = tree.seed
        kb = self.kb(seed.library)
        original = seed.blocks[slot]
        out: list[Node] = []
        seen: set[str] = set()
        for parent in parents:
            shape = parent.shapes.get(slot)
            if shape is None:
                continue
            for _ in range(self.times_mt):
                mutant = self._mutate(kb, original, shape)
                positive = self._child(tree, parent, slot, mutant, shape, kb, seen)
                if positive is None:
                    continue
                out.append(positive)
                if mutant.operator in ("AR", "RG") and positive.block is not None:
                    # (a child node always holds the block it inserted)
                    bc = boundary_check(kb, self.rng, positive.block)
                    if bc is not None:
                        neg = self._child(tree, parent, slot, bc, shape, kb, seen)
                        if neg is not None:
                            out.append(neg)
        return out

    def _mutate(self, kb: Any, original: Block, shape: tuple[int, ...]) -> Any:
        from dlfuzz.engines.program.mutate import Mutant

        if kb.spec(original.api) is None:
            return Mutant(original, "keep", klass=f"keep:{original.api}")
        first, second = ("AR", "RG") if self.rng.random() < 0.5 else ("RG", "AR")
        for op in (first, second):
            m = (api_replacement(kb, self.rng, original, len(shape)) if op == "AR"
                 else random_generation(kb, self.rng, original))
            if m is not None:
                return m
        return Mutant(original, "keep", klass=f"keep:{original.api}")

    def _child(self, tree: _Tree, parent: Node, slot: int, mutant: Any,
               shape: tuple[int, ...], kb: Any, seen: set[str]) -> Node | None:
        block = fit_context(kb, mutant.block, shape) if kb.spec(mutant.block.api) else \
            mutant.block
        blocks = list(parent.blocks)
        blocks[slot] = block
        key = f"{mutant.operator == 'BC'}|{block.expression()}|{parent.id}"
        if key in seen:
            return None
        seen.add(key)
        return Node(self._next_id(tree), slot + 1, tuple(blocks), parent.id, mutant.operator,
                    mutant.param, mutant.value, mutant.klass, negative=mutant.operator == "BC",
                    state=PENDING)

    def _next_id(self, tree: _Tree) -> str:
        self._serial += 1
        return f"{tree.seed.name}-r{tree.round}-n{self._serial}"

    def _case(self, tree: _Tree, node: Node) -> ProgramCase:
        seed = tree.seed
        source = assemble(seed.template, node.blocks)
        block = node.block
        header = (f"# dlfuzz program {node.id} (seed {seed.name}, parent {node.parent or '-'})"
                  f"\n# edge: {self._edge_text(node)}\n")
        case = ProgramCase(
            api=block.api if block else f"{seed.name}:template", source=header + source,
            library=seed.library,
            expect=f"invalid:{node.param}" if node.negative else "valid", node=node.id,
            parent=node.parent, edge=node.edge(seed.name), seed=seed.name,
            parts=(seed.template, node.blocks, tree.root.shapes if tree.root else {}))
        if self.program_dir is not None:
            (self.program_dir / f"{node.id}.py").write_text(case.source)
        return case

    @staticmethod
    def _edge_text(node: Node) -> str:
        if node.block is None:
            return "root (the bare template)"
        text = f"slot {node.level - 1} <- {node.operator} {node.block.api}"
        if node.param:
            text += f", {node.param}={node.value!r}"
        return text

    def _log(self, node: Node, tree: _Tree, ran: Sequence[Outcome]) -> None:
        if self.program_dir is None:
            return
        row = {"node": node.id, "parent": node.parent, "seed": tree.seed.name,
               "level": node.level, "operator": node.operator,
               "api": node.block.api if node.block else "", "param": node.param,
               "value": repr(node.value) if node.param else "", "negative": node.negative,
               "state": node.state,
               "outcomes": {o.backend: o.status for o in ran}}
        with (self.program_dir / "index.jsonl").open("a") as f:
            f.write(json.dumps(row) + "\n")

    # ---- for the campaign -----------------------------------------------------------
    def constraint_source(self, case: Any) -> str:
        """Where the legal range a negative program breaks comes from (hand rules or the
        layer's docstring), for the validation report."""
        edge = dict(getattr(case, "edge", ()))
        param = str(getattr(case, "expect", "")).partition(":")[2]
        if not param or not edge.get("api"):
            return ""
        from dlfuzz.engines.program.knowledge import legal_source

        return legal_source(case.library, str(edge["api"]), param)

    def unsupported_backends(self, case: Any) -> frozenset[str]:
        """Backends that do not run programs (torch-compile): never judged on them."""
        if self._unsupported is None:
            from dlfuzz import registry
            from dlfuzz.backends.base import load_backend_class

            names = set()
            for name in registry.names("backend"):
                try:
                    cls = load_backend_class(registry.import_string("backend", name))
                except Exception:  # noqa: BLE001 - a plugin that does not load runs nothing
                    continue
                if "program" not in getattr(cls, "case_kinds", ()):
                    names.add(name)
            self._unsupported = frozenset(names)
        return self._unsupported

    def summary(self) -> dict[str, Any]:
        return {**self.stats, "covered_apis": sorted(self.covered)}
