#!/usr/bin/env bash
# `make sanitize`: run one instrumented step, its stderr appended to LOG. LeakSanitizer's exit-time tracer sometimes
# crashes by itself ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error", a known intermittent
# fault of the tool: google/sanitizers#1353); when that is the attempt's only problem the step runs once more.
# Usage: sanitize-run.sh LOG command [args...]
set -uo pipefail
log=$1; shift
for attempt in 1 2; do
  errors=$(mktemp)
  "$@" 2>"$errors"
  status=$?
  cat "$errors" >>"$log"
  if [ "$status" -ne 0 ] && [ "$attempt" -eq 1 ] && grep -q "LeakSanitizer has encountered a fatal error" "$errors" \
     && ! grep -q -e "ERROR: AddressSanitizer" -e "runtime error" -e "ERROR: LeakSanitizer: detected" "$errors"; then
    echo "sanitize: LeakSanitizer's own tracer crashed at exit (no finding); running the step once more"
    rm -f "$errors"
    continue
  fi
  rm -f "$errors"
  exit "$status"
done
