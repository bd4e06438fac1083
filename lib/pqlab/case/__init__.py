"""Matter CASE under post-quantum algorithms: TLV codec, certificates, Sigma messages, configurations."""
