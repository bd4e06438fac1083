"""The AMORT-V1 checkpointed post-quantum attestation protocol (reference model)."""
