"""The workflow's configuration as the Snakefile reads it (``config/config.yaml``): checked against
its schema, turned into which datasets and runs there are, each dataset's spec and settings, the
seeds and candidates of an iteration, the GPUs a job asks for and the sweep's points; and the two
files the workflow writes itself (a rule's params, a run's summary.json).

Kept here (not in the .smk files) so that the workflow's decisions are plain, tested Python.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

from icda.data.dataset_spec import (
    SPEC_DEFAULTS,
    describe_missing,
    downloadable,
    input_files,
    missing_files,
    validate_spec,
)
from icda.steps.download import unreachable as unreachable_urls
from icda.errors import ConfigError, DataError
from icda.data.llm_spec import responses_path
from icda.io import ALIAS_FIX, MAX_YAML_VALUES, expanded_size, read_yaml, write_json
from icda.records import Decision, Evaluation, RunSummary
from icda.report.inputs import check_group_names
from icda.settings import Settings

SETTINGS_SECTIONS = ("encoder", "model", "train", "icda")
#: the folders of results/ that hold no dataset's results (a dataset's are results/<dataset>/):
#: name → what it holds
RESULTS_FOLDERS = {
    "tables": "the result tables", "cache": "the embedding and LLM caches", "plots": "the plots",
    "logs": "the job logs", "theory": "the theory figures", "benchmarks": "the jobs' measured cost",
    "sweep": "the tuning sweep",
}
#: schema checks whose message gets the failing key's description (what the value must be, in words)
_EXPLAINED = ("pattern", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def check_config(config: dict, schema_path: str | Path, config_files: Sequence[str | Path] = ()) -> None:
    """Check ``config`` against the workflow's JSON schema, before Snakemake's ``validate`` (which
    fills in the defaults but reports a problem with the whole config and schema).

    First its size: a config whose YAML aliases expand it beyond
    :data:`icda.io.MAX_YAML_VALUES` values is refused before anything walks it.

    Args:
        config_files: the files ``config`` was read from (``workflow.configfiles``), to name the
            one at fault.

    Raises:
        DataError: one of ``config_files`` expands to too many values (naming it).
        ConfigError: ``config`` expands to too many values (from no file, e.g. ``--config``); or
            one line per problem: the key, what is wrong (for an unknown key, the allowed keys;
            for a value out of range or of the wrong form, what it must be), and the fix. A
            float where an integer is due (``n_runs: 1.0``) is a problem; a YAML 1.2 float
            (``lr: 1e-4``, which PyYAML reads as a string) where a number is due is read as the
            float. ``overrides.<dataset>`` and ``sweep.points.<point>`` are checked against the
            schemas of the sections they override.
    """
    if expanded_size(config) > MAX_YAML_VALUES:
        for path in config_files:
            read_yaml(path, "give an existing config file")  # raises for the file at fault
        raise ConfigError(f"config: expands to more than {MAX_YAML_VALUES:,} values through YAML aliases. "
                          f"Fix: {ALIAS_FIX}")

    schema = _with_section_schemas(read_yaml(schema_path, "run the workflow from the repository's Snakefile"))
    _read_yaml12_floats(config, schema)
    problems = []
    for error in _strict_validator(schema).iter_errors(config):
        key = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = list(error.schema.get("properties", {}))
            problems += [f"{key + '.' if key else ''}{name}: unknown key (allowed: {', '.join(allowed)})"
                         for name in error.instance if name not in allowed]
        else:
            why = error.schema.get("description") if error.validator in _EXPLAINED else None
            message = error.message if len(error.message) <= 200 else f"{error.message[:120]}…{error.message[-80:]}"
            problems.append(f"{key or 'config'}: {message}" + (f" ({why})" if why else ""))
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(sorted(problems))
                          + f"\nFix: correct these keys (each key, its type and default: {schema_path})")
    check_names(config)


def _strict_validator(schema: dict):
    """A JSON-schema validator whose ``integer`` is a YAML integer: JSON Schema counts ``1.0`` as
    an integer, but the workflow's integers become loop bounds, seeds, widths and folder names
    (``seed42.0``), so ``n_runs: 1.0`` must be refused here, not fail inside a job."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool))
    return jsonschema.validators.extend(base, type_checker=checker)(schema)


def _with_section_schemas(schema: dict) -> dict:
    """``schema`` with the sections' own schemas (keys, types, bounds; no defaults) under
    ``overrides.<dataset>`` and ``sweep.points.<point>``, so that an override is checked like the
    key it overrides. The schema file keeps them plain objects: Snakemake's ``validate`` would
    fill an override with every default of its section."""
    out = copy.deepcopy(schema)
    props = out["properties"]
    for holder in (props["overrides"]["additionalProperties"]["properties"],
                   props["sweep"]["properties"]["points"]["additionalProperties"]["properties"]):
        for section in holder:
            holder[section] = _without_defaults(props[section])
    return out


def _without_defaults(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _without_defaults(value) for key, value in schema.items() if key != "default"}
    return schema


#: a float as YAML 1.2 writes it but PyYAML (YAML 1.1) reads as a string: ``1e-4``, ``5E3``
_YAML12_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _read_yaml12_floats(value: Any, schema: dict) -> None:
    """Turn, in place, the strings of ``value`` that are YAML 1.2 floats (``1e-4``) into floats
    where ``schema`` wants a number: PyYAML reads ``lr: 1e-4`` as the string ``"1e-4"``."""
    def wants_number(spec: Any) -> bool:
        kinds = spec.get("type") if isinstance(spec, dict) else None
        return "number" in (kinds if isinstance(kinds, list) else [kinds])

    def convert(item: Any, spec: Any) -> Any:
        if isinstance(item, str) and wants_number(spec) and _YAML12_FLOAT.fullmatch(item.strip()):
            return float(item)
        _read_yaml12_floats(item, spec)
        return item

    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        properties, other = schema.get("properties", {}), schema.get("additionalProperties")
        for key in value:
            spec = properties.get(key, other)
            value[key] = convert(value[key], spec)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        value[:] = [convert(item, schema["items"]) for item in value]


def check_names(config: dict) -> None:
    """Check that the names the workflow turns into folders, files and table columns do not
    collide: dataset names (results/<dataset>/, a table column titled after it) and report
    group names (results/tables/<group>.csv, .md, .tex).

    Raises:
        ConfigError: a dataset is named like one of :data:`RESULTS_FOLDERS` (in any case); two
            dataset names differ only in case or get the same column title
            (:func:`icda.report.tables.display_name`); a report group name is taken or
            malformed (:func:`icda.report.inputs.check_group_names`); or a group lists a dataset
            that is not under ``datasets``. Each names the key and the fix.
    """
    from icda.report.tables import display_name  # pandas: loaded by the workflow's report rules anyway

    folders: dict[str, str] = {}  # lower-case name → dataset
    titles: dict[str, str] = {}  # lower-case column title → dataset
    for name in config.get("datasets") or {}:
        folder = name.lower()
        if folder in RESULTS_FOLDERS:
            raise ConfigError(f"datasets.{name}: results/{folder}/ holds {RESULTS_FOLDERS[folder]}, so this "
                              f"dataset's results (results/<dataset>/) would mix with them. Fix: rename the "
                              f"dataset, e.g. {name}_data")
        other = folders.get(folder)
        if other is not None:
            raise ConfigError(f"datasets: {other!r} and {name!r} differ only in case: the result tables title "
                              f"both {display_name(name)!r}, and on a case-insensitive file system their "
                              "folders results/<dataset>/ are one. Fix: rename one of them")
        title = display_name(name).lower()
        other = titles.get(title)
        if other is not None:
            raise ConfigError(f"datasets: {other!r} and {name!r} get the same column title "
                              f"{display_name(name)!r} in the result tables. Fix: rename one of them")
        folders[folder], titles[title] = name, name
    groups = (config.get("report") or {}).get("groups")
    if isinstance(groups, dict):
        check_group_names(groups, "report.groups")
        for group, members in groups.items():
            unknown = [name for name in members or [] if name not in (config.get("datasets") or {})]
            if unknown:
                raise ConfigError(f"report.groups.{group}: {unknown[0]!r} is not a dataset under `datasets` "
                                  f"(configured: {', '.join(config.get('datasets') or {})}), so its column "
                                  "would stay empty. Fix: correct the name, or define the dataset")


def run_numbers(config: dict) -> list[int]:
    """The runs of every dataset: 1 .. ``n_runs``, after checking their seed lists.

    Raises:
        ConfigError: ``n_runs`` is larger than the number of seed lists in ``runs``; a run repeats
            a seed (its candidates would share a folder, so fewer would train); two runs have the
            same seeds (the mean ± sd over runs would count one run twice); or ``comp.seeds`` is
            larger than the seeds of a run (COMP would quietly train with fewer).
    """
    n, runs = config["n_runs"], config["runs"]
    if n > len(runs):
        raise ConfigError(f"n_runs: {n}, but `runs` has {len(runs)} seed lists. Fix: lower n_runs "
                          f"to {len(runs)} or add {n - len(runs)} seed lists to `runs`")
    used = [list(seeds) for seeds in runs[:n]]
    for r, seeds in enumerate(used, 1):
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if repeated:
            raise ConfigError(f"runs: run {r} has the seeds {seeds}, which repeat {repeated}; a seed names "
                              "its candidate (folder seed<s>), so the run would train fewer candidates "
                              "than it lists. Fix: give each run distinct seeds")
        for q, other in enumerate(used[: r - 1], 1):
            if sorted(other) == sorted(seeds):
                raise ConfigError(f"runs: runs {q} and {r} have the same seeds {sorted(seeds)}, so they "
                                  "would train the same models and the mean ± sd over runs would count "
                                  f"one run twice. Fix: give run {r} other seeds")
    comp_seeds = (config.get("comp") or {}).get("seeds")
    shortest = min(range(n), key=lambda i: len(used[i]))
    if comp_seeds is not None and comp_seeds > len(used[shortest]):
        raise ConfigError(f"comp.seeds: {comp_seeds}, but run {shortest + 1} has {len(used[shortest])} "
                          "seeds; COMP trains with the first comp.seeds seeds of each run. Fix: lower "
                          f"comp.seeds to {len(used[shortest])} or add seeds to the runs")
    return list(range(1, n + 1))


def selected_datasets(config: dict) -> list[str]:
    """The datasets to run: ``config["run_datasets"]`` or, if empty, every configured one."""
    names = config.get("run_datasets") or list(config["datasets"])
    unknown = [n for n in names if n not in config["datasets"]]
    if unknown:
        raise ConfigError(f"run_datasets: {unknown} are not under `datasets:`. Fix: define them or remove them")
    return names


def downloads(config: dict) -> dict[str, list[str]]:
    """{selected dataset: its missing files} for the datasets the workflow can download (public,
    with a ``url``): each gets a ``download_<dataset>`` job writing exactly these files (paths
    as rule ``prepare`` lists them), whether or not ``download`` is on (the ``download`` target
    fetches them on request)."""
    data_dir = config["data_dir"]
    out = {}
    for name in selected_datasets(config):
        spec = validate_spec(name, config["datasets"][name])
        missing = missing_files(spec, data_dir)
        if missing and downloadable(spec):
            out[name] = [str(path) for path in missing]
    return out


def unreachable_downloads(config: dict, timeout: float = 5.0) -> dict[str, str]:
    """{dataset: what could not be fetched, from where and where to put it} for the datasets
    whose missing files the run would download (``download`` on) but whose server cannot be
    reached, e.g. without network (:func:`icda.steps.download.unreachable`: one HEAD request per
    server). Datasets named in ``run_datasets`` are not probed: asked for by name, their download
    job runs and fails with the same advice. Never raises for the network."""
    if not config.get("download", True):
        return {}
    named = set(config.get("run_datasets") or [])
    data_dir = Path(config["data_dir"])
    wanted = {}  # dataset → [(url, path)]
    for name, files in downloads(config).items():
        if name in named:
            continue
        spec = validate_spec(name, config["datasets"][name])
        base = spec["url"] if spec["url"].endswith("/") else spec["url"] + "/"
        wanted[name] = [(base + Path(f).relative_to(data_dir).as_posix(), Path(f)) for f in files]
    failed = unreachable_urls([pairs[0][0] for pairs in wanted.values()], timeout)
    return {name: (f"could not be downloaded ({failed[pairs[0][0]]}): connect to the internet and rerun, or "
                   "fetch each file and put it at its path: "
                   + "; ".join(f"{url} → {path.resolve()}" for url, path in pairs))
            for name, pairs in wanted.items() if pairs[0][0] in failed}


#: the environment variable through which the workflow's main process hands its probe's answer
#: (:func:`unreachable_downloads`) to the job processes it starts, locally or on a cluster
UNREACHABLE_ENV = "ICDA_UNREACHABLE_DOWNLOADS"


def unreachable_downloads_once(config: dict, main_process: bool) -> dict[str, str]:
    """:func:`unreachable_downloads` in the workflow's main process, which also passes its answer
    on in :data:`UNREACHABLE_ENV`; a job process (``main_process`` False) reads that answer, so
    every process of a run agrees on which datasets run, and jobs never probe."""
    if main_process:
        found = unreachable_downloads(config)
        os.environ[UNREACHABLE_ENV] = json.dumps(found)
        return found
    return json.loads(os.environ.get(UNREACHABLE_ENV) or "{}")


def availability(config: dict, unreachable: dict[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """(datasets that run, {absent dataset: what is missing and how to get it}).

    A dataset runs when its files are all present or, with ``download`` on (the default), when
    the missing ones can be downloaded (:func:`downloads`: its ``prepare`` then waits for its
    download job) and its server is not among ``unreachable`` (:func:`unreachable_downloads`,
    whose reasons it reports). Only datasets that ``run_datasets`` does not name may be absent.

    Raises:
        ConfigError: a dataset spec is invalid, or no selected dataset can run.
        DataError: a dataset named in ``run_datasets`` misses a file that will not be downloaded
            (the message names the file and how to get it).
    """
    unreachable = unreachable or {}
    data_dir = Path(config["data_dir"])
    named = config.get("run_datasets") or []
    specs = {name: validate_spec(name, config["datasets"][name]) for name in selected_datasets(config)}
    fetched = downloads(config) if config.get("download", True) else {}
    present = [name for name, spec in specs.items()
               if (name in fetched and name not in unreachable) or not missing_files(spec, data_dir)]
    absent_named = [name for name in named if name not in present]
    if absent_named:  # (the workflow cannot start, so its download rule is not suggested)
        name = absent_named[0]
        raise DataError(missing_files(specs[name], data_dir)[0], None,
                        f"file not found; dataset {name!r} is named in run_datasets",
                        describe_missing(name, specs[name], data_dir, workflow_download=False)
                        + f" Or remove {name!r} from run_datasets")
    if not present:
        how = " ".join(unreachable.get(name) or describe_missing(name, spec, data_dir, workflow_download=False)
                       for name, spec in specs.items())
        raise ConfigError(f"no selected dataset has its files. Fix: get the files of one of them, or "
                          f"add a dataset whose files are present. {how}")
    return present, {name: unreachable.get(name) or describe_missing(name, spec, data_dir)
                     for name, spec in specs.items() if name not in present}


def unfetched_report(unreachable: dict[str, str]) -> str:
    """The lines the workflow ends with when some datasets could not be downloaded: each with
    where its files come from and where to put them (empty when none)."""
    if not unreachable:
        return ""
    lines = [f"{len(unreachable)} dataset(s) could not be downloaded and did not run "
             "(also listed in results/tables/summary.md):"]
    lines += [f"  {name}: {why}" for name, why in unreachable.items()]
    return "\n".join(lines)


def dataset_spec(config: dict, name: str, download: bool = False) -> dict[str, Any]:
    """The JSON that ``python -m icda prepare --spec`` reads; with ``download``, the one that
    ``python -m icda download --spec`` reads. Only the download's spec has the checksums
    (``md5``, ``git_blob``): prepare does not use them, so adding one does not rerun it."""
    spec = {"name": name, "data_dir": str(config["data_dir"]), **config["datasets"][name]}
    if not download:
        spec.pop("md5", None)
        spec.pop("git_blob", None)
    return spec


def generated_responses(config: dict, name: str) -> list[str]:
    """What ``prepare`` of dataset ``name`` needs besides its spec: the responses file that
    ``generate`` writes, for a ``source: llm`` dataset; nothing for any other."""
    if config["datasets"][name].get("source") != "llm":
        return []
    return [str(responses_path(name))]


def generate_gpus(config: dict, name: str) -> int:
    """GPUs the ``generate`` job of ``name`` asks the scheduler for: 1 for a local transformers
    model that may use one (device auto or cuda), 0 for a server backend."""
    backend = (config["datasets"][name].get("llm") or {}).get("backend") or {}
    return int(backend.get("type") == "transformers" and backend.get("device", "auto") != "cpu")


def data_files(config: dict, name: str) -> list[str]:
    """The data files dataset ``name`` is prepared from (rule ``prepare``: a change reruns it)."""
    return [str(p) for p in input_files(config["datasets"][name], config["data_dir"])]


#: sha256 of the files :func:`data_checksums` hashed in this process, by (path, size, mtime,
#: ctime, inode): Snakemake asks once per job, the file is read once per invocation
_SHA256_CACHE: dict[tuple, str] = {}


def file_sha256(path: str | Path) -> str | None:
    """The sha256 hex digest of a file's bytes (None when it does not exist), cached for as long as
    its size, times and inode stay the same."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    if key not in _SHA256_CACHE:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        _SHA256_CACHE[key] = digest.hexdigest()
    return _SHA256_CACHE[key]


def data_checksums(config: dict, name: str) -> dict[str, str | None]:
    """{data file: sha256 of its content} of dataset ``name`` (None for a file still to be
    downloaded), a param of rule ``prepare``: Snakemake reruns a job whose params changed, so a
    data file whose content changes reruns ``prepare`` even when its modification time does not
    say so (``cp -p``, ``touch -r``, a restored backup, an older file moved in its place)."""
    return {path: file_sha256(path) for path in data_files(config, name)}


def dataset_settings(config: dict, name: str) -> dict[str, Any]:
    """The settings.json of one dataset: global sections merged with ``overrides[name]``, and
    ``model.n_classes``, the classifier's outputs, set to the dataset's ``classes``.

    Raises:
        ConfigError: ``model.n_classes`` is set in the config (the dataset's ``classes`` decides it).
    """
    base = {key: config.get(key, {}) for key in SETTINGS_SECTIONS} | {"device": config.get("device", "auto")}
    settings = _merge(base, (config.get("overrides") or {}).get(name, {}))
    if "n_classes" in settings.get("model", {}):
        raise ConfigError(f"model.n_classes is set for dataset {name}: the number of classes is the dataset's. "
                          f"Fix: remove it and set datasets.{name}.classes")
    classes = ((config.get("datasets") or {}).get(name) or {}).get("classes", SPEC_DEFAULTS["classes"])
    return _merge(settings, {"model": {"n_classes": classes}})


def check_settings(config: dict, datasets: list[str]) -> None:
    """Build the settings of every dataset in ``datasets`` and of every sweep point on them, so
    that a value the training commands would refuse, or one that makes the method meaningless,
    stops the workflow before any job runs.

    Raises:
        ConfigError: ``overrides`` names a dataset that is not under ``datasets`` (a typo would
            otherwise be ignored); or the first invalid setting, naming the dataset (and sweep
            point) and the fix: among others ``model.k`` not smaller than
            ``encoder.max_sentences`` (:meth:`icda.settings.Settings.validate`) or than the
            dataset's ``min_sentences`` (prepare keeps train/dev documents that short, in which
            every sentence would be selected).
    """
    unknown = [name for name in config.get("overrides") or {} if name not in config["datasets"]]
    if unknown:
        raise ConfigError(f"overrides.{unknown[0]}: there is no dataset {unknown[0]!r} under `datasets` "
                          f"(configured: {', '.join(config['datasets'])}), so these overrides would be "
                          "ignored. Fix: correct the dataset name, or remove the entry")
    for name in datasets:
        shortest = validate_spec(name, config["datasets"][name])["min_sentences"]
        points = {None: dataset_settings(config, name)} | {
            point: sweep_settings(config, name, point) for point in (config.get("sweep") or {}).get("points") or {}}
        for point, values in points.items():
            where = f"config, dataset {name!r}" if point is None else \
                f"config, sweep point {point!r} on dataset {name!r}"
            k = Settings.from_dict(values, where=where).model.k
            if k >= shortest:
                raise ConfigError(
                    f"{where}: model.k = {k} is not smaller than datasets.{name}.min_sentences = {shortest}: "
                    f"prepare keeps train/dev documents of {shortest} sentences, in which every sentence "
                    f"would be selected (each counterfactual would replace the whole document). Fix: "
                    f"lower model.k below {shortest}, or raise datasets.{name}.min_sentences above {k}")


def finetune(config: dict, name: str) -> bool:
    return bool(dataset_settings(config, name)["model"].get("finetune", False))


def gpus(config: dict, name: str) -> int:
    """GPUs a dataset's embed/train jobs request (the ``gpu`` resource that
    snakemake-executor-plugin-slurm turns into a SLURM GPU request): 1 when the encoder is
    fine-tuned (``model.finetune``) or the device is set to ``cuda``, else 0 (with
    ``device: auto`` a job uses a GPU only where one happens to be present)."""
    settings = dataset_settings(config, name)
    return int(bool(settings["model"].get("finetune", False)) or str(settings["device"]).startswith("cuda"))


def run_seeds(config: dict, run: int | str) -> list[int]:
    """The seed triple of run ``run`` (1-based)."""
    runs = config["runs"]
    r = int(run)
    if not 1 <= r <= len(runs):
        raise ConfigError(f"run {r} is not configured: `runs` has {len(runs)} seed lists. "
                          f"Fix: add seed lists to `runs` or use runs 1 to {len(runs)}")
    return list(runs[r - 1])


def candidate_seeds(config: dict, run: int | str, iteration: int | str) -> dict[str, int]:
    """The candidates of one iteration, {folder name: training seed}: ``seed<s>`` per seed of the
    run, plus from iteration 1 ``warm``, the warm start, which trains with the run's first seed."""
    seeds = run_seeds(config, run)
    names = {f"seed{s}": s for s in seeds}
    return names | ({"warm": seeds[0]} if int(iteration) >= 1 else {})


def candidates(config: dict, run: int | str, iteration: int | str) -> list[str]:
    """Candidate folder names of one iteration (:func:`candidate_seeds`), fresh seeds first."""
    return list(candidate_seeds(config, run, iteration))


def comp_grid(config: dict, run: int | str) -> list[dict[str, float | int]]:
    """COMP grid of one run: ``{"lam": λ, "seed": s}`` over the λ values and the first seeds."""
    comp = config["comp"]
    seeds = run_seeds(config, run)[: comp["seeds"]]
    return [{"lam": lam, "seed": s} for lam in comp["lambdas"] for s in seeds]


def max_iters(config: dict, name: str) -> int:
    """The last ICDA iteration allowed for dataset ``name`` (``icda.max_iters``, overrides applied)."""
    return int(dataset_settings(config, name)["icda"]["max_iters"])


def _log(path: str, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text + "\n", encoding="utf-8")


def write_params(value: Any, out: str, log: str) -> None:
    """Write a rule's params as JSON (settings, dataset spec) and note it in the rule's log."""
    write_json(value, out)
    _log(log, f"wrote {out}")


def write_run_summary(dataset: str, run: int, decisions: list[str], evaluations: list[str], out: str, log: str) -> dict:
    """One run's iteration record (:class:`icda.records.RunSummary`): per iteration the stop
    decision and the test precision (overall and per gold class), and the iteration taken as
    ICDA (the last decision's ``final_iteration``)."""
    iterations = []
    for k, (decision, evaluation) in enumerate(zip(decisions, evaluations)):
        d, e = Decision.read(decision), Evaluation.read(evaluation)
        iterations.append({"iteration": k, "precision": e.precision, "alpha": e.alpha,
                           "precision_by_class": e.precision_by_class, "accuracy": e.accuracy,
                           "reason": d.reason})
    last = Decision.read(decisions[-1])
    summary = RunSummary(dataset=dataset, run=int(run), iterations=len(iterations), converged=last.converged,
                         reason=last.reason, per_iteration=iterations, final_iteration=last.final_iteration,
                         final_reason=last.final_reason)
    summary.write(out)
    _log(log, f"{dataset} run {run}: {len(iterations)} iterations; {last.reason}; ICDA is iteration "
              f"{summary.icda_iteration} ({last.final_reason})")
    return summary.to_json()


def sweep_datasets(config: dict, available: list[str]) -> list[str]:
    """The datasets of the tuning sweep: ``sweep.datasets`` (each must be available) or every
    available one."""
    names = config["sweep"]["datasets"] or available
    absent = [n for n in names if n not in available]
    if absent:
        raise ConfigError(f"sweep.datasets: {absent} are not available (files missing or not configured). "
                          "Fix: remove them from sweep.datasets or provide their files")
    return names


def sweep_settings(config: dict, name: str, point: str) -> dict[str, Any]:
    """The settings.json of one sweep point on one dataset: the dataset's settings with the
    point's overrides merged over them."""
    return _merge(dataset_settings(config, name), config["sweep"]["points"][point])


def sweep_changes_encoder(config: dict, point: str) -> bool:
    """Whether a sweep point needs its own embedding cache (it overrides encoder settings)."""
    return bool(config["sweep"]["points"][point].get("encoder"))
