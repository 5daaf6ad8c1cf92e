"""``python -m icda converge``: decide whether the ICDA loop stops after this iteration, and
which iteration is then ICDA.

The converge step: an iteration's choice.json and pools.json (a blocked one ends the run), the
dataset's settings.json (its stop rule:
``icda.stop_rule``, ``icda.stop_unchanged``, ``icda.max_iters``; the iteration taken as ICDA:
``icda.final_choice``) and the previous iteration's converge.json in; the iteration's converge.json
out (:func:`icda.model_selection.convergence`: whether iteration k+1 exists and, once stopped,
which iteration is ICDA).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.errors import ConfigError
from icda.guard import add_input, add_output
from icda.records import Choice, Decision, Pools
from icda.model_selection import convergence
from icda.settings import Settings
from icda.steps import command_doc


def converge(choice: str | Path, settings: str | Path, previous: str | Path | None, out: str | Path,
             pools: str | Path | None = None) -> Decision:
    """Decide whether the run stops after the iteration of ``choice`` and write the
    :class:`~icda.records.Decision` to ``out``.

    Args:
        choice: the iteration's choice.json.
        settings: the dataset's settings.json (its ``icda`` section).
        previous: converge.json of the previous iteration (needed from iteration 1 on: its
            ``signals`` carry the run's history).
        pools: the iteration's pools.json; a blocked one (:attr:`~icda.records.Pools.blocked`)
            stops the run at the last iteration that built counterfactuals. None: not read.

    Raises:
        ConfigError: an iteration >= 1 without ``previous``.
        DataError: a file is missing or malformed.
    """
    icda = Settings.load(settings).icda
    chosen = Choice.read(choice)
    if chosen.iteration >= 1 and previous is None:
        raise ConfigError(f"{choice} is iteration {chosen.iteration}: the stop rule reads the run's history. "
                          f"Fix: pass --previous <iteration {chosen.iteration - 1}>/converge.json")
    blocked = None if pools is None else Pools.read(pools).blocked
    decision = convergence(chosen, icda, None if previous is None else Decision.read(previous), blocked)
    decision.write(out)
    return decision


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("converge", description=command_doc(__doc__),
                       help="the stop rule (icda.stop_rule, icda.stop_unchanged, icda.max_iters) and "
                            "the iteration taken as ICDA (icda.final_choice)")
    add_input(p, "--choice", required=True, help="choice.json of this iteration")
    add_input(p, "--previous", help="converge.json of the previous iteration (k >= 1)")
    add_input(p, "--pools", help="pools.json of this iteration (a blocked one ends the run)")
    add_input(p, "--settings", required=True, help="the dataset's settings.json (its icda section)")
    add_output(p, "--out", required=True, help="converge.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    decision = converge(args.choice, args.settings, args.previous, args.out, args.pools)
    print(("STOP: " if decision.stop else "CONTINUE: ") + decision.reason)
    if decision.stop:
        print(f"ICDA is iteration {decision.final_iteration}: {decision.final_reason}")
