"""TF.js spec extraction on small TypeScript/JavaScript snippets written here.

``tfjs_dts.js`` runs under the real Node with the real TypeScript compiler (from dlfuzz's
tools cache); the snippets imitate tfjs-core's layout (``declare function op_`` +
``export declare const op: typeof op_`` in the .d.ts, ``function op_(...)`` with
``convertToTensor`` and ``util.assert`` in the .js). No DL library is involved.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dlfuzz.engines.api.constraints import Env, holds
from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.specgen import tfjs_apis, tfjs_asserts

DTS = """
import { Tensor, Tensor3D, Tensor4D, Scalar } from '../tensor';
import { TensorLike, DataType } from '../types';
/**
 * A convolution.
 * @param x The input, rank 3 or 4.
 * @param filter The filter.
 * @param strides The strides.
 * @param pad The padding.
 * @param dataFormat The layout. Defaults to "NHWC".
 * @param dilations The dilation rates.
 */
declare function myConv_<T extends Tensor3D | Tensor4D>(x: T | TensorLike,
    filter: Tensor4D | TensorLike, strides: [number, number] | number,
    pad: 'valid' | 'same' | number, dataFormat?: 'NHWC' | 'NCHW',
    dilations?: [number, number] | number): T;
export declare const myConv: typeof myConv_;
declare function myAdd_(a: Tensor | TensorLike, b: Tensor | TensorLike, tensors: Tensor[],
    axis?: number, alpha?: number, keepDims?: boolean, dtype?: DataType,
    lo?: number | Scalar): Tensor;
export declare const myAdd: typeof myAdd_;
declare function myLoop_(x: Tensor | TensorLike, paddings: Array<[number, number]>): Tensor;
export declare const myLoop: typeof myLoop_;
"""

JS = """
function myConv_(x, filter, strides, pad, dataFormat = 'NHWC', dilations = [1, 1]) {
    const $x = convertToTensor(x, 'x', 'myConv', 'float32');
    const $filter = convertToTensor(filter, 'filter', 'myConv', 'float32');
    let x4D = $x;
    if ($x.rank === 3) {
        x4D = reshape($x, [1, $x.shape[0], $x.shape[1], $x.shape[2]]);
    }
    util.assert(x4D.rank === 4, () => 'rank');
    const inDepth = dataFormat === 'NHWC' ? x4D.shape[3] : x4D.shape[1];
    util.assert(inDepth === $filter.shape[2], () => 'depth');
    util.assert(conv_util.eitherStridesOrDilationsAreOne(strides, dilations), () => 'one');
    for (let i = 0; i < 2; i++) {
        util.assert($x.shape[i] > i, () => 'loop');
    }
    if ($x.size === 0) {
        throw new Error('empty');
    }
}
function myAdd_(a, b, tensors, axis = 0, alpha = 0.5, keepDims = false, dtype, lo) {
    let $a = convertToTensor(a, 'a', 'myAdd');
    let $b = convertToTensor(b, 'b', 'myAdd');
    [$a, $b] = makeTypesMatch($a, $b);
    assertTypesMatch($a, $b);
    assert(tensors.length >= 1 && !($a.dtype === 'bool'), () => 'x');
    let $scale;
    if (lo != null) {
        $scale = convertToTensor(lo, 'lo', 'myAdd');
        util.assert($scale.rank === 0, () => 'r');
    }
    util.assertShapesMatch($a.shape, $b.shape, 'msg');
}
function myLoop_(x, paddings) {
    const $x = convertToTensor(x, 'x', 'myLoop');
}
"""


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    folder: Path = tmp_path_factory.mktemp("tfjs")
    (folder / "ops.d.ts").write_text(DTS)
    (folder / "ops.js").write_text(JS)
    data = tfjs_apis.run_script("files", str(folder / "ops.d.ts"), str(folder / "ops.js"))
    return {op["api"]: op for op in data["ops"]}


def _spec(extracted: dict[str, dict], api: str) -> LibSpec:
    return tfjs_apis.build_spec(extracted[api])


def test_types_map_to_structures(extracted: dict[str, dict]) -> None:
    conv = _spec(extracted, "tf.myConv")
    x, filt, strides, pad, fmt, dil = conv.params
    assert x.structures == ("tensor",) and x.rank == (3, 4) and x.dtypes == ("float32",)
    assert filt.rank == (4, 4)
    assert set(strides.structures) == {"int", "ints"} and strides.length == (2, 2)
    assert set(pad.structures) == {"int", "str"} and pad.values == ("valid", "same")
    assert fmt.optional and fmt.default == "NHWC" and fmt.values == ("NHWC", "NCHW")
    assert dil.optional and dil.default == [1, 1]  # the JS initializer, not null
    assert all(p.passing == "positional" for p in conv.params)
    add = _spec(extracted, "tf.myAdd")
    by = {p.name: p for p in add.params}
    assert by["tensors"].structures == ("tensors",)
    assert by["axis"].structures == ("int",) and by["axis"].default == 0
    assert by["alpha"].structures == ("float",)
    assert by["keepDims"].structures == ("bool",)
    assert "dtype" in by["dtype"].structures and "none" in by["dtype"].structures
    assert {"float", "tensor"} <= set(by["lo"].structures) and by["lo"].rank == (0, 0)
    assert _spec(extracted, "tf.myLoop").skip == "nested list parameter"


def test_conv_checks_translate_and_evaluate(extracted: dict[str, dict]) -> None:
    conv = _spec(extracted, "tf.myConv")
    cons = [c for c in conv.constraints if c.source == "validation"]
    assert any(c.text == "x.dtype == 'float32'" for c in cons)

    def ok(**values: object) -> bool:
        base = {"x": np.zeros((1, 5, 5, 3), np.float32),
                "filter": np.zeros((2, 2, 3, 4), np.float32),
                "strides": 1, "pad": "valid", "dataFormat": "NHWC", "dilations": 1}
        base.update(values)
        return all(holds(c, Env(base)) for c in cons)

    assert ok()
    assert ok(x=np.zeros((5, 5, 3), np.float32))               # rank 3: batch of 1
    assert ok(x=np.zeros((1, 3, 5, 5), np.float32), dataFormat="NCHW")
    assert not ok(filter=np.zeros((2, 2, 2, 4), np.float32))   # depth mismatch
    assert not ok(x=np.zeros((5, 3), np.float32))              # rank 2
    assert not ok(strides=[2, 2], dilations=[2, 1])            # neither is 1
    assert ok(strides=[2, 2], dilations=1)
    assert not ok(x=np.zeros((0, 5, 5, 3), np.float32))        # `if (size === 0) throw`
    assert not ok(x=np.zeros((1, 5, 5, 3), np.int32))          # convertToTensor's float32


def test_add_checks_and_drops_are_counted(extracted: dict[str, dict]) -> None:
    tally = tfjs_asserts.Tally()
    add = tfjs_apis.build_spec(extracted["tf.myAdd"], tally)
    texts = {c.text for c in add.constraints if c.source == "validation"}
    assert "b.dtype == a.dtype" in texts                       # assertTypesMatch
    assert "b.ndims == a.ndims" in texts                       # assertShapesMatch
    a = np.zeros((2, 3), np.float32)
    env = {"a": a, "b": np.zeros((2, 3), np.float32), "tensors": [a], "lo": None}
    vals = [c for c in add.constraints if c.source == "validation"]
    assert all(holds(c, Env(env)) for c in vals)
    # the rank check runs only when lo is given: None passes, a vector does not
    assert not all(holds(c, Env({**env, "lo": np.zeros(3, np.float32)})) for c in vals)
    assert all(holds(c, Env({**env, "lo": np.float32(2.0)})) for c in vals)
    assert not all(holds(c, Env({**env, "b": np.zeros((3, 2), np.float32)})) for c in vals)
    assert not all(holds(c, Env({**env, "tensors": []})) for c in vals)
    conv_tally = tfjs_asserts.Tally()
    tfjs_apis.build_spec(extracted["tf.myConv"], conv_tally)
    assert conv_tally.dropped["tf.myConv"] == 1                 # the loop variable i
    assert conv_tally.reasons == {"local": 1}
    assert tally.kept["tf.myAdd"] >= 4


def test_shape_macros_expand_to_parseable_constraints() -> None:
    shapes = tfjs_asserts.expand_macro("SHAPES(a, b)")
    assert shapes[0] == "b.ndims == a.ndims" and len(shapes) == 1 + tfjs_asserts.MAX_RANK
    broadcast = tfjs_asserts.expand_macro("BROADCAST(a, b)")
    op = {"api": "tf.t", "checks": [{"py": "BROADCAST(a, b)"}, {"py": "AXIS(axis, a)"},
                                    {"js": "x", "reason": "call reduce"},
                                    {"py": "(q.ndims == 1)"}]}
    tally = tfjs_asserts.Tally()
    got = tfjs_asserts.constraints_for(op, ["a", "b", "axis"], tally)
    assert [c.text for c in got] == broadcast + [
        "axis is None or (-a.ndims <= min(axis) and max(axis) < a.ndims)"]
    assert tally.reasons["call reduce"] == 1
    assert any(r.startswith("does not parse") for r in tally.reasons)  # q is no parameter
    env = {"a": np.zeros((2, 1, 3)), "b": np.zeros((4, 3)), "axis": [-1, 2]}
    assert all(holds(c, Env(env)) for c in got)
    assert not all(holds(c, Env({**env, "b": np.zeros((2, 3, 2))})) for c in got)
    assert not all(holds(c, Env({**env, "axis": 3})) for c in got)
