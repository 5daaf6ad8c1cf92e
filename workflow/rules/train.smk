# One training job per (dataset, run, iteration): its candidates one after another in one
# process (the dataset and torch are loaded once), each into its own folder: a fresh model per
# seed, and from iteration 1 a warm start from the previous choice, trained on the previous
# iteration's augmented data (counterfactuals re-drawn every epoch). COMP: a lambda x seed grid.


rule train:
    input:
        unpack(get_train_inputs),
    output:
        directory(CANDIDATES),
    params:
        data=get_data_dir,
        args=get_train_args,
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
        model=f"{COMP_CANDIDATE}/model.pt",
        predictions=f"{COMP_CANDIDATE}/predictions.json",
        history=f"{COMP_CANDIDATE}/history.json",
    params:
        data=get_data_dir,
        out=get_out_dir,
        args=get_embeddings_arg,
    threads: config["train_threads"]
    resources:
        gpu=get_gpus,
    benchmark:
        "results/benchmarks/{dataset}/run{run}/comp/lambda{lam}_seed{seed}.tsv"
    log:
        "results/logs/{dataset}/run{run}/comp/lambda{lam}_seed{seed}.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda train --settings {input.settings:q} --data-dir {params.data:q} {params.args}"
        " --objective comp --comp-lambda {wildcards.lam} --seed {wildcards.seed} --threads {threads}"
        " --out-dir {params.out:q} > {log:q} 2>&1"
