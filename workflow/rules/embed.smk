# Frozen-encoder mode: every sentence of a dataset is encoded once and cached. The job asks for 2
# threads; with --cores 2 the scheduler would keep filling both cores with 1-thread training jobs
# of other datasets and start it last (measured: restaurant's embed started after 36 min), so it gets
# priority: every training job of its dataset waits for it.


rule embed:
    input:
        settings="results/{dataset}/settings.json",
        data=rules.prepare.output,
    output:
        "results/{dataset}/embeddings.pt",
    params:
        cache=config["embedding_cache"],
    threads: 2
    priority: 100
    resources:
        gpu=lambda wc: icda_workflow.gpus(config, wc.dataset),
    benchmark:
        "results/benchmarks/{dataset}/embed.tsv"
    log:
        "results/logs/{dataset}/embed.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda embed --settings {input.settings} --data-dir results/{wildcards.dataset}/data"
        " --out {output} --cache-dir {params.cache:q} > {log} 2>&1"
