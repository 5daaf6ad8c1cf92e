# One training job per (dataset, run, iteration, candidate): a fresh model per seed, and from
# iteration 1 a warm start from the previous selection, trained on the previous iteration's
# augmented data (counterfactuals re-drawn every epoch). COMP: a lambda x seed grid.


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
        gpu=lambda wc: icda_workflow.gpus(config, wc.dataset),
    benchmark:
        "results/benchmarks/{dataset}/run{run}/iter{k}/{cand}.tsv"
    log:
        "results/logs/{dataset}/run{run}/iter{k}/{cand}.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda train --settings {input.settings} --data-dir results/{wildcards.dataset}/data"
        " {params.args} --seed {params.seed} --threads {threads}"
        " --out-dir results/{wildcards.dataset}/run{wildcards.run}/iter{wildcards.k}/{wildcards.cand}"
        " > {log} 2>&1"


rule train_comp:
    input:
        settings="results/{dataset}/settings.json",
        data=rules.prepare.output,
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
        gpu=lambda wc: icda_workflow.gpus(config, wc.dataset),
    benchmark:
        "results/benchmarks/{dataset}/run{run}/comp/{comp}.tsv"
    log:
        "results/logs/{dataset}/run{run}/comp/{comp}.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda train --settings {input.settings} --data-dir results/{wildcards.dataset}/data"
        " {params.args} {params.comp} --threads {threads}"
        " --out-dir results/{wildcards.dataset}/run{wildcards.run}/comp/{wildcards.comp} > {log} 2>&1"
