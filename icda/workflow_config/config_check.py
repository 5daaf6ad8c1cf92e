"""The workflow configuration checked before any job runs: against its JSON schema (with the
sections' own schemas under ``overrides`` and ``sweep.points``, strict integers, YAML 1.2
floats), and the names the workflow turns into folders, files and table columns."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any, Sequence

from icda.errors import ConfigError
from icda.io import ALIAS_FIX, MAX_YAML_VALUES, expanded_size, read_yaml
from icda.report.inputs import check_group_names

#: the folders of results/ that hold no dataset's results (a dataset's are results/<dataset>/):
#: name → what it holds
RESULTS_FOLDERS = {
    "tables": "the result tables", "cache": "the embedding and LLM caches", "plots": "the plots",
    "logs": "the job logs", "theory": "the theory figures", "benchmarks": "the jobs' measured cost",
    "sweep": "the tuning sweep",
}
#: schema checks whose message gets the failing key's description (what the value must be, in words)
_EXPLAINED = ("pattern", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def check_config(config: dict, schema_path: str | Path, config_files: Sequence[str | Path] = ()) -> None:
    """Check ``config`` against the workflow's JSON schema, before Snakemake's ``validate`` (which
    fills in the defaults but reports a problem with the whole config and schema).

    First its size: a config whose YAML aliases expand it beyond
    :data:`icda.io.MAX_YAML_VALUES` values is refused before anything walks it.

    Args:
        config_files: the files ``config`` was read from (``workflow.configfiles``), to name the
            one at fault.

    Raises:
        DataError: one of ``config_files`` expands to too many values (naming it).
        ConfigError: ``config`` expands to too many values (from no file, e.g. ``--config``); or
            one line per problem: the key, what is wrong (for an unknown key, the allowed keys;
            for a value out of range or of the wrong form, what it must be), and the fix. A
            float where an integer is due (``n_runs: 1.0``) is a problem; a YAML 1.2 float
            (``lr: 1e-4``, which PyYAML reads as a string) where a number is due is read as the
            float. Every number must be finite: ``.nan``, ``.inf`` and ``-.inf`` are a problem
            wherever they stand (JSON Schema's bounds let NaN through). ``overrides.<dataset>`` and ``sweep.points.<point>`` are checked against the
            schemas of the sections they override.
    """
    if expanded_size(config) > MAX_YAML_VALUES:
        for path in config_files:
            read_yaml(path, "give an existing config file")  # raises for the file at fault
        raise ConfigError(f"config: expands to more than {MAX_YAML_VALUES:,} values through YAML aliases. "
                          f"Fix: {ALIAS_FIX}")

    schema = _with_section_schemas(read_yaml(schema_path, "run the workflow from the repository's Snakefile"))
    _read_yaml12_floats(config, schema)
    problems = [f"{key}: {value} is not a finite number (NaN and infinity pass no range check, and "
                "training or the theory would fail on them late)" for key, value in _non_finite(config)]
    for error in _strict_validator(schema).iter_errors(config):
        key = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = list(error.schema.get("properties", {}))
            problems += [f"{key + '.' if key else ''}{name}: unknown key (allowed: {', '.join(allowed)})"
                         for name in error.instance if name not in allowed]
        else:
            why = error.schema.get("description") if error.validator in _EXPLAINED else None
            message = error.message if len(error.message) <= 200 else f"{error.message[:120]}…{error.message[-80:]}"
            problems.append(f"{key or 'config'}: {message}" + (f" ({why})" if why else ""))
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(sorted(problems))
                          + f"\nFix: correct these keys (each key, its type and default: {schema_path})")
    check_names(config)


def _non_finite(value: Any, key: str = "") -> list[tuple[str, float]]:
    """The (dotted key, value) of every NaN or infinite float in ``value``."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [(key or "config", value)]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return []
    return [found for name, item in items for found in _non_finite(item, f"{key}.{name}" if key else str(name))]


def _strict_validator(schema: dict):
    """A JSON-schema validator whose ``integer`` is a YAML integer: JSON Schema counts ``1.0`` as
    an integer, but the workflow's integers become loop bounds, seeds, widths and folder names
    (``seed42.0``), so ``n_runs: 1.0`` must be refused here, not fail inside a job."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool))
    return jsonschema.validators.extend(base, type_checker=checker)(schema)


def _with_section_schemas(schema: dict) -> dict:
    """``schema`` with the sections' own schemas (keys, types, bounds; no defaults) under
    ``overrides.<dataset>`` and ``sweep.points.<point>``, so that an override is checked like the
    key it overrides. The schema file keeps them plain objects: Snakemake's ``validate`` would
    fill an override with every default of its section."""
    out = copy.deepcopy(schema)
    props = out["properties"]
    for holder in (props["overrides"]["additionalProperties"]["properties"],
                   props["sweep"]["properties"]["points"]["additionalProperties"]["properties"]):
        for section in holder:
            holder[section] = _without_defaults(props[section])
    return out


def _without_defaults(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _without_defaults(value) for key, value in schema.items() if key != "default"}
    return schema


#: a float as YAML 1.2 writes it but PyYAML (YAML 1.1) reads as a string: ``1e-4``, ``5E3``
_YAML12_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _read_yaml12_floats(value: Any, schema: dict) -> None:
    """Turn, in place, the strings of ``value`` that are YAML 1.2 floats (``1e-4``) into floats
    where ``schema`` wants a number: PyYAML reads ``lr: 1e-4`` as the string ``"1e-4"``."""
    def wants_number(spec: Any) -> bool:
        kinds = spec.get("type") if isinstance(spec, dict) else None
        return "number" in (kinds if isinstance(kinds, list) else [kinds])

    def convert(item: Any, spec: Any) -> Any:
        if isinstance(item, str) and wants_number(spec) and _YAML12_FLOAT.fullmatch(item.strip()):
            return float(item)
        _read_yaml12_floats(item, spec)
        return item

    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        properties, other = schema.get("properties", {}), schema.get("additionalProperties")
        for key in value:
            spec = properties.get(key, other)
            value[key] = convert(value[key], spec)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        value[:] = [convert(item, schema["items"]) for item in value]


def check_names(config: dict) -> None:
    """Check that the names the workflow turns into folders, files and table columns do not
    collide: dataset names (results/<dataset>/, a table column titled after it) and report
    group names (results/tables/<group>.csv, .md, .tex).

    Raises:
        ConfigError: a dataset is named like one of :data:`RESULTS_FOLDERS` (in any case); two
            dataset names differ only in case or get the same column title
            (:func:`icda.report.tables.display_name`); a report group name is taken or
            malformed (:func:`icda.report.inputs.check_group_names`); or a group lists a dataset
            that is not under ``datasets``. Each names the key and the fix.
    """
    from icda.report.tables import display_name  # pandas: loaded by the workflow's report rules anyway

    folders: dict[str, str] = {}  # lower-case name → dataset
    titles: dict[str, str] = {}  # lower-case column title → dataset
    for name in config.get("datasets") or {}:
        folder = name.lower()
        if folder in RESULTS_FOLDERS:
            raise ConfigError(f"datasets.{name}: results/{folder}/ holds {RESULTS_FOLDERS[folder]}, so this "
                              f"dataset's results (results/<dataset>/) would mix with them. Fix: rename the "
                              f"dataset, e.g. {name}_data")
        other = folders.get(folder)
        if other is not None:
            raise ConfigError(f"datasets: {other!r} and {name!r} differ only in case: the result tables title "
                              f"both {display_name(name)!r}, and on a case-insensitive file system their "
                              "folders results/<dataset>/ are one. Fix: rename one of them")
        title = display_name(name).lower()
        other = titles.get(title)
        if other is not None:
            raise ConfigError(f"datasets: {other!r} and {name!r} get the same column title "
                              f"{display_name(name)!r} in the result tables. Fix: rename one of them")
        folders[folder], titles[title] = name, name
    groups = (config.get("report") or {}).get("groups")
    if isinstance(groups, dict):
        check_group_names(groups, "report.groups")
        for group, members in groups.items():
            unknown = [name for name in members or [] if name not in (config.get("datasets") or {})]
            if unknown:
                raise ConfigError(f"report.groups.{group}: {unknown[0]!r} is not a dataset under `datasets` "
                                  f"(configured: {', '.join(config.get('datasets') or {})}), so its column "
                                  "would stay empty. Fix: correct the name, or define the dataset")
