"""icda: Iterative Counterfactual Data Augmentation for sentence-level rationales.

Implements Plyler & Chi, "Iterative Counterfactual Data Augmentation" (AAAI 2025):
the hierarchical rationale network, the MMI / COMP / CDA / ICDA methods, the counterfactual
pools and augmentation, and the binary-variable theory. ``python -m icda --help`` lists the
commands that the Snakemake workflow calls.

Layers, each importing only those below it: records and settings at the bottom (with errors and
io); the algorithm above them, with no file paths; one module per ``python -m icda`` step above
that (read records → algorithm → write records); the CLI and the workflow configuration on top.

* records and settings: :mod:`icda.records` (one dataclass per file the steps hand each other),
  :mod:`icda.settings` (settings.json and every list of allowed values), :mod:`icda.schema`,
  :mod:`icda.data.document`, :mod:`icda.data.llm_spec`, :mod:`icda.generate.records`,
  :mod:`icda.io`, :mod:`icda.errors`.
* the algorithm: :mod:`icda.encoder`, :mod:`icda.model`, :mod:`icda.degeneration`,
  :mod:`icda.metrics`, :mod:`icda.data.sentence_ids`, :mod:`icda.train`, :mod:`icda.model_selection`,
  :mod:`icda.counterfactual`, :mod:`icda.theory`, and the data's :mod:`icda.data.cleaning`,
  :mod:`icda.data.sentences`, :mod:`icda.data.synthetic`.
* what the steps load and read: :mod:`icda.loading` (tensors and networks, model files),
  :mod:`icda.embed` (sentence vectors), :mod:`icda.data.readers`, :mod:`icda.data.dataset_spec`,
  :mod:`icda.data.dataset_spec_files`, :mod:`icda.generate.backends`, :mod:`icda.generate.postprocess`.
* the steps: :mod:`icda.steps` (prepare, download, embed, train, evaluate, select, pools,
  augment, converge, finalize, predict), :mod:`icda.generate.run`, :mod:`icda.report`,
  :mod:`icda.sweep`, :mod:`icda.config_reference`.
* on top: :mod:`icda.cli` (``python -m icda``) and :mod:`icda.workflow_config` (what the
  Snakefile calls: one module per question, from the config check to a run's seeds).

``lint-imports`` checks it (the contracts in pyproject.toml; tests/test_packaging.py).
"""

__version__ = "0.1.0"

from icda.kernels import fix_environment

fix_environment()  # before torch is imported: the same float kernels on every CPU (icda.kernels)
