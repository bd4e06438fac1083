"""``paper_figs/report_rows.csv``: every row of REPORT.md in machine-readable form, so two machines' reports diff.

One line per row; a range is two lines, ``<id>#low`` and ``<id>#high``, each with its own paper value, this run's
value and that end's interval (estimates; ``confidence`` its level), both carrying the row's verdict and reason.
"""

from __future__ import annotations

import pandas as pd

COLUMNS = ["id", "paper", "where", "claim", "kind", "table", "unit", "paper_value", "here_value", "here_low",
           "here_high", "confidence", "normalised", "n", "failure_rate", "cells_here", "cells_paper", "verdict",
           "reason", "produced_by", "sensitivity", "main"]


def rows_csv(table: pd.DataFrame) -> pd.DataFrame:
    """The report's rows (``pqlab.report.collect``) as the CSV's lines."""
    lines = []
    for r in table.itertuples():
        common = {"paper": r.paper_id, "where": r.where, "claim": r.claim, "kind": r.kind, "table": r.table,
                  "unit": r.unit, "confidence": r.confidence, "normalised": r.normalised, "n": r.n,
                  "failure_rate": r.failure_rate,
                  "cells_here": r.cells_here, "cells_paper": r.cells_paper, "verdict": r.verdict, "reason": r.why,
                  "produced_by": r.produced_by, "sensitivity": r.sensitivity, "main": r.main}
        if pd.notna(r.paper_low):
            lines.append({"id": f"{r.id}#low", **common, "paper_value": r.paper_low, "here_value": r.here,
                          "here_low": r.ci_low, "here_high": r.ci_high})
            lines.append({"id": f"{r.id}#high", **common, "paper_value": r.paper_high, "here_value": r.here_high,
                          "here_low": r.ci_high_low, "here_high": r.ci_high_high})
        else:
            here = r.here if pd.notna(r.here) else (r.here_text if r.here_text not in ("no value", "not run")
                                                     else None)
            lines.append({"id": r.id, **common, "paper_value": r.paper_value, "here_value": here,
                          "here_low": r.ci_low, "here_high": r.ci_high})
    # object columns: a whole number stays whole ("5000", not "5000.0") beside text values and blanks
    return pd.DataFrame(lines, columns=COLUMNS, dtype=object)
