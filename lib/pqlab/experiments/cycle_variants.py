"""Names the control-cycle harness and its analysis share: the per-scan cost rotation run and its variants."""

SCAN_COST = "scan_cost"   # the rotation run: no evidence, one tag, two tags + chain step, cycle by cycle
VARIANTS = {0: "scan", 1: "one_tag", 2: "two_tags_chain"}  # the rotation's variant per cycle (-1: a Fig. 6 run)
