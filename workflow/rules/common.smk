# Shared values and input functions. Decisions live in icda/workflow.py.
import json
import shlex
from pathlib import Path

from icda import workflow as icda_workflow

AVAILABLE, UNAVAILABLE = icda_workflow.availability(config)
RUNS = icda_workflow.run_numbers(config)
MAX_ITERS = config["icda"]["max_iters"]

wildcard_constraints:
    dataset=r"[A-Za-z0-9_\-]+",
    run=r"\d+",
    k=r"\d+",
    cand=r"seed\d+|warm",
    comp=r"lambda[0-9.]+_seed\d+",
    point=r"[A-Za-z0-9_\-]+",
    seed=r"\d+",


def embeddings(wildcards):
    """Frozen mode trains on the dataset's sentence-embedding cache; finetune mode needs none."""
    if icda_workflow.finetune(config, wildcards.dataset):
        return []
    return f"results/{wildcards.dataset}/embeddings.pt"


def embeddings_arg(wildcards, input):
    return f"--embeddings {shlex.quote(input.embeddings)}" if input.get("embeddings") else ""


def last_iteration(dataset, run):
    """Walk the converge checkpoints of one run: the first iteration whose decision is to stop
    (bounded by max_iters; an unfinished checkpoint makes Snakemake schedule it first)."""
    for k in range(MAX_ITERS + 1):
        decision = checkpoints.converge.get(dataset=dataset, run=run, k=k).output[0]
        with open(decision) as fh:
            if json.load(fh)["stop"]:
                return k
    raise ValueError(f"{dataset} run {run}: no stop decision within max_iters={MAX_ITERS}")


def iteration_files(dataset, run, name):
    """``name`` (e.g. eval.json) of every iteration of one run, up to its last."""
    last = last_iteration(dataset, run)
    return [f"results/{dataset}/run{run}/iter{k}/{name}" for k in range(last + 1)]


def run_outputs(wildcards):
    """Every iteration's stop decision and evaluation of one run (walks its checkpoints)."""
    return {
        "decisions": iteration_files(wildcards.dataset, wildcards.run, "converge.json"),
        "evaluations": iteration_files(wildcards.dataset, wildcards.run, "eval.json"),
    }


def run_summaries():
    """Static targets, one per (dataset, run): each walks its own checkpoints, so runs proceed
    in parallel."""
    return expand("results/{dataset}/run{run}/summary.json", dataset=AVAILABLE, run=RUNS)


def all_evaluations(wildcards):
    paths = []
    for dataset in AVAILABLE:
        for run in RUNS:
            paths += iteration_files(dataset, run, "eval.json")
            paths.append(f"results/{dataset}/run{run}/comp/eval.json")
    return paths


def dataset_evaluations(wildcards):
    """Every iteration's eval.json of every run of one dataset (the rationale viewer's input)."""
    return [path for run in RUNS for path in iteration_files(wildcards.dataset, run, "eval.json")]


def final_iterations(wildcards):
    """Per run of a dataset, its last iteration's augmented training set, and the selection (with
    its candidates' rationales) by which finalize compares the runs."""
    dataset = wildcards.dataset
    last = {run: last_iteration(dataset, run) for run in RUNS}
    return {
        "augmented": [f"results/{dataset}/run{run}/iter{k}/augmented/train.jsonl" for run, k in last.items()],
        "selections": [f"results/{dataset}/run{run}/iter{k}/selected.json" for run, k in last.items()],
        "rationales": [path for run, k in last.items()
                       for path in candidate_files(dataset, run, k, "rationales.json")],
        "data": expand(rules.prepare.output, dataset=dataset),
    }


def candidate_files(dataset, run, k, name):
    """``name`` (model.pt, rationales.json) of every candidate of iteration ``k``: a job that
    reads the selected candidate's file declares them all."""
    base = f"results/{dataset}/run{run}/iter{k}"
    return [f"{base}/{cand}/{name}" for cand in icda_workflow.candidates(config, run, k)]


def comp_files(wildcards, name):
    """``name`` of every COMP candidate of one run."""
    base = f"results/{wildcards.dataset}/run{wildcards.run}/comp"
    return [f"{base}/{comp}/{name}" for comp in icda_workflow.comp_candidates(config, wildcards.run)]


# --- training and selection inputs ---


def _train_inputs(wc):
    inputs = {
        "settings": f"results/{wc.dataset}/settings.json",
        "data": expand(rules.prepare.output, dataset=wc.dataset),
        "embeddings": embeddings(wc),
    }
    k = int(wc.k)
    if k >= 1:
        previous = f"results/{wc.dataset}/run{wc.run}/iter{k - 1}"
        inputs["pools"] = f"{previous}/pools.json"
        inputs["augmented_dev"] = f"{previous}/augmented/dev.jsonl"
        inputs["previous_selection"] = f"{previous}/selected.json"
    if wc.cand == "warm":
        inputs["previous_models"] = candidate_files(wc.dataset, wc.run, k - 1, "model.pt")
    return inputs


def _train_args(wc, input):
    args = [embeddings_arg(wc, input)]
    k = int(wc.k)
    if k >= 1:
        args.append(f"--augmented results/{wc.dataset}/run{wc.run}/iter{k - 1}")
    if wc.cand == "warm":
        args.append(f"--init {input.previous_selection}")
    return " ".join(args)


def _seed(wc):
    if wc.cand == "warm":  # the warm start continues with the first seed of the run
        return icda_workflow.run_seeds(config, wc.run)[0]
    return int(wc.cand.removeprefix("seed"))


def _comp_params(wc):
    lam, seed = wc.comp.removeprefix("lambda").split("_seed")
    return f"--objective comp --comp-lambda {lam} --seed {seed}"


def _select_inputs(wc):
    base = f"results/{wc.dataset}/run{wc.run}/iter{wc.k}"
    inputs = {
        "data": expand(rules.prepare.output, dataset=wc.dataset),
        "candidates": [f"{base}/{c}/history.json" for c in icda_workflow.candidates(config, wc.run, wc.k)],
        "rationales": candidate_files(wc.dataset, wc.run, wc.k, "rationales.json"),
    }
    if int(wc.k) >= 1:
        inputs["previous"] = f"results/{wc.dataset}/run{wc.run}/iter{int(wc.k) - 1}/selected.json"
        inputs["previous_rationales"] = candidate_files(wc.dataset, wc.run, int(wc.k) - 1, "rationales.json")
    return inputs


def _select_args(wc, input):
    base = f"results/{wc.dataset}/run{wc.run}/iter{wc.k}"
    fresh = [f"{base}/{c}" for c in icda_workflow.candidates(config, wc.run, wc.k) if c != "warm"]
    args = "--candidates " + " ".join(fresh)
    if int(wc.k) >= 1:
        args += f" --warm-start {base}/warm --previous {input.previous}"
    return args


# --- the dev-only tuning sweep (sweep.smk) ---

def get_sweep_embeddings(wc):
    """The dataset's cache, or the point's own when the point changes the encoder."""
    if embeddings(wc) and icda_workflow.sweep_changes_encoder(config, wc.point):
        return f"results/sweep/{wc.point}/{wc.dataset}/embeddings.pt"
    return embeddings(wc)


def get_sweep_evals(wildcards):
    """Every (point, dataset, seed) dev evaluation; the datasets are checked only when the sweep
    is requested."""
    return expand(
        "results/sweep/{point}/{dataset}/seed{seed}/dev_eval.json",
        point=config["sweep"]["points"], dataset=icda_workflow.sweep_datasets(config, AVAILABLE),
        seed=config["sweep"]["seeds"],
    )
