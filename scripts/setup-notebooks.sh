#!/usr/bin/env bash
# Makes the notebooks' Python environment: a venv in .venv-notebooks (git-ignored) with the pinned
# packages of notebooks/requirements.txt. Installs Debian's python3 and python3-venv if missing.
# Idempotent: does nothing when the venv already holds the current requirements.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv-notebooks}"
stamp="$VENV/.requirements"
if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && cmp -s notebooks/requirements.txt "$stamp"; then
  exit 0
fi
if ! command -v python3 >/dev/null || ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
  echo "setup-notebooks: installing python3 python3-venv" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv >/dev/null
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r notebooks/requirements.txt
cp notebooks/requirements.txt "$stamp"
