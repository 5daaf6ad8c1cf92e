# Frozen-encoder mode: every sentence of a dataset is encoded once and cached.


rule embed:
    input:
        settings="results/{dataset}/settings.json",
        data=rules.prepare.output,
    output:
        "results/{dataset}/embeddings.pt",
    params:
        cache=config["embedding_cache"],
    threads: 2
    log:
        "results/logs/{dataset}/embed.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda embed --settings {input.settings} --data-dir results/{wildcards.dataset}/data"
        " --out {output} --cache-dir {params.cache:q} > {log} 2>&1"
