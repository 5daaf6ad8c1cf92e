"""a synthetic dataset's generator arguments are checked when the config is
read (the schema and the dataset spec), not by a traceback when ``prepare`` runs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from icda.data.dataset_spec import validate_spec
from icda.data.synthetic import check_synthetic, generate_synthetic
from icda.errors import ConfigError
from icda.workflow_config import config_check
from test_workflow import REPO

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
SIZES = {"n_train": 8, "n_dev": 4, "n_test": 4}


def _spec(**synthetic) -> dict:
    return {"source": "synthetic", "synthetic": SIZES | synthetic}


@pytest.mark.parametrize("change, key", [
    ({"n_train": -5}, "n_train"), ({"n_train": "240"}, "n_train"), ({"n_train": 2.5}, "n_train"),
    ({"n_train": 1e9}, "n_train"), ({"n_train": True}, "n_train"), ({"p_x1": 1.5}, "p_x1"),
    ({"p_x1": float("nan")}, "p_x1"), ({"n_aspects": 0}, "n_aspects"), ({"verdict": "middle"}, "verdict"),
    ({"max_sentences": 2}, "max_sentences"), ({"seed": -1}, "seed"), ({"min_sentences": 0}, "min_sentences"),
])
def test_bad_generator_arguments_are_refused_at_config_time(change, key):
    """The issue's values, each accepted by the dry run before (n_train: true was taken as 1)."""
    with pytest.raises(ConfigError, match=rf"^datasets\.syn\.synthetic\.{key}: .* Fix: "):
        validate_spec("syn", _spec(**change))
    if change != {"max_sentences": 2}:  # below min_sentences' default: the spec's check, not the schema's
        with pytest.raises(ConfigError, match=rf"datasets\.syn\.synthetic\.{key}"):
            config_check.check_config({"datasets": {"syn": _spec(**change)}}, SCHEMA)


def test_a_verdict_needs_two_classes():
    with pytest.raises(ConfigError, match="synthetic.verdict: needs two classes"):
        validate_spec("syn", _spec(verdict="end") | {"classes": 3})
    with pytest.raises(ConfigError, match="datasets.syn.classes: 9 classes for a synthetic dataset"):
        validate_spec("syn", _spec() | {"classes": 9})


ARGS = st.fixed_dictionaries({}, optional={
    "n_train": st.one_of(st.integers(-3, 12), st.booleans(), st.floats(allow_nan=True), st.text(max_size=3)),
    "p_x1": st.one_of(st.floats(allow_nan=True), st.integers(-1, 2), st.booleans()),
    "n_aspects": st.one_of(st.integers(-1, 10), st.floats(0, 9)),
    "verdict": st.sampled_from([None, "start", "end", "either", "middle", ""]),
    "min_sentences": st.integers(-1, 12), "max_sentences": st.integers(-1, 12),
    "seed": st.one_of(st.integers(-2, 5), st.booleans()),
})


@settings(max_examples=60, deadline=None)
@given(ARGS)
def test_what_the_check_accepts_the_generator_generates(args):
    """Property: arguments check_synthetic accepts generate without error, with the sizes asked
    for; arguments it refuses name a key of the generator."""
    args = {"n_dev": 2, "n_test": 2, "n_train": 3} | args
    problem = check_synthetic(args)
    if problem is None:
        out = generate_synthetic(**args)
        assert [len(out[s]) for s in ("train", "dev", "test")] == [args["n_train"], 2, 2]
    else:
        assert problem[0] in args or problem[0] in ("min_sentences", "max_sentences")
