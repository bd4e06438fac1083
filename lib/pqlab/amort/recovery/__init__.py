"""Restart and rollback-safe recovery (AMORT-V1 §IV-E, §V-H): TPM-anchored reservation, prover process, trials."""
