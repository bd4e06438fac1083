#!/usr/bin/env bash
# What the TPM 2.0 tests and the recovery study need: Debian's swtpm, swtpm-tools, tpm2-tools and libtss2-dev
# (installed with apt-get only when missing and only as root), then the tpm2-pytss binding (requirements/tpm.txt)
# built into the project's venv against libtss2-dev. Never fails the build: it prints why something is missing.
#   scripts/setup-tpm.sh [VENV_PYTHON]           install what is missing
#   scripts/setup-tpm.sh --check [VENV_PYTHON]   exit 0 only if everything is present (installs nothing)
set -uo pipefail
check_only=0
if [[ "${1:-}" == "--check" ]]; then check_only=1; shift; fi
PY=${1:-.venv/bin/python}
here=$(cd "$(dirname "$0")/.." && pwd)
DEBS=(swtpm swtpm-tools tpm2-tools libtss2-dev pkg-config)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing_debs() {
  local out=()
  if ! command -v dpkg-query >/dev/null 2>&1; then
    command -v swtpm >/dev/null 2>&1 || out+=(swtpm)
    echo "${out[@]}"; return
  fi
  for p in "${DEBS[@]}"; do installed "$p" || out+=("$p"); done
  echo "${out[@]}"
}
binding_ok() { "$PY" -c "import tpm2_pytss" >/dev/null 2>&1; }

missing=$(missing_debs)
if (( check_only )); then
  [[ -z "$missing" ]] && binding_ok && exit 0
  echo "TPM stack incomplete: missing Debian packages [${missing}]$(binding_ok || echo ', tpm2-pytss not importable')"
  exit 1
fi

if [[ -n "$missing" ]]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "pqlab: TPM tests will skip: no apt-get here to install ${missing} (install swtpm, tpm2-tss with headers)"
  elif [[ $(id -u) -ne 0 ]]; then
    echo "pqlab: TPM tests will skip: not root, cannot install ${missing}; run: sudo apt-get install -y ${missing}"
  else
    echo "pqlab: installing Debian packages for the TPM tests: ${missing}"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq && apt-get install -y -qq ${missing} >/dev/null; }; then
      echo "pqlab: TPM tests will skip: apt-get could not install ${missing}"
    fi
  fi
fi

if ! binding_ok; then
  if installed libtss2-dev && installed pkg-config; then
    echo "pqlab: building tpm2-pytss against libtss2-dev (requirements/tpm.txt)"
    "$PY" -m pip install --quiet -r "$here/requirements/tpm.txt" 2>&1 \
      | { grep -v "is ignored: it is neither a file nor a directory" || true; }
    binding_ok || echo "pqlab: TPM tests will skip: tpm2-pytss did not build (see pip output above)"
  else
    echo "pqlab: TPM tests will skip: tpm2-pytss needs libtss2-dev and pkg-config to build"
  fi
fi
exit 0
