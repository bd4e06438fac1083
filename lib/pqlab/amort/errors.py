"""The AMORT-V1 protocol error codes and the one exception type that carries them."""

from __future__ import annotations

from enum import StrEnum

from pqlab.errors import PqlabError


class Code(StrEnum):
    """Every rejection the reference model can produce (issue 3 §6; AMORT-V1 Table VI and §IV-E; the last is
    pqlab's: the profile binding of docs/protocol.md)."""

    MAC_FAIL = "MAC_FAIL"
    TRUNCATED = "TRUNCATED"
    TRAILING = "TRAILING"
    SIG_FAIL = "SIG_FAIL"
    CHAIN_FAIL = "CHAIN_FAIL"
    PROOF_FAIL = "PROOF_FAIL"
    SEQ_DUPLICATE = "SEQ_DUPLICATE"
    SEQ_GAP = "SEQ_GAP"
    EPOCH_STALE = "EPOCH_STALE"
    DEVICE_UNKNOWN = "DEVICE_UNKNOWN"
    REVOKED = "REVOKED"
    CKPT_FORK = "CKPT_FORK"
    CKPT_DISCONTINUITY = "CKPT_DISCONTINUITY"
    DISCLOSE_EARLY = "DISCLOSE_EARLY"
    TAGLEN_DOWNGRADE = "TAGLEN_DOWNGRADE"
    BAD_DOMAIN = "BAD_DOMAIN"
    BAD_VERSION = "BAD_VERSION"
    ERR_EVIDENCE_INCOMPLETE = "ERR_EVIDENCE_INCOMPLETE"
    ERR_RESTART_RATE = "ERR_RESTART_RATE"
    PROFILE_MISMATCH = "PROFILE_MISMATCH"  # evidence of another deployment profile (variant, wire format), issue 35


class AmortError(PqlabError):
    """A protocol rejection: ``code`` is one of :class:`Code`; ``field`` names the field or byte offset."""

    code = "AMORT_PROTOCOL"

    def __init__(self, code: Code, message: str, *, field: str | None = None) -> None:
        self.reason = Code(code)
        self.code = self.reason.value
        super().__init__(f"[{self.code}] {message}", field=field)


class FastpathError(PqlabError):
    """Misuse of the batch fast path (pqlab.amort.fastpath): batch framing, limits, or calls out of order.

    Never a verdict on a report — those are :class:`AmortError` codes, one per report."""

    code = "AMORT_FASTPATH"


class ClockRequired(PqlabError):
    """A controller asked to judge a report with no clock: freshness cannot be checked, so nothing is accepted.

    Give the controller a clock (``clock=``) or pass ``now`` to ``ingest``; a controller that replays a buffered
    backlog passes the replay time and a ``max_report_age`` that covers the backlog."""

    code = "AMORT_CLOCK_REQUIRED"
