"""keep_models: chosen: prune-models removes the model.pt of the candidates no choice reports,
and only those (a reported model, or any other file, stays)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icda.cli import main
from icda.errors import DataError
from icda.records import CandidateScore, Choice
from icda.steps.prune import prune_models


def _candidate(folder: Path, name: str) -> CandidateScore:
    path = folder / name
    path.mkdir(parents=True)
    for file in ("model.pt", "model.json", "predictions.json", "history.json"):
        (path / file).write_bytes(b"x" * 1000)
    return CandidateScore(name, str(path), name == "warm", None, 0.5, 0.5, 0.8, False, 1, None, 0.5)


def _choice(tmp_path: Path, k: int, names: list[str], chosen: str, ensemble: list[list[str]] | None = None) -> Path:
    scores = [_candidate(tmp_path / f"iter{k}/candidates", name) for name in names]
    choice = Choice(k, "original_dev", None, next(s for s in scores if s.name == chosen), scores,
                    ensemble=ensemble)
    path = tmp_path / f"iter{k}/choice.json"
    choice.write(path)
    return path


def test_prune_removes_only_unreported_candidates_models(tmp_path):
    """Three iterations of three candidates: iteration 2 reports an ensemble of its and iteration
    1's chosen candidates. Kept: each choice's chosen model.pt (and the ensemble's members);
    removed: the 6 others; every predictions.json, history.json and model.json stays."""
    c0 = _choice(tmp_path, 0, ["seed1", "seed2", "seed3"], "seed2")
    c1 = _choice(tmp_path, 1, ["seed1", "seed2", "seed3"], "seed3")
    c2 = _choice(tmp_path, 2, ["seed1", "seed2", "seed3"], "seed1",
                 ensemble=[[str(tmp_path / "iter1/candidates/seed3")], [str(tmp_path / "iter2/candidates/seed1")]])
    record = prune_models([c0, c1, c2], tmp_path / "pruned.json")
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("model.pt"))
    assert left == ["iter0/candidates/seed2/model.pt", "iter1/candidates/seed3/model.pt",
                    "iter2/candidates/seed1/model.pt"]
    assert len(record["removed"]) == 6 and record["bytes_removed"] == 6000
    assert len(list(tmp_path.rglob("predictions.json"))) == len(list(tmp_path.rglob("model.json"))) == 9
    assert json.loads((tmp_path / "pruned.json").read_text()) == record
    # a second pass removes nothing (the workflow may rerun it)
    assert prune_models([c0, c1, c2], tmp_path / "pruned.json")["removed"] == []


def test_a_missing_reported_model_stops_pruning_before_anything_is_removed(tmp_path, capsys):
    c0 = _choice(tmp_path, 0, ["seed1", "seed2"], "seed2")
    (tmp_path / "iter0/candidates/seed2/model.pt").unlink()
    with pytest.raises(DataError, match="the model it reports, .*seed2/model.pt, is missing"):
        prune_models([c0], tmp_path / "pruned.json")
    assert (tmp_path / "iter0/candidates/seed1/model.pt").exists() and not (tmp_path / "pruned.json").exists()
    assert main(["prune-models", "--choices", str(c0), "--out", str(tmp_path / "pruned.json")]) == 2
    assert "keep_models: all" in capsys.readouterr().err
