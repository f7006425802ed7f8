"""Reduction of program findings: keep the template and the block the bug is about.

A finding on a node is about the block that node inserted (its derivation edge). The
reduction keeps the template and that one block: first every other inserted block goes
at once (the block's context parameters refitted to the bare template's activation, which
the tree recorded at its root), then, if the bug needs them, the others one at a time.
The program engine's assembler and context fitting do the rebuilding (imported when a
program bug is reduced: the engine is loaded by then).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from dlfuzz.cases import ProgramCase


def _with_blocks(case: ProgramCase, blocks: tuple[Any, ...]) -> ProgramCase:
    from dlfuzz.engines.program.assemble import assemble

    template = case.parts[0]
    header = f"# dlfuzz program {case.node} reduced: only the blocks the bug needs\n"
    return replace(case, source=header + assemble(template, blocks),
                   parts=(template, blocks, *case.parts[2:]))


def drop_blocks(case: ProgramCase) -> Iterator[ProgramCase]:
    """The edge's block alone (refitted to the bare template), then fewer other blocks."""
    if case.parts is None:
        return
    blocks = tuple(case.parts[1])
    slot = int(dict(case.edge).get("block", -1))
    if not 0 <= slot < len(blocks) or blocks[slot] is None:
        return
    alone: list[Any] = [None] * len(blocks)
    alone[slot] = blocks[slot]
    root_shape = case.parts[2].get(slot) if len(case.parts) > 2 else None
    if root_shape is not None:
        from dlfuzz.engines.program.mutate import Knowledge, fit_context

        try:
            refit = fit_context(Knowledge(case.library), blocks[slot], tuple(root_shape))
            only = list(alone)
            only[slot] = refit
            yield _with_blocks(case, tuple(only))
        except Exception:  # noqa: BLE001 - no knowledge for it: the unrefitted try below
            pass
    yield _with_blocks(case, tuple(alone))
    for j in range(len(blocks)):
        if j != slot and blocks[j] is not None:
            yield _with_blocks(case, tuple(None if k == j else b for k, b in enumerate(blocks)))


def program_weight(case: ProgramCase) -> tuple[int, int]:
    """Fewer inserted blocks, then shorter source."""
    blocks = case.parts[1] if case.parts is not None else ()
    return (sum(b is not None for b in blocks), len(case.source))


PROGRAM_PASSES = {"drop_blocks": drop_blocks}
