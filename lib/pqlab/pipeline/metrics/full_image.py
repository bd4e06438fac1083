"""The full_image stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import MetricsNode, RawSource, StageMetrics


class CacheState(MetricsNode):
    """Table V for one cache state: median time, throughput, ratio to one signature, measurements per second."""

    median_ms: float
    throughput_mb_s: float
    ratio_to_sign: float | None   # None when the cost study has not run
    measurements_per_s: float
    backend: str | None
    reliable: bool
    unreliable_because: list[str]


class ImageFacts(MetricsNode):
    files: int
    octets: int
    pages: int
    digest: str
    digest_stable: bool
    copy_digest_equal: bool | None


class Eviction(MetricsNode):
    method: str
    verified: bool
    files_still_resident: int
    resident_before_pages: int
    resident_after_pages: int
    resident_after_read_pages: int
    cold_over_warm_median: float


class SignatureReference(MetricsNode):
    """The cost study's signature median the ratios divide by (None, with why, when that stage has not run)."""

    file: str
    key: str
    median_us: float | None
    backend: str | None
    missing: str | None = None


class FullImageMetrics(StageMetrics):
    warm: CacheState
    cold: CacheState
    image: ImageFacts
    eviction: Eviction
    signature: SignatureReference
    image_source: str
    reliable: bool
    repetitions: int                  # the fewest timed repetitions of a cache condition (each row's n)
    cpu_model: str | None
    raw_samples: RawSource
