"""Long-term signing identities (controller, CA, device) and the minimal certificate authority."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pqlab.amort.errors import AmortError, Code
from pqlab.amort.messages import SIG_ALGORITHM_IDS, SIG_ALGORITHMS, Certificate, Message
from pqlab.amort.profile import Profile
from pqlab.crypto import get_kem, get_signer
from pqlab.crypto.base import Signer
from pqlab.errors import CryptoInputError

KEM_ALGORITHM = "ML-KEM-768"
DEVICE_SIGNATURE_ALGORITHM = "ML-DSA-65"  # the device key of mechanism (c) and of the hardened anchor signature


def context(message: type[Message] | Message, profile: Profile) -> bytes:
    """FIPS 204/205 context string binding a signature to one message type and one deployment profile:
    ``AMORT-V1/<variant>+<wire format>/<domain>`` (a signature made under one profile verifies under no other)."""
    return b"AMORT-V1/" + profile.label + b"/" + message.DOMAIN


@dataclass
class SigningKey:
    """A signature key pair with its algorithm; ``public`` is what verifiers hold."""

    signer: Signer
    public: bytes
    secret: Any

    @classmethod
    def generate(cls, algorithm: str = "ML-DSA-65", backend: str = "auto") -> SigningKey:
        signer = get_signer(algorithm, backend)
        pair = signer.keygen()
        return cls(signer, pair.public, pair.secret)

    @property
    def algorithm(self) -> str:
        return self.signer.algorithm

    @property
    def alg_id(self) -> int:
        return SIG_ALGORITHM_IDS[self.algorithm]

    def sign(self, message: Message, profile: Profile) -> bytes:
        """This key's signature over ``message``'s signed octets under ``profile``'s context."""
        return self.signer.sign(self.secret, message.tbs(), context(message, profile))


@dataclass
class PublicKey:
    """A verifier's view of a signing key: algorithm name, public octets and, for a device key, the dev_id whose
    certificate binds it (``owner``): a device statement verifies only under its own device's key (N16)."""

    algorithm: str
    public: bytes
    backend: str = "auto"
    owner: bytes | None = None

    @classmethod
    def of(cls, key: SigningKey, owner: bytes | None = None) -> PublicKey:
        return cls(key.algorithm, key.public, owner=owner)

    @classmethod
    def of_device(cls, cert: Certificate) -> PublicKey:
        """The device's signing key from its (already CA-verified) certificate; SIG_FAIL if it holds none."""
        if not cert.sig_pk:
            raise AmortError(Code.SIG_FAIL, f"the certificate of {cert.dev_id.hex()} holds no signing key",
                             field="Certificate.sig_pk")
        return cls(DEVICE_SIGNATURE_ALGORITHM, cert.sig_pk, owner=cert.dev_id)

    def verify_device_statement(self, message: Message, signature: bytes, what: str, profile: Profile) -> None:
        """SIG_FAIL unless this is the key of the device the statement names (``message.dev_id``) and signed it."""
        if self.owner is None or self.owner != message.dev_id:
            whose = "an unbound key" if self.owner is None else f"the key of {self.owner.hex()}"
            raise AmortError(Code.SIG_FAIL, f"a statement of device {message.dev_id.hex()} checked with {whose}",
                             field=f"{what}.dev_id")
        self.verify(message, signature, what, profile)

    def verify(self, message: Message, signature: bytes, what: str, profile: Profile) -> None:
        """SIG_FAIL unless ``signature`` is this key's signature over ``message``'s signed octets under
        ``profile``'s context."""
        alg_id = getattr(message, "sig_alg", None)
        if alg_id is not None and SIG_ALGORITHMS.get(alg_id) != self.algorithm:
            raise AmortError(Code.SIG_FAIL, f"signed with {SIG_ALGORITHMS.get(alg_id)}, key is {self.algorithm}",
                             field=f"{what}.sig_alg")
        try:
            ok = get_signer(self.algorithm, self.backend).verify(self.public, message.tbs(), signature,
                                                                  context(message, profile))
        except CryptoInputError:
            ok = False
        if not ok:
            raise AmortError(Code.SIG_FAIL, "signature does not verify", field=f"{what}.sig")

    def verify_octets(self, signed: bytes, signature: bytes, ctx: bytes, what: str) -> None:
        """SIG_FAIL unless ``signature`` is this key's over the raw octets ``signed`` under context ``ctx``
        (how an auditor checks a message before decoding it)."""
        try:
            ok = get_signer(self.algorithm, self.backend).verify(self.public, signed, signature, ctx)
        except CryptoInputError:
            ok = False
        if not ok:
            raise AmortError(Code.SIG_FAIL, "signature does not verify", field=f"{what}.sig")


class CertificateAuthority:
    """Issues minimal certificates binding a device's ML-KEM key (and optional ML-DSA key) to its dev_id and to the
    deployment profile it runs."""

    def __init__(self, key: SigningKey) -> None:
        self.key = key
        self.public = PublicKey.of(key)
        self._serial = 0

    def issue(self, dev_id: bytes, kem_pk: bytes, sig_pk: bytes = b"", *, profile: Profile) -> bytes:
        self._serial += 1
        cert = Certificate(profile.octet, self._serial, dev_id, kem_pk, sig_pk)
        return cert.replace(ca_sig=self.key.sign(cert, profile)).encode()


def verify_certificate(data: bytes, ca: PublicKey, profile: Profile) -> Certificate:
    """Decode a certificate, check it binds the device to ``profile`` (PROFILE_MISMATCH) and the CA signature."""
    cert = Certificate.decode(data)
    check_profile(cert.profile, profile, "Certificate.profile")
    ca.verify(cert, cert.ca_sig, "Certificate", profile)
    return cert


def check_profile(octet: int, profile: Profile, field: str) -> None:
    """PROFILE_MISMATCH unless a message's profile octet names ``profile``."""
    if octet != profile.octet:
        raise AmortError(Code.PROFILE_MISMATCH, f"produced under profile {Profile.from_octet(octet)}, this party "
                         f"runs {profile}", field=field)


def new_kem_keypair() -> Any:
    return get_kem(KEM_ALGORITHM).keygen()
