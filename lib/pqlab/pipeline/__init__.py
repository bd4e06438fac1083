"""The pipeline's machinery: the stage registry, raw samples' provenance and I/O, output sets, the typed metrics
models of every stage, and dvc.yaml generated from the registry."""
