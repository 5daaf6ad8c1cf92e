"""icda: Iterative Counterfactual Data Augmentation for sentence-level rationales.

Implements Plyler & Chi, "Iterative Counterfactual Data Augmentation" (AAAI 2025):
the hierarchical rationale network, the MMI / COMP / CDA / ICDA methods, the counterfactual
pools and augmentation, and the binary-variable theory. ``python -m icda --help`` lists the
commands that the Snakemake workflow calls.
"""

__version__ = "0.1.0"
