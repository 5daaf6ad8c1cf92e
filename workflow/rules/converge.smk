# The stop rule as a checkpoint: its decision decides whether iteration k+1 exists.


checkpoint converge:
    input:
        choice=f"{ITER}/choice.json",
        settings=SETTINGS,
        augmented=f"{ITER}/augmented/train.jsonl",
    output:
        f"{ITER}/converge.json",
    log:
        "results/logs/{dataset}/run{run}/iter{k}/converge.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda converge --choice {input.choice:q} --settings {input.settings:q} --out {output:q}"
        " > {log:q} 2>&1"


rule run_summary:
    input:
        unpack(get_run_outputs),
    output:
        f"{RUN}/summary.json",
    log:
        "results/logs/{dataset}/run{run}/summary.log",
    localrule: True
    run:
        workflow_helpers.write_run_summary(
            wildcards.dataset, wildcards.run, input.decisions, input.evaluations, output[0], log[0]
        )
