"""icda: Iterative Counterfactual Data Augmentation for sentence-level rationales.

Implements Plyler & Chi, "Iterative Counterfactual Data Augmentation" (AAAI 2025):
the hierarchical rationale network, the MMI / COMP / CDA / ICDA methods, the counterfactual
pools and augmentation, and the binary-variable theory. ``python -m icda --help`` lists the
commands that the Snakemake workflow calls.

Layers, each importing only those below it: the CLI (the list of commands) and the workflow
configuration on top; one module per ``python -m icda`` command below them (its arguments and its
step: read records → algorithm → write records); then what the commands build on (the report's
builders, what is loaded and read); the algorithm, with no file paths; and at the bottom the
records and settings, with where the files lie (:mod:`icda.layout`), io and errors.

* on top: :mod:`icda.cli` (``python -m icda``: each command → its module) and
  :mod:`icda.workflow_config` (what the Snakefile calls: one module per question, from the config
  check to a run's seeds).
* the commands, one module each: :mod:`icda.steps` (prepare, download, embed, train, evaluate,
  select, pools, augment, converge, finalize, predict, export-eraser in ``eraser``, report,
  theory), :mod:`icda.generate.run` (generate), :mod:`icda.sweep` (sweep),
  :mod:`icda.config_reference` (config-reference).
* what the report and theory commands build: :mod:`icda.report` (tables, plots, the rationale
  viewer, compute cost, baselines, the theory's figures).
* what the commands load and read: :mod:`icda.loading` (settings, tensors and networks, model
  files), :mod:`icda.embed` (sentence vectors), :mod:`icda.data.readers`,
  :mod:`icda.data.dataset_spec`, :mod:`icda.data.dataset_spec_files`,
  :mod:`icda.generate.backends`, :mod:`icda.generate.postprocess`.
* the algorithm: :mod:`icda.encoder`, :mod:`icda.model`, :mod:`icda.degeneration`,
  :mod:`icda.metrics`, :mod:`icda.data.sentence_ids`, :mod:`icda.train`, :mod:`icda.model_selection`,
  :mod:`icda.counterfactual`, :mod:`icda.theory`, and the data's :mod:`icda.data.cleaning`,
  :mod:`icda.data.sentences`, :mod:`icda.data.synthetic`.
* records and settings: :mod:`icda.records` (one dataclass per file the steps hand each other),
  :mod:`icda.settings` (settings.json and every list of allowed values), :mod:`icda.schema`,
  :mod:`icda.data.document` (documents, and ``read_split``, the reader of a prepared split),
  :mod:`icda.data.llm_spec`, :mod:`icda.generate.records`; below them :mod:`icda.layout`
  (every file name of the data, candidate, iteration and run folders), :mod:`icda.io`, and
  :mod:`icda.errors`.

``lint-imports`` checks it (the contracts in pyproject.toml; tests/test_packaging.py).
"""

__version__ = "0.3.0"

import sys as _sys

from icda.errors import ConfigError as _ConfigError
from icda.kernels import fix_environment

try:
    fix_environment()  # before torch is imported: the same float kernels on every CPU (icda.kernels)
except _ConfigError as _exc:  # ICDA_KERNELS=bogus: one line, for every command and the Snakefile
    print(f"error: {_exc}", file=_sys.stderr)
    raise SystemExit(2) from None
