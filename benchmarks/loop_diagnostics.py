"""Dev diagnostics of ICDA runs (never the test split): what the loop chose and with what data.

Per run and iteration, read from the run's own files:
- ``chosen``: the chosen candidate, ``warm`` whether it is the warm start;
- ``dev``: the dev rationale precision (%) of the chosen selector, ``fresh``: of each fresh
  candidate, ``vote``: of the fresh candidates' majority vote (k = 1: the position most of them
  pick, ties to the chosen candidate's);
- ``agree``: the fresh candidates' mean pairwise agreement on dev (share of documents where two
  pick the same positions); ``by agree``: the dev precision of the candidate that agrees most
  with the other fresh candidates (what ``candidate_choice: agreement`` takes, degeneration aside);
- ``pool``: the precision (%) of the train pools A_c (the counterfactual sentences are drawn
  uniformly from them), ``swap``: of the rationale positions that the counterfactuals replace;
  ``pool (other)`` and ``swap (other)``: the same for the pools the other ``pool_source`` would
  have built from the same candidates (:func:`icda.counterfactual.build_plan` replayed).

Ground truth is the prepared splits' ``rationale`` field (restaurant and connect: keywords;
synthetic: the aspect sentence); datasets without it show "-".

    PYTHONPATH=. .venv/bin/python benchmarks/loop_diagnostics.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import itertools
import json
import statistics
import sys
from collections import Counter
from pathlib import Path


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def precision(positions: list[list[int]], truth: list) -> float | None:
    """Share (%) of selected positions in the ground truth, over documents that have one."""
    hits = total = 0
    for sel, t in zip(positions, truth):
        if t is None:
            continue
        hits += len(set(sel) & set(t))
        total += len(sel)
    return 100 * hits / total if total else None


def agreement(a: list[list[int]], b: list[list[int]]) -> float:
    """Share of documents where two selectors pick the same positions."""
    return sum(sorted(x) == sorted(y) for x, y in zip(a, b)) / max(len(a), 1)


def vote(selections: list[list[list[int]]], tie_break: list[list[int]]) -> list[list[int]]:
    """Per document the position set picked by most selectors (ties: ``tie_break``'s)."""
    out = []
    for d, own in enumerate(tie_break):
        counts = Counter(tuple(sorted(s[d])) for s in selections)
        best = max(counts.values())
        out.append(own if counts[tuple(sorted(own))] == best else list(max(c for c, n in counts.items() if n == best)))
    return out


def iteration_row(run: Path, k: int, truth: dict[str, list]) -> dict | None:
    it = run / f"iter{k}"
    if not (it / "choice.json").exists():
        return None
    choice = json.loads((it / "choice.json").read_text())
    preds = {}
    for c in choice["candidates"]:
        path = Path(c["candidate_dir"])
        path = path if path.is_absolute() else run.parents[2] / path
        preds[c["name"]] = json.loads((path / "predictions.json").read_text())
    chosen = choice["chosen"]["name"]
    fresh = [n for n in preds if n != "warm"]
    dev_sel = {n: preds[n]["dev"]["positions"] for n in preds}
    row = {"k": k, "chosen": chosen, "warm": chosen == "warm",
           "dev": precision(dev_sel[chosen], truth["dev"]),
           "fresh": [precision(dev_sel[n], truth["dev"]) for n in fresh],
           "vote": precision(vote([dev_sel[n] for n in fresh], dev_sel[chosen]), truth["dev"]),
           "agree": statistics.mean(agreement(dev_sel[a], dev_sel[b]) for a, b in itertools.combinations(fresh, 2))
           if len(fresh) > 1 else None}
    if len(fresh) > 1:
        def mean_agreement(name):
            return statistics.mean(agreement(dev_sel[name], dev_sel[f]) for f in fresh if f != name)
        row["by_agree"] = precision(dev_sel[max(preds, key=mean_agreement)], truth["dev"])
    if (it / "pools.json").exists():
        plan = json.loads((it / "pools.json").read_text())["train"]["plan"]
        row["pool"], row["swap"] = plan_precision(plan["pools"], plan["kept"], plan["positions"], truth["train"])
        other = replay_plan(run, preds, chosen, fresh, truth["train"], vote_used=_vote_used(run))
        row["pool_other"], row["swap_other"] = other
    return row


def plan_precision(pools: dict, kept: list[int], positions: list[list[int]], truth: list) -> tuple:
    refs = [ref for pool in pools.values() for ref in pool]
    return (precision([[p] for _, p in refs], [truth[d] for d, _ in refs]),
            precision(positions, [truth[d] for d in kept]))


def _vote_used(run: Path) -> bool:
    settings = json.loads((run.parent / "settings.json").read_text())
    return settings["icda"].get("pool_source", "chosen") == "vote"


def replay_plan(run: Path, preds: dict, chosen: str, fresh: list[str], truth: list, vote_used: bool) -> tuple:
    """Pool and swap precision of the plan the other pool_source would have built."""
    from icda.counterfactual import build_plan
    from icda.model_selection import majority_vote

    settings = json.loads((run.parent / "settings.json").read_text())["icda"]
    labels = [json.loads(line)["label"] for line in (run.parent / "data/train.jsonl").open(encoding="utf-8")]
    own = preds[chosen]["train"]
    positions = own["positions"] if vote_used else majority_vote([preds[f]["train"]["positions"] for f in fresh],
                                                                 own["positions"])
    probabilities = own.get("probabilities") or own["prob_positive"]
    plan, _ = build_plan(labels, probabilities, positions, settings["pool_fraction"], settings["pool_base"])
    pools = {c: [tuple(r) for r in refs] for c, refs in plan.pools.items()}
    return plan_precision(pools, plan.kept, plan.positions, truth)


def run_rows(run: Path) -> list[dict]:
    data = run.parent / "data"
    truth = {split: [d.get("rationale") for d in _lines(data / f"{split}.jsonl")] for split in ("train", "dev")}
    rows, k = [], 0
    while (row := iteration_row(run, k, truth)) is not None:
        rows.append(row)
        k += 1
    return rows


def _f(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def diagnostics_table(runs: list[Path]) -> str:
    lines = ["| run | k | chosen | dev (chosen) | dev (fresh) | dev (vote) | by agree | agree | pool | swap "
             "| pool (other) | swap (other) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        name = f"{run.parents[2].name}/{run.parent.name}/{run.name}"
        for r in run_rows(run):
            lines.append(f"| {name} | {r['k']} | {r['chosen']} | {_f(r['dev'])} | {' '.join(_f(v) for v in r['fresh'])}"
                         f" | {_f(r['vote'])} | {_f(r.get('by_agree'))} | {_f(r['agree'] and 100 * r['agree'])} | {_f(r.get('pool'))} | {_f(r.get('swap'))} "
                         f"| {_f(r.get('pool_other'))} | {_f(r.get('swap_other'))} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(diagnostics_table([Path(p) for p in sys.argv[1:]]))
