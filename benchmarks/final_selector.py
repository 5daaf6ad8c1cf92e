"""Which selector of the final ICDA iteration to report: the chosen candidate or an ensemble of
the iteration's candidates, replayed on dev (never test).

For each finished run (``benchmarks/robustness.py`` folders or a workflow's ``results/``), the
candidates of the iteration taken as ICDA (the last one: ``final_choice: last``) are loaded and
scored on the dev split, and the dev rationale precision (%) of four selectors is computed:

- ``chosen``: the candidate the loop chose (what the tables report today);
- ``vote``: per document, the rationale most of the candidates pick (ties to the chosen one's;
  :func:`icda.model_selection.majority_vote`);
- ``mean_scores``: the top-k sentences of the candidates' averaged selector distributions (each
  candidate's selector scores soft-maxed over the document's real sentences, then averaged);
- ``mean_scores_fresh``: the same over the fresh candidates only (the warm start left out).

Candidates recorded as degenerate in ``choice.json`` are left out of the ensembles. Nothing here
reads a label or ground truth to build a selector; the dev ground truth only scores them. A
fifth column, ``chosen (replayed)``, recomputes the chosen candidate's top-k from its scores and must
equal ``chosen``: the check that the replay scores what training recorded.

``benchmarks/lodo.py`` scores these as its ``final_selector`` component (dev precision minus the
run's MMI dev precision, by the final-choice criterion: the highest worst-run gain, ties to the
higher mean).

    PYTHONPATH=. .venv/bin/python benchmarks/final_selector.py RESULTS_DIR [RESULTS_DIR ...]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import icda  # noqa: F401  (first: the kernel path's variables before torch loads numpy's BLAS)
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_diagnostics import Split, _lines  # noqa: E402

from icda.loading import Workspace, load_settings, open_workspace  # noqa: E402
from icda.model_selection import majority_vote  # noqa: E402
from icda.train import trim  # noqa: E402

SELECTORS = ("chosen", "vote", "mean_scores", "mean_scores_fresh")


def selector_distribution(ws: Workspace, model: Path, ids: torch.Tensor, batch_size: int = 512) -> torch.Tensor:
    """A saved candidate's selector scores on ids [D, N], soft-maxed over each document's real
    sentences: [D, N], rows summing to 1, zero at empty slots."""
    network = ws.load_model(model).eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(ids), batch_size):
            batch = trim(ids[start: start + batch_size])
            scores = network(batch.to(ws.device)).scores.float().cpu()
            p = torch.softmax(scores.masked_fill(batch < 0, float("-inf")), dim=-1)
            out.append(torch.nn.functional.pad(p, (0, ids.shape[1] - p.shape[1])))
    return torch.cat(out)


def top_k(distribution: torch.Tensor, k: int) -> list[list[int]]:
    """[D, N] → the k largest positions per document, in order (ties to the lower position)."""
    return [sorted(torch.topk(row, min(k, int((row > 0).sum()) or 1)).indices.tolist()) for row in distribution]


def _folder(run: Path, candidate_dir: str) -> Path:
    """A candidate folder recorded in choice.json (relative to the Snakemake working folder)."""
    folder = Path(candidate_dir)
    return folder if folder.is_absolute() else run.parents[2] / folder


def replay_run(run: Path, ws: Workspace, split: Split, dev_ids: torch.Tensor) -> dict[str, float] | None:
    """{selector: dev precision %} of the run's last iteration (None: unfinished, or a candidate's
    files are gone)."""
    iterations = sorted(run.glob("iter*/converge.json"), key=lambda p: int(p.parent.name[4:]))
    if not iterations or not json.loads(iterations[-1].read_text())["stop"]:
        return None
    mmi = _mmi_positions(run)
    if mmi is None:
        return None
    choice = json.loads((iterations[-1].parent / "choice.json").read_text())
    k = ws.settings.model.k
    chosen = choice["chosen"]["name"]
    distributions, positions = {}, {}
    for c in choice["candidates"]:
        folder = _folder(run, c["candidate_dir"])
        if not (folder / "model.pt").exists():
            return None
        positions[c["name"]] = json.loads((folder / "predictions.json").read_text())["dev"]["positions"]
        if not c["degenerate"] or c["name"] == chosen:
            distributions[c["name"]] = selector_distribution(ws, folder / "model.pt", dev_ids)
    members = list(distributions)
    fresh = [n for n in members if n != "warm"] or members
    return {
        "chosen": split.precision(positions[chosen]),
        "vote": split.precision(majority_vote([positions[n] for n in members], positions[chosen])),
        "mean_scores": split.precision(top_k(sum(distributions[n] for n in members) / len(members), k)),
        "mean_scores_fresh": split.precision(top_k(sum(distributions[n] for n in fresh) / len(fresh), k)),
        "chosen (replayed)": split.precision(top_k(distributions[chosen], k)),
        "mmi": split.precision(mmi),
    }


def _mmi_positions(run: Path) -> list[list[int]] | None:
    """The MMI selector's dev rationales (None: its files are gone)."""
    path = _folder(run, json.loads((run / "iter0" / "choice.json").read_text())["chosen"]["candidate_dir"]) / "predictions.json"
    return json.loads(path.read_text())["dev"]["positions"] if path.exists() else None


def replay(results: list[Path]) -> dict[str, list[dict[str, float]]]:
    """{dataset: [per-run {selector: dev precision %}]} over every finished run with dev ground
    truth."""
    torch.set_num_threads(1)
    table: dict[str, list[dict[str, float]]] = {}
    for root in results:
        for folder in sorted(p.parent for p in root.glob("*/settings.json")):
            docs = _lines(folder / "data" / "dev.jsonl")
            if any(d.get("rationale") is None for d in docs):
                continue  # no dev ground truth: nothing to score on
            split = Split([frozenset(d["rationale"]) for d in docs], [len(d["sentences"]) for d in docs])
            ws = open_workspace(load_settings(folder / "settings.json", 1), folder / "data", folder / "embeddings.pt")
            dev_ids = ws.split("dev").ids
            for run in sorted(folder.glob("run*")):
                row = replay_run(run, ws, split, dev_ids)
                if row is not None:
                    table.setdefault(folder.name, []).append(row)
    return table


def summary(table: dict[str, list[dict[str, float]]]) -> str:
    lines = ["| dataset | runs | " + " | ".join(SELECTORS) + " | chosen (replayed) |",
             "|---|---|" + "---|" * (len(SELECTORS) + 1)]
    for dataset, rows in sorted(table.items()):
        cells = [f"{statistics.mean(r[s] for r in rows):.2f} (worst {min(r[s] for r in rows):.1f})"
                 for s in (*SELECTORS, "chosen (replayed)")]
        lines.append(f"| {dataset} | {len(rows)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(replay([Path(p) for p in sys.argv[1:]])))
