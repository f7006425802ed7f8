"""The CaseKind registry: every kind implements every hook, kind_of finds each case's kind,
an unknown kind is a clear error, and the kinds' hooks do what triage, bug folders and the
report rely on (no DL library needed: models are IR values, nothing runs)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dlfuzz import registry
from dlfuzz.cases import (
    ApiCase,
    Call,
    CaseKind,
    Expectation,
    Finding,
    GradCase,
    GraphCase,
    Outcome,
    ProgramCase,
    Ref,
    Tensor,
    kind_of,
)
from dlfuzz.cases.kind import HOOKS, TriageTools, kind_named
from dlfuzz.errors import UsageError
from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.weights import init_model
from dlfuzz.kinds.api import ApiKind
from dlfuzz.kinds.grad import GradKind
from dlfuzz.kinds.graph import GraphKind
from dlfuzz.kinds.program import ProgramKind
from dlfuzz.triage.bugdir import BugFolder, write_bug_folder


def api_case(expect: str = "valid") -> ApiCase:
    x = Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    return ApiCase("torch.cumsum", (x,),
                   (("torch", Call("torch.cumsum", (Ref(0),), (("dim", 1),))),
                    ("numpy", Call("numpy.cumsum", (Ref(0),), (("axis", 1),)))),
                   params=(("dim", 1),), expect=expect)


def graph_case() -> GraphCase:
    rng = np.random.default_rng(0)
    b = GraphBuilder((1, 4))
    x = b.add("Dense", "x0", units=3)
    b.add("ReLU", x)
    model = init_model(b.build(), rng)
    weights = tuple((k, Tensor.from_numpy(v)) for k, v in sorted(model.weights.items()))
    x0 = Tensor.from_numpy(rng.standard_normal((1, 4)).astype(np.float32))
    return GraphCase("seed<mlp>", model.graph, weights, (x0,), ("torch", "jax"),
                     origin=(("seed", "mlp"),))


def program_case() -> ProgramCase:
    return ProgramCase("torch.nn.Conv2d", "RESULT = {'outputs': [1.0]}\n", "torch",
                       node="n3", parent="n1", seed="lenet",
                       edge=(("block", 0), ("api", "torch.nn.Conv2d")))


def grad_case() -> GradCase:
    return GradCase(api_case(), seed=3)


CASES = {"api": api_case, "grad": grad_case, "graph": graph_case, "program": program_case}
CLASSES = {"api": ApiKind, "grad": GradKind, "graph": GraphKind, "program": ProgramKind}


def a_finding(case: object, symptom: str = "crash", api: str | None = None) -> Finding:
    return Finding("crash", symptom, api or case.api, "torch", "call", "boom", "sig",
                   case.id)


# ---- the registry ------------------------------------------------------------------------

def test_hooks_list_is_every_public_method_of_the_protocol() -> None:
    public = {n for n, v in vars(CaseKind).items()
              if callable(v) and not n.startswith("_")}
    assert public == set(HOOKS)
    for hook in HOOKS:
        assert inspect.getdoc(getattr(CaseKind, hook)), f"{hook} has no docstring"
        assert "Default" in inspect.getdoc(getattr(CaseKind, hook)), \
            f"{hook}'s docstring does not document its default"


@pytest.mark.parametrize("name", registry.names("case kind"))
def test_every_registered_kind_implements_every_hook(name: str) -> None:
    kind = kind_named(name)
    assert isinstance(kind, CaseKind) and kind.name == name
    for hook in HOOKS:
        assert callable(getattr(kind, hook)), hook
    # Every built-in kind describes its cases, writes reproducers and reduces.
    for hook in ("describe", "expectation", "reproducer", "reduction", "report_section"):
        assert getattr(type(kind), hook) is not getattr(CaseKind, hook), \
            f"{name} keeps the default {hook}"


@pytest.mark.parametrize("name", list(CASES))
def test_kind_of_resolves_each_case_class(name: str) -> None:
    case = CASES[name]()
    kind = kind_of(case)
    assert type(kind) is CLASSES[name]
    assert kind_of(case) is kind, "kinds are cached"


def test_unknown_kind_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class Odd:
        kind = "tensorboard"

    with pytest.raises(UsageError, match=r"unknown case kind 'tensorboard'.*api, grad, "
                                         r"graph, program"):
        kind_of(Odd())
    with pytest.raises(UsageError, match="no 'kind' field"):
        kind_of(object())
    monkeypatch.setitem(registry.CASE_KINDS, "not-a-kind", "dlfuzz.cases.core:Tensor")
    with pytest.raises(UsageError, match="not a CaseKind subclass"):
        kind_named("not-a-kind")


def test_base_defaults() -> None:
    kind, case = CaseKind(), api_case()
    f = a_finding(case)
    assert kind.describe(case) == {"api": "torch.cumsum", "kind": ""}
    assert kind.title(f, case) == "crash in torch: torch.cumsum"
    assert kind.expectation(f, case, {}, TriageTools()) == Expectation("runs", note="boom")
    assert kind.reproducer(None, case, Expectation("runs"), "t") is None
    assert kind.reduction(case, f, TriageTools()).passes == {}
    assert kind.involved_backends(f, case, {"a": 1}) == {"a": 1}
    assert not kind.localizes_values(case) and not kind.localizes_failures(case)
    assert kind.relabel(case, "x") is case
    assert kind.numeric_details({}, ()) == ()
    assert kind.report_section(Path("."), {}) == ""


# ---- what the kinds answer ---------------------------------------------------------------

def test_boundary_bug_involves_only_the_apis_own_library() -> None:
    class B:
        def __init__(self, library: str) -> None:
            self.library = library

    case = api_case("invalid:dim")
    backends = {"torch": B("torch"), "torch-compile": B("torch"), "numpy": B("numpy")}
    kind = kind_of(case)
    assert set(kind.involved_backends(a_finding(case, "boundary"), case, backends)) == \
        {"torch", "torch-compile"}
    assert set(kind.involved_backends(a_finding(case, "crash"), case, backends)) == \
        set(backends)


def test_symptoms_give_their_expectation() -> None:
    case = api_case()
    kind = kind_of(case)
    tools = TriageTools()
    assert kind.expectation(a_finding(case, "boundary"), case, {}, tools).kind == "rejects"
    assert kind.expectation(a_finding(case, "nondeterministic"), case, {}, tools).kind == \
        "repeatable"
    for symptom in ("crash", "timeout"):  # the process failed, not the call
        assert kind.expectation(a_finding(case, symptom), case, {}, tools).kind == "survives"
    for symptom in ("status", "oom"):  # the exception is the bug (oom: a MemoryError)
        assert kind.expectation(a_finding(case, symptom), case, {}, tools).kind == "runs"
    program = program_case()
    assert kind_of(program).expectation(a_finding(program, "boundary"), program, {},
                                        tools).kind == "rejects"


def test_graph_findings_are_localized_and_relabelled() -> None:
    case = graph_case()
    kind = kind_of(case)
    assert kind.localizes_values(case) and kind.localizes_failures(case)
    assert not kind.localizes_failures(case.with_probe(True))
    assert kind.relabel(case, "Dense").api == "Dense"
    assert kind.title(a_finding(case, api="Dense"), case) == \
        "crash in torch: Dense (found from seed<mlp>)"
    assert not kind_of(api_case()).localizes_values(api_case())
    ref = np.zeros(3, dtype=np.float32)
    outcomes = {b: Outcome(b, "ok", (Tensor.from_numpy(ref + d),))
                for b, d in (("torch", 5.0), ("jax", 0.0), ("tf", 0.0))}
    details = dict(kind.numeric_details(outcomes, (ref,)))
    assert details["lemon_vote"] == "torch"


@pytest.mark.parametrize("name", list(CASES))
def test_bug_folder_and_report_section_per_kind(name: str, tmp_path: Path) -> None:
    case = CASES[name]()
    kind = kind_of(case)
    folder = BugFolder(bug_id="b1", title=kind.title(a_finding(case), case), case=case,
                       outcomes={"torch": Outcome("torch", "crash", message="<signal 11>")},
                       expectation=Expectation("runs"), backends={}, versions={},
                       meta={"details": {}, "guilty_backend": "torch", "message": "boom"})
    path, repros = write_bug_folder(tmp_path, folder)
    assert repros == {}
    assert json.loads((path / "case.json").read_text()) == json.loads(
        json.dumps(kind.describe(case)))
    meta = json.loads((path / "meta.json").read_text())
    assert meta["case_kind"] == name
    html = kind.report_section(path, meta)
    if name == "graph":
        assert (path / "graph.json").is_file() and (path / "model.npz").is_file()
        assert "Dense" in html
    elif name == "program":
        assert (path / "program.py").read_text() == case.source
        assert "RESULT = {&#x27;outputs&#x27;: [1.0]}" in html and "lenet" in html
    else:
        assert "torch.cumsum" in html and "numpy.cumsum" in html
        if name == "grad":
            assert "with respect to" in html and "x0" in html
    # Every kind writes its issue-ready report through its ``issue_case`` hook.
    issue = (path / "issue.md").read_text()
    call = folder.title.split(": ", 1)[1]
    what = f"{kind.outputs_are} of {call}" if kind.outputs_are else call  # "gradient of"
    assert issue.startswith(f"# [PyTorch] {what} crashes\n"), issue
    assert "## Expected vs actual" in issue
    assert kind.issue_case(case, "torch") in issue
    assert {"graph": "Model of 2 layers (Dense, ReLU)", "program": "A torch program",
            "api": "`torch.cumsum(x0, dim=1)`",
            "grad": "`torch.cumsum(x0, dim=1)`"}[name] in issue


def test_an_api_title_names_the_guilty_librarys_own_call() -> None:
    case = api_case()  # the torch API, with a numpy counterpart
    numpy_bug = Finding("differential", "numeric", case.api, "numpy", "call", "m", "s",
                        case.id)
    assert ApiKind().title(numpy_bug, case) == "numeric in numpy: numpy.cumsum"
    assert ApiKind().title(a_finding(case), case) == "crash in torch: torch.cumsum"
    assert "numpy.cumsum(x0, axis=1)" in ApiKind().issue_case(case, "numpy")


@pytest.mark.parametrize("name", ["graph", "grad"])
def test_a_jax_reproducer_that_must_run_waits_for_the_computation(name: str) -> None:
    """JAX dispatches asynchronously: a model or backward pass that hangs or fails at
    completion returns at once from the call. A reproducer whose bug is that the code
    must run waits for its result inside the ``try`` (``Backend.repro_wait``), as the
    API reproducers do; a torch one has nothing to wait for."""
    from dlfuzz.backends.jax_backend import JaxBackend
    from dlfuzz.backends.torch_backend import TorchBackend

    if name == "graph":
        case: Any = graph_case()
    else:
        x = Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
        case = GradCase(ApiCase("jax.numpy.cumsum", (x,), (
            ("jax", Call("jax.numpy.cumsum", (Ref(0),), (("axis", 1),))),
            ("torch", Call("torch.cumsum", (Ref(0),), (("dim", 1),))))), seed=3)
    kind = kind_of(case)
    # a crash's reproducer (a model's; gradients keep "runs") waits the same way
    for expects in ("runs", "survives") if name == "graph" else ("runs",):
        script = kind.reproducer(JaxBackend(), case, Expectation(expects), "t").splitlines()
        start = next(i for i, line in enumerate(script) if line.startswith("    result = "))
        assert script[start - 1] == "try:", script[start - 1:start + 3]
        assert script[start + 1].startswith("    jax.block_until_ready(result)"), \
            script[start:start + 3]
        assert script[start + 2].startswith("except Exception")
    torch_script = kind.reproducer(TorchBackend(), case, Expectation("runs"), "t")
    assert "block_until_ready" not in torch_script
