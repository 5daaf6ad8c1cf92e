# Test-set rationale precision of each iteration's choice and of the COMP baseline.


rule evaluate:
    input:
        settings=SETTINGS,
        data=rules.prepare.output,
        embeddings=get_embeddings,
        choice=f"{ITER}/choice.json",
        candidates=get_candidates,
    output:
        f"{ITER}/eval.json",
    params:
        data=get_data_dir,
        args=get_embeddings_arg,
    log:
        "results/logs/{dataset}/run{run}/iter{k}/evaluate.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda evaluate --settings {input.settings:q} --data-dir {params.data:q} {params.args}"
        " --choice {input.choice:q} --out {output:q} --dataset {wildcards.dataset} --run {wildcards.run}"
        " --iteration {wildcards.k} > {log:q} 2>&1"


rule evaluate_comp:
    input:
        settings=SETTINGS,
        data=rules.prepare.output,
        embeddings=get_embeddings,
        choice=f"{COMP}/choice.json",
        candidates=COMP_CANDIDATES,
    output:
        f"{COMP}/eval.json",
    params:
        data=get_data_dir,
        args=get_embeddings_arg,
    log:
        "results/logs/{dataset}/run{run}/comp/evaluate.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda evaluate --settings {input.settings:q} --data-dir {params.data:q} {params.args}"
        " --choice {input.choice:q} --out {output:q} --dataset {wildcards.dataset} --run {wildcards.run}"
        " --iteration null > {log:q} 2>&1"
