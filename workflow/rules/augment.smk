# The augmented dataset of an iteration: kept originals + counterfactuals. The dev draw is fixed
# (seeded); training re-draws the train counterfactuals every epoch, train.jsonl is one draw.


rule augment:
    input:
        pools="results/{dataset}/run{run}/iter{k}/pools.json",
        data=rules.prepare.output,
    output:
        train="results/{dataset}/run{run}/iter{k}/augmented/train.jsonl",
        dev="results/{dataset}/run{run}/iter{k}/augmented/dev.jsonl",
    params:
        seed=config["icda"]["dev_seed"],
        max_sentences=config["encoder"]["max_sentences"],
    log:
        "results/logs/{dataset}/run{run}/iter{k}/augment.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda augment --pools {input.pools} --data-dir results/{wildcards.dataset}/data"
        " --seed {params.seed} --max-sentences {params.max_sentences}"
        " --out-dir results/{wildcards.dataset}/run{wildcards.run}/iter{wildcards.k}/augmented > {log} 2>&1"


rule final_dataset:
    """The ICDA dataset of the run whose final selector has the lowest loss on the original dev set."""
    input:
        unpack(final_iterations),
    output:
        "results/{dataset}/icda_dataset.jsonl",
    params:  # a function of the input: the input is only known once the runs' checkpoints are done
        augmented=lambda wc, input: input.get("augmented", []),
    log:
        "results/logs/{dataset}/final_dataset.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda finalize --augmented {params.augmented} --data-dir results/{wildcards.dataset}/data"
        " --out {output} > {log} 2>&1"
