"""The converge step, ``python -m icda converge``: an iteration's choice.json, the dataset's
settings.json (its stop rule) and the previous iteration's converge.json in; the iteration's
converge.json out (:func:`icda.model_selection.convergence`: whether iteration k+1 exists and, once
stopped, which iteration is ICDA).
"""

from __future__ import annotations

from pathlib import Path

from icda.errors import ConfigError
from icda.records import Choice, Decision
from icda.model_selection import convergence
from icda.settings import Settings


def converge(choice: str | Path, settings: str | Path, previous: str | Path | None, out: str | Path) -> Decision:
    """Decide whether the run stops after the iteration of ``choice`` and write the
    :class:`~icda.records.Decision` to ``out``.

    Args:
        choice: the iteration's choice.json.
        settings: the dataset's settings.json (its ``icda`` section).
        previous: converge.json of the previous iteration (needed from iteration 1 on: its
            ``signals`` carry the run's history).

    Raises:
        ConfigError: an iteration >= 1 without ``previous``.
        DataError: a file is missing or malformed.
    """
    icda = Settings.load(settings).icda
    chosen = Choice.read(choice)
    if chosen.iteration >= 1 and previous is None:
        raise ConfigError(f"{choice} is iteration {chosen.iteration}: the stop rule reads the run's history. "
                          f"Fix: pass --previous <iteration {chosen.iteration - 1}>/converge.json")
    decision = convergence(chosen, icda, None if previous is None else Decision.read(previous))
    decision.write(out)
    return decision
