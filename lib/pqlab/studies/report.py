"""Stage ``report``: ``paper_figs/REPORT.md`` from the stages' metrics and ``params/paper_reference.yaml``."""

from __future__ import annotations

from pqlab import machine, report
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult

STAGE = "report"


def run(settings: StudyParams | None, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Write REPORT.md (byte-stable for the same metrics and outputs) and, beside the data, when and how it was
    built (the only place with a timestamp and the builder's machine)."""
    paths.check_writable(paths.report.parent, paths.derived)
    reference = report.load_reference(paths.paper_reference)
    text, table, coverage = report.build(reference, paths.root)
    verdicts = {str(k): int(v) for k, v in sorted(table["verdict"].value_counts().items())}
    coverage_status = {str(k): int(v) for k, v in sorted(coverage["status"].value_counts().items())}
    with OutputSet(paths, STAGE) as out:
        out.text(paths.report, text)
        out.json(paths.derived / "report_run.json", machine.run_metadata(params=None)
                 | {"rows": len(table), "verdicts": verdicts, "coverage": coverage_status})
    return StudyResult(STAGE, tables={"REPORT": table, "coverage": coverage},
                       metrics={"rows": len(table), "verdicts": verdicts, "coverage": coverage_status},
                       files=out.written, data={"markdown": text})
