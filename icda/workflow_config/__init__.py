"""The workflow's configuration as the Snakefile reads it (``config/config.yaml``), in plain,
tested Python rather than in the .smk files. One module per question the workflow asks:

* :mod:`~icda.workflow_config.config_check` — is the configuration valid (its schema, the names
  that become folders and table columns)?
* :mod:`~icda.workflow_config.availability` — which datasets run: their files present, or
  downloadable from a server that answers (probed once per workflow run)?
* :mod:`~icda.workflow_config.dataset_inputs` — what a dataset's ``prepare`` and ``download``
  jobs read: its spec, data files and their checksums, generated responses.
* :mod:`~icda.workflow_config.run_settings` — the settings.json of each dataset and sweep
  point, and what they decide (fine-tuning, GPUs).
* :mod:`~icda.workflow_config.plan` — the runs, their seeds, each iteration's candidates, the
  COMP grid and the iteration bound.
* :mod:`~icda.workflow_config.outputs` — the files the workflow writes itself (a rule's params,
  a run's summary.json).
"""
