"""The AMORT-V1 batch fast path (§V-A): its interface (api), the reference and native implementations, the C core."""
