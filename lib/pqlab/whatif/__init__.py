"""What post-quantum costs in a user's own deployment: ``pqlab whatif case`` and ``pqlab whatif amort``.

``deployment`` validates what a user describes (flags or a YAML file, strictly, every error naming its field);
``case`` answers for a Matter device on a Thread mesh with the real CASE encoder, pqm4 cycle counts and the C
Thread simulator; ``amort`` answers for a PLC fleet with Eq. 1 over this machine's measured (or typed-in) costs.
The CLI (``pqlab.cli_whatif``) and ``notebooks/15_your_deployment.ipynb`` call the same functions.
"""
