"""Every stage's typed metrics model, one module per stage (``pqlab.pipeline.metrics.<stage>``); the map from a stage
to its model is :mod:`pqlab.pipeline.metrics.by_stage` (kept out of this package's __init__, so a study importing its
own model does not depend on every other stage's)."""
