"""The reported ensemble (icda.final_selector: ensemble, departure 28): several trained selectors
read as one, the window of iterations it takes its members from, and its model files."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import given, strategies as st

from icda.errors import DataError
from icda.loading import Workspace, save_ensemble, save_model
from icda.model import CachedSentences, RationaleNetwork, SelectorEnsemble
from icda.model_selection import ensemble_window
from icda.records import PAD, CandidateScore, Choice
from icda.settings import ModelSettings, Settings

VECTORS = torch.randn(40, 12, generator=torch.Generator().manual_seed(0))
IDS = torch.tensor([[0, 1, 2, 3, PAD], [4, 5, PAD, PAD, PAD], [6, 7, 8, 9, 10], [11, PAD, PAD, PAD, PAD]])


def _network(seed, k=1, **options):
    torch.manual_seed(seed)
    settings = ModelSettings(d_model=16, layers=1, heads=2, dff=32, dropout=0.0, k=k, **options)
    return RationaleNetwork(CachedSentences(VECTORS), settings, max_sentences=8).eval()


def _distribution(network, ids):
    return torch.softmax(network(ids).scores.masked_fill(ids < 0, float("-inf")), dim=-1)


@torch.no_grad()
def test_an_ensemble_of_one_network_is_that_network():
    network = _network(0)
    alone, ensemble = network(IDS), SelectorEnsemble([network])(IDS)
    assert torch.equal(ensemble.rationale_mask, alone.rationale_mask)
    assert torch.allclose(torch.softmax(ensemble.logits, -1), torch.softmax(alone.logits, -1), atol=1e-6)
    assert torch.allclose(torch.softmax(ensemble.scores.masked_fill(IDS < 0, float("-inf")), -1),
                          _distribution(network, IDS), atol=1e-6)


@pytest.mark.parametrize("k", [1, 2])
@torch.no_grad()
def test_the_ensemble_selects_the_top_of_its_members_averaged_distributions(k):
    members = [_network(seed, k) for seed in range(4)]
    out = SelectorEnsemble(members)(IDS)
    mean = sum(_distribution(m, IDS) for m in members) / len(members)
    for row, n in zip(range(len(IDS)), (IDS >= 0).sum(1).tolist()):
        expected = set(mean[row, :n].topk(min(k, n)).indices.tolist())
        assert set(out.rationale_mask[row].nonzero().squeeze(1).tolist()) == expected
    assert not out.rationale_mask[IDS < 0].any()
    # a softmax of the ensemble's scores gives the averaged distribution back (ERASER's soft scores)
    assert torch.allclose(torch.softmax(out.scores.masked_fill(IDS < 0, float("-inf")), -1), mean, atol=1e-6)
    # its class probabilities: each member's classifier on the ensemble's rationale, averaged
    selected = out.rationale_mask > 0.5
    probabilities = sum(torch.softmax(m(IDS, selected).logits, -1) for m in members) / len(members)
    assert torch.allclose(torch.softmax(out.logits, -1), probabilities, atol=1e-6)


@torch.no_grad()
def test_a_network_classifies_the_rationale_it_is_given():
    network = _network(1)
    own = network(IDS)
    assert torch.equal(network(IDS, own.rationale_mask > 0.5).logits, own.logits)
    other = torch.zeros_like(IDS, dtype=torch.bool)
    other[:, 0] = True  # every document's first sentence
    given = network(IDS, other)
    assert torch.equal(given.rationale_mask, other.float()) and torch.equal(given.scores, own.scores)
    first = network(IDS[:, :1])  # a document of its first sentence alone selects it
    assert torch.allclose(given.logits, first.logits, atol=1e-5)


@torch.no_grad()
def test_empty_logits_are_the_classifiers_bias_and_average_in_an_ensemble():
    a, b = _network(2), _network(3)
    assert torch.allclose(a.empty_logits()[0], a.classifier[-1].bias)
    mean = (torch.softmax(a.empty_logits(), -1) + torch.softmax(b.empty_logits(), -1)) / 2
    assert torch.allclose(torch.softmax(SelectorEnsemble([a, b]).empty_logits(), -1), mean, atol=1e-6)


def test_members_of_different_model_settings_are_refused():
    with pytest.raises(ValueError, match="different model settings"):
        SelectorEnsemble([_network(0), _network(0, k=2)])
    with pytest.raises(ValueError, match="at least one"):
        SelectorEnsemble([])


def _score(name, folder, degenerate=False):
    return CandidateScore(name=name, candidate_dir=folder, warm_start=False, seed=1, dev_loss=0.3,
                          original_dev_loss=0.4, dev_accuracy=0.9, degenerate=degenerate, best_epoch=2,
                          delta_A=0.1, score=0.3)


def _iteration(k, degenerate=(), chosen="seed2"):
    candidates = [_score(f"seed{s}", f"r/iter{k}/seed{s}", f"seed{s}" in degenerate) for s in (1, 2, 3)]
    return Choice(iteration=k, candidate_loss="original_dev", previous_delta_A=None,
                  chosen=next(c for c in candidates if c.name == chosen), candidates=candidates)


def test_the_window_holds_the_last_three_augmented_iterations_non_degenerate_candidates():
    mmi = _iteration(0)
    assert ensemble_window(mmi, None) is None  # MMI reports its chosen candidate
    reported = mmi
    for k in range(1, 6):
        # a degenerate candidate stays out, unless it is the one chosen
        current = _iteration(k, degenerate={"seed1", "seed2"} if k == 4 else ())
        reported = dataclasses.replace(current, ensemble=ensemble_window(current, reported))
        iterations = range(max(1, k - 2), k + 1)
        assert [[f.split("/")[1] for f in group] for group in reported.ensemble] == [[f"iter{i}"] * (2 if i == 4 else 3)
                                                                                    for i in iterations]
    assert reported.ensemble[1] == ["r/iter4/seed2", "r/iter4/seed3"]
    assert [str(p) for p in reported.reported_models][-3:] == [f"r/iter5/seed{s}/model.pt" for s in (1, 2, 3)]
    with pytest.raises(ValueError, match="choice of iteration 2"):
        ensemble_window(_iteration(3), None)


def test_the_candidates_window_holds_the_iterations_own_non_degenerate_candidates_only():
    reported = _iteration(0)
    for k in range(1, 4):
        current = _iteration(k, degenerate={"seed1", "seed3"} if k == 2 else ())
        reported = dataclasses.replace(current, ensemble=ensemble_window(current, reported, "candidates"))
        assert reported.ensemble == [[f"r/iter{k}/seed{s}" for s in ((2,) if k == 2 else (1, 2, 3))]]
    # what the previous iteration recorded (a three-iteration window here) is never carried over
    longer = dataclasses.replace(_iteration(4), ensemble=[["r/iter2/seed1"], ["r/iter3/seed1"], ["r/iter4/seed1"]])
    assert ensemble_window(_iteration(5), longer, "candidates") == [[f"r/iter5/seed{s}" for s in (1, 2, 3)]]


def test_a_choice_without_an_ensemble_reports_its_chosen_candidate(tmp_path):
    choice = _iteration(1)
    assert choice.reported_models == [choice.model_path]
    with_window = dataclasses.replace(choice, ensemble=[["r/iter1/seed1", "r/iter1/seed2"]])
    with_window.write(tmp_path / "choice.json")
    assert Choice.read(tmp_path / "choice.json") == with_window
    old = choice.to_json()
    del old["ensemble"]  # a choice.json written before the field existed
    assert Choice.from_json(old).ensemble is None


def _workspace():
    settings = Settings.from_dict({"model": {"d_model": 16, "layers": 1, "heads": 2, "dff": 32, "dropout": 0.0},
                                   "encoder": {"max_sentences": 8}})
    return Workspace(settings, None, {}, None, CachedSentences(VECTORS), "cpu")


@torch.no_grad()
def test_an_ensemble_file_loads_as_the_ensemble_of_its_members(tmp_path):
    ws = _workspace()
    paths = []
    for seed in range(3):
        paths.append(tmp_path / f"m{seed}.pt")
        save_model(ws.network(seed), paths[-1])
    save_ensemble(paths, tmp_path / "ensemble.pt", ws.settings.encoder)
    loaded, direct = ws.load_model(tmp_path / "ensemble.pt"), ws.load_models(paths)
    assert isinstance(loaded, SelectorEnsemble) and len(loaded.members) == 3
    a, b = loaded.eval()(IDS), direct.eval()(IDS)
    assert torch.equal(a.rationale_mask, b.rationale_mask) and torch.equal(a.logits, b.logits)
    assert isinstance(ws.load_models(paths[:1]), RationaleNetwork)

    other = dataclasses.replace(ws.settings.model, k=2)
    save_model(RationaleNetwork(CachedSentences(VECTORS), other, 8), tmp_path / "k2.pt")
    with pytest.raises(DataError, match="model settings differ"):
        save_ensemble([paths[0], tmp_path / "k2.pt"], tmp_path / "bad.pt", ws.settings.encoder)


JUNK_MEMBERS = st.one_of(
    st.integers(), st.text(max_size=8), st.just([]), st.lists(st.integers(), min_size=1, max_size=3),
    st.lists(st.dictionaries(st.text(max_size=6), st.one_of(st.integers(), st.text(max_size=4))), min_size=1,
             max_size=2))


@given(members=JUNK_MEMBERS)
def test_a_model_file_with_bad_members_is_one_data_error_naming_it(members):
    """A model folder is outside input (``predict --model``): whatever its ``members`` hold, loading
    it fails with a DataError that names the file, never a traceback from deep inside torch."""
    ws = _workspace()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.pt"
        save_model(ws.network(0), path)
        saved = torch.load(path, weights_only=True)
        torch.save(saved | {"members": members}, path)
        with pytest.raises(DataError) as caught:
            ws.load_model(path)
        assert str(path) in str(caught.value)
