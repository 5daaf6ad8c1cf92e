# The stop rule as a checkpoint: its decision decides whether iteration k+1 exists.


checkpoint converge:
    input:
        unpack(get_converge_inputs),
    output:
        f"{ITER}/converge.json",
    params:
        previous=lambda wc, input: f"--previous {shlex.quote(input.previous)}" if input.get("previous") else "",
    priority: LOOP_PRIORITY
    log:
        "results/logs/{dataset}/run{run}/iter{k}/converge.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda converge --choice {input.choice:q} --pools {input.pools:q} {params.previous}"
        " --settings {input.settings:q}"
        " --out {output:q} > {log:q} 2>&1"


checkpoint verdict:
    """icda.verdict: run_agreement: once every run of the dataset has stopped, whether the loop
    helped them, from how far their MMI and ICDA rationales agree and, where they split, from each
    run's own rationales (a sentence judge on the frozen vectors); it decides the iteration each
    run reports (icda_iteration in common.smk)."""
    input:
        unpack(get_verdict_inputs),
        settings=SETTINGS,
        data=rules.prepare.output,
        embeddings=get_embeddings,
    output:
        f"{DATASET}/verdict.json",
    params:
        runs=" ".join(map(str, RUNS)),
        choices=get_verdict_choice_args,
        data=get_data_dir,
        embeddings=get_embeddings_arg,
    log:
        "results/logs/{dataset}/verdict.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda verdict --dataset {wildcards.dataset} --runs {params.runs} {params.choices}"
        " --settings {input.settings:q} --data-dir {params.data:q} {params.embeddings}"
        " --out {output:q} > {log:q} 2>&1"


rule run_summary:
    input:
        unpack(get_run_outputs),
    output:
        f"{RUN}/summary.json",
    log:
        "results/logs/{dataset}/run{run}/summary.log",
    localrule: True
    run:
        outputs.write_run_summary(
            wildcards.dataset, wildcards.run, input.choices, input.decisions, input.evaluations, output[0], log[0],
            input.get("verdict"),
        )
