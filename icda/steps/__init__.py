"""The steps of the ICDA loop, one module per ``python -m icda`` command, each reading the records
the previous steps wrote, running the algorithm on them and writing its own records:

* :mod:`icda.steps.train` — ``train``: a candidate's model.pt, model.json, predictions.json, history.json.
* :mod:`icda.steps.evaluate` — ``evaluate``: eval.json.
* :mod:`icda.steps.select` — ``select``: choice.json.
* :mod:`icda.steps.pools` — ``pools``: pools.json.
* :mod:`icda.steps.augment` — ``augment``: the augmented train and dev sets.
* :mod:`icda.steps.converge` — ``converge``: converge.json.
* :mod:`icda.steps.finalize` — ``finalize``: the dataset's ICDA output.
* :mod:`icda.steps.prepare` — ``prepare``: a dataset's train, dev and test JSONL and stats.json.
* :mod:`icda.steps.download` — ``download``: a public dataset's missing files, md5-checked.
* :mod:`icda.steps.embed` — ``embed``: a dataset's embedding cache file (frozen-encoder mode).
* :mod:`icda.steps.predict` — ``predict``: predictions on new documents; ``finalize``'s model
  export.

The other commands' steps live with their subject: ``generate`` :mod:`icda.generate.run`,
``report`` :mod:`icda.report`, ``theory`` :mod:`icda.report.theory_figures`, ``sweep``
:mod:`icda.sweep`, ``config-reference`` :mod:`icda.config_reference`.
"""
