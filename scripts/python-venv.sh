#!/usr/bin/env bash
# Makes a Python environment for the project's scripts: a venv (git-ignored) holding the pinned
# packages of a requirements file, from PyPI. Installs Debian's python3 and python3-venv if missing.
# Idempotent: does nothing when the venv already holds exactly those requirements.
#
#   bash scripts/python-venv.sh VENV REQUIREMENTS      e.g. .venv-notebooks notebooks/requirements.txt
set -euo pipefail
VENV="$1"
REQUIREMENTS="$2"
stamp="$VENV/.requirements"
if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && cmp -s "$REQUIREMENTS" "$stamp"; then
  exit 0
fi
if ! command -v python3 >/dev/null || ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
  echo "python-venv: installing python3 python3-venv" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv >/dev/null
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r "$REQUIREMENTS"
cp "$REQUIREMENTS" "$stamp"
