"""The settings.json of each dataset (global sections with its overrides) and of each sweep point,
checked before any job runs, and what they decide: whether the encoder is fine-tuned, the GPUs a
job asks for."""

from __future__ import annotations

import copy
from typing import Any

from icda.data.dataset_spec import SPEC_DEFAULTS, validate_spec
from icda.errors import ConfigError
from icda.settings import Settings, k_fix

SETTINGS_SECTIONS = ("encoder", "model", "train", "icda")


def _merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


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
            every sentence would be selected); loop settings that would be ignored
            (:func:`check_loop_rules`).
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
            settings = Settings.from_dict(values, where=where)
            check_loop_rules(settings, config, where)
            k = settings.model.k
            if k >= shortest:
                raise ConfigError(
                    f"{where}: model.k = {k} is not smaller than datasets.{name}.min_sentences = {shortest}: "
                    f"prepare keeps train/dev documents of {shortest} sentences, in which every sentence "
                    f"would be selected (each counterfactual would replace the whole document). Fix: "
                    + k_fix(k, shortest, f"datasets.{name}.min_sentences"))


def check_loop_rules(settings: Settings, config: dict, where: str) -> None:
    """Refuse loop settings the workflow would silently ignore: ``icda.final_choice`` other than
    ``last`` under ``stop_rule: paper`` (the paper's rule reports its last iteration), and
    ``candidate_choice: agreement`` or a ``final_choice`` read from the fresh candidates'
    agreement (``agreement``, ``agreement_guard``) with a run of one seed (one fresh candidate: no
    agreement, so the loss or the last iteration would decide unannounced).

    Raises:
        ConfigError: naming ``where``, the settings and the fix.
    """
    icda = settings.icda
    if icda.stop_rule == "paper" and icda.final_choice != "last":
        raise ConfigError(f"{where}: icda.final_choice = {icda.final_choice} is ignored under icda.stop_rule = paper "
                          "(the paper's rule reports the last iteration). Fix: set final_choice: last, or "
                          "stop_rule: rationales")
    runs = (config.get("runs") or [])[: config.get("n_runs", len(config.get("runs") or []))]
    single = [i for i, seeds in enumerate(runs, 1) if len(seeds) < 2]
    uses = [f"icda.{key} = {value}" for key, value in (("candidate_choice", icda.candidate_choice),
                                                       ("final_choice", icda.final_choice))
            if value in ("agreement", "agreement_guard")]
    if single and uses:
        raise ConfigError(f"{where}: {' and '.join(uses)} read the fresh candidates' agreement, but run "
                          f"{single[0]} has one seed (runs.{single[0] - 1}: one fresh candidate, no agreement), so "
                          "they would be ignored. Fix: give every run at least two seeds, or set "
                          "candidate_choice: loss and final_choice: last")


def finetune(config: dict, name: str) -> bool:
    return bool(dataset_settings(config, name)["model"].get("finetune", False))


def gpus(config: dict, name: str) -> int:
    """GPUs a dataset's embed/train jobs request (the ``gpu`` resource that
    snakemake-executor-plugin-slurm turns into a SLURM GPU request): 1 when the encoder is
    fine-tuned (``model.finetune``) or the device is set to ``cuda``, else 0 (with
    ``device: auto`` a job uses a GPU only where one happens to be present)."""
    settings = dataset_settings(config, name)
    return int(bool(settings["model"].get("finetune", False)) or str(settings["device"]).startswith("cuda"))


def generate_gpus(config: dict, name: str) -> int:
    """GPUs the ``generate`` job of ``name`` asks the scheduler for: 1 for a local transformers
    model that may use one (device auto or cuda), 0 for a server backend."""
    backend = (config["datasets"][name].get("llm") or {}).get("backend") or {}
    return int(backend.get("type") == "transformers" and backend.get("device", "auto") != "cpu")


def sweep_settings(config: dict, name: str, point: str) -> dict[str, Any]:
    """The settings.json of one sweep point on one dataset: the dataset's settings with the
    point's overrides merged over them."""
    return _merge(dataset_settings(config, name), config["sweep"]["points"][point])


def sweep_changes_encoder(config: dict, point: str) -> bool:
    """Whether a sweep point needs its own embedding cache (it overrides encoder settings)."""
    return bool(config["sweep"]["points"][point].get("encoder"))
