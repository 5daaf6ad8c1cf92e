"""The report's inputs besides the evaluations: table groups and the unavailable datasets."""

from __future__ import annotations

import re
from pathlib import Path

from icda.errors import ConfigError, DataError
from icda.io import read_json_file, read_yaml
from icda.schema import section_defaults


#: what a table group's name may be (as a dataset's): it becomes the file names <name>.csv/.md/.tex
GROUP_NAME = re.compile(r"[A-Za-z0-9_-]+")
#: what a group's ERASER tables add to its name (<name>_eraser.csv/.md, :mod:`icda.report.tables`)
ERASER_SUFFIX = "_eraser"
#: the group names taken in the tables' folder (results/tables), in lower case: name → what has it
RESERVED_GROUP_NAMES = {
    "summary": "summary.md (every table and the unavailable datasets)",
    "all_results": "all_results.csv (the long-form results)",
    "compute": "compute.csv and compute.md (the compute cost)",
    "compute_jobs": "compute_jobs.csv (the compute cost of each job)",
    "your_datasets": "the table of the datasets in no group (your own datasets)",
}


def check_group_names(groups: dict, where: str) -> None:
    """Check that every table group name is a file name of its own in the tables' folder.

    Raises:
        ConfigError: a name is not letters, digits, ``_`` and ``-`` (``../x`` would write outside
            the folder); it is one of :data:`RESERVED_GROUP_NAMES` in any case (its tables and
            that file would overwrite each other); two names differ only in case (one file on
            a case-insensitive file system); or one is another's name with :data:`ERASER_SUFFIX`
            (its tables are the other's ERASER tables). Each names ``<where>.<name>`` and the fix.
    """
    seen: dict[str, str] = {}
    for name in groups:
        if not GROUP_NAME.fullmatch(name):
            raise ConfigError(f"{where}: {name!r} is not a table name: group names become file names "
                              "(<name>.csv, .md, .tex), so use letters, digits, _ and - only. "
                              "Fix: rename the group")
        taken = RESERVED_GROUP_NAMES.get(name.lower())
        if taken is not None:
            raise ConfigError(f"{where}.{name}: the name is taken by {taken} in the tables' folder "
                              f"(results/tables); the group's tables would overwrite it or be overwritten. "
                              f"Fix: rename the group, e.g. {name}_table")
        if name.lower() in seen:
            raise ConfigError(f"{where}: {seen[name.lower()]!r} and {name!r} differ only in case, so their "
                              "tables are one file on a case-insensitive file system. Fix: rename one of them")
        seen[name.lower()] = name
    for name in groups:
        base = seen.get(name.lower().removesuffix(ERASER_SUFFIX)) if name.lower().endswith(ERASER_SUFFIX) else None
        if base is not None:
            raise ConfigError(f"{where}: the ERASER tables of group {base!r} are {base}{ERASER_SUFFIX}.csv and .md, "
                              f"the files of group {name!r}. Fix: rename {name!r}")


def _check_groups(groups: object, where: str) -> dict[str, list[str]]:
    if not (isinstance(groups, dict) and groups and all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(d, str) for d in v)
            for k, v in groups.items())):
        raise ConfigError(f"{where}: table groups must be a non-empty mapping of table name to "
                          'a list of dataset names, e.g. {"table2_llm": ["connect", '
                          '"restaurant"]}')
    check_group_names(groups, where)
    return groups


def load_groups(groups_path: Path | None = None, config_path: Path | None = None) -> dict[str, list[str]]:
    """Table groups from a JSON file (the workflow's ``results/groups.json``) or a config's
    ``report: groups:``, else the schema's default ``report.groups`` (:mod:`icda.schema`).

    Raises:
        DataError: a file is missing or not JSON/YAML.
        ConfigError: the groups are not a mapping of name → list of dataset names, or a name is
            not a file name of its own (:func:`check_group_names`).
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
