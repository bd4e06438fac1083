"""Table I's symmetric operations timed in a C loop over libcrypto (``pqlab.experiments._symmetric``), with their
Python twin.

The paper times HMAC-SHA-256 of the 83-octet record and the Merkle leaf / interior hash in C; so does this module.
Each sample is the mean of ``batch`` back-to-back calls inside a C loop; the empty operation (an indirect call to
a function that does nothing, through the same loop) is timed in the same rounds and is the loop's own cost, which
:func:`measure` subtracts. Operations are interleaved sample by sample, so drift on a shared machine affects all of
them alike. :func:`python_twin` computes what each operation computes with :mod:`hmac` / :mod:`hashlib`; the
tests check that the C outputs equal it byte for byte.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from pqlab.errors import SymmetricTimingError
from pqlab.native_override import extension_status, require_extension

EMPTY = "empty"
HMAC = "hmac_sha256"                  # key applied on every call: the whole HMAC computation
HMAC_KEYED = "hmac_sha256_keyed"      # keyed once, restarted per record: the controller fast path's MAC
HMAC_ONESHOT = "hmac_sha256_oneshot"  # the library's one-shot call (EVP_Q_mac, algorithm fetched per call)
LEAF_INTERIOR = "merkle_leaf_interior"
OPERATIONS = (EMPTY, HMAC, HMAC_KEYED, HMAC_ONESHOT, LEAF_INTERIOR)  # the C enum's order (sym_timing.h)
LABELS = {
    HMAC: "HMAC-SHA-256 (key applied per call)",
    HMAC_KEYED: "HMAC-SHA-256 (keyed context restarted per record, as the controller fast path)",
    HMAC_ONESHOT: "HMAC-SHA-256 (EVP_Q_mac one-shot call)",
    LEAF_INTERIOR: "Merkle leaf and interior hash",
}


def load() -> ModuleType:
    """The extension; SymmetricTimingError naming why when it is not built."""
    # a sanitized build: PQLAB_SYMMETRIC_LIB (pqlab.experiments)
    return require_extension("pqlab.experiments._symmetric", SymmetricTimingError,
                             "the C timing loops are not available", "pqlab.experiments._symmetric")


def status() -> tuple[bool, str]:
    """(available, what): the libcrypto the loops run against, or why they are unavailable."""
    return extension_status(load, SymmetricTimingError, _operations_match)


def _operations_match(module: ModuleType) -> tuple[bool, str]:
    if tuple(module.op_names()) != OPERATIONS:
        return False, f"pqlab.experiments._symmetric has operations {module.op_names()}, expected {OPERATIONS}"
    return True, module.openssl_version()


@dataclass(frozen=True)
class Inputs:
    """One operation's inputs: the HMAC key, the record (MAC'd, and the leaf's data), the interior hash's sibling."""

    key: bytes
    message: bytes
    sibling: bytes


def python_twin(op: str, inputs: Inputs) -> bytes:
    """What the C operation ``op`` computes, with hmac / hashlib (RFC 2104, RFC 6962 prefixes 0x00 / 0x01)."""
    if op in (HMAC, HMAC_KEYED, HMAC_ONESHOT):
        return hmac.digest(inputs.key, inputs.message, "sha256")
    if op == LEAF_INTERIOR:
        leaf = hashlib.sha256(b"\x00" + inputs.message).digest()
        return hashlib.sha256(b"\x01" + inputs.sibling + leaf).digest()
    if op == EMPTY:
        return bytes(32)
    raise SymmetricTimingError(f"unknown operation {op!r}; known: {', '.join(OPERATIONS)}", field="op",
                               code="SYM_E_ARGUMENT")


def compute(op: str, inputs: Inputs) -> bytes:
    """One call of the C operation ``op``; its 32-octet output."""
    return load().compute(_number(op), inputs.key, inputs.message, inputs.sibling)


def _number(op: str) -> int:
    if op not in OPERATIONS:
        raise SymmetricTimingError(f"unknown operation {op!r}; known: {', '.join(OPERATIONS)}", field="op",
                               code="SYM_E_ARGUMENT")
    return OPERATIONS.index(op)


def measure(ops: tuple[str, ...], inputs: Inputs, batch: int, samples: int) -> dict[str, np.ndarray]:
    """``samples`` batch means (ns per call) of every operation in ``ops`` and of the empty loop, interleaved.

    Returns the gross samples of each operation and, under ``"empty"``, the loop's own cost per call; subtract its
    median (as :func:`net` does) to get the operation alone."""
    order = (EMPTY, *[op for op in ops if op != EMPTY])
    raw = load().measure([_number(op) for op in order], inputs.key, inputs.message, inputs.sibling, batch, samples)
    table = np.frombuffer(raw, dtype=np.float64).reshape(samples, len(order))
    return {op: table[:, i].copy() for i, op in enumerate(order)}


def net(samples: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each operation's samples minus the median of the empty loop measured beside it (never below 0)."""
    loop = float(np.median(samples[EMPTY]))
    return {op: np.clip(values - loop, 0.0, None) for op, values in samples.items() if op != EMPTY}
