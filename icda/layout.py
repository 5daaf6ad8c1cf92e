"""Where the workflow's files lie: every file name of a prepared data folder, a candidate folder,
an iteration folder and a run folder, defined once here. The modules build those paths only with
the names and functions of this module (the Snakemake rules derive theirs from their inputs and
outputs; the path patterns of the rules are in ``workflow/rules/common.smk``).

::

    results/<dataset>/
      data/                        prepared data (python -m icda prepare)
        train.jsonl dev.jsonl test.jsonl   split_path(data_dir, split), read by data.document.read_split
        stats.json                 STATS_FILE (written last)
      run<r>/                      one run (run_dir)
        summary.json               RUN_SUMMARY_FILE (records.RunSummary)
        iter<k>/                   one ICDA iteration: iteration_dir(run_dir, k)
          candidates/<cand>/       a candidate folder: candidate_dir(iteration, name)
            model.pt               MODEL_FILE (loading.save_model)
            model.json             MODEL_CARD_FILE (records.ModelCard)
            predictions.json       PREDICTIONS_FILE (records.Predictions)
            history.json           HISTORY_FILE (records.History; written last)
          choice.json              CHOICE_FILE (records.Choice)
          pools.json               POOLS_FILE (records.Pools)
          augmented/               AUGMENTED_DIR: augmented_path(iteration, split), train.jsonl and dev.jsonl
          converge.json            CONVERGE_FILE (records.Decision)
          eval.json                EVAL_FILE (records.Evaluation)
          eraser_scores.json       ERASER_SCORES_FILE (records.EraserScores)
        comp/                      COMP_DIR: the run's COMP baseline, laid out as an iteration
                                   (candidates/lambda<λ>_seed<s>/, choice.json, eval.json, ...)

A candidate folder is also what ``python -m icda predict`` reads a model from, and the exported
``results/<dataset>/icda_model/`` holds its MODEL_FILE and MODEL_CARD_FILE.
"""

from __future__ import annotations

from pathlib import Path

#: the prepared splits, each ``<split>.jsonl`` in the prepared data folder
SPLITS = ("train", "dev", "test")
#: the prepared data folder's statistics (written after the splits: its presence means complete)
STATS_FILE = "stats.json"

#: the files of a candidate folder (``python -m icda train --out-dir``)
MODEL_FILE, PREDICTIONS_FILE, HISTORY_FILE = "model.pt", "predictions.json", "history.json"
#: beside a model.pt: the settings it was trained with (:class:`icda.records.ModelCard`)
MODEL_CARD_FILE = "model.json"

#: the files and folders of an iteration folder
CANDIDATES_DIR = "candidates"
CHOICE_FILE = "choice.json"
POOLS_FILE = "pools.json"
AUGMENTED_DIR = "augmented"
CONVERGE_FILE = "converge.json"
EVAL_FILE = "eval.json"
ERASER_SCORES_FILE = "eraser_scores.json"

#: a run folder's summary, and its COMP baseline's folder
RUN_SUMMARY_FILE = "summary.json"
COMP_DIR = "comp"


def split_path(data_dir: str | Path, split: str) -> Path:
    """The file of a prepared split: ``<data_dir>/<split>.jsonl`` (the augmented folder of an
    iteration holds its train and dev splits under the same names)."""
    return Path(data_dir) / f"{split}.jsonl"


def model_path(candidate: str | Path) -> Path:
    """A candidate folder's (or a model folder's) ``model.pt``."""
    return Path(candidate) / MODEL_FILE


def model_card_path(candidate: str | Path) -> Path:
    """A candidate folder's (or a model folder's) ``model.json``."""
    return Path(candidate) / MODEL_CARD_FILE


def predictions_path(candidate: str | Path) -> Path:
    """A candidate folder's ``predictions.json``."""
    return Path(candidate) / PREDICTIONS_FILE


def history_path(candidate: str | Path) -> Path:
    """A candidate folder's ``history.json``."""
    return Path(candidate) / HISTORY_FILE


def iteration_dir(run_dir: str | Path, k: int) -> Path:
    """Iteration ``k``'s folder of a run: ``<run_dir>/iter<k>``."""
    return Path(run_dir) / f"iter{k}"


def candidates_dir(iteration: str | Path) -> Path:
    """The folder of an iteration's (or of a COMP baseline's) trained candidates."""
    return Path(iteration) / CANDIDATES_DIR


def candidate_dir(iteration: str | Path, name: str) -> Path:
    """The folder of candidate ``name`` of an iteration (``seed<s>``, ``warm``, ``lambda<λ>_seed<s>``)."""
    return candidates_dir(iteration) / name


def augmented_path(iteration: str | Path, split: str) -> Path:
    """An iteration's augmented ``train.jsonl`` or ``dev.jsonl``."""
    return split_path(Path(iteration) / AUGMENTED_DIR, split)
