"""One AMORT-V1 deployment: the public configuration every controller, device, auditor and fast path is built from."""

from __future__ import annotations

from dataclasses import dataclass

from pqlab.amort.identity import PublicKey
from pqlab.amort.profile import DEFAULT_MAX_REPORT_AGE_MS, SECURE, Profile
from pqlab.errors import PqlabError

ID_OCTETS = 8


@dataclass(frozen=True)
class Deployment:
    """What every party of one deployment shares, chosen once: the controller's identifier and long-term public key,
    the CA's public key, the protocol profile (variant and wire format, hardened by default) and the freshness
    window of reports.

    Components take this object instead of separate switches, so a variant or an identifier cannot differ between
    them. ``controller_key`` and ``ca`` may be left out only by parties that check no signature (the batch fast
    path and its differential vectors); a party that needs one refuses to start without it (:meth:`need`)."""

    controller_id: bytes
    controller_key: PublicKey | None = None
    ca: PublicKey | None = None
    profile: Profile = SECURE
    max_report_age: int = DEFAULT_MAX_REPORT_AGE_MS

    def __post_init__(self) -> None:
        if not isinstance(self.controller_id, (bytes, bytearray)) or len(self.controller_id) != ID_OCTETS:
            raise PqlabError(f"must be {ID_OCTETS} octets", field="Deployment.controller_id")
        if not isinstance(self.profile, Profile):
            raise PqlabError(f"must be a Profile, got {type(self.profile).__name__}", field="Deployment.profile")
        if isinstance(self.max_report_age, bool) or not isinstance(self.max_report_age, int) \
                or not 0 <= self.max_report_age < 1 << 64:
            raise PqlabError(f"must be an integer number of ms in [0, 2^64), got {self.max_report_age!r}",
                             field="Deployment.max_report_age")
        for name in ("controller_key", "ca"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, PublicKey):
                raise PqlabError(f"must be a PublicKey, got {type(value).__name__}", field=f"Deployment.{name}")

    @property
    def hardened(self) -> bool:
        return self.profile.hardened

    @property
    def wire_format(self) -> str:
        return self.profile.wire_format

    def need(self, name: str, party: str) -> PublicKey:
        """The deployment's ``controller_key`` or ``ca``; a PqlabError naming it when a party that checks
        signatures is built without it."""
        value = getattr(self, name)
        if value is None:
            raise PqlabError(f"a {party} checks signatures and needs the deployment's {name}",
                             field=f"Deployment.{name}")
        return value
