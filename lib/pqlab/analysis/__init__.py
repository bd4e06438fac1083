"""Analysis of raw samples: statistics, tables and metrics computed from measured files, never measuring."""
