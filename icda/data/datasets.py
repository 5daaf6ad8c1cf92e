"""Dataset specifications: validation, what is missing, download, and preparation into JSONL.

A dataset spec is a dict (one entry of ``datasets:`` in the workflow config). Keys and defaults are
in :data:`SPEC_DEFAULTS`:

* ``source``: ``"files"`` (read ``train``/``dev``/``test`` under ``data_dir``), ``"synthetic"``
  (:func:`~icda.data.synthetic.generate_synthetic` with the keyword arguments in ``synthetic``) or
  ``"llm"`` (responses of a language model to the prompt in ``llm``, written by ``python -m icda
  generate``; :mod:`icda.generate.spec` documents the block).
* ``train``, ``dev``, ``test``: paths relative to ``data_dir``; ``dev`` may be null when
  ``dev_fraction`` is set (dev is then carved out of the prepared train split; this is how
  connectivity trains on a split of its dev file when the train file is unavailable).
* ``format`` (train/dev: ``"icda"`` or ``"jsonl"``), ``test_format`` (``"icda"``, ``"hotel"`` or
  ``"jsonl"``), ``keywords`` (ground-truth keyword rule for icda/jsonl files, applied to every split: test
  precision is the reported metric, dev precision serves tuning, the model never sees it), ``ratings``
  (labels are ratings in [0, 1], binarised), ``min_sentences``, ``balance``, ``seed``,
  ``spacy_model`` (for JSONL ``"text"`` records).
* ``url`` (base URL: a file is fetched from ``url + relative path``), ``public``, ``how_to_get``
  (shown when files are missing), ``md5`` (``{relative path: md5 hex digest}``: the known
  checksums a downloaded file must match; a file without one is accepted and its md5 logged).

Preparation (paper appendix "Data Details"): train and dev are deduplicated, stripped of
documents with fewer than ``min_sentences`` sentences and class-balanced; the test split is kept as
read.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import re
import shutil
import statistics
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from icda.data.document import Document, write_documents
from icda.data.prepare import clean, split_dev
from icda.data.readers import read_hotel_test, read_icda, read_jsonl
from icda.data.synthetic import generate_synthetic
from icda.errors import ConfigError, DataError
from icda.io import atomic_path, read_json, write_json

log = logging.getLogger(__name__)

SPLITS = ("train", "dev", "test")

#: every spec key with its default
SPEC_DEFAULTS: dict[str, Any] = {
    "source": "files",
    "train": None,
    "dev": None,
    "test": None,
    "format": "icda",
    "test_format": "icda",
    "keywords": None,
    "ratings": False,
    "dev_fraction": None,
    "min_sentences": 5,
    "balance": True,
    "seed": 0,
    "url": None,
    "public": True,
    "how_to_get": None,
    "md5": None,
    "spacy_model": None,
    "synthetic": {},
    "llm": {},
}

_CHOICES = {
    "source": ("files", "synthetic", "llm"),
    "format": ("icda", "jsonl"),
    "test_format": ("icda", "hotel", "jsonl"),
}
_OPTIONAL_STR = ("train", "dev", "test", "url", "how_to_get", "spacy_model")
_BOOL = ("ratings", "balance", "public")

DOWNLOAD_COMMAND = "snakemake --cores 1 download"
_MD5 = re.compile(r"[0-9a-fA-F]{32}")


def validate_spec(name: str, spec: dict) -> dict:
    """The spec with defaults filled in, after checking every key.

    Raises:
        ConfigError: an unknown key, a value of the wrong type or outside its choices, or an
            inconsistent combination; the message names the dataset and the key.
    """
    def fail(key: str, problem: str, fix: str) -> ConfigError:
        return ConfigError(f"datasets.{name}.{key}: {problem}. Fix: {fix}")

    if not isinstance(spec, dict):
        raise ConfigError(f"datasets.{name}: not a mapping. Fix: give the dataset's keys "
                          f"({', '.join(SPEC_DEFAULTS)})")
    for key in spec:
        if key not in SPEC_DEFAULTS:
            raise fail(key, "unknown key", f"use only {', '.join(SPEC_DEFAULTS)}")
    out = {**SPEC_DEFAULTS, **spec}
    if out["synthetic"] is None:
        out["synthetic"] = {}
    if out["llm"] is None:
        out["llm"] = {}

    for key, choices in _CHOICES.items():
        if out[key] not in choices:
            raise fail(key, f"{out[key]!r} is not one of {list(choices)}",
                       f"set it to one of {list(choices)}")
    for key in _OPTIONAL_STR:
        if out[key] is not None and not (isinstance(out[key], str) and out[key]):
            raise fail(key, f"{out[key]!r} is not a non-empty string or null", "give a string or null")
    for key in _BOOL:
        if not isinstance(out[key], bool):
            raise fail(key, f"{out[key]!r} is not a boolean", "set true or false")
    if isinstance(out["seed"], bool) or not isinstance(out["seed"], int):
        raise fail("seed", f"{out['seed']!r} is not an integer", "give an integer seed")
    ms = out["min_sentences"]
    if isinstance(ms, bool) or not isinstance(ms, int) or ms < 1:
        raise fail("min_sentences", f"{ms!r} is not a positive integer", "give an integer >= 1 (paper: 5)")
    kw = out["keywords"]
    if kw is not None and not (isinstance(kw, list) and kw and all(isinstance(k, str) and k for k in kw)):
        raise fail("keywords", f"{kw!r} is not a non-empty list of non-empty strings",
                   "give a list of keywords or null")
    df = out["dev_fraction"]
    if df is not None and (isinstance(df, bool) or not isinstance(df, (int, float)) or not 0 < df < 1):
        raise fail("dev_fraction", f"{df!r} is not a number in (0, 1)", "give e.g. 0.2, or null")
    md5 = out["md5"]
    if md5 is not None:
        if not isinstance(md5, dict):
            raise fail("md5", f"{md5!r} is not a mapping",
                       "give {relative path: md5 hex digest}, e.g. {restaurant/train.txt: 9bc6...}")
        for rel, digest in md5.items():
            if not (isinstance(rel, str) and rel):
                raise fail("md5", f"{rel!r} is not a relative path",
                           "use the file's path relative to data_dir")
            if digest is not None and not (isinstance(digest, str) and _MD5.fullmatch(digest)):
                raise fail(f"md5.{rel}", f"{digest!r} is not an md5 hex digest (32 hex digits)",
                           "give the digest `md5sum FILE` prints, or null for none")
    if not isinstance(out["synthetic"], dict):
        raise fail("synthetic", f"{out['synthetic']!r} is not a mapping",
                   "give the keyword arguments of generate_synthetic")

    if out["source"] != "llm" and out["llm"]:
        raise fail("llm", f"is set for a dataset with source: {out['source']}", "remove it (or set source: llm)")
    if out["source"] == "llm":
        from icda.generate.spec import parse_llm

        parse_llm(name, out["llm"])
        for key in ("train", "dev", "test", "dev_fraction"):
            if out[key] is not None:
                raise fail(key, "is set for an llm dataset", "remove it: the splits come from llm.dev and llm.test")
        if out["synthetic"]:
            raise fail("synthetic", "is set for an llm dataset", "remove it")
    elif out["source"] == "synthetic":
        params = inspect.signature(generate_synthetic).parameters
        for key in out["synthetic"]:
            if key not in params:
                raise fail(f"synthetic.{key}", "unknown key", f"use only {', '.join(params)}")
        for key, param in params.items():
            if param.default is inspect.Parameter.empty and key not in out["synthetic"]:
                raise fail(f"synthetic.{key}", "missing", "give the number of documents")
        for key in ("train", "dev", "test", "dev_fraction"):
            if out[key] is not None:
                raise fail(key, "is set for a synthetic dataset", "remove it (or set source: files)")
    else:
        for key in ("train", "test"):
            if out[key] is None:
                raise fail(key, "missing", "give the file's path relative to data_dir")
        if (out["dev"] is None) == (df is None):
            raise fail("dev", "give exactly one of dev and dev_fraction",
                       "set dev to a file, or dev: null and dev_fraction (e.g. 0.2) to carve dev "
                       "out of train")
        if out["synthetic"]:
            raise fail("synthetic", "is set for a dataset with source: files", "remove it")
        if out["keywords"] is not None and out["test_format"] == "hotel":
            raise fail("keywords", "hotel test files carry their own annotation",
                       "remove keywords, or use test_format icda/jsonl")
        if out["ratings"] and out["format"] != "icda":
            raise fail("ratings", "only the icda format has rating labels", "set ratings: false")
    return out


def load_spec_file(path: str | Path) -> tuple[str, dict, Path]:
    """Read a spec file as the workflow writes it: JSON ``{"name": ..., "data_dir": ..., **spec}``.

    Returns:
        ``(name, spec, data_dir)``; the spec is not yet validated.

    Raises:
        ConfigError: the file is missing, not JSON, or lacks ``name``.
    """
    path = Path(path)
    try:
        obj = read_json(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: spec file not found. Fix: check the --spec path") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}). Fix: write the spec as a JSON object") from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        raise ConfigError(f'{path}: no "name". Fix: write {{"name": ..., "data_dir": ..., **spec}}')
    spec = dict(obj)
    name = spec.pop("name")
    data_dir = spec.pop("data_dir", None)
    if data_dir is None and spec.get("source", "files") == "files":
        raise ConfigError(f'{path}: no "data_dir" for dataset {name!r}. Fix: add "data_dir"')
    return name, spec, Path(data_dir or ".")


def load_config_datasets(path: str | Path) -> tuple[Path, dict[str, dict]]:
    """Read ``data_dir`` and ``datasets`` from a YAML workflow config (for use without Snakemake).

    Returns:
        ``(data_dir, {name: spec})``; the specs are not yet validated.

    Raises:
        ConfigError: the file is missing, not YAML, or lacks ``datasets``, or ``data_dir`` while
            a dataset reads files (synthetic and llm datasets need none).
    """
    import yaml

    path = Path(path)
    try:
        with path.open(encoding="utf-8") as fh:
            config = yaml.safe_load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found. Fix: check the --config path") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}). Fix: correct the file") from exc
    if not isinstance(config, dict) or not isinstance(config.get("datasets"), dict):
        raise ConfigError(f"{path}: no `datasets` mapping. Fix: add `datasets: {{NAME: {{...}}}}`")
    generated = all(isinstance(s, dict) and s.get("source") in ("synthetic", "llm")
                    for s in config["datasets"].values())
    if not isinstance(config.get("data_dir"), str) and not generated:
        raise ConfigError(f"{path}: no `data_dir`. Fix: add `data_dir: PATH` (where the data files lie)")
    return Path(config.get("data_dir") or "."), config["datasets"]


def load_specs(
    spec_path: str | Path | None = None,
    config_path: str | Path | None = None,
    names: list[str] | None = None,
) -> list[tuple[str, dict, Path]]:
    """The ``(name, spec, data_dir)`` triples named on a command line: from a spec file
    (:func:`load_spec_file`), or from a YAML config (:func:`load_config_datasets`) for the
    datasets in ``names`` (all of them when None).

    Raises:
        ConfigError: neither or both sources given, or a named dataset is not in the config.
    """
    if (spec_path is None) == (config_path is None):
        raise ConfigError("give either --spec SPEC.json or --config CONFIG.yaml. Fix: pass exactly one")
    if spec_path is not None:
        return [load_spec_file(spec_path)]
    data_dir, datasets = load_config_datasets(config_path)
    for name in names or []:
        if name not in datasets:
            raise ConfigError(f"{config_path}: no dataset {name!r} under `datasets`. "
                              f"Fix: use one of {', '.join(datasets)}")
    return [(name, datasets[name], data_dir) for name in (names or list(datasets))]


def input_files(spec: dict, data_dir: str | Path) -> list[Path]:
    """The configured train/dev/test files under ``data_dir`` (none unless ``source: files``).
    The spec is not validated here: unset paths are skipped."""
    if spec.get("source", "files") != "files":
        return []
    return [Path(data_dir) / spec[k] for k in SPLITS if spec.get(k)]


def missing_files(spec: dict, data_dir: str | Path) -> list[Path]:
    """The :func:`input_files` that do not exist."""
    return [path for path in input_files(spec, data_dir) if not path.is_file()]


def describe_missing(name: str, spec: dict, data_dir: str | Path, workflow_download: bool = True) -> str:
    """What is missing for dataset ``name`` and how to get it; ``""`` when nothing is missing.
    ``workflow_download=False`` leaves out the workflow's download rule (for when the workflow
    cannot start)."""
    missing = missing_files(spec, data_dir)
    if not missing:
        return ""
    files = ", ".join(str(p) for p in missing)
    text = f"dataset {name!r}: missing {files}. "
    if not spec.get("public", True):
        how = (spec.get("how_to_get") or f"Request them from the authors and place them at {files}.").strip()
        return text + f"These files are not public. {how}"
    if spec.get("url"):
        rule = f"`{DOWNLOAD_COMMAND}` or " if workflow_download else ""
        text += (f"Download with {rule}`python -m icda download --config CONFIG "
                 f"--dataset {name}` (fetches {spec['url']}<path>)")
        if spec.get("how_to_get"):
            text += f"; {spec['how_to_get']}"
        return text + "."
    how = spec.get("how_to_get") or "obtain them"
    return text + f"{how}; place them at {files}."


def downloadable(spec: dict) -> bool:
    """Whether the workflow may fetch the dataset's missing files: it reads files, is public and
    has a ``url``. The spec is not validated here."""
    return (spec.get("source", "files") == "files" and spec.get("public", True) is not False
            and bool(spec.get("url")))


def file_md5(path: str | Path) -> str:
    """The md5 hex digest of a file's bytes."""
    digest = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(name: str, spec: dict, data_dir: str | Path, timeout: float = 60.0) -> list[Path]:
    """Fetch the missing files of a public dataset from ``spec["url"] + relative path``.

    Each file is written to a temporary name beside its final path; its md5 is checked against
    ``spec["md5"][relative path]`` when one is known (otherwise logged), and only then is it
    renamed to its final path, so a failed or corrupt download leaves nothing behind.

    Returns:
        The paths downloaded (empty when nothing was missing).

    Raises:
        ConfigError: the spec is invalid.
        DataError: the dataset is not public or has no ``url`` (the message says how to get it);
            a download failed (offline, timeout, wrong URL: the message names the URL and the
            path to put the file at); or a file's md5 differs from the known one (the message
            names the file, both checksums and the fix).
    """
    spec = validate_spec(name, spec)
    missing = missing_files(spec, data_dir)
    if not missing:
        return []
    if not downloadable(spec):
        raise DataError(missing[0], None, "file not found and not downloadable",
                        describe_missing(name, spec, data_dir))
    data_dir = Path(data_dir)
    base = spec["url"] if spec["url"].endswith("/") else spec["url"] + "/"
    known = spec["md5"] or {}
    done = []
    for path in missing:
        rel = path.relative_to(data_dir).as_posix()
        url = base + rel
        log.info("%s: downloading %s to %s", name, url, path)
        with atomic_path(path) as tmp:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response, open(tmp, "wb") as fh:
                    shutil.copyfileobj(response, fh)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                raise DataError(path, None, f"dataset {name!r}: could not download {url} ({reason})",
                                f"connect to the internet and rerun; or fetch {url} elsewhere and "
                                f"put it at {path.resolve()}; or leave {name!r} out of "
                                "run_datasets (or set `download: false` to list it as "
                                "unavailable)") from exc
            actual = file_md5(tmp)
            expected = known.get(rel)
            if expected is None:
                log.info("%s: %s has no known checksum; its md5 is %s", name, path, actual)
            elif actual != expected.lower():
                raise DataError(path, None,
                                f"dataset {name!r}: the file downloaded from {url} has md5 {actual}, "
                                f"expected {expected} (datasets.{name}.md5)",
                                "rerun to download it again (it was not kept); if the checksum "
                                "still differs, the upstream file changed: place the right file "
                                f"at {path.resolve()} by hand, or correct datasets.{name}.md5 / "
                                "url")
            else:
                log.info("%s: %s md5 %s verified", name, path, actual)
        done.append(path)
    return done


def read_splits(name: str, spec: dict, data_dir: str | Path) -> dict[str, list[Document] | None]:
    """Read the configured files of a validated ``source: files`` spec, as read (unprepared);
    ``dev`` is None when it is to be carved out of train.

    Raises:
        DataError: a file is missing (the fix says how to get it) or malformed.
    """
    data_dir = Path(data_dir)
    missing = missing_files(spec, data_dir)
    if missing:
        raise DataError(missing[0], None, "file not found", describe_missing(name, spec, data_dir))
    splitter = None
    if spec["spacy_model"] is not None:
        from icda.data.sentences import SentenceSplitter

        splitter = SentenceSplitter(spec["spacy_model"])
    out: dict[str, list[Document] | None] = {}
    for split in SPLITS:
        if spec[split] is None:
            out[split] = None
            continue
        path = data_dir / spec[split]
        fmt = spec["test_format"] if split == "test" else spec["format"]
        keywords = spec["keywords"]  # a rule: every split gets it (dev precision for tuning)
        if fmt == "icda":
            out[split] = read_icda(path, keywords=keywords, ratings=spec["ratings"], id_prefix=split)
        elif fmt == "hotel":
            out[split] = read_hotel_test(path, id_prefix=split)
        else:
            out[split] = read_jsonl(path, splitter=splitter, keywords=keywords, id_prefix=split,
                                    require_label=split != "test")
    return out


def prepare_dataset(name: str, spec: dict, data_dir: str | Path, out_dir: str | Path,
                    responses: str | Path | None = None) -> dict:
    """Read, prepare and write one dataset: ``out_dir/{train,dev,test}.jsonl`` and ``stats.json``.

    Train and dev are deduplicated, documents with fewer than ``min_sentences`` sentences dropped
    and classes balanced (``balance``); when ``dev`` is null, dev is carved out of the prepared
    train split (stratified, ``dev_fraction``). The test split is kept as read and must be able to
    measure rationale precision (:func:`check_test_split`). A ``source: llm`` dataset is read from
    ``responses`` (default: where ``generate`` writes it) and cleaned and split by
    :func:`icda.generate.postprocess.llm_splits`; its stats gain a ``generation`` section.
    ``stats.json`` is written last, so its presence means the output is complete; an earlier output
    in ``out_dir`` is removed first, so a failed run leaves none.

    Returns:
        The statistics written to ``stats.json``: per split the number of documents, label counts
        and sentences per document (mean, population sd, min, max); per split the documents
        dropped at each step; the test ground-truth coverage; the train and dev documents that
        also appear in test (``overlap``); ``warnings`` (also logged).

    Raises:
        ConfigError: the spec is invalid.
        DataError: a file is missing or malformed, train/dev end up empty or with one class, or
            the test split is empty or has no ground truth (:func:`check_test_split`).
    """
    spec = validate_spec(name, spec)
    out_dir = Path(out_dir)
    for stale in ("stats.json", *(f"{split}.jsonl" for split in SPLITS)):  # stats.json first
        (out_dir / stale).unlink(missing_ok=True)
    if spec["source"] == "synthetic":
        kwargs = {"seed": spec["seed"], **spec["synthetic"]}
        raw: dict[str, list[Document] | None] = dict(generate_synthetic(**kwargs))
        inputs = {split: f"synthetic({kwargs})" for split in SPLITS}
    elif spec["source"] == "llm":
        from icda.generate.postprocess import llm_splits
        from icda.generate.spec import parse_llm, responses_path

        responses = Path(responses) if responses is not None else responses_path(name)
        raw, generation = llm_splits(spec, parse_llm(name, spec["llm"]), responses)
        inputs = {split: str(responses) for split in SPLITS}
    else:
        raw = read_splits(name, spec, data_dir)
        carved = f"carved from train (dev_fraction {spec['dev_fraction']})"
        inputs = {s: str(Path(data_dir) / spec[s]) if spec[s] else carved for s in SPLITS}

    dropped: dict[str, dict[str, int]] = {}
    prepared: dict[str, list[Document]] = {}
    for split in ("train", "dev"):
        docs = raw[split]
        if docs is None:
            continue
        steps: dict[str, int] = {"read": len(docs)}
        if spec["source"] == "files" and spec["ratings"]:
            steps["rating_between_thresholds"] = _count_lines(Path(data_dir) / spec[split]) - len(docs)
        kept, cleaned = clean(docs, spec["min_sentences"], spec["balance"], spec["seed"])
        steps.update(cleaned)
        prepared[split] = kept
        dropped[split] = steps
    if raw["dev"] is None:
        prepared["train"], prepared["dev"] = split_dev(
            prepared["train"], spec["dev_fraction"], spec["seed"])
        dropped["train"]["carved_to_dev"] = len(prepared["dev"])
    prepared["test"] = raw["test"]

    for split in ("train", "dev"):
        if spec["source"] == "synthetic":
            where = f"synthetic {split} split"
        else:
            where = inputs[split] if spec[split] else inputs["train"]
        labels = Counter(doc.label for doc in prepared[split])
        if len(labels) < 2:
            raise DataError(where, None,
                            f"the {split} split has {sum(labels.values())} documents and "
                            f"{len(labels)} class(es) after preparation (need both classes)",
                            f"check the file, or lower min_sentences (now {spec['min_sentences']})")
    warnings = check_test_split(name, spec, prepared["test"], inputs["test"])
    overlap = {split: count_test_overlap(prepared[split], prepared["test"])
               for split in ("train", "dev")}
    for split, n in overlap.items():
        if n:
            warnings.append(f"{name}: {n} of {len(prepared[split])} {split} documents also appear in "
                            "the test split (same sentences)")
    for warning in warnings:
        log.warning(warning)

    for split in SPLITS:
        write_documents(prepared[split], out_dir / f"{split}.jsonl")
    stats = {
        "dataset": name,
        "source": spec["source"],
        "inputs": inputs,
        "splits": {split: split_stats(prepared[split]) for split in SPLITS},
        "dropped": dropped,
        "test_ground_truth": ground_truth_stats(prepared["test"]),
        "overlap": {f"{split}_test": n for split, n in overlap.items()},
        "warnings": warnings,
    }
    if spec["source"] == "llm":
        stats["generation"] = generation
    write_json(stats, out_dir / "stats.json")
    return stats


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


def _count_lines(path: Path) -> int:
    """Non-blank lines of a file (documents before rating binarisation)."""
    with path.open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())
