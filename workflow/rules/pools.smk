# Kept originals (2m per split) and the rationale pools A_0, A_1 of the chosen model.


rule pools:
    input:
        choice=f"{ITER}/choice.json",
        settings=SETTINGS,
        data=rules.prepare.output,
        candidates=get_candidates,
        embeddings=get_pool_embeddings,
    output:
        f"{ITER}/pools.json",
    params:
        data=get_data_dir,
        embeddings=get_embeddings_arg,
    priority: LOOP_PRIORITY
    log:
        "results/logs/{dataset}/run{run}/iter{k}/pools.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda pools --choice {input.choice:q} --settings {input.settings:q} --data-dir {params.data:q}"
        " {params.embeddings} --out {output:q} > {log:q} 2>&1"
