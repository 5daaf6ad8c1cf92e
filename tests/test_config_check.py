"""The configuration check (icda.workflow_config.config_check): one line per problem with the key and the
fix, values the workflow cannot use refused in words, and YAML alias expansion bounded."""

from __future__ import annotations

import re
import time

import pytest
import yaml

from icda.errors import ConfigError, DataError
from icda.workflow_config import config_check
from test_workflow import REPO, snakemake
from toy_workflow import TOY

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def test_config_errors_one_line_per_problem(tmp_path):
    config = {"datasets": {"toy": TOY}, "colour": "red", "train": {"lr": -1}}
    with pytest.raises(ConfigError) as err:
        config_check.check_config(config, SCHEMA)
    lines = str(err.value).splitlines()
    assert lines[1].strip().startswith("colour: unknown key (allowed: data_dir, download, run_datasets,")
    assert lines[2].strip().startswith("train.lr: -1 is less than or equal to the minimum of 0")
    assert lines[-1].startswith("Fix:") and len(lines) == 4
    with pytest.raises(ConfigError, match=r"datasets: 'my data; rm' does not match"):
        config_check.check_config({"datasets": {"my data; rm": TOY}}, SCHEMA)

    bad = tmp_path / "bad.yaml"
    bad.write_text("colour: red\n")
    proc = snakemake("-n", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                     "--configfile", str(REPO / "config/config.yaml"), str(bad), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "colour: unknown key" in out and len(out.splitlines()) < 15


@pytest.mark.parametrize("config, message", [
    ({"runs": [[-1, 2]]}, "runs.0.0: -1 is less than the minimum of 0 (seeds are folder names"),
    ({"sweep": {"seeds": [-3]}}, "sweep.seeds.0: -3 is less than the minimum of 0 (seeds are folder names"),
    ({"comp": {"lambdas": [1e-5]}}, "comp.lambdas.0: 1e-05 is less than the minimum of 0.0001 (λ is a folder name"),
    ({"comp": {"lambdas": [-1]}}, "comp.lambdas.0: -1 is less than the minimum of 0.0001 (λ is a folder name"),
    ({"sweep": {"points": {"a b": {}}}}, "sweep.points: 'a b' does not match '^[A-Za-z0-9_-]+$' (point names become "
                                         "folder names and shell words: letters, digits, _ and - only)"),
    ({"sweep": {"points": {"..": {}}}}, "sweep.points: '..' does not match"),
    ({"theory": {"p1": 1.5}}, "theory.p1: 1.5 is greater than the maximum of 1 (p(Y1|X1)"),
    ({"theory": {"p2": -0.2}}, "theory.p2: -0.2 is less than the minimum of 0.5"),
    ({"theory": {"betas": [0.5, 2]}}, "theory.betas.1: 2 is greater than the maximum of 1"),
    ({"datasets": {"toy": TOY | {"seed": -1}}}, "datasets.toy.seed: -1 is less than the minimum of 0"),
])
def test_values_the_workflow_cannot_use_fail_the_schema_in_words(config, message):
    with pytest.raises(ConfigError) as err:
        config_check.check_config({"datasets": {"toy": TOY}} | config, SCHEMA)
    assert message in str(err.value), str(err.value)


@pytest.mark.parametrize("config, key", [
    ({"train": {"lr": float("nan")}}, "train.lr: nan"),
    ({"theory": {"p1": float("nan")}}, "theory.p1: nan"),
    ({"comp": {"lambdas": [0.5, float("nan")]}}, "comp.lambdas.1: nan"),
    ({"train": {"grad_clip": float("inf")}}, "train.grad_clip: inf"),
    ({"model": {"comp_lambda": float("-inf")}}, "model.comp_lambda: -inf"),
    ({"overrides": {"toy": {"train": {"weight_decay": float("nan")}}}}, "overrides.toy.train.weight_decay: nan"),
    ({"datasets": {"toy": TOY | {"synthetic": {"p_x1": float("nan")}}}}, "datasets.toy.synthetic.p_x1: nan"),
])
def test_a_number_that_is_not_finite_fails_the_check_naming_its_key(config, key):
    """NaN passes every JSON-schema bound (each comparison with NaN is false): settings.json
    recorded it and training failed late."""
    with pytest.raises(ConfigError) as err:
        config_check.check_config({"datasets": {"toy": TOY}} | config, SCHEMA)
    assert f"{key} is not a finite number (NaN and infinity pass no range check" in str(err.value), str(err.value)


@pytest.mark.parametrize("config, message", [
    ({"encoder": {"max_sentences": 10**9}}, "encoder.max_sentences: 1000000000 is greater than the maximum of 10000 "
                                            "(sentences per document the model sees"),
    ({"overrides": {"toy": {"encoder": {"max_sentences": 10**9}}}},
     "overrides.toy.encoder.max_sentences: 1000000000 is greater than the maximum of 10000"),
    ({"model": {"d_model": 10**6}}, "model.d_model: 1000000 is greater than the maximum of 8192"),
    ({"model": {"dff": 10**7}}, "model.dff: 10000000 is greater than the maximum of 65536"),
    ({"model": {"layers": 1000}}, "model.layers: 1000 is greater than the maximum of 96"),
    ({"encoder": {"max_tokens": 10**6}}, "encoder.max_tokens: 1000000 is greater than the maximum of 16384"),
    ({"encoder": {"batch_size": 10**9}}, "encoder.batch_size: 1000000000 is greater than the maximum of 65536"),
])
def test_sizes_that_allocate_are_bounded(config, message):
    """encoder.max_sentences 10⁹ asked for 128 GB in train (a positional table of
    max_sentences × d_model floats); every size that allocates has an upper bound."""
    with pytest.raises(ConfigError) as err:
        config_check.check_config({"datasets": {"toy": TOY}} | config, SCHEMA)
    assert message in str(err.value), str(err.value)


def test_nan_written_in_yaml_fails_the_check():
    config = yaml.safe_load("datasets: {}\ntrain: {lr: .nan}\ntheory: {p1: .NaN}\ncomp: {lambdas: [.nan]}\n")
    with pytest.raises(ConfigError) as err:
        config_check.check_config(config | {"datasets": {"toy": TOY}}, SCHEMA)
    for key in ("train.lr: nan", "theory.p1: nan", "comp.lambdas.0: nan"):
        assert f"{key} is not a finite number" in str(err.value)


def test_every_lambda_the_schema_accepts_fits_the_wildcard():
    """The λ bounds keep str(λ) in the COMP folder pattern lambda<[0-9.]+> (Python writes
    floats below 1e-4 or from 1e16 in exponent form)."""
    bounds = yaml.safe_load(SCHEMA.read_text())["properties"]["comp"]["properties"]["lambdas"]["items"]
    for lam in (bounds["minimum"], 0.5, 1, 0.30000000000000004, bounds["maximum"], float(bounds["maximum"])):
        assert re.fullmatch(r"[0-9.]+", str(lam)), lam
    assert not re.fullmatch(r"[0-9.]+", str(bounds["minimum"] / 10))  # the bound is where it must be


def _alias_bomb(levels: int) -> str:
    """YAML whose report.groups nests aliases `levels` deep, 9 copies a level (9^levels values)."""
    lines = ["report:", "  groups:", '    g0: &a0 ["s", "s", "s", "s", "s", "s", "s", "s", "s"]']
    lines += [f"    g{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_alias_expansion_of_config_files_is_bounded(tmp_path):
    from icda.io import read_yaml

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_alias_bomb(9))
    with pytest.raises(DataError, match="its YAML aliases expand it to more than 100,000 values") as err:
        read_yaml(bomb, "")
    assert err.value.path == str(bomb) and "nest fewer aliases" in err.value.fix
    assert read_yaml(REPO / "config/config.yaml", "")["datasets"]["smell"]["public"] is False  # its aliases are fine
    start = time.time()
    with pytest.raises(ConfigError, match="config: expands to more than 100,000 values through YAML aliases"):
        config_check.check_config(yaml.safe_load(bomb.read_text()), SCHEMA)
    assert time.time() - start < 10

    proc = snakemake("-n", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile",
                     str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml"), str(bomb),
                     check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and f"{bomb}: its YAML aliases expand it to more than 100,000 values" in out
