"""Imported Keras and ONNX models compute what the original computes.

Each test builds a small model in the library, saves it to a file, imports it with
``from_keras`` / ``from_onnx``, then runs the IR model through a lowering (Keras for
Keras models; TensorFlow for ONNX models, an implementation independent of ONNX Runtime)
and compares with the library's own output on random inputs. Weights are randomized
(non-zero biases, non-trivial BatchNorm statistics) so a weight mapped to the wrong IR
name or layout shows. Refusals must name the layer, its class and the file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dlfuzz.engines.model.importers import from_keras, from_onnx  # noqa: E402
from dlfuzz.engines.model.seeds import load_seed  # noqa: E402
from dlfuzz.errors import UsageError  # noqa: E402
from dlfuzz.ir.lower import build, emit  # noqa: E402
from dlfuzz.ir.model import Model  # noqa: E402

keras = pytest.importorskip("keras")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
L = keras.layers


def ir_outputs(model: Model, xs: Sequence[np.ndarray], lowering: str = "keras"
               ) -> list[np.ndarray]:
    outs = build(emit(lowering, model.graph), dict(model.weights))(*xs)
    arrays = [np.asarray(o) for o in outs]
    want = [model.graph.type_of(v).shape for v in model.graph.outputs]
    if len(want) == 1 and [a.shape for a in arrays] != want:
        # keras_lower returns tuple(model(...)); Keras 3 gives a bare tensor for a single
        # output, so the tuple splits the batch. Re-stack until the lowering is fixed.
        arrays = [np.stack(arrays)]
    return arrays


def randomize(kmodel, rng: np.random.Generator) -> None:
    """Vectors in [0.5, 1.5] (biases, gammas, positive variances), kernels N(0, 0.3)."""
    for layer in kmodel.layers:
        weights = layer.get_weights()
        if weights:
            layer.set_weights([(rng.uniform(0.5, 1.5, w.shape) if w.ndim == 1
                                else rng.normal(0.0, 0.3, w.shape)).astype(w.dtype)
                               for w in weights])


def keras_agrees(kmodel, path: Path, rng: np.random.Generator, **kw) -> Model:
    randomize(kmodel, rng)
    kmodel.save(path)
    model = from_keras(path, **kw)
    xs = [rng.standard_normal(t.shape).astype(np.float32) for t in model.graph.inputs]
    ref = kmodel(xs if len(xs) > 1 else xs[0])
    ref = [np.asarray(r) for r in (ref if isinstance(ref, list | tuple) else [ref])]
    got = ir_outputs(model, xs)
    assert len(got) == len(ref)
    for r, g in zip(ref, got, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
    return model


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def conv_model():
    x0 = keras.Input((10, 10, 3))
    x = L.Conv2D(6, 3, padding="same", activation="relu")(x0)
    x = L.BatchNormalization()(x)
    y = L.DepthwiseConv2D(3, padding="same")(x)
    y = L.Conv2D(6, 1)(y)
    x = L.Add()([x, y])
    x = L.MaxPooling2D(2)(x)
    x = L.SeparableConv2D(5, 3, activation="tanh")(x)
    x = L.Flatten()(x)
    x = L.Dense(7, activation="sigmoid")(x)
    return keras.Model(x0, L.Dense(3, activation="softmax")(x))


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_keras_conv_model_round_trips(tmp_path: Path, rng, suffix: str) -> None:
    kmodel = conv_model()
    model = keras_agrees(kmodel, tmp_path / f"m{suffix}", rng)
    ops = model.graph.ops()
    assert ops == ["Conv2D", "ReLU", "BatchNorm", "DepthwiseConv2D", "Conv2D", "Add",
                   "MaxPool2D", "SeparableConv2D", "Tanh", "Flatten", "Dense", "Sigmoid",
                   "Dense", "Softmax"]
    assert model.graph.inputs[0].shape == (2, 10, 10, 3)  # batch None -> 2
    kernel, bias = kmodel.layers[1].get_weights()
    np.testing.assert_array_equal(model.weights["n0.kernel"], kernel)
    np.testing.assert_array_equal(model.weights["n0.bias"], bias)


def test_keras_recurrent_model_round_trips(tmp_path: Path, rng) -> None:
    kmodel = keras.Sequential([keras.Input((6, 4)), L.LSTM(5, return_sequences=True),
                               L.GRU(4, return_sequences=True), L.SimpleRNN(3), L.Dense(2)])
    model = keras_agrees(kmodel, tmp_path / "r.keras", rng, batch=3)
    assert model.graph.ops() == ["LSTM", "GRU", "SimpleRNN", "Dense"]
    assert model.graph.inputs[0].shape == (3, 6, 4)
    assert model.weights["n1.bias"].shape == (2, 12)  # GRU reset_after


def test_keras_many_layers_two_inputs_two_outputs(tmp_path: Path, rng) -> None:
    i1, i2 = keras.Input((8, 8, 2), batch_size=4), keras.Input((8, 8, 2), batch_size=4)
    a = L.Cropping2D(((0, 1), (2, 0)))(L.ZeroPadding2D(((1, 0), (0, 2)))(i1))
    b = L.AveragePooling2D(2, padding="same")(L.Conv2DTranspose(2, 3, strides=2,
                                                                 padding="same")(i2))
    c = L.LayerNormalization()(L.PReLU(shared_axes=[1, 2])(L.Concatenate()([a, b])))
    f = L.Maximum()([L.Multiply()([a, b]), L.Subtract()([a, b])])
    h = L.Concatenate(axis=1)([f, L.Minimum()([a, b])])
    h = L.ELU(0.5)(L.LeakyReLU(0.2)(L.UpSampling2D(2)(h)))
    h = L.Activation("gelu")(L.Reshape((-1, 4))(L.Permute((2, 1, 3))(h)))
    h = L.Dropout(0.3)(L.RepeatVector(3)(L.GlobalMaxPooling1D()(h)))
    c = L.Softmax()(L.ReLU(max_value=2.0)(L.GlobalAveragePooling2D()(c)))
    model = keras_agrees(keras.Model([i1, i2], [h, c]), tmp_path / "m.keras", rng)
    assert model.graph.inputs[0].shape[0] == 4  # the model's static batch size
    assert {"PReLU", "LayerNorm", "Conv2DTranspose", "RepeatVector", "GELU"} <= set(
        model.graph.ops())


def test_keras_1d_and_3d_layers(tmp_path: Path, rng) -> None:
    keras_agrees(keras.Sequential([
        keras.Input((9, 3)), L.Conv1D(4, 3, dilation_rate=2, padding="same",
                                      activation="elu"),
        L.MaxPooling1D(2, padding="same"), L.UpSampling1D(2), L.ZeroPadding1D(1),
        L.Cropping1D((1, 0)), L.SeparableConv1D(3, 2), L.AveragePooling1D(2),
        L.GlobalAveragePooling1D()]), tmp_path / "c1.keras", rng)
    keras_agrees(keras.Sequential([
        keras.Input((4, 6, 5, 2)), L.Conv3D(3, 2, strides=2, padding="same",
                                            activation="relu"),
        L.Conv3DTranspose(2, 2, strides=2), L.MaxPooling3D(2), L.UpSampling3D(2),
        L.ZeroPadding3D(1), L.Cropping3D(1), L.GlobalMaxPooling3D()]),
        tmp_path / "c3.keras", rng)


def test_keras_unsupported_layer_is_named(tmp_path: Path) -> None:
    path = tmp_path / "e.keras"
    keras.Sequential([keras.Input((5,)), L.Embedding(10, 3, name="emb")]).save(path)
    with pytest.raises(UsageError) as err:
        from_keras(path)
    msg = str(err.value)
    assert "'emb'" in msg and "Embedding" in msg and str(path) in msg and "Conv2D" in msg


def test_keras_unsupported_configuration_is_named(tmp_path: Path) -> None:
    path = tmp_path / "l.keras"
    keras.Sequential([keras.Input((3, 2)), L.LSTM(2, activation="relu", name="rnn")]
                     ).save(path)
    with pytest.raises(UsageError, match=r"'rnn' \(LSTM\).*activation 'relu'"):
        from_keras(path)


def test_load_seed_imports_keras_files(tmp_path: Path, rng) -> None:
    kmodel = conv_model()
    randomize(kmodel, rng)
    kmodel.save(tmp_path / "s.keras")
    model = load_seed(str(tmp_path / "s.keras"), rng, batch=5, dtype="float64")
    assert model.graph.inputs[0].shape == (5, 10, 10, 3) and model.graph.dtype == "float64"
    assert model.weights["n0.kernel"].dtype == np.float64


# ---- ONNX ---------------------------------------------------------------------------------

def onnx_agrees(graph, path: Path, rng: np.random.Generator, lowering: str) -> Model:
    from onnx import helper

    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    onnx.checker.check_model(proto)
    onnx.save(proto, str(path))
    model = from_onnx(path)
    xs = [rng.standard_normal(t.shape).astype(np.float32) for t in model.graph.inputs]
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    ref = sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs, strict=True)})
    got = ir_outputs(model, xs, lowering)
    for r, g in zip(ref, got, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
    return model


def const(rng: np.random.Generator, name: str, *shape: int, positive: bool = False):
    from onnx import numpy_helper

    values = rng.uniform(0.5, 1.5, shape) if positive else rng.normal(0.0, 0.3, shape)
    return numpy_helper.from_array(values.astype(np.float32), name)


def test_onnx_conv_relu_pool_flatten_gemm(tmp_path: Path, rng) -> None:
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c"], pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
        [const(rng, "w1", 4, 3, 3, 3), const(rng, "b1", 4), const(rng, "w2", 5, 64),
         const(rng, "b2", 5)])
    model = onnx_agrees(graph, tmp_path / "s.onnx", rng, "keras")
    # NCHW in, channels-last convs, back to NCHW before Flatten (the order Gemm expects)
    assert model.graph.ops() == ["Transpose", "Conv2D", "ReLU", "MaxPool2D", "Transpose",
                                 "Flatten", "Dense"]
    assert model.graph.inputs[0].shape == (2, 3, 8, 8)


def test_onnx_layouts_pads_and_folding(tmp_path: Path, rng) -> None:
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node
    nodes = [
        node("Conv", ["x", "w1"], ["c1"], pads=[0, 1, 2, 1], kernel_shape=[3, 3],
             strides=[2, 1]),
        node("BatchNormalization", ["c1", "g", "b", "mu", "var"], ["bn"], epsilon=1e-3),
        node("LeakyRelu", ["bn"], ["lr"], alpha=0.1),
        node("Conv", ["lr", "wd", "bd"], ["dw"], group=4, auto_pad="SAME_UPPER",
             kernel_shape=[3, 3]),
        node("Add", ["dw", "lr"], ["s"]),
        node("AveragePool", ["s"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
             count_include_pad=1),
        node("MaxPool", ["s"], ["mp"], kernel_shape=[2, 2], strides=[2, 2],
             auto_pad="SAME_UPPER"),
        node("AveragePool", ["s"], ["ap2"], kernel_shape=[3, 3], pads=[1, 0, 1, 1],
             strides=[2, 2]),
        node("Concat", ["mp", "ap2"], ["cc"], axis=1),
        node("GlobalAveragePool", ["ap"], ["gp"]),
        node("Flatten", ["gp"], ["gf"]),
        node("MatMul", ["gf", "wm"], ["mm"]),
        node("Add", ["mm", "bm"], ["ma"]),
        node("Softmax", ["ma"], ["y1"]),
        node("Transpose", ["cc"], ["tt"], perm=[0, 2, 3, 1]),
        node("Reshape", ["tt", "shape"], ["rs"]),
        node("Sigmoid", ["rs"], ["sg"]),
        node("Mul", ["sg", "two"], ["y2"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 9, 8])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [2, 12, 8])],
        [const(rng, "w1", 4, 3, 3, 3), const(rng, "g", 4, positive=True), const(rng, "b", 4),
         const(rng, "mu", 4), const(rng, "var", 4, positive=True),
         const(rng, "wd", 4, 1, 3, 3), const(rng, "bd", 4), const(rng, "wm", 4, 6),
         const(rng, "bm", 6), numpy_helper.from_array(np.array([0, -1, 8], np.int64), "shape"),
         numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    model = onnx_agrees(graph, tmp_path / "b.onnx", rng, "tf")
    ops = model.graph.ops()
    # asymmetric conv pads and count_include_pad become ZeroPadding; MatMul+Add one Dense;
    # the ONNX Transpose to NHWC cancels the pending one back to NCHW
    assert ops.count("ZeroPadding2D") == 2 and ops.count("Dense") == 1
    assert "DepthwiseConv2D" in ops and ops.count("Transpose") == 1
    dense = next(n for n in model.graph.nodes if n.op == "Dense")
    assert dense.attr("use_bias") is True


def test_onnx_unsupported_node_is_named(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"], name="absolutely")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = tmp_path / "u.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(UsageError) as err:
        from_onnx(path)
    msg = str(err.value)
    assert "'absolutely'" in msg and "(Abs)" in msg and str(path) in msg and "Conv" in msg


def test_corrupt_onnx_seed_file_is_a_usage_error(tmp_path: Path, rng) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x00 definitely not protobuf \xff" * 8)
    with pytest.raises(UsageError, match="broken.onnx"):
        load_seed(str(path), rng)
