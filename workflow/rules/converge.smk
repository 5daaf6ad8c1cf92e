# The stop rule as a checkpoint: its decision decides whether iteration k+1 exists.


checkpoint converge:
    input:
        selected="results/{dataset}/run{run}/iter{k}/selected.json",
        augmented="results/{dataset}/run{run}/iter{k}/augmented/train.jsonl",
    output:
        "results/{dataset}/run{run}/iter{k}/converge.json",
    params:
        max_iters=MAX_ITERS,
    log:
        "results/logs/{dataset}/run{run}/iter{k}/converge.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda converge --selected {input.selected} --max-iters {params.max_iters}"
        " --out {output} > {log} 2>&1"


rule run_summary:
    input:
        unpack(run_outputs),
    output:
        "results/{dataset}/run{run}/summary.json",
    log:
        "results/logs/{dataset}/run{run}/summary.log",
    localrule: True
    run:
        icda_workflow.write_run_summary(
            wildcards.dataset, wildcards.run, input.decisions, input.evaluations, output[0], log[0]
        )
