"""AMORT-V1 conformance tooling: the differential vectors (cases, builder, sets), their runner and the fuzzer."""
