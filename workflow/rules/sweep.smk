# Dev-only tuning (`snakemake sweep --configfile config/offline.yaml config/sweep.yaml`): MMI per
# sweep point, dataset and seed, evaluated on dev; table, plot and choice in results/sweep/.

rule sweep:
    input:
        "results/sweep/sweep.md",
    localrule: True


rule sweep_points:
    output:
        "results/sweep/points.json",
    params:
        points=config["sweep"]["points"],
    log:
        "results/logs/sweep/points.log",
    localrule: True
    run:
        outputs.write_params(params.points, output[0], log[0])


rule sweep_settings:
    output:
        "results/sweep/{point}/{dataset}/settings.json",
    params:
        settings=lambda wc: run_settings.sweep_settings(config, wc.dataset, wc.point),
    log:
        "results/logs/sweep/{point}/{dataset}/settings.log",
    localrule: True
    run:
        outputs.write_params(params.settings, output[0], log[0])


rule sweep_embed:
    input:
        settings="results/sweep/{point}/{dataset}/settings.json",
        data=rules.prepare.output,
    output:
        "results/sweep/{point}/{dataset}/embeddings.pt",
    params:
        data=get_data_dir,
        cache=config["embedding_cache"],
    threads: 2
    priority: 100
    log:
        "results/logs/sweep/{point}/{dataset}/embed.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda embed --settings {input.settings:q} --data-dir {params.data:q}"
        " --out {output:q} --cache-dir {params.cache:q} > {log:q} 2>&1"


rule sweep_train:
    input:
        settings="results/sweep/{point}/{dataset}/settings.json",
        data=rules.prepare.output,
        embeddings=get_sweep_embeddings,
    output:
        model="results/sweep/{point}/{dataset}/seed{seed}/model.pt",
        predictions="results/sweep/{point}/{dataset}/seed{seed}/predictions.json",
        history="results/sweep/{point}/{dataset}/seed{seed}/history.json",
    params:
        data=get_data_dir,
        embeddings=get_embeddings_arg,
        out=get_out_dir,
    threads: config["train_threads"]
    resources:
        gpu=get_gpus,
    log:
        "results/logs/sweep/{point}/{dataset}/seed{seed}.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda train --settings {input.settings:q} --data-dir {params.data:q} {params.embeddings}"
        " --seed {wildcards.seed} --threads {threads} --out-dir {params.out:q} > {log:q} 2>&1"


rule sweep_evaluate:
    input:
        settings="results/sweep/{point}/{dataset}/settings.json",
        data=rules.prepare.output,
        predictions="results/sweep/{point}/{dataset}/seed{seed}/predictions.json",
    output:
        "results/sweep/{point}/{dataset}/seed{seed}/dev_eval.json",
    params:
        data=get_data_dir,
    log:
        "results/logs/sweep/{point}/{dataset}/seed{seed}.evaluate.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda evaluate --settings {input.settings:q} --data-dir {params.data:q}"
        " --predictions {input.predictions:q} --split dev --out {output:q} --point {wildcards.point}"
        " --dataset {wildcards.dataset} --seed {wildcards.seed} > {log:q} 2>&1"


rule sweep_table:
    input:
        evals=get_sweep_files("dev_eval.json"),
        histories=get_sweep_files("history.json"),  # read beside each evaluation's model
        points="results/sweep/points.json",
    output:
        table=report("results/sweep/sweep.md", caption="../report/sweep.rst", category="Tuning (dev only)"),
        csv="results/sweep/sweep.csv",
        plot=report("results/sweep/sweep.png", caption="../report/sweep.rst", category="Tuning (dev only)"),
        chosen="results/sweep/chosen.json",
    params:
        out=get_out_dir,
    log:
        "results/logs/sweep/table.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda sweep --evals {input.evals:q} --points {input.points:q} --out-dir {params.out:q}"
        " > {log:q} 2>&1"
