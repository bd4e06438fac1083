"""One module per DVC stage, named as the stage; each ``run(settings, paths)`` is the only code writing its files.

:mod:`pqlab.pipeline.registry` lists the stages (study, ``pqlab`` command, notebook, metrics file, kind, raw samples)
and is the one list the pipeline, the report and the tests are checked against; a measuring stage's
``measure_<stage>`` module writes only its raw samples (:mod:`pqlab.pipeline.raw_provenance`), and
:mod:`pqlab.studies.measuring` runs it before the analysis when they are missing.
"""
