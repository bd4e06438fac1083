"""pqlab: measure and model what post-quantum cryptography costs in industrial and IoT protocols."""

__version__ = "0.1.0"

import sys as _sys

if "ipykernel" in _sys.modules:  # inside a Jupyter kernel: no progress widgets unless a front end is attached
    from pqlab.notebook import text_progress_when_headless as _text_progress_when_headless

    _text_progress_when_headless()
