"""The rationale viewer: one self-contained HTML page per dataset (``rationales.html``).

It shows the test documents sentence by sentence with the ground-truth rationale sentences
marked and the sentences selected by MMI (iteration 0) and ICDA (the iteration the run's stop
rule took, else its last: :func:`icda.records.icda_iteration`; a run with only iteration 0 has
no ICDA yet and shows MMI alone) highlighted, for a run chosen in the page, with filters on how
ICDA changed the selection; and counterfactual examples from ``icda_dataset.jsonl`` (the
original beside its counterfactual, the swapped sentences highlighted, the source document
named).

All data is embedded in the page as JSON; the page's own script renders one page of documents
at a time, so it stays fast with thousands of documents. No CDN, no network: the file can be
opened from disk or inside the Snakemake report.

Per document and run, :func:`outcome` compares the two selections by their share of
ground-truth sentences (with one selected sentence, the paper's setting: right or wrong):
``fixed`` (ICDA's share is higher), ``broke`` (lower), ``both_wrong`` (neither selects a
ground-truth sentence), ``same`` (equal and not both wrong), or None for a document without
annotation.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import jinja2

from icda.data.document import Document, label_name, read_class_names, read_documents
from icda.errors import DataError
from icda.io import atomic_write
from icda.records import Evaluation, icda_iteration
from icda.report.tables import icda_iterations, read_evaluation, verdict_lines
from icda.settings import Settings

log = logging.getLogger(__name__)

#: filter names shown in the page, in order (value of :func:`outcome` → button label)
OUTCOMES = {"fixed": "ICDA fixed it", "broke": "ICDA broke it", "both_wrong": "both wrong"}

#: documents (or counterfactual pairs) the page renders at a time
PAGE_SIZE = 25

#: counterfactual examples embedded in the page (the first ones of icda_dataset.jsonl)
MAX_COUNTERFACTUALS = 2000

@dataclass(frozen=True)
class RunRationales:
    """One run's MMI (iteration 0) and ICDA test-set rationale positions; ICDA's are None (and
    its iteration and precision) for a run with only iteration 0."""

    run: int
    icda_iteration: int | None
    mmi: list[list[int]]
    icda: list[list[int]] | None
    mmi_precision: float | None
    icda_precision: float | None


def _hit_share(selected: list[int], truth: frozenset[int]) -> float:
    return len(set(selected) & truth) / len(set(selected)) if selected else 0.0


def outcome(mmi: list[int], icda: list[int], truth: frozenset[int] | None) -> str | None:
    """How ICDA's selection compares with MMI's on one document (see the module docstring)."""
    if truth is None:
        return None
    a, b = _hit_share(mmi, truth), _hit_share(icda, truth)
    if b > a:
        return "fixed"
    if b < a:
        return "broke"
    return "both_wrong" if a == 0 else "same"


def _positions(path: Path, evaluation: Evaluation, ids: list[str]) -> list[list[int]]:
    positions = evaluation.positions(path)
    if evaluation.documents["ids"] != ids:
        raise DataError(path, None, "its documents are not the test documents of the prepared "
                        f"data ({len(evaluation.documents['ids'])} ids vs {len(ids)}, or another order)",
                        "evaluate against the same prepared data (results/<dataset>/data)")
    return positions


def run_rationales(eval_paths: Iterable[str | Path], ids: list[str],
                   icda: dict[int, int] | None = None) -> list[RunRationales]:
    """Per run, the rationale positions of iteration 0 (MMI) and of ICDA: iteration
    ``icda[run]`` (the one the run's stop rule took), or the highest one present
    (:func:`icda.records.icda_iteration`); a run with only iteration 0 has no ICDA yet (its
    ICDA positions, iteration and precision are None).

    COMP files (``"iteration": null``) are ignored.

    Raises:
        DataError: a file is malformed, lacks per-document selections, holds another document
            list than ``ids``, or a run has no iteration 0 or no evaluation of its ICDA iteration.
    """
    per_run: dict[int, dict[int, tuple[Path, Evaluation]]] = {}
    for path in map(Path, eval_paths):
        evaluation = read_evaluation(path)
        if evaluation.iteration is not None:
            per_run.setdefault(evaluation.run, {})[evaluation.iteration] = (path, evaluation)
    runs = []
    for run, iterations in sorted(per_run.items()):
        if 0 not in iterations:
            some = next(iter(iterations.values()))[0]
            raise DataError(some, None, f"run {run} has no iteration 0 (MMI) evaluation",
                            "pass the eval.json of every iteration of the run")
        taken = icda_iteration(iterations, (icda or {}).get(run))
        if taken is not None and taken not in iterations:
            raise DataError(iterations[0][0], None, f"run {run} has no evaluation of iteration {taken}, "
                            "which its summary takes as ICDA", "pass the eval.json of every iteration of the run")
        p0, e0 = iterations[0]
        if taken is None:
            runs.append(RunRationales(run, None, _positions(p0, e0, ids), None, e0.precision, None))
            continue
        pk, ek = iterations[taken]
        runs.append(RunRationales(run, taken, _positions(p0, e0, ids), _positions(pk, ek, ids),
                                  e0.precision, ek.precision))
    return runs


def counterfactual_pairs(path: str | Path, limit: int = MAX_COUNTERFACTUALS) -> tuple[list[dict], int]:
    """The counterfactuals of an ``icda_dataset.jsonl``, each with its original.

    Returns:
        (up to ``limit`` pairs, total number of counterfactuals). A pair holds ``source`` (the
        original document's id), ``label``/``cf_label``, ``original`` and ``counterfactual``
        (sentences), ``swapped`` (positions) and ``inserted_from`` ([document id, position]
        per swapped position).

    Raises:
        DataError: the file is missing, a line is not JSON, or a counterfactual's source is not
            in the file.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, None, "file not found", "run the final_dataset step first")
    originals, cfs = {}, []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                if rec["counterfactual"]:
                    cfs.append((lineno, rec))
                else:
                    originals[rec["id"]] = rec
            except (ValueError, KeyError, TypeError) as exc:
                raise DataError(path, lineno, f"not an augmented-dataset record ({exc})",
                                "regenerate it with `python -m icda finalize`") from None
    pairs = []
    for lineno, cf in cfs[:limit]:
        original = originals.get(cf["source"])
        if original is None:
            raise DataError(path, lineno, f"counterfactual of {cf['source']!r}, which is not in "
                            "the file", "regenerate it with `python -m icda finalize`")
        pairs.append({"source": cf["source"], "label": original["label"], "cf_label": cf["label"],
                      "original": original["sentences"], "counterfactual": cf["sentences"],
                      "swapped": cf["swapped"], "inserted_from": cf["inserted_from"]})
    return pairs, len(cfs)


def viewer_data(dataset: str, documents: list[Document], runs: list[RunRationales],
                pairs: list[dict], n_counterfactuals: int,
                max_sentences: int | None = None, class_names: list[str] | None = None) -> dict[str, Any]:
    """The JSON the page embeds (its script reads nothing else). ``max_sentences``: the
    sentences per document the model saw (the page greys out the others); ``class_names``: the
    dataset's class names in label order, shown for the labels of documents and counterfactuals
    (None: their indices)."""
    pairs = [pair | {"label": label_name(pair["label"], class_names),
                     "cf_label": label_name(pair["cf_label"], class_names)} for pair in pairs]
    return {
        "dataset": dataset,
        "class_names": class_names,
        "page_size": PAGE_SIZE,
        "max_sentences": max_sentences,
        "outcomes": OUTCOMES,
        "documents": [{"id": d.id, "label": label_name(d.label, class_names), "sentences": list(d.sentences),
                       "truth": None if d.rationale is None else sorted(d.rationale)}
                      for d in documents],
        "runs": [{"run": r.run, "icda_iteration": r.icda_iteration,
                  "mmi_precision": r.mmi_precision, "icda_precision": r.icda_precision,
                  "mmi": r.mmi, "icda": r.icda,
                  "outcome": [None] * len(documents) if r.icda is None else
                             [outcome(m, i, d.rationale) for m, i, d in zip(r.mmi, r.icda, documents)]}
                 for r in runs],
        "counterfactuals": pairs,
        "n_counterfactuals": n_counterfactuals,
    }


def _script_json(data: dict) -> str:
    """JSON safe inside ``<script>``: every ``<`` (it can only occur in strings) as ``\\u003c``,
    so no text can end the element (``</script>``) or open an HTML comment (``<!--``)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def render_viewer(data: dict) -> str:
    """The self-contained HTML page for :func:`viewer_data`'s ``data``."""
    template = resources.files("icda.report").joinpath("viewer.html").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(template).render(dataset=data["dataset"], data_json=_script_json(data))


def write_viewer(dataset: str, test_path: str | Path, eval_paths: Iterable[str | Path],
                 augmented_path: str | Path | None, out: str | Path,
                 max_sentences: int | None = None, settings: str | Path | None = None,
                 summaries: Iterable[str | Path] | None = None) -> dict:
    """Build ``rationales.html`` for one dataset and write it atomically.

    Args:
        dataset: dataset name (page title).
        test_path: the prepared ``test.jsonl`` (documents, ground truth); the ``stats.json``
            beside it gives the class names shown for labels
            (:func:`icda.data.document.read_class_names`).
        eval_paths: the dataset's ``eval.json`` files (every iteration of every run; COMP
            files are ignored).
        augmented_path: ``icda_dataset.jsonl`` for the counterfactual examples, or None.
        out: the HTML file.
        max_sentences: sentences per document the model saw (``encoder.max_sentences``); later
            sentences are shown greyed out. None: no limit shown.
        settings: the dataset's ``settings.json``, whose ``encoder.max_sentences`` is used when
            ``max_sentences`` is None.
        summaries: the runs' ``summary.json`` files: ICDA is the iteration each takes (else the
            run's last), and each run's verdict is shown above its documents.

    Returns:
        The embedded data (for tests and logging).

    Raises:
        DataError: an input file is missing or malformed.
    """
    if max_sentences is None and settings is not None:
        max_sentences = Settings.load(settings).encoder.max_sentences
    documents = read_documents(test_path)
    taken = {run: k for (_, run), k in icda_iterations(summaries).items()}
    runs = run_rationales(eval_paths, [d.id for d in documents], taken)
    pairs, total = counterfactual_pairs(augmented_path) if augmented_path else ([], 0)
    data = viewer_data(dataset, documents, runs, pairs, total, max_sentences,
                       read_class_names(Path(test_path).parent))
    data["verdicts"] = {str(run): line for (name, run), line in verdict_lines(summaries).items() if name == dataset}
    with atomic_write(out) as fh:
        fh.write(render_viewer(data))
    log.info("%s: %d documents, %d runs, %d of %d counterfactuals -> %s", dataset,
             len(documents), len(runs), len(pairs), total, out)
    return data
