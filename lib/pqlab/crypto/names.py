"""The algorithm names some pqlab backend offers (each backend's own map names a subset); imports nothing."""

KEMS = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024")
SIGNATURES = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "SLH-DSA-SHA2-128f", "SLH-DSA-SHA2-128s",
              "SLH-DSA-SHAKE-128f", "SLH-DSA-SHAKE-128s", "Falcon-512", "MAYO-2", "SNOVA-24-5-4", "UOV-Is-pkc")
