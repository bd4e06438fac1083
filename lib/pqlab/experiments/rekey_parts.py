"""AMORT-V1 §V-H: the per-identity re-key taken apart — ML-KEM-768 encapsulation and decapsulation, transcript hash
+ HKDF, the EPOCH_CONFIRM MAC check, the EPOCH_OPEN signature and the policy-state update — each timed on the same
inputs as the real exchange it follows, so sums that match a description of "re-keying" can be compared with one
published number, and the rest of the end-to-end time (message encoding, decoding, state lookups) is visible."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from pqlab.amort import kdf
from pqlab.amort.identity import SigningKey
from pqlab.amort.messages import EpochConfirm, EpochOpen
from pqlab.amort.profile import Profile
from pqlab.crypto.base import Kem

CONTROLLER, DEVICE = "controller", "device"
# part -> (column, side, what it is)
PARTS = {
    "encaps": ("encaps_us", CONTROLLER, "ML-KEM-768 encapsulation to the device's certified key"),
    "decaps": ("decaps_us", DEVICE, "ML-KEM-768 decapsulation"),
    "hkdf": ("hkdf_us", CONTROLLER, "transcript hash + HKDF-Extract and two Expands (K_confirm, K_evid)"),
    "confirm_mac": ("confirm_mac_us", CONTROLLER, "EPOCH_CONFIRM MAC check (HMAC-SHA-256, constant-time compare)"),
    "sign": ("epoch_open_sign_us", CONTROLLER, "EPOCH_OPEN signature"),
    "policy_update": ("policy_update_us", CONTROLLER, "policy-state update: the controller path's register_epoch"),
}
# sums that match a description of "re-keying one identity"
SUMS = {
    "exchange_us": ("encaps", "decaps", "hkdf", "confirm_mac", "sign", "policy_update"),
    "controller_us": ("encaps", "hkdf", "confirm_mac", "sign", "policy_update"),
    "controller_without_signature_us": ("encaps", "hkdf", "confirm_mac", "policy_update"),
    "symmetric_us": ("hkdf", "confirm_mac", "policy_update"),
}


def time_parts(kem: Kem, pair: Any, request: bytes, confirm: bytes, opened: bytes, key: SigningKey, dev_id: bytes,
               epoch: int, profile: Profile) -> dict[str, float]:
    """One identity's parts (µs), each timed once with ``perf_counter_ns`` on the exchange's own messages and keys:
    a fresh encapsulation to the device's key and its decapsulation, the key derivation over the real transcript,
    the MAC check the controller makes, and the signature over the real EPOCH_OPEN."""
    clock = time.perf_counter_ns
    t0 = clock()
    ciphertext, shared = kem.encaps(pair.public)
    t1 = clock()
    kem.decaps(pair.secret, ciphertext)
    t2 = clock()
    message = EpochConfirm.decode(confirm)
    body = message.tbs()
    t3 = clock()
    transcript = kdf.transcript_hash(request, body)
    k_confirm, _ = kdf.epoch_keys(transcript, shared, dev_id, epoch)
    t4 = clock()
    tag = kdf.mac(k_confirm, transcript, len(message.mac))  # the tag the device would send with this secret
    t5 = clock()
    if not kdf.mac_ok(k_confirm, transcript, tag):
        raise AssertionError("a MAC over the transcript does not verify under its own key")
    t6 = clock()
    epoch_open = EpochOpen.decode(opened)
    t7 = clock()
    key.sign(epoch_open, profile)
    t8 = clock()
    return {"encaps_us": (t1 - t0) / 1000.0, "decaps_us": (t2 - t1) / 1000.0, "hkdf_us": (t4 - t3) / 1000.0,
            "confirm_mac_us": (t6 - t5) / 1000.0, "epoch_open_sign_us": (t8 - t7) / 1000.0}


def with_sums(rows: pd.DataFrame) -> pd.DataFrame:
    """The re-keying rows with every sum of :data:`SUMS` per identity."""
    out = rows.copy()
    for name, parts in SUMS.items():
        out[name] = out[[PARTS[p][0] for p in parts]].sum(axis=1)
    return out


def parts_table(rows: pd.DataFrame) -> pd.DataFrame:
    """rekey_parts.csv: every part and sum, its side, median, p95 and mean per identity (µs), beside the
    end-to-end controller time the study has always reported."""
    data = with_sums(rows)
    records = []
    for part, (column, side, what) in PARTS.items():
        records.append({"part": part, "side": side, "what": what, **_summary(data[column])})
    for name, parts in SUMS.items():
        records.append({"part": name, "side": "sum", "what": " + ".join(parts), **_summary(data[name])})
    records.append({"part": "end_to_end_controller", "side": CONTROLLER,
                    "what": "open_epoch + confirm of the reference controller (encoding and state included)",
                    **_summary(data["rekey_us"])})
    return pd.DataFrame(records)


def _summary(values: pd.Series) -> dict[str, float]:
    data = values.to_numpy(dtype=float)
    return {"median_us": float(np.median(data)), "p95_us": float(np.percentile(data, 95)),
            "mean_us": float(data.mean()), "n": int(data.size)}


def parts_metrics(rows: pd.DataFrame) -> dict[str, Any]:
    """Medians per identity of every part and sum, the backends, and what the end-to-end time holds besides."""
    data = with_sums(rows)
    medians = {part: round(float(data[column].median()), 3) for part, (column, _, _) in PARTS.items()}
    sums = {name: round(float(data[name].median()), 3) for name in SUMS}
    end_to_end = float(data["rekey_us"].median())
    return {
        "parts_us": medians, "sums_us": sums, "sums": {name: list(parts) for name, parts in SUMS.items()},
        "end_to_end_controller_us": round(end_to_end, 3),
        # what open_epoch + confirm spend beyond encapsulation, key derivation, MAC check and signature:
        # message encoding and decoding, lookups, the reference controller's own state update
        "end_to_end_rest_us": round(float((data["rekey_us"] - data["controller_us"]
                                           + data["policy_update_us"]).median()), 3),
        "identities": len(data),
        "kem_backend": str(data["kem_backend"].iloc[0]), "signature_backend": str(data["signature_backend"].iloc[0]),
        "method": "each part timed once per re-keyed identity on that exchange's messages and keys; medians",
    }
