"""What a crashed worker's output says: the abort's own message and where it was raised.

A worker killed by a signal leaves its output behind (``Outcome.log_tail``). For a
maintainer the useful lines are the library's fatal message (a failed ``CHECK`` of
TensorFlow or XLA, an uncaught C++ exception, a failed C assertion) and the native
stack the logging library prints under it; the rest is start-up chatter and Python's
``faulthandler`` list of extension modules, which alone filled the 2,000 characters a
finding keeps, so reports of aborts said no more than "SIGABRT".

The **crash state** is the top ``STATE_FRAMES`` native frames under the fatal message,
logging and runtime frames left out, as ClusterFuzz keys crashes: two APIs that abort at
the same place of the same kernel (TensorFlow's ``tensor_scatter_nd_sub`` and
``tensor_scatter_nd_max`` both in ``TensorScatterOp::Compute``) are one bug, and one API
aborting at two places is two. An uncaught C++ exception prints no stack: its type and
message are the state. Without either there is no crash state, and the root cause stays
per API (``triage.root_cause``).
"""

from __future__ import annotations

import re

from dlfuzz.oracles.signature import normalize_message

STATE_FRAMES = 3
KEEP = 2000  # characters of output a finding keeps

# glog/absl: "F0000 00:00:1796194797.597083    3395 tensor_shape.cc:362] Check failed: ..."
_GLOG_FATAL = re.compile(r"^F\d{4} [\d:.]+\s+\d+ (?P<where>[\w./-]+:\d+)\] (?P<text>.+)$", re.M)
_CXX_WHAT = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'"
                       r"(?:\s*\n\s*what\(\):\s*(?P<text>.+))?")
_C_ASSERT = re.compile(r"^(?P<where>[^\n:]*): [^\n]*Assertion `(?P<text>[^`]+)' failed\.", re.M)
_STACK_HEAD = "*** Check failure stack trace: ***"
_FRAME = re.compile(r"^\s*@\s+0x[0-9a-f]+\s+(?P<symbol>.+?)\s*$")
# Frames of the logging and runtime machinery, not of the code that failed.
_NOT_STATE = re.compile(r"absl::|log_internal|LogMessage|google::|CheckOp|MakeCheckOpString|"
                        r"tsl::internal::|^std::|^__|^\(unknown\)|^0x|abort\b|raise\b",
                        re.I)
_EXTENSION_MODULES = re.compile(r"^Extension modules:.*$\n?", re.M)


def fatal_message(log: str) -> str:
    """The library's own last word before the abort, with where it was raised; "" if the
    output holds none."""
    found = list(_GLOG_FATAL.finditer(log))
    if found:
        last = found[-1]
        return f"{last['text'].strip()} ({last['where']})"
    what = list(_CXX_WHAT.finditer(log))
    if what:
        last = what[-1]
        text = (last["text"] or "").strip()
        return f"uncaught {last['type']}" + (f": {text}" if text else "")
    assertion = list(_C_ASSERT.finditer(log))
    if assertion:
        last = assertion[-1]
        return f"assertion failed: {last['text']} ({last['where'].strip()})"
    return ""


def _frame_name(symbol: str) -> str:
    """``tensorflow::TensorScatterOp<>::Compute()`` -> ``TensorScatterOp::Compute``."""
    text = symbol.replace("(anonymous namespace)::", "")
    text = re.sub(r"\{lambda\(\)#\d+\}", "lambda", text)
    text = re.sub(r"<[^<>]*>", "", re.sub(r"<[^<>]*>", "", text))  # templates, two deep
    text = re.sub(r"\(.*\)$", "", text).strip()
    parts = [p for p in text.split("::") if p]
    return "::".join(parts[-2:])


def native_frames(log: str) -> list[str]:
    """The frames of the last native stack printed under a fatal message, top first,
    logging and runtime frames left out."""
    head = log.rfind(_STACK_HEAD)
    if head < 0:
        return []
    frames: list[str] = []
    for line in log[head + len(_STACK_HEAD):].splitlines()[1:]:
        m = _FRAME.match(line)
        if m is None:
            if frames or line.strip():
                break
            continue
        symbol = m["symbol"]
        if _NOT_STATE.search(symbol):
            continue
        name = _frame_name(symbol)
        if name:
            frames.append(name)
    return frames


def crash_state(log: str) -> str:
    """The top ``STATE_FRAMES`` frames, joined by `` < `` (callee first). An uncaught C++
    exception prints no stack; its type and message, numbers and shapes left out, are
    the state then (XLA's "overflow in static extent product" reached through jax's eye,
    identity and bincount is one throw). "" otherwise."""
    frames = native_frames(log)
    if frames:
        return " < ".join(frames[:STATE_FRAMES])
    what = list(_CXX_WHAT.finditer(log))
    if what and what[-1]["text"]:
        kind = what[-1]["type"].rsplit("::", 1)[-1]  # not absl's versioned namespace
        return f"uncaught {kind}: {normalize_message(what[-1]['text'], 100)}"
    return ""


def state_slug(state: str) -> str:
    """A crash state as a root-cause key part: lower case, words joined by ``-``, frames
    by ``<`` (``tensorshapebase.dimsize<tensorscatterop.compute<...``)."""
    frames = []
    for frame in state.split(" < "):
        text = frame.lower().replace("_", "").replace("::", ".")
        frames.append(re.sub(r"[^a-z0-9.]+", "-", text).strip("-."))
    return "<".join(f for f in frames if f)[:120] or "unknown"


def kept_output(log: str) -> str:
    """``KEEP`` characters worth keeping: faulthandler's extension-module list dropped;
    where a fatal message (a failed CHECK, an uncaught exception) is printed, the output
    from it on (its stack first), else the last characters."""
    text = _EXTENSION_MODULES.sub("", log)
    found = list(_GLOG_FATAL.finditer(text)) or list(_CXX_WHAT.finditer(text))
    if found:
        return text[found[-1].start():][:KEEP]
    return text[-KEEP:]
