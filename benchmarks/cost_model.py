"""Cost model of the default configuration: CPU seconds of one ICDA iteration and of the
embedding against the training-set size, and the projected wall time on the paper's datasets.

For each size N it generates the built-in synthetic data with N training documents (dev N/5,
test 400) and runs, with the defaults of ``config/config.yaml`` and one run, the embedding,
MMI (iteration 0) and ICDA iteration 1, each job's CPU time recorded as in
``benchmarks/time_split.py``. It fits seconds = a + b·N to the iteration's and to the embedding's
CPU seconds (least squares) and projects the default reproduction of each paper dataset:
embed + COMP (λ × seeds trainings, about one iteration's training each) + 3 runs × (MMI +
``ITERATIONS`` iterations), with ``ITERATIONS`` the mean iterations per run measured on dev
(docs/sweep/stop_rule.md). The wall time on C cores is the CPU time divided by
min(C, the jobs that can run at once: 3 runs per dataset, every dataset in parallel), and at
least the longest run's chain (MMI and its iterations run one after another).

    PYTHONPATH=. .venv/bin/python benchmarks/cost_model.py [--sizes 500 2000 8000 16000]

Timings are CPU seconds of this machine (frozen encoder, 1 training thread); other load slows
them, so compare only numbers from one invocation.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import yaml

from time_split import REPO, command, iteration_cpu, run_workflow

#: training documents of the paper's datasets (Table 1 and 2 data; the hotel sets of Bao et al.)
PAPER = {"restaurant": 4574, "connect": 7500, "location": 10144, "service": 10000, "cleanliness": 10000}
ITERATIONS = 4.1  #: mean ICDA iterations per run, docs/sweep/stop_rule.md
COMP_TRAININGS = 4  #: comp: 2 λ × 2 seeds per run (config/config.yaml)
CORES = (2, 8, 32)


def measure(n: int) -> dict[str, float]:
    """CPU seconds of the embedding, of MMI (iteration 0) and of ICDA iteration 1 at N = ``n``."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "size.yaml"
        config.write_text(yaml.safe_dump({
            "run_datasets": ["synthetic"], "n_runs": 1, "icda": {"max_iters": 1},
            "datasets": {"synthetic": {"synthetic": {"n_train": n, "n_dev": max(n // 5, 100), "n_test": 400}}}}))
        targets = ["results/synthetic/run1/iter1/eval.json", "results/synthetic/run1/iter1/converge.json"]
        _, jobs = run_workflow(REPO, Path(tmp) / "work", [config], targets, cores=1)
    per_iteration = iteration_cpu(jobs)
    return {"embed": sum(j["cpu"] for j in jobs if command(j) == "embed"),
            "mmi": per_iteration.get(0, 0.0), "iteration": per_iteration.get(1, 0.0)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 8000, 16000])
    args = parser.parse_args(argv)
    rows = {n: measure(n) for n in args.sizes}
    print("| training documents | embed CPU s | MMI (iteration 0) CPU s | one ICDA iteration CPU s |")
    print("|---|---|---|---|")
    for n, r in rows.items():
        print(f"| {n} | {r['embed']:.1f} | {r['mmi']:.1f} | {r['iteration']:.1f} |")
    sizes = np.array(list(rows), dtype=float)
    fit = {key: np.polyfit(sizes, [r[key] for r in rows.values()], 1) for key in ("embed", "mmi", "iteration")}
    print()
    for key, (b, a) in fit.items():
        print(f"{key}: {a:.1f} s + {1000 * b:.2f} s per 1000 documents")
    print()
    print("| dataset | N | embed | per run (MMI + iterations) | COMP | total CPU min | "
          + " | ".join(f"wall min, {c} cores" for c in CORES) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(CORES))
    total, chains = 0.0, []
    for name, n in PAPER.items():
        embed, mmi, iteration = (float(np.polyval(fit[k], n)) for k in ("embed", "mmi", "iteration"))
        run = mmi + ITERATIONS * iteration
        comp = 3 * COMP_TRAININGS * (iteration / 4)  # a COMP training costs about one candidate's share
        cpu = embed + 3 * run + comp
        total += cpu
        chains.append(embed + run)
        walls = [max(cpu / min(c, 3), embed + run) / 60 for c in CORES]
        print(f"| {name} | {n} | {embed / 60:.1f} | {run / 60:.1f} | {comp / 60:.1f} | {cpu / 60:.1f} | "
              + " | ".join(f"{w:.1f}" for w in walls) + " |")
    parallel = 3 * len(PAPER)
    walls = [max(total / min(c, parallel), max(chains)) / 60 for c in CORES]
    print(f"| all {len(PAPER)} | | | | | {total / 60:.1f} | " + " | ".join(f"{w:.1f}" for w in walls) + " |")
    dominant = max(("embed", "MMI", "ICDA iterations"),
                   key=lambda k: {"embed": fit["embed"][0], "MMI": 3 * fit["mmi"][0],
                                  "ICDA iterations": 3 * ITERATIONS * fit["iteration"][0]}[k])
    print(f"\nAt scale (the largest per-document slope) the dominant step is: {dominant}")


if __name__ == "__main__":
    main()
