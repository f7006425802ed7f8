"""Root-cause keys: one key per mechanism, merged across dtypes, modes, aliases, families
and engines; apart where the mechanism differs (a compiler alone wrong, another class)."""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.oracles.base import finding, input_dtypes
from dlfuzz.oracles.special import NAN_HANDLING, nan_handling, nan_mark
from dlfuzz.triage.root_cause import (
    Backends,
    about_nan_handling,
    constraint_params,
    families,
    op_name,
    root_cause_key,
    stored_root_cause,
)

BACKENDS = Backends(
    {"numpy": "numpy", "torch": "torch", "torch-compile": "torch", "tf": "tf",
     "tf-xla": "tf", "jax": "jax", "jax-jit": "jax", "keras-tf": "keras",
     "keras-jax": "keras", "keras-torch": "keras", "tfjs-cpu": "tfjs", "tfjs-wasm": "tfjs"},
    {"torch-compile": True, "tf-xla": True, "jax-jit": True})
FINITE = {"special_values": ""}


def case(api: str, *arrays: np.ndarray, libs: tuple[str, ...] = ("tf",)) -> ApiCase:
    return ApiCase(api, tuple(Tensor.from_numpy(a) for a in arrays),
                   tuple((lib, Call(f"{lib}.{api.rsplit('.', 1)[-1]}", (Ref(0),)))
                         for lib in libs))


def numeric(c: ApiCase, backend: str, **details):
    return finding("differential", "numeric", c, backend, "call", "1/2 elements off",
                   signature_message=f"inputs {input_dtypes(c)}", **details)


def key(f, c, others=()) -> str:
    return root_cause_key(f, c, BACKENDS, others)


def test_dtypes_change_the_signature_but_not_the_root_cause() -> None:
    c32 = case("tf.math.hypot", np.ones(3, np.float32))
    c64 = case("tf.math.hypot", np.ones(3, np.float64))
    f32, f64 = numeric(c32, "tf", **FINITE), numeric(c64, "tf", **FINITE)
    assert f32.signature != f64.signature
    assert key(f32, c32) == key(f64, c64) == "tf/hypot/wrong-result"


def test_modes_of_one_library_merge_when_eager_is_wrong_too() -> None:
    c = case("tf.math.hypot", np.array([np.inf, 1.0], np.float32))
    special = {"special_values": "inputs hold inf"}
    eager, xla = numeric(c, "tf", **special), numeric(c, "tf-xla", **special)
    both = [eager, xla]
    assert key(eager, c, both) == key(xla, c, both) == "tf/hypot/special-value"


def test_a_compiled_mode_alone_wrong_keeps_its_own_key() -> None:
    c = case("torch.cumsum", np.ones(8, np.float32), libs=("torch",))
    alone = numeric(c, "torch-compile", **FINITE)
    assert key(alone, c, [alone]) == "torch-compile/cumsum/wrong-result"
    # The eager library wrong on another mechanism does not pull the compiler's bug in.
    eager_other = finding("status", "status", c, "torch", "call", "RuntimeError: boom")
    assert key(alone, c, [alone, eager_other]) == "torch-compile/cumsum/wrong-result"


def test_keras_code_blamed_on_every_keras_backend_is_one_keras_root_cause() -> None:
    c = case("keras.layers.Dense", np.ones((2, 3), np.float32), libs=("keras",))
    found = [finding("program-state", "status", c, b, "call",
                     "ValueError: units must be positive, got 0", kind="valid program raised")
             for b in ("keras-tf", "keras-jax", "keras-torch")]
    keys = {key(f, c, found) for f in found}
    assert keys == {"keras/dense/error:valueerror-units-must-be-positive-got"}
    # One Keras backend alone: its own backend code.
    assert key(found[1], c, [found[1]]).startswith("keras-jax/dense/")


def test_aliases_and_namespaces_share_one_op() -> None:
    assert op_name("torch.slogdet") == op_name("torch.linalg.slogdet") == "slogdet"
    assert op_name("tf.raw_ops.LogMatrixDeterminant") == "slogdet"
    assert op_name("jax.numpy.linalg.det") == op_name("numpy.linalg.det") == "det"
    assert op_name("tf.clip_by_value") == op_name("torch.clamp") == "clip"
    c1 = case("torch.slogdet", np.eye(2, dtype=np.float32), libs=("torch",))
    c2 = case("torch.linalg.slogdet", np.eye(2, dtype=np.float64), libs=("torch",))
    assert key(numeric(c1, "torch", **FINITE), c1) == key(numeric(c2, "torch", **FINITE), c2)


def test_api_engine_and_model_engine_share_one_op_family() -> None:
    # The API engine files torch.nn.functional.conv2d; the model engine, localized, files
    # the layer kind Conv2D (its finding's api is relabelled to the layer).
    assert op_name("torch.nn.functional.conv2d") == op_name("Conv2D") == "conv2d"
    assert op_name("keras.layers.Conv2DTranspose") == op_name(
        "torch.nn.functional.conv_transpose2d") == "convtranspose2d"
    assert op_name("BatchNormalization") == op_name("torch.nn.functional.batch_norm")


def test_sibling_apis_with_one_mechanism_are_one_family() -> None:
    nan = {"special_values": "inputs hold nan"}
    keys = set()
    for api in ("tf.minimum", "tf.maximum", "tf.clipByValue", "tf.relu6", "tf.max"):
        c = case(api, np.array([np.nan, 1.0], np.float32), libs=("tfjs",))
        keys.add(key(numeric(c, "tfjs-wasm", **nan), c))
    assert keys == {"tfjs-wasm/min-max-clip/nan-propagation"}
    # The model engine's max-like layers (localized layer kinds) are the same family.
    keys = set()
    for layer in ("MaxPool3D", "GlobalMaxPool2D", "ReduceMax", "Minimum"):
        c = case(layer, np.array([np.nan, 1.0], np.float32), libs=("onnx",))
        keys.add(key(numeric(c, "ort", **nan), c))
    assert keys == {"ort/min-max-clip/nan-propagation"}
    # The same ops wrong on finite inputs are not that family.
    c = case("tf.maximum", np.ones(2, np.float32), libs=("tfjs",))
    assert key(numeric(c, "tfjs-wasm", **FINITE), c) == "tfjs-wasm/maximum/wrong-result"
    # int64 values beyond int32 wrong in any compare-and-select layer: one defect
    # (ONNX Runtime 1.31 compares them as int32); on small int64 values, per layer.
    keys = set()
    for layer in ("ReduceMin", "ReduceMax", "ReLU", "Clip", "Minimum"):
        c = case(layer, np.array([3_000_000_000, -5], np.int64), libs=("onnx",))
        keys.add(key(numeric(c, "ort", **FINITE), c))
    assert keys == {"ort/min-max-clip/int64-as-int32"}
    c = case("Minimum", np.array([3, -5], np.int64), libs=("onnx",))
    assert key(numeric(c, "ort", **FINITE), c) == "ort/minimum/wrong-result"


def test_empty_reductions_are_one_family() -> None:
    keys = set()
    for api in ("tf.sum", "tf.prod", "tf.mean", "tf.max", "tf.min"):
        c = case(api, np.zeros((0, 3), np.float32), libs=("tfjs",))
        keys.add(key(numeric(c, "tfjs-cpu", **FINITE), c))
    assert keys == {"tfjs-cpu/empty-reduction/empty-input"}


def test_norm_eps_validation_is_one_family() -> None:
    keys = set()
    for api in ("torch.nn.BatchNorm2d", "torch.nn.LayerNorm", "torch.nn.GroupNorm",
                "torch.nn.InstanceNorm1d"):
        c = case(api, np.ones((2, 4), np.float32), libs=("torch",))
        f = finding("boundary", "boundary", c, "torch", "call", "accepted",
                    f"accepts input breaking {api} eps > 0", constraint="eps > 0")
        keys.add(key(f, c))
    assert keys == {"torch/norm-eps/eps-validation"}
    assert {f.name for f in families()} >= {"min-max-clip", "empty-reduction", "norm-eps"}


def test_one_mechanism_under_two_symptoms_is_one_root_cause() -> None:
    # An unchecked negative output size: a segfault on one input, garbage on another.
    c = case("tf.image.resizeBilinear", np.ones((1, 2, 2, 1), np.float32), libs=("tfjs",))
    crash = finding("crash", "crash", c, "tfjs-wasm", "worker",
                    "RuntimeError: memory access out of bounds", "RuntimeError")
    garbage = finding("determinism", "nondeterministic", c, "tfjs-wasm", "call",
                      "the same input gave different outputs on two runs")
    assert crash.signature != garbage.signature
    assert key(crash, c) == key(garbage, c) == "tfjs-wasm/resizebilinear/memory"
    hang = finding("crash", "timeout", c, "tfjs-wasm", "call", "no result", "timeout")
    assert key(hang, c) == "tfjs-wasm/resizebilinear/hang"


def test_the_class_and_the_constraint_keep_mechanisms_apart() -> None:
    c = case("tf.math.hypot", np.ones(3, np.float32))
    assert key(numeric(c, "tf", **FINITE), c) != key(
        numeric(c, "tf", special_values="inputs hold nan"), c)
    assert constraint_params("0 <= p <= 1") == "p"
    assert constraint_params("len(output_size) == ndim") == "output_size"


def test_a_bug_stored_before_keys_existed_gets_a_key_from_its_fields() -> None:
    assert stored_root_cause("tf-xla", "tf.math.hypot", "numeric", "m",
                             {"special_values": "inputs hold nan"}) == \
        "tf/hypot/special-value"
    assert stored_root_cause("tf-xla", "tf.math.hypot", "numeric", "m",
                             {"special_values": f"inputs hold nan; {NAN_HANDLING}"}) == \
        "tf/hypot/nan-propagation"
    assert stored_root_cause("tf-xla", "tf.math.hypot", "numeric", "m",
                             {"special_values": "inputs hold -inf; overflow in float32"}) == \
        "tf/hypot/special-value"


def test_nan_handling_and_infinite_inputs_are_two_root_causes_and_two_signatures() -> None:
    # torch.special.gammainc(nan, x) gave a finite value while inf inputs gave another
    # special-value disagreement: filed under one key, the NaN bug was only a place of
    # the inf one, and its report showed the inf case.
    nan_case = case("torch.special.gammainc", np.array([np.nan, 1.0], np.float32),
                    libs=("torch",))
    inf_case = case("torch.special.gammainc", np.array([np.inf, 1.0], np.float32),
                    libs=("torch",))
    on_nan = numeric(nan_case, "torch", special_values=f"inputs hold nan; {NAN_HANDLING}")
    on_inf = numeric(inf_case, "torch", special_values="inputs hold inf")
    assert key(on_nan, nan_case) == "torch/gammainc/nan-propagation"
    assert key(on_inf, inf_case) == "torch/gammainc/special-value"
    # A NaN beside a disagreement between two numbers: not NaN handling.
    beside = numeric(nan_case, "torch", special_values="inputs hold nan")
    assert key(beside, nan_case) == "torch/gammainc/special-value"
    # Without the phrase (a finding stored before it), the case's inputs decide.
    bare = numeric(nan_case, "torch")
    assert about_nan_handling(dict(bare.details), nan_case)
    assert not about_nan_handling(dict(numeric(inf_case, "torch").details), inf_case)


def test_nan_handling_is_nan_on_one_side_of_a_disagreement_with_no_infinity() -> None:
    nan_in = case("torch.cumsum", np.array([np.nan, 1.0, 2.0], np.float32), libs=("torch",))
    finite_out = (np.array([1.0, 1.0, 3.0], np.float32),)
    nan_ref = (np.array([np.nan, np.nan, np.nan]),)
    first = (np.array([True, False, False]),)
    # torch gives 1 where NaN is expected: NaN handling, and the signature says so.
    assert nan_handling(nan_in, finite_out, nan_ref, first)
    assert nan_mark(nan_in, finite_out, nan_ref, first)
    # Two numbers disagreeing with a NaN elsewhere in the inputs: not NaN handling.
    numbers = ((np.array([9.0, 1.0, 3.0], np.float32),), (np.array([5.0, 1.0, 3.0]),))
    assert not nan_handling(nan_in, *numbers, first)
    assert not nan_mark(nan_in, *numbers, first)
    # NaN and an infinity in the inputs: with the infinities.
    both = case("torch.cumsum", np.array([np.nan, np.inf, 2.0], np.float32), libs=("torch",))
    assert not nan_handling(both, finite_out, nan_ref, first)


def test_the_key_does_not_depend_on_which_backends_a_campaign_selected() -> None:
    # Only tfjs-wasm selected: still named by the backend (TF.js has cpu and wasm too).
    only_wasm = Backends({"tfjs-wasm": "tfjs", "tf": "tf"}, {})
    c = case("tf.maximum", np.ones(2, np.float32), libs=("tfjs",))
    f = numeric(c, "tfjs-wasm", **FINITE)
    assert root_cause_key(f, c, only_wasm) == key(f, c) == "tfjs-wasm/maximum/wrong-result"
    # Only tf-xla selected: tf-xla alone is a compiler bug whichever backends ran.
    only_xla = Backends({"tf-xla": "tf", "numpy": "numpy"}, {})
    c = case("tf.math.hypot", np.ones(2, np.float32))
    f = numeric(c, "tf-xla", **FINITE)
    assert root_cause_key(f, c, only_xla) == "tf-xla/hypot/wrong-result"


def test_unary_kernels_reading_uninitialised_memory_are_one_family() -> None:
    keys = set()
    for api in ("tf.log1p", "tf.asinh", "tf.acosh"):
        c = case(api, np.arange(3, dtype=np.int32), libs=("tfjs",))
        f = finding("determinism", "nondeterministic", c, "tfjs-wasm", "call",
                    "the same input gave different outputs")
        keys.add(key(f, c))
    assert keys == {"tfjs-wasm/unary-math/memory"}


def test_a_loss_over_an_empty_tensor_is_the_empty_reduction_family() -> None:
    c = case("tf.losses.hingeLoss", np.zeros((0, 3), np.float32), libs=("tfjs",))
    assert key(numeric(c, "tfjs-wasm", **FINITE), c) == "tfjs-wasm/empty-reduction/empty-input"


def test_a_wasm_division_trap_and_garbage_output_of_one_op_are_one_root_cause() -> None:
    # wasm prelu: "divide by zero" trap on one case, uninitialised memory on another.
    c = case("tf.prelu", np.ones(2, np.float32), libs=("tfjs",))
    trap = finding("crash", "crash", c, "tfjs-wasm", "worker",
                   "NativeCrash: RuntimeError: divide by zero", "RuntimeError")
    garbage = finding("determinism", "nondeterministic", c, "tfjs-wasm", "call",
                      "the same input gave different outputs on two runs")
    assert key(trap, c) == key(garbage, c) == "tfjs-wasm/prelu/memory"
    # An ordinary exception is not memory.
    thrown = finding("crash", "crash", c, "tfjs-wasm", "worker", "Error: boom", "Error")
    assert key(thrown, c) == "tfjs-wasm/prelu/crash"


def _pool_case(api: str, **params) -> ApiCase:
    c = case(api, np.ones((3, 1, 3), np.float32), libs=("tfjs",))
    return ApiCase(c.api, c.tensors, c.calls, tuple(params.items()))


def test_numeric_pad_geometry_of_conv_and_pool_ops_is_one_family() -> None:
    garbage = "the same input gave different outputs on two runs"
    cases = [_pool_case("tf.pool", windowShape=(1, 2), poolingType="max", pad=1),
             _pool_case("tf.maxPool", filterSize=(1, 1), strides=(1, 3), pad=1),
             _pool_case("tf.conv1d", stride=1, pad=0, dilation=2)]
    keys = {key(finding("determinism", "nondeterministic", c, "tfjs-wasm", "call", garbage),
                c) for c in cases}
    assert keys == {"tfjs-wasm/conv-pool-geometry/numeric-pad-output-size"}
    # A square window, or a string pad, is another mechanism: its own key.
    square = _pool_case("tf.avgPool", filterSize=2, strides=2, pad=2)
    valid = _pool_case("tf.maxPool", filterSize=(1, 1), strides=(1, 3), pad="valid")
    for c in (square, valid):
        f = finding("determinism", "nondeterministic", c, "tfjs-wasm", "call", garbage)
        assert key(f, c).endswith("/memory")


def test_a_unit_pooling_window_with_padding_is_one_family_for_avg_and_max() -> None:
    garbage = "the same input gave different outputs on two runs"
    cases = [_pool_case("tf.avgPool", filterSize=1, strides=2, pad=2),
             _pool_case("tf.maxPool", filterSize=1, strides=(3, 3), pad=2)]
    keys = {key(finding("determinism", "nondeterministic", c, "tfjs-wasm", "call", garbage),
                c) for c in cases}
    assert keys == {"tfjs-wasm/pool-unit-window/numeric-pad-uninitialised"}
    no_pad = _pool_case("tf.avgPool", filterSize=1, strides=2, pad=0)
    f = finding("determinism", "nondeterministic", no_pad, "tfjs-wasm", "call", garbage)
    assert key(f, no_pad) == "tfjs-wasm/avgpool2d/memory"


def test_a_valid_window_larger_than_the_input_is_one_family() -> None:
    # The negative output size: a 3x3 window over an input one pixel high.
    x = np.ones((1, 1, 3, 1), np.int32)

    def api_case(api: str, *arrays: np.ndarray, **params) -> ApiCase:
        c = case(api, *arrays, libs=("tfjs",))
        return ApiCase(c.api, c.tensors, c.calls, tuple(params.items()))

    cases = [api_case("tf.maxPoolWithArgmax", x, filterSize=3, strides=1, pad="valid"),
             api_case("tf.separableConv2d", np.ones((1, 3, 3, 2), np.float32),
                      np.ones((4, 1, 2, 1), np.float32), np.ones((1, 1, 2, 1), np.float32),
                      strides=1, pad="valid"),
             api_case("tf.dilation2d", np.ones((1, 3, 3, 1), np.float32),
                      np.ones((2, 1, 1), np.float32), strides=1, pad="valid", dilations=3)]
    crash = "NativeCrash: RuntimeError: memory access out of bounds"
    keys = {key(finding("crash", "crash", c, "tfjs-wasm", "worker", crash, "RuntimeError"), c)
            for c in cases}
    assert keys == {"tfjs-wasm/conv-pool-geometry/negative-output-size"}
    fits = api_case("tf.maxPoolWithArgmax", np.ones((1, 3, 3, 1), np.int32), filterSize=3,
                    strides=1, pad="valid")
    f = finding("crash", "crash", fits, "tfjs-wasm", "worker", crash, "RuntimeError")
    assert key(f, fits) == "tfjs-wasm/maxpoolwithargmax/memory"


def test_the_wasm_resize_kernels_on_an_empty_image_are_one_family() -> None:
    garbage = "the same input gave different outputs on two runs"
    keys = set()
    for api in ("tf.image.resizeBilinear", "tf.image.resizeNearestNeighbor"):
        c = case(api, np.zeros((4, 0, 3), np.float32), libs=("tfjs",))
        keys.add(key(finding("determinism", "nondeterministic", c, "tfjs-wasm", "call",
                             garbage), c))
    assert keys == {"tfjs-wasm/resize-empty-image/empty-input"}


def test_cumsum_and_cumprod_memory_and_gcd_lcm_hangs_are_families() -> None:
    keys = set()
    for api in ("tf.cumsum", "tf.cumprod"):
        c = case(api, np.arange(3, dtype=np.int32), libs=("tfjs",))
        f = finding("crash", "crash", c, "tfjs-wasm", "call",
                    "NativeCrash: RuntimeError: memory access out of bounds")
        keys.add(key(f, c))
    assert keys == {"tfjs-wasm/cumulative-scan/memory"}
    keys = set()
    for api in ("jax.numpy.gcd", "jax.numpy.lcm"):
        c = case(api, np.array([-2**31, 6], dtype=np.int32), libs=("jax",))
        f = finding("crash", "timeout", c, "jax", "call", "no result within 10.0 s")
        keys.add(key(f, c))
    assert keys == {"jax/gcd-lcm/hang"}


def test_reduction_drops_a_nan_only_to_show_an_ordinary_wrong_result() -> None:
    from dlfuzz.oracles.special import NAN_MARK, same_finding

    c = case("torch.special.gammainc", np.array([np.nan, -0.0], np.float32),
             libs=("torch",))

    def found(mark: str, phrase: str):
        return finding("differential", "numeric", c, "torch", "call", "off",
                       signature_message=f"inputs float32{mark}", special_values=phrase)

    on_nan = found(NAN_MARK, "inputs hold nan; NaN inputs handled differently")
    assert same_finding(found(NAN_MARK, "inputs hold nan; reference holds nan"), on_nan)
    # NaN replaced and still a disagreement on ordinary numbers: the better report.
    assert same_finding(found("", ""), on_nan)
    # NaN replaced and a special-value disagreement left (a -0, an overflow): another
    # mechanism, not this bug.
    assert not same_finding(found("", "inputs hold -0"), on_nan)


def test_a_composition_s_product_scatter_derivative_is_the_scatter_reduce_bug() -> None:
    """dlfuzz's torch compositions of ``tf.math.unsorted_segment_prod`` and
    ``segment_prod`` call ``torch.scatter_reduce(reduce='prod')``: their wrong
    forward-mode derivative was filed under each TF API's name beside the same
    ``torch.scatter_reduce`` bug."""
    def grad(api: str, mode: str) -> str:
        c = case(api, np.array([0.0], np.float64), libs=("torch",))
        f = finding("gradient", "gradient", c, "torch", "backward",
                    "forward-mode derivative ... is 0 where finite differences give -2",
                    mode=mode)
        return key(f, c)

    keys = {grad(api, "forward") for api in ("torch.scatter_reduce",
                                             "tensorflow.math.unsorted_segment_prod",
                                             "tensorflow.math.segment_prod")}
    assert keys == {"torch/scatterreduce/gradient:forward"}
    assert grad("tensorflow.math.unsorted_segment_prod", "reverse") == \
        "torch/scatterreduce/gradient:reverse"
    assert grad("tensorflow.math.unsorted_segment_sum", "forward") == \
        "torch/unsortedsegmentsum/gradient:forward"
