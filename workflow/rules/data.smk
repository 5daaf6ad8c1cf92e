# Data: dataset spec and settings files, preparation, download, availability report.


rule dataset_spec:
    output:
        "results/{dataset}/dataset.json",
    params:
        spec=lambda wc: dataset_inputs.dataset_spec(config, wc.dataset),
    log:
        "results/logs/{dataset}/dataset_spec.log",
    localrule: True
    run:
        outputs.write_params(params.spec, output[0], log[0])


rule dataset_download_spec:
    output:
        "results/{dataset}/download.json",
    params:
        spec=lambda wc: dataset_inputs.dataset_spec(config, wc.dataset, download=True),
    log:
        "results/logs/{dataset}/dataset_download_spec.log",
    localrule: True
    run:
        outputs.write_params(params.spec, output[0], log[0])


rule settings:
    output:
        SETTINGS,
    params:
        settings=lambda wc: run_settings.dataset_settings(config, wc.dataset),
    log:
        "results/logs/{dataset}/settings.log",
    localrule: True
    run:
        outputs.write_params(params.settings, output[0], log[0])


rule prepare:
    input:
        unpack(get_prepare_files),
        spec="results/{dataset}/dataset.json",
    output:
        train="results/{dataset}/data/train.jsonl",
        dev="results/{dataset}/data/dev.jsonl",
        test="results/{dataset}/data/test.jsonl",
        stats="results/{dataset}/data/stats.json",
    params:
        out=get_out_dir,
        # the data files' content: a change reruns prepare even if their mtimes do not show it
        checksums=lambda wc: dataset_inputs.data_checksums(config, wc.dataset),
    log:
        "results/logs/{dataset}/prepare.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda prepare --spec {input.spec:q} --out-dir {params.out:q} > {log:q} 2>&1"


rule audit:
    """What the dataset's splits hold as read, and what test shares with train and dev
    (icda/steps/audit.py): text processing and the encoder's tokenizer, no model."""
    input:
        unpack(get_prepare_files),
        spec="results/{dataset}/dataset.json",
        settings=SETTINGS,
    output:
        "results/{dataset}/data_audit.json",
    params:
        checksums=lambda wc: dataset_inputs.data_checksums(config, wc.dataset),
    log:
        "results/logs/{dataset}/audit.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda audit --spec {input.spec:q} --settings {input.settings:q} --out {output:q} > {log:q} 2>&1"


rule unavailable:
    output:
        "results/unavailable.json",
    params:
        unavailable=UNAVAILABLE,
    log:
        "results/logs/unavailable.log",
    localrule: True
    run:
        outputs.write_params(params.unavailable, output[0], log[0])


rule report_groups:
    output:
        "results/groups.json",
    params:
        groups=config["report"]["groups"],
    log:
        "results/logs/report_groups.log",
    localrule: True
    run:
        outputs.write_params(params.groups, output[0], log[0])


# One job per dataset whose missing files can be downloaded (public, with a url): it writes
# exactly those files, so the dataset's `prepare` (whose inputs they are) waits for it. Files
# already present have no producing rule, so a download never overwrites them.
for _name, _files in DOWNLOADS.items():

    rule:
        """Fetch the missing files of one public dataset into data_dir, checking known md5s."""
        name:
            f"download_{_name}"
        input:
            spec=f"results/{_name}/download.json",
        output:
            _files,
        log:
            f"results/logs/{_name}/download.log",
        localrule: True
        conda:
            "../../environment.yml"
        shell:
            "python -m icda download --spec {input.spec:q} > {log:q} 2>&1"


rule download:
    """Target: fetch the missing files of every selected public dataset (`snakemake download`)."""
    input:
        [path for files in DOWNLOADS.values() for path in files],
    localrule: True
