"""pqlab: measure and model what post-quantum cryptography costs in industrial and IoT protocols."""

__version__ = "0.1.0"
