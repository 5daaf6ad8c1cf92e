#!/usr/bin/env bash
# Create .venv (if absent) and install icda with the extras the tests and CI need (test, llm,
# slurm) into it, at the versions of constraints.txt (pyproject.toml gives only ranges).
# torch is installed first, from the constraints (2.13.0, its CPU build where pip finds one), so
# that no dependency pulls another build.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -c constraints.txt torch
.venv/bin/python -m pip install --quiet -c constraints.txt -e '.[test,llm,slurm]'
.venv/bin/python -c "import icda, torch; print('icda', icda.__version__, 'ready; torch', torch.__version__)"
