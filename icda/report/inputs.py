"""The report's inputs besides the evaluations: table groups and the unavailable datasets."""

from __future__ import annotations

from pathlib import Path

from icda.errors import ConfigError, DataError
from icda.io import read_json_file, read_yaml
from icda.schema import section_defaults


def _check_groups(groups: object, where: str) -> dict[str, list[str]]:
    if not (isinstance(groups, dict) and groups and all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(d, str) for d in v)
            for k, v in groups.items())):
        raise ConfigError(f"{where}: table groups must be a non-empty mapping of table name to "
                          'a list of dataset names, e.g. {"table2_llm": ["connect", '
                          '"restaurant"]}')
    return groups


def load_groups(groups_path: Path | None = None, config_path: Path | None = None) -> dict[str, list[str]]:
    """Table groups from a JSON file (the workflow's ``results/tables/groups.json``) or a config's
    ``report: groups:``, else the schema's default ``report.groups`` (:mod:`icda.schema`).

    Raises:
        DataError: a file is missing or not JSON/YAML.
        ConfigError: the groups are not a mapping of name → list of dataset names.
    """
    if groups_path is not None:
        fix = 'write a JSON object {"table name": ["dataset", ...]}'
        obj = read_json_file(groups_path, fix, fix)
        return _check_groups(obj, str(groups_path))
    if config_path is not None:
        config = read_yaml(config_path, "pass the workflow's config file") or {}
        groups = (config.get("report") or {}).get("groups") if isinstance(config, dict) else None
        if groups is not None:
            return _check_groups(groups, f"{config_path}: report.groups")
    return section_defaults("report")["groups"]


def load_unavailable(path: Path | None) -> dict[str, str]:
    """``{"dataset": "what is missing and how to get it"}`` from a JSON file ({} for None).

    Raises:
        DataError: the file is missing, not JSON, or not a mapping of name → text.
    """
    if path is None:
        return {}
    fix = 'write a JSON object {"dataset": "what is missing and how to get it"}'
    obj = read_json_file(path, fix, fix)
    if not (isinstance(obj, dict) and all(isinstance(v, str) for v in obj.values())):
        raise DataError(path, None, "not a mapping of dataset name to reason", fix)
    return obj
