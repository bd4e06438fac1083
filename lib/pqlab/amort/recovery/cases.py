"""The §V-H experiments' arms, scenarios and crash-injection cases: the trials run them, the analysis tabulates them."""

from __future__ import annotations

ARMS = ("fresh", "naive", "tpm")
SCENARIOS = ("restart", "rollback")
CRASH_CASES = {  # case -> (hook point, expected outcome)
    "before_increment": ("before_increment", "resumed"),
    "after_increment": ("after_increment", "failed_secure"),
    "during_reservation": ("state_written", "failed_secure"),
    "after_durable_reservation": ("state_durable", "resumed"),
    "within_window": ("report", "resumed"),
}
