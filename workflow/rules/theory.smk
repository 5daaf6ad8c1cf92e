# Binary-variable theory of ICDA: paper sections "Helpful Counterfactual Generation Errors" and
# "Iterative Counterfactual Data Augmentation", appendix "Additional Notes on ICDA Convergence".
# One CPU job (well under a minute) calling `python -m icda theory` (icda/theory.py,
# icda/theory_figures.py). It writes Figure 1 (CDA success criterion against alpha for several
# beta) and Figure 2a-d (operator J, operator R, psi = R o J with its fixed points, alpha over
# iterations), each as PNG plus the CSV of the numbers behind it, and summary.json (alpha0, the
# alpha sequence exact and Monte Carlo, the fixed points and alpha_T).
# Config (optional; the paper's values are the defaults):
#   theory: {p1: 0.9, p2: 0.85, n: 35, simulations: 60000, seed: 0, iterations: 10,
#            betas: [0, 0.25, 0.5, 0.75, 1]}
#   optional keys: beta (a fixed beta instead of 1 - alpha^k), figure1_p1 (default 0.95)

import os

_THEORY = {
    "p1": 0.9, "p2": 0.85, "n": 35, "simulations": 60000, "seed": 0, "iterations": 10,
    "betas": [0, 0.25, 0.5, 0.75, 1], "beta": None, "figure1_p1": None,
    **config.get("theory", {}),
}
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
        out=lambda wildcards, output: os.path.dirname(output.summary),
        p1=_THEORY["p1"],
        p2=_THEORY["p2"],
        n=_THEORY["n"],
        simulations=_THEORY["simulations"],
        seed=_THEORY["seed"],
        iterations=_THEORY["iterations"],
        betas=" ".join(str(b) for b in _THEORY["betas"]),
        extra=" ".join(
            f"--{key.replace('_', '-')} {_THEORY[key]}"
            for key in ("beta", "figure1_p1") if _THEORY[key] is not None
        ),
    log:
        "results/logs/theory.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda theory --p1 {params.p1} --p2 {params.p2} --n {params.n}"
        " --simulations {params.simulations} --seed {params.seed} --iterations {params.iterations}"
        " --betas {params.betas} {params.extra} --out {params.out} > {log} 2>&1"
