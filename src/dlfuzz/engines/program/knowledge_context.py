"""Slot-context facts per layer family, for the knowledge extractor (see ``knowledge``).

API replacement must keep a block shape-compatible with its slot, which needs facts no
signature states: which constructor params equal a size of the incoming tensor (torch's
``in_channels`` is ``input.shape[1]``; keras infers them), which input ranks a layer takes
(batch dimension included), the output rank as an expression over ``rank`` and the params,
the param that sets the output channel count, how many tensor inputs the call takes and
which params change the output structure (tuples, rank) and so must stay as in the seed.
They are stated per family by name patterns here (hand knowledge, counted as such) and
written into ``data/<lib>_context.json``, which stays hand-editable.
"""

from __future__ import annotations

import re
from typing import Any

from dlfuzz.engines.api.libspecs import LibSpec

ANY_RANK = [1, 8]

_TORCH_ACT = ("ELU", "Hardshrink", "Hardsigmoid", "Hardtanh", "Hardswish", "LeakyReLU",
              "LogSigmoid", "PReLU", "ReLU", "ReLU6", "RReLU", "SELU", "CELU", "GELU",
              "Sigmoid", "SiLU", "Mish", "Softplus", "Softshrink", "Softsign", "Tanh",
              "Tanhshrink", "Threshold", "GLU", "Softmin", "Softmax", "LogSoftmax", "Identity",
              "Dropout", "AlphaDropout", "FeatureAlphaDropout")


def _torch(name: str) -> dict[str, Any]:  # noqa: C901 - one branch per family
    m = re.match(r"^(Lazy)?Conv(Transpose)?([123])d$", name)
    if m:
        d = int(m.group(3))
        ctx: dict[str, Any] = {"ranks": [d + 1, d + 2], "out_rank": "rank",
                               "out_param": "out_channels"}
        if not m.group(1):
            ctx["match"] = {"in_channels": "1"}
        return ctx
    m = re.match(r"^(Max|Avg|LP|AdaptiveMax|AdaptiveAvg|FractionalMax)Pool([123])d$", name)
    if m:
        d = int(m.group(2))
        return {"ranks": [d + 1, d + 2], "out_rank": "rank"}
    m = re.match(r"^MaxUnpool([123])d$", name)
    if m:
        return {"ranks": [int(m.group(1)) + 1, int(m.group(1)) + 2], "out_rank": "rank",
                "arity": 2}
    m = re.match(r"^(Lazy)?(Batch|Instance)Norm([123])d$", name)
    if m:
        d = int(m.group(3))
        # BatchNorm1d: (N, C) or (N, C, L); 2d/3d batched only; InstanceNorm: with or
        # without the batch dimension
        ranks = [2, 3] if d == 1 else [d + 2, d + 2] if m.group(2) == "Batch" else [d + 1, d + 2]
        ctx = {"ranks": ranks, "out_rank": "rank"}
        if not m.group(1):
            ctx["match"] = {"num_features": "1"}
        return ctx
    m = re.match(r"^(Circular|Constant|Reflection|Replication|Zero)Pad([123])d$", name)
    if m:
        d = int(m.group(2))
        return {"ranks": [d + 1, d + 2], "out_rank": "rank"}
    m = re.match(r"^Dropout([123])d$", name)
    if m:
        d = int(m.group(1))
        return {"ranks": [d + 1, d + 2], "out_rank": "rank"}
    if name in _TORCH_ACT:
        return {"ranks": ANY_RANK, "out_rank": "rank"}
    table: dict[str, dict[str, Any]] = {
        "Softmax2d": {"ranks": [3, 4], "out_rank": "rank"},
        "LayerNorm": {"ranks": [2, 8], "out_rank": "rank", "match": {"normalized_shape": "-1"}},
        "RMSNorm": {"ranks": [2, 8], "out_rank": "rank", "match": {"normalized_shape": "-1"}},
        "GroupNorm": {"ranks": [2, 8], "out_rank": "rank", "match": {"num_channels": "1"}},
        "LocalResponseNorm": {"ranks": [3, 8], "out_rank": "rank"},
        "CrossMapLRN2d": {"ranks": [4, 4], "out_rank": "rank"},
        "Linear": {"ranks": [2, 8], "out_rank": "rank", "match": {"in_features": "-1"},
                   "out_param": "out_features"},
        "LazyLinear": {"ranks": [2, 8], "out_rank": "rank", "out_param": "out_features"},
        "Bilinear": {"ranks": [2, 8], "out_rank": "rank", "arity": 2,
                     "match": {"in1_features": "-1"}, "out_param": "out_features"},
        "Upsample": {"ranks": [3, 5], "out_rank": "rank"},
        "UpsamplingNearest2d": {"ranks": [4, 4], "out_rank": "rank"},
        "UpsamplingBilinear2d": {"ranks": [4, 4], "out_rank": "rank"},
        "PixelShuffle": {"ranks": [3, 8], "out_rank": "rank", "channels": "changed"},
        "PixelUnshuffle": {"ranks": [3, 8], "out_rank": "rank", "channels": "changed"},
        "ChannelShuffle": {"ranks": [3, 8], "out_rank": "rank"},
        "Flatten": {"ranks": [2, 8], "fixed": ["start_dim", "end_dim"],
                    "out_rank": "rank - ((end_dim % rank) - (start_dim % rank))",
                    "channels": "changed"},
        "Unflatten": {"ranks": [2, 8], "out_rank": "rank + len(unflattened_size) - 1",
                      "fixed": ["dim", "unflattened_size"]},
        "Fold": {"ranks": [3, 3], "out_rank": "4", "channels": "changed"},
        "Unfold": {"ranks": [4, 4], "out_rank": "3", "channels": "changed"},
        "Embedding": {"ranks": ANY_RANK, "out_rank": "rank + 1", "input": "indices",
                      "out_param": "embedding_dim"},
        "EmbeddingBag": {"ranks": [2, 2], "out_rank": "2", "input": "indices",
                         "out_param": "embedding_dim"},
        "MultiheadAttention": {"ranks": [3, 3], "out_rank": "rank", "arity": 3,
                               "returns": "tuple", "match": {"embed_dim": "-1"}},
        "TransformerEncoderLayer": {"ranks": [3, 3], "out_rank": "rank",
                                    "match": {"d_model": "-1"}, "fixed": ["batch_first"]},
        "TransformerDecoderLayer": {"ranks": [3, 3], "out_rank": "rank", "arity": 2,
                                    "match": {"d_model": "-1"}, "fixed": ["batch_first"]},
        "Transformer": {"ranks": [3, 3], "out_rank": "rank", "arity": 2,
                        "match": {"d_model": "-1"}, "fixed": ["batch_first"]},
        "CosineSimilarity": {"ranks": [2, 8], "out_rank": "rank - 1", "arity": 2},
        "PairwiseDistance": {"ranks": [2, 8], "out_rank": "rank - 1", "arity": 2},
    }
    if name in table:
        return table[name]
    if name in ("RNN", "LSTM", "GRU"):
        return {"ranks": [2, 3], "out_rank": "rank", "returns": "tuple",
                "match": {"input_size": "-1"}, "out_param": "hidden_size",
                "fixed": ["batch_first"]}
    if name in ("RNNCell", "LSTMCell", "GRUCell"):
        ctx = {"ranks": [1, 2], "out_rank": "rank", "match": {"input_size": "-1"},
               "out_param": "hidden_size"}
        if name == "LSTMCell":
            ctx["returns"] = "tuple"
        return ctx
    return {}


_KERAS_ACT = ("Activation", "ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax", "Identity",
              "Dropout", "AlphaDropout", "GaussianDropout", "GaussianNoise",
              "ActivityRegularization", "Masking", "BatchNormalization", "LayerNormalization",
              "GroupNormalization", "RMSNormalization", "UnitNormalization", "Normalization")
_KERAS_MERGE = ("Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply",
                "Subtract", "Attention", "AdditiveAttention", "MultiHeadAttention",
                "GroupQueryAttention")


def _keras(name: str) -> dict[str, Any]:  # noqa: C901 - one branch per family
    m = re.match(r"^(Separable|Depthwise)?Conv([123])D(Transpose)?$", name)
    if m:
        d = int(m.group(2))
        out = "depth_multiplier" if m.group(1) == "Depthwise" else "filters"
        return {"ranks": [d + 2, d + 2], "out_rank": "rank", "out_param": out}
    m = re.match(r"^ConvLSTM([123])D$", name)
    if m:
        d = int(m.group(1))
        return {"ranks": [d + 3, d + 3], "out_rank": "rank if return_sequences else rank - 1",
                "out_param": "filters", "fixed": ["return_sequences"]}
    m = re.match(r"^Global(Average|Max)Pooling([123])D$", name)
    if m:
        d = int(m.group(2))
        return {"ranks": [d + 2, d + 2], "out_rank": "rank if keepdims else 2",
                "fixed": ["keepdims"], "channels": "same"}
    m = re.match(r"^(Adaptive)?(Average|Max)Pooling([123])D$", name)
    if m:
        d = int(m.group(3))
        return {"ranks": [d + 2, d + 2], "out_rank": "rank"}
    m = re.match(r"^(Cropping|ZeroPadding|UpSampling|SpatialDropout)([123])D$", name)
    if m:
        d = int(m.group(2))
        return {"ranks": [d + 2, d + 2], "out_rank": "rank"}
    if name in _KERAS_ACT:
        return {"ranks": [2, 8], "out_rank": "rank"}
    if name in _KERAS_MERGE:
        return {"ranks": [2, 8], "out_rank": "rank", "arity": 2}
    if name in ("LSTM", "GRU", "SimpleRNN"):
        return {"ranks": [3, 3], "out_rank": "3 if return_sequences else 2",
                "out_param": "units", "fixed": ["return_sequences"]}
    table: dict[str, dict[str, Any]] = {
        "Dense": {"ranks": [2, 8], "out_rank": "rank", "out_param": "units"},
        "Embedding": {"ranks": [2, 8], "out_rank": "rank + 1", "input": "indices",
                      "out_param": "output_dim"},
        "ReversibleEmbedding": {"ranks": [2, 8], "out_rank": "rank + 1", "input": "indices",
                                "out_param": "output_dim"},
        "Flatten": {"ranks": [2, 8], "out_rank": "2", "channels": "changed"},
        "Reshape": {"ranks": [2, 8], "out_rank": "len(target_shape) + 1",
                    "fixed": ["target_shape"], "channels": "changed"},
        "Permute": {"ranks": [3, 8], "out_rank": "rank", "fixed": ["dims"],
                    "channels": "changed"},
        "RepeatVector": {"ranks": [2, 2], "out_rank": "3"},
    }
    if name in table:
        return table[name]
    if name.startswith("Random") or name in (
            "Resizing", "CenterCrop", "Rescaling", "AutoContrast", "Equalization",
            "Solarization", "AugMix", "CutMix", "MixUp", "RandAugment",
            "ContrastLimitedAdaptiveHistogramEqualization"):
        return {"ranks": [3, 4], "out_rank": "rank", "input": "images"}
    if name in ("MelSpectrogram", "STFTSpectrogram"):
        return {"ranks": [2, 3], "out_rank": None, "input": "audio"}
    return {}


def context_for(library: str, cls_name: str, spec: LibSpec) -> dict[str, Any]:
    """The context entry of one layer; ``arity`` 1, ``returns`` "tensor" and ``channels``
    "same" (no ``out_param``) are filled in as defaults so each entry reads complete."""
    ctx = dict(_torch(cls_name) if library == "torch" else _keras(cls_name))
    ctx.setdefault("arity", 1)
    ctx.setdefault("returns", "tensor")
    if "out_param" in ctx:
        ctx.setdefault("channels", "param")
    ctx.setdefault("channels", "same")
    ctx["fixed"] = [p for p in ctx.get("fixed", []) if spec.param(p) is not None]
    ctx["match"] = {k: v for k, v in ctx.get("match", {}).items() if spec.param(k) is not None}
    return ctx
