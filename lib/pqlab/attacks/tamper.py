"""What the adversaries do with their access: re-encode tampered reports, forge as the controller, set up a pair."""

from __future__ import annotations

from pqlab.amort import kdf
from pqlab.amort.controller import Controller
from pqlab.amort.device import Device
from pqlab.amort.messages import RECORD_OCTETS, Report
from pqlab.attacks.registry import Context
from pqlab.experiments.amort_lab import Lab


def set_record(lab: Lab, data: bytes, **changes: object) -> bytes:
    """Re-encode a report with record fields changed and the original tags kept (tampering in transit)."""
    report = lab.decode_report(data)
    return report.replace(record=report.record.replace(**changes)).encode()


def forge(controller: Controller, device_id: bytes, template: bytes, *, dtag_key: bytes | None = None,
          **changes: object) -> bytes:
    """A malicious controller's forgery: it holds K_evid, so the evidence tag is valid; the dtag is not (unless
    ``dtag_key`` is a key the controller somehow holds)."""
    k_evid, tag_len = controller.evidence_key(device_id)
    report = Report.decode(template, wire_format=controller.profile.wire_format, tag_len=tag_len)
    record = report.record.replace(**changes)
    octets = record.encode()
    dtag = kdf.mac(dtag_key, octets, tag_len) if dtag_key else bytes(tag_len)
    tag = kdf.mac(k_evid, kdf.evidence_input(octets, dtag, controller.profile.hardened), tag_len)
    return Report(record, tag, dtag, controller.profile.wire_format).encode()


def flip_dtag_bit(lab: Lab, data: bytes, bit: int) -> bytes:
    """A network adversary's change to one bit of a report's disclosure tag (no key needed)."""
    report = lab.decode_report(data)
    octets = bytearray(report.dtag)
    octets[(bit // 8) % len(octets)] ^= 1 << (bit % 8)
    return report.replace(dtag=bytes(octets)).encode()


def record_octets(data: bytes) -> bytes:
    return data[:RECORD_OCTETS]


def two_devices(ctx: Context, **config: object) -> tuple[Lab, Device, Device]:
    lab = ctx.lab(**config)
    a, b = lab.device(1), lab.device(2)
    lab.open_epoch(a)
    lab.open_epoch(b)
    return lab, a, b
