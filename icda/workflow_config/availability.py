"""Which selected datasets run: those whose files are present, or whose missing files can be
downloaded from a server that answers (probed once, in the workflow's main process); and what
the workflow says about those that do not."""

from __future__ import annotations

import json
import os
from pathlib import Path

from icda.data.dataset_spec import (check_resolved_inside, describe_missing, downloadable, missing_files,
                                    validate_spec)
from icda.errors import ConfigError, DataError
from icda.steps.download import unreachable as unreachable_urls


def selected_datasets(config: dict) -> list[str]:
    """The datasets to run: ``config["run_datasets"]`` or, if empty, every configured one."""
    names = config.get("run_datasets") or list(config["datasets"])
    unknown = [n for n in names if n not in config["datasets"]]
    if unknown:
        raise ConfigError(f"run_datasets: {unknown} are not under `datasets:`. Fix: define them or remove them")
    return names


def downloads(config: dict) -> dict[str, list[str]]:
    """{selected dataset: its missing files} for the datasets the workflow can download (public,
    with a ``url``): each gets a ``download_<dataset>`` job writing exactly these files (paths
    as rule ``prepare`` lists them), whether or not ``download`` is on (the ``download`` target
    fetches them on request)."""
    data_dir = config["data_dir"]
    out = {}
    for name in selected_datasets(config):
        spec = validate_spec(name, config["datasets"][name])
        missing = missing_files(spec, data_dir)
        if missing and downloadable(spec):
            out[name] = [str(path) for path in missing]
    return out


def unreachable_downloads(config: dict, timeout: float = 5.0,
                          to_download: dict[str, list[str]] | None = None) -> dict[str, str]:
    """{dataset: what could not be fetched, from where and where to put it} for the datasets
    whose missing files the run would download (``download`` on) but whose server cannot be
    reached, e.g. without network (:func:`icda.steps.download.unreachable`: one HEAD request per
    server). Datasets named in ``run_datasets`` are not probed: asked for by name, their download
    job runs and fails with the same advice. Never raises for the network.

    Args:
        to_download: :func:`downloads` of ``config``, when the caller has it already.
    """
    if not config.get("download", True):
        return {}
    named = set(config.get("run_datasets") or [])
    data_dir = Path(config["data_dir"])
    wanted = {}  # dataset → [(url, path)]
    for name, files in (downloads(config) if to_download is None else to_download).items():
        if name in named:
            continue
        spec = validate_spec(name, config["datasets"][name])
        base = spec["url"] if spec["url"].endswith("/") else spec["url"] + "/"
        wanted[name] = [(base + Path(f).relative_to(data_dir).as_posix(), Path(f)) for f in files]
    failed = unreachable_urls([pairs[0][0] for pairs in wanted.values()], timeout)
    return {name: (f"could not be downloaded ({failed[pairs[0][0]]}): connect to the internet and rerun, or "
                   "fetch each file and put it at its path: "
                   + "; ".join(f"{url} → {path.resolve()}" for url, path in pairs))
            for name, pairs in wanted.items() if pairs[0][0] in failed}


#: the environment variable through which the workflow's main process hands its probe's answer
#: (:func:`unreachable_downloads`) to the job processes it starts, locally or on a cluster
UNREACHABLE_ENV = "ICDA_UNREACHABLE_DOWNLOADS"


def unreachable_downloads_once(config: dict, main_process: bool,
                               to_download: dict[str, list[str]] | None = None) -> dict[str, str]:
    """:func:`unreachable_downloads` in the workflow's main process, which also passes its answer
    on in :data:`UNREACHABLE_ENV`; a job process (``main_process`` False) reads that answer, so
    every process of a run agrees on which datasets run, and jobs never probe."""
    if main_process:
        found = unreachable_downloads(config, to_download=to_download)
        os.environ[UNREACHABLE_ENV] = json.dumps(found)
        return found
    return json.loads(os.environ.get(UNREACHABLE_ENV) or "{}")


def availability(config: dict, unreachable: dict[str, str] | None = None,
                 to_download: dict[str, list[str]] | None = None) -> tuple[list[str], dict[str, str]]:
    """(datasets that run, {absent dataset: what is missing and how to get it}).

    A dataset runs when its files are all present or, with ``download`` on (the default), when
    the missing ones can be downloaded (:func:`downloads`: its ``prepare`` then waits for its
    download job) and its server is not among ``unreachable`` (:func:`unreachable_downloads`,
    whose reasons it reports). Only datasets that ``run_datasets`` does not name may be absent.

    Args:
        to_download: :func:`downloads` of ``config``, when the caller has it already (the
            workflow lists the missing files once, for the probe, this and its download jobs).

    Raises:
        ConfigError: a dataset spec is invalid, or no selected dataset can run.
        DataError: a dataset named in ``run_datasets`` misses a file that will not be downloaded
            (the message names the file and how to get it).
    """
    unreachable = unreachable or {}
    data_dir = Path(config["data_dir"])
    named = config.get("run_datasets") or []
    specs = {name: validate_spec(name, config["datasets"][name]) for name in selected_datasets(config)}
    for name, spec in specs.items():
        check_resolved_inside(name, spec, data_dir)
    if not config.get("download", True):
        fetched = {}
    else:
        fetched = downloads(config) if to_download is None else to_download
    present = [name for name, spec in specs.items()
               if (name in fetched and name not in unreachable) or not missing_files(spec, data_dir)]
    absent_named = [name for name in named if name not in present]
    if absent_named:  # (the workflow cannot start, so its download rule is not suggested)
        name = absent_named[0]
        raise DataError(missing_files(specs[name], data_dir)[0], None,
                        f"file not found; dataset {name!r} is named in run_datasets",
                        describe_missing(name, specs[name], data_dir, workflow_download=False)
                        + f" Or remove {name!r} from run_datasets")
    if not present:
        how = " ".join(unreachable.get(name) or describe_missing(name, spec, data_dir, workflow_download=False)
                       for name, spec in specs.items())
        raise ConfigError(f"no selected dataset has its files. Fix: get the files of one of them, or "
                          f"add a dataset whose files are present. {how}")
    return present, {name: unreachable.get(name) or describe_missing(name, spec, data_dir)
                     for name, spec in specs.items() if name not in present}


def unfetched_report(unreachable: dict[str, str]) -> str:
    """The lines the workflow ends with when some datasets could not be downloaded: each with
    where its files come from and where to put them (empty when none)."""
    if not unreachable:
        return ""
    lines = [f"{len(unreachable)} dataset(s) could not be downloaded and did not run "
             "(also listed in results/tables/summary.md):"]
    lines += [f"  {name}: {why}" for name, why in unreachable.items()]
    return "\n".join(lines)


def sweep_datasets(config: dict, available: list[str]) -> list[str]:
    """The datasets of the tuning sweep: ``sweep.datasets`` (each must be available) or every
    available one."""
    names = config["sweep"]["datasets"] or available
    absent = [n for n in names if n not in available]
    if absent:
        raise ConfigError(f"sweep.datasets: {absent} are not available (files missing or not configured). "
                          "Fix: remove them from sweep.datasets or provide their files")
    return names
