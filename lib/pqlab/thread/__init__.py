"""Thread transport Monte Carlo simulator for CASE handshakes (PQ-CASE §IV-C): C core and Python twin."""
