# Data: dataset spec and settings files, preparation, download, availability report.


rule dataset_spec:
    output:
        "results/{dataset}/dataset.json",
    params:
        spec=lambda wc: icda_workflow.dataset_spec(config, wc.dataset),
    localrule: True
    run:
        from icda.io import write_json

        write_json(params.spec, output[0])


rule settings:
    output:
        "results/{dataset}/settings.json",
    params:
        settings=lambda wc: icda_workflow.dataset_settings(config, wc.dataset),
    localrule: True
    run:
        from icda.io import write_json

        write_json(params.settings, output[0])


rule prepare:
    input:
        "results/{dataset}/dataset.json",
    output:
        train="results/{dataset}/data/train.jsonl",
        dev="results/{dataset}/data/dev.jsonl",
        test="results/{dataset}/data/test.jsonl",
        stats="results/{dataset}/data/stats.json",
    log:
        "results/logs/{dataset}/prepare.log",
    shell:
        "python -m icda prepare --spec {input} --out-dir results/{wildcards.dataset}/data > {log} 2>&1"


rule unavailable:
    output:
        "results/unavailable.json",
    params:
        unavailable=UNAVAILABLE,
    localrule: True
    run:
        from icda.io import write_json

        write_json(params.unavailable, output[0])


rule download:
    """Fetch the public files of every configured dataset into data_dir (needs internet)."""
    params:
        names=" ".join(f"--dataset {n}" for n in icda_workflow.selected_datasets(config)),
    localrule: True
    shell:
        "python -m icda download --config {workflow.configfiles[0]} {params.names}"
