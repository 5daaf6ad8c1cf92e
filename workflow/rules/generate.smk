# LLM datasets (source: llm): the model's raw responses, which `prepare` turns into
# train/dev/test. Requested only through `prepare` of such a dataset, so a config without one
# never contacts a server. The response cache (llm.cache) is not an output: it survives a failed
# or killed job, and a rerun asks only for what is missing.
from icda.data.llm_spec import RESPONSES


rule generate:
    input:
        "results/{dataset}/dataset.json",
    output:
        RESPONSES,
    log:
        "results/logs/{dataset}/generate.log",
    resources:
        gpu=lambda wc: run_settings.generate_gpus(config, wc.dataset),
    conda:
        "../../environment.yml"
    shell:
        "python -m icda generate --spec {input} --out {output} > {log} 2>&1"
