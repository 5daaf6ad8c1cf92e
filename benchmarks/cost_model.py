"""Cost model of the default configuration: CPU seconds of a training epoch, of one ICDA
iteration and of the embedding against the training-set size, and the projected wall time on the
paper's datasets.

For each size N it generates the built-in synthetic data with N training documents (dev N/5,
test 400) and runs, with the defaults of ``config/config.yaml`` and one run, the embedding,
MMI (iteration 0) and ICDA iteration 1, each job's CPU time recorded as in
``benchmarks/time_split.py`` and each candidate's epochs from its ``history.json``.

How many epochs a candidate trains before early stopping depends on the data, not on N alone
(one synthetic run at 8,000 documents trained its ICDA candidates for twice as many epochs as at
16,000), so the model separates the two: it fits the CPU seconds of one candidate-epoch
(training plus its dev evaluation) as a + b·N (least squares over the sizes), and takes the
epochs per candidate from a finished run on real data (``--real-run RESULTS``: the mean
trained epochs of the MMI, ICDA (k >= 1) and COMP candidates under ``RESULTS``, and COMP's
CPU per epoch relative to MMI's there). The synthetic data is built from templates, so its
embedding cost does not grow with N; the projection takes the embedding's CPU seconds per
training document from the real run's ``--embed-dataset`` (its embed job's CPU over its training
documents; its dev and test sentences included). A job's cost is then candidates × epochs × epoch cost,
plus the start-up, loading and prediction CPU the synthetic jobs measured (the job's CPU minus
its epochs). The projected reproduction of each paper dataset: embed + COMP (a run's λ × seeds
grid) + 3 runs × (MMI + ``ITERATIONS`` iterations), with ``ITERATIONS`` the mean iterations per
run measured on dev (docs/sweep/stop_rule.md). The wall time on C cores is the CPU time divided
by min(C, the jobs that can run at once: 3 runs per dataset, every dataset in parallel), and at
least the longest run's chain (MMI and its iterations run one after another).

    PYTHONPATH=. .venv/bin/python benchmarks/cost_model.py [--sizes 500 2000 8000 16000] \
        [--real-run results --embed-dataset restaurant]

Timings are CPU seconds of this machine (frozen encoder, 1 training thread); other load slows
them, so compare only numbers from one invocation.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import icda  # noqa: F401  (first: the kernel path's variables before torch loads numpy's BLAS)
from icda.guard import add_input, parse_arguments  # noqa: E402
import numpy as np
import yaml

from time_split import REPO, command, iteration_cpu, run_workflow

#: training documents of the paper's datasets (Table 1 and 2 data; the hotel sets of Bao et al.)
PAPER = {"restaurant": 4574, "connect": 7500, "location": 10144, "service": 10000, "cleanliness": 10000}
ITERATIONS = 4.1  #: mean ICDA iterations per run, docs/sweep/stop_rule.md
COMP_TRAININGS = 4  #: comp: 2 λ × 2 seeds per run (config/config.yaml)
CORES = (2, 8, 32)


def measure(n: int) -> dict[str, float]:
    """At N = ``n``: CPU seconds of the embedding, of MMI (iteration 0) and of ICDA iteration 1,
    the CPU seconds per candidate-epoch and the epochs per candidate of both iterations."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "size.yaml"
        config.write_text(yaml.safe_dump({
            "run_datasets": ["synthetic"], "n_runs": 1, "icda": {"max_iters": 1},
            "datasets": {"synthetic": {"synthetic": {"n_train": n, "n_dev": max(n // 5, 100), "n_test": 400}}}}))
        targets = ["results/synthetic/run1/iter1/eval.json", "results/synthetic/run1/iter1/converge.json"]
        _, jobs, _ = run_workflow(REPO, Path(tmp) / "work", [config], targets, cores=1)
        run = Path(tmp) / "work/results/synthetic/run1"
        epochs = {k: epoch_stats(run.glob(f"iter{k}/candidates/*/history.json")) for k in (0, 1)}
    per_iteration = iteration_cpu(jobs)
    return {"embed": sum(j["cpu"] for j in jobs if command(j) == "embed"),
            "mmi": per_iteration.get(0, 0.0), "iteration": per_iteration.get(1, 0.0),
            "mmi_epochs": epochs[0]["epochs"], "iteration_epochs": epochs[1]["epochs"],
            "epoch_cpu": (epochs[0]["cpu"] + epochs[1]["cpu"]) / (epochs[0]["total"] + epochs[1]["total"])}


def epoch_stats(histories) -> dict[str, float]:
    """Over the given history.json files: ``epochs`` (mean trained epochs per candidate, epoch
    −1 not counted), ``total`` (their sum) and ``cpu`` (the CPU seconds of all their epochs, each
    with its dev evaluation)."""
    counts, cpu = [], 0.0
    for path in histories:
        trained = [e for e in json.loads(Path(path).read_text())["epochs"] if e["epoch"] >= 0]
        counts.append(len(trained))
        cpu += sum(e["cpu_seconds"] for e in trained)
    return {"epochs": float(np.mean(counts)) if counts else float("nan"), "total": float(sum(counts)), "cpu": cpu}


def real_epochs(results: Path) -> dict[str, float]:
    """Mean trained epochs per MMI, ICDA (k >= 1) and COMP candidate over every dataset under
    ``results``, and COMP's CPU per epoch over MMI's."""
    mmi = epoch_stats(results.glob("*/run*/iter0/candidates/*/history.json"))
    icda = epoch_stats(p for p in results.glob("*/run*/iter*/candidates/*/history.json") if "/iter0/" not in str(p))
    comp = epoch_stats(results.glob("*/run*/comp/**/history.json"))
    if not (mmi["total"] and icda["total"] and comp["total"]):
        raise SystemExit(f"{results}: no finished MMI, ICDA and COMP candidates (history.json) to count epochs in")
    return {"mmi": mmi["epochs"], "iteration": icda["epochs"], "comp": comp["epochs"],
            "comp_cost": (comp["cpu"] / comp["total"]) / (mmi["cpu"] / mmi["total"])}


def embed_per_document(results: Path, dataset: str) -> float:
    """CPU seconds of ``dataset``'s embed job (its benchmark file) per training document."""
    from icda.report.compute import read_benchmark

    cpu = read_benchmark(results / "benchmarks" / dataset / "embed.tsv")["cpu_seconds"]
    documents = json.loads((results / dataset / "data/stats.json").read_text())["splits"]["train"]["documents"]
    if not cpu == cpu:  # NaN: not measured
        raise SystemExit(f"{results}: no benchmark of {dataset}'s embed job")
    return cpu / documents


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 8000, 16000])
    add_input(parser, "--real-run", kind="tree",
                        help="a finished run's results folder: epochs per candidate and the embedding's cost "
                             "(default: the synthetic runs')")
    parser.add_argument("--embed-dataset", default="restaurant", help="with --real-run: whose embedding cost to scale")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    rows = {n: measure(n) for n in args.sizes}
    print("| training documents | embed CPU s | MMI (iteration 0) CPU s | epochs/candidate | "
          "one ICDA iteration CPU s | epochs/candidate | CPU s per candidate-epoch |")
    print("|---|---|---|---|---|---|---|")
    for n, r in rows.items():
        print(f"| {n} | {r['embed']:.1f} | {r['mmi']:.1f} | {r['mmi_epochs']:.1f} | {r['iteration']:.1f} | "
              f"{r['iteration_epochs']:.1f} | {r['epoch_cpu']:.2f} |")
    sizes = np.array(list(rows), dtype=float)
    epoch_fit = np.polyfit(sizes, [r["epoch_cpu"] for r in rows.values()], 1)
    embed_fit = np.polyfit(sizes, [r["embed"] for r in rows.values()], 1)
    # what a job costs beyond its epochs (start-up, loading, final predictions), per candidate
    extra = {key: np.polyfit(sizes, [(r[key] - candidates * r[f"{key}_epochs"] * r["epoch_cpu"]) / candidates
                                      for r in rows.values()], 1)
             for key, candidates in (("mmi", 3), ("iteration", 4))}
    print(f"\ncandidate-epoch: {epoch_fit[1]:.2f} s + {1000 * epoch_fit[0]:.2f} s per 1000 documents")
    print(f"embed: {embed_fit[1]:.1f} s + {1000 * embed_fit[0]:.2f} s per 1000 documents")
    embed_cost = lambda n: float(np.polyval(embed_fit, n))  # noqa: E731
    if args.real_run:
        epochs = real_epochs(args.real_run)
        source = str(args.real_run)
        per_document = embed_per_document(args.real_run, args.embed_dataset)
        embed_cost = lambda n: per_document * n  # noqa: E731
        print(f"embed ({args.embed_dataset} of {source}): {per_document:.3f} s per training document")
    else:
        last = rows[max(rows)]
        epochs = {"mmi": last["mmi_epochs"], "iteration": last["iteration_epochs"], "comp": last["mmi_epochs"],
                  "comp_cost": 1.0}
        source = f"the synthetic run at {max(rows)}"
    print(f"epochs per candidate ({source}): MMI {epochs['mmi']:.1f}, ICDA {epochs['iteration']:.1f}, "
          f"COMP {epochs['comp']:.1f} (COMP epoch CPU {epochs['comp_cost']:.2f} x MMI's)")
    print()
    print("| dataset | N | embed | per run (MMI + iterations) | COMP | total CPU min | "
          + " | ".join(f"wall min, {c} cores" for c in CORES) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(CORES))
    total, chains = 0.0, []
    for name, n in PAPER.items():
        epoch = float(np.polyval(epoch_fit, n))
        mmi = 3 * (epochs["mmi"] * epoch + float(np.polyval(extra["mmi"], n)))
        iteration = 4 * (epochs["iteration"] * epoch + float(np.polyval(extra["iteration"], n)))
        comp = 3 * COMP_TRAININGS * (epochs["comp"] * epoch * epochs["comp_cost"] + float(np.polyval(extra["mmi"], n)))
        embed = embed_cost(n)
        run = mmi + ITERATIONS * iteration
        cpu = embed + 3 * run + comp
        total += cpu
        chains.append(embed + run)
        walls = [max(cpu / min(c, 3), embed + run) / 60 for c in CORES]
        print(f"| {name} | {n} | {embed / 60:.1f} | {run / 60:.1f} | {comp / 60:.1f} | {cpu / 60:.1f} | "
              + " | ".join(f"{w:.1f}" for w in walls) + " |")
    parallel = 3 * len(PAPER)
    walls = [max(total / min(c, parallel), max(chains)) / 60 for c in CORES]
    print(f"| all {len(PAPER)} | | | | | {total / 60:.1f} | " + " | ".join(f"{w:.1f}" for w in walls) + " |")
    shares = {"embed": embed_cost(1.0) - embed_cost(0.0), "MMI": 3 * 3 * epochs["mmi"] * epoch_fit[0],
              "ICDA iterations": 3 * ITERATIONS * 4 * epochs["iteration"] * epoch_fit[0],
              "COMP": 3 * COMP_TRAININGS * epochs["comp"] * epochs["comp_cost"] * epoch_fit[0]}
    print(f"\nAt scale (the largest per-document slope) the dominant step is: {max(shares, key=shares.get)}")


if __name__ == "__main__":
    main()
