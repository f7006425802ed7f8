"""The backend protocol: one way to compute (a library plus an execution mode).

A backend object lives inside its worker process. Its module must not import its library
at module level: the host loads backend classes too (for names, reproducers), and
``import dlfuzz`` never pulls a deep learning library in. ``setup()`` imports it.

The generic ``run`` below does the work common to every library: decode tensors, resolve
the target function, substitute arguments, call, flatten outputs back to numpy. A backend
supplies the conversions (``to_native``/``to_numpy``/``native_dtype``) and, for compiled
modes, ``compile`` which turns a call into a cached compiled callable over tensor inputs.
"""

from __future__ import annotations

import sys
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from dlfuzz.cases import ApiCase, Call, DType, GraphCase, Ref
from dlfuzz.libraries import ResolveError, resolve

# Central finite differences step along the direction, times max(1, |largest input|):
# near the cube root of float64's epsilon, where truncation and rounding errors meet.
FD_STEP = 2.0 ** -17


class StageError(Exception):
    """Wraps a library exception with the stage it happened in (prepare/compile/call/fetch)."""

    def __init__(self, stage: str) -> None:
        super().__init__(stage)
        self.stage = stage


class NativeCrash(Exception):
    """A crash inside a native child of the worker (a Node process, a browser, a wasm trap).

    The worker itself survives, so no signal reaches the host: this exception carries the
    status instead (``classify_exception`` honours it), and the backend restarts the child.
    """

    status = "crash"


def load_backend_class(target: str) -> type[Backend]:
    """The class a ``package.module:Class`` string names (``dlfuzz.libraries.resolve``)."""
    cls: type[Backend] = resolve(target)
    return cls


class Backend:
    """Base class; subclasses set ``name``, ``library`` and the conversions."""

    name: ClassVar[str] = ""
    library: ClassVar[str] = ""  # backends of one library share the calls of a case
    compiled: ClassVar[bool] = False  # compile mode: caches compiled callables
    case_timeout_factor: ClassVar[float] = 1.0  # compiling backends get more time per case
    # Pays a compilation for every new signature (shapes, dtypes, static arguments): JAX
    # even op by op, XLA, Inductor. Such a backend bounds a campaign on its own, so it
    # gets more than one worker process on a machine with cores to spare
    # (``CampaignSettings.replicas``).
    compiles_per_signature: ClassVar[bool] = False
    # Workers may be forked from a process that has run ``setup`` and nothing else (the
    # fork server, ``executor.zygote``): milliseconds per restart instead of an import.
    # Only for a library whose import and setup start no thread and no helper process
    # (the fork server checks the threads too, and spawns where it finds more than one).
    forkable: ClassVar[bool] = False
    repro_import: ClassVar[str] = ""  # the import line(s) a reproducer starts with
    # A statement that waits for ``result`` where the library dispatches asynchronously
    # (JAX): a reproducer that must see a call crash or hang would otherwise exit before
    # the computation ran ("" where a call returns when it has computed).
    repro_wait: ClassVar[str] = ""
    lowering: ClassVar[str] = ""  # name in dlfuzz.ir.lower.LOWERINGS; "" = runs no models
    case_kinds: ClassVar[tuple[str, ...]] = ("api",)  # ApiCase, and "graph" with a lowering
    model_cache_size: ClassVar[int] = 64  # built (or compiled) models kept per worker
    # Ray resources a node must have to host this backend's workers (``--executor ray``):
    # a heterogeneous cluster advertises them per node (``ray start --resources``), so a
    # TF.js worker lands only where Node is installed, a CUDA one only where a ``GPU`` is.
    # Amounts are what one worker takes; tiny ones let a node host many workers.
    ray_resources: ClassVar[tuple[tuple[str, float], ...]] = ()

    def __init__(self) -> None:
        self._functions: dict[str, Callable[..., Any]] = {}
        self._compiled: dict[Any, Callable[..., Any]] = {}
        # Built (or compiled) models, and the modules of training-form sources: LRU.
        self._models: OrderedDict[Any, Any] = OrderedDict()
        self._sources: dict[tuple[str, Any], str] = {}  # (graph digest, probe or "train")

    # ---- set-up (worker side) ---------------------------------------------------------
    def setup(self) -> None:
        """Import the library. Runs once per worker."""

    def version(self) -> str:
        raise NotImplementedError

    # ---- conversions (worker side) ----------------------------------------------------
    def to_native(self, array: np.ndarray) -> Any:
        raise NotImplementedError

    def to_numpy(self, value: Any) -> np.ndarray:
        raise NotImplementedError

    def native_dtype(self, name: str) -> Any:
        raise NotImplementedError

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, np.ndarray)

    # ---- running ----------------------------------------------------------------------
    def resolve(self, target: str) -> Callable[..., Any]:
        """``torch.linalg.norm`` -> the function object, looked up at call time.

        ``dlfuzz.libraries.resolve`` does it: uncached on purpose (a preloaded patch
        replacing the attribute must be seen, as a user program would see it), and one
        ``sys.modules`` lookup when the module is imported (a third of a microsecond).
        """
        fn: Callable[..., Any] = resolve(target)
        return fn

    def run(self, case: Any) -> tuple[np.ndarray, ...]:
        """Run one case: ``run_<kind>`` for its case kind (``run_api``, ``run_graph``,
        ``run_program``), so a new kind of case needs a method, not a branch here."""
        runner = getattr(self, f"run_{case.kind}", None)
        if runner is None:
            raise StageError("prepare") from NotImplementedError(
                f"backend {self.name} runs no {case.kind!r} cases")
        result: tuple[np.ndarray, ...] = runner(case)
        return result

    def run_api(self, case: ApiCase) -> tuple[np.ndarray, ...]:
        call = case.call_for(self.library)
        if call is None:
            raise StageError("prepare") from NotImplementedError(
                f"case {case.api} has no call for library {self.library}")
        try:
            natives = [self.to_native(t.to_numpy()) for t in case.tensors]
            fn = self.resolve(call.target)
        except ResolveError as exc:  # the outcome shows the library's own Import/AttributeError
            raise StageError("prepare") from (exc.__cause__ or exc)
        except Exception as exc:
            raise StageError("prepare") from exc
        if self.compiled:
            return self._run_compiled(call, fn, natives)
        args, kwargs = self.substitute(call, natives)
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:
            raise StageError("call") from exc
        return self._fetch(result)

    def _run_compiled(self, call: Call, fn: Callable[..., Any], natives: list[Any]
                      ) -> tuple[np.ndarray, ...]:
        used = sorted(_refs_in((call.args, call.kwargs)))
        key = (call.static_key(), id(fn)) + tuple(self.spec_of(natives[i]) for i in used)
        compiled = self._compiled.get(key)
        stage = "call"
        if compiled is None:
            stage = "compile"
            try:
                compiled = self.compile(call, fn, [natives[i] for i in used], used)
            except Exception as exc:
                raise StageError("compile") from exc
            self._compiled[key] = compiled
        try:
            result = compiled(*[natives[i] for i in used])
        except Exception as exc:
            raise StageError(stage) from exc
        return self._fetch(result)

    # ---- gradients (GradCase) ---------------------------------------------------------
    def run_grad(self, case: Any) -> tuple[np.ndarray, ...]:
        """The reverse-mode gradient of an API call and a float64 check of it.

        Outputs: per differentiated input (``case.wrt``), the gradient of the cotangent-
        weighted sum of the call's floating outputs, in the input's dtype, computed in
        this backend's mode (a compile mode compiles the backward too); then one float64
        vector, ``cases.grad.CHECKS``: the same gradient at the input upcast to float64,
        projected on a random direction ``v`` (reverse), forward mode along ``v``
        (forward, NaN where this backend has none), and central finite differences of the
        library's own eager forward pass along ``v`` at two steps, the one-sided slope
        gap that marks a kink, and the magnitudes the oracle scales its tolerance with.
        A backend without "grad" in ``case_kinds`` raises here (stage ``prepare``); one
        with it implements ``floating``, ``vjp`` and ``jvp``.
        """
        call = case.call_for(self.library)
        if call is None or "grad" not in self.case_kinds:
            raise StageError("prepare") from NotImplementedError(
                f"backend {self.name} runs no gradient cases of {case.api}")
        wrt = case.wrt
        if not wrt:
            raise StageError("prepare") from ValueError("no floating input to differentiate")
        try:
            fn = self.resolve(call.target)
            arrays = [t.to_numpy() for t in case.tensors]
        except ResolveError as exc:
            raise StageError("prepare") from (exc.__cause__ or exc)
        except Exception as exc:
            raise StageError("prepare") from exc
        self.prepare_api()
        g = self._differentiable(call, fn, wrt, frozenset(case.still))
        key = (call.static_key(), id(fn), wrt)
        grads, _, _, checks = self._backward(g, arrays, wrt, case.seed, case.structure_of, key)
        return (*grads, checks)

    def _backward(self, g: Callable[[list[Any], list[Any]], list[Any]],
                  arrays: list[np.ndarray], wrt: tuple[int, ...], seed: int,
                  structure_of: Callable[[int], str], key: Any,
                  g64: Callable[[list[Any], list[Any]], list[Any]] | None = None
                  ) -> tuple[list[np.ndarray], list[Any], list[Any], np.ndarray]:
        """The backward pass of ``g`` at ``arrays`` (``wrt``: the differentiated ones) and
        its float64 check (``cases.grad.CHECKS``), shared by API calls and training steps.
        ``g64`` computes the same in float64 where ``g`` is bound to the case's dtype (a
        model's program); the float64 check runs it at the inputs upcast.

        Returns the gradients in the inputs' dtypes, computed in this backend's mode; the
        floating outputs and cotangents of that run (library tensors); the check vector.
        """
        from dlfuzz.cases.grad import CHECKS, cotangent, direction

        def gradient(g: Callable[[list[Any], list[Any]], list[Any]], inputs: list[np.ndarray],
                     compiled: bool, key: Any) -> tuple[list[np.ndarray], list[Any], list[Any]]:
            natives = [self.to_native(a) for a in inputs]
            primals = [natives[i] for i in wrt]
            try:
                outs = g(primals, natives)
                arrays_out = [np.asarray(self.to_numpy(o)) for o in outs]
            except Exception as exc:
                raise StageError("call") from exc
            if not outs:
                raise StageError("prepare") from ValueError(
                    "no floating output to differentiate")
            cots = [self.to_native(cotangent(seed, k, o.shape).astype(o.dtype))
                    for k, o in enumerate(arrays_out)]
            specs = tuple(self.spec_of(n) for n in natives)
            try:
                grads = self.vjp(g, primals, natives, cots, (key, specs) if compiled else None)
                result = [np.asarray(self.to_numpy(x)) for x in grads]
            except Exception as exc:
                raise StageError("backward") from exc
            return result, outs, cots

        grads, outs, cots = gradient(g, arrays, self.compiled, key)
        wide = [a.astype(np.float64) if i in wrt else a for i, a in enumerate(arrays)]
        if g64 is not None:
            g, key = g64, (key, "float64")
        grads64, outs64, cots64_native = gradient(g, wide, self.compiled, key)
        outs64 = [np.asarray(self.to_numpy(o)) for o in outs64]
        cots64 = [np.asarray(self.to_numpy(c)) for c in cots64_native]
        vs = [direction(seed, i, arrays[i].shape, structure_of(i)) for i in wrt]
        natives64 = [self.to_native(a) for a in wide]
        # A gradient of the wrong shape (its own finding) is read in the input's shape
        # when the sizes agree, so its values are still checked.
        shaped = [gr.astype(np.float64).reshape(v.shape) if gr.size == v.size
                  else np.full(v.shape, np.nan) for gr, v in zip(grads64, vs, strict=True)]
        reverse = sum(float(np.sum(gr * v)) for gr, v in zip(shaped, vs, strict=True))
        scale = sum(float(np.sum(np.abs(gr * v))) for gr, v in zip(shaped, vs, strict=True))
        forward = float("nan")
        if not self.compiled:
            try:
                tangents = self.jvp(g, [natives64[i] for i in wrt], natives64,
                                    [self.to_native(v) for v in vs])
                forward = sum(float(np.sum(np.asarray(self.to_numpy(t), np.float64) * c))
                              for t, c in zip(tangents, cots64, strict=True))
            except Exception:  # noqa: BLE001 - forward mode missing for an op: no check
                forward = float("nan")
        biggest = max((float(np.max(np.abs(wide[i]))) for i in wrt if wide[i].size),
                      default=1.0)
        step = FD_STEP * max(1.0, biggest)

        def loss(t: float) -> float:
            moved = [self.to_native(wide[i] + t * v) for i, v in zip(wrt, vs, strict=True)]
            try:
                outs = g(moved, natives64)
                return sum(float(np.sum(np.asarray(self.to_numpy(o), np.float64) * c))
                           for o, c in zip(outs, cots64, strict=True))
            except Exception:  # noqa: BLE001 - the input moved off the domain: no check
                return float("nan")

        with np.errstate(all="ignore"):
            at = {t: loss(t * step) for t in (-2, -1, 1, 2)}
            value = sum(float(np.sum(np.abs(o.astype(np.float64) * c)))
                        for o, c in zip(outs64, cots64, strict=True))
            centre = sum(float(np.sum(o.astype(np.float64) * c))
                         for o, c in zip(outs64, cots64, strict=True))
            fd = (at[1] - at[-1]) / (2 * step)
            fd_wide = (at[2] - at[-2]) / (4 * step)
            kink = abs(at[1] - 2 * centre + at[-1]) / step
            flat = float(at[1] == centre == at[-1])
        checks = dict(reverse=reverse, forward=forward, fd=fd, fd_wide=fd_wide, kink=kink,
                      scale=scale, value=value, flat=flat, step=step)
        return grads, outs, cots, np.array([checks[name] for name in CHECKS], dtype=np.float64)

    # ---- training steps (TrainCase) ----------------------------------------------------
    def run_train(self, case: Any) -> tuple[np.ndarray, ...]:
        """One SGD step of a model (``cases/train.py``): the gradients of the weighted
        outputs for the trained weights and floating inputs, the loss, the weights after
        the step, and the float64 check of ``_backward``.

        The model is lowered in training form and built inside the differentiated
        function from the weights it is given, so the library differentiates its own
        layers; a compile mode compiles the backward (``vjp``). The loss and the update
        are the library's own arithmetic on the results (the loss of the eager forward
        pass: a compile mode's forward values are its model case's outputs).
        """
        from dlfuzz.cases.train import LEARNING_RATE

        if "train" not in self.case_kinds or not self.lowering:
            raise StageError("prepare") from NotImplementedError(
                f"backend {self.name} runs no training steps")
        names = [k for k, _ in case.weights]
        trained = set(case.trained)
        nw = len(names)
        arrays = [t.to_numpy() for _, t in case.weights] + [t.to_numpy() for t in case.tensors]
        wrt = tuple(i for i, k in enumerate(names) if k in trained) + tuple(
            nw + i for i in case.wrt)
        if not wrt:
            raise StageError("prepare") from ValueError("nothing to train")
        g = self._trainable(case.graph, names, wrt, case.base.model_key)
        # The float64 check runs the float64 program of the same model.
        g64 = self._trainable(case.graph.with_dtype("float64"), names, wrt,
                              case.base.model_key)
        tkey = (case.graph.digest(), "train")
        try:
            grads, outs, cots, checks = self._backward(g, arrays, wrt, case.seed,
                                                       lambda i: "", tkey, g64)
        finally:
            for dtype in (case.graph.dtype, "float64"):  # registered by ``_builder``
                sys.modules.pop(f"dlfuzz_train_{case.base.model_key}_{dtype}", None)
            # A model's step runs once: its compiled backward would only pile up. Its
            # keys are ("grad", (tkey or (tkey, "float64"), input specs)).
            for k in [k for k in self._compiled if k[0] == "grad"
                      and k[1][0] in (tkey, (tkey, "float64"))]:
                del self._compiled[k]
        try:
            loss = self.to_numpy(sum(self.total(o * c) for o, c in zip(outs, cots,
                                                                          strict=True)))
            stepped = [self.to_numpy(self.to_native(arrays[i]) - LEARNING_RATE
                                     * self.to_native(gr.reshape(arrays[i].shape)))
                       for i, gr in zip(wrt, grads, strict=True) if i < nw
                       and gr.size == arrays[i].size]
        except Exception as exc:
            raise StageError("fetch") from exc
        return (*grads, np.asarray(loss), *[np.asarray(s) for s in stepped], checks)

    def _trainable(self, graph: Any, names: list[str], wrt: tuple[int, ...], name: str
                   ) -> Callable[[list[Any], list[Any]], list[Any]]:
        """``g(primals, natives)`` of a model's training form: ``natives`` are the weights
        (in ``names`` order) then the inputs, the ``wrt`` ones replaced by ``primals``;
        the model built from them, its floating outputs as a list."""
        build = self._builder(self._emitted(graph, train=True), f"{name}_{graph.dtype}")
        nw = len(names)

        def g(primals: list[Any], natives: list[Any]) -> list[Any]:
            full = list(natives)
            for i, p in zip(wrt, primals, strict=True):
                full[i] = p
            model = build(dict(zip(names, full[:nw], strict=True)))
            return [o for o in self._natives(model(*full[nw:])) if self.floating(o)]
        return g

    def _builder(self, source: str, name: str) -> Callable[..., Any]:
        """The ``build`` function of an emitted training-form source (executed once, kept
        with the built models)."""
        key = ("builder", source)
        module = self._models.get(key)
        if not isinstance(module, types.ModuleType):
            module = types.ModuleType(f"dlfuzz_train_{name}")
            try:
                exec(compile(source, f"<dlfuzz train {name}>", "exec"),  # noqa: S102
                     module.__dict__)
            except Exception as exc:
                raise StageError("dlfuzz") from exc
            self._models[key] = module
            while len(self._models) > self.model_cache_size:
                self._models.popitem(last=False)
        # A compiler tracing ``build`` looks its module up by name (Dynamo does).
        sys.modules[module.__name__] = module
        build: Callable[..., Any] = module.build
        return build

    def total(self, native: Any) -> Any:
        """The sum of a library tensor's elements, as a library scalar (a loss)."""
        return native.sum()

    def _differentiable(self, call: Call, fn: Callable[..., Any], wrt: tuple[int, ...],
                        still: frozenset[int]) -> Callable[[list[Any], list[Any]], list[Any]]:
        """``g(primals, natives)``: the call with the differentiated inputs replaced by
        ``primals``, its floating outputs but the ``still`` ones as a list (what the
        cotangents weigh)."""
        def g(primals: list[Any], natives: list[Any]) -> list[Any]:
            full = list(natives)
            for i, p in zip(wrt, primals, strict=True):
                full[i] = p
            args, kwargs = self.substitute(call, full)
            outs = self._natives(fn(*args, **kwargs))
            return [o for k, o in enumerate(outs) if k not in still and self.floating(o)]
        return g

    def _natives(self, value: Any) -> list[Any]:
        """The library tensors of a call's result, nested tuples and lists flattened."""
        if isinstance(value, tuple | list):
            return [x for item in value for x in self._natives(item)]
        return [value] if self.is_tensor(value) else []

    def compiled_once(self, key: Any, build: Callable[[], Callable[..., Any]]
                      ) -> Callable[..., Any]:
        """The compiled callable cached under ``key``, built by ``build`` the first time
        (a compile mode's backward, once per call and signature)."""
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = build()
        return compiled

    def prepare_api(self) -> None:
        """Process-wide switches API calls run under (TF's NumPy behaviour)."""

    def floating(self, native: Any) -> bool:
        """Whether a library tensor is real floating point (what has a gradient)."""
        raise NotImplementedError

    def vjp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], cotangents: list[Any], key: Any) -> list[Any]:
        """The library's reverse mode: ``J^T c`` of ``g`` at ``primals``, one gradient per
        primal (zeros where an output does not depend on it). ``key`` is None in eager
        mode; in a compile mode it names the compiled backward to cache and reuse."""
        raise NotImplementedError

    def jvp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], tangents: list[Any]) -> list[Any]:
        """The library's forward mode: ``J v`` of ``g`` at ``primals``, per output."""
        raise NotImplementedError

    # ---- programs (ProgramCase, MoCo) --------------------------------------------------
    def run_program(self, case: Any) -> tuple[np.ndarray, ...]:
        """Execute a whole program in a fresh module namespace; its RESULT as outputs.

        The program imports the library itself (already imported here, so that is a
        dictionary lookup) and runs under a module name that is not ``__main__``, so
        its script part stays quiet. Outputs: the eval predictions, the training loss,
        the eval loss, the activation shapes recorded at each slot (flat int64:
        slot, rank, dims...) and this worker's resident memory after the run (MB), which
        the performance oracle follows across programs. A program that does not compile
        or sets no RESULT is dlfuzz's own bug (stage ``dlfuzz``).
        """
        if "program" not in self.case_kinds:
            raise StageError("prepare") from NotImplementedError(
                f"backend {self.name} does not run programs")
        try:
            code = compile(case.source, f"program_{case.node or case.id}.py", "exec")
        except SyntaxError as exc:
            raise StageError("dlfuzz") from exc
        module = types.ModuleType(f"dlfuzz_program_{case.id}")
        self.program_reset()
        sys.modules[module.__name__] = module  # classes it defines can be looked up
        try:
            exec(code, module.__dict__)  # noqa: S102 - running generated programs is the job
        except Exception as exc:
            raise StageError("call") from exc
        finally:
            sys.modules.pop(module.__name__, None)
        result = module.__dict__.get("RESULT")
        if not isinstance(result, dict) or "outputs" not in result:
            raise StageError("dlfuzz") from RuntimeError("the program set no RESULT dict")
        try:
            outputs = np.asarray(result["outputs"], dtype=np.float32)
            flat: list[int] = []
            for slot, shape in sorted(dict(module.__dict__.get("SLOT_SHAPES", {})).items()):
                dims = [int(d) if d is not None else -1 for d in shape]
                flat += [int(slot), len(dims), *dims]
            return (outputs, np.asarray(float(result["loss"]), dtype=np.float64),
                    np.asarray(float(result["eval_loss"]), dtype=np.float64),
                    np.asarray(flat, dtype=np.int64), np.asarray(_rss_mb(), dtype=np.float64))
        except Exception as exc:
            raise StageError("fetch") from exc

    def program_reset(self) -> None:
        """Library state to clear before each program (what users do between models)."""

    # ---- models (GraphCase) ------------------------------------------------------------
    def run_graph(self, case: GraphCase) -> tuple[np.ndarray, ...]:
        """Build (once per model, LRU-cached) and run a model on one input set.

        The model is the lowering's source executed here; in a compile mode the built
        callable is compiled by the library once and reused for every input set, so the
        library's own compilation cache sees the shapes and dtypes that DLJSFuzzer's
        tensor mutations vary. A failure to emit or build the source is dlfuzz's own
        bug (stage ``dlfuzz``), never a finding against the library.
        """
        if not self.lowering:
            raise StageError("prepare") from NotImplementedError(
                f"backend {self.name} does not run models")
        source = self._source(case)
        # Keyed by the code and the weights, not the input shapes: a tensor mutation that
        # only changes shapes reaches the same compiled callable (the library's cache).
        key = (source, tuple((k, t.digest()) for k, t in case.weights))
        model = self._models.get(key)
        stage = "call"
        if model is None:
            stage = "compile" if self.compiled else "call"
            model = self._build_model(case, source)
            self._models[key] = model
            while len(self._models) > self.model_cache_size:
                self._models.popitem(last=False)
        else:
            self._models.move_to_end(key)
        try:
            natives = [self.model_input(t.to_numpy()) for t in case.tensors]
        except Exception as exc:
            raise StageError("prepare") from exc
        try:
            result = model(*natives)
        except Exception as exc:
            raise StageError(stage) from exc
        return self._fetch(result)

    def _source(self, case: GraphCase) -> str:
        return self._emitted(case.graph, probe=case.probe)

    def _emitted(self, graph: Any, probe: bool = False, train: bool = False) -> str:
        """The lowering's source of ``graph`` (cached, a bounded number kept); a failure
        to emit is dlfuzz's own bug (stage ``dlfuzz``)."""
        from dlfuzz.ir.lower import emit

        gkey = (graph.digest(), "train" if train else probe)
        source = self._sources.get(gkey)
        if source is None:
            try:
                source = emit(self.lowering, graph, probe=probe, train=train)
            except Exception as exc:
                raise StageError("dlfuzz") from exc
            self._sources[gkey] = source
            if len(self._sources) > 4 * self.model_cache_size:
                self._sources.pop(next(iter(self._sources)))
        return source

    def _build_model(self, case: GraphCase, source: str) -> Callable[..., Any]:
        from dlfuzz.ir.lower import build

        weights = {k: t.to_numpy() for k, t in case.weights}
        try:
            model = build(source, weights, name=case.model_key, **self.build_options())
        except Exception as exc:
            raise StageError("build") from exc
        if not self.compiled:
            return model
        try:
            return self.compile_model(model)
        except Exception as exc:
            raise StageError("compile") from exc

    def build_options(self) -> dict[str, Any]:
        """Keyword options for the lowering's ``build`` (ONNX Runtime: optimize)."""
        return {}

    def model_input(self, array: np.ndarray) -> Any:
        return self.to_native(array)

    def compile_model(self, model: Callable[..., Any]) -> Callable[..., Any]:
        """The compile mode's wrapper around a built model (jit, torch.compile, XLA)."""
        raise NotImplementedError

    def spec_of(self, native: Any) -> Any:
        """What a compiled callable is specialized on besides the static arguments."""
        return (tuple(native.shape), str(native.dtype))

    def compile(self, call: Call, fn: Callable[..., Any], examples: list[Any],
                used: list[int]) -> Callable[..., Any]:
        """Compiled callable over the used tensors, static arguments closed over."""
        raise NotImplementedError

    def bind(self, call: Call, fn: Callable[..., Any], used: list[int]) -> Callable[..., Any]:
        """A plain function of the used tensors only, for a compiler to trace."""
        def bound(*tensors: Any) -> Any:
            natives: dict[int, Any] = dict(zip(used, tensors, strict=True))
            args, kwargs = self.substitute(call, natives)
            return fn(*args, **kwargs)
        return bound

    def substitute(self, call: Call, natives: Any) -> tuple[list[Any], dict[str, Any]]:
        def sub(value: Any) -> Any:
            if isinstance(value, Ref):
                return natives[value.index]
            if isinstance(value, DType):
                return self.native_dtype(value.name)
            if isinstance(value, tuple):
                return tuple(sub(v) for v in value)
            if isinstance(value, list):
                return [sub(v) for v in value]
            return value
        return [sub(a) for a in call.args], {k: sub(v) for k, v in call.kwargs}

    def _fetch(self, result: Any) -> tuple[np.ndarray, ...]:
        try:
            return tuple(self._flatten(result))
        except Exception as exc:
            raise StageError("fetch") from exc

    def _flatten(self, value: Any) -> list[np.ndarray]:
        if isinstance(value, tuple | list):
            out: list[np.ndarray] = []
            for item in value:
                out.extend(self._flatten(item))
            return out
        if value is None:
            return []
        if self.is_tensor(value):
            return [np.asarray(self.to_numpy(value))]
        return [np.asarray(value)]

    # ---- reproducers (host side: string building only, no library import) -------------
    def repro_setup(self) -> str:
        """Lines after the import (configuration the worker also applies)."""
        return ""

    def repro_tensor(self, values: str, dtype: str, shape: tuple[int, ...]) -> str:
        """Expression building a tensor from a Python literal of ``values``."""
        raise NotImplementedError

    def repro_dtype(self, name: str) -> str:
        raise NotImplementedError

    def repro_call(self, call_expr: str, tensor_names: list[str]) -> str:
        """Wrap the plain call expression for a compile mode (identity in eager mode)."""
        return call_expr

    def repro_model_input(self, name: str) -> str:
        """Expression turning the numpy array ``name`` into a model input."""
        return name

    def repro_compile_model(self, name: str) -> str:
        """A line wrapping the built model ``name`` in the compile mode ("" if eager)."""
        return ""

    def repro_helpers(self) -> str:
        """Source of ``_as_list(t)``: an output as nested lists (bfloat16 as float64)."""
        return ("def _as_list(t):\n"
                "    a = np.asarray(t)\n"
                "    return (a.astype(np.float64) if a.dtype.name == 'bfloat16' else a).tolist()\n")

    def repro_gradient(self) -> str:
        """Source of a gradient reproducer's library helpers (``kinds/grad.py``):
        ``_floating(t)``, ``_numpy(t)``, ``_tensor(array)``, ``_vjp(f, primals, cots)``
        (this mode's reverse mode, gradients as library tensors) and ``_jvp(f, primals,
        tangents)`` (forward mode, per output). "" for a backend without autodiff."""
        return ""

    def repro_to_list(self, expr: str) -> str:
        """Expression turning one output tensor into ``(nested list, dtype name)``."""
        raise NotImplementedError


def _rss_mb() -> float:
    """Resident memory of this process now (MB): unlike the peak, it can go down."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE") / (1024.0 * 1024.0)
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _refs_in(value: Any) -> set[int]:
    if isinstance(value, Ref):
        return {value.index}
    if isinstance(value, tuple | list):
        found: set[int] = set()
        for v in value:
            found |= _refs_in(v)
        return found
    return set()
