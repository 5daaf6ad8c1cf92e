# One training job per (dataset, run, iteration): its candidates one after another in one
# process (the dataset and torch are loaded once), each into its own folder: a fresh model per
# seed, and from iteration 1 (with icda.warm_start) a warm start from the previous choice, trained
# on the previous iteration's augmented data (counterfactuals re-drawn every epoch). COMP: one job per run trains
# its lambda x seed grid the same way.


rule train:
    input:
        unpack(get_train_inputs),
    output:
        directory(CANDIDATES),
    params:
        data=get_data_dir,
        args=get_train_args,
        candidates=get_candidate_seeds,  # tracked: changed seeds retrain the iteration
    threads: config["train_threads"]
    resources:
        gpu=get_gpus,
    benchmark:
        "results/benchmarks/{dataset}/run{run}/iter{k}/train.tsv"
    log:
        "results/logs/{dataset}/run{run}/iter{k}/train.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda train --settings {input.settings:q} --data-dir {params.data:q}"
        " {params.args} --threads {threads} --out-dir {output:q} > {log:q} 2>&1"


rule train_comp:
    input:
        settings=SETTINGS,
        data=rules.prepare.output,
        embeddings=get_embeddings,
    output:
        directory(COMP_CANDIDATES),
    params:
        data=get_data_dir,
        args=get_comp_train_args,
        grid=get_comp_grid,  # tracked: a changed λ grid or seeds retrain COMP
    threads: config["train_threads"]
    resources:
        gpu=get_gpus,
    benchmark:
        "results/benchmarks/{dataset}/run{run}/comp/train.tsv"
    log:
        "results/logs/{dataset}/run{run}/comp/train.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda train --settings {input.settings:q} --data-dir {params.data:q} {params.args}"
        " --threads {threads} --out-dir {output:q} > {log:q} 2>&1"
