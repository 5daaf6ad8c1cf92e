"""Dataset specifications: validation, and the files a spec names (what is missing, how to get it).

A dataset spec is a dict (one entry of ``datasets:`` in the workflow config). Keys and defaults are
in :data:`SPEC_DEFAULTS`:

* ``source``: ``"files"`` (read ``train``/``dev``/``test`` under ``data_dir``), ``"synthetic"``
  (:func:`~icda.data.synthetic.generate_synthetic` with the keyword arguments in ``synthetic``) or
  ``"llm"`` (responses of a language model to the prompt in ``llm``, written by ``python -m icda
  generate``; :mod:`icda.data.llm_spec` documents the block).
* ``train``, ``dev``, ``test``: paths relative to ``data_dir``; ``dev`` may be null when
  ``dev_fraction`` is set (dev is then carved out of the prepared train split; this is how
  connectivity trains on a split of its dev file when the train file is unavailable).
* ``train_documents``: keep only this many documents of the prepared train split (after dev is
  carved), a seeded sample stratified by label (:func:`~icda.data.cleaning.subsample`): a
  learning curve, or a large dataset cut to the size of a small one.
* ``format`` (train/dev: ``"icda"``, ``"jsonl"`` or ``"eraser"``), ``test_format`` (``"icda"``,
  ``"hotel"``, ``"jsonl"`` or ``"eraser"``: an ERASER split file with ``docs/`` beside it,
  :func:`~icda.data.eraser_files.read_eraser`); left out, a file named ``*.jsonl`` is read as JSONL and any other as ICDA
  (:func:`format_by_suffix`), ``keywords`` (ground-truth keyword rule for icda/jsonl files, applied to every split: test
  precision is the reported metric, dev precision serves tuning, the model never sees it), ``ratings``
  (labels are ratings in [0, 1], binarised), ``min_sentences`` (default 2: a document of fewer
  sentences than ``model.k + 1`` leaves its selector no choice; the paper's datasets, in
  ``config/config.yaml``, set the paper's 5), ``balance``, ``seed``,
  ``spacy_model`` (for JSONL ``"text"`` records).
* ``drop_test_overlap``: remove from train and dev, before they are cleaned, every document that
  shares its text with a test document: the same text after normalising case and whitespace, or a
  near-duplicate (word 3-shingle Jaccard similarity of at least ``near_duplicate_threshold``,
  found by MinHash; :mod:`icda.data.overlap`). Default false: the data as published; the data
  audit (``python -m icda audit``) and ``prepare``'s warning count them either way.
* ``class_names``: the classes' names in label order 0 … C−1 (e.g. ``[neg, pos]``), for any
  dataset: recorded in the prepared data's ``stats.json`` and the final model's card, and shown
  for labels by ``predict``, the rationale viewer and ``export-eraser``; JSONL records may then give
  their ``label`` by name. ERASER files whose ``classification`` is a name (``NEG``/``POS``) are
  read with these (default: the names found, sorted; :func:`icda.data.eraser_files.class_names`).
  Default null: unnamed classes, shown as their indices.
* ``classes``: the number C >= 2 of classes; labels are 0 … C−1 (a label outside them is an
  error naming the file and line), balancing keeps C equal classes, a synthetic dataset is
  generated with C classes, and the dataset's classifier has C outputs (``model.n_classes`` of
  its settings, :func:`icda.workflow_config.run_settings.dataset_settings`).
* ``url`` (base URL: a file is fetched from ``url + relative path``; ``http://`` or ``https://``,
  or ``file://`` (a local mirror) only with ``allow_file_url: true``), ``public``, ``how_to_get``
  (shown when files are missing), ``md5`` (``{relative path: md5 hex digest}``: the known
  checksums a downloaded file must match; a file without one is accepted and its md5 logged) and
  ``git_blob`` (``{relative path: git blob id}``, what ``git hash-object FILE`` prints: the
  checksum of a file whose md5 is not known but whose upstream git tree lists it).

Every file path is relative to ``data_dir`` and stays inside it: absolute paths and ``..`` are
refused (:func:`validate_spec`), so a shared config cannot make the download step write, or
prepare read, a file elsewhere.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import urlsplit
from typing import Any

from icda.data.synthetic import LEVELS as SYNTHETIC_CLASSES, check_synthetic, generate_synthetic
from icda.errors import ConfigError
from icda.data.llm_spec import parse_llm

SPLITS = ("train", "dev", "test")

#: every spec key with its default
SPEC_DEFAULTS: dict[str, Any] = {
    "source": "files",
    "train": None,
    "dev": None,
    "test": None,
    "format": None,  # None: by the file's suffix (format_by_suffix)
    "test_format": None,
    "keywords": None,
    "ratings": False,
    "dev_fraction": None,
    "train_documents": None,
    "min_sentences": 2,  # the least the default model.k (1) allows; the paper's datasets set 5
    "balance": True,
    "seed": 0,
    "url": None,
    "public": True,
    "how_to_get": None,
    "md5": None,
    "git_blob": None,
    "allow_file_url": False,
    "spacy_model": None,
    "synthetic": {},
    "llm": {},
    "classes": 2,
    "class_names": None,
    "drop_test_overlap": False,
    "near_duplicate_threshold": 0.8,
}

_CHOICES = {
    "source": ("files", "synthetic", "llm"),
    "format": ("icda", "jsonl", "eraser"),
    "test_format": ("icda", "hotel", "jsonl", "eraser"),
}
_OPTIONAL_STR = ("train", "dev", "test", "url", "how_to_get", "spacy_model")
_BOOL = ("ratings", "balance", "public", "allow_file_url", "drop_test_overlap")
#: the URL schemes ``url`` may have (``file`` only with ``allow_file_url: true``)
URL_SCHEMES = ("http", "https")

DOWNLOAD_COMMAND = "snakemake --cores 1 download"


def validate_spec(name: str, spec: dict) -> dict:
    """The spec with defaults filled in, after checking every key.

    Raises:
        ConfigError: an unknown key, a value of the wrong type or outside its choices, an
            inconsistent combination, a file path that is absolute or climbs out of ``data_dir``
            (``..``), or a ``url`` that is not http(s) (``file://`` needs ``allow_file_url``);
            the message names the dataset and the key.
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
    for key, split in (("format", "train"), ("test_format", "test")):
        if out[key] is None:
            out[key] = format_by_suffix(out[split])

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
    if isinstance(out["seed"], bool) or not isinstance(out["seed"], int) or out["seed"] < 0:
        raise fail("seed", f"{out['seed']!r} is not a non-negative integer", "give an integer seed >= 0")
    classes = out["classes"]
    if isinstance(classes, bool) or not isinstance(classes, int) or classes < 2:
        raise fail("classes", f"{classes!r} is not an integer >= 2", "give the number of classes (labels 0 … C−1)")
    names = out["class_names"]
    if names is not None:
        if (not isinstance(names, list) or len(names) != classes or len(set(names)) != len(names)
                or not all(isinstance(n, str) and n for n in names)):
            raise fail("class_names", f"{names!r} is not a list of {classes} distinct class names",
                       f"list the {classes} class names in label order 0 … {classes - 1}, e.g. [NEG, POS] for 2 classes")
    if classes > 2 and (out["ratings"] or out["source"] == "llm"):
        what = "ratings: true (binarised ratings)" if out["ratings"] else "source: llm"
        raise fail("classes", f"{classes} classes with {what}, which has two", "set classes: 2")
    ms = out["min_sentences"]
    if isinstance(ms, bool) or not isinstance(ms, int) or ms < 1:
        raise fail("min_sentences", f"{ms!r} is not a positive integer", "give an integer above model.k (default 2; the paper: 5)")
    kw = out["keywords"]
    if kw is not None and not (isinstance(kw, list) and kw and all(isinstance(k, str) and k for k in kw)):
        raise fail("keywords", f"{kw!r} is not a non-empty list of non-empty strings",
                   "give a list of keywords or null")
    df = out["dev_fraction"]
    if df is not None and (isinstance(df, bool) or not isinstance(df, (int, float)) or not 0 < df < 1):
        raise fail("dev_fraction", f"{df!r} is not a number in (0, 1)", "give e.g. 0.2, or null")
    nd = out["near_duplicate_threshold"]
    if isinstance(nd, bool) or not isinstance(nd, (int, float)) or not 0 < nd < 1:
        raise fail("near_duplicate_threshold", f"{nd!r} is not a number in (0, 1)", "give e.g. 0.8")
    td = out["train_documents"]
    if td is not None and (isinstance(td, bool) or not isinstance(td, int) or td < 1):
        raise fail("train_documents", f"{td!r} is not a positive integer", "give e.g. 1200, or null for every document")
    for key, digits, example, how in (("md5", 32, "9bc6...", "`md5sum FILE`"),
                                      ("git_blob", 40, "b475...", "`git hash-object FILE`")):
        sums = out[key]
        if sums is None:
            continue
        if not isinstance(sums, dict):
            raise fail(key, f"{sums!r} is not a mapping",
                       f"give {{relative path: hex digest}}, e.g. {{restaurant/train.txt: {example}}}")
        for rel, digest in sums.items():
            if not (isinstance(rel, str) and rel):
                raise fail(key, f"{rel!r} is not a relative path", "use the file's path relative to data_dir")
            _check_inside(rel, lambda problem, fix: fail(f"{key}.{rel}", problem, fix))
            if digest is not None and not (isinstance(digest, str) and re.fullmatch(f"[0-9a-fA-F]{{{digits}}}", digest)):
                raise fail(f"{key}.{rel}", f"{digest!r} is not {'an md5' if key == 'md5' else 'a git blob id'} ({digits} hex digits)",
                           f"give the digest {how} prints, or null for none")
    if not isinstance(out["synthetic"], dict):
        raise fail("synthetic", f"{out['synthetic']!r} is not a mapping",
                   "give the keyword arguments of generate_synthetic")

    for key in SPLITS:
        if out[key] is not None:
            _check_inside(out[key], lambda problem, fix: fail(key, problem, fix))
    if out["url"] is not None:
        _check_url(out["url"], out["allow_file_url"], fail)

    if out["source"] != "llm" and out["llm"]:
        raise fail("llm", f"is set for a dataset with source: {out['source']}", "remove it (or set source: llm)")
    if out["source"] == "llm":
        parse_llm(name, out["llm"])
        for key in ("train", "dev", "test", "dev_fraction"):
            if out[key] is not None:
                raise fail(key, "is set for an llm dataset", "remove it: the splits come from llm.dev and llm.test")
        if out["synthetic"]:
            raise fail("synthetic", "is set for an llm dataset", "remove it")
    elif out["source"] == "synthetic":
        params = inspect.signature(generate_synthetic).parameters
        for key in out["synthetic"]:
            if key == "n_classes":
                raise fail("synthetic.n_classes", "the number of classes is the dataset's", "set classes instead")
            if key not in params:
                raise fail(f"synthetic.{key}", "unknown key", f"use only {', '.join(params)}")
        for key, param in params.items():
            if param.default is inspect.Parameter.empty and key not in out["synthetic"]:
                raise fail(f"synthetic.{key}", "missing", "give the number of documents")
        if out["classes"] not in SYNTHETIC_CLASSES:
            raise fail("classes", f"{out['classes']} classes for a synthetic dataset",
                       f"give {min(SYNTHETIC_CLASSES)} to {max(SYNTHETIC_CLASSES)} classes (the generator's levels)")
        problem = check_synthetic(out["synthetic"])
        if problem is not None:
            raise fail(f"synthetic.{problem[0]}", problem[1], problem[2])
        if out["synthetic"].get("verdict") is not None and out["classes"] != 2:
            raise fail("synthetic.verdict", f"needs two classes (classes is {out['classes']})",
                       "remove the verdict, or set classes: 2")
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
        if out["keywords"] is not None and out["test_format"] in ("hotel", "eraser"):
            raise fail("keywords", f"{out['test_format']} test files carry their own annotation",
                       "remove keywords, or use test_format icda/jsonl")
        if out["ratings"] and out["format"] != "icda":
            raise fail("ratings", "only the icda format has rating labels", "set ratings: false")
    return out


def format_by_suffix(path: Any) -> str:
    """The format of a data file whose spec leaves ``format``/``test_format`` out: ``"jsonl"``
    for a name ending in ``.jsonl``, else ``"icda"`` (also for no file, or a non-string, which
    :func:`validate_spec` refuses later)."""
    return "jsonl" if isinstance(path, str) and path.lower().endswith(".jsonl") else "icda"


def _check_inside(rel: str, fail) -> None:
    """Raise ``fail(problem, fix)`` unless ``rel`` is a relative path that stays inside the folder
    it is joined to: not absolute (POSIX or Windows style) and without a ``..`` part."""
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive:
        raise fail(f"{rel!r} is an absolute path; files must lie inside data_dir",
                   "give the file's path relative to data_dir (move the file under data_dir, or set "
                   "data_dir to a folder that holds it)")
    if ".." in PurePosixPath(rel.replace("\\", "/")).parts:
        raise fail(f"{rel!r} climbs out of data_dir ('..'); files must lie inside data_dir",
                   "give the file's path relative to data_dir without '..' (move the file under "
                   "data_dir, or set data_dir to a folder that holds it)")


def _check_url(url: Any, allow_file_url: bool, fail) -> None:
    """Raise ``fail(key, problem, fix)`` unless ``url`` is an http(s) URL with a host, or a
    ``file://`` URL with ``allow_file_url``."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        if not allow_file_url:
            raise fail("url", f"{url!r} is a file:// URL, which the download step would copy from "
                       "this machine", "give the http(s) URL of the files, or set "
                       "allow_file_url: true to fetch from a local mirror on purpose")
    elif parts.scheme not in URL_SCHEMES or not parts.netloc:
        raise fail("url", f"{url!r} is not an http:// or https:// URL",
                   "give the base URL the files are fetched from, e.g. "
                   "https://raw.githubusercontent.com/mlplyler/ICDA/main/data/ (or null)")


def input_files(spec: dict, data_dir: str | Path) -> list[Path]:
    """The configured train/dev/test files under ``data_dir`` (none unless ``source: files``).
    The spec is not validated here: unset paths are skipped."""
    if spec.get("source", "files") != "files":
        return []
    return [Path(data_dir) / spec[k] for k in SPLITS if spec.get(k)]


def check_resolved_inside(name: str, spec: dict, data_dir: str | Path) -> None:
    """Refuse a configured file (or an ERASER split's ``docs/``) that lies inside ``data_dir`` as
    written but outside it once symbolic links are resolved (the lexical check of
    :func:`validate_spec` sees no ``..``; a link under data_dir can still lead anywhere).

    Raises:
        ConfigError: naming the key, both paths and the fix.
    """
    root = Path(os.path.realpath(data_dir))
    for key in SPLITS:
        rel = spec.get(key) if spec.get("source", "files") == "files" else None
        if not rel:
            continue
        path = Path(data_dir) / rel
        for place in (path, path.parent / "docs"):
            real = Path(os.path.realpath(place))
            if (place.exists() or place.is_symlink()) and real != root and root not in real.parents:
                raise ConfigError(f"datasets.{name}.{key}: {place} resolves to {real}, outside data_dir {root} (a "
                                  "symbolic link leads out). Fix: set data_dir to a folder that holds the files, or "
                                  "copy them under data_dir")


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
