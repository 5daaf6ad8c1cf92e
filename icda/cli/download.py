"""``python -m icda download``: fetch the missing files of public datasets (workflow rule ``download``).

Files come from the dataset's ``url`` + relative path and are written under ``data_dir`` (to a
temporary name, renamed once its md5 matches the dataset's ``md5`` entry where one is known).
Datasets that are not public are reported with how to get them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.steps.download import download
from icda.data.dataset_spec import describe_missing, downloadable, missing_files, validate_spec
from icda.data.dataset_spec_files import load_specs


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "download",
        help="fetch missing public data files; say how to get the others",
        description=(
            "Download the missing train/dev/test files of public datasets from url + relative "
            "path into data_dir. The datasets come from --spec (JSON {name, data_dir, ...spec}) or "
            "from --config (YAML with data_dir and datasets) and --dataset (repeatable; default: "
            "all). A dataset named explicitly that cannot be downloaded (not public, no url) is an "
            "error; with --config and no --dataset such datasets are only reported."
        ),
    )
    p.add_argument("--spec", type=Path, help="JSON spec: {\"name\": ..., \"data_dir\": ..., **spec}")
    p.add_argument("--config", type=Path, help="YAML config with data_dir and datasets (instead of --spec)")
    p.add_argument("--dataset", action="append", help="dataset name in --config (repeatable; default all)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    every = args.config is not None and not args.dataset
    for name, spec, data_dir in load_specs(args.spec, args.config, args.dataset):
        full = validate_spec(name, spec)
        missing = missing_files(full, data_dir)
        if not missing:
            print(f"{name}: all files present")
        elif every and not downloadable(full):
            print(f"{name}: cannot download. {describe_missing(name, full, data_dir)}")
        else:
            paths = download(name, full, data_dir)
            print(f"{name}: downloaded " + ", ".join(str(p) for p in paths))
    return 0
