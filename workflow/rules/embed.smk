# Frozen-encoder mode: every sentence of a dataset is encoded once and cached. One thread: the
# fixed kernel path computes on one (icda/kernels.py; a reduction split over more threads sums in
# another order). With --cores 2 the scheduler would keep filling both cores with training jobs of
# other datasets and start it last (measured: restaurant's embed started after 36 min), so it gets
# priority: every training job of its dataset waits for it.


rule embed:
    input:
        settings=SETTINGS,
        data=rules.prepare.output,
    output:
        "results/{dataset}/embeddings.pt",
    params:
        data=get_data_dir,
        cache=config["embedding_cache"],
    threads: 1
    priority: 100
    resources:
        gpu=get_gpus,
    benchmark:
        "results/benchmarks/{dataset}/embed.tsv"
    log:
        "results/logs/{dataset}/embed.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda embed --settings {input.settings:q} --data-dir {params.data:q}"
        " --out {output:q} --cache-dir {params.cache:q} > {log:q} 2>&1"
