"""The case_sizes stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import MetricsNode, StageMetrics


class ConfigSizes(MetricsNode):
    """One Table I configuration: each message's payload (len() of its encoding), the total, the largest, how
    many messages exceed the limit."""

    Sigma1: int
    Sigma2: int
    Sigma3: int
    StatusReport: int
    Total: int
    largest: int
    over_limit: int
    fits_limit: bool


class ConfigFrames(MetricsNode):
    Sigma1: int
    Sigma2: int
    Sigma3: int
    StatusReport: int
    total: int
    total_openthread: int


class MessageSizes(MetricsNode):
    Sigma1: int
    Sigma2: int
    Sigma3: int
    StatusReport: int
    Total: int


class ResumptionSizes(MetricsNode):
    Sigma1: int
    Sigma2Resume: int
    StatusReport: int
    Total: int


class FramingFacts(MetricsNode):
    iphc_bytes: int
    openthread_iphc_bytes: int
    matter_header_bytes: int
    frames_per_full_datagram: int
    fragment_datagram_bytes: list[int]


class CertificateSizes(MetricsNode):
    noc: int
    icac: int


class AlgorithmSizes(MetricsNode):
    public_key: int
    signature: int | None = None
    ciphertext: int | None = None


class CaseSizesMetrics(StageMetrics):
    table1: dict[str, ConfigSizes]
    frames: dict[str, ConfigFrames]
    resumption: dict[str, dict[str, ResumptionSizes]]
    real_material: dict[str, bool]
    algorithm_sizes_source: str
    text: dict[str, MessageSizes]
    limit_octets: int
    framing: FramingFacts
    certificates: CertificateSizes
    algorithms: dict[str, AlgorithmSizes]
    fit_limit: int
    sigma1_random_octets: int          # the encoder's Sigma1 random (kSigmaParamRandomNumberSize)
    chain_reference_octets: int        # what a cached chain is replaced by (§III-A)
