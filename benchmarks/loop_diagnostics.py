"""Dev diagnostics of ICDA runs (never the test split): what the loop chose and with what data.

Per run and iteration, read from the run's own files:
- ``chosen``: the chosen candidate, ``warm`` whether it is the warm start;
- ``dev``: the dev rationale precision (%) of the chosen selector, ``by_loss``: of the candidate
  with the lowest recorded score (what ``candidate_choice: loss`` takes), ``fresh``: of each fresh
  candidate, ``vote``: of the fresh candidates' majority vote (k = 1: the position most of them
  pick, ties to the chosen candidate's);
- ``agree``: the fresh candidates' mean pairwise agreement on dev (share of documents where two
  pick the same positions); ``by agree``: the dev precision of the candidate that agrees most
  with the other fresh candidates (what ``candidate_choice: agreement`` takes, degeneration aside);
  ``pairs``: the agreement (%) of each pair of fresh candidates, in the order of ``fresh``
  (1-2, 1-3, 2-3 for three), which shows a single candidate turning away from the others;
- ``probe``: the rationale probe's dev accuracy (%) on the chosen selector's rationales
  (:mod:`icda.rationale_probe`, ground-truth-free; recomputed from the run's files: the frozen
  vectors, the prepared splits and the chosen candidate's predictions);
- ``pool``: the precision (%) of the train pools A_c (``pool_by_class``: of each class's pool) (the counterfactual sentences are drawn
  uniformly from them), ``swap``: of the rationale positions that the counterfactuals replace;
  ``pool (other)`` and ``swap (other)``: the same for the pools the other ``pool_source`` would
  have built from the same candidates (:func:`icda.counterfactual.build_plan` replayed);
  ``pool per class if chosen``: for each fresh candidate, the precision of each class's pool had
  the loop chosen that candidate (its confidences pick the pool's documents, its rationales break
  the vote's ties); ``averaged``: each class's pool had the pools' documents been picked by the
  fresh candidates' averaged confidences instead of the chosen one's (the chosen one's rationales
  or the vote as the run's ``pool_source`` says).

Ground truth is the prepared splits' ``rationale`` field (restaurant and connect: keywords;
synthetic: the aspect sentence); datasets without it show "-".

    PYTHONPATH=. .venv/bin/python benchmarks/loop_diagnostics.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icda.counterfactual import NoCounterfactual, build_plan
from icda.embed import EmbeddingCache
from icda.errors import DataError, IcdaError, rebuild_fix
from icda.guard import add_input, parse_arguments
from icda.io import read_json_file, read_jsonl
from icda.metrics import rationale_metrics
from icda.model_selection import agreement, majority_vote
from icda.rationale_probe import probe_accuracy, rationale_vectors
from icda.records import Choice, Pools, Predictions, Record
from icda.settings import Settings


#: a run folder's name (<results>/<dataset>/run<N>)
RUN_NAME = re.compile(r"run[1-9][0-9]*")


def _lines(path: Path) -> list[dict]:
    """A prepared split's records (one JSON object a line; a missing, truncated or malformed file
    is a DataError naming its line)."""
    def record(obj):
        if not isinstance(obj, dict) or not isinstance(obj.get("sentences"), list):
            raise ValueError("no sentences")
        return obj

    if not path.is_file():
        raise DataError(path, None, "file not found", "give a run folder of a finished workflow (<results>/<dataset>/run<N>)")
    return read_jsonl(path, record, "a prepared document", "rerun `python -m icda prepare`")


def _read(path: Path, record: type[Record]) -> dict:
    """The JSON object of a run's file, checked as ``record`` (:mod:`icda.records`: a missing,
    empty, truncated or malformed file is a DataError naming it)."""
    record.read(path)
    return read_json_file(path, f"run the step that writes it first (`python -m icda {record.COMMAND}`)",
                          rebuild_fix(path, record.COMMAND))


def _settings(dataset: Path) -> dict:
    """A dataset's settings.json as a dict with every default, checked (:meth:`icda.settings.Settings.load`)."""
    return Settings.load(dataset / "settings.json").to_dict()


def check_run(run: Path) -> Path:
    """``run`` if it is a run folder (``<results>/<dataset>/run<N>`` beside the dataset's
    settings.json), else a DataError naming it (e.g. a results/ folder given instead)."""
    if not (RUN_NAME.fullmatch(run.name) and run.is_dir() and (run.parent / "settings.json").is_file()):
        raise DataError(run, None, "is not a run folder (<results>/<dataset>/run<N> beside <dataset>/settings.json)",
                        "give run folders, e.g. results/restaurant/run1")
    return run


@dataclass
class Split:
    """A prepared split's ground truth per document (None: not annotated) and sentence counts."""

    truth: list
    sizes: list[int]

    def precision(self, positions: list[list[int]], docs: list[int] | None = None) -> float | None:
        """Rationale precision (%) of ``positions`` on the documents ``docs`` (default: all, in
        order), as the evaluation computes it (:func:`icda.metrics.rationale_metrics`)."""
        docs = range(len(positions)) if docs is None else docs
        value = rationale_metrics(positions, [self.truth[d] for d in docs], [self.sizes[d] for d in docs])["precision"]
        return None if value is None else 100 * value


@dataclass
class Probe:
    """What the rationale probe reads of a dataset: the frozen vectors, each document's sentence
    ids and the labels of the original train and dev splits."""

    table: np.ndarray
    ids: dict
    labels: dict

    @classmethod
    def of(cls, dataset: Path, documents: dict[str, list[dict]]) -> "Probe | None":
        if not (dataset / "embeddings.pt").exists():
            return None  # fine-tuning mode: no frozen vectors
        cache = EmbeddingCache.load(dataset / "embeddings.pt")
        n = _settings(dataset)["encoder"]["max_sentences"]
        return cls(cache.vectors.numpy(), {s: [[cache.index[t] for t in d["sentences"][:n]] for d in docs]
                                           for s, docs in documents.items()},
                   {s: [d["label"] for d in docs] for s, docs in documents.items()})

    def accuracy(self, predictions: dict) -> float:
        x = {s: rationale_vectors(self.table, self.ids[s], predictions[s]["positions"]) for s in ("train", "dev")}
        return 100 * probe_accuracy(x["train"], self.labels["train"], x["dev"], self.labels["dev"])


def iteration_row(run: Path, k: int, splits: dict[str, Split], icda: dict, labels: list[int],
                  probe: Probe | None = None) -> dict | None:
    it = run / f"iter{k}"
    if not (it / "choice.json").exists():
        return None
    choice = _read(it / "choice.json", Choice)
    preds = {}
    for c in choice["candidates"]:
        path = Path(c["candidate_dir"])
        path = path if path.is_absolute() else run.parents[2] / path
        preds[c["name"]] = _read(path / "predictions.json", Predictions)
    chosen = choice["chosen"]["name"]
    lowest = min(choice["candidates"], key=lambda c: c["score"])["name"]
    fresh = [n for n in preds if n != "warm"]
    dev_sel = {n: preds[n]["dev"]["positions"] for n in preds}
    dev = splits["dev"]
    row = {"k": k, "chosen": chosen, "warm": chosen == "warm",
           "dev": dev.precision(dev_sel[chosen]),
           "by_loss": dev.precision(dev_sel[lowest]),
           "fresh": [dev.precision(dev_sel[n]) for n in fresh],
           "vote": dev.precision(majority_vote([dev_sel[n] for n in fresh], dev_sel[chosen])),
           "pairs": [agreement(dev_sel[a], dev_sel[b]) for a, b in itertools.combinations(fresh, 2)]}
    row["agree"] = statistics.mean(row["pairs"]) if row["pairs"] else None
    row["probe"] = None if probe is None else probe.accuracy(preds[chosen])
    row |= {key: choice["chosen"].get(key) for key in ("delta_A", "original_dev_loss", "original_dev_accuracy")}
    if len(fresh) > 1:
        def mean_agreement(name):
            return statistics.mean(agreement(dev_sel[name], dev_sel[f]) for f in fresh if f != name)
        row["by_agree"] = dev.precision(dev_sel[max(preds, key=mean_agreement)])
    pools = _read(it / "pools.json", Pools) if (it / "pools.json").exists() else None
    if pools is not None and pools.get("blocked") is None:  # (a blocked iteration built no pool)
        plan = pools["train"]["plan"]
        row["pool"], row["swap"] = plan_precision(plan["pools"], plan["kept"], plan["positions"], splits["train"])
        row["pool_by_class"] = {c: splits["train"].precision([[p] for _, p in refs], [d for d, _ in refs])
                                for c, refs in sorted(plan["pools"].items())}
        row["pool_other"], row["swap_other"] = _unless_blocked(
            lambda: replay_plan(preds, chosen, fresh, splits["train"], icda, labels), (None, None))
        row["pool_if_chosen"] = [_unless_blocked(lambda f=f: pools_if_chosen(preds, f, fresh, splits["train"], icda, labels))
                                 for f in fresh]
        row["pool_averaged"] = _unless_blocked(
            lambda: pools_if_chosen(preds, chosen, fresh, splits["train"], icda, labels, averaged=True))
    return row


def _unless_blocked(replay, blocked=None):
    """``replay()``, or ``blocked`` where the replayed selector gets a whole class wrong (no plan
    can be built: :class:`icda.counterfactual.NoCounterfactual`)."""
    try:
        return replay()
    except NoCounterfactual:
        return blocked


def plan_precision(pools: dict, kept: list[int], positions: list[list[int]], train: Split) -> tuple:
    refs = [ref for pool in pools.values() for ref in pool]
    return train.precision([[p] for _, p in refs], [d for d, _ in refs]), train.precision(positions, kept)


def _plan(preds: dict, chosen: str, fresh: list[str], icda: dict, labels: list[int], vote: bool,
          averaged: bool = False):
    """The counterfactual plan had ``chosen`` been the chosen candidate: its confidences (with
    ``averaged``, the fresh candidates' mean) pick the pools' documents, its rationales (with
    ``vote``, the fresh candidates' vote, ties to its) are swapped."""
    def confidences(name):
        return preds[name]["train"].get("probabilities") or preds[name]["train"]["prob_positive"]
    own = preds[chosen]["train"]
    positions = majority_vote([preds[f]["train"]["positions"] for f in fresh], own["positions"]) if vote else own["positions"]
    probabilities = np.mean([np.asarray(confidences(f), dtype=float) for f in fresh], axis=0).tolist() if averaged \
        else confidences(chosen)
    plan, _ = build_plan(labels, probabilities, positions, icda["pool_fraction"], icda["pool_base"],
                         pool_min=icda.get("pool_min", 0))
    return plan


def replay_plan(preds: dict, chosen: str, fresh: list[str], train: Split, icda: dict, labels: list[int]) -> tuple:
    """Pool and swap precision of the plan the other pool_source would have built."""
    plan = _plan(preds, chosen, fresh, icda, labels, vote=icda.get("pool_source", "chosen") != "vote")
    return plan_precision(plan.pools, plan.kept, plan.positions, train)


def pools_if_chosen(preds: dict, chosen: str, fresh: list[str], train: Split, icda: dict, labels: list[int],
                    averaged: bool = False) -> list:
    """Each class's pool precision had ``chosen`` been the chosen candidate (the run's pool_source;
    ``averaged``: the pools' documents picked by the fresh candidates' mean confidences)."""
    plan = _plan(preds, chosen, fresh, icda, labels, vote=icda.get("pool_source", "chosen") == "vote", averaged=averaged)
    return [train.precision([[p] for _, p in refs], [d for d, _ in refs]) for _, refs in sorted(plan.pools.items())]


def run_rows(run: Path) -> list[dict]:
    """Per iteration of the run folder ``run``, its dev diagnostics.

    Raises:
        DataError: ``run`` is not a run folder; a file of it is missing, empty, truncated or
            malformed (naming it).
    """
    check_run(run)
    data = run.parent / "data"
    documents = {split: _lines(data / f"{split}.jsonl") for split in ("train", "dev")}
    splits = {split: Split([None if d.get("rationale") is None else frozenset(d["rationale"]) for d in docs],
                           [len(d["sentences"]) for d in docs])
              for split, docs in documents.items()}
    icda = _settings(run.parent)["icda"]
    labels = [d["label"] for d in documents["train"]]
    probe = Probe.of(run.parent, documents)
    rows, k = [], 0
    while (row := iteration_row(run, k, splits, icda, labels, probe)) is not None:
        rows.append(row)
        k += 1
    if not rows:
        raise DataError(run / "iter0" / "choice.json", None, "file not found: the run has no chosen iteration",
                        "give a run whose iteration 0 has been selected (or wait for it)")
    return rows


def _f(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def _g(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def diagnostics_table(runs: list[Path]) -> str:
    lines = ["| run | k | chosen | dev (chosen) | dev (fresh) | dev (vote) | by agree | agree | pairs | probe | ΔA | dev loss "
             "| dev acc | pool | pool per class | swap | pool (other) | swap (other) | pool per class if chosen | averaged |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        check_run(run)
        name = f"{run.resolve().parents[2].name}/{run.parent.name}/{run.name}"
        for r in run_rows(run):
            lines.append(f"| {name} | {r['k']} | {r['chosen']} | {_f(r['dev'])} | {' '.join(_f(v) for v in r['fresh'])}"
                         f" | {_f(r['vote'])} | {_f(r.get('by_agree'))} | {_f(r['agree'] and 100 * r['agree'])} "
                         f"| {' '.join(_f(100 * v) for v in r['pairs'])} | {_f(r['probe'])} "
                         f"| {_f(r['delta_A'] and 100 * r['delta_A'])} | {_g(r['original_dev_loss'])} "
                         f"| {_f(r['original_dev_accuracy'] and 100 * r['original_dev_accuracy'])} | {_f(r.get('pool'))} "
                         f"| {' / '.join(_f(v) for v in (r.get('pool_by_class') or {}).values())} | {_f(r.get('swap'))} "
                         f"| {_f(r.get('pool_other'))} | {_f(r.get('swap_other'))} "
                         f"| {'; '.join('-' if pools is None else ' / '.join(_f(v) for v in pools) for pools in r.get('pool_if_chosen') or [])} "
                         f"| {' / '.join(_f(v) for v in r.get('pool_averaged') or [])} |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "runs", kind="tree", nargs="+", help="run folders (<results>/<dataset>/run<N>)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    try:
        print(diagnostics_table(args.runs))
    except IcdaError as exc:
        raise SystemExit(f"loop_diagnostics: {exc}") from None


if __name__ == "__main__":
    main()
