"""The Thread transport cross-check: pqlab's simulator beside ns-3's lr-wpan and sixlowpan."""
