# Binary-variable theory of ICDA: paper sections "Helpful Counterfactual Generation Errors" and
# "Iterative Counterfactual Data Augmentation", appendix "Additional Notes on ICDA Convergence".
# One CPU job (well under a minute) calling `python -m icda theory` (icda/theory.py,
# icda/report/theory_figures.py). It writes Figure 1 (CDA success criterion against alpha for
# several beta) and Figure 2a-d (operator J, operator R, psi = R o J with its fixed points, alpha
# over iterations), each as PNG plus the CSV of the numbers behind it, and summary.json (alpha0,
# the alpha sequence exact and Monte Carlo, the fixed points and alpha_T).
# Settings: the `theory` section of the validated config (defaults in the schema: the paper's).

_THEORY_FIGURES = ["figure1_cda_criterion", "figure2a_J", "figure2b_R", "figure2c_psi",
                   "figure2d_alpha_sequence"]


rule theory:
    output:
        summary="results/theory/summary.json",
        figures=[
            report(f"results/theory/{name}.png", caption="../report/theory.rst", category="Theory")
            for name in _THEORY_FIGURES
        ],
        tables=expand("results/theory/{name}.csv", name=_THEORY_FIGURES),
    params:
        out=get_out_dir,
        args=get_theory_args,
    log:
        "results/logs/theory.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda theory {params.args} --out {params.out:q} > {log:q} 2>&1"
