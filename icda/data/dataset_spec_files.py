"""Reading dataset specs: the spec JSON the workflow writes for a job, or the ``datasets:`` of a
YAML workflow config (for the commands run without Snakemake)."""

from __future__ import annotations

import sys
from pathlib import Path

from icda.errors import ConfigError
from icda.io import read_json


def load_spec_file(path: str | Path) -> tuple[str, dict, Path]:
    """Read a spec file as the workflow writes it: JSON ``{"name": ..., "data_dir": ..., **spec}``.

    Returns:
        ``(name, spec, data_dir)``; the spec is not yet validated.

    Raises:
        ConfigError: the file is missing, not JSON, or lacks ``name``, or its ``data_dir`` is
            not a string.
    """
    path = Path(path)
    try:
        obj = read_json(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: spec file not found. Fix: check the --spec path") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}). Fix: write the spec as a JSON object") from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        raise ConfigError(f'{path}: no "name". Fix: write {{"name": ..., "data_dir": ..., **spec}}')
    spec = dict(obj)
    name = spec.pop("name")
    data_dir = spec.pop("data_dir", None)
    if data_dir is not None and not isinstance(data_dir, str):
        raise ConfigError(f'{path}: "data_dir" is {data_dir!r}, not a path. Fix: give the folder of the data '
                          "files as a string")
    if data_dir is None and spec.get("source", "files") == "files":
        raise ConfigError(f'{path}: no "data_dir" for dataset {name!r}. Fix: add "data_dir"')
    return name, spec, Path(data_dir or ".")


def load_config_datasets(path: str | Path) -> tuple[Path, dict[str, dict]]:
    """Read ``data_dir`` and ``datasets`` from a YAML workflow config (for use without Snakemake).

    Returns:
        ``(data_dir, {name: spec})``; the specs are not yet validated.

    Raises:
        ConfigError: the file is missing, not UTF-8, not YAML (or holds an integer of more than
            4,300 digits), or lacks ``datasets``, or ``data_dir`` (a string) while a dataset reads
            files (synthetic and llm datasets need none).
    """
    import yaml

    path = Path(path)
    try:
        with path.open(encoding="utf-8") as fh:
            config = yaml.safe_load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found. Fix: check the --config path") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}). Fix: correct the file") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}). Fix: convert the file "
                          "to UTF-8") from None
    except ValueError:  # an integer beyond Python's 4,300 digits (the YAML loader's int())
        raise ConfigError(f"{path}: a number has more than {sys.get_int_max_str_digits():,} digits, more than "
                          "Python reads. Fix: write it with fewer digits") from None
    if not isinstance(config, dict) or not isinstance(config.get("datasets"), dict):
        raise ConfigError(f"{path}: no `datasets` mapping. Fix: add `datasets: {{NAME: {{...}}}}`")
    if config.get("data_dir") is not None and not isinstance(config["data_dir"], str):
        raise ConfigError(f"{path}: `data_dir` is {config['data_dir']!r}, not a path. Fix: give the folder of "
                          "the data files as a string")
    generated = all(isinstance(s, dict) and s.get("source") in ("synthetic", "llm")
                    for s in config["datasets"].values())
    if not isinstance(config.get("data_dir"), str) and not generated:
        raise ConfigError(f"{path}: no `data_dir`. Fix: add `data_dir: PATH` (where the data files lie)")
    return Path(config.get("data_dir") or "."), config["datasets"]


def load_specs(
    spec_path: str | Path | None = None,
    config_path: str | Path | None = None,
    names: list[str] | None = None,
) -> list[tuple[str, dict, Path]]:
    """The ``(name, spec, data_dir)`` triples named on a command line: from a spec file
    (:func:`load_spec_file`), or from a YAML config (:func:`load_config_datasets`) for the
    datasets in ``names`` (all of them when None).

    Raises:
        ConfigError: neither or both sources given, or a named dataset is not in the config.
    """
    if (spec_path is None) == (config_path is None):
        raise ConfigError("give either --spec SPEC.json or --config CONFIG.yaml. Fix: pass exactly one")
    if spec_path is not None:
        return [load_spec_file(spec_path)]
    data_dir, datasets = load_config_datasets(config_path)
    for name in names or []:
        if name not in datasets:
            raise ConfigError(f"{config_path}: no dataset {name!r} under `datasets`. "
                              f"Fix: use one of {', '.join(datasets)}")
    return [(name, datasets[name], data_dir) for name in (names or list(datasets))]


def load_one_spec(spec_path: str | Path | None, config_path: str | Path | None, name: str | None,
                  command: str) -> tuple[str, dict, Path]:
    """The one dataset a command works on (``prepare``, ``generate``): from ``--spec``, or from
    ``--config`` and ``--dataset`` (:func:`load_specs`).

    Raises:
        ConfigError: ``--config`` without ``--dataset`` (naming ``command``), or as
            :func:`load_specs`.
    """
    if config_path is not None and name is None:
        raise ConfigError(f"--config needs --dataset NAME. Fix: name the dataset to {command}")
    [one] = load_specs(spec_path, config_path, [name] if config_path is not None else None)
    return one
