"""Stage ``report``: ``paper_figs/REPORT.md`` and ``paper_figs/report_rows.csv`` from the stages' typed metrics and
``params/paper_reference.yaml``."""

from __future__ import annotations

from pqlab import machine, report
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline.metrics.by_stage import stage_model
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.report.schema import ModelLookup
from pqlab.report.verdicts import FINDINGS

STAGE = "report"


def _counts(table, column: str = "verdict") -> dict[str, int]:
    return {str(k): int(v) for k, v in sorted(table[column].value_counts().items())}


def run(settings: StudyParams | None, paths: ProjectPaths, *, progress: bool = True,
        models: ModelLookup = stage_model) -> StudyResult:
    """Write REPORT.md and report_rows.csv (byte-stable for the same metrics and outputs) and, beside the data, when
    and how they were built (the only place with a timestamp and the builder's machine). ``models``: stage -> its
    typed metrics model (:mod:`pqlab.pipeline.metrics.by_stage`)."""
    paths.check_writable(paths.report.parent, paths.derived)
    reference = report.load_reference(paths.paper_reference, models)
    text, table, coverage, consistency = report.build(reference, paths.root, models)
    main = table[table["table"] == "main"]
    findings = main[main["kind"].isin(FINDINGS)]
    settings_rows = main[main["kind"] == "setting"]
    summary = {
        "rows": len(table), "main_rows": len(main), "findings": len(findings),
        "main_rows_by_paper": _counts(main, "paper_id"),
        "verdicts": _counts(findings),
        "kind_verdicts": {kind: _counts(findings[findings["kind"] == kind]) for kind in sorted(set(findings["kind"]))},
        "paper_kind_verdicts": {paper: {kind: _counts(rows[rows["kind"] == kind]) for kind in sorted(set(rows["kind"]))}
                                for paper, rows in findings.groupby("paper_id")},
        "settings": {"rows": len(settings_rows),
                     "as_the_papers": int(settings_rows["setting_matches"].fillna(False).astype(bool).sum())},
        "sensitivity": _counts(table[table["table"] == "sensitivity"]),
        "consistency": {paper: _counts(rows) for paper, rows in consistency.groupby("paper_id")}
        if len(consistency) else {},
        "coverage": _counts(coverage.assign(state=coverage["status"].str.split(":").str[0]), "state"),
    }
    with OutputSet(paths, STAGE) as out:
        out.text(paths.report, text)
        out.text(paths.report.parent / "report_rows.csv", report.rows_csv(table).to_csv(index=False))
        out.json(paths.derived / "report_run.json", machine.run_metadata(params=None) | summary)
    return StudyResult(STAGE, tables={"REPORT": table, "coverage": coverage, "consistency": consistency},
                       metrics=summary, files=out.written, data={"markdown": text})
