#!/usr/bin/env sh
# Install the icda package itself (editable) into the conda environment of environment.yml,
# whose pip list already holds its dependencies. Snakemake runs this file after creating the
# environment for the rules (`--use-conda`); by hand: conda run -n icda sh environment.post-deploy.sh
set -eu
cd "$(dirname "$0")"
python -m pip install --no-deps -e .
