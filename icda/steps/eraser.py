"""``python -m icda export-eraser``: a prepared split, and a trained selector's predictions on it,
in the ERASER benchmark's format (DeYoung et al. 2020), with ERASER's metrics beside the paper's
precision.

``--out-dir`` becomes an ERASER data directory: ``docs/<docid>`` (one sentence a line, tokens =
whitespace split) and ``test.jsonl`` (``val.jsonl`` for ``--split dev``) with one annotation per
document with ground truth (its label, or null without one). With ``--model`` (a model folder)
or ``--choice`` (a choice.json) the selector's predictions are written to ``--predictions`` as
ERASER's results JSONL (hard and soft rationales, class scores, comprehensiveness, sufficiency
and the AOPC bins), and ``--scores`` gets ERASER's metrics on them with the paper's precision.
``--score-only`` scores an existing ``--predictions`` against ``--out-dir`` instead (every field
checked: :mod:`icda.data.eraser_files`). No output may be one of the inputs or lie in a model
folder (:func:`check_outputs`). ERASER's own scorer reads the same files: ``python rationale_benchmark/metrics.py --data_dir <out-dir> --split test --results
<predictions> --strict``.

The format is ERASER's (github.com/jayded/eraserbenchmark, ``rationale_benchmark/utils.py`` and
``metrics.py``), so its scorer, and :mod:`icda.eraser_metrics`, give ERASER's numbers.

What is written (``out_dir`` is an ERASER data directory):

- ``docs/<docid>``: one sentence a line, its tokens separated by single spaces. Tokens are the
  sentence's whitespace-separated pieces (``str.split()``: punctuation stays attached to its
  word, e.g. ``city.``); a token is the unit of ``start_token``/``end_token`` and of the AOPC
  bins. Every sentence of the document is written (also those past ``encoder.max_sentences``,
  which the model never sees).
- ``<split>.jsonl`` (``test.jsonl``; ``val.jsonl`` for our ``dev``): one annotation per document,
  ``annotation_id`` = ``docid`` = the document's id, ``classification`` = its label as a string
  (``"0"`` … ``"C−1"``: more than two classes are written as they are; null without one), ``query`` =
  :data:`QUERY`, ``docids`` = [its id], and ``evidences``: one evidence group per ground-truth
  rationale sentence, holding one Evidence (``docid``, ``text``: the sentence's tokens,
  ``start_token``/``end_token`` in the document's flattened tokens, ``start_sentence``/
  ``end_sentence``; ends exclusive).
- Documents without a label (a test split without gold labels, such as the hotel files) are
  written with ``"classification": null`` and counted in :class:`EraserExport` (``unlabelled``):
  the rationale metrics (token and sentence P/R/F1, IOU F1, AUPRC) need no label, and
  comprehensiveness, sufficiency and AOPC use the model's predicted class, so
  :func:`icda.eraser_metrics.score_results` gives every metric but the classification accuracy
  (None, "n/a (no gold labels)" in the tables). ERASER's own ``metrics.py`` reads such a file but
  its classification report needs a label on every annotation.
- Left out, and counted in the returned :class:`EraserExport`: documents without ground truth
  (``rationale`` absent, or empty). ERASER scores every prediction against the evidences, so a document annotated with no
  rationale sentence (an empty ``rationale``) would count its selections as wrong and its
  soft-score AUPRC has no positive to rank (NaN or an arbitrary value, by scikit-learn version).
  ``keep_empty=True`` (``--keep-empty-rationale``) writes those with ``evidences: []`` all the
  same: ERASER's micro precision then equals the precision of ``eval.json``
  (:func:`icda.metrics.rationale_metrics` counts such a document's selections as misses), and
  the soft metrics are not to be trusted.

With a model, one predictions line per exported document (ERASER's results format, see
:func:`predict_eraser`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from icda.data.document import DOC_ID_RULE, Document, is_doc_id, read_class_names, read_split
from icda.data.eraser_files import (RESULTS_FIX, check_annotation_spans, check_annotations, check_docid,
                                    check_result_spans, check_results, read_document, read_json_lines)
from icda.eraser_metrics import AOPC_THRESHOLDS, IOU_THRESHOLDS, score_results
from icda.errors import DataError
from icda.guard import add_input, add_output, declared_inputs
from icda.io import atomic_write, check_output, write_jsonl
from icda.layout import STATS_FILE, model_path, split_path
from icda.records import Choice, EraserScores
from icda.steps import command_doc, device_name

log = logging.getLogger(__name__)

#: our split → ERASER's file name (ERASER calls the development split ``val``)
ERASER_SPLITS = {"train": "train", "dev": "val", "test": "test"}
#: the ``query`` of every annotation (ERASER's classification tasks ask one question per dataset)
QUERY = "What is the label of this document?"


def tokenize(sentence: str) -> list[str]:
    """The tokens of a sentence in the export: its whitespace-separated pieces (``str.split()``)."""
    return sentence.split()


@dataclass
class EraserExport:
    """What :func:`export_eraser` wrote: the exported documents (split order) with their tokens
    (per sentence, a list of tokens), the ids exported without a gold label (``unlabelled``), the
    ids left out for want of ground truth (``unannotated``), and the files."""

    documents: list[Document]
    tokens: dict[str, list[list[str]]]
    unlabelled: list[str] = field(default_factory=list)
    unannotated: list[str] = field(default_factory=list)
    annotations: Path | None = None
    predictions: Path | None = None
    scores: dict | None = None


def _checked_tokens(doc: Document, path: Path, line: int) -> list[list[str]]:
    if not is_doc_id(doc.id):
        raise DataError(path, line, f"document id {doc.id!r} cannot be an ERASER file name (docs/<docid>)",
                        f"give the documents ids of {DOC_ID_RULE} and rerun prepare")
    tokens = [tokenize(s) for s in doc.sentences]
    for i, sentence in enumerate(tokens):
        if not sentence:
            raise DataError(path, line, f"sentence {i} of document {doc.id} has no token (ERASER's reader drops "
                            "empty lines, so the sentence indices would shift)",
                            "remove the empty sentence from the raw file and rerun prepare")
    return tokens


def class_names_of(data_dir: str | Path) -> list[str] | None:
    """The class names a prepared data folder was read with (its ``stats.json``:
    :func:`icda.data.document.read_class_names`; e.g. ERASER's ``["NEG", "POS"]`` or a dataset's
    ``class_names``), or None (labels are indices)."""
    return read_class_names(data_dir)


def label_name(label: int | None, names: Sequence[str] | None) -> str | None:
    """A label as ERASER writes it: its class name, or its index as a string."""
    return None if label is None else names[label] if names else str(label)


def annotation(doc: Document, tokens: list[list[str]], names: Sequence[str] | None = None) -> dict[str, Any]:
    """The ERASER annotation of an exported document (see the module docstring); ``names``: the
    class names to write (:func:`class_names_of`)."""
    starts = [0]
    for sentence in tokens:
        starts.append(starts[-1] + len(sentence))
    evidences = [[{"docid": doc.id, "text": " ".join(tokens[i]), "start_token": starts[i],
                   "end_token": starts[i + 1], "start_sentence": i, "end_sentence": i + 1}]
                 for i in sorted(doc.rationale)]
    return {"annotation_id": doc.id, "query": QUERY, "classification": label_name(doc.label, names),
            "evidences": evidences,
            "query_type": None, "docids": [doc.id]}


def export_data(data_dir: str | Path, out_dir: str | Path, split: str = "test",
                keep_empty: bool = False) -> EraserExport:
    """Write the ERASER data directory of one prepared split (module docstring): ``docs/`` first,
    then ``<split>.jsonl`` atomically (its presence means complete).

    Raises:
        DataError: the prepared split is missing or malformed; a document id is not a file name;
            a sentence has no token; a ground-truth index lies outside its document (each naming
            the file, the line and the fix).
    """
    path = split_path(data_dir, split)
    docs = read_split(data_dir, split)
    out = EraserExport([], {})
    for line, doc in enumerate(docs, 1):
        if doc.rationale is None or (not doc.rationale and not keep_empty):
            out.unannotated.append(doc.id)
            continue
        outside = [i for i in doc.rationale if not 0 <= i < len(doc.sentences)]
        if outside:
            raise DataError(path, line, f"ground-truth sentence {outside[0]} of document {doc.id} is outside its "
                            f"{len(doc.sentences)} sentences", "fix the raw file's rationale and rerun prepare")
        out.tokens[doc.id] = _checked_tokens(doc, path, line)
        out.documents.append(doc)
        if doc.label is None:
            out.unlabelled.append(doc.id)
    out_dir = Path(out_dir)
    for doc in out.documents:
        with atomic_write(out_dir / "docs" / doc.id) as fh:
            fh.write("".join(" ".join(sentence) + "\n" for sentence in out.tokens[doc.id]))
    out.annotations = out_dir / f"{ERASER_SPLITS[split]}.jsonl"
    names = class_names_of(data_dir)
    write_jsonl((annotation(doc, out.tokens[doc.id], names) for doc in out.documents), out.annotations)
    log.info("%s", export_summary(out, out_dir))
    return out


def export_summary(out: EraserExport, out_dir: str | Path) -> str:
    """One line: how many documents went where, how many without a gold label, how many left out."""
    return (f"{len(out.documents)} documents -> {out_dir} ({len(out.unlabelled)} of them without a gold label: "
            f"classification accuracy n/a (no gold labels) for those; left out: {len(out.unannotated)} without "
            "ground truth)")


def bin_size(tokens: Sequence[int], threshold: float) -> int:
    """How many top-ranked sentences an AOPC bin takes: the fewest whose tokens (``tokens``: the
    ranked sentences' token counts) number at least ⌈threshold · L⌉, L their total (ERASER bins
    the top ``threshold`` fraction of tokens; a sentence model removes whole sentences, so the
    bin is rounded up to the sentence that completes it)."""
    need = math.ceil(round(threshold * sum(tokens), 9))
    total = 0
    for m, n in enumerate(tokens, 1):
        total += n
        if total >= need:
            return m
    return len(tokens)


def predict_eraser(network: Any, ids: Any, docs: Sequence[Document], tokens: dict[str, list[list[str]]],
                   device: str = "cpu", thresholds: Sequence[float] = AOPC_THRESHOLDS,
                   names: Sequence[str] | None = None) -> tuple[list[dict], list]:
    """ERASER's results lines for ``docs`` from a trained :class:`~icda.model.RationaleNetwork`
    (classes written as ``names`` where given, else as their indices).

    Args:
        network: the model (put in eval mode).
        ids: [D, N] sentence ids of ``docs`` (``PAD`` in empty slots; row d holds the first
            ``n_d`` <= ``encoder.max_sentences`` sentences the model sees).
        tokens: docid → per sentence its tokens (:func:`tokenize`).
        thresholds: the AOPC bins (fractions of a document's tokens).

    Per document (the model is run as :func:`icda.train.predict` runs it, batches of 512):

    - ``hard_rationale_predictions``: one token span per selected sentence (the top-k of the
      selector scores: the positions ``evaluate`` records);
    - ``soft_sentence_predictions`` [sentences]: the softmax of the selector scores over the
      n_d sentences the model sees (the distribution its straight-through gradient uses), 0.0 for
      sentences past them; ``soft_rationale_predictions`` [tokens]: each token gets its
      sentence's score;
    - ``classification`` (the argmax), ``classification_scores`` {"c": P(c)} (softmax of the
      logits, float64);
    - ``comprehensiveness_classification_scores``: the selector and classifier re-run on the
      seen sentences without the selected ones; ``sufficiency_classification_scores``: on the
      selected ones alone (document order kept; the selector picks its top-k again);
    - ``thresholded_scores``: for each threshold t, the same with the top :func:`bin_size`
      sentences by selector score (ties: earlier sentence first) removed or kept alone, the
      token counts taken over the seen sentences.

    A reduced document with no sentence left is scored as the classifier with nothing selected
    (its max-pool of no sentence is the zero vector, as :func:`icda.model.masked_max` gives a row
    without a kept slot): the logits are the classifier's bias.

    Returns:
        (the results lines, per document its selected positions).
    """
    import torch

    from icda.records import PAD
    from icda.train import trim

    network.eval()

    @torch.no_grad()
    def forward(rows: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor], list[list[int]]]:
        probs, scores, positions = [], [], []
        for start in range(0, len(rows), 512):
            batch = trim(rows[start: start + 512])
            out = network(batch.to(device))
            probs.append(torch.softmax(out.logits.double().cpu(), dim=-1))
            real = batch >= 0
            soft = torch.softmax(out.scores.double().cpu().masked_fill(~real, float("-inf")), dim=-1)
            for r in range(len(batch)):
                n = int(real[r].sum())
                scores.append(soft[r, :n])
                positions.append(out.rationale_mask[r, :n].cpu().nonzero().squeeze(1).tolist())
        return torch.cat(probs), scores, positions

    with torch.no_grad():
        nothing = torch.softmax(network.empty_logits().double().cpu(), dim=-1)[0]

    probs, scores, positions = forward(ids)
    variants: list[list[int]] = []  # kept positions of every reduced document, 2 + 2·B per document
    for d, doc in enumerate(docs):
        n = len(scores[d])
        order = sorted(range(n), key=lambda i: (-float(scores[d][i]), i))
        counts = [len(tokens[doc.id][i]) for i in order]
        selected = set(positions[d])
        variants.append([i for i in range(n) if i not in selected])
        variants.append(sorted(selected))
        for t in thresholds:
            top = set(order[: bin_size(counts, t)])
            variants.append([i for i in range(n) if i not in top])
            variants.append(sorted(top))
    rows = torch.full((len(variants), max(ids.shape[1], 1)), PAD, dtype=torch.long)
    for v, keep in enumerate(variants):
        d = v // (2 + 2 * len(thresholds))
        rows[v, : len(keep)] = ids[d, keep]
    filled = [v for v, keep in enumerate(variants) if keep]
    reduced = nothing.repeat(len(variants), 1)
    if filled:
        reduced[filled] = forward(rows[filled])[0]

    def named(p: torch.Tensor) -> dict[str, float]:
        return {label_name(c, names): float(x) for c, x in enumerate(p.tolist())}

    lines, per = [], 2 + 2 * len(thresholds)
    for d, doc in enumerate(docs):
        sentence_scores = scores[d].tolist() + [0.0] * (len(tokens[doc.id]) - len(scores[d]))
        starts = [0]
        for sentence in tokens[doc.id]:
            starts.append(starts[-1] + len(sentence))
        r = reduced[d * per: (d + 1) * per]
        lines.append({
            "annotation_id": doc.id,
            "rationales": [{
                "docid": doc.id,
                "hard_rationale_predictions": [{"start_token": starts[i], "end_token": starts[i + 1]}
                                               for i in positions[d]],
                "soft_rationale_predictions": [s for s, sentence in zip(sentence_scores, tokens[doc.id])
                                               for _ in sentence],
                "soft_sentence_predictions": sentence_scores,
            }],
            "classification": label_name(int(probs[d].argmax()), names),
            "classification_scores": named(probs[d]),
            "comprehensiveness_classification_scores": named(r[0]),
            "sufficiency_classification_scores": named(r[1]),
            "thresholded_scores": [{"threshold": t, "comprehensiveness_classification_scores": named(r[2 + 2 * b]),
                                    "sufficiency_classification_scores": named(r[3 + 2 * b])}
                                   for b, t in enumerate(thresholds)],
        })
    return lines, positions


def export_eraser(data_dir: str | Path, out_dir: str | Path, split: str = "test", *,
                  model: str | Path | None = None, choice: str | Path | None = None,
                  settings_path: str | Path | None = None, embeddings: str | Path | None = None,
                  predictions: str | Path | None = None, scores: str | Path | None = None,
                  device: str = "auto", thresholds: Sequence[float] = AOPC_THRESHOLDS,
                  keep_empty: bool = False, labels: dict[str, Any] | None = None) -> EraserExport:
    """Write the ERASER data directory of ``split`` (:func:`export_data`) and, given a model, its
    predictions JSONL (:func:`predict_eraser`) and, given ``scores``, a JSON of ERASER's metrics on
    them (:func:`icda.eraser_metrics.score_results`, IOU threshold 0.5) with the paper's
    precision on the same documents (:func:`icda.metrics.rationale_metrics`, key ``paper``) and
    the ids left out.

    Args:
        model: a model folder (model.pt and model.json: a candidate folder or
            results/<dataset>/icda_model); or ``choice``: a choice.json whose reported selector
            is exported (its chosen candidate, or the ensemble of ``icda.final_selector:
            ensemble``; the chosen candidate's model card gives the settings).
            ``settings_path``: a settings.json, only for a folder without model.json.
        embeddings: the dataset's embedding cache (frozen mode; ``python -m icda embed``).
        predictions: where the predictions JSONL goes (required with a model).
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, … (the model card's own device is ignored).
        keep_empty: also export the documents annotated with no rationale sentence
            (:func:`export_data`).
        labels: what the scores are of, recorded in them (``dataset``, ``run``, ``iteration``:
            None for COMP), as ``eval.json`` records it; the tables read them.

    The scores file is written through :class:`icda.records.EraserScores` (a NaN, which ERASER's
    soft metrics give a document without a positive, is written as null).

    Raises:
        ValueError: both ``model`` and ``choice``, or a model without ``predictions``.
        DataError: an input file is missing or malformed (see :func:`export_data`,
            :func:`icda.steps.predict.read_model_card`, :func:`icda.loading.open_workspace`).
    """
    if model is not None and choice is not None:
        raise ValueError("export-eraser takes one of model and choice")
    if (model is not None or choice is not None) and predictions is None:
        raise ValueError("export-eraser with a model needs the predictions file to write")
    out = export_data(data_dir, out_dir, split, keep_empty)
    if model is None and choice is None:
        return out
    from icda.loading import open_workspace
    from icda.metrics import rationale_metrics
    from icda.steps.predict import read_model_card

    chosen = None if choice is None else Choice.read(choice)
    folder = Path(model) if chosen is None else chosen.candidate_path
    settings, _ = read_model_card(folder, settings_path)
    settings = dataclasses.replace(settings, device=device)
    ws = open_workspace(settings, data_dir, embeddings)
    network = ws.load_models([model_path(folder)] if chosen is None else chosen.reported_models)
    split_ids = ws.sentence_ids(out.documents, str(split_path(data_dir, split)))
    names = class_names_of(data_dir)
    lines, positions = predict_eraser(network, split_ids.ids, out.documents, out.tokens, ws.device, thresholds,
                                      names)
    out.predictions = Path(predictions)
    write_jsonl(lines, out.predictions)
    if scores is not None:
        annotations = [annotation(doc, out.tokens[doc.id], names) for doc in out.documents]
        out.scores = score_results(annotations, lines, out.tokens, IOU_THRESHOLDS, thresholds)
        paper = rationale_metrics(positions, [d.rationale for d in out.documents], split_ids.n_sentences.tolist(),
                                  [d.label for d in out.documents],
                                  [names.index(x["classification"]) if names else int(x["classification"]) for x in lines],
                                  settings.model.n_classes)
        out.scores |= {"paper": {k: paper[k] for k in ("precision", "recall", "f1", "accuracy", "n_docs")},
                       "model": str(model_path(folder)), "split": split,
                       "left_out": {"unannotated": out.unannotated}}
        out.scores |= {k: v for k, v in (labels or {}).items() if v is not None}
        EraserScores.from_json(finite(out.scores)).write(scores)
    log.info("predictions of %s -> %s", model_path(folder), out.predictions)
    return out


def finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float replaced by None (JSON has no such numbers)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite(v) for v in obj]
    return obj


def read_eraser_documents(out_dir: str | Path, docids: dict[str, int], where: Path) -> dict[str, list[list[str]]]:
    """docid → per sentence its tokens, read from ``out_dir/docs/<docid>`` as ERASER's
    ``load_documents`` reads them (:func:`icda.data.eraser_files.read_document`); ``docids``:
    {docid: the line of ``where`` that names it}.

    Raises:
        DataError: a docid is not a file name inside ``docs/``; a document file is missing, not
            UTF-8 or empty (naming ``where`` and the line).
    """
    docs_dir = Path(out_dir) / "docs"
    out = {}
    for docid, line in docids.items():
        what = f"document {docid}"
        doc = read_document(check_docid(docid, docs_dir, where, line, what), where, line, what)
        if not doc:
            raise DataError(where, line, f"{what}: its file {docs_dir / docid} is empty",
                            "export the split again (`python -m icda export-eraser`)")
        out[docid] = doc
    return out


def score_eraser(out_dir: str | Path, predictions: str | Path, split: str = "test",
                 iou_thresholds: Sequence[float] = IOU_THRESHOLDS,
                 aopc_thresholds: Sequence[float] = AOPC_THRESHOLDS) -> dict:
    """ERASER's metrics (:func:`icda.eraser_metrics.score_results`) of a predictions JSONL against
    an ERASER data directory (this export's or ERASER's own), read from the files as ERASER's
    ``metrics.py`` reads them, every field checked first (:mod:`icda.data.eraser_files`): docids
    are file names inside ``docs/``, spans lie inside their documents (0 <= start < end <= its
    tokens), annotation ids are unique, every field has ERASER's type.

    Raises:
        DataError (naming the file, the line and the fix): a file is missing, not UTF-8, or a line
            is not JSON; a field is missing or of the wrong type; a docid is not a file name
            inside ``docs/``; a span lies outside its document; an annotation id repeats; an
            annotation has no results line; a prediction lacks one of ``aopc_thresholds``.
    """
    ann_path = Path(out_dir) / f"{ERASER_SPLITS.get(split, split)}.jsonl"
    if not ann_path.is_file():
        raise DataError(ann_path, None, "file not found", "export the split first (`python -m icda export-eraser`)")
    predictions = Path(predictions)
    docs_dir = Path(out_dir) / "docs"
    ann_lines = read_json_lines(ann_path, "write it again with `python -m icda export-eraser`")
    res_lines = read_json_lines(predictions, RESULTS_FIX)
    ann_docs = check_annotations(ann_lines, ann_path, docs_dir)
    res_docs = check_results(res_lines, predictions, docs_dir)
    documents = read_eraser_documents(out_dir, ann_docs, ann_path)
    documents |= read_eraser_documents(out_dir, {d: n for d, n in res_docs.items() if d not in documents}, predictions)
    check_annotation_spans(ann_lines, ann_path, documents)
    check_result_spans(res_lines, predictions, documents)
    answered = {r["annotation_id"] for _, r in res_lines}
    for line, a in ann_lines:
        if a["annotation_id"] not in answered:
            raise DataError(predictions, None, f"annotation {a['annotation_id']!r} ({ann_path}:{line}) has no results "
                            "line", "give the predictions written for this data directory")
    for line, r in res_lines:
        have = {b["threshold"] for b in r["thresholded_scores"]}
        if not set(aopc_thresholds) <= have:
            raise DataError(predictions, line, f"annotation {r['annotation_id']!r}: thresholded_scores holds "
                            f"{sorted(have)}, not {sorted(aopc_thresholds)}", "export the predictions again with "
                            "these AOPC thresholds (`python -m icda export-eraser --aopc-thresholds ...`), or "
                            "score with theirs")
    return score_results([a for _, a in ann_lines], [r for _, r in res_lines], documents, iou_thresholds,
                         aopc_thresholds)


# --------------------------------------------------------------------------- the command


def raw_inputs_of(data_dir: str | Path) -> dict[str, Any]:
    """The raw files a prepared data folder was made from, as its ``stats.json`` records them
    (``inputs``: {split: path}), with the ``docs/`` folder beside an ERASER split's annotations
    and the folder holding them: {what: path or (path, "folder")} for the output guard
    (:func:`icda.guard.declared_inputs`). Nothing for a folder without ``stats.json``, or splits
    that were generated or carved out of train.

    Raises:
        DataError: ``stats.json`` is not a prepared folder's statistics.
    """
    stats = Path(data_dir) / STATS_FILE
    if not stats.is_file():
        return {}
    try:
        recorded = json.loads(stats.read_text(encoding="utf-8")).get("inputs") or {}
        items = list(recorded.items())
    except (ValueError, AttributeError):
        raise DataError(stats, None, "not a prepared data folder's statistics", "rerun `python -m icda prepare`") from None
    out: dict[str, Any] = {}
    for split, raw in items:
        if not isinstance(raw, str) or not Path(raw).is_file():
            continue
        out[f"the raw {split} file {STATS_FILE} records"] = Path(raw)
        if (Path(raw).parent / "docs").is_dir():  # an ERASER split: its folder holds docs/ beside it
            out[f"the raw {split} split's ERASER folder"] = (Path(raw).parent, "folder")
    return out


def _derived_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """What ``export-eraser`` reads beyond its arguments: the raw files of ``--data-dir`` (its
    stats.json), the model folder ``--choice`` names and, with ``--score-only``, the annotations
    and documents of ``--out-dir``."""
    out: dict[str, Any] = {}
    if args.data_dir is not None:
        out |= raw_inputs_of(args.data_dir)
    if args.choice is not None:
        out["the model folder --choice names"] = (Choice.read(args.choice).candidate_path, "folder")
    if args.score_only:
        out["the ERASER annotations"] = Path(args.out_dir) / f"{ERASER_SPLITS[args.split]}.jsonl"
        out["the ERASER documents"] = (Path(args.out_dir) / "docs", "folder")
    return out


def _score_only(args: argparse.Namespace) -> bool:
    """With ``--score-only`` the command reads ``--out-dir`` and ``--predictions`` (the output guard)."""
    return bool(args.score_only)


def register(sub) -> None:
    p = sub.add_parser("export-eraser", help="ERASER-format export of a split and a selector's rationales, "
                       "with ERASER's metrics", description=command_doc(__doc__, 2))
    add_input(p, "--data-dir", kind="folder", help="prepared dataset folder holding train/dev/test.jsonl")
    add_output(p, "--out-dir", kind="owned", reads_when=_score_only, required=True, help="the ERASER data directory to write (or read, "
                   "with --score-only)")
    p.add_argument("--split", default="test", choices=["train", "dev", "test"])
    src = p.add_mutually_exclusive_group()
    add_input(src, "--model", kind="folder", help="a model folder (model.pt and model.json): a candidate folder "
                     "or results/<dataset>/icda_model")
    add_input(src, "--choice", help="a choice.json of `python -m icda select` (its chosen candidate)")
    add_input(p, "--settings",
                   help="a settings.json, only for a model folder without model.json (trained before it was written)")
    add_input(p, "--embeddings", help="embedding cache from `python -m icda embed` (frozen mode)")
    add_output(p, "--predictions", reads_when=_score_only, help="the predictions JSONL (written with --model/--choice, "
                   "read with --score-only)")
    add_output(p, "--scores", help="JSON of ERASER's metrics on the predictions")
    p.add_argument("--aopc-thresholds", type=float, nargs="+", default=None,
                   help="AOPC bins, fractions of a document's tokens (default: ERASER's 0.01 0.05 0.1 0.2 0.5)")
    p.add_argument("--score-only", action="store_true", help="score --predictions against --out-dir; write nothing "
                   "but --scores")
    p.add_argument("--keep-empty-rationale", action="store_true",
                   help="also export documents annotated with no rationale sentence (evidences: []): ERASER's "
                   "precision then equals eval.json's, its soft-score AUPRC is not to be trusted")
    p.add_argument("--device", default="auto", type=device_name, help="cpu, cuda, ... or auto (default)")
    p.add_argument("--dataset", help="dataset name recorded in --scores (as eval.json records it)")
    p.add_argument("--run", type=int, help="run recorded in --scores")
    p.add_argument("--iteration", type=int, help="ICDA iteration recorded in --scores (left out: COMP or none)")
    p.set_defaults(func=run, parser=p)
    declared_inputs(p, _derived_inputs)


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before anything is read or written, an output of ``export-eraser`` that resolves to
    one of its inputs or into a model folder (:func:`icda.io.check_output`, the guard ``predict``
    shares): the annotations ``--out-dir`` writes, ``--predictions`` (written with a model) and
    ``--scores``, against the prepared splits of ``--data-dir``, ``--settings``,
    ``--embeddings``, ``--choice``, the model folder (``--model`` or the choice's candidate),
    each other, and with ``--score-only`` the predictions and the data directory it reads.

    Raises:
        ConfigError: naming the option, the path, what it would replace and the fix.
        DataError: ``--choice`` is missing or malformed.
    """
    out_dir = Path(args.out_dir)
    annotations = out_dir / f"{ERASER_SPLITS[args.split]}.jsonl"
    inputs: dict[str, Any] = {"the settings file": args.settings, "the embedding cache": args.embeddings,
                              "the choice file": args.choice}
    if args.data_dir is not None:
        inputs |= {f"the prepared {split} split": split_path(args.data_dir, split) for split in ERASER_SPLITS}
        inputs["the prepared data's stats"] = Path(args.data_dir) / STATS_FILE
    folder = args.model if args.model is not None else (Choice.read(args.choice).candidate_path
                                                         if args.choice is not None else None)
    folders: dict[str, Any] = {"the model folder": folder, "the ERASER documents folder": out_dir / "docs"}
    if args.score_only:
        inputs |= {"the predictions file": args.predictions, "the ERASER annotations file": annotations}
    else:
        check_output("--out-dir", annotations, "the ERASER annotations", inputs, folders)
        inputs["the ERASER annotations file written"] = annotations
        if args.model is not None or args.choice is not None:
            check_output("--predictions", args.predictions, "the predictions", inputs, folders)
            inputs["the predictions file written"] = args.predictions
    check_output("--scores", args.scores, "the scores", inputs, folders)


def run(args: argparse.Namespace) -> None:
    thresholds = tuple(args.aopc_thresholds or AOPC_THRESHOLDS)
    check_outputs(args)
    if args.score_only:
        if args.predictions is None:
            args.parser.error("--score-only needs --predictions")
        scores = score_eraser(args.out_dir, args.predictions, args.split, aopc_thresholds=thresholds)
        scores |= {k: v for k in ("dataset", "run", "iteration") if (v := getattr(args, k)) is not None}
        if args.scores is not None:
            EraserScores.from_json(finite(scores)).write(args.scores)
    else:
        if args.data_dir is None:
            args.parser.error("--data-dir is required (but for --score-only)")
        if (args.model or args.choice) and args.predictions is None:
            args.parser.error("--model/--choice need --predictions (the predictions JSONL to write)")
        out = export_eraser(args.data_dir, args.out_dir, args.split, model=args.model, choice=args.choice,
                            settings_path=args.settings, embeddings=args.embeddings, predictions=args.predictions,
                            scores=args.scores, device=args.device, thresholds=thresholds,
                            keep_empty=args.keep_empty_rationale,
                            labels={"dataset": args.dataset, "run": args.run, "iteration": args.iteration})
        print(export_summary(out, args.out_dir), file=sys.stderr)
        scores = out.scores
    if scores is not None:
        summary = {"sentence_precision": scores["sentence_prf"]["instance_micro"]["p"],
                   "iou_f1": scores["iou_scores"][0]["macro"]["f1"],
                   "token_f1": scores["token_prf"]["instance_macro"]["f1"],
                   "auprc": scores["token_soft_metrics"]["auprc"],
                   "comprehensiveness": scores["classification_scores"]["comprehensiveness"],
                   "sufficiency": scores["classification_scores"]["sufficiency"]}
        if "paper" in scores:
            summary["paper_precision"] = scores["paper"]["precision"]
        print(json.dumps(summary))
