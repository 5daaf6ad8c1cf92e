"""``python -m icda prepare``: read, prepare and write one dataset as JSONL (workflow rule ``prepare``).

Writes ``OUT_DIR/{train,dev,test}.jsonl`` and, last, ``OUT_DIR/stats.json``
(:func:`icda.steps.prepare.prepare_dataset`).

Preparing a dataset: read its files (or generate it), clean, split and check it, and write
``train``/``dev``/``test.jsonl`` and ``stats.json`` (the names: :mod:`icda.layout`). The dataset
comes from ``--spec`` (JSON {name, data_dir, ...spec}, as the workflow writes it) or from
``--config`` and ``--dataset`` (a YAML config with data_dir and datasets); ``--responses``, for
``source: llm`` only, is the responses file (default where ``generate`` writes it).

Preparation (paper appendix "Data Details"): train and dev are deduplicated, stripped of
documents with fewer than ``min_sentences`` sentences and class-balanced, and dev is carved out of
train when ``dev`` is null; the test split is kept as read. The spec's keys are documented in
:mod:`icda.data.dataset_spec`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
from collections import Counter
from pathlib import Path

from icda.data.cleaning import clean, split_dev, subsample
from icda.data.dataset_spec import SPLITS, check_resolved_inside, describe_missing, missing_files, validate_spec
from icda.data.dataset_spec_files import load_one_spec
from icda.data.overlap import normal_text, shared_documents
from icda.data.document import Document, write_split
from icda.data.eraser_files import class_names, read_eraser
from icda.data.readers import read_hotel_test, read_icda, read_jsonl
from icda.data.synthetic import generate_synthetic
from icda.errors import DataError
from icda.data.llm_spec import parse_llm, responses_path
from icda.generate.postprocess import llm_splits
from icda.guard import add_input, add_output
from icda.io import check_output_dir, write_json
from icda.layout import STATS_FILE, split_path

log = logging.getLogger(__name__)


def read_splits(name: str, spec: dict, data_dir: str | Path, notes: dict | None = None
                ) -> dict[str, list[Document] | None]:
    """Read the configured files of a validated ``source: files`` spec, as read (unprepared);
    ``dev`` is None when it is to be carved out of train. For ERASER files, ``notes`` (when
    given) receives ``class_names`` (the names mapped to labels 0 … C−1, when the files name
    their classes; :func:`icda.data.eraser_files.class_names`) and ``empty_evidences`` (the
    evidences skipped as empty).

    Raises:
        DataError: a file is missing (the fix says how to get it) or malformed.
    """
    data_dir = Path(data_dir)
    check_resolved_inside(name, spec, data_dir)
    missing = missing_files(spec, data_dir)
    if missing:
        raise DataError(missing[0], None, "file not found", describe_missing(name, spec, data_dir))
    splitter = None
    if spec["spacy_model"] is not None:
        from icda.data.sentences import SentenceSplitter

        splitter = SentenceSplitter(spec["spacy_model"])
    out: dict[str, list[Document] | None] = {}
    eraser = [data_dir / spec[split] for split in SPLITS if spec[split] is not None
              and (spec["test_format"] if split == "test" else spec["format"]) == "eraser"]
    names = class_names(eraser, spec["classes"], spec["class_names"]) if eraser else None
    counts: dict[str, int] = {}
    for split in SPLITS:
        if spec[split] is None:
            out[split] = None
            continue
        path = data_dir / spec[split]
        fmt = spec["test_format"] if split == "test" else spec["format"]
        keywords = spec["keywords"]  # a rule: every split gets it (dev precision for tuning)
        classes = range(spec["classes"])
        try:
            if fmt == "icda":
                out[split] = read_icda(path, keywords=keywords, ratings=spec["ratings"], id_prefix=split,
                                       classes=classes)
            elif fmt == "hotel":
                out[split] = read_hotel_test(path, id_prefix=split)
            elif fmt == "eraser":
                out[split] = read_eraser(path, classes=classes, require_label=split != "test", names=names,
                                         counts=counts)
            else:
                out[split] = read_jsonl(path, splitter=splitter, keywords=keywords, id_prefix=split,
                                        require_label=split != "test", classes=classes, file_name_ids=True,
                                        names=spec["class_names"])
        except DataError as exc:
            if "outside the classes" not in exc.problem:
                raise
            raise DataError(exc.path, exc.line, exc.problem, f"{exc.fix}, or, if the data has more classes, "
                            f"set datasets.{name}.classes to their number") from None
    if eraser and notes is not None:
        notes["class_names"] = names
        notes["empty_evidences"] = counts.get("empty_evidences", 0)
        if notes["empty_evidences"]:
            log.info("%s: %d empty ERASER evidence(s) (start_token == end_token) skipped",
                     name, notes["empty_evidences"])
    return out


def read_raw(name: str, spec: dict, data_dir: str | Path, responses: str | Path | None = None,
             notes: dict | None = None) -> tuple[dict[str, list[Document] | None], dict[str, str], dict | None]:
    """A validated spec's splits as read or generated, before preparation (``dev`` None when it
    is carved out of train), where each comes from, and for a ``source: llm`` dataset its
    generation statistics (else None)."""
    generation = None
    if spec["source"] == "synthetic":
        kwargs = {"seed": spec["seed"], **spec["synthetic"]} | ({"n_classes": spec["classes"]}
                                                                  if spec["classes"] != 2 else {})
        raw: dict[str, list[Document] | None] = dict(generate_synthetic(**kwargs))
        inputs = {split: f"synthetic({kwargs})" for split in SPLITS}
    elif spec["source"] == "llm":
        responses = Path(responses) if responses is not None else responses_path(name)
        raw, generation = llm_splits(spec, parse_llm(name, spec["llm"]), responses)
        inputs = {split: str(responses) for split in SPLITS}
    else:
        raw = read_splits(name, spec, data_dir, notes)
        carved = f"carved from train (dev_fraction {spec['dev_fraction']})"
        inputs = {s: str(Path(data_dir) / spec[s]) if spec[s] else carved for s in SPLITS}
    return raw, inputs, generation


def raw_inputs(name: str, spec: dict, data_dir: str | Path, responses: str | Path | None = None) -> dict[str, Path]:
    """{what: path} of the raw files a validated spec reads (for the output guard,
    :func:`icda.io.check_output_dir`): its split files (an ERASER split's ``docs/`` too), or an
    LLM dataset's responses; none for a synthetic one."""
    inputs: dict[str, Path] = {}
    for split in SPLITS:
        if spec["source"] == "files" and spec[split] is not None:
            inputs[f"the raw {split} file"] = Path(data_dir) / spec[split]
            if (spec["test_format"] if split == "test" else spec["format"]) == "eraser":
                inputs[f"the {split} split's ERASER documents"] = (Path(data_dir) / spec[split]).parent / "docs"
    if spec["source"] == "llm":
        inputs["the LLM responses"] = Path(responses) if responses is not None else responses_path(name)
    return inputs


def _lower_min_sentences(name: str, spec: dict) -> str:
    """The fix "lower min_sentences, or " when that can work: min_sentences must stay above
    model.k (at least 1), so at 2 or less it cannot be lowered (empty string)."""
    ms = spec["min_sentences"]
    return "" if ms <= 2 else (f"lower datasets.{name}.min_sentences (now {ms}; it must stay above "
                              "model.k), or ")


def prepare_dataset(name: str, spec: dict, data_dir: str | Path, out_dir: str | Path,
                    responses: str | Path | None = None) -> dict:
    """Read, prepare and write one dataset: ``out_dir/{train,dev,test}.jsonl`` and ``stats.json``.

    With ``drop_test_overlap``, the train and dev documents that share their text with a test
    document (exact or near-duplicate, :mod:`icda.data.overlap`) are removed first; else a
    dataset whose prepared train or dev split holds some is warned about in one line. Train and
    dev are deduplicated, documents with fewer than ``min_sentences`` sentences dropped
    and classes balanced (``balance``); when ``dev`` is null, dev is carved out of the prepared
    train split (stratified, ``dev_fraction``), and ``train_documents`` cuts the train split to a
    stratified sample of that size. The test split is kept as read and must be able to
    measure rationale precision (:func:`check_test_split`). A ``source: llm`` dataset is read from
    ``responses`` (default: where ``generate`` writes it) and cleaned and split by
    :func:`icda.generate.postprocess.llm_splits`; its stats gain a ``generation`` section.
    ``stats.json`` is written last, so its presence means the output is complete; an earlier output
    in ``out_dir`` is removed first, so a failed run leaves none.

    Returns:
        The statistics written to ``stats.json``: per split the number of documents, label counts
        and sentences per document (mean, population sd, min, max); per split the documents
        dropped at each step; the test ground-truth coverage; the train and dev documents that
        also appear in test (``overlap``: the same sentences); per train/dev split the documents
        that share their text with a test document (``test_overlap``: ``exact``, the same text after
        normalising case and whitespace, and ``near``, near-duplicates; :mod:`icda.data.overlap`),
        removed before cleaning with ``drop_test_overlap`` (``dropped``: ``shared_with_test``); per
        train/dev split the texts it holds with more than
        one label (``contradictory``: kept, once per label); ``warnings`` (also logged);
        ``class_names``: the classes' names in label order (ERASER's, or the spec's
        ``class_names``; null when the dataset names none).

    Raises:
        ConfigError: the spec is invalid, or ``out_dir`` is or holds a raw input file
            (:func:`icda.io.check_output_dir`: nothing is deleted then).
        DataError: a file is missing or malformed, train/dev end up empty or with one class or
            too small for any counterfactual (:func:`check_counterfactual_room`), or
            the test split is empty or has no ground truth (:func:`check_test_split`).
    """
    spec = validate_spec(name, spec)
    out_dir = Path(out_dir)
    check_output_dir("--out-dir", out_dir, "the prepared splits", raw_inputs(name, spec, data_dir, responses))
    for stale in (out_dir / STATS_FILE, *(split_path(out_dir, split) for split in SPLITS)):  # stats.json first
        stale.unlink(missing_ok=True)
    notes: dict = {}
    raw, inputs, generation = read_raw(name, spec, data_dir, responses, notes)

    # train and dev documents that share their text with a test document (icda.data.overlap)
    shared = {split: shared_documents(raw[split], raw["test"], spec["near_duplicate_threshold"])
              for split in ("train", "dev") if raw[split] is not None}
    near_keys = {normal_text(raw[split][i]) for split, found in shared.items() for i in found.near}
    dropped: dict[str, dict[str, int]] = {}
    prepared: dict[str, list[Document]] = {}
    for split in ("train", "dev"):
        docs = raw[split]
        if docs is None:
            continue
        steps: dict[str, int] = {"read": len(docs)}
        if spec["source"] == "files" and spec["ratings"]:
            steps["rating_between_thresholds"] = _count_lines(Path(data_dir) / spec[split]) - len(docs)
        if spec["drop_test_overlap"]:
            docs = [doc for i, doc in enumerate(docs) if i not in shared[split].all]
            steps["shared_with_test"] = steps["read"] - len(docs)
        kept, cleaned = clean(docs, spec["min_sentences"], spec["balance"], spec["seed"])
        steps.update(cleaned)
        prepared[split] = kept
        dropped[split] = steps
    if raw["dev"] is None:
        prepared["train"], prepared["dev"] = split_dev(
            prepared["train"], spec["dev_fraction"], spec["seed"])
        dropped["train"]["carved_to_dev"] = len(prepared["dev"])
    n_train = spec["train_documents"]
    if n_train is not None:
        if n_train > len(prepared["train"]):
            raise DataError(inputs["train"], None,
                            f"train_documents is {n_train}, but the prepared train split has "
                            f"{len(prepared['train'])} documents",
                            f"set datasets.{name}.train_documents to at most {len(prepared['train'])}, or null")
        dropped["train"]["subsampled"] = len(prepared["train"]) - n_train
        prepared["train"] = subsample(prepared["train"], n_train, spec["seed"])
    prepared["test"] = raw["test"]

    for split in ("train", "dev"):
        if spec["source"] == "synthetic":
            where = f"synthetic {split} split"
        else:
            where = inputs[split] if spec[split] else inputs["train"]
        labels = Counter(doc.label for doc in prepared[split])
        if len(labels) < spec["classes"]:
            missing = sorted(set(range(spec["classes"])) - set(labels))
            source = raw[split] if raw[split] is not None else raw["train"]  # dev_fraction: carved from train
            absent = sorted(set(missing) - {doc.label for doc in source})
            if absent and spec["source"] == "synthetic":
                fix = (f"raise synthetic.n_{split} (now {len(source)}): the generator gives each of the "
                       f"{spec['classes']} classes a share of it, and every class needs documents")
            elif absent:
                fix = (f"the {split} data has no document of class(es) {absent}: check the file, or set "
                       f"the dataset's classes (now {spec['classes']}) to the labels it has")
            else:
                fix = (f"preparation dropped the documents of class(es) {missing} "
                       f"({', '.join(f'{k}: {v}' for k, v in dropped.get(split, {}).items() if k != 'read')}): "
                       f"{_lower_min_sentences(name, spec)}give more data")
            raise DataError(where, None,
                            f"the {split} split has {sum(labels.values())} documents and "
                            f"{len(labels)} class(es) after preparation (need all {spec['classes']}: "
                            f"class(es) {missing} missing)", fix)
        more = {"synthetic": f"raise datasets.{name}.synthetic.n_{split}",
                "llm": f"{_lower_min_sentences(name, spec)}raise datasets.{name}.llm.per_label"}
        check_counterfactual_room(split, prepared[split], spec["classes"], where, more.get(
            spec["source"], f"{_lower_min_sentences(name, spec)}add documents to {where}"))
    warnings = check_test_split(name, spec, prepared["test"], inputs["test"])
    overlap = {split: count_test_overlap(prepared[split], prepared["test"])
               for split in ("train", "dev")}
    test_overlap = count_shared(prepared, {normal_text(doc) for doc in prepared["test"]}, near_keys)
    if (warning := overlap_warning(name, spec, prepared, test_overlap)) is not None:
        warnings.append(warning)
    contradictory = {split: count_contradictory(prepared[split]) for split in ("train", "dev")}
    for split, n in contradictory.items():
        if n:
            warnings.append(f"{name}: {n} text(s) of the {split} split appear with different labels "
                            "(contradictory duplicates, each kept once per label); check the "
                            f"labels in {inputs[split]}")
    for warning in warnings:
        log.warning(warning)
    if (small := small_data_warning(name, len(prepared["train"]))) is not None:
        log.warning(small)

    for split in SPLITS:
        write_split(prepared[split], out_dir, split)
    stats = {
        "dataset": name,
        "source": spec["source"],
        "inputs": inputs,
        "splits": {split: split_stats(prepared[split]) for split in SPLITS},
        "dropped": dropped,
        "test_ground_truth": ground_truth_stats(prepared["test"]),
        "overlap": {f"{split}_test": n for split, n in overlap.items()},
        "test_overlap": test_overlap,
        "contradictory": contradictory,
        "warnings": warnings,
        "small_data": small,  # the small-data warning, or null
    }
    if spec["source"] == "llm":
        stats["generation"] = generation
    if notes:  # ERASER files: their class names (label order) and the empty evidences skipped
        stats["eraser"] = notes
    # the classes' names in label order (ERASER's, or the spec's class_names), null: unnamed
    stats["class_names"] = (notes or {}).get("class_names") or spec["class_names"]
    write_json(stats, out_dir / STATS_FILE)
    return stats


#: below this many training documents the loop was measured to end below its MMI in most runs
#: (docs/experiments/own-data.md: 15 of 24 runs at 100 reviews, 3 of 18 at 300, 0 of 6 at 1,000)
SMALL_TRAIN = 300


def small_data_warning(name: str, n_train: int) -> str | None:
    """A warning for a training split smaller than :data:`SMALL_TRAIN` documents, or None."""
    if n_train >= SMALL_TRAIN:
        return None
    return (f"{name}: {n_train} training documents, fewer than {SMALL_TRAIN}: on own-style data of 100 reviews "
            "the loop ended below its MMI in 15 of 24 runs (3 of 18 at 300, 0 of 6 at 1,000; "
            "docs/experiments/own-data.md): compare each run's ICDA with its MMI on a dev split with rationales, "
            "or read each run's verdict (icda.verdict: run_agreement, the default: a run reports MMI unless "
            "the loop helped; docs/judging-a-run.md); more training documents make the loop's first pools reliable")


def split_stats(docs: list[Document]) -> dict:
    """Documents, label counts (keys as strings; ``"null"`` for no label) and sentences per
    document (mean, population sd, min, max) of one split."""
    lengths = [len(doc.sentences) for doc in docs]
    labels = Counter("null" if doc.label is None else str(doc.label) for doc in docs)
    return {
        "documents": len(docs),
        "labels": dict(sorted(labels.items())),
        "sentences_mean": statistics.fmean(lengths) if lengths else 0.0,
        "sentences_sd": statistics.pstdev(lengths) if lengths else 0.0,
        "sentences_min": min(lengths, default=0),
        "sentences_max": max(lengths, default=0),
    }


def ground_truth_stats(docs: list[Document]) -> dict:
    """How much of a split carries ground truth: documents annotated, documents with at least one
    ground-truth sentence (and their share), mean ground-truth sentences per annotated document."""
    annotated = [doc for doc in docs if doc.rationale is not None]
    covered = [doc for doc in annotated if doc.rationale]
    return {
        "annotated": len(annotated),
        "with_rationale": len(covered),
        "coverage": len(covered) / len(docs) if docs else 0.0,
        "rationale_sentences_mean": (statistics.fmean(len(d.rationale) for d in annotated)
                                     if annotated else 0.0),
    }


def check_counterfactual_room(split: str, docs: list[Document], n_classes: int, where: str, more: str) -> None:
    """Check that the prepared ``split`` (train or dev, from ``where``) leaves room for a
    counterfactual: the pools step keeps ``n // (2·C)`` originals of each class
    (:func:`icda.counterfactual.build_plan`), none when ``n < 2·C``, and then fails after training
    with advice about the model, while the cause is the data.

    Raises:
        DataError: the split has fewer than ``2·C`` documents (the numbers and the fix: ``more``).
    """
    n, room = len(docs), 2 * n_classes
    if n // room == 0:
        raise DataError(where, None, f"the {split} split has {n} documents after preparation: ICDA keeps "
                        f"n // (2·C) = {n} // {room} = 0 originals of each of the {n_classes} classes to turn "
                        "into counterfactuals, so no counterfactual could be made",
                        f"give the {split} split at least 2·C = {room} documents (2 of each class) after "
                        f"preparation: {more}")


def check_test_split(name: str, spec: dict, docs: list[Document], where: str) -> list[str]:
    """Check that the test split of dataset ``name`` (read from ``where``) can measure rationale
    precision: it has documents and some have a ground-truth rationale sentence.

    Returns:
        Warnings: ground truth covers under half of the test documents.

    Raises:
        DataError: the test split is empty; no test document is annotated (the dataset has neither
            keywords nor annotated rationales); or none has a ground-truth sentence (e.g. keywords
            that match no test sentence).
    """
    if not docs:
        raise DataError(where, None, f"dataset {name!r}: the test split has no documents",
                        "put the test documents in this file, one a line")
    gt = ground_truth_stats(docs)
    if gt["annotated"] == 0:
        raise DataError(where, None,
                        f"dataset {name!r}: no test document has ground truth (the dataset has "
                        "neither keywords nor annotated rationales), so rationale precision cannot "
                        "be measured",
                        f"set datasets.{name}.keywords, or give the test records a \"rationale\" "
                        "(test_format: jsonl) or sentence indices (test_format: hotel)")
    if gt["with_rationale"] == 0:
        how = (f"check datasets.{name}.keywords {spec['keywords']} against the test sentences (a "
               "sentence counts when it contains a keyword, case-insensitively)"
               if spec.get("keywords") else "annotate at least some rationale sentences")
        raise DataError(where, None,
                        f"dataset {name!r}: none of the {len(docs)} test documents has a "
                        "ground-truth rationale sentence, so every precision would be 0", how)
    if gt["coverage"] < 0.5:
        return [f"{name}: ground truth covers only {gt['with_rationale']} of {len(docs)} test "
                f"documents ({gt['coverage']:.0%}); precision rests on those documents alone"]
    return []


def count_test_overlap(docs: list[Document], test: list[Document]) -> int:
    """How many of ``docs`` have the same sentences as a test document."""
    test_sentences = {doc.sentences for doc in test}
    return sum(doc.sentences in test_sentences for doc in docs)


def count_shared(prepared: dict[str, list[Document]], test_keys: set[str], near_keys: set[str]
                 ) -> dict[str, dict[str, int]]:
    """Per train/dev split, its documents whose text (:func:`~icda.data.overlap.normal_text`) is
    a test document's (``exact``) or one of ``near_keys``, the near-duplicates of test documents
    (``near``)."""
    out = {}
    for split in ("train", "dev"):
        keys = [normal_text(doc) for doc in prepared[split]]
        exact = sum(key in test_keys for key in keys)
        out[split] = {"exact": exact, "near": sum(key in near_keys and key not in test_keys for key in keys)}
    return out


def overlap_warning(name: str, spec: dict, prepared: dict[str, list[Document]],
                    test_overlap: dict[str, dict[str, int]]) -> str | None:
    """One line for a dataset whose prepared train or dev documents share their text with a test
    document (:func:`count_shared`), or None."""
    shared = {split: sum(n.values()) for split, n in test_overlap.items()}
    if not any(shared.values()):
        return None
    exact = sum(n["exact"] for n in test_overlap.values())
    near = sum(n["near"] for n in test_overlap.values())
    where = " and ".join(f"{n} of {len(prepared[split])} {split}" for split, n in shared.items())
    return (f"{name}: {where} documents share their text with a test document ({exact} the same text "
            f"after normalising case and whitespace, {near} near-duplicate(s) of word 3-shingle Jaccard "
            f">= {spec['near_duplicate_threshold']}); kept, as published: set "
            f"datasets.{name}.drop_test_overlap: true to remove them")


def count_contradictory(docs: list[Document]) -> int:
    """How many distinct texts (same sentences) occur in ``docs`` with more than one label."""
    labels: dict[tuple[str, ...], set] = {}
    for doc in docs:
        labels.setdefault(doc.sentences, set()).add(doc.label)
    return sum(len(found) > 1 for found in labels.values())


def _count_lines(path: Path) -> int:
    """Non-blank lines of a file (documents before rating binarisation)."""
    with path.open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


# --------------------------------------------------------------------------- the command


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "prepare",
        help="read a dataset, deduplicate/filter/balance train and dev, write JSONL + stats",
        description=(
            "Read one dataset's train/dev/test files (or generate the synthetic one), deduplicate "
            "train and dev, drop documents with fewer than min_sentences sentences, balance the "
            "classes, carve dev out of train when dev is null, and write "
            "OUT_DIR/{train,dev,test}.jsonl and OUT_DIR/stats.json (paper appendix 'Data Details'). "
            "The dataset comes from --spec (JSON {name, data_dir, ...spec}, as the workflow writes "
            "it) or from --config and --dataset (a YAML config with data_dir and datasets)."
        ),
    )
    add_input(p, "--spec", help="JSON spec: {\"name\": ..., \"data_dir\": ..., **spec}")
    add_input(p, "--config", help="YAML config with data_dir and datasets (instead of --spec)")
    p.add_argument("--dataset", help="dataset name under `datasets` in --config")
    add_input(p, "--responses",
                   help="source: llm only: the responses file (default where `generate` writes it)")
    add_output(p, "--out-dir", kind="owned", required=True,
                   help="folder for train/dev/test.jsonl and stats.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    name, spec, data_dir = load_one_spec(args.spec, args.config, args.dataset, "prepare")
    stats = prepare_dataset(name, spec, data_dir, args.out_dir, responses=args.responses)
    print(summary(stats, args.out_dir))
    return 0


def summary(stats: dict, out_dir: Path) -> str:
    """A few lines: documents, labels and sentences per document of each split, ground truth."""
    lines = [f"{stats['dataset']}: prepared into {out_dir}"]
    for split, s in stats["splits"].items():
        labels = ", ".join(f"{k}: {v}" for k, v in s["labels"].items())
        dropped = stats["dropped"].get(split)
        steps = [f"{k} {v}" for k, v in (dropped or {}).items() if k != "read" and v]
        drop = "; dropped " + ", ".join(steps) if steps else ""
        lines.append(f"  {split:5s} {s['documents']:6d} docs (labels {labels}), "
                     f"{s['sentences_mean']:.2f} ± {s['sentences_sd']:.2f} sentences{drop}")
    gt = stats["test_ground_truth"]
    lines.append(f"  test ground truth: {gt['with_rationale']} of {stats['splits']['test']['documents']} "
                 f"documents have a rationale sentence ({gt['coverage']:.1%})")
    lines += [f"  warning: {w}" for w in stats["warnings"]]
    return "\n".join(lines)
