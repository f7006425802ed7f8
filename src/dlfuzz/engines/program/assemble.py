"""Code assembly (MoCo's A): blocks into a template's slots -> a runnable program.

Each slot marker of the template becomes the block's statement(s) at the marker's
indentation, or disappears when the slot is empty. With ``record=True`` (what the
engine runs) the program also records the activation shape entering every slot into a
module-level ``SLOT_SHAPES`` dict, so the next derivation level can fit its block to
the context (``in_channels`` of a Conv2d after a slot whose activation has 16 channels).
Reproducers are assembled with ``record=False``: nothing in them but the model.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlfuzz.engines.program.template import (
    DEFS_MARKER,
    MARKER,
    RECORD_MARKER,
    Block,
    Template,
)

DEFS = '''\
SLOT_SHAPES = {}  # dlfuzz: the shape of the activation entering each slot


def record_slot(slot, value):
    """dlfuzz: remember the shape of the activation entering ``slot`` (first tensor)."""
    while isinstance(value, (tuple, list)):
        value = value[0]
    SLOT_SHAPES[slot] = tuple(value.shape)
'''

_SEQ_HOOKS = '''
for _slot, _layer in {positions!r}.items():  # dlfuzz: hook the layer reading each slot
    {model}[_layer].register_forward_pre_hook(
        lambda module, args, slot=_slot: record_slot(slot, args[0]))'''


def assemble(template: Template, blocks: Sequence[Block | None], record: bool = True) -> str:
    """The program with ``blocks[i]`` in slot ``i`` (None or missing: empty slot)."""
    filled: dict[int, Block] = {i: b for i, b in enumerate(blocks) if b is not None}
    out: list[str] = []
    for line in template.source.splitlines():
        if line == RECORD_MARKER:
            if record:
                out.extend(_sequential_record(template, filled).splitlines())
            continue
        if line == DEFS_MARKER:
            if record:
                out.extend(DEFS.splitlines() + ["", ""])
            continue
        m = MARKER.match(line)
        if m is None:
            out.append(line)
            continue
        slot, part, indent = int(m.group("slot")), m.group("part"), m.group("indent")
        block = filled.get(slot)
        if template.style == "functional":
            var = block.name if block is not None else "x"
            if record:
                out.append(f"{indent}record_slot({slot}, {var})")
            if block is not None:
                out.append(f"{indent}{block.name} = {block.expression()}({block.name})")
        elif part == "forward":
            if record:
                out.append(f"{indent}record_slot({slot}, x)")
            if block is not None:
                out.append(f"{indent}x = self.{block.name}(x)")
        elif block is None:
            continue
        elif part == "init":
            out.append(f"{indent}self.{block.name} = {block.expression()}")
        else:  # a layer of nn.Sequential
            out.append(f"{indent}{block.expression()},")
    return "\n".join(out) + "\n"


def _sequential_record(template: Template, filled: dict[int, Block]) -> str:
    """Hooks on the layer that reads each slot's activation (the slot's own block, or
    the next layer when the slot is empty): its input is the slot's activation."""
    positions = {}
    for slot in range(template.n_slots):
        before = template.before[slot] if slot < len(template.before) else 1
        positions[slot] = before + sum(1 for j in filled if j < slot)
    return DEFS + _SEQ_HOOKS.format(positions=positions, model=template.model_var)


def decode_shapes(flat: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """The slot shapes a program returned (flat ``slot, rank, dims...``; -1 = unknown)."""
    out: dict[int, tuple[int, ...]] = {}
    i = 0
    values = [int(v) for v in flat]
    while i + 1 < len(values):
        slot, rank = values[i], values[i + 1]
        out[slot] = tuple(values[i + 2:i + 2 + rank])
        i += 2 + rank
    return out
