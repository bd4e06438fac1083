"""Stage ``report``: ``paper_figs/REPORT.md`` from the stages' metrics and ``params/paper_reference.yaml``."""

from __future__ import annotations

from pqlab import machine, report
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult

STAGE = "report"


def run(settings: StudyParams | None, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Write REPORT.md (byte-stable for the same metrics) and, beside the data, when and how it was built."""
    paths.check_writable(paths.report.parent, paths.derived)
    reference = report.load_reference(paths.paper_reference)
    table = report.collect(reference, paths.derived)
    text = report.render(reference, table)
    with OutputSet(paths, STAGE) as out:
        out.text(paths.report, text)
        out.json(paths.derived / "report_run.json", machine.run_metadata(params=None) | {"rows": len(table)})
    return StudyResult(STAGE, tables={"REPORT": table}, metrics={"rows": len(table)}, files=out.written,
                       data={"markdown": text})
