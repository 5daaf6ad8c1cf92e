# Tables (paper Table 1/2 layout) and convergence plots, attached to the HTML report.
from icda.report.tables import table_groups


rule tables:
    input:
        evals=all_evaluations,
        unavailable="results/unavailable.json",
        groups="results/tables/groups.json",
    output:
        summary=report("results/tables/summary.md", caption="../report/tables.rst", category="Tables"),
        all_results="results/tables/all_results.csv",
        tables=expand("results/tables/{name}.{ext}", ext=["csv", "md", "tex"],
                      name=table_groups(config["report"]["groups"], AVAILABLE)),
    log:
        "results/logs/tables.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda report tables --evals {input.evals} --out-dir results/tables"
        " --unavailable {input.unavailable} --groups {input.groups} > {log} 2>&1"


rule plots:
    input:
        evals=all_evaluations,
    output:
        grid=report("results/plots/alpha_all.png", caption="../report/convergence.rst", category="Convergence"),
        per_dataset=expand("results/plots/alpha_{dataset}.png", dataset=AVAILABLE),
    log:
        "results/logs/plots.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda report plots --evals {input.evals} --out-dir results/plots > {log} 2>&1"
