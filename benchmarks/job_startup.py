"""Start-up cost of the per-iteration bookkeeping jobs (select, pools, converge, augment) and of
the sweep's dev evaluation (from predictions.json, against loading the model).

Each ICDA iteration runs these four commands as their own Snakemake jobs; what they compute takes
milliseconds, so a job's cost is starting Python and importing what the command uses. This times,
in fresh interpreters, the imports each command does at run time against two baselines measured
in the same invocation: an empty interpreter and ``import torch``.

    PYTHONPATH=. .venv/bin/python benchmarks/job_startup.py [--repeat 5]

Prints per command the fastest of ``--repeat`` interleaved rounds (seconds) and its ratio to
``import torch`` (< 1: cheaper than importing torch).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import icda  # noqa: F401  (the repository's package on sys.path)
from icda.guard import parse_arguments

SETTINGS = "import icda.settings; icda.settings.Settings.from_dict({})"  # as Settings.load does
#: what each command imports (its module, icda/steps/<command>.py, and what its ``run`` imports)
COMMANDS = {
    "empty interpreter": "pass",
    "import torch (baseline)": "import torch",
    "select": "import icda.steps.select, icda.model_selection",
    "pools": f"import icda.steps.pools, icda.counterfactual, icda.records; {SETTINGS}",
    "converge": f"import icda.steps.converge, icda.records, icda.model_selection; {SETTINGS}",
    "augment": f"import icda.steps.augment, icda.counterfactual, icda.data.sentence_ids; {SETTINGS}",
    "evaluate --predictions (sweep)": f"import icda.steps.evaluate, icda.metrics, icda.data.document; {SETTINGS}",
    "evaluate --model": "import icda.steps.evaluate, icda.train, icda.loading",
}


def seconds(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds; the fastest is kept")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    best = {name: float("inf") for name in COMMANDS}
    for _ in range(args.repeat):
        for name, code in COMMANDS.items():
            best[name] = min(best[name], seconds(code))
    torch_s = best["import torch (baseline)"]
    print(f"| command | seconds (fastest of {args.repeat}) | ratio to import torch |")
    print("|---|---|---|")
    for name, value in best.items():
        print(f"| {name} | {value:.3f} | {value / torch_s:.2f} |")


if __name__ == "__main__":
    main()
