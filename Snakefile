# ICDA: Iterative Counterfactual Data Augmentation (Plyler & Chi, AAAI 2025).
#   snakemake --cores N                     reproduce every configured dataset that is present
#   snakemake --cores N --configfile config/paper.yaml     the paper's fine-tuning setting (GPU)
#   snakemake --profile profiles/slurm      on a SLURM cluster
#   snakemake --report results/report.html  HTML report with tables and plots
# All logic lives in the `icda` package; rules call `python -m icda <command>`.
import os

from snakemake.utils import min_version, validate

from icda.workflow_config import resume
from icda.workflow_config.config_check import check_config

min_version("9.19")  # profiles/*/profile.yaml is read from Snakemake 9.19 on


configfile: os.path.join(workflow.basedir, "config", "config.yaml")


# First refuses a config whose YAML aliases expand it beyond 100,000 values, naming the file.
# (Snakemake has already merged the --configfile files, copying nested mappings, not lists: a
# file of deeply aliased mappings costs that merge before this line.)
check_config(config, os.path.join(workflow.basedir, "workflow/schemas/config.schema.yaml"), workflow.configfiles)
validate(config, "workflow/schemas/config.schema.yaml")  # fills in the defaults


report: "workflow/report/workflow.rst"


# After a kill: a job a checkpoint leads to (every iteration after the first) whose outputs are
# marked incomplete reruns too, and what killed jobs left under results/ (.<name>.XXXXXXXX.tmp
# files, *.partial folders, temp() exports no job needs) is removed before a run
# (docs/cluster.md, icda/workflow_config/resume.py).
resume.install(workflow)


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/embed.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/select.smk"
include: "workflow/rules/pools.smk"
include: "workflow/rules/augment.smk"
include: "workflow/rules/converge.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/eraser.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/theory.smk"
include: "workflow/rules/sweep.smk"


onsuccess:
    if UNREACHABLE:
        print(availability.unfetched_report(UNREACHABLE))


onerror:
    if UNREACHABLE:
        print(availability.unfetched_report(UNREACHABLE))


rule all:
    default_target: True
    input:
        run_summaries(),
        verdict_targets(),
        comp_evaluations(),
        get_all_evaluations,  # every iteration's eval.json, so that a deleted one is rebuilt
        rules.tables.output,
        "results/tables/compute.md",
        "results/tables/data_audit.md",
        rules.plots.output,
        expand("results/{dataset}/icda_dataset.jsonl", dataset=AVAILABLE),
        expand("results/{dataset}/icda_model/{file}", dataset=AVAILABLE, file=["model.pt", "model.json"]),
        expand("results/{dataset}/rationales.html", dataset=AVAILABLE),
        expand("results/{dataset}/eraser/icda_scores.json", dataset=AVAILABLE),
        THEORY,  # the theory figures, when the run asks for them (plan.theory_wanted)
        prune_targets(),  # keep_models: chosen: the last step of each dataset


# `snakemake summaries`: every run's summary.json and each dataset's verdict, nothing else (the
# loop without COMP, tables or exports; benchmarks/robustness.py)
rule summaries:
    input:
        run_summaries(),
        verdict_targets(),
