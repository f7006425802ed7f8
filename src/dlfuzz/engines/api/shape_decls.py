"""The shape rules a spec may name (its ``"shapes"`` key) and the canonical parameters
each one sets.

This is vocabulary of the spec format, apart from the rules themselves: ``libspecs``
checks a spec's ``"shapes"`` key against it while ``shapes`` (which implements the rules
and draws with ``LibSpec`` objects) imports ``libspecs``, so the table lives here and
neither of those two imports the other both ways.
"""

from __future__ import annotations

# Shape rules and the canonical parameters each one sets (those get no generic value).
SHAPE_RULES: dict[str, tuple[str, ...]] = {
    "any": (),                 # every tensor independent (within its rank limits)
    "same": (),                # all tensors one shape
    "broadcast": (),           # tensors mutually broadcastable
    "matmul": (),              # (..., n, k) @ (..., k, m), 1-D operands allowed
    "vectors": (),             # 1-D tensors of one length (dot, vdot)
    "outer": (),               # 1-D tensors of any lengths
    "inner": (),               # last dimensions equal
    "tensordot": ("axes",),    # a's last `axes` dims == b's first `axes` dims
    "cross": (),               # equal ranks, broadcastable, last dimension 3
    "square": (),              # (..., n, n), every tensor the same
    "solve": (),               # a (..., n, n), b (..., n, k)
    "take": (),                # indices within a flattened
    "take_along_axis": ("axis",),
    "searchsorted": (),        # 1-D sorted a, 1-D v
    "concat": ("axis",),       # equal shapes except along axis
    "stack": ("axis",),        # equal shapes, axis in [-(r+1), r]
    "same_list": (),           # a list of equal shapes (hstack, vstack, dstack)
    "broadcast_list": (),      # a list of broadcastable shapes
    "reshape": ("shape",),
    "broadcast_to": ("shape",),
    "squeeze": ("axis",),      # axis of a dimension of size 1
    "split": ("indices_or_sections", "axis"),
    "hsplit": ("indices_or_sections",),
    "vsplit": ("indices_or_sections",),
    "dsplit": ("indices_or_sections",),
    "einsum": ("subscripts",),
    "diag": (),                # 1-D or 2-D
    "meshgrid": (),            # a list of 1-D tensors
    "arange": ("start", "stop", "step"),
    "clip": ("a_min", "a_max"),  # scalar bounds, a_min <= a_max
    "none": (),                # no tensors (creation functions)
}
