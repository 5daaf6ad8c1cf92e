"""``python -m icda prune-models``: once a dataset's run has finished, remove the model.pt of
every candidate that no choice reports, keeping those the report, the viewer, ``predict`` and a
rerun read (``keep_models: chosen``).

Every iteration trains several candidates (``runs``: 3 seeds) and each run a COMP grid, and each
keeps its ``model.pt`` (about 2.5 MB with the CPU defaults). After selection only the selector a
``choice.json`` reports is read again: its chosen candidate, or with ``icda.final_selector:
ensemble`` the members of its ensemble (:attr:`icda.records.Choice.reported_models`), by
``evaluate``, ``export-eraser``, ``finalize`` (the exported ``icda_model/``) and, with
``icda.warm_start``, the next iteration's training. The other candidates' weights are read by
nothing: their ``predictions.json``, ``history.json`` and ``model.json`` (what selection, pools and
the tables read) are kept. The workflow runs this step only after every output of the dataset is
written (rule ``prune_models``), so an interrupted run resumes with every model in place; the
candidate folders are Snakemake ``directory()`` outputs dated by their ``.snakemake_timestamp``, so
a later run does not retrain them. A later change of the selection settings (``icda``) that picks
another candidate needs its weights again: rerun that iteration's training (``snakemake
--forcerun train``), or keep every model (``keep_models: all``, the default).

Reads each run's ``choice.json`` files (every iteration and COMP); writes ``--out``, a JSON record
of the files removed and kept and the bytes freed.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Sequence

from icda.errors import DataError
from icda.guard import add_input, add_output
from icda.io import write_json
from icda.layout import model_path
from icda.records import Choice
from icda.steps import command_doc

log = logging.getLogger(__name__)


def prune_models(choices: Sequence[str | Path], out: str | Path) -> dict:
    """Remove the ``model.pt`` of every candidate scored in ``choices`` whose weights no choice
    reports, and write ``out`` (JSON): ``removed`` and ``kept`` (paths), ``bytes_removed``.

    Only files named ``model.pt`` in the candidate folders the choices list are removed; a reported
    model that is missing is an error (nothing is removed then), as a later step would need it.

    Returns:
        the record written.

    Raises:
        DataError: a choice is missing or malformed, or a reported model.pt is missing.
    """
    read = [(Path(path), Choice.read(path)) for path in choices]
    reported = sorted({str(m) for _, choice in read for m in choice.reported_models})
    keep = {Path(m).resolve() for m in reported}
    for path, choice in read:
        for m in choice.reported_models:
            if not Path(m).is_file():
                raise DataError(path, None, f"the model it reports, {m}, is missing",
                                "retrain that iteration (snakemake --forcerun train), or keep every "
                                "model (keep_models: all)")
    scored = {model_path(c.candidate_dir) for _, choice in read for c in choice.candidates}
    removed, freed = [], 0
    for path in sorted(scored, key=str):
        if path.resolve() in keep or not path.is_file():
            continue
        freed += path.stat().st_size
        path.unlink()
        removed.append(str(path))
    record = {"removed": removed, "kept": reported, "bytes_removed": freed}
    write_json(record, out)
    log.info("removed %d unreported candidate model(s) (%.1f MB); kept %d reported", len(removed),
             freed / 1e6, len(keep))
    return record


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("prune-models", help="remove the model.pt of candidates no choice reports",
                       description=command_doc(__doc__, 2))
    add_input(p, "--choices", nargs="+", required=True,
              help="every choice.json of the dataset's runs (each iteration's and COMP's)")
    add_output(p, "--out", required=True, help="the record of what was removed (JSON)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    record = prune_models(args.choices, args.out)
    print(f"removed {len(record['removed'])} candidate model(s), {record['bytes_removed'] / 1e6:.1f} MB -> {args.out}")
