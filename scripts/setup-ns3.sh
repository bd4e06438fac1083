#!/usr/bin/env bash
# What the transport cross-check (stage transport_crosscheck) needs: Debian's libns3-dev (ns-3 3.37: lr-wpan,
# sixlowpan, internet, ...), pkg-config and g++ (installed with apt-get only when missing and only as root), then its
# ns-3 scenario program built against them (python -m pqlab.crosscheck.ns3_program build, into build/ns3/).
# Never fails the build: it prints why something is missing (the stage and its tests then say why they cannot run).
#   scripts/setup-ns3.sh [VENV_PYTHON]           install what is missing, build the program
#   scripts/setup-ns3.sh --check [VENV_PYTHON]   exit 0 only if the program is built or builds (installs nothing)
set -uo pipefail
check_only=0
if [[ "${1:-}" == "--check" ]]; then check_only=1; shift; fi
PY=${1:-.venv/bin/python}
DEBS=(libns3-dev pkg-config g++)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing_debs() {
  local out=()
  if ! command -v dpkg-query >/dev/null 2>&1; then
    pkg-config --exists ns3-lr-wpan 2>/dev/null || out+=(libns3-dev)
    echo "${out[@]}"; return
  fi
  for p in "${DEBS[@]}"; do installed "$p" || out+=("$p"); done
  echo "${out[@]}"
}
program_ok() { "$PY" -m pqlab.crosscheck.ns3_program build --strict >/dev/null 2>&1; }

missing=$(missing_debs)
if (( check_only )); then
  [[ -z "$missing" ]] && program_ok && exit 0
  echo "ns-3 cross-check incomplete: missing Debian packages [${missing}]$(program_ok || echo ', scenario program not built')"
  exit 1
fi

if [[ -n "$missing" ]]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "pqlab: the ns-3 cross-check will not run: no apt-get here to install ${missing} (ns-3 >= 3.37 with pkg-config files)"
  elif [[ $(id -u) -ne 0 ]]; then
    echo "pqlab: the ns-3 cross-check will not run: not root, cannot install ${missing}; run: sudo apt-get install -y ${missing}"
  else
    echo "pqlab: installing Debian packages for the ns-3 cross-check: ${missing}"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq && apt-get install -y -qq ${missing} >/dev/null; }; then
      echo "pqlab: the ns-3 cross-check will not run: apt-get could not install ${missing}"
    fi
  fi
fi
"$PY" -m pqlab.crosscheck.ns3_program build
exit 0
