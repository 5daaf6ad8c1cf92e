"""config/README.md is generated from the config schema and documents every key
(icda.config_reference, ``python -m icda config-reference``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from icda.cli import main
from icda.config_reference import (REFERENCE_PATH, SCHEMA_PATH, key_docs, load_schema,
                                   render_reference, undocumented)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def schema() -> dict:
    return load_schema(REPO / SCHEMA_PATH)


def test_committed_reference_equals_the_generated_one(schema):
    committed = (REPO / REFERENCE_PATH).read_text(encoding="utf-8")
    assert committed == render_reference(schema), (
        "config/README.md is out of date with workflow/schemas/config.schema.yaml: run "
        "`python -m icda config-reference` from the repository root and commit the result")


def test_every_schema_key_has_a_description(schema):
    assert not undocumented(schema), (
        f"add `description:` to these keys of {SCHEMA_PATH}, then run "
        f"`python -m icda config-reference`: {undocumented(schema)}")


def test_every_key_of_the_shipped_configs_is_in_the_reference(schema):
    documented = {d.key for d in key_docs(schema)}

    def keys(mapping: dict, prefix: str = "") -> set[str]:
        out = set()
        for key, value in mapping.items():
            path = f"{prefix}{key}"
            if prefix in ("datasets.", "overrides."):
                path = f"{prefix}<name>"
            elif prefix.startswith(("datasets.<name>.synthetic", "datasets.<name>.md5", "datasets.<name>.git_blob",
                                    "report.groups")):
                continue  # free mappings: generator arguments, file checksums, table names
            out.add(path)
            if isinstance(value, dict):
                out |= keys(value, path + ".")
        return out

    for name in ("config/config.yaml", "config/paper.yaml", "config/offline.yaml",
                 "tests/fixtures/tiny_workflow.yaml"):
        used = keys(yaml.safe_load((REPO / name).read_text()))
        used -= {"datasets.<name>", "overrides.<name>"}
        # an override is documented as the key it overrides (overrides.<name>.model.k: model.k)
        used = {key.removeprefix("overrides.<name>.") for key in used}
        assert used <= documented, f"{name}: {sorted(used - documented)} not in config/README.md"


def test_a_new_key_shows_up_and_check_mode_catches_drift(schema, tmp_path, capsys):
    schema["properties"]["model"]["properties"]["new_key"] = {
        "type": "integer", "default": 3, "description": "a key added later"}
    text = render_reference(schema)
    assert "| `model.new_key` | integer | `3` | a key added later |" in text
    changed = tmp_path / "schema.yaml"
    changed.write_text(yaml.safe_dump(schema, allow_unicode=True, sort_keys=False))
    out = tmp_path / "README.md"
    out.write_text((REPO / REFERENCE_PATH).read_text(encoding="utf-8"))
    assert main(["config-reference", "--schema", str(changed), "--out", str(out), "--check"]) == 1
    assert "+| `model.new_key`" in capsys.readouterr().out
    assert main(["config-reference", "--schema", str(changed), "--out", str(out)]) == 0
    assert main(["config-reference", "--schema", str(changed), "--out", str(out), "--check"]) == 0


def _schema_defaults(schema: dict, section: str) -> dict:
    return {key: spec["default"] for key, spec in schema["properties"][section]["properties"].items()
            if "default" in spec}


@pytest.mark.parametrize("section, cls_name", [("encoder", "EncoderSettings"), ("model", "ModelSettings"),
                                               ("train", "TrainSettings"), ("icda", "IcdaSettings")])
def test_the_settings_dataclasses_default_to_the_schema(section, cls_name):
    """One source for each default: the schema's (the value that runs and that config/README.md
    shows); the dataclasses of icda.settings must say the same."""
    import dataclasses

    from icda import settings

    schema = load_schema(REPO / SCHEMA_PATH)  # (the module fixture is changed by another test)
    cls = getattr(settings, cls_name)
    fields = {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}
    expected = _schema_defaults(schema, section)
    differ = {k: (fields[k], v) for k, v in expected.items() if k in fields and fields[k] != v}
    assert not differ, f"{cls_name} defaults (dataclass, schema) differ: {differ}"
    assert set(expected) <= set(fields), f"schema keys without a dataclass default: {set(expected) - set(fields)}"


def test_config_yaml_restates_only_the_schema_defaults():
    """config/config.yaml shows the defaults for reading; a value there that is not the schema's
    default would be a second definition of it."""
    schema = load_schema(REPO / SCHEMA_PATH)
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    differ = {}
    for key, value in config.items():
        if key == "datasets":
            continue
        spec = schema["properties"][key]
        if isinstance(value, dict):
            defaults = _schema_defaults(schema, key) if "properties" in spec else spec.get("default", {})
            differ |= {f"{key}.{k}": (v, defaults.get(k)) for k, v in value.items() if defaults.get(k) != v}
        elif spec.get("default") != value:
            differ[key] = (value, spec.get("default"))
    assert not differ, f"config/config.yaml values that are not the schema defaults (value, default): {differ}"
