# Kept originals (2m per split) and the rationale pools A_0, A_1 of the selected model.


rule pools:
    input:
        selected="results/{dataset}/run{run}/iter{k}/selected.json",
        data=rules.prepare.output,
        rationales=lambda wc: candidate_files(wc.dataset, wc.run, wc.k, "rationales.json"),
    output:
        "results/{dataset}/run{run}/iter{k}/pools.json",
    params:
        fraction=config["icda"]["pool_fraction"],
        base=config["icda"]["pool_base"],
    log:
        "results/logs/{dataset}/run{run}/iter{k}/pools.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda pools --selected {input.selected} --data-dir results/{wildcards.dataset}/data"
        " --pool-fraction {params.fraction} --pool-base {params.base} --out {output} > {log} 2>&1"
