"""Restart and rollback-safe recovery (AMORT-V1 §IV-E, §V-H): TPM NV counter, sequence reservation, the prover
process and its durable state, RESUME; the experiments that run them are in pqlab.experiments.recovery."""
