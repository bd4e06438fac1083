"""What the adversaries do with their access: re-encode tampered reports, forge as the controller, set up a pair."""

from __future__ import annotations

from pqlab.amort import kdf
from pqlab.amort.attacks.registry import Context
from pqlab.amort.controller import Controller
from pqlab.amort.device import Device
from pqlab.amort.lab import Lab
from pqlab.amort.messages import Report


def set_record(data: bytes, **changes: object) -> bytes:
    """Re-encode a report with record fields changed and the original tags kept (tampering in transit)."""
    report = Report.decode(data)
    return report.replace(record=report.record.replace(**changes)).encode()


def forge(controller: Controller, device_id: bytes, template: bytes, *, dtag_key: bytes | None = None,
           **changes: object) -> bytes:
    """A malicious controller's forgery: it holds K_evid, so the evidence tag is valid; the dtag is not."""
    report = Report.decode(template)
    record = report.record.replace(**changes)
    k_evid, tag_len = controller.evidence_key(device_id)
    octets = record.encode()
    dtag = kdf.mac(dtag_key, octets, tag_len) if dtag_key else bytes(tag_len)
    return Report(record, kdf.mac(k_evid, octets, tag_len), dtag).encode()


def two_devices(ctx: Context, **config: object) -> tuple[Lab, Device, Device]:
    lab = ctx.lab(**config)
    a, b = lab.device(1), lab.device(2)
    lab.open_epoch(a)
    lab.open_epoch(b)
    return lab, a, b
