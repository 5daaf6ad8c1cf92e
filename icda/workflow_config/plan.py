"""The runs of every dataset and what each trains: the seeds of a run, the candidates of an
iteration, the COMP grid, and the last iteration allowed; whether the run builds the theory
figures."""

from __future__ import annotations

from icda.errors import ConfigError
from icda.workflow_config.run_settings import dataset_settings


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


def run_seeds(config: dict, run: int | str) -> list[int]:
    """The seed triple of run ``run`` (1-based)."""
    runs = config["runs"]
    r = int(run)
    if not 1 <= r <= len(runs):
        raise ConfigError(f"run {r} is not configured: `runs` has {len(runs)} seed lists. "
                          f"Fix: add seed lists to `runs` or use runs 1 to {len(runs)}")
    return list(runs[r - 1])


def candidate_seeds(config: dict, run: int | str, iteration: int | str, dataset: str) -> dict[str, int]:
    """The candidates of one iteration of ``dataset``, {folder name: training seed}: ``seed<s>``
    per seed of the run, plus from iteration 1 ``warm``, the warm start, which trains with the
    run's first seed (where the dataset's ``icda.warm_start`` is on)."""
    seeds = run_seeds(config, run)
    names = {f"seed{s}": s for s in seeds}
    return names | ({"warm": seeds[0]} if int(iteration) >= 1 and warm_start(config, dataset) else {})


def candidates(config: dict, run: int | str, iteration: int | str, dataset: str) -> list[str]:
    """Candidate folder names of one iteration (:func:`candidate_seeds`), fresh seeds first."""
    return list(candidate_seeds(config, run, iteration, dataset))


def warm_start(config: dict, dataset: str) -> bool:
    """Whether iterations k >= 1 of ``dataset`` train a warm start (``icda.warm_start``, overrides applied)."""
    return bool(dataset_settings(config, dataset)["icda"]["warm_start"])


def comp_grid(config: dict, run: int | str) -> list[dict[str, float | int]]:
    """COMP grid of one run: ``{"lam": λ, "seed": s}`` over the λ values and the first seeds."""
    comp = config["comp"]
    seeds = run_seeds(config, run)[: comp["seeds"]]
    return [{"lam": lam, "seed": s} for lam in comp["lambdas"] for s in seeds]


def max_iters(config: dict, name: str) -> int:
    """The last ICDA iteration allowed for dataset ``name`` (``icda.max_iters``, overrides applied)."""
    return int(dataset_settings(config, name)["icda"]["max_iters"])


def paper_datasets() -> list[str]:
    """The paper's datasets: those of the default ``report.groups`` of the schema (the beer and
    hotel aspects, connect, restaurant, and the synthetic data of its binary example).

    Raises:
        DataError: the schema is missing (the package runs outside its repository).
    """
    from icda.schema import section_defaults

    return [ds for members in section_defaults("report")["groups"].values() for ds in members]


def theory_wanted(config: dict, datasets: list[str]) -> bool:
    """Whether the run builds the theory figures: ``theory.figures`` true or false, or with
    ``auto`` (the default) when ``datasets`` (those the run runs) hold one of
    :func:`paper_datasets`, so a run of only a user's own datasets builds none."""
    figures = (config.get("theory") or {}).get("figures", "auto")
    if figures in (True, False):
        return figures
    return bool(set(datasets) & set(paper_datasets()))
