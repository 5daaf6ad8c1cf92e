"""The commands of ``python -m icda``, one module per command: each holds the step function
(records in → the algorithm → records out), its sub-command's arguments (``register(subparsers)``)
and the glue that calls the step with them (``run(args)``); its docstring says what the command
does, its options and what it reads and writes. :mod:`icda.cli` only lists the modules.

* :mod:`icda.steps.prepare` — ``prepare``: a dataset's train, dev and test JSONL and stats.json.
* :mod:`icda.steps.download` — ``download``: a public dataset's missing files, md5-checked.
* :mod:`icda.steps.embed` — ``embed``: a dataset's embedding cache file (frozen-encoder mode).
* :mod:`icda.steps.train` — ``train``: a candidate's model.pt, model.json, predictions.json, history.json.
* :mod:`icda.steps.evaluate` — ``evaluate``: eval.json.
* :mod:`icda.steps.select` — ``select``: choice.json.
* :mod:`icda.steps.pools` — ``pools``: pools.json.
* :mod:`icda.steps.augment` — ``augment``: the augmented train and dev sets.
* :mod:`icda.steps.converge` — ``converge``: converge.json.
* :mod:`icda.steps.verdict` — ``verdict``: a dataset's verdict.json across its runs
  (``icda.verdict: run_agreement``).
* :mod:`icda.steps.finalize` — ``finalize``: the dataset's ICDA output.
* :mod:`icda.steps.predict` — ``predict``: predictions on new documents; ``finalize``'s model
  export.
* :mod:`icda.steps.eraser` — ``export-eraser``: the ERASER export of a split and a selector's
  rationales, eraser_scores.json.
* :mod:`icda.steps.report` — ``report {tables,plots,viewer,compute,baselines}``: calls the
  report's builders (:mod:`icda.report`).
* :mod:`icda.steps.theory` — ``theory``: the binary-variable theory's numbers and figures
  (:mod:`icda.theory`, :mod:`icda.report.theory_figures`).
* :mod:`icda.steps.prune` — ``prune-models``: removes the model.pt of the candidates no choice
  reports once a dataset's run has finished (``keep_models: chosen``).

**Every path argument is declared an input or an output** (:func:`icda.guard.add_input`,
:func:`icda.guard.add_output`, never a bare ``add_argument(..., type=Path)``): ``python -m icda``
refuses, before the command runs, an output that reaches an input (:mod:`icda.guard`,
docs/architecture.md "No output reaches an input"); tests/test_output_guard_parser.py fails on an
undeclared one and tries every (output, input) pair of every command.

The other commands live in the module of their step function: ``generate`` :mod:`icda.generate.run`,
``sweep`` :mod:`icda.sweep`, ``config-reference`` :mod:`icda.config_reference`. Where the files
lie: :mod:`icda.layout`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.guard import add_input



def command_doc(doc: str, paragraphs: int = 1) -> str:
    """The first ``paragraphs`` paragraphs of a command module's docstring: its ``--help``
    description (argparse rewraps it)."""
    return "\n\n".join(doc.split("\n\n")[:paragraphs])


def device_name(value: str) -> str:
    """The ``--device`` argument type: a device name (:func:`icda.settings.check_device`), else
    argparse's one-line usage error."""
    from icda.errors import ConfigError
    from icda.settings import check_device

    try:
        return check_device(value, "--device")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_workspace_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of the commands that load a dataset's workspace (``train``, ``evaluate``:
    :func:`icda.loading.open_workspace`)."""
    add_input(parser, "--settings", required=True,
                        help="settings.json with encoder/model/train/icda/device sections")
    add_input(parser, "--data-dir", kind="folder", required=True,
                        help="prepared dataset folder holding train/dev/test.jsonl")
    add_input(parser, "--embeddings",
                        help="embedding cache from `python -m icda embed` (frozen mode)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
