#!/usr/bin/env bash
# Makes the notebooks' Python environment: a venv in .venv-notebooks (git-ignored) with the pinned
# packages of notebooks/requirements.txt (scripts/python-venv.sh: idempotent, installs Debian's
# python3 and python3-venv if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/python-venv.sh "${NB_VENV:-.venv-notebooks}" notebooks/requirements.txt
