"""The §V-H recovery experiments' harness: a private software TPM, the prover process driven from the parent, and the
trials with real processes and a real TPM (the protocol side lives in pqlab.amort.recovery)."""
