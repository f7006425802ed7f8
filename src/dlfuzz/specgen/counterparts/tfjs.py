"""Same-name counterpart candidates of TF.js ops in TensorFlow (tfjs -> tf).

TF.js mirrors TensorFlow's op set under camelCase names (``tf.squaredDifference`` is
``tensorflow.math.squared_difference``), with JavaScript's positional parameters instead
of keywords. This table says, per op, which TensorFlow function computes the same thing
and how the tfjs parameters map onto it: ``args`` are passed by position (while present),
everything else by keyword under its ``rename`` name, ``extra`` adds keywords for a tf
parameter without a default that tfjs defaults (``concat``'s axis 0), and
``requires_default`` marks tfjs parameters tf cannot express.

Nothing here is trusted: ``python -m dlfuzz.specgen.counterparts.tfjs``
writes the candidates (``--out``), and ``python -m dlfuzz.specgen.counterparts
validate --library tfjs --kinds precision --candidates FILE`` keeps those that agree with
tfjs-cpu on generated valid inputs, per dtype (DLLens Eq. 1 with dlfuzz's tolerances).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from dlfuzz.engines.api.counterparts.model import Counterpart, dump

TF = "tensorflow"
UNARY = {  # tfjs op (parameter x) -> TensorFlow function
    "abs": "math.abs", "acos": "math.acos", "acosh": "math.acosh", "asin": "math.asin",
    "asinh": "math.asinh", "atan": "math.atan", "atanh": "math.atanh", "ceil": "math.ceil",
    "cos": "math.cos", "cosh": "math.cosh", "erf": "math.erf", "exp": "math.exp",
    "expm1": "math.expm1", "floor": "math.floor", "log": "math.log", "log1p": "math.log1p",
    "neg": "math.negative", "reciprocal": "math.reciprocal", "relu": "nn.relu",
    "relu6": "nn.relu6", "round": "math.round", "rsqrt": "math.rsqrt", "selu": "nn.selu",
    "sigmoid": "math.sigmoid", "sign": "math.sign", "sin": "math.sin", "sinh": "math.sinh",
    "softplus": "math.softplus", "sqrt": "math.sqrt", "square": "math.square",
    "tan": "math.tan", "tanh": "math.tanh", "isFinite": "math.is_finite",
    "isInf": "math.is_inf", "isNaN": "math.is_nan", "elu": "nn.elu",
    "logSigmoid": "math.log_sigmoid", "logicalNot": "math.logical_not",
    "zerosLike": "zeros_like", "onesLike": "ones_like", "clone": "identity",
    "squeeze": "squeeze", "transpose": "transpose",
}
BINARY = {  # tfjs op (a, b) -> TensorFlow function (x, y by position)
    "add": "math.add", "sub": "math.subtract", "mul": "math.multiply", "div": "math.divide",
    "divNoNan": "math.divide_no_nan", "floorDiv": "math.floordiv", "maximum": "math.maximum",
    "minimum": "math.minimum", "mod": "math.floormod", "pow": "math.pow",
    "squaredDifference": "math.squared_difference", "atan2": "math.atan2",
    "equal": "math.equal", "notEqual": "math.not_equal", "greater": "math.greater",
    "greaterEqual": "math.greater_equal", "less": "math.less",
    "lessEqual": "math.less_equal", "logicalAnd": "math.logical_and",
    "logicalOr": "math.logical_or", "logicalXor": "math.logical_xor",
    "bitwiseAnd": "bitwise.bitwise_and",
}
REDUCE = {"sum": "reduce_sum", "mean": "reduce_mean", "max": "reduce_max",
          "min": "reduce_min", "prod": "reduce_prod", "all": "reduce_all", "any": "reduce_any",
          "logSumExp": "reduce_logsumexp", "euclideanNorm": "reduce_euclidean_norm"}
_RESIZE = {"alignCorners": "align_corners", "halfPixelCenters": "half_pixel_centers"}
# tfjs op -> (target, args, rename, extra, requires_default)
SPECIAL: dict[str, tuple[str, list[str], dict[str, str], dict[str, Any], dict[str, Any]]] = {
    "tf.argMax": ("math.argmax", ["x", "axis"], {}, {}, {}),
    "tf.argMin": ("math.argmin", ["x", "axis"], {}, {}, {}),
    "tf.cumsum": ("math.cumsum", ["x", "axis", "exclusive", "reverse"], {}, {}, {}),
    "tf.cumprod": ("math.cumprod", ["x", "axis", "exclusive", "reverse"], {}, {}, {}),
    "tf.matMul": ("linalg.matmul", ["a", "b", "transposeA", "transposeB"], {}, {}, {}),
    "tf.concat": ("concat", ["tensors", "axis"], {}, {"axis": 0}, {}),
    "tf.stack": ("stack", ["tensors", "axis"], {}, {}, {}),
    "tf.expandDims": ("expand_dims", ["x", "axis"], {}, {"axis": 0}, {}),
    "tf.tile": ("tile", ["x", "reps"], {}, {}, {}),
    "tf.gather": ("gather", ["x", "indices"], {"x": "params", "batchDims": "batch_dims"},
                  {}, {}),
    "tf.oneHot": ("one_hot", ["indices", "depth", "onValue", "offValue"], {}, {},
                  {"dtype": "int32"}),
    "tf.clipByValue": ("clip_by_value", ["x", "clipValueMin", "clipValueMax"], {}, {}, {}),
    "tf.leakyRelu": ("nn.leaky_relu", ["x", "alpha"], {}, {"alpha": 0.2}, {}),
    "tf.softmax": ("nn.softmax", ["logits", "dim"], {}, {}, {}),
    "tf.logSoftmax": ("nn.log_softmax", ["logits", "axis"], {}, {}, {}),
    "tf.cast": ("cast", ["x", "dtype"], {}, {}, {}),
    "tf.topk": ("math.top_k", ["x", "k", "sorted"], {}, {"k": 1}, {}),
    "tf.unique": ("unique", ["x"], {}, {}, {"axis": 0}),
    "tf.where": ("where", ["condition", "a", "b"], {}, {}, {}),
    "tf.whereAsync": ("where", ["condition"], {}, {}, {}),
    "tf.linalg.bandPart": ("linalg.band_part", ["a", "numLower", "numUpper"], {}, {}, {}),
    "tf.linalg.qr": ("linalg.qr", ["x", "fullMatrices"], {}, {}, {}),
    "tf.fft": ("signal.fft", ["input"], {}, {}, {}),
    "tf.ifft": ("signal.ifft", ["input"], {}, {}, {}),
    "tf.irfft": ("signal.irfft", ["input"], {}, {}, {}),
    "tf.real": ("math.real", ["input"], {}, {}, {}),
    "tf.imag": ("math.imag", ["input"], {}, {}, {}),
    "tf.complex": ("complex", ["real", "imag"], {}, {}, {}),
    "tf.image.resizeBilinear": ("raw_ops.ResizeBilinear", [], {"images": "images",
                                "size": "size", **_RESIZE}, {}, {}),
    "tf.image.resizeNearestNeighbor": ("raw_ops.ResizeNearestNeighbor", [], {
        "images": "images", "size": "size", **_RESIZE}, {}, {}),
    "tf.image.flipLeftRight": ("image.flip_left_right", ["image"], {}, {}, {}),
    "tf.image.rgbToGrayscale": ("image.rgb_to_grayscale", ["image"], {}, {}, {}),
    "tf.image.grayscaleToRGB": ("image.grayscale_to_rgb", ["image"], {}, {}, {}),
    "tf.image.cropAndResize": ("image.crop_and_resize", ["image", "boxes", "boxInd",
                               "cropSize", "method", "extrapolationValue"], {}, {}, {}),
    "tf.image.nonMaxSuppression": ("image.non_max_suppression", [
        "boxes", "scores", "maxOutputSize", "iouThreshold", "scoreThreshold"], {}, {}, {}),
    "tf.depthToSpace": ("nn.depth_to_space", ["x", "blockSize", "dataFormat"], {}, {}, {}),
    "tf.diag": ("linalg.tensor_diag", ["x"], {}, {}, {}),
    "tf.localResponseNormalization": ("nn.local_response_normalization", [
        "x", "depthRadius", "bias", "alpha", "beta"], {}, {}, {}),
    "tf.unsortedSegmentSum": ("math.unsorted_segment_sum", ["x", "segmentIds",
                              "numSegments"], {}, {}, {}),
    "tf.sparse.sparseSegmentSum": ("sparse.segment_sum", ["data", "indices", "segmentIds"],
                                   {}, {}, {}),
    "tf.sparse.sparseSegmentMean": ("sparse.segment_mean", ["data", "indices",
                                    "segmentIds"], {}, {}, {}),
    "tf.searchSorted": ("searchsorted", ["sortedSequence", "values", "side"], {}, {}, {}),
    "tf.split": ("split", ["x", "numOrSizeSplits", "axis"], {}, {}, {}),
    "tf.unstack": ("unstack", ["x"], {"x": "value"}, {}, {}),
    "tf.reshape": ("reshape", ["x", "shape"], {}, {}, {}),
    "tf.broadcastTo": ("broadcast_to", ["x", "shape"], {}, {}, {}),
    "tf.slice": ("slice", ["x", "begin", "size"], {}, {}, {}),
    "tf.stridedSlice": ("strided_slice", ["x", "begin", "end"], {}, {}, {}),
    "tf.gatherND": ("gather_nd", ["x", "indices"], {}, {}, {}),
    "tf.scatterND": ("scatter_nd", ["indices", "updates", "shape"], {}, {}, {}),
    "tf.tensorScatterUpdate": ("tensor_scatter_nd_update", ["tensor", "indices", "updates"],
                               {}, {}, {}),
    "tf.addN": ("math.add_n", ["tensors"], {}, {}, {}),
    "tf.norm": ("norm", ["x", "ord", "axis", "keepDims"], {"keepDims": "keepdims"}, {}, {}),
    "tf.signal.frame": ("signal.frame", ["signal", "frameLength", "frameStep", "padEnd",
                        "padValue"], {}, {}, {}),
    "tf.signal.stft": ("signal.stft", ["signal", "frameLength", "frameStep", "fftLength"],
                       {}, {}, {}),
}
for _n in ("", "2d", "3d", "4d"):
    SPECIAL[f"tf.batchNorm{_n}"] = ("nn.batch_normalization", [
        "x", "mean", "variance", "offset", "scale", "varianceEpsilon"], {}, {
        "variance_epsilon": 0.001, "offset": None, "scale": None}, {})


def snake(name: str) -> str:
    """``keepDims`` -> ``keep_dims``: TensorFlow's spelling of a tfjs parameter name."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def candidates() -> list[Counterpart]:
    """Every candidate of the table (unvalidated)."""
    out: list[Counterpart] = []

    def add(api: str, target: str, args: list[str], rename: dict[str, str] | None = None,
            extra: dict[str, Any] | None = None, requires: dict[str, Any] | None = None
            ) -> None:
        # a parameter after an absent one goes by keyword: under tf's snake_case name
        names = {a: snake(a) for a in args if snake(a) != a} | dict(rename or {})
        out.append(Counterpart(api, "tf", "same-name", f"{TF}.{target}", args=tuple(args),
                               rename=tuple(names.items()),
                               extra=tuple((extra or {}).items()),
                               requires_default=tuple((requires or {}).items())))

    for op, target in UNARY.items():
        add(f"tf.{op}", target, ["x"])
    for op, target in BINARY.items():
        names = {"pow": ["base", "exp"], "bitwiseAnd": ["x", "y"]}.get(op, ["a", "b"])
        add(f"tf.{op}", target, names)
    for op, target in REDUCE.items():
        add(f"tf.{op}", f"math.{target}", ["x", "axis", "keepDims"], {"keepDims": "keepdims"})
    for api, (target, args, rename, extra, requires) in SPECIAL.items():
        add(api, target, args, rename, extra, requires)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dlfuzz.specgen.counterparts.tfjs",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="candidates file to write")
    ap.add_argument("--status", default="unvalidated candidates",
                    help="the header's status field")
    args = ap.parse_args(argv)
    cands = candidates()
    dump("tfjs", cands, args.out, header={"status": args.status})
    print(json.dumps({"candidates": len(cands), "apis": len({c.api for c in cands})}),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
