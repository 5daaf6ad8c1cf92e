"""The workflow configuration's JSON schema (``workflow/schemas/config.schema.yaml``): the one
source of every setting, its type and its default.

The Snakefile validates the configuration against it (filling in the defaults); the commands run
outside the workflow take their defaults from it through :func:`section_defaults` (and their
bounds through :func:`section_maxima`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from icda.io import read_yaml

#: the schema, in the repository that holds this package
SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def section_defaults(section: str, path: str | Path = SCHEMA) -> dict[str, Any]:
    """The defaults of the keys of one top-level section of the schema (e.g. ``"theory"``):
    ``{key: default}`` for every key that has one.

    Raises:
        DataError: the schema file is missing (the package runs outside its repository) or is
            not valid YAML.
        KeyError: the schema has no such section.
    """
    schema = read_yaml(path, "run from the icda repository, whose workflow/schemas/ holds the schema")
    properties = schema["properties"][section].get("properties", {})
    return {key: spec["default"] for key, spec in properties.items() if "default" in spec}



def section_maxima(section: str, path: str | Path = SCHEMA) -> dict[str, Any]:
    """The ``maximum`` of the keys of one top-level section of the schema that have one (the
    bounds of the ``theory`` section's costs, e.g.): ``{key: maximum}``.

    Raises:
        DataError: the schema file is missing or is not valid YAML.
        KeyError: the schema has no such section.
    """
    schema = read_yaml(path, "run from the icda repository, whose workflow/schemas/ holds the schema")
    properties = schema["properties"][section].get("properties", {})
    return {key: spec["maximum"] for key, spec in properties.items() if "maximum" in spec}
