"""Timing harness, statistics, and the AMORT-V1 timing experiments."""
