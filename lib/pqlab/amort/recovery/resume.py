"""The controller side of rollback-protected recovery: accept an authenticated RESUME, and retire an epoch cleanly."""

from __future__ import annotations

from dataclasses import dataclass

from pqlab.amort import kdf
from pqlab.amort.controller import Controller
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.recovery.wire import Resume


@dataclass(frozen=True)
class Skip:
    """Sequence numbers a resumed device will never use (reserved before its restart, possibly unissued)."""

    dev_id: bytes
    epoch: int
    lo: int
    hi: int


class RecoveryController(Controller):
    """The reference controller plus RESUME handling (same-epoch restart) and a clean epoch retirement."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.skips: list[Skip] = []
        self.resumes = 0

    def resume(self, data: bytes) -> Resume:
        """Check a RESUME: current epoch (EPOCH_STALE), MAC under K_evid (MAC_FAIL), and a resume point beyond every
        number already seen (SEQ_DUPLICATE — the device would re-issue). Numbers in between are recorded as skipped."""
        msg = Resume.decode(data)
        state = self._state(msg.dev_id, "Resume.dev_id")
        keys = state.staged if state.staged is not None and msg.epoch == state.staged.epoch else state.current
        if keys is None or msg.epoch != keys.epoch:
            raise AmortError(Code.EPOCH_STALE, f"RESUME for epoch {msg.epoch}, device is in epoch {state.epoch}",
                             field="Resume.epoch")
        if not kdf.mac_ok(keys.k_evid, msg.tbs(), msg.mac):
            raise AmortError(Code.MAC_FAIL, "RESUME MAC does not verify under K_evid", field="Resume.mac")
        if keys is state.staged:  # resuming under the new epoch's key: the device had accepted EPOCH_OPEN
            self._install(msg.dev_id, state, keys)
        if msg.resume_seq <= state.last_seen:
            raise AmortError(Code.SEQ_DUPLICATE, f"resume at {msg.resume_seq} would re-issue numbers up to "
                             f"{state.last_seen}", field="Resume.resume_seq")
        if msg.resume_seq > state.last_seen + 1:
            self.skips.append(Skip(msg.dev_id, msg.epoch, state.last_seen + 1, msg.resume_seq - 1))
        state.last_seen = msg.resume_seq - 1
        self.resumes += 1
        return msg

    def retire(self, dev_id: bytes) -> None:
        """End the device's epoch without opening another: what it sent is committed first, then EPOCH_CLOSE is
        committed with the next checkpoint."""
        state = self._state(dev_id, "dev_id")
        if state.current is None:
            raise AmortError(Code.EPOCH_STALE, "device has no open epoch", field="dev_id")
        if any(p.dev_id == dev_id and p.epoch == state.epoch for p in self.batch):
            self.checkpoint()
        self._close_epoch(dev_id, state)
        state.current = None
