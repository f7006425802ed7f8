"""The derivation tree (MoCo §III-A2, §III-D): nodes, levels and equivalence-class pruning.

A node is one program: the template with the blocks of slots ``0..level-1`` inserted.
The root is the bare template. Level ``i`` inserts the ``i``-th original block mutated by
API replacement (AR) or random generation (RG) into every surviving node of level
``i-1`` (``times_mt`` children each), and each such block once more with one parameter
just outside its legal range (boundary checking, BC): a negative node, never expanded.
After a level ran, its successful positive nodes are grouped into equivalence classes
(the replacement API for AR; the mutated parameter and the class of its value for RG)
and half of each class, rounded up, survives to be expanded (beam-search-like pruning).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.engines.program.template import Block, Template

PENDING, OK, FAILED, GENERATION = "pending", "ok", "failed", "generation-failure"
KEEP_SHARE = 0.5  # MoCo: half of each equivalence class survives a level
MAX_FRONTIER = 32  # surviving nodes per level at most (bounds a level's size; documented)


@dataclass
class Node:
    """One program of the tree (host-side bookkeeping; the case is what travels)."""

    id: str
    level: int  # slots filled: the inserted block of this node is in slot level-1
    blocks: tuple[Block | None, ...]
    parent: str = ""
    operator: str = "root"  # root | AR | RG | BC | keep
    param: str = ""
    value: Any = None
    klass: str = "root"  # equivalence class of the mutation (pruning)
    negative: bool = False
    state: str = PENDING
    shapes: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def block(self) -> Block | None:
        """The block this node inserted (None for the root)."""
        return self.blocks[self.level - 1] if self.level else None

    def edge(self, seed: str) -> tuple[tuple[str, Any], ...]:
        """The derivation edge a finding on this node is localized to."""
        block = self.block
        return (("seed", seed), ("node", self.id), ("parent", self.parent),
                ("block", self.level - 1), ("api", block.api if block else ""),
                ("param", self.param), ("operator", self.operator),
                ("value", repr(self.value) if self.param else ""))


@dataclass
class Seed:
    """A disassembled seed program."""

    name: str
    library: str  # torch | keras
    template: Template
    blocks: tuple[Block, ...]


def prune(nodes: Sequence[Node], rng: Any, share: float = KEEP_SHARE,
          limit: int = MAX_FRONTIER) -> list[Node]:
    """MoCo's pruning: keep ``ceil(share * size)`` random nodes of each equivalence class
    of the successful positive nodes; at most ``limit`` in all (whole classes first, so
    every class keeps at least one node while the limit allows)."""
    classes: dict[str, list[Node]] = {}
    for node in nodes:
        if node.state == OK and not node.negative:
            classes.setdefault(node.klass, []).append(node)
    kept: list[list[Node]] = []
    for key in sorted(classes):
        members = classes[key]
        order = rng.permutation(len(members))
        kept.append([members[i] for i in order[:max(1, math.ceil(share * len(members)))]])
    out: list[Node] = []
    depth = 0
    while len(out) < limit and any(depth < len(k) for k in kept):
        for members in kept:  # round robin over classes: diversity before volume
            if depth < len(members) and len(out) < limit:
                out.append(members[depth])
        depth += 1
    return out
