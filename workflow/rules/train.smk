# One training job per (dataset, run, iteration, candidate): a fresh model per seed, and from
# iteration 1 a warm start from the previous selection, trained on the previous iteration's
# augmented data (counterfactuals re-drawn every epoch). COMP: a lambda x seed grid.


def _train_inputs(wc):
    inputs = {
        "settings": f"results/{wc.dataset}/settings.json",
        "data": f"results/{wc.dataset}/data/stats.json",
        "embeddings": embeddings(wc),
    }
    k = int(wc.k)
    if k >= 1:
        previous = f"results/{wc.dataset}/run{wc.run}/iter{k - 1}"
        inputs["pools"] = f"{previous}/pools.json"
        inputs["augmented_dev"] = f"{previous}/augmented/dev.jsonl"
        inputs["previous_selection"] = f"{previous}/selected.json"
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


rule train:
    input:
        unpack(_train_inputs),
    output:
        model="results/{dataset}/run{run}/iter{k}/{cand}/model.pt",
        rationales="results/{dataset}/run{run}/iter{k}/{cand}/rationales.json",
        history="results/{dataset}/run{run}/iter{k}/{cand}/history.json",
    params:
        args=_train_args,
        seed=_seed,
    threads: config["train_threads"]
    resources:
        gpu=lambda wc: int(icda_workflow.finetune(config, wc.dataset)),
    log:
        "results/logs/{dataset}/run{run}/iter{k}/{cand}.log",
    shell:
        "python -m icda train --settings {input.settings} --data-dir results/{wildcards.dataset}/data"
        " {params.args} --seed {params.seed} --threads {threads}"
        " --out-dir results/{wildcards.dataset}/run{wildcards.run}/iter{wildcards.k}/{wildcards.cand}"
        " > {log} 2>&1"


def _comp_params(wc):
    lam, seed = wc.comp.removeprefix("lambda").split("_seed")
    return f"--objective comp --comp-lambda {lam} --seed {seed}"


rule train_comp:
    input:
        settings="results/{dataset}/settings.json",
        data="results/{dataset}/data/stats.json",
        embeddings=embeddings,
    output:
        model="results/{dataset}/run{run}/comp/{comp}/model.pt",
        rationales="results/{dataset}/run{run}/comp/{comp}/rationales.json",
        history="results/{dataset}/run{run}/comp/{comp}/history.json",
    params:
        args=embeddings_arg,
        comp=_comp_params,
    threads: config["train_threads"]
    resources:
        gpu=lambda wc: int(icda_workflow.finetune(config, wc.dataset)),
    log:
        "results/logs/{dataset}/run{run}/comp/{comp}.log",
    shell:
        "python -m icda train --settings {input.settings} --data-dir results/{wildcards.dataset}/data"
        " {params.args} {params.comp} --threads {threads}"
        " --out-dir results/{wildcards.dataset}/run{wildcards.run}/comp/{wildcards.comp} > {log} 2>&1"
