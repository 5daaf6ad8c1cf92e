#!/usr/bin/env sh
# Install the icda package itself (editable) into the conda environment of environment.yml,
# whose pip list already holds its dependencies at the versions of constraints.txt (--no-deps:
# nothing else is installed or upgraded). Snakemake runs this file after creating the
# environment for the rules (`--use-conda`), from a copy under .snakemake/conda/ and in the
# workflow's working directory (the project root); by hand:
#   conda run -n icda sh environment.post-deploy.sh
set -eu
here=$(dirname "$0")
if [ -f "$here/pyproject.toml" ]; then
    cd "$here"          # run by hand: the project is where this file is
elif [ ! -f pyproject.toml ]; then
    echo "environment.post-deploy.sh: no pyproject.toml in $here or $(pwd). Fix: run it from the icda project root" >&2
    exit 1
fi
python -m pip install --no-deps -e .
