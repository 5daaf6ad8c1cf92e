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
            elif prefix.startswith(("datasets.<name>.synthetic", "datasets.<name>.md5", "report.groups")):
                continue  # free mappings: generator arguments, file checksums, table names
            out.add(path)
            if isinstance(value, dict):
                out |= keys(value, path + ".")
        return out

    for name in ("config/config.yaml", "config/paper.yaml", "config/offline.yaml",
                 "tests/fixtures/tiny_workflow.yaml"):
        used = keys(yaml.safe_load((REPO / name).read_text()))
        used -= {"datasets.<name>", "overrides.<name>"}
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
