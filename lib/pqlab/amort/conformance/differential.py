"""Runs one differential vector (JSON) through a fast-path implementation and compares it with its expectations.

A vector (``tests/vectors/amort_differential/*.json``, format :data:`FORMAT`) is a list of steps on one
controller or one device. Each step names an ``op`` of :mod:`pqlab.amort.fastpath` with its ``args``; the
vector records what the reference model returned (``expect``: a result or a typed error) and the complete
state after the step (``state``). :func:`execute` replays the steps on any path and returns the same
structure, so a path agrees with the reference exactly when ``execute(vector, path)`` equals the recorded
steps. ``initial_state`` is the state of the freshly opened object before the first state-changing step.
A controller's state is recorded as a transition: the scalar fields in full, and under ``devices`` only the
devices whose entry changed in that step, each as ``[revoked, epoch, tag_len, policy_id, expiry, not_before,
last_seen, last_committed, last_timestamp]``; equal transitions from an equal initial state are equal states.
A verdict is ``null`` (accepted) or ``"CODE field"``. An output longer than 16 KiB is recorded as
``{"octets": n, "sha256": hex}``; a long filler input may be written ``{"fill": hex, "octets": n}`` (the pattern
repeated to n octets).

``open_controller`` and ``open_device`` name the protocol ``variant`` and ``wire_format`` (pqlab.amort.profile) —
with ``controller_id`` and an optional ``max_report_age``, the deployment the object is opened for; an ``ingest``
carries ``now``, the controller's clock (without it the batch is refused: ClockRequired). Format 3 (issue 35):
``register_epoch`` names ``not_before``, every ``ingest`` its ``now``. Bytes are hex strings; in ``ingest`` a report
may also be ``{"bytearray": hex}``, ``{"memoryview": hex}`` or ``{"object": json value}`` (something that is not an
octet string), and a whole batch may be ``{"framed": hex}`` (one buffer, :func:`pqlab.amort.fastpath.api.frame`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from pqlab.amort.deployment import Deployment
from pqlab.amort.fastpath.api import open_controller, open_device
from pqlab.amort.profile import Profile
from pqlab.errors import PqlabError

FORMAT = "pqlab-amort-differential/3"
DEVICE_VECTORS_CONTROLLER = b"CTRL-001"  # a device step names no controller; the device path never uses it
BYTE_ARGS = frozenset({"controller_id", "dev_id", "k_evid", "chain_seed", "digest", "signature"})


LONG_OUTPUT = 16 * 1024


def _arg(name: str, value: Any) -> Any:
    if name in BYTE_ARGS and isinstance(value, str):
        return bytes.fromhex(value)
    if name in BYTE_ARGS and isinstance(value, dict):
        pattern = bytes.fromhex(value["fill"])
        return (pattern * (value["octets"] // len(pattern) + 1))[:value["octets"]]
    return value


def _output(data: bytes) -> Any:
    return data.hex() if len(data) <= LONG_OUTPUT else {"octets": len(data),
                                                         "sha256": hashlib.sha256(data).hexdigest()}


def _report(item: Any) -> Any:
    if isinstance(item, str):
        return bytes.fromhex(item)
    if "bytearray" in item:
        return bytearray.fromhex(item["bytearray"])
    if "memoryview" in item:
        return memoryview(bytes.fromhex(item["memoryview"]))
    return item["object"]


def _batch(args: dict[str, Any]) -> Any:
    if "framed" in args:
        return bytes.fromhex(args["framed"])
    return [_report(item) for item in args["reports"]]


def _error(exc: PqlabError) -> dict[str, Any]:
    return {"error": {"class": type(exc).__name__, "code": exc.code, "field": exc.field}}


def _run_step(obj: Any, path: str, op: str, args: dict[str, Any]) -> tuple[Any, Any]:
    """(object after the step, result) for one step; raises what the implementation raises."""
    kwargs = {name: _arg(name, value) for name, value in args.items() if name not in ("reports", "framed", "now")}
    if op in ("open_controller", "open_device"):
        deployment = Deployment(kwargs.pop("controller_id", DEVICE_VECTORS_CONTROLLER),
                                profile=Profile(kwargs.pop("variant"), kwargs.pop("wire_format")),
                                **{k: kwargs.pop(k) for k in ("max_report_age",) if k in kwargs})
        opener = open_controller if op == "open_controller" else open_device
        return opener(path, deployment, **kwargs), None
    if obj is None:
        raise PqlabError(f"step {op!r} before the object was opened", field="steps")
    if op == "register_epoch":
        obj.register_epoch(**kwargs)
        return obj, None
    if op == "revoke":
        obj.revoke(kwargs["dev_id"])
        return obj, None
    if op == "ingest":
        verdicts = obj.ingest(_batch(args), now=args.get("now"))
        return obj, {"verdicts": [f"{v.code.value} {v.field}" if v.code else None for v in verdicts]}
    if op == "checkpoint_body":
        return obj, {"body": _output(obj.checkpoint_body())}
    if op == "commit":
        return obj, {"checkpoint": _output(obj.commit(kwargs["signature"]))}
    if op == "report":
        return obj, {"report": obj.report(**kwargs).hex()}
    if op == "chain_key":
        return obj, {"key": obj.chain_key(kwargs["j"]).hex()}
    raise PqlabError(f"unknown op {op!r}", field="steps")


_DEVICE_FIELDS = ("revoked", "epoch", "tag_len", "policy_id", "expiry", "not_before", "last_seen", "last_committed",
                  "last_timestamp")


def transition(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any] | None:
    """``after`` with its device list cut to the devices that differ from ``before`` (see the module docstring)."""
    if after is None or "devices" not in after:
        return after
    old = {d["dev_id"]: d for d in before["devices"]} if before and "devices" in before else {}
    changed = {d["dev_id"]: [d[k] for k in _DEVICE_FIELDS] for d in after["devices"] if old.get(d["dev_id"]) != d}
    return {**after, "devices": changed}


def execute(vector: dict[str, Any], path: str) -> dict[str, Any]:
    """``{"initial_state": ..., "steps": [{"expect": ..., "state": ...}, ...]}`` of ``vector`` on ``path``."""
    obj, initial, steps, before = None, None, [], None
    for step in vector["steps"]:
        opened = obj
        try:
            obj, result = _run_step(obj, path, step["op"], step.get("args", {}))
            expect: dict[str, Any] = {"result": result}
        except PqlabError as exc:
            expect = _error(exc)
        if obj is not opened:  # a (re)opened object starts from its own initial state
            before = obj.state()
            initial = initial if initial is not None else transition(None, before)
        state = obj.state() if obj is not None else None
        steps.append({"expect": expect, "state": transition(before, state)})
        before = state
    return {"initial_state": initial, "steps": steps}


def recorded(vector: dict[str, Any]) -> dict[str, Any]:
    """The expectations a vector file holds, in the shape :func:`execute` returns."""
    return {"initial_state": vector["initial_state"],
            "steps": [{"expect": s["expect"], "state": s["state"]} for s in vector["steps"]]}


def differences(vector: dict[str, Any], path: str, limit: int = 5) -> list[str]:
    """Where ``path`` departs from the vector's recorded outputs and states (empty: identical)."""
    got, want = execute(vector, path), recorded(vector)
    out = []
    if got["initial_state"] != want["initial_state"]:
        out.append("initial_state differs")
    for i, (g, w) in enumerate(zip(got["steps"], want["steps"], strict=True)):
        for key in ("expect", "state"):
            if g[key] != w[key]:
                out.append(f"step {i} ({vector['steps'][i]['op']}): {key} {_first_difference(g[key], w[key])}")
    return out[:limit]


def _first_difference(got: Any, want: Any, where: str = "") -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            if got.get(key) != want.get(key):
                return _first_difference(got.get(key), want.get(key), f"{where}.{key}")
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            if g != w:
                return _first_difference(g, w, f"{where}[{i}]")
    return f"at {where or '.'}: got {str(got)[:120]}, expected {str(want)[:120]}"
