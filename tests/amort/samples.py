"""One valid encoding of every AMORT-V1 message, built from a real honest run (for decoder tests)."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

from pqlab.amort.controller import ControllerConfig
from pqlab.amort.messages import AnchorStatement, EpochClose, Report
from pqlab.amort.profile import PAPER_PROFILE, SECURE
from pqlab.experiments.amort_lab import CONTROLLER_ID, KeySet, Lab


@cache
def valid_messages() -> dict[str, bytes]:
    """Message class name -> one valid encoding."""
    keys = KeySet.generate(2)
    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(keys, 5, Path(tmp), ControllerConfig(k=4), profile=PAPER_PROFILE)
        a, b = lab.device(1), lab.device(2)
        req = lab.controller.open_epoch(a.dev_id, lab.now)
        confirm = a.respond(req)
        opened = lab.controller.confirm(confirm, lab.now)
        a.accept_open(opened)
        lab.open_epoch(b)
        reports = lab.stream([a, b], 4)
        a.receive_checkpoint(lab.controller.checkpoints[0])
        _, inclusion = lab.controller.inclusion(a.dev_id, 1, 1)
        out = {
            "Record": Report.decode(reports[0]).record.encode(),
            "Report": reports[0],
            "Certificate": lab.cert(1),
            "EpochReq": req,
            "EpochConfirm": confirm,
            "EpochOpen": opened,
            "EpochClose": EpochClose(a.dev_id, 1, 2, 3).encode(),
            "Checkpoint": lab.controller.checkpoints[1],
            "InclusionProof": inclusion,
            "ConsistencyProof": lab.controller.consistency(3, 8),
            "Disclosure": a.disclose(1),
            "SubCheckpoint": a.sub_checkpoint(),
            "AnchorStatement": AnchorStatement(CONTROLLER_ID, a.dev_id, 1, Report.decode(reports[0]).dtag * 2).encode(),
        }
        lab.close()
        hardened = Lab(keys, 6, Path(tmp), ControllerConfig(k=4), profile=SECURE)
        c = hardened.device(1)
        hardened_req = hardened.controller.open_epoch(c.dev_id, hardened.now)
        confirm = c.respond(hardened_req)
        opened = hardened.controller.confirm(confirm, hardened.now)
        c.accept_open(opened)
        hardened.stream([c], 4)
        c.receive_checkpoint(hardened.controller.checkpoints[0])
        out |= {"HardenedEpochReq": hardened_req, "HardenedEpochConfirm": confirm, "HardenedEpochOpen": opened,
                "Receipts": c.receipts()}
        hardened.close()
    return out
