# Tables (paper Table 1/2 layout) and convergence plots, attached to the HTML report.
from icda.report.inputs import ERASER_SUFFIX
from icda.report.tables import table_groups


rule baselines:
    """The test precision of k random sentences per document and of the keyword rule
    (icda/report/baselines.py): the chance rows of the tables."""
    input:
        test="results/{dataset}/data/test.jsonl",
        settings=SETTINGS,
        spec="results/{dataset}/dataset.json",
    output:
        "results/{dataset}/baselines.json",
    log:
        "results/logs/{dataset}/baselines.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda report baselines --test {input.test:q} --settings {input.settings:q} --spec {input.spec:q}"
        " --out {output:q} > {log:q} 2>&1"


rule tables:
    input:
        evals=get_all_evaluations,
        summaries=run_summaries(),
        eraser=get_eraser_scores,
        baselines=expand("results/{dataset}/baselines.json", dataset=AVAILABLE),
        stats=expand("results/{dataset}/data/stats.json", dataset=AVAILABLE),
        unavailable="results/unavailable.json",
        groups="results/groups.json",
    output:
        summary=report("results/tables/summary.md", caption="../report/tables.rst", category="Tables"),
        all_results="results/tables/all_results.csv",
        tables=expand("results/tables/{name}.{ext}", ext=["csv", "md", "tex"],
                      name=table_groups(config["report"]["groups"], AVAILABLE)),
        eraser=expand(f"results/tables/{{name}}{ERASER_SUFFIX}.{{ext}}", ext=["csv", "md"],
                      name=table_groups(config["report"]["groups"], AVAILABLE)),
    params:
        out=get_out_dir,
    log:
        "results/logs/tables.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda report tables --evals {input.evals:q} --summaries {input.summaries:q} --out-dir {params.out:q}"
        " --eraser {input.eraser:q} --baselines {input.baselines:q} --stats {input.stats:q}"
        " --unavailable {input.unavailable:q} --groups {input.groups:q} > {log:q} 2>&1"


rule plots:
    input:
        evals=get_all_evaluations,
        summaries=run_summaries(),
    output:
        grid=report("results/plots/alpha_all.png", caption="../report/convergence.rst", category="Convergence"),
        per_dataset=expand("results/plots/alpha_{dataset}.png", dataset=AVAILABLE),
    params:
        out=get_out_dir,
    log:
        "results/logs/plots.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda report plots --evals {input.evals:q} --summaries {input.summaries:q} --out-dir {params.out:q}"
        " > {log:q} 2>&1"


rule rationale_viewer:
    """Self-contained HTML page: test documents with ground truth, MMI and ICDA selections, and
    counterfactual examples (icda/report/viewer.py)."""
    input:
        test="results/{dataset}/data/test.jsonl",
        settings=SETTINGS,
        evals=get_dataset_evaluations,
        summaries=expand(f"{RUN}/summary.json", run=RUNS, allow_missing=True),
        augmented="results/{dataset}/icda_dataset.jsonl",
    output:
        report("results/{dataset}/rationales.html", caption="../report/rationales.rst",
               category="Rationales", subcategory="{dataset}"),
    log:
        "results/logs/{dataset}/rationale_viewer.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda report viewer --dataset {wildcards.dataset} --test {input.test}"
        " --settings {input.settings} --evals {input.evals} --summaries {input.summaries} --augmented {input.augmented}"
        " --out {output} > {log} 2>&1"


rule compute_cost:
    """Wall time, CPU time and peak memory of the embed/train jobs per dataset and method.
    Its inputs are the run summaries and COMP evaluations (all jobs done), not the benchmark
    files: a job finished before the workflow measured it is not re-run, it counts as "not
    measured" (icda/report/compute.py)."""
    input:
        summaries=run_summaries(),
        comp=comp_evaluations(),
    output:
        summary=report("results/tables/compute.md", caption="../report/compute.rst",
                       category="Compute cost"),
        table="results/tables/compute.csv",
        jobs="results/tables/compute_jobs.csv",
    params:
        out=get_out_dir,
    log:
        "results/logs/compute_cost.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda report compute --results results --summaries {input.summaries:q}"
        " --out-dir {params.out:q} > {log:q} 2>&1"


rule data_audit:
    """One table of every dataset's audit (icda/report/audit.py)."""
    input:
        expand("results/{dataset}/data_audit.json", dataset=AVAILABLE),
    output:
        table=report("results/tables/data_audit.md", caption="../report/data_audit.rst", category="Data audit"),
        csv="results/tables/data_audit.csv",
    params:
        out=get_out_dir,
    log:
        "results/logs/data_audit.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda report audit --audits {input:q} --out-dir {params.out:q} > {log:q} 2>&1"
