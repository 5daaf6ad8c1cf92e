# Data: dataset spec and settings files, preparation, download, availability report.


rule dataset_spec:
    output:
        "results/{dataset}/dataset.json",
    params:
        spec=lambda wc: icda_workflow.dataset_spec(config, wc.dataset),
    log:
        "results/logs/{dataset}/dataset_spec.log",
    localrule: True
    run:
        icda_workflow.write_params(params.spec, output[0], log[0])


rule settings:
    output:
        "results/{dataset}/settings.json",
    params:
        settings=lambda wc: icda_workflow.dataset_settings(config, wc.dataset),
    log:
        "results/logs/{dataset}/settings.log",
    localrule: True
    run:
        icda_workflow.write_params(params.settings, output[0], log[0])


rule prepare:
    input:
        spec="results/{dataset}/dataset.json",
        responses=lambda wc: icda_workflow.generated_responses(config, wc.dataset),
        files=lambda wc: icda_workflow.data_files(config, wc.dataset),
    output:
        train="results/{dataset}/data/train.jsonl",
        dev="results/{dataset}/data/dev.jsonl",
        test="results/{dataset}/data/test.jsonl",
        stats="results/{dataset}/data/stats.json",
    log:
        "results/logs/{dataset}/prepare.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda prepare --spec {input.spec} --out-dir results/{wildcards.dataset}/data > {log} 2>&1"


rule unavailable:
    output:
        "results/unavailable.json",
    params:
        unavailable=UNAVAILABLE,
    log:
        "results/logs/unavailable.log",
    localrule: True
    run:
        icda_workflow.write_params(params.unavailable, output[0], log[0])


rule report_groups:
    output:
        "results/tables/groups.json",
    params:
        groups=config["report"]["groups"],
    log:
        "results/logs/report_groups.log",
    localrule: True
    run:
        icda_workflow.write_params(params.groups, output[0], log[0])


rule download:
    """Fetch the missing public files of every selected dataset into data_dir (needs internet)."""
    input:
        expand("results/{dataset}/dataset.json", dataset=icda_workflow.selected_datasets(config)),
    log:
        "results/logs/download.log",
    localrule: True
    conda:
        "../../environment.yml"
    shell:
        "for spec in {input}; do python -m icda download --spec $spec; done > {log} 2>&1"
