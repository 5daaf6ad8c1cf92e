#!/usr/bin/env bash
# Create .venv (if absent) and install icda with its test dependencies into it.
# torch is installed first, pinned, so that no dependency pulls another build.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet torch==2.13.0
.venv/bin/python -m pip install --quiet -e '.[test]'
.venv/bin/python -c "import icda, torch; print('icda ready; torch', torch.__version__)"
