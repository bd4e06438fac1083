"""AMORT-V1 §V-H: the per-identity re-key taken apart — ML-KEM-768 encapsulation and decapsulation, transcript hash
+ HKDF, the EPOCH_CONFIRM MAC check, the EPOCH_OPEN signature and the policy-state update — each timed on the same
inputs as the real exchange it follows, so sums that match a description of "re-keying" can be compared with one
published number, and the rest of the end-to-end time (message encoding, decoding, state lookups) is visible; the
parts and their sums are analysed in pqlab.analysis.rekey_parts."""

from __future__ import annotations

import time
from typing import Any

from pqlab.amort import kdf
from pqlab.amort.identity import SigningKey
from pqlab.amort.messages import EpochConfirm, EpochOpen
from pqlab.amort.profile import Profile
from pqlab.crypto.base import Kem


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
