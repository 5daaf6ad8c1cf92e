"""Which selector of the final ICDA iteration to report: the chosen candidate or an ensemble of
the iteration's candidates, replayed on dev (never test).

For each finished run (``benchmarks/robustness.py`` folders or a workflow's ``results/``), the
candidates of the iteration taken as ICDA (the last one: ``final_choice: last``) are loaded and
scored on the dev split, and the dev rationale precision (%) of these selectors is computed:

- ``chosen``: the candidate the loop chose (what the tables report today);
- ``vote``: per document, the rationale most of the candidates pick (ties to the chosen one's;
  :func:`icda.model_selection.majority_vote`);
- ``mean_scores``: the top-k sentences of the candidates' averaged selector distributions (each
  candidate's selector scores soft-maxed over the document's real sentences, then averaged);
- ``mean_scores_fresh``: the same over the fresh candidates only (the warm start left out);
- ``candidates``: what the workflow reports with ``icda.final_selector: candidates``: the
  :class:`icda.model.SelectorEnsemble` of the iteration's own non-degenerate candidates; it must
  equal ``mean_scores`` (docs/experiments/iteration-candidates.md);
- ``mean_scores_last3``: the same over the candidates of the last three iterations (never
  iteration 0; every iteration's non-degenerate candidates and its chosen one);
- ``ensemble``: what the workflow reports with ``icda.final_selector: ensemble``: the
  :class:`icda.model.SelectorEnsemble` of :func:`icda.model_selection.ensemble_window`'s
  members, run by :func:`icda.train.predict`; it must equal ``mean_scores_last3``.

Candidates recorded as degenerate in ``choice.json`` are left out of the ensembles. Nothing here
reads a label or ground truth to build a selector; the dev ground truth only scores them. A
column ``chosen (replayed)`` recomputes the chosen candidate's top-k from its scores and must
equal ``chosen``: the check that the replay scores what training recorded.

Each selector ``icda.final_selector`` offers (``chosen``, ``candidates``, ``ensemble``) is also
replayed at every iteration, and its failure modes are printed from its own curve: the last
iteration's gain over MMI (mean, worst run), the runs below their MMI and those more than 3
points below their curve's best iteration, and that best iteration's mean and lowest run: what
no rule reporting one of the curve's iterations can exceed (:func:`failure_modes`).

``benchmarks/lodo.py`` scores these as its ``final_selector`` component (dev precision minus the
run's MMI dev precision, by the final-choice criterion: the highest worst-run gain, ties to the
higher mean).

    PYTHONPATH=. .venv/bin/python benchmarks/final_selector.py [--split test] RESULTS_DIR [RESULTS_DIR ...]

``--runs-csv DIR`` also writes the ensemble's runs as ``benchmarks/robustness.py`` writes its
own (``DIR/runs.csv``, for scripts/results_page.py; atomically, only when a run was replayed, never in
or above a RESULTS_DIR). A RESULTS_DIR that holds no run is an error, as is one that gives no finished
run. ``--split test`` scores on the test split instead, for a dataset whose only annotated documents
are a test file that a protocol splits into a half to choose on and a half held out (location,
docs/experiments/hotel_readout.md): give it the runs on the half that may be read.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import statistics
import sys
from pathlib import Path

import icda  # noqa: F401  (first: the kernel path's variables before torch loads numpy's BLAS)
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import robustness  # noqa: E402
from loop_diagnostics import Split, _lines  # noqa: E402

from icda.errors import DataError, IcdaError, rebuild_fix  # noqa: E402
from icda.io import check_output, check_output_dir, read_json_file  # noqa: E402
from icda.loading import Workspace, load_settings, open_workspace  # noqa: E402
from icda.model_selection import ensemble_window, majority_vote  # noqa: E402
from icda.records import Choice, Predictions  # noqa: E402
from icda.train import predict, trim  # noqa: E402
from icda.guard import add_input, add_output, parse_arguments  # noqa: E402

SELECTORS = ("chosen", "vote", "mean_scores", "mean_scores_fresh", "candidates", "mean_scores_last3", "ensemble")
#: the selectors ``icda.final_selector`` offers, replayed at every iteration (their curves)
WINDOWED = ("candidates", "ensemble")
CURVES = ("chosen", *WINDOWED)


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


def _members(run: Path, choice: dict, ws: Workspace, ids: torch.Tensor) -> dict[str, torch.Tensor] | None:
    """{candidate name: selector distribution on ids} of one iteration's non-degenerate candidates
    and its chosen one (None: a model file is gone)."""
    out = {}
    for c in choice["candidates"]:
        folder = _folder(run, c["candidate_dir"])
        if not (folder / "model.pt").exists():
            return None
        if not c["degenerate"] or c["name"] == choice["chosen"]["name"]:
            out[c["name"]] = selector_distribution(ws, folder / "model.pt", ids)
    return out


def replay_run(run: Path, ws: Workspace, split: Split, ids: torch.Tensor, split_name: str = "dev") -> dict[str, float] | None:
    """{selector: precision %} on ``split_name`` of the run's last iteration (None: unfinished, or
    a candidate's files are gone)."""
    iterations = sorted((p for p in run.glob("iter*/converge.json") if re.fullmatch(r"iter[0-9]+", p.parent.name)),
                        key=lambda p: int(p.parent.name[4:]))
    if not iterations or not _stopped(iterations[-1]):
        return None
    mmi = _mmi_positions(run, split_name)
    if mmi is None:
        return None
    choice = Choice.read(iterations[-1].parent / "choice.json").to_json()
    k = ws.settings.model.k
    chosen = choice["chosen"]["name"]
    positions = {c["name"]: _positions(_folder(run, c["candidate_dir"]) / "predictions.json", split_name)
                 for c in choice["candidates"]}
    window = [_members(run, Choice.read(p.parent / "choice.json").to_json(), ws, ids)
              for p in iterations[1:][-3:] or iterations[-1:]]
    if any(w is None for w in window):
        return None
    curves = {name: [split.precision(mmi)] for name in CURVES}
    reported = dict.fromkeys(WINDOWED, Choice.read(iterations[0].parent / "choice.json"))
    for p in iterations[1:]:
        current = Choice.read(p.parent / "choice.json")
        curves["chosen"].append(split.precision(_positions(
            _folder(run, current.chosen.candidate_dir) / "predictions.json", split_name)))
        for name in WINDOWED:
            reported[name] = dataclasses.replace(current, ensemble=ensemble_window(current, reported[name], name))
            models = ws.load_models([_folder(run, str(m)) for m in reported[name].reported_models])
            curves[name].append(split.precision(predict(models, ids).positions))
    distributions = window[-1]
    last3 = [d for w in window for d in w.values()]
    members = list(distributions)
    fresh = [n for n in members if n != "warm"] or members
    return {
        "chosen": split.precision(positions[chosen]),
        "vote": split.precision(majority_vote([positions[n] for n in members], positions[chosen])),
        "mean_scores": split.precision(top_k(sum(distributions[n] for n in members) / len(members), k)),
        "mean_scores_fresh": split.precision(top_k(sum(distributions[n] for n in fresh) / len(fresh), k)),
        "mean_scores_last3": split.precision(top_k(sum(last3) / len(last3), k)),
        "candidates": curves["candidates"][-1],
        "ensemble": curves["ensemble"][-1],
        "chosen (replayed)": split.precision(top_k(distributions[chosen], k)),
        "mmi": split.precision(mmi),
        "curve": curves["ensemble"],
        "curves": curves,
        "path": run.parents[2].name,
        "seeds": [c.seed for c in Choice.read(iterations[0].parent / "choice.json").candidates],
        "icda_iteration": len(iterations) - 1,
    }


def _stopped(path: Path) -> bool:
    """A converge.json's ``stop``."""
    decision = read_json_file(path, rebuild_fix(path, "converge"), rebuild_fix(path, "converge"))
    if not isinstance(decision, dict) or not isinstance(decision.get("stop"), bool):
        raise DataError(path, None, 'no "stop" (true or false): not a stop decision of the loop',
                        rebuild_fix(path, "converge"))
    return decision["stop"]


def _runs(root: Path) -> list[Path]:
    """The run folders under a RESULTS_DIR (``<dataset>/run*`` beside ``<dataset>/settings.json``)."""
    return [run for folder in sorted(p.parent for p in root.glob("*/settings.json")) for run in sorted(folder.glob("run*"))
            if run.is_dir() and re.fullmatch(r"run[1-9][0-9]*", run.name)]


def write_runs(table: dict[str, list[dict]], out: Path) -> None:
    """``out/runs.csv`` in benchmarks/robustness.py's format (its write_csv), atomically."""
    robustness.write_csv([r | {"dataset": dataset, "MMI": r["curve"][0], "CDA": r["curve"][1], "ICDA": r["curve"][-1],
                               "why": "the last iteration, reported by the ensemble of its last three iterations"}
                          for dataset, rows in sorted(table.items()) for r in rows], out)


def _mmi_positions(run: Path, split_name: str = "dev") -> list[list[int]] | None:
    """The MMI selector's rationales on ``split_name`` (None: its files are gone)."""
    path = _folder(run, str(Choice.read(run / "iter0" / "choice.json").candidate_path)) / "predictions.json"
    return _positions(path, split_name) if path.exists() else None


def _positions(path: Path, split_name: str) -> list[list[int]]:
    """A predictions.json's rationale positions on ``split_name``, read through
    :class:`icda.records.Predictions` (a missing, empty, truncated or malformed file: DataError)."""
    return [list(p) for p in getattr(Predictions.read(path), split_name).positions]


def replay(results: list[Path], split_name: str = "dev") -> dict[str, list[dict[str, float]]]:
    """{dataset: [per-run {selector: precision %}]} on ``split_name`` over every finished run
    whose documents there all carry ground truth."""
    torch.set_num_threads(1)
    table: dict[str, list[dict[str, float]]] = {}
    for root in results:
        for folder in sorted(p.parent for p in root.glob("*/settings.json")):
            docs = _lines(folder / "data" / f"{split_name}.jsonl")
            if not docs or any(d.get("rationale") is None for d in docs):
                continue  # no ground truth: nothing to score on
            split = Split([frozenset(d["rationale"]) for d in docs], [len(d["sentences"]) for d in docs])
            ws = open_workspace(load_settings(folder / "settings.json", 1), folder / "data", folder / "embeddings.pt")
            ids = ws.split(split_name).ids
            for run in sorted(folder.glob("run*")):
                row = replay_run(run, ws, split, ids, split_name)
                if row is not None:
                    table.setdefault(folder.name, []).append(row)
    return table


def failure_modes(table: dict[str, list[dict]]) -> str:
    """Per dataset and per selector of ``icda.final_selector``, from the selector's own curve: the
    last iteration's gain over the run's MMI (mean, worst run), the runs whose last iteration is
    below their MMI, and those more than 3 points below the curve's best iteration
    (docs/experiments/iteration-candidates.md's criterion); then that best iteration's mean and
    lowest run: the bound of any rule that reports one iteration of the curve, MMI included (one
    that reads the split's ground truth to pick it)."""
    lines = ["| dataset | selector | runs | mean | lowest | mean gain | worst gain | < MMI | > 3 below best "
             "| best iteration: mean | best iteration: lowest |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for dataset, rows in sorted(table.items()):
        for name in CURVES:
            last = [r["curves"][name][-1] for r in rows]
            best = [max(r["curves"][name]) for r in rows]
            gains = [v - r["mmi"] for v, r in zip(last, rows)]
            lines.append(f"| {dataset} | {name} | {len(rows)} | {statistics.mean(last):.2f} | {min(last):.1f} "
                         f"| {statistics.mean(gains):+.2f} | {min(gains):+.1f} | {sum(g < 0 for g in gains)} "
                         f"| {sum(b - v > 3 for v, b in zip(last, best))} | {statistics.mean(best):.2f} | {min(best):.1f} |")
    return "\n".join(lines)


def summary(table: dict[str, list[dict[str, float]]]) -> str:
    """Precision % per selector (mean, worst run), then the gain over each run's MMI (mean,
    worst run: the criterion of ``benchmarks/lodo.py``), the failure modes of each selector
    ``icda.final_selector`` offers (:func:`failure_modes`), and every run's precisions and curves:
    MMI's chosen candidate, then the selector at every iteration k >= 1 (what the workflow
    reports per iteration with that ``icda.final_selector``)."""
    columns = (*SELECTORS, "chosen (replayed)")
    lines = ["| dataset | runs | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    for dataset, rows in sorted(table.items()):
        cells = [f"{statistics.mean(r[s] for r in rows):.2f} (worst {min(r[s] for r in rows):.1f})" for s in columns]
        gains = [f"{statistics.mean(r[s] - r['mmi'] for r in rows):+.2f} (worst {min(r[s] - r['mmi'] for r in rows):+.1f})"
                 for s in columns]
        lines.append(f"| {dataset} | {len(rows)} | " + " | ".join(cells) + " |")
        lines.append(f"| {dataset}, gain over MMI | {len(rows)} | " + " | ".join(gains) + " |")
    lines += ["", failure_modes(table), ""]
    for dataset, rows in sorted(table.items()):
        for r in rows:
            lines.append(f"{dataset}, seeds {r['seeds'][0]}–{r['seeds'][-1]}: MMI {r['mmi']:.1f}; "
                         + ", ".join(f"{s} {r[s]:.1f}" for s in SELECTORS))
            for name in CURVES:
                lines.append(f"    {name}: " + " → ".join(f"{v:.1f}" for v in r["curves"][name]))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "results", kind="folder", nargs="+",
              help="workflow results/ folders (<dataset>/run*/ beside <dataset>/settings.json), e.g. a "
                   "robustness.py run's <out>/fixed/results; not the robustness.py --out folder itself")
    parser.add_argument("--split", choices=["dev", "test"], default="dev", help="the split scored (default dev)")
    add_output(parser, "--runs-csv", kind="folder", metavar="DIR",
                        help="also write DIR/runs.csv in benchmarks/robustness.py's format, every run as the "
                             "ensemble reports it (MMI: its chosen candidate; CDA, ICDA, curve: the ensemble)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(build_parser(), argv)
    try:
        if args.runs_csv:
            for root in args.results:  # neither inside a results folder nor a folder holding one (robustness.py's)
                check_output("--runs-csv", args.runs_csv / "runs.csv", "the ensemble's runs",
                             folders={"the results folder": root})
                check_output_dir("--runs-csv", args.runs_csv, "the ensemble's runs", inputs={"the results folder": root})
        for root in args.results:
            if not _runs(root):
                raise DataError(root, None, "matches no run (no <dataset>/run*/ beside a <dataset>/settings.json)",
                                "give a workflow's results/ folder, e.g. ../bench/<name>/fixed/results")
        table = replay(args.results, args.split)
        if not table:
            raise DataError(" ".join(map(str, args.results)), None, f"no finished run with ground truth on {args.split}",
                            "give finished runs of a dataset whose split is annotated (or --split test)")
        print(summary(table))
        if args.runs_csv:
            write_runs(table, args.runs_csv)
    except IcdaError as exc:
        print(f"final_selector: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"final_selector: {exc.filename or 'error'}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
