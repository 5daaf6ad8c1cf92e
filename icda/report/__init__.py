"""Result reporting: the paper's tables (:mod:`icda.report.tables`) and the convergence plots of
the rationale error α = 1 − precision over ICDA iterations (:mod:`icda.report.plots`)."""
