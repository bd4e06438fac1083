"""AMORT-V1 §V-H's re-keying taken apart, analysed: the parts and the sums that match a description of
"re-keying one identity", per identity, from the times pqlab.experiments.rekey_parts takes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

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
