"""Hand-written knowledge for the JAX extractor (``jax_apis.py``): what extraction cannot see.

Three kinds of entries, each kept small on purpose (everything else is extracted); the
jax.lax, linalg, fft, nn and special entries of ``HINTS`` are in ``jax_hints_lax``:

* ``SKIP``: APIs listed in ``data/jax.json`` but not fuzzed, with the reason (callables,
  collectives that need a named mapped axis, I/O, dtype metadata, structured arguments
  that the spec format cannot express).
* ``NAME_KINDS``: how a parameter is generated when its annotation says little (a bare
  ``ArrayLike`` named ``indices`` is an integer tensor; ``axis`` is an axis of the first
  tensor). These are conventions of the NumPy API that JAX follows.
* ``HINTS``: per-API overrides: parameter fields (``rank``, ``dtypes``, ``values``,
  ``range``, ...), parameters to drop or add, and constraints marked ``"from": "hand"``.
  Used where the check lives in C++/XLA (conv window sizes, slice bounds), in code
  ``validation`` cannot translate (loops, aliases), or where a structured argument is
  restricted to a simple form (conv ``dimension_numbers`` left at None, string padding).
  Keys besides ``params``: ``drop``, ``add``, ``constraints``, ``broadcast`` (groups of
  tensors that must broadcast), ``axes`` (more axis-list parameters), ``own_axes`` (axis
  parameters whose range the entry states itself), ``random``, ``specials``, ``notes``.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.specgen.jax_hints_lax import LAX, LINALG_FFT, NN_SPECIAL

CALLABLE = "takes a Python callable"
COLLECTIVE = "collective: needs a named mapped axis (pmap/shard_map)"
META = "returns dtype/shape metadata or a Python value, no array computation"
IO = "I/O, printing or foreign-buffer conversion"
NESTED = "structured argument (nested tuples / dimension-number objects) the spec format cannot express"
RANDOM = "PRNG key or stateful RNG"

SKIP: dict[str, str] = {
    **{f"jax.numpy.{n}": CALLABLE for n in (
        "apply_along_axis", "apply_over_axes", "fromfunction", "frompyfunc", "vectorize",
        "piecewise", "mask_indices")},
    **{f"jax.numpy.{n}": IO for n in (
        "load", "save", "savez", "fromfile", "fromiter", "frombuffer", "fromstring",
        "from_dlpack", "array_repr", "array_str", "printoptions", "set_printoptions",
        "get_printoptions")},
    **{f"jax.numpy.{n}": META for n in (
        "can_cast", "promote_types", "result_type", "isdtype", "issubdtype", "ndim", "shape",
        "size", "iscomplexobj", "isrealobj", "isscalar", "iterable", "broadcast_shapes",
        "einsum_path")},
    **{f"jax.lax.{n}": CALLABLE for n in (
        "associative_scan", "cond", "custom_linear_solve", "custom_root", "fori_loop", "map",
        "reduce", "reduce_window", "scan", "scatter_apply", "switch", "while_loop",
        "composite", "platform_dependent")},
    **{f"jax.lax.{n}": COLLECTIVE for n in (
        "all_gather", "all_to_all", "axis_index", "axis_size", "pbroadcast", "pcast", "pmax",
        "pmean", "pmin", "ppermute", "precv", "psend", "pshuffle", "psum", "psum_scatter",
        "pswapaxes", "ragged_all_to_all", "with_sharding_constraint")},
    **{f"jax.lax.{n}": META for n in (
        "broadcast_shapes", "conv_dimension_numbers", "conv_general_permutations",
        "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose_shape_tuple",
        "padtype_to_pads", "reduce_window_shape_tuple", "shape_as_value", "dtype",
        "after_all", "create_token", "dce_sink")},
    **{f"jax.lax.{n}": NESTED for n in (
        "dot_general", "gather", "scatter", "scatter_add", "scatter_sub", "scatter_mul",
        "scatter_min", "scatter_max", "pad", "ragged_dot_general", "scaled_dot")},
    **{f"jax.lax.{n}": RANDOM for n in ("rng_bit_generator", "rng_uniform",
                                         "random_gamma_grad")},
    **{f"jax.lax.{n}": "a type alias, not a function" for n in (
        "ConvGeneralDilatedDimensionNumbers", "DotDimensionNumbers", "PrecisionLike")},
    "jax.lax.ragged_dot": "group_sizes must sum to lhs.shape[0]: a constraint over tensor "
                          "values the language cannot state",
    "jax.lax.conv_general_dilated_local": "filter_shape/rhs layout couples four shapes through "
                                          "products the generator cannot solve",
    "jax.nn.get_scaled_dot_general_config": META,
    "jax.nn.scaled_dot_general": NESTED,
    "jax.nn.scaled_matmul": "block-scaled fp8/fp4 matmul (GPU formats)",
    "jax.numpy.einsum": "the subscripts string decides operand count and ranks",
    "jax.numpy.block": "needs nested Python lists; tensor lists reach the call as tuples",
}

# Parameters never generated (left to their defaults): placement, output buffers, options
# that only select an implementation.
DROP = frozenset({
    "out", "where", "device", "out_sharding", "sharding", "precision", "preferred_element_type",
    "accuracy", "order", "casting", "like", "overwrite_input", "implementation", "unroll",
    "n_iter", "query_seq_lengths", "key_value_seq_lengths", "local_window_size",
    "return_residual", "series_order", "allow_negative_indices", "method",
    "indices_are_sorted", "unique_indices", "assume_unique", "assume_unique_indices",
    "symmetrize_input", "is_stable", "copy", "return_sign", "total_repeat_length",
    "reduction_input_size_override", "recall_target", "aggregate_to_topk", "ndmin",
    "promote_integers", "include_initial", "subset_by_index", "numpy_resid", "mean",
    "trim_leading_zeros", "strip_zeros", "equal_nan", "fill_value", "size", "length",
})

# name -> LibParam fields for parameters whose annotation is vague (ArrayLike, int, Any).
INDEX = {"type": ["tensor"], "dtypes": ["int32", "int64"], "domain": [0, 3]}
BOOLS = {"type": ["tensor"], "dtypes": ["bool"]}
NAME_KINDS: dict[str, dict[str, Any]] = {
    "indices": INDEX, "ind": INDEX, "idxs": INDEX, "group_sizes": INDEX,
    "condition": BOOLS, "mask": BOOLS, "pred": BOOLS, "condlist": BOOLS,
    "keepdims": {"type": ["bool"]},
    "ddof": {"type": ["int"], "range": [0, 2]},
    "decimals": {"type": ["int"], "range": [-2, 4]},
    "k": {"range": [-3, 3]},
    "offset": {"range": [-3, 3]},
    "num_classes": {"type": ["int"], "range": [1, 6]},
    "M": {"range": [0, 6]}, "N": {"range": [0, 6]},
    "n": {"range": [1, 6]},
    "m": {"range": [0, 3]},
    "kth": {"type": ["int"], "range": [0, 3]},
    "reps": {"type": ["int", "ints"], "range": [0, 3], "length": [1, 4]},
    "shape": {"type": ["ints"], "range": [0, 4], "length": [0, 4]},
    "new_sizes": {"type": ["ints"], "range": [0, 4], "length": [0, 4]},
    "sizes": {"type": ["ints"], "range": [0, 4], "length": [0, 3]},
    "new_shape": {"type": ["ints"], "range": [0, 4], "length": [0, 4]},
    "dimensions": {"type": ["ints"], "range": [0, 3], "length": [0, 3]},
    "shift": {"type": ["int"], "range": [-4, 4]},
    "alpha": {"type": ["float"], "range": [0.1, 3.0]},
    "negative_slope": {"type": ["float"], "range": [0.0, 1.0]},
    "epsilon": {"type": ["float"], "range": [1e-6, 0.1]},
    "rtol": {"type": ["float"], "range": [0.0, 0.1]},
    "atol": {"type": ["float"], "range": [0.0, 0.1]},
    "beta": {"type": ["float"], "range": [0.0, 10.0]},
    "nan": {"type": ["float"], "range": [-10.0, 10.0]},
    "posinf": {"type": ["float", "none"], "range": [-10.0, 10.0]},
    "neginf": {"type": ["float", "none"], "range": [-10.0, 10.0]},
    "initial": {"type": ["none", "float"], "range": [-10.0, 10.0]},
    "deg": {"type": ["bool"]},
    "exponent_bits": {"type": ["int"], "range": [1, 8]},
    "mantissa_bits": {"type": ["int"], "range": [0, 10]},
}

# Axis-like parameter names and whether JAX accepts negative values for them (jax.lax
# does not, jax.numpy does). The axis refers to the first tensor parameter unless HINTS
# say otherwise.
AXIS_NAMES = frozenset({"axis", "axis1", "axis2", "axisa", "axisb", "axisc", "dimension",
                        "reduction_dimension", "source", "destination", "split_axis",
                        "concat_axis", "dim"})
AXES_NAMES = frozenset({"axes"})

VEC = {"rank": [1, 1]}
MAT = {"rank": [2, 4]}
INPLACE_FALSE = {"inplace": {"type": ["bool"], "values": [False], "optional": False}}
# A mode JAX needs other than its default ('raise' is not implemented): always passed, by
# keyword (the signature's optional parameters before it are not in the spec).
MODE = {"type": ["str"], "values": ["clip", "wrap"], "optional": False, "pass": "keyword"}
FLOAT = {"type": ["float"]}
SCALAR = {"rank": [0, 0]}
INT_SCALAR = {"type": ["int"]}


def _reduce_nonempty(a: str = "a", initial: bool = True) -> dict[str, Any]:
    """Reductions without an identity (max, argmin, ptp) reject empty inputs."""
    cond = f"{a}.num_element > 0" + (" or initial is not None" if initial else "")
    return {"constraints": [cond]}


def _split(dim: str) -> dict[str, Any]:
    """split-like: an int number of sections that divides the split dimension."""
    return {"params": {"indices_or_sections": {"type": ["int"], "range": [1, 3]}},
            "constraints": [f"ary.shape[{dim}] % indices_or_sections == 0"]}


def _same_but(a: str, b: str, axis: str) -> list[str]:
    """b has a's shape except along ``axis`` (append, take_along_axis)."""
    return [f"{b}.ndims == {a}.ndims"] + [
        f"{b}.shape[{i}] == {a}.shape[{i}] or {i} == {axis} % {a}.ndims or {a}.ndims <= {i}"
        for i in range(4)]


_FFT2 = {"params": {"a": {"rank": [2, 4]},
                    "s": {"type": ["ints", "none"], "range": [1, 4], "length": [2, 2]},
                    "axes": {"length": [2, 2]}}}
_FFTN = {"params": {"a": {"rank": [1, 4]},
                    "s": {"type": ["ints", "none"], "range": [1, 4], "length": [1, 3]},
                    "axes": {"length": [1, 3]}},
         "constraints": ["s is None or axes is None or len(s) == len(axes)",
                         "s is None or len(s) <= a.ndims"]}
_QUANT = {"drop": ["weights"], "params": {"q": {"rank": [0, 1], "domain": [0.0, 1.0]}},
          "constraints": ["a.num_element > 0"]}
_PCT = {**_QUANT, "params": {"q": {"rank": [0, 1], "domain": [0.0, 100.0]}}}
_HIST = {"drop": ["weights", "range"], "params": {"bins": {"type": ["int"], "range": [1, 5]}},
         "constraints": ["a.num_element > 0"]}
_SPACE = {"params": {"start": FLOAT, "stop": FLOAT, "num": {"range": [0, 6]}},
          "drop": ["axis"]}

HINTS: dict[str, dict[str, Any]] = {
    # 1-D arguments (entries below for the same APIs add to these)
    **{f"jax.numpy.{n}": {"params": {a: VEC for a in args}} for n, args in (
        ("polyadd", ("a1", "a2")), ("polysub", ("a1", "a2")), ("polymul", ("a1", "a2")),
        ("polydiv", ("u", "v")), ("polyder", ("p",)), ("polyint", ("p",)),
        ("polyval", ("p",)), ("roots", ("p",)), ("poly", ("seq_of_zeros",)),
        ("convolve", ("a", "v")), ("correlate", ("a", "v")), ("vander", ("x",)))},
    # ---- creation: scalar arguments ----
    "jax.numpy.array": {"params": {"object": {"type": ["tensor"]}}},
    "jax.numpy.pad": {"params": {"pad_width": {"type": ["int"], "range": [0, 2]},
                                 "mode": {"type": ["str"], "values": [
                                     "constant", "edge", "wrap", "linear_ramp", "maximum",
                                     "mean", "minimum"]}},
                     "constraints": ["mode == 'constant' or array.num_element > 0"]},
    "jax.lax.empty": {"params": {"dtype": {"type": ["dtype"]}}, "random": True,
                      "notes": "contents unspecified"},
    "jax.numpy.arange": {"params": {"start": {"type": ["int", "float"], "range": [-5, 5]},
                                    "stop": {"type": ["int", "none"], "range": [-5, 8]},
                                    "step": {"type": ["int", "none"], "range": [1, 3]}}},
    "jax.numpy.linspace": _SPACE, "jax.numpy.geomspace": _SPACE,
    "jax.numpy.logspace": {**_SPACE, "params": {**_SPACE["params"],
                                                "base": {"type": ["float"], "range": [0.5, 10.0]}}},
    "jax.numpy.eye": {"params": {"k": INT_SCALAR}},
    "jax.numpy.full": {"params": {"fill_value": SCALAR}},
    "jax.numpy.full_like": {"params": {"fill_value": SCALAR}},
    "jax.numpy.fft.fftfreq": {"params": {"d": {"type": ["float"], "range": [0.1, 2.0]}}},
    "jax.numpy.fft.rfftfreq": {"params": {"d": {"type": ["float"], "range": [0.1, 2.0]}}},
    # ---- indexing, sorting, selection ----
    "jax.numpy.partition": {"constraints": ["kth < a.shape[axis]"]},
    "jax.numpy.argpartition": {"constraints": ["kth < a.shape[axis]"]},
    "jax.numpy.take_along_axis": {"params": {"axis": INT_SCALAR, "arr": {"rank": [1, 4]}},
                                  "constraints": _same_but("arr", "indices", "axis")},
    "jax.numpy.put_along_axis": {"params": {**INPLACE_FALSE, "axis": INT_SCALAR,
                                            "values": SCALAR, "arr": {"rank": [1, 4]}},
                                 "constraints": _same_but("arr", "indices", "axis")},
    "jax.numpy.compress": {"constraints": [
        "axis is None or condition.shape[0] <= a.shape[axis]",
        "axis is not None or condition.shape[0] <= a.num_element"]},
    "jax.numpy.searchsorted": {"params": {"a": VEC}, "drop": ["sorter"]},
    "jax.numpy.choose": {"params": {"a": {"dtypes": ["int32", "int64"], "domain": [0, 3]},
                                    "mode": MODE},
                         "broadcast": [["a", "choices"]]},
    "jax.numpy.select": {"params": {"default": SCALAR, "condlist": {"dtypes": ["bool"]}},
                         "broadcast": [["condlist", "choicelist"]]},
    "jax.numpy.lexsort": {"params": {"keys": {"rank": [1, 4]}}},
    "jax.numpy.meshgrid": {"params": {"xi": VEC}},
    "jax.numpy.ix_": {"params": {"args": VEC}},
    "jax.numpy.repeat": {"params": {"repeats": {"type": ["int"], "range": [0, 3]}}},
    "jax.numpy.insert": {"params": {"obj": {"type": ["int"], "range": [0, 2]},
                                    "values": SCALAR},
                         "constraints": ["axis is None or obj <= arr.shape[axis]",
                                         "axis is not None or obj <= arr.num_element"]},
    "jax.numpy.delete": {"params": {"obj": {"type": ["int"], "range": [0, 2]}},
                         "constraints": ["axis is None or obj < arr.shape[axis]",
                                         "axis is not None or obj < arr.num_element"]},
    "jax.numpy.fill_diagonal": {"params": {**INPLACE_FALSE, "a": {"rank": [2, 2]},
                                           "val": SCALAR}, "drop": ["wrap"],
                                "constraints": ["a.shape[0] == a.shape[1]"]},
    "jax.numpy.take": {"constraints": ["a.num_element > 0"]},
    "jax.numpy.put": {"params": {**INPLACE_FALSE, "ind": {"domain": [0, 0], **SCALAR},
                                 "a": {"rank": [1, 4]},
                                 "mode": MODE, "v": SCALAR}},
    "jax.numpy.place": {"params": INPLACE_FALSE, "constraints": [
        "mask.ndims == arr.ndims"] + [f"mask.shape[{i}] == arr.shape[{i}] or arr.ndims <= {i}"
                                      for i in range(4)]},
    "jax.numpy.extract": {"constraints": ["condition.shape[0] <= arr.shape[0]"]},
    "jax.numpy.ravel_multi_index": {
        "params": {"multi_index": {"dtypes": ["int32", "int64"], "domain": [0, 0],
                                   "rank": [1, 1]},
                   "dims": {"range": [1, 4], "length": [1, 3]},
                   "mode": MODE}},
    "jax.numpy.unravel_index": {"params": {"shape": {"range": [1, 4], "length": [1, 3]}}},
    "jax.numpy.digitize": {"params": {"bins": VEC}},
    "jax.numpy.roll": {"params": {"shift": {"type": ["int"], "range": [-4, 4]},
                                  "axis": {"type": ["int", "none"]}}},
    "jax.numpy.diag_indices": {"params": {"ndim": {"range": [1, 3]}}},
    "jax.numpy.unpackbits": {"params": {"count": {"type": ["int", "none"], "range": [0, 8]}}},
    # ---- shapes ----
    "jax.numpy.diag_indices_from": {"params": {"arr": {"rank": [2, 2]}},
                                    "constraints": ["arr.shape[0] == arr.shape[1]"]},
    "jax.numpy.tril_indices_from": {"params": {"arr": {"rank": [2, 2]}}},
    "jax.numpy.triu_indices_from": {"params": {"arr": {"rank": [2, 2]}}},
    "jax.numpy.tril": {"params": {"m": MAT}}, "jax.numpy.triu": {"params": {"m": MAT}},
    "jax.numpy.fliplr": {"params": {"m": MAT}}, "jax.numpy.flipud": {"params": {"m": {"rank": [1, 4]}}},
    "jax.numpy.rot90": {"params": {"axes": {"length": [2, 2]}}, "axes": ["axes"]},
    "jax.numpy.trace": {"params": {"offset": INT_SCALAR}, "constraints": [
        "axis1 != axis2 and axis1 - axis2 != a.ndims and axis2 - axis1 != a.ndims"]},
    "jax.numpy.diagonal": {"constraints": [
        "axis1 != axis2 and axis1 - axis2 != a.ndims and axis2 - axis1 != a.ndims"]},
    "jax.numpy.permute_dims": {"params": {"axes": {"length": [0, 4], "range": [0, 3]}},
                               "constraints": ["len(axes) == a.ndims"]},
    "jax.numpy.transpose": {"params": {"axes": {"length": [0, 4], "range": [0, 3]}},
                            "constraints": ["axes is None or len(axes) == a.ndims"]},
    "jax.numpy.moveaxis": {"params": {"source": INT_SCALAR, "destination": INT_SCALAR}},
    "jax.numpy.rollaxis": {"constraints": ["start >= -a.ndims and start <= a.ndims"]},
    "jax.numpy.squeeze": {"params": {"axis": {"type": ["int", "none"]}},
                          "constraints": ["a.shape[axis] == 1 or axis is None"]},
    "jax.numpy.expand_dims": {"params": {"axis": INT_SCALAR}, "own_axes": ["axis"],
                              "constraints": ["axis >= -a.ndims - 1 and axis <= a.ndims"]},
    "jax.numpy.stack": {"own_axes": ["axis"],
                        "constraints": ["axis >= -arrays.ndims - 1 and axis <= arrays.ndims"]},
    "jax.numpy.concatenate": {"params": {"arrays": {"rank": [1, 4]}}},
    "jax.numpy.concat": {"params": {"arrays": {"rank": [1, 4]}}},
    "jax.numpy.append": {"constraints": [f"({c}) or axis is None"
                                         for c in _same_but("arr", "values", "axis")]},
    "jax.numpy.broadcast_to": {"constraints": ["len(shape) >= array.ndims"] + [
        f"array.shape[-{i}] == shape[-{i}] or array.shape[-{i}] == 1 or array.ndims < {i}"
        for i in range(1, 5)]},
    "jax.numpy.reshape": {"params": {"shape": {"type": ["ints"], "range": [-1, 4],
                                               "length": [1, 2]}},
                          "constraints": [
        "shape[0] == a.num_element or shape[0] == -1 or len(shape) == 2",
        "shape[1] == -1 and shape[0] > 0 and a.num_element % shape[0] == 0 or len(shape) == 1"]},
    "jax.numpy.split": _split("axis"), "jax.numpy.vsplit": {**_split("0"), "params": {
        **_split("0")["params"], "ary": MAT}},
    "jax.numpy.hsplit": {**_split("1"), "params": {**_split("1")["params"], "ary": MAT}},
    "jax.numpy.dsplit": {**_split("2"), "params": {**_split("2")["params"],
                                                   "ary": {"rank": [3, 4]}}},
    "jax.numpy.array_split": {"params": {"indices_or_sections": {"type": ["int"],
                                                                 "range": [1, 3]}}},
    "jax.numpy.nonzero": {"params": {"a": {"rank": [1, 4]}}},
    "jax.numpy.diff": {"params": {"a": {"rank": [1, 4]}, "n": {"range": [1, 3]}},
                       "drop": ["prepend", "append"]},
    "jax.numpy.sort_complex": {"params": {"a": {"rank": [1, 4]}}},
    "jax.numpy.unstack": {"params": {"x": {"rank": [1, 4]}}},
    # ---- reductions ----
    **{f"jax.numpy.{n}": _reduce_nonempty() for n in (
        "max", "min", "amax", "amin", "nanmax", "nanmin")},
    **{f"jax.numpy.{n}": _reduce_nonempty(initial=False) for n in (
        "ptp", "argmax", "argmin", "nanargmax", "nanargmin")},
    "jax.numpy.average": {"drop": ["weights"]},
    **{f"jax.numpy.{n}": {"constraints": [
        "a.dtype not in ('complex64', 'complex128') or dtype is None or "
        "dtype in ('complex64', 'complex128')"]} for n in ("var", "std", "nanvar", "nanstd")},
    **{f"jax.numpy.{n}": {"constraints": ["a.num_element > 0"]} for n in (
        "median", "nanmedian")},
    **{f"jax.numpy.{n}": {"constraints": [
        "decimals >= 0 or a.dtype in ('float16', 'bfloat16', 'float32', 'float64', "
        "'complex64', 'complex128')"]} for n in ("round", "around")},
    **{f"jax.numpy.{n}": {"constraints": [
        "x1.dtype in ('float16', 'bfloat16', 'float32', 'float64', 'complex64', 'complex128')"
        " or x2.dtype in ('float16', 'bfloat16', 'float32', 'float64', 'complex64', "
        "'complex128') or x2.min >= 0"]} for n in ("power", "pow")},
    "jax.numpy.gradient": {"drop": ["varargs"], "params": {"axis": {"type": ["int", "none"]},
                                                           "f": {"rank": [1, 4]}},
                           "constraints": ["f.shape[axis] >= 2 or axis is None"] + [
        f"f.shape[{i}] >= 2 or f.ndims <= {i} or axis is not None" for i in range(4)]},
    "jax.numpy.trapezoid": {"drop": ["x"], "params": {"dx": FLOAT},
                            "constraints": ["y.shape[axis] >= 1"]},
    "jax.numpy.unwrap": {"params": {"discont": {"type": ["none", "float"], "range": [1, 4]},
                                    "period": {"type": ["float"], "range": [1, 7]}}},
    "jax.numpy.quantile": _QUANT, "jax.numpy.nanquantile": _QUANT,
    "jax.numpy.percentile": _PCT, "jax.numpy.nanpercentile": _PCT,
    "jax.numpy.histogram": _HIST, "jax.numpy.histogram_bin_edges": _HIST,
    "jax.numpy.histogram2d": {**_HIST, "params": {**_HIST["params"], "x": VEC, "y": VEC},
                              "constraints": ["x.shape[0] == y.shape[0]", "x.shape[0] > 0"]},
    "jax.numpy.histogramdd": {**_HIST, "params": {**_HIST["params"],
                                                  "sample": {"rank": [2, 2]}},
                              "constraints": ["sample.num_element > 0"]},
    "jax.numpy.cov": {"drop": ["y", "fweights", "aweights"], "params": {"m": {"rank": [1, 2]}}},
    "jax.numpy.corrcoef": {"drop": ["y"], "params": {"x": {"rank": [1, 2]}}},
    "jax.numpy.bincount": {"params": {"x": {"dtypes": ["int32", "int64"], "domain": [0, 6],
                                            "rank": [1, 1]},
                                      "minlength": {"range": [0, 4]}},
                           "drop": ["weights"]},
    # ---- elementwise with scalars ----
    "jax.numpy.clip": {"params": {"min": {"type": ["none", "float"]},
                                  "max": {"type": ["none", "float"]}}},
    "jax.numpy.interp": {"params": {"xp": VEC, "fp": VEC,
                                    "left": {"type": ["none", "float"]},
                                    "right": {"type": ["none", "float"]},
                                    "period": {"type": ["none", "float"], "range": [1, 7]}},
                         "constraints": ["xp.shape[0] == fp.shape[0]", "xp.shape[0] > 0"]},
    "jax.numpy.ldexp": {"params": {"x2": {"dtypes": ["int32", "int64"], "domain": [-4, 4]}},
                        "broadcast": [["x1", "x2"]]},
    "jax.numpy.heaviside": {"broadcast": [["x1", "x2"]]},
    "jax.numpy.polyint": {"params": {"k": {"type": ["none", "float"]}, "p": VEC},
                          "constraints": ["k is None or m >= 1"]},
    "jax.numpy.polyadd": {"params": {"a1": VEC, "a2": VEC},
                          "constraints": ["a1.num_element > 0", "a2.num_element > 0"]},
    "jax.numpy.polysub": {"params": {"a1": VEC, "a2": VEC},
                          "constraints": ["a1.num_element > 0", "a2.num_element > 0"]},
    "jax.numpy.polyfit": {"drop": ["w"], "params": {
        "deg": {"range": [0, 3]}, "x": {"dtypes": ["float32", "float64"], "rank": [1, 1]},
        "y": {"dtypes": ["float32", "float64"], "rank": [1, 1]}}, "constraints": [
            "x.shape[0] > 0", "x.shape[0] == y.shape[0]"]},
    "jax.numpy.polydiv": {"params": {"u": VEC, "v": VEC},
                          "constraints": ["u.num_element > 0", "v.num_element > 0"]},
    "jax.numpy.roots": {"params": {"p": {"rank": [1, 1], "dtypes": [
        "float32", "float64", "complex64", "complex128"]}}},
    # ---- products ----
    "jax.numpy.dot": {"constraints": [
        "a.shape[-1] == (b.shape[-2] if b.ndims >= 2 else b.shape[0]) or a.ndims == 0 "
        "or b.ndims == 0"]},
    "jax.numpy.vdot": {"params": {"a": VEC, "b": VEC}, "constraints": ["a.shape[0] == b.shape[0]"]},
    "jax.numpy.inner": {"constraints": ["a.shape[-1] == b.shape[-1] or a.ndims == 0 "
                                        "or b.ndims == 0"]},
    "jax.numpy.vecdot": {"drop": ["axis"], "params": {"x1": {"rank": [1, 4]}},
                         "broadcast": [["x1", "x2"]],
                         "constraints": ["x1.shape[-1] == x2.shape[-1]"]},
    "jax.numpy.matvec": {"params": {"x1": {"rank": [2, 2]}, "x2": VEC},
                         "constraints": ["x2.shape[0] == x1.shape[-1]"]},
    "jax.numpy.vecmat": {"params": {"x1": VEC, "x2": {"rank": [2, 2]}},
                         "constraints": ["x1.shape[0] == x2.shape[-2]"]},
    "jax.numpy.tensordot": {"params": {"axes": {"type": ["int"], "range": [0, 2]}},
                            "own_axes": ["axes"], "constraints": [
        "axes <= a.ndims and axes <= b.ndims",
        "a.shape[a.ndims - axes] == b.shape[0] or axes < 1",
        "a.shape[a.ndims - axes + 1] == b.shape[1] or axes < 2"]},
    "jax.numpy.cross": {"drop": ["axisa", "axisb", "axisc", "axis"],
                        "broadcast": [["a", "b"]],
                        "constraints": ["a.shape[-1] in (2, 3)", "b.shape[-1] in (2, 3)"]},
}
HINTS.update({f"jax.numpy.fft.{n}": _FFT2 for n in ("fft2", "ifft2", "rfft2", "irfft2")})
HINTS.update({f"jax.numpy.fft.{n}": _FFTN for n in ("fftn", "ifftn", "rfftn", "irfftn")})
HINTS.update(LAX)
HINTS.update(LINALG_FFT)
HINTS.update(NN_SPECIAL)
