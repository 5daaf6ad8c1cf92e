# The augmented dataset of an iteration: kept originals + counterfactuals. The dev draw is fixed
# (seeded); training re-draws the train counterfactuals every epoch, train.jsonl is one draw.


rule augment:
    input:
        pools=f"{ITER}/pools.json",
        settings=SETTINGS,
        data=rules.prepare.output,
    output:
        train=f"{ITER}/augmented/train.jsonl",
        dev=f"{ITER}/augmented/dev.jsonl",
    params:
        data=get_data_dir,
        out=get_out_dir,
    priority: LOOP_PRIORITY
    log:
        "results/logs/{dataset}/run{run}/iter{k}/augment.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda augment --pools {input.pools:q} --settings {input.settings:q} --data-dir {params.data:q}"
        " --out-dir {params.out:q} > {log:q} 2>&1"


rule final_dataset:
    """The ICDA dataset of the run whose final choice has the lowest loss on the original dev set,
    and that choice's selector with its settings (icda_model/, for `python -m icda predict`)."""
    input:
        unpack(get_final_iterations),
        settings=SETTINGS,
    output:
        dataset=f"{DATASET}/icda_dataset.jsonl",
        model=f"{DATASET}/icda_model/model.pt",
        card=f"{DATASET}/icda_model/model.json",
    params:  # functions of the input: the input is only known once the runs' checkpoints are done
        data=get_data_dir,
        augmented=lambda wc, input: " ".join(map(shlex.quote, input.get("augmented", []))),
        choices=lambda wc, input: " ".join(map(shlex.quote, input.get("choices", []))),
        model_out=lambda wc, output: os.path.dirname(output.model),
    log:
        "results/logs/{dataset}/final_dataset.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda finalize --augmented {params.augmented} --choices {params.choices}"
        " --data-dir {params.data:q} --out {output.dataset:q} --model-out {params.model_out:q}"
        " --settings {input.settings:q} > {log:q} 2>&1"


rule prune_models:
    """keep_models: chosen: once every output of the dataset is written, remove the model.pt of
    the candidates no choice.json reports (icda/steps/prune.py). The candidate folders are
    directory() outputs dated by their .snakemake_timestamp: nothing is retrained afterwards."""
    input:
        unpack(get_prune_inputs),
    output:
        f"{DATASET}/pruned_models.json",
    params:  # a function of the input: the input is only known once the runs' checkpoints are done
        choices=lambda wc, input: " ".join(map(shlex.quote, input.get("choices", []))),
    log:
        "results/logs/{dataset}/prune_models.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda prune-models --choices {params.choices} --out {output:q} > {log:q} 2>&1"
