#!/usr/bin/env bash
# What the real-browser test (tests/test_browser.py) needs: Debian's Chromium at /usr/bin/chromium (installed with
# apt-get only when missing and only as root) and Playwright's Python package in the venv (requirements/lock.txt;
# Playwright drives the system browser, it never downloads one). Never fails the build: it prints why.
#   scripts/setup-browser.sh [VENV_PYTHON]           install what is missing
#   scripts/setup-browser.sh --check [VENV_PYTHON]   exit 0 only if everything is present (installs nothing)
set -uo pipefail
check_only=0
if [[ "${1:-}" == "--check" ]]; then check_only=1; shift; fi
PY=${1:-.venv/bin/python}
BROWSER=/usr/bin/chromium

browser_ok() { [[ -x "$BROWSER" ]] && "$BROWSER" --version >/dev/null 2>&1; }
binding_ok() { "$PY" -c "import playwright.sync_api" >/dev/null 2>&1; }

if (( check_only )); then
  browser_ok && binding_ok && exit 0
  echo "browser stack incomplete:$(browser_ok || echo " no $BROWSER")$(binding_ok || echo " playwright not importable")"
  exit 1
fi

if ! browser_ok; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "pqlab: the browser test will skip: no apt-get here to install chromium (it needs $BROWSER)"
  elif [[ $(id -u) -ne 0 ]]; then
    echo "pqlab: the browser test will skip: not root, cannot install chromium; run: sudo apt-get install -y chromium"
  else
    echo "pqlab: installing Debian's chromium for the browser test"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; then
      echo "pqlab: the browser test will skip: apt-get could not install chromium"
    fi
  fi
fi
binding_ok || echo "pqlab: the browser test will skip: playwright is not importable in $PY (make setup installs it)"
exit 0
